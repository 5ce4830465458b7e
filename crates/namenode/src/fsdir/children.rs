//! A directory's children: their inode ids, sorted by the children's names, which live
//! in the inodes themselves (as Hadoop's INodeDirectory keeps a sorted list of its
//! children and compares through them).
//!
//! Memory: four bytes per child in one vector — each id as its distance above
//! `ROOT_INODE_ID`, from which inode ids count up — behind one word in the inode (`None`,
//! no allocation, for an empty directory); a directory with a child whose id does not fit
//! keeps eight-byte ids. The vector's own 24 bytes sit in the box rather than in every
//! inode: a file's inode is as large as a directory's, and directories are few. A
//! `BTreeMap<Vec<u8>, u64>` paid a node share of about 50 bytes per entry plus a second
//! copy of every name.
//!
//! The tree ([`super::FsDirectory`]) does the searching, as only it can read a child's name
//! from its id; here are the positions.

use std::cmp::Ordering;

use super::ROOT_INODE_ID;

/// Child inode ids in byte order of their names (HDFS's listing order).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Children(Option<Box<Ids>>);

#[derive(Debug, Clone, PartialEq, Eq)]
enum Ids {
    /// `id - ROOT_INODE_ID` of every child.
    Narrow(Vec<u32>),
    /// Full ids, once a child's id does not fit the narrow form.
    Wide(Vec<u64>),
}

/// An inode id as its 4-byte distance above `ROOT_INODE_ID`, if it has one (also an
/// inode's parent, `Inode::parent`).
pub(crate) fn narrow(id: u64) -> Option<u32> {
    u32::try_from(id.checked_sub(ROOT_INODE_ID)?).ok()
}

/// The inode id `narrow` gave `n` for.
pub(crate) fn wide(n: u32) -> u64 {
    ROOT_INODE_ID + u64::from(n)
}

