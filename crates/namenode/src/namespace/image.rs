//! The namespace as an image (checkpoint) payload, and replay of logged ops.
//!
//! Layout: the magic `RHNSIMG1`, then varints `last_txid`, `last_inode_id`,
//! `last_block_id`, `last_gs`, the inode count, then every inode parent-first (the root
//! first): id, parent, name, owner, group, mode, mtime, atime and a kind byte; a
//! directory adds its two quotas (as two's-complement u64), a file its replication,
//! block size, blocks (id, gs, length) and an optional writer (client name and
//! machine), then optional tagged fields (tag 1: the orphan hold floor). Integers are
//! unsigned LEB128 varints, strings a varint length and bytes.
//! Decoding never panics: bad input is an [`ImageDecodeError`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::Namespace;
use crate::codec::{CodecError, R, W};
use crate::edit::EditOp;
use crate::error::FsResult;
use crate::fsdir::{
    DirInode, FileBlock, FileBlocks, FileInode, FsDirectory, Inode, InodeExt, InodeKind, Perm,
    PermissionStatus, QUOTA_UNSET, ROOT_INODE_ID, UnderConstruction,
};

/// First bytes of an image payload.
pub const IMAGE_PAYLOAD_MAGIC: &[u8; 8] = b"RHNSIMG1";

/// Tag of the optional orphan hold floor after the inodes.
const TAG_ORPHAN_FLOOR: u8 = 1;
/// Tag of the optional inode extensions (ACL entries and xattrs) after the inodes: a count,
/// then per inode its id, ACL entries and xattrs. Images without it have none.
const TAG_INODE_EXT: u8 = 20;

/// Why an image payload is not a namespace.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImageDecodeError {
    #[error("namespace image is not an rhdfs image (bad magic)")]
    BadMagic,
    #[error("namespace image ends early at byte {0}")]
    Truncated(usize),
    #[error("namespace image: bad value at byte {at}: {what}")]
    Bad { at: usize, what: &'static str },
    #[error("namespace image: inode {id} cannot be placed under {parent}")]
    Orphan { id: u64, parent: u64 },
}

/// A block of the namespace as the block manager must learn it after a load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadedBlock {
    pub block: FileBlock,
    pub inode: u64,
    pub replication: u16,
    /// True for the last block of a file open for write.
    pub under_construction: bool,
}

impl From<CodecError> for ImageDecodeError {
    fn from(e: CodecError) -> Self {
        match e {
            CodecError::Truncated(at) => ImageDecodeError::Truncated(at),
            CodecError::Bad { at, what } => ImageDecodeError::Bad { at, what },
        }
    }
}

const KIND_DIR: u8 = 0;
const KIND_FILE: u8 = 1;
/// A directory with quotas by storage type: KIND_DIR's fields, then the count of
/// (storage type, quota) pairs (older images never carry it).
const KIND_DIR_TYPED: u8 = 2;

pub(super) fn encode_inode(w: &mut W, id: u64, inode: &Inode) {
    w.u(id);
    w.u(inode.parent());
    w.bytes(&inode.name);
    w.bytes(inode.perm.owner.as_bytes());
    w.bytes(inode.perm.group.as_bytes());
    w.u(u64::from(inode.perm.mode));
    w.u(inode.mtime);
    w.u(inode.atime);
    match &inode.kind {
        InodeKind::Dir(d) => {
            w.0.push(if d.type_quotas().is_some() {
                KIND_DIR_TYPED
            } else {
                KIND_DIR
            });
            w.u(d.ns_quota() as u64);
            w.u(d.ds_quota() as u64);
            if let Some(t) = d.type_quotas() {
                let set: Vec<(u8, i64)> = (1..=6u8)
                    .map(|ty| (ty, t.get(ty)))
                    .filter(|&(_, q)| q != QUOTA_UNSET)
                    .collect();
                w.u(set.len() as u64);
                for (ty, q) in set {
                    w.0.push(ty);
                    w.u(q as u64);
                }
            }
        }
        InodeKind::File(f) => {
            w.0.push(KIND_FILE);
            w.u(u64::from(f.replication()));
            w.u(f.block_size());
            w.u(f.blocks.len() as u64);
            for b in &f.blocks {
                w.u(b.id);
                w.u(b.gs);
                w.u(b.num_bytes);
            }
            match f.uc() {
                Some(uc) => {
                    // 1: open for write; 2: open while a truncate waits for recovery.
                    w.0.push(if uc.truncate_last_to.is_some() { 2 } else { 1 });
                    w.bytes(uc.client_name.as_bytes());
                    w.bytes(uc.client_machine.as_bytes());
                    if let Some(len) = uc.truncate_last_to {
                        w.u(len);
                    }
                }
                None => w.0.push(0),
            }
        }
    }
}

