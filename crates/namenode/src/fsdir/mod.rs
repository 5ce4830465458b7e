//! The inode tree: directories and files, lookup by path, subtree walks.
//!
//! This is plain data, below the edit log: every change to it goes through an `EditOp`
//! (`edit.rs`) applied by `Namespace::log_and_apply` (`namespace/`); the methods here that
//! mutate are the primitive steps that application uses.

pub mod acl;
pub mod children;
pub mod dir_inode;
pub mod file_blocks;
pub mod name;
pub mod path;
pub mod permission;
pub mod perms;
pub mod summary;
pub mod xattr;

use std::sync::Arc;

use rhdfs_blockmanager::IdTable;

pub use children::Children;
pub use dir_inode::{DISK, DirInode, STORAGE_TYPES, TypeQuotas};
pub use file_blocks::FileBlocks;
pub use name::Name;
pub use path::FsPath;
pub use perms::Perm;

/// Inode id of `/`, as in HDFS.
pub const ROOT_INODE_ID: u64 = 16385;
/// "Not set" for quotas.
pub const QUOTA_UNSET: i64 = -1;

/// Owner, group and mode (including the sticky bit 0o1000). An inode holds it interned, as
/// a [`Perm`] (one pointer to the record it shares with every inode of the same triple).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PermissionStatus {
    pub owner: Arc<str>,
    pub group: Arc<str>,
    pub mode: u16,
}

/// A block of a file as the namespace knows it (id, generation stamp, length). Not the
/// block manager's `BlockInfo`, which is a block's replica and construction state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileBlock {
    pub id: u64,
    pub gs: u64,
    pub num_bytes: u64,
}

/// Who is writing a file that is open for write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnderConstruction {
    pub client_name: String,
    pub client_machine: String,
    /// Set while a truncate inside the last block waits for its block recovery: the
    /// length the last block is cut to (Hadoop's truncate block).
    pub truncate_last_to: Option<u64>,
}

#[derive(Debug, Clone)]
pub struct FileInode {
    /// One block inline ([`FileBlocks`]), and the file's replication
    /// ([`FileInode::replication`]) and preferred block size ([`FileInode::block_size`])
    /// in the spare bytes of its tag word; its writer ([`FileInode::uc`]) in a box only
    /// open files have.
    pub blocks: FileBlocks,
}

impl FileInode {
    pub fn new(
        replication: u16,
        block_size: u64,
        blocks: Vec<FileBlock>,
        uc: Option<UnderConstruction>,
    ) -> Self {
        FileInode {
            blocks: FileBlocks::new(replication, block_size, blocks, uc),
        }
    }

    /// The writer, while the file is open for write.
    pub fn uc(&self) -> Option<&UnderConstruction> {
        self.blocks.uc()
    }

    pub fn uc_mut(&mut self) -> Option<&mut UnderConstruction> {
        self.blocks.uc_mut()
    }

    /// Opens the file for write by `uc`, or with `None` closes it; returns the writer it
    /// had.
    pub fn set_uc(&mut self, uc: Option<UnderConstruction>) -> Option<UnderConstruction> {
        self.blocks.set_uc(uc)
    }

    /// The preferred block size.
    pub fn block_size(&self) -> u64 {
        self.blocks.block_size()
    }

    pub fn replication(&self) -> u16 {
        self.blocks.replication()
    }

    pub fn set_replication(&mut self, replication: u16) {
        self.blocks.set_replication(replication);
    }

    /// Sum of the block lengths (for an open file this includes the fsync'd length of
    /// the last block).
    pub fn length(&self) -> u64 {
        self.blocks.iter().map(|b| b.num_bytes).sum()
    }
}

#[derive(Debug, Clone)]
pub enum InodeKind {
    Dir(DirInode),
    File(FileInode),
}

