//! A file's blocks: one block (most files) held in the inode itself, any other count in a
//! vector. Reads as a slice; the few changes a file's block list sees are methods here.
//! The file's replication rides along in the spare bytes of the list's tag word.
//!
//! Memory: 32 bytes in the inode and nothing else for a file of one block, where a
//! `Vec<FileBlock>` took 24 bytes plus a 32-byte malloc chunk; the replication, a `u16`
//! field of the inode, took 8 more with its padding.

use std::ops::{Deref, DerefMut};

use super::FileBlock;

/// A file's replication and its blocks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileBlocks(Repr);

#[derive(Clone, Debug, PartialEq, Eq)]
enum Repr {
    One(u16, FileBlock),
    /// No block, or two and more.
    Many(u16, Vec<FileBlock>),
}

impl FileBlocks {
    /// The list of `blocks` of a file of `replication`.
    pub fn new(replication: u16, mut blocks: Vec<FileBlock>) -> Self {
        FileBlocks(match blocks.len() {
            1 => Repr::One(replication, blocks.remove(0)),
            _ => Repr::Many(replication, blocks),
        })
    }

    /// A file of one block.
    pub fn one(replication: u16, block: FileBlock) -> Self {
        FileBlocks(Repr::One(replication, block))
    }

    pub fn replication(&self) -> u16 {
        match self.0 {
            Repr::One(r, _) | Repr::Many(r, _) => r,
        }
    }

    pub fn set_replication(&mut self, replication: u16) {
        match &mut self.0 {
            Repr::One(r, _) | Repr::Many(r, _) => *r = replication,
        }
    }
}

impl Deref for FileBlocks {
    type Target = [FileBlock];
    fn deref(&self) -> &[FileBlock] {
        match &self.0 {
            Repr::One(_, b) => std::slice::from_ref(b),
            Repr::Many(_, v) => v,
        }
    }
}

impl DerefMut for FileBlocks {
    fn deref_mut(&mut self) -> &mut [FileBlock] {
        match &mut self.0 {
            Repr::One(_, b) => std::slice::from_mut(b),
            Repr::Many(_, v) => v,
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
        let replication = self.replication();
        let mut v = match std::mem::replace(&mut self.0, Repr::Many(replication, Vec::new())) {
            Repr::One(_, b) => vec![b],
            Repr::Many(_, v) => v,
        };
        let out = f(&mut v);
        *self = FileBlocks::new(replication, v);
        out
    }

    pub fn push(&mut self, b: FileBlock) {
        match &mut self.0 {
            Repr::Many(_, v) if !v.is_empty() => v.push(b),
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
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => any::<u64>().prop_map(Op::Push),
            2 => Just(Op::Pop),
            1 => (0usize..4).prop_map(Op::Truncate),
            1 => (0usize..4).prop_map(Op::SplitOff),
            1 => proptest::collection::vec(any::<u64>(), 0..3).prop_map(Op::Extend),
        ]
    }

    #[test]
    fn replication_in_the_tag_word() {
        assert_eq!(std::mem::size_of::<FileBlocks>(), 32);
        let mut f = FileBlocks::one(3, b(1));
        f.set_replication(u16::MAX);
        f.push(b(2));
        assert_eq!(f.replication(), u16::MAX);
        assert_eq!(f.as_slice(), &[b(1), b(2)]);
    }

    proptest! {
        /// The list behaves as a vector, and holds exactly one block inline.
        #[test]
        fn behaves_as_a_vec(ops in proptest::collection::vec(op(), 0..60)) {
            let mut f = FileBlocks::new(7, Vec::new());
            let mut v: Vec<FileBlock> = Vec::new();
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
                }
                prop_assert_eq!(f.as_slice(), v.as_slice());
                prop_assert_eq!(matches!(f.0, Repr::One(..)), v.len() == 1);
                prop_assert_eq!(f.replication(), 7);
            }
        }
    }
}