/// Inodes decoded per batch handed to the thread that places them.
const DECODE_BATCH: usize = 4096;

/// A batch of decoded inodes, or the error that ended the decoding.
type DecodedBatch = Result<Vec<(u64, Inode)>, ImageDecodeError>;

/// Decodes `count` inodes from `body` at `start`, sending them in batches (vectors coming
/// back through `empty` are reused); an error is sent after the inodes before it. Returns
/// where the inodes end (or where decoding stopped).
fn decode_inodes(
    body: &[u8],
    start: usize,
    count: u64,
    full: &std::sync::mpsc::SyncSender<DecodedBatch>,
    empty: &std::sync::mpsc::Receiver<Vec<(u64, Inode)>>,
) -> usize {
    let mut r = R { b: body, at: start };
    let mut perms = LastPerm::default();
    let mut left = count;
    while left > 0 {
        let mut batch = empty
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(DECODE_BATCH));
        let n = left.min(DECODE_BATCH as u64);
        left -= n;
        let mut failed = None;
        for _ in 0..n {
            match decode_inode(&mut r, &mut perms) {
                Ok(x) => batch.push(x),
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        if !batch.is_empty() && full.send(Ok(batch)).is_err() {
            break;
        }
        if let Some(e) = failed {
            let _ = full.send(Err(e));
            break;
        }
    }
    r.at
}

/// Puts decoded inode number `i` of an image in the tree being loaded: the root's
/// attributes (the first inode must be the root), any other under its parent; a file's
/// blocks in the block → file map and its writer's lease.
fn place_inode(
    dir: &mut FsDirectory,
    block_owner: &mut super::block_owners::BlockOwners,
    leases: &mut crate::leases::LeaseManager,
    mono: Duration,
    i: u64,
    id: u64,
    inode: Inode,
) -> Result<(), ImageDecodeError> {
    if let InodeKind::File(f) = &inode.kind {
        for b in &f.blocks {
            block_owner.insert(b.id, id);
        }
        if let Some(uc) = f.uc() {
            leases.add(&uc.client_name, id, mono);
        }
    }
    if i == 0 {
        if id != ROOT_INODE_ID {
            return Err(ImageDecodeError::Orphan {
                id,
                parent: inode.parent(),
            });
        }
        let root = dir
            .get_mut(ROOT_INODE_ID)
            .ok_or(ImageDecodeError::BadMagic)?;
        root.perm = inode.perm;
        root.mtime = inode.mtime;
        root.atime = inode.atime;
        if let (Some(d), InodeKind::Dir(src)) = (root.as_dir_mut(), inode.kind) {
            d.set_quotas_from(&src);
        }
        return Ok(());
    }
    let parent = inode.parent();
    if !dir.attach(id, inode) {
        return Err(ImageDecodeError::Orphan { id, parent });
    }
    Ok(())
}

/// The permission of the inode decoded last, by its bytes: an image's inodes mostly share
/// a few (owner, group, mode) triples, so most inodes need neither the two strings nor a
/// look-up in the process-wide table (`Perm::intern`).
#[derive(Default)]
struct LastPerm<'a> {
    last: Option<(&'a [u8], &'a [u8], u16, Perm)>,
}

