//! A file's blocks: one block (most files) held in the inode itself, any other count in a
//! vector. Reads as a slice; the few changes a file's block list sees are methods here.
//!
//! Memory: 32 bytes in the inode and nothing else for a file of one block, where a
//! `Vec<FileBlock>` took 24 bytes plus a 32-byte malloc chunk.

use std::ops::{Deref, DerefMut};

use super::FileBlock;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileBlocks {
    One(FileBlock),
    /// No block, or two and more.
    Many(Vec<FileBlock>),
}

impl Default for FileBlocks {
    fn default() -> Self {
        FileBlocks::Many(Vec::new())
    }
}

impl From<Vec<FileBlock>> for FileBlocks {
    fn from(mut v: Vec<FileBlock>) -> Self {
        match v.len() {
            1 => FileBlocks::One(v.remove(0)),
            _ => FileBlocks::Many(v),
        }
    }
}

impl Deref for FileBlocks {
    type Target = [FileBlock];
    fn deref(&self) -> &[FileBlock] {
        match self {
            FileBlocks::One(b) => std::slice::from_ref(b),
            FileBlocks::Many(v) => v,
        }
    }
}

impl DerefMut for FileBlocks {
    fn deref_mut(&mut self) -> &mut [FileBlock] {
        match self {
            FileBlocks::One(b) => std::slice::from_mut(b),
            FileBlocks::Many(v) => v,
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
        let mut v = match std::mem::take(self) {
            FileBlocks::One(b) => vec![b],
            FileBlocks::Many(v) => v,
        };
        let out = f(&mut v);
        *self = v.into();
        out
    }

    pub fn push(&mut self, b: FileBlock) {
        match self {
            FileBlocks::Many(v) if !v.is_empty() => v.push(b),
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

    proptest! {
        /// The list behaves as a vector, and holds exactly one block inline.
        #[test]
        fn behaves_as_a_vec(ops in proptest::collection::vec(op(), 0..60)) {
            let mut f = FileBlocks::default();
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
                prop_assert_eq!(matches!(f, FileBlocks::One(_)), v.len() == 1);
            }
        }
    }
}
