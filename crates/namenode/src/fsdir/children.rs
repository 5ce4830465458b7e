//! A directory's children: their inode ids, sorted by the children's names, which live
//! in the inodes themselves (as Hadoop's INodeDirectory keeps a sorted list of its
//! children and compares through them).
//!
//! Memory: eight bytes per child in one vector, behind one word in the inode (`None`, no
//! allocation, for an empty directory). The vector's own 24 bytes sit in the box rather
//! than in every inode: a file's inode is as large as a directory's, and directories are
//! few. A `BTreeMap<Vec<u8>, u64>` paid a node share of about 50 bytes per entry plus a
//! second copy of every name.
//!
//! The tree ([`super::FsDirectory`]) does the searching, as only it can read a child's name
//! from its id; here are the positions.

use std::cmp::Ordering;

/// Child inode ids in byte order of their names (HDFS's listing order).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[allow(clippy::box_collection)] // the box is the point: one word in the inode
pub struct Children(Option<Box<Vec<u64>>>);

impl Children {
    fn ids(&self) -> &[u64] {
        self.0.as_deref().map_or(&[], |v| v.as_slice())
    }

    pub fn len(&self) -> usize {
        self.ids().len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids().is_empty()
    }

    /// The children's ids in name order.
    pub fn values(&self) -> std::slice::Iter<'_, u64> {
        self.ids().iter()
    }

    /// The ids from position `at` on (empty past the end).
    pub(super) fn from(&self, at: usize) -> &[u64] {
        self.ids().get(at..).unwrap_or(&[])
    }

    /// `Ok(position)` of the child called `name`, or `Err(position)` where it would go;
    /// `name_of` reads a child's name from its id.
    pub(super) fn search<'a>(
        &self,
        name: &[u8],
        name_of: impl Fn(u64) -> &'a [u8],
    ) -> Result<usize, usize> {
        self.ids()
            .binary_search_by(|&id| -> Ordering { name_of(id).cmp(name) })
    }

    pub(super) fn insert_at(&mut self, at: usize, id: u64) {
        let v = self.0.get_or_insert_with(Default::default);
        v.insert(at.min(v.len()), id);
    }

    pub(super) fn remove_at(&mut self, at: usize) -> Option<u64> {
        let v = self.0.as_mut()?;
        let id = (at < v.len()).then(|| v.remove(at));
        if v.is_empty() {
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
        /// Inserting and removing by name behaves as a sorted map from name to id.
        #[test]
        fn behaves_as_a_sorted_map(
            ops in proptest::collection::vec(
                (any::<bool>(), proptest::collection::vec(0u8..4, 0..4)), 0..200),
        ) {
            let mut m = Model::default();
            let mut want: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
            for (insert, name) in ops {
                match (insert, m.search(&name)) {
                    (true, Ok(_)) => prop_assert!(want.contains_key(&name)),
                    (true, Err(at)) => {
                        prop_assert!(!want.contains_key(&name));
                        m.next += 1;
                        m.names.insert(m.next, name.clone());
                        m.children.insert_at(at, m.next);
                        want.insert(name, m.next);
                    }
                    (false, Ok(at)) => {
                        let id = m.children.remove_at(at);
                        prop_assert_eq!(id, want.remove(&name));
                    }
                    (false, Err(_)) => prop_assert!(!want.contains_key(&name)),
                }
                let got: Vec<u64> = m.children.values().copied().collect();
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
        c.insert_at(5, 9);
        assert_eq!(c.values().copied().collect::<Vec<_>>(), vec![9]);
        assert!(c.from(4).is_empty());
        assert_eq!(c.remove_at(0), Some(9));
        assert_eq!(
            c,
            Children::default(),
            "an emptied list holds no allocation"
        );
    }

    #[test]
    fn one_word() {
        assert_eq!(std::mem::size_of::<Children>(), 8);
    }
}