impl<'a> LastPerm<'a> {
    fn read(&mut self, r: &mut R<'a>) -> Result<Perm, ImageDecodeError> {
        let at = r.at;
        let owner = r.slice()?;
        let group = r.slice()?;
        let mode = r.u16()?;
        if let Some((o, g, m, perm)) = self.last
            && (o, g, m) == (owner, group, mode)
        {
            return Ok(perm);
        }
        let text = |b: &'a [u8]| -> Result<&'a str, ImageDecodeError> {
            std::str::from_utf8(b).map_err(|_| ImageDecodeError::Bad {
                at,
                what: "not UTF-8",
            })
        };
        let perm = Perm::intern(PermissionStatus {
            owner: text(owner)?.into(),
            group: text(group)?.into(),
            mode,
        });
        self.last = Some((owner, group, mode, perm));
        Ok(perm)
    }
}

fn decode_inode<'a>(
    r: &mut R<'a>,
    perms: &mut LastPerm<'a>,
) -> Result<(u64, Inode), ImageDecodeError> {
    let id = r.u()?;
    let parent = r.u()?;
    let name = r.slice()?;
    let perm = perms.read(r)?;
    let mtime = r.u()?;
    let atime = r.u()?;
    let at = r.at;
    let kind = match r.byte()? {
        kind @ (KIND_DIR | KIND_DIR_TYPED) => {
            let ns_quota = r.u()? as i64;
            let ds_quota = r.u()? as i64;
            let mut d = DirInode::default();
            d.set_quota(ns_quota, ds_quota);
            if kind == KIND_DIR_TYPED {
                for _ in 0..r.len()? {
                    let at = r.at;
                    let ty = r.byte()?;
                    if !(1..=6).contains(&ty) {
                        return Err(ImageDecodeError::Bad {
                            at,
                            what: "storage type",
                        });
                    }
                    d.set_type_quota(ty, r.u()? as i64);
                }
            }
            InodeKind::Dir(d)
        }
        KIND_FILE => {
            let replication = r.u16()?;
            let block_size = r.u()?;
            let n = r.len()?;
            let mut blocks = Vec::new();
            if n == 1 {
                let block = FileBlock {
                    id: r.u()?,
                    gs: r.u()?,
                    num_bytes: r.u()?,
                };
                if r.b.get(r.at) == Some(&0) {
                    // Most files: one block and no writer, held inline with no vector made.
                    r.at += 1;
                    let file = FileInode {
                        blocks: FileBlocks::one(replication, block_size, block),
                    };
                    return Ok((
                        id,
                        Inode::new(
                            parent,
                            name.into(),
                            perm,
                            mtime,
                            atime,
                            InodeKind::File(file),
                        ),
                    ));
                }
                blocks.push(block);
            } else {
                blocks.reserve_exact(n.min(1 << 16));
                for _ in 0..n {
                    blocks.push(FileBlock {
                        id: r.u()?,
                        gs: r.u()?,
                        num_bytes: r.u()?,
                    });
                }
            }
            let at = r.at;
            let uc = match r.byte()? {
                0 => None,
                flag @ (1 | 2) => Some(UnderConstruction {
                    client_name: r.string()?,
                    client_machine: r.string()?,
                    truncate_last_to: if flag == 2 { Some(r.u()?) } else { None },
                }),
                _ => {
                    return Err(ImageDecodeError::Bad {
                        at,
                        what: "writer flag",
                    });
                }
            };
            InodeKind::File(FileInode::new(replication, block_size, blocks, uc))
        }
        _ => {
            return Err(ImageDecodeError::Bad {
                at,
                what: "inode kind",
            });
        }
    };
    Ok((
        id,
        Inode::new(parent, name.into(), perm, mtime, atime, kind),
    ))
}