/// An inode. Not its id: that is the inode table's key (the caller that looked it up
/// has it).
#[derive(Debug, Clone)]
pub struct Inode {
    /// The parent's id as its distance above [`ROOT_INODE_ID`] ([`Inode::parent`]), or
    /// [`FAR_PARENT`] when it is not within 32 bits of it: the id is then kept whole in
    /// the inode's extension ([`InodeExt::far_parent`]).
    parent: u32,
    /// Short names inline ([`Name`]).
    pub name: Name,
    /// Interned ([`Perm`], 4 bytes): reads as a `PermissionStatus`.
    pub perm: Perm,
    pub mtime: u64,
    pub atime: u64,
    /// The file's or directory's record; ACL entries and xattrs ([`Inode::ext`]) ride in
    /// the box each kind has for its rare parts.
    pub kind: InodeKind,
}

/// `Inode::parent` of an inode whose parent's id is kept in its extension.
pub const FAR_PARENT: u32 = u32::MAX;

/// The rarely present parts of an inode.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InodeExt {
    /// Stored ACL entries (see [`acl`]): empty when the inode has no extended ACL.
    pub acl: Vec<acl::AclEntry>,
    pub xattrs: Vec<xattr::XAttr>,
    /// The parent's id when it is below [`ROOT_INODE_ID`] or 2^32 - 1 or more above it
    /// (ids are handed out in sequence from the root's: only an image or edit from
    /// elsewhere brings such ids).
    pub far_parent: Option<u64>,
}

impl InodeExt {
    pub fn is_empty(&self) -> bool {
        self.acl.is_empty() && self.xattrs.is_empty() && self.far_parent.is_none()
    }

    /// Whether the inode has ACL entries or xattrs (what the image's extension section
    /// holds).
    pub fn has_acl_or_xattrs(&self) -> bool {
        !self.acl.is_empty() || !self.xattrs.is_empty()
    }
}

impl Inode {
    /// An inode under `parent`.
    pub fn new(
        parent: u64,
        name: Name,
        perm: Perm,
        mtime: u64,
        atime: u64,
        kind: InodeKind,
    ) -> Inode {
        let mut inode = Inode {
            parent: 0,
            name,
            perm,
            mtime,
            atime,
            kind,
        };
        inode.set_parent(parent);
        inode
    }

    /// The parent directory's id (the root's is its own).
    pub fn parent(&self) -> u64 {
        if self.parent != FAR_PARENT {
            return children::wide(self.parent);
        }
        self.ext()
            .and_then(|e| e.far_parent)
            .unwrap_or(ROOT_INODE_ID)
    }

    /// Moves the inode under `parent` (its id only: the directories' children are
    /// [`FsDirectory`]'s business).
    pub fn set_parent(&mut self, parent: u64) {
        let near = children::narrow(parent).filter(|&d| d != FAR_PARENT);
        match near {
            Some(d) => {
                if self.parent == FAR_PARENT {
                    self.update_ext(|e| e.far_parent = None);
                }
                self.parent = d;
            }
            None => {
                self.update_ext(|e| e.far_parent = Some(parent));
                self.parent = FAR_PARENT;
            }
        }
    }

    /// ACL entries and xattrs; None for the (common) inode that has neither.
    pub fn ext(&self) -> Option<&InodeExt> {
        match &self.kind {
            InodeKind::Dir(d) => d.ext(),
            InodeKind::File(f) => f.blocks.ext(),
        }
    }

    /// The stored ACL entries (empty for none).
    pub fn acl(&self) -> &[acl::AclEntry] {
        self.ext().map_or(&[], |e| &e.acl)
    }

    pub fn xattrs(&self) -> &[xattr::XAttr] {
        self.ext().map_or(&[], |e| &e.xattrs)
    }

    /// Changes the inode's extension, dropping it when it becomes empty.
    pub fn update_ext(&mut self, f: impl FnOnce(&mut InodeExt)) {
        let taken = match &mut self.kind {
            InodeKind::Dir(d) => d.take_ext(),
            InodeKind::File(f) => f.blocks.take_ext(),
        };
        let mut ext = taken.unwrap_or_default();
        f(&mut ext);
        let ext = (!ext.is_empty()).then_some(ext);
        match &mut self.kind {
            InodeKind::Dir(d) => d.set_ext(ext),
            InodeKind::File(f) => f.blocks.set_ext(ext),
        }
    }

