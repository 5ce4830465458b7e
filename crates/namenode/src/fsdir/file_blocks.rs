//! A file's blocks: one block (most files) held in the inode itself, any other count in a
//! vector. Reads as a slice; the few changes a file's block list sees are methods here.
//! The file's replication and preferred block size ride along in the spare bytes of the
//! list's tag word (as HDFS packs them into one header long). A file open for write (its
//! writer, [`UnderConstruction`]), one with ACL entries or xattrs ([`InodeExt`]) or one
//! whose block size is above `u32::MAX` keeps all of it in a box of its own: an inode
//! needs no word for the writer or the extension most files lack.
//!
//! Memory: 32 bytes in the inode and nothing else for a file of one block, where a
//! `Vec<FileBlock>` took 24 bytes plus a 32-byte malloc chunk; the replication, a `u16`
//! field of the inode, took 8 more with its padding, the block size, a `u64`, 8, and the
//! writer, an `Option<Box<UnderConstruction>>`, 8, and so did the extension.

use std::ops::{Deref, DerefMut};

use super::{FileBlock, InodeExt, UnderConstruction};

/// A file's replication, preferred block size, blocks, and writer while it is open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileBlocks(Repr);

#[derive(Clone, Debug, PartialEq, Eq)]
enum Repr {
    One {
        replication: u16,
        block_size: u32,
        block: FileBlock,
    },
    /// No block, or two and more.
    Many {
        replication: u16,
        block_size: u32,
        blocks: Vec<FileBlock>,
    },
    /// A file open for write, or with an extension, or a block size that does not fit the
    /// tag word's 32 bits (any block count).
    Boxed(Box<Boxed>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Boxed {
    replication: u16,
    block_size: u64,
    blocks: Vec<FileBlock>,
    uc: Option<UnderConstruction>,
    ext: Option<Box<InodeExt>>,
}

/// Everything but the replication and block size, taken out to be changed.
struct Parts {
    blocks: Vec<FileBlock>,
    uc: Option<UnderConstruction>,
    ext: Option<Box<InodeExt>>,
}

impl FileBlocks {
    /// The list of `blocks` of a file of `replication` and preferred `block_size`, open
    /// for write by `uc` if given.
    pub fn new(
        replication: u16,
        block_size: u64,
        blocks: Vec<FileBlock>,
        uc: Option<UnderConstruction>,
    ) -> Self {
        Self::build(
            replication,
            block_size,
            Parts {
                blocks,
                uc,
                ext: None,
            },
        )
    }

    fn build(replication: u16, block_size: u64, parts: Parts) -> Self {
        let Parts {
            mut blocks,
            uc,
            ext,
        } = parts;
        let block_size = match u32::try_from(block_size) {
            Ok(b) if uc.is_none() && ext.is_none() => b,
            _ => {
                return FileBlocks(Repr::Boxed(Box::new(Boxed {
                    replication,
                    block_size,
                    blocks,
                    uc,
                    ext,
                })));
            }
        };
        FileBlocks(match blocks.len() {
            1 => Repr::One {
                replication,
                block_size,
                block: blocks.remove(0),
            },
            _ => Repr::Many {
                replication,
                block_size,
                blocks,
            },
        })
    }

    /// A closed file of one block.
    pub fn one(replication: u16, block_size: u64, block: FileBlock) -> Self {
        match u32::try_from(block_size) {
            // `build`'s form for one block of a closed file, without the vector.
            Ok(block_size) => FileBlocks(Repr::One {
                replication,
                block_size,
                block,
            }),
            Err(_) => FileBlocks::new(replication, block_size, vec![block], None),
        }
    }

    /// The writer, while the file is open for write.
    pub fn uc(&self) -> Option<&UnderConstruction> {
        match &self.0 {
            Repr::Boxed(b) => b.uc.as_ref(),
            _ => None,
        }
    }

    pub fn uc_mut(&mut self) -> Option<&mut UnderConstruction> {
        match &mut self.0 {
            Repr::Boxed(b) => b.uc.as_mut(),
            _ => None,
        }
    }

    /// Opens the file for write by `uc`, or with `None` closes it; returns the writer it
    /// had.
    pub fn set_uc(&mut self, uc: Option<UnderConstruction>) -> Option<UnderConstruction> {
        self.change(|p| std::mem::replace(&mut p.uc, uc))
    }

    /// The file's ACL entries and xattrs, if it has any.
    pub fn ext(&self) -> Option<&InodeExt> {
        match &self.0 {
            Repr::Boxed(b) => b.ext.as_deref(),
            _ => None,
        }
    }

    /// Removes and returns the extension.
    pub fn take_ext(&mut self) -> Option<Box<InodeExt>> {
        match &self.0 {
            Repr::Boxed(b) if b.ext.is_some() => self.change(|p| p.ext.take()),
            _ => None,
        }
    }

    /// Replaces the extension (None, or an empty one, drops it).
    pub fn set_ext(&mut self, ext: Option<Box<InodeExt>>) {
        let ext = ext.filter(|e| !e.is_empty());
        if ext.is_none() && self.ext().is_none() {
            return;
        }
        self.change(|p| p.ext = ext);
    }

    /// Changes the parts, then stores them compactly again.
    fn change<T>(&mut self, f: impl FnOnce(&mut Parts) -> T) -> T {
        let (replication, block_size) = (self.replication(), self.block_size());
        let mut parts = self.take_parts();
        let out = f(&mut parts);
        *self = FileBlocks::build(replication, block_size, parts);
        out
    }

    /// The blocks, writer and extension, leaving an empty list behind.
    fn take_parts(&mut self) -> Parts {
        let (blocks, uc, ext) =
            match std::mem::replace(&mut self.0, FileBlocks::new(0, 0, Vec::new(), None).0) {
                Repr::One { block, .. } => (vec![block], None, None),
                Repr::Many { blocks, .. } => (blocks, None, None),
                Repr::Boxed(b) => (b.blocks, b.uc, b.ext),
            };
        Parts { blocks, uc, ext }
    }

    pub fn replication(&self) -> u16 {
        match &self.0 {
            Repr::One { replication, .. } | Repr::Many { replication, .. } => *replication,
            Repr::Boxed(b) => b.replication,
        }
    }

    pub fn set_replication(&mut self, r: u16) {
        match &mut self.0 {
            Repr::One { replication, .. } | Repr::Many { replication, .. } => *replication = r,
            Repr::Boxed(b) => b.replication = r,
        }
    }

    /// The file's preferred block size.
    pub fn block_size(&self) -> u64 {
        match &self.0 {
            Repr::One { block_size, .. } | Repr::Many { block_size, .. } => u64::from(*block_size),
            Repr::Boxed(b) => b.block_size,
        }
    }
}

impl Deref for FileBlocks {
    type Target = [FileBlock];
    fn deref(&self) -> &[FileBlock] {
        match &self.0 {
            Repr::One { block, .. } => std::slice::from_ref(block),
            Repr::Many { blocks, .. } => blocks,
            Repr::Boxed(b) => &b.blocks,
        }
    }
}

impl DerefMut for FileBlocks {
    fn deref_mut(&mut self) -> &mut [FileBlock] {
        match &mut self.0 {
            Repr::One { block, .. } => std::slice::from_mut(block),
            Repr::Many { blocks, .. } => blocks,
            Repr::Boxed(b) => &mut b.blocks,
        }
    }
}

impl<'a> IntoIterator for &'a FileBlocks {
    type Item = &'a FileBlock;
    type IntoIter = std::slice::Iter<'a, FileBlock>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl FileBlocks {
    pub fn as_slice(&self) -> &[FileBlock] {
        self
    }

    /// Changes the list as a vector, then stores it compactly again.
    fn edit<T>(&mut self, f: impl FnOnce(&mut Vec<FileBlock>) -> T) -> T {
        self.change(|p| f(&mut p.blocks))
    }

    pub fn push(&mut self, b: FileBlock) {
        match &mut self.0 {
            Repr::Many { blocks, .. } if !blocks.is_empty() => blocks.push(b),
            Repr::Boxed(boxed) => boxed.blocks.push(b),
            _ => self.edit(|v| v.push(b)),
        }
    }

    pub fn pop(&mut self) -> Option<FileBlock> {
        self.edit(Vec::pop)
    }

    pub fn truncate(&mut self, len: usize) {
        self.edit(|v| v.truncate(len))
    }

    /// Removes and returns the blocks from position `at` on.
    pub fn split_off(&mut self, at: usize) -> Vec<FileBlock> {
        self.edit(|v| v.split_off(at.min(v.len())))
    }

    pub fn extend(&mut self, blocks: impl IntoIterator<Item = FileBlock>) {
        self.edit(|v| v.extend(blocks))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn b(id: u64) -> FileBlock {
        FileBlock {
            id,
            gs: 1,
            num_bytes: id,
        }
    }

    #[derive(Debug, Clone)]
    enum Op {
        Push(u64),
        Pop,
        Truncate(usize),
        SplitOff(usize),
        Extend(Vec<u64>),
        Open(bool),
        Ext(bool),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => any::<u64>().prop_map(Op::Push),
            2 => Just(Op::Pop),
            1 => (0usize..4).prop_map(Op::Truncate),
            1 => (0usize..4).prop_map(Op::SplitOff),
            1 => proptest::collection::vec(any::<u64>(), 0..3).prop_map(Op::Extend),
            1 => any::<bool>().prop_map(Op::Open),
            1 => any::<bool>().prop_map(Op::Ext),
        ]
    }

    #[test]
    fn replication_and_block_size_in_the_tag_word() {
        assert_eq!(std::mem::size_of::<FileBlocks>(), 32);
        let mut f = FileBlocks::one(3, 128 << 20, b(1));
        f.set_replication(u16::MAX);
        f.push(b(2));
        assert_eq!((f.replication(), f.block_size()), (u16::MAX, 128 << 20));
        assert_eq!(f.as_slice(), &[b(1), b(2)]);
    }

    #[test]
    fn a_block_size_above_32_bits_is_kept_whole() {
        for size in [u64::from(u32::MAX), u64::from(u32::MAX) + 1, u64::MAX] {
            let mut f = FileBlocks::one(2, size, b(1));
            f.push(b(2));
            f.set_replication(5);
            assert_eq!(f.pop(), Some(b(2)));
            assert_eq!((f.replication(), f.block_size()), (5, size));
            assert_eq!(f.as_slice(), &[b(1)]);
            assert_eq!(matches!(f.0, Repr::Boxed(_)), size > u64::from(u32::MAX));
        }
    }

    proptest! {
        /// The list behaves as a vector, holds exactly one block inline (when the block size
        /// fits the tag word and the file is closed and has no extension), and keeps its
        /// replication, block size, writer and extension.
        #[test]
        fn behaves_as_a_vec(
            ops in proptest::collection::vec(op(), 0..60),
            block_size in prop_oneof![0u64..=u64::from(u32::MAX), any::<u64>()],
        ) {
            let mut f = FileBlocks::new(7, block_size, Vec::new(), None);
            let mut v: Vec<FileBlock> = Vec::new();
            let mut open: Option<UnderConstruction> = None;
            let mut ext: Option<InodeExt> = None;
            for o in ops {
                match o {
                    Op::Push(i) => { f.push(b(i)); v.push(b(i)); }
                    Op::Pop => prop_assert_eq!(f.pop(), v.pop()),
                    Op::Truncate(n) => { f.truncate(n); v.truncate(n); }
                    Op::SplitOff(n) => {
                        let n = n.min(v.len());
                        prop_assert_eq!(f.split_off(n), v.split_off(n));
                    }
                    Op::Extend(ids) => {
                        f.extend(ids.iter().map(|&i| b(i)));
                        v.extend(ids.iter().map(|&i| b(i)));
                    }
                    Op::Open(o) => {
                        let uc = o.then(|| UnderConstruction {
                            client_name: format!("c{}", v.len()),
                            client_machine: "m".into(),
                            truncate_last_to: None,
                        });
                        prop_assert_eq!(f.set_uc(uc.clone()), std::mem::replace(&mut open, uc));
                    }
                    Op::Ext(e) => {
                        let x = e.then(|| InodeExt {
                            acl: Vec::new(),
                            xattrs: vec![crate::fsdir::xattr::XAttr {
                                ns: crate::fsdir::xattr::XAttrNs::User,
                                name: format!("x{}", v.len()),
                                value: None,
                            }],
                            far_parent: None,
                        });
                        if v.len().is_multiple_of(2) {
                            prop_assert_eq!(f.take_ext().map(|b| *b), ext.take());
                        }
                        f.set_ext(x.clone().map(Box::new));
                        ext = x;
                    }
                }
                prop_assert_eq!(f.uc(), open.as_ref());
                prop_assert_eq!(f.ext(), ext.as_ref());
                prop_assert_eq!(f.as_slice(), v.as_slice());
                prop_assert_eq!(
                    matches!(f.0, Repr::One { .. }),
                    v.len() == 1
                        && block_size <= u64::from(u32::MAX)
                        && open.is_none()
                        && ext.is_none()
                );
                prop_assert_eq!((f.replication(), f.block_size()), (7, block_size));
            }
        }
    }
}