impl Namespace {
    /// The whole namespace as an image payload, with the txid it covers
    /// ([`Namespace::last_txid`]). Runs under the namespace lock: one pass over the tree,
    /// no I/O.
    pub fn encode_image(&self) -> (u64, Vec<u8>) {
        let mut w = W(Vec::with_capacity(64 + self.dir.inode_count() * 48));
        w.0.extend_from_slice(IMAGE_PAYLOAD_MAGIC);
        w.u(self.last_txid);
        w.u(self.last_inode_id);
        w.u(self.last_block_id);
        w.u(self.last_gs);
        let ids = self.dir.subtree(ROOT_INODE_ID);
        w.u(ids.len() as u64);
        for id in ids {
            if let Some(inode) = self.dir.get(id) {
                encode_inode(&mut w, id, inode);
            }
        }
        if let Some(floor) = self.orphan_floor {
            w.0.push(TAG_ORPHAN_FLOOR);
            w.u(floor);
        }
        let with_ext: Vec<(u64, &Inode)> = self
            .dir
            .ids()
            .filter_map(|id| Some((id, self.dir.get(id)?)))
            .filter(|(_, i)| i.ext().is_some_and(InodeExt::has_acl_or_xattrs))
            .collect();
        if !with_ext.is_empty() {
            w.0.push(TAG_INODE_EXT);
            w.u(with_ext.len() as u64);
            for (id, inode) in with_ext {
                w.u(id);
                w.acl(inode.acl());
                w.u(inode.xattrs().len() as u64);
                for x in inode.xattrs() {
                    w.xattr(x);
                }
            }
        }
        (self.last_txid, w.0)
    }

    /// Replaces this namespace's tree, counters and leases with the image's (the
    /// configuration and journal stay). Leases of open files start at `mono`.
    pub fn load_image(&mut self, payload: &[u8], mono: Duration) -> Result<(), ImageDecodeError> {
        self.load_image_counted(payload, mono, &mut |_| {}, &AtomicU64::new(0))
    }

    /// [`Namespace::load_image`], telling `total` the image's inode count once read and
    /// bumping `loaded` once per inode (start-up progress; nothing else per inode).
    pub fn load_image_counted(
        &mut self,
        payload: &[u8],
        mono: Duration,
        total: &mut dyn FnMut(u64),
        loaded: &AtomicU64,
    ) -> Result<(), ImageDecodeError> {
        let body = payload
            .strip_prefix(IMAGE_PAYLOAD_MAGIC.as_slice())
            .ok_or(ImageDecodeError::BadMagic)?;
        let mut r = R { b: body, at: 0 };
        let last_txid = r.u()?;
        let last_inode_id = r.u()?;
        let last_block_id = r.u()?;
        let last_gs = r.u()?;
        let count = r.u()?;
        total(count);
        let mut dir = FsDirectory::new(&self.cfg.superuser, &self.cfg.supergroup, 0);
        let mut block_owner = super::block_owners::BlockOwners::default();
        // Room for every inode (and as many blocks) at once, as many as the payload can
        // hold: an inode is ten fields of at least a byte each.
        let room = usize::try_from(count)
            .unwrap_or(usize::MAX)
            .min(body.len() / 10);
        dir.reserve(room);
        block_owner.reserve(room);
        let mut leases = crate::leases::LeaseManager::default();
        // The inodes are decoded on a thread of their own, in batches, while this one
        // places them in the tree (about half of the work each: the varints, names and
        // records there; the tables' inserts and their first touch of memory here). The
        // first error in image order is the one returned, as one pass would find it.
        let start = r.at;
        let inodes_end = std::thread::scope(|s| {
            let (full_tx, full_rx) = std::sync::mpsc::sync_channel::<DecodedBatch>(4);
            let (empty_tx, empty_rx) = std::sync::mpsc::channel::<Vec<(u64, Inode)>>();
            let decoder = s.spawn(move || decode_inodes(body, start, count, &full_tx, &empty_rx));
            let mut i = 0u64;
            let placed = (|| -> Result<(), ImageDecodeError> {
                for batch in full_rx.iter() {
                    let mut batch = batch?;
                    for (id, inode) in batch.drain(..) {
                        place_inode(&mut dir, &mut block_owner, &mut leases, mono, i, id, inode)?;
                        i += 1;
                        // Start-up progress in steps (an atomic add per inode was its own cost).
                        if i.is_multiple_of(1024) || i == count {
                            loaded.fetch_add((i - 1) % 1024 + 1, Ordering::Relaxed);
                        }
                    }
                    let _ = empty_tx.send(batch);
                }
                Ok(())
            })();
            // A decoder waiting to hand over a batch stops once nobody takes it.
            drop(full_rx);
            let end = decoder
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            placed.map(|()| end)
        })?;
        r.at = inodes_end;
        let mut orphan_floor = None;
        let mut ext_seen = false;
        while r.at < body.len() {
            match r.byte()? {
                TAG_ORPHAN_FLOOR if orphan_floor.is_none() => orphan_floor = Some(r.u()?),
                TAG_INODE_EXT if !ext_seen => {
                    ext_seen = true;
                    let n = r.u()?;
                    for _ in 0..n {
                        let at = r.at;
                        let id = r.u()?;
                        let acl = r.acl()?;
                        let count = r.len()?;
                        let mut xattrs = Vec::with_capacity(count.min(64));
                        for _ in 0..count {
                            xattrs.push(r.xattr()?);
                        }
                        let inode = dir.get_mut(id).ok_or(ImageDecodeError::Bad {
                            at,
                            what: "extension of an unknown inode",
                        })?;
                        inode.update_ext(|e| {
                            e.acl = acl;
                            e.xattrs = xattrs;
                        });
                    }
                }
                _ => {
                    return Err(ImageDecodeError::Bad {
                        at: r.at - 1,
                        what: "trailing bytes",
                    });
                }
            }
        }
        self.dir = dir;
        self.block_owner = block_owner;
        self.leases = leases;
        self.last_txid = last_txid;
        self.last_inode_id = last_inode_id;
        self.last_block_id = last_block_id;
        self.last_gs = last_gs;
        self.orphan_floor = orphan_floor;
        self.rebuild_quota_usage();
        Ok(())
    }