    pub fn is_dir(&self) -> bool {
        matches!(self.kind, InodeKind::Dir(_))
    }
    pub fn as_dir(&self) -> Option<&DirInode> {
        match &self.kind {
            InodeKind::Dir(d) => Some(d),
            InodeKind::File(_) => None,
        }
    }
    pub fn as_dir_mut(&mut self) -> Option<&mut DirInode> {
        match &mut self.kind {
            InodeKind::Dir(d) => Some(d),
            InodeKind::File(_) => None,
        }
    }
    pub fn as_file(&self) -> Option<&FileInode> {
        match &self.kind {
            InodeKind::File(f) => Some(f),
            InodeKind::Dir(_) => None,
        }
    }
    pub fn as_file_mut(&mut self) -> Option<&mut FileInode> {
        match &mut self.kind {
            InodeKind::File(f) => Some(f),
            InodeKind::Dir(_) => None,
        }
    }
}

/// The inodes met while resolving a path: `ids[0]` is the root, `ids[i]` the inode of
/// component `i` (None from the first missing one on).
#[derive(Debug, Clone)]
pub struct Resolved {
    pub ids: Vec<Option<u64>>,
    /// Index of an existing non-directory met before the last component, if any.
    pub not_dir_at: Option<usize>,
}

impl Resolved {
    /// The inode of the whole path.
    pub fn last(&self) -> Option<u64> {
        self.ids.last().copied().flatten()
    }
    /// The inode of the parent of the path (None for the root or a missing parent).
    pub fn parent(&self) -> Option<u64> {
        if self.ids.len() < 2 {
            return None;
        }
        self.ids[self.ids.len() - 2]
    }
    /// Index of the deepest existing ancestor of the last component.
    pub fn last_existing_ancestor(&self) -> usize {
        let n = self.ids.len().saturating_sub(1);
        (0..n).rev().find(|&i| self.ids[i].is_some()).unwrap_or(0)
    }
}

/// What a subtree removal detached from the namespace.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Removed {
    pub blocks: Vec<u64>,
    /// Files that were open for write: (inode id, lease holder).
    pub open_files: Vec<(u64, String)>,
    pub inodes: usize,
}

/// The inode tree.
#[derive(Debug, Clone)]
pub struct FsDirectory {
    /// Inodes by id: ids are handed out in sequence, so a dense table (one slot per id,
    /// no hash buckets) rather than a hash map.
    inodes: IdTable<Inode>,
}

impl FsDirectory {
    /// A namespace holding only `/` (owner `owner`, group `group`, 0755).
    pub fn new(owner: &str, group: &str, now: u64) -> Self {
        let root = Inode::new(
            ROOT_INODE_ID,
            Name::default(),
            Perm::intern(PermissionStatus {
                owner: owner.into(),
                group: group.into(),
                mode: 0o755,
            }),
            now,
            now,
            InodeKind::Dir(DirInode::default()),
        );
        let mut inodes = IdTable::new();
        inodes.insert(ROOT_INODE_ID, root);
        FsDirectory { inodes }
    }

    /// Changes the owner and/or group of `id` (the record interned); false if there is no
    /// such inode.
    pub fn set_owner(&mut self, id: u64, owner: Option<&str>, group: Option<&str>) -> bool {
        let Some(inode) = self.inodes.get_mut(id) else {
            return false;
        };
        inode.perm = inode.perm.with_owner_group(owner, group);
        true
    }

    pub fn get(&self, id: u64) -> Option<&Inode> {
        self.inodes.get(id)
    }

    pub fn get_mut(&mut self, id: u64) -> Option<&mut Inode> {
        self.inodes.get_mut(id)
    }