/// The children's ids in name order, from some position on.
#[derive(Debug, Clone)]
pub enum Iter<'a> {
    Narrow(std::slice::Iter<'a, u32>),
    Wide(std::slice::Iter<'a, u64>),
}

impl Iterator for Iter<'_> {
    type Item = u64;
    fn next(&mut self) -> Option<u64> {
        match self {
            Iter::Narrow(i) => i.next().map(|&n| wide(n)),
            Iter::Wide(i) => i.next().copied(),
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.len();
        (n, Some(n))
    }
    fn nth(&mut self, at: usize) -> Option<u64> {
        match self {
            Iter::Narrow(i) => i.nth(at).map(|&n| wide(n)),
            Iter::Wide(i) => i.nth(at).copied(),
        }
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<u64> {
        match self {
            Iter::Narrow(i) => i.next_back().map(|&n| wide(n)),
            Iter::Wide(i) => i.next_back().copied(),
        }
    }
}

impl ExactSizeIterator for Iter<'_> {
    fn len(&self) -> usize {
        match self {
            Iter::Narrow(i) => i.len(),
            Iter::Wide(i) => i.len(),
        }
    }
}

impl Children {
    pub fn len(&self) -> usize {
        match self.0.as_deref() {
            None => 0,
            Some(Ids::Narrow(v)) => v.len(),
            Some(Ids::Wide(v)) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The children's ids in name order.
    pub fn values(&self) -> Iter<'_> {
        self.from(0)
    }

    /// The ids from position `at` on (empty past the end).
    pub(super) fn from(&self, at: usize) -> Iter<'_> {
        match self.0.as_deref() {
            None => Iter::Wide([].iter()),
            Some(Ids::Narrow(v)) => Iter::Narrow(v.get(at..).unwrap_or(&[]).iter()),
            Some(Ids::Wide(v)) => Iter::Wide(v.get(at..).unwrap_or(&[]).iter()),
        }
    }

    /// The id at position `at`.
    pub(super) fn get(&self, at: usize) -> Option<u64> {
        self.from(at).next()
    }

    /// `Ok(position)` of the child called `name`, or `Err(position)` where it would go;
    /// `name_of` reads a child's name from its id.
    pub(super) fn search<'a>(
        &self,
        name: &[u8],
        name_of: impl Fn(u64) -> &'a [u8],
    ) -> Result<usize, usize> {
        match self.0.as_deref() {
            None => Err(0),
            Some(Ids::Narrow(v)) => {
                v.binary_search_by(|&n| -> Ordering { name_of(wide(n)).cmp(name) })
            }
            Some(Ids::Wide(v)) => v.binary_search_by(|&id| -> Ordering { name_of(id).cmp(name) }),
        }
    }

    pub(super) fn insert_at(&mut self, at: usize, id: u64) {
        let ids = self
            .0
            .get_or_insert_with(|| Box::new(Ids::Narrow(Vec::new())));
        if let (Ids::Narrow(v), None) = (&**ids, narrow(id)) {
            **ids = Ids::Wide(v.iter().map(|&n| wide(n)).collect());
        }
        match &mut **ids {
            Ids::Narrow(v) => {
                if let Some(n) = narrow(id) {
                    v.insert(at.min(v.len()), n);
                }
            }
            Ids::Wide(v) => v.insert(at.min(v.len()), id),
        }
    }

    pub(super) fn remove_at(&mut self, at: usize) -> Option<u64> {
        let ids = self.0.as_mut()?;
        let (id, empty) = match &mut **ids {
            Ids::Narrow(v) => ((at < v.len()).then(|| wide(v.remove(at))), v.is_empty()),
            Ids::Wide(v) => ((at < v.len()).then(|| v.remove(at)), v.is_empty()),
        };
        if empty {
            self.0 = None;
        }
        id
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap};

    use proptest::prelude::*;

    use super::*;

    /// A name table and a children list against a `BTreeMap` by name.
    #[derive(Default)]
    struct Model {
        names: HashMap<u64, Vec<u8>>,
        children: Children,
        next: u64,
    }

    impl Model {
        fn search(&self, name: &[u8]) -> Result<usize, usize> {
            let names = &self.names;
            self.children
                .search(name, |id| names.get(&id).map_or(&[][..], |n| &n[..]))
        }
    }

    proptest! {
        /// Inserting and removing by name behaves as a sorted map from name to id, whether
        /// the ids fit the narrow form (most) or not (`far`: below the root's id or more
        /// than four billion above it).
        #[test]
        fn behaves_as_a_sorted_map(
            ops in proptest::collection::vec(
                (any::<bool>(), proptest::collection::vec(0u8..4, 0..4), prop::bool::weighted(0.02)),
                0..200),
        ) {
            let mut m = Model { next: ROOT_INODE_ID, ..Model::default() };
            let mut far = 0u64;
            let mut want: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
            for (insert, name, is_far) in ops {
                match (insert, m.search(&name)) {
                    (true, Ok(_)) => prop_assert!(want.contains_key(&name)),
                    (true, Err(at)) => {
                        prop_assert!(!want.contains_key(&name));
                        m.next += 1;
                        far += 1;
                        let id = match (is_far, far % 2) {
                            (false, _) => m.next,
                            (true, 0) => far,
                            (true, _) => u64::MAX - far,
                        };
                        m.names.insert(id, name.clone());
                        m.children.insert_at(at, id);
                        want.insert(name, id);
                    }
                    (false, Ok(at)) => {
                        let id = m.children.remove_at(at);
                        prop_assert_eq!(id, want.remove(&name));
                    }
                    (false, Err(_)) => prop_assert!(!want.contains_key(&name)),
                }
                let got: Vec<u64> = m.children.values().collect();
                let back: Vec<u64> = m.children.values().rev().collect();
                prop_assert_eq!(back.into_iter().rev().collect::<Vec<_>>(), got.clone());
                for at in 0..=got.len() {
                    prop_assert_eq!(m.children.get(at), got.get(at).copied());
                    prop_assert_eq!(m.children.from(at).len(), got.len() - at);
                }
                let sorted: Vec<u64> = want.values().copied().collect();
                prop_assert_eq!(got, sorted);
                prop_assert_eq!(m.children.len(), want.len());
            }
        }
    }

    #[test]
    fn positions_out_of_range_are_harmless() {
        let mut c = Children::default();
        assert_eq!(c.remove_at(3), None);
        c.insert_at(5, ROOT_INODE_ID + 9);
        assert_eq!(c.values().collect::<Vec<_>>(), vec![ROOT_INODE_ID + 9]);
        assert_eq!(c.from(4).len(), 0);
        assert_eq!(c.remove_at(0), Some(ROOT_INODE_ID + 9));
        assert_eq!(
            c,
            Children::default(),
            "an emptied list holds no allocation"
        );
    }

    #[test]
    fn one_word_and_four_bytes_per_child() {
        assert_eq!(std::mem::size_of::<Children>(), 8);
        let mut c = Children::default();
        for i in 0..3 {
            c.insert_at(i, ROOT_INODE_ID + i as u64);
        }
        assert!(matches!(c.0.as_deref(), Some(Ids::Narrow(_))));
        c.insert_at(1, 7);
        assert!(matches!(c.0.as_deref(), Some(Ids::Wide(_))));
        let want = [ROOT_INODE_ID, 7, ROOT_INODE_ID + 1, ROOT_INODE_ID + 2];
        assert_eq!(c.values().collect::<Vec<_>>(), want);
    }
}