    /// Applies one op read back from the edit log (transaction `txid`).
    pub fn replay(&mut self, op: &EditOp, txid: u64, mono: Duration) -> FsResult<()> {
        self.apply(op, mono)?;
        self.last_txid = txid;
        Ok(())
    }

    /// Sets the txid the namespace is at (after a replay that ended on records it skipped).
    pub fn set_last_txid(&mut self, txid: u64) {
        self.last_txid = txid;
    }

    /// The blocks of the files among the (up to) `inodes` inodes after inode id `after`
    /// (from the first with None), in inode id order, and the last inode id looked at
    /// (None once there is no inode left): [`Namespace::loaded_blocks`] in bounded steps.
    pub fn loaded_blocks_after(
        &self,
        after: Option<u64>,
        inodes: usize,
    ) -> (Vec<LoadedBlock>, Option<u64>) {
        let ids = self.dir.ids_after(after, inodes);
        let mut out = Vec::with_capacity(ids.len());
        for &id in &ids {
            let Some(f) = self.dir.get(id).and_then(Inode::as_file) else {
                continue;
            };
            let n = f.blocks.len();
            for (i, b) in f.blocks.iter().enumerate() {
                out.push(LoadedBlock {
                    block: *b,
                    inode: id,
                    replication: f.replication(),
                    under_construction: f.uc().is_some() && i + 1 == n,
                });
            }
        }
        (out, ids.last().copied())
    }

    /// Every block of every file, for the block manager after a load.
    pub fn loaded_blocks(&self) -> Vec<LoadedBlock> {
        let mut out = Vec::with_capacity(self.block_owner.len());
        for id in self.dir.subtree(ROOT_INODE_ID) {
            let Some(f) = self.dir.get(id).and_then(Inode::as_file) else {
                continue;
            };
            let n = f.blocks.len();
            for (i, b) in f.blocks.iter().enumerate() {
                out.push(LoadedBlock {
                    block: *b,
                    inode: id,
                    replication: f.replication(),
                    under_construction: f.uc().is_some() && i + 1 == n,
                });
            }
        }
        out
    }
}