    pub fn contains(&self, id: u64) -> bool {
        self.inodes.contains_key(id)
    }

    /// Room for `additional` more inodes of sequential ids (an image load).
    pub fn reserve(&mut self, additional: usize) {
        self.inodes.reserve(additional);
    }

    pub fn inode_count(&self) -> usize {
        self.inodes.len()
    }

    /// The child of directory `dir` called `name`.
    pub fn child(&self, dir: u64, name: &[u8]) -> Option<u64> {
        self.child_in(self.get(dir)?.as_dir()?, name)
    }

    /// The name of inode `id` (empty if there is none).
    fn name_of(&self, id: u64) -> &[u8] {
        self.inodes.get(id).map_or(&[][..], |i| &i.name[..])
    }

    /// The child of `dir` (a directory of this tree) called `name`.
    pub fn child_in(&self, dir: &DirInode, name: &[u8]) -> Option<u64> {
        let at = dir.children.search(name, |c| self.name_of(c)).ok()?;
        dir.children.get(at)
    }

    /// The children of `dir` (a directory of this tree) in name order, as (name, id), from
    /// the first whose name is above `after` (from the first with None).
    pub fn children_after<'a>(
        &'a self,
        dir: &'a DirInode,
        after: Option<&[u8]>,
    ) -> impl ExactSizeIterator<Item = (&'a [u8], u64)> + 'a {
        let at = match after.map(|a| dir.children.search(a, |c| self.name_of(c))) {
            None => 0,
            Some(Ok(at)) => at + 1,
            Some(Err(at)) => at,
        };
        dir.children.from(at).map(move |c| (self.name_of(c), c))
    }

    /// Walks `path` from the root.
    pub fn resolve(&self, path: &FsPath) -> Resolved {
        let comps = path.components();
        let mut ids = Vec::with_capacity(comps.len() + 1);
        ids.push(Some(ROOT_INODE_ID));
        let mut cur = Some(ROOT_INODE_ID);
        let mut not_dir_at = None;
        for (i, name) in comps.iter().enumerate() {
            let next = match cur.and_then(|c| self.get(c)) {
                Some(inode) => match inode.as_dir() {
                    Some(d) => self.child_in(d, name),
                    None => {
                        not_dir_at.get_or_insert(i);
                        None
                    }
                },
                None => None,
            };
            ids.push(next);
            cur = next;
        }
        Resolved { ids, not_dir_at }
    }

    /// The absolute path of an inode ("/" for the root).
    pub fn path_of(&self, mut id: u64) -> String {
        let mut names: Vec<&[u8]> = Vec::new();
        while id != ROOT_INODE_ID {
            match self.get(id) {
                Some(inode) => {
                    names.push(&inode.name);
                    id = inode.parent();
                }
                None => break,
            }
        }
        if names.is_empty() {
            return "/".to_string();
        }
        let mut s = String::new();
        for n in names.iter().rev() {
            s.push('/');
            s.push_str(&String::from_utf8_lossy(n));
        }
        s
    }

    /// True when `id` is `ancestor` or lies below it.
    pub fn is_descendant(&self, mut id: u64, ancestor: u64) -> bool {
        loop {
            if id == ancestor {
                return true;
            }
            if id == ROOT_INODE_ID {
                return false;
            }
            match self.get(id) {
                Some(i) => id = i.parent(),
                None => return false,
            }
        }
    }

    /// Adds `inode` as `id` under its `parent` (which must be a directory). Returns false
    /// if the parent is missing, not a directory, or already has a child of that name.
    pub fn attach(&mut self, id: u64, inode: Inode) -> bool {
        let parent = inode.parent();
        let Some(dir) = self.inodes.get(parent).and_then(Inode::as_dir) else {
            return false;
        };
        // A name after the last child's goes at the end: an image lists each directory's
        // children in name order, so a load compares once per inode, not log2(children).
        let at = match dir
            .children
            .len()
            .checked_sub(1)
            .and_then(|l| dir.children.get(l))
        {
            Some(last) if self.name_of(last) < &inode.name[..] => dir.children.len(),
            _ => match dir.children.search(&inode.name, |c| self.name_of(c)) {
                Err(at) => at,
                Ok(_) => return false,
            },
        };
        if let Some(dir) = self.inodes.get_mut(parent).and_then(Inode::as_dir_mut) {
            dir.children.insert_at(at, id);
        }
        self.inodes.insert(id, inode);
        true
    }

    /// Unlinks `id` from its parent's children; the inode and its subtree stay in the map.
    pub fn detach(&mut self, id: u64) -> Option<Inode> {
        let inode = self.inodes.get(id)?;
        let parent = inode.parent();
        // Found while the inode (its name) is still in the table.
        let at = self
            .get(parent)
            .and_then(Inode::as_dir)
            .and_then(|d| d.children.search(&inode.name, |c| self.name_of(c)).ok());
        if let Some(at) = at
            && let Some(dir) = self.inodes.get_mut(parent).and_then(Inode::as_dir_mut)
        {
            dir.children.remove_at(at);
        }
        self.inodes.remove(id)
    }

    /// Re-links detached inode `id` under `parent` as `name`.
    pub fn reattach(&mut self, id: u64, mut inode: Inode, parent: u64, name: Vec<u8>) -> bool {
        inode.set_parent(parent);
        inode.name = name.into();
        self.attach(id, inode)
    }

    /// Unlinks `id` and drops its whole subtree, collecting the blocks and open files.
    pub fn remove_subtree(&mut self, id: u64) -> Removed {
        let mut out = Removed::default();
        let Some(top) = self.detach(id) else {
            return out;
        };
        let mut stack = vec![(id, top)];
        while let Some((id, inode)) = stack.pop() {
            out.inodes += 1;
            match inode.kind {
                InodeKind::Dir(d) => {
                    for child in d.children.values() {
                        if let Some(c) = self.inodes.remove(child) {
                            stack.push((child, c));
                        }
                    }
                }
                InodeKind::File(f) => {
                    out.blocks.extend(f.blocks.iter().map(|b| b.id));
                    if let Some(uc) = f.uc() {
                        out.open_files.push((id, uc.client_name.clone()));
                    }
                }
            }
        }
        out
    }

    /// Every inode id, in no particular order.
    /// Up to `n` inode ids above `after` (from the first with None), in increasing order.
    pub fn ids_after(&self, after: Option<u64>, n: usize) -> Vec<u64> {
        self.inodes.keys_after(after, n)
    }

    pub fn ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.inodes.keys()
    }

    /// Ids of every inode in the subtree of `id` (itself first), depth-first.
    pub fn subtree(&self, id: u64) -> Vec<u64> {
        let mut out = Vec::new();
        let walked = self.try_for_each_in_subtree(id, |cur, _| {
            out.push(cur);
            Ok::<(), std::convert::Infallible>(())
        });
        match walked {
            Ok(()) => out,
            Err(never) => match never {},
        }
    }

    /// `f` on every inode of the subtree of `id` in [`FsDirectory::subtree`]'s order, without
    /// listing the ids first; stops at the first error.
    pub fn try_for_each_in_subtree<E>(
        &self,
        id: u64,
        mut f: impl FnMut(u64, &Inode) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut stack = vec![id];
        while let Some(cur) = stack.pop() {
            let Some(inode) = self.get(cur) else { continue };
            f(cur, inode)?;
            if let Some(d) = inode.as_dir() {
                stack.extend(d.children.values().rev());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::mem::size_of;

    use super::*;

    /// A file's inode is 72 bytes: the replication and block size ride in the block
    /// list's tag word, the writer and the ACL/xattr extension in the box open files'
    /// lists have, a directory's children are one word and its quotas and extension
    /// another, so a directory fits around that tag; the id is the table's key; the
    /// parent is a 4-byte distance, the permission a 4-byte index, the name 16 bytes.
    #[test]
    fn inode_sizes() {
        assert_eq!(size_of::<FileInode>(), 32);
        assert_eq!(size_of::<DirInode>(), 16);
        assert_eq!(size_of::<InodeKind>(), 32);
        assert_eq!(size_of::<Inode>(), 72);
        assert_eq!(size_of::<Option<Inode>>(), 72);
    }

    fn perm() -> Perm {
        Perm::intern(PermissionStatus {
            owner: "fsdir-u".into(),
            group: "fsdir-g".into(),
            mode: 0o644,
        })
    }

    fn file() -> InodeKind {
        InodeKind::File(FileInode::new(3, 1 << 20, Vec::new(), None))
    }

    /// Parents near the root are 4-byte distances; any other id is kept whole in the
    /// extension, which goes again (or keeps only its ACL) once the parent is near.
    #[test]
    fn far_parents_are_kept_whole() {
        let near = [
            ROOT_INODE_ID,
            ROOT_INODE_ID + 1,
            ROOT_INODE_ID + u64::from(u32::MAX) - 1,
        ];
        let far = [
            0,
            1,
            ROOT_INODE_ID - 1,
            ROOT_INODE_ID + u64::from(u32::MAX),
            u64::MAX,
        ];
        for kind in [file(), InodeKind::Dir(DirInode::default())] {
            for &p in near.iter().chain(&far) {
                let mut i = Inode::new(p, Name::new(b"x"), perm(), 1, 2, kind.clone());
                assert_eq!(i.parent(), p);
                assert_eq!(i.ext().is_some(), far.contains(&p), "parent {p}");
                for &q in far.iter().chain(&near) {
                    i.set_parent(q);
                    assert_eq!(i.parent(), q);
                    assert_eq!(i.ext().is_some(), far.contains(&q), "parent {q}");
                }
                i.set_parent(u64::MAX);
                i.update_ext(|e| {
                    e.xattrs.push(xattr::XAttr {
                        ns: xattr::XAttrNs::User,
                        name: "a".into(),
                        value: None,
                    })
                });
                i.set_parent(ROOT_INODE_ID + 5);
                assert_eq!(i.parent(), ROOT_INODE_ID + 5);
                assert_eq!(i.xattrs().len(), 1);
                assert!(i.ext().is_some_and(|e| e.far_parent.is_none()));
            }
        }
    }

    /// A directory tree under a far directory: attach, paths, ancestry and detach read the
    /// whole ids.
    #[test]
    fn a_tree_under_a_far_directory() {
        let mut dir = FsDirectory::new("u", "g", 0);
        let far = u64::MAX - 3;
        let dir_kind = || InodeKind::Dir(DirInode::default());
        assert!(dir.attach(
            far,
            Inode::new(ROOT_INODE_ID, Name::new(b"far"), perm(), 0, 0, dir_kind())
        ));
        assert!(dir.attach(
            7,
            Inode::new(far, Name::new(b"low"), perm(), 0, 0, dir_kind())
        ));
        assert!(dir.attach(
            ROOT_INODE_ID + 9,
            Inode::new(7, Name::new(b"f"), perm(), 0, 0, file())
        ));
        assert_eq!(dir.path_of(ROOT_INODE_ID + 9), "/far/low/f");
        assert!(dir.is_descendant(ROOT_INODE_ID + 9, far));
        assert_eq!(
            dir.resolve(&FsPath::parse("/far/low/f").unwrap()).last(),
            Some(ROOT_INODE_ID + 9)
        );
        let moved = dir.detach(7).unwrap();
        assert!(dir.reattach(7, moved, ROOT_INODE_ID, b"up".to_vec()));
        assert_eq!(dir.path_of(ROOT_INODE_ID + 9), "/up/f");
        assert!(dir.get(7).is_some_and(|i| i.ext().is_none()));
    }
}
