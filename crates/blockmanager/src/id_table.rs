//! A map keyed by ids that are mostly handed out in sequence (inode ids, block ids): a
//! dense vector of slots indexed by `id - base`, with a sorted side map for the few ids
//! that fall far outside it (an id below the base, or far beyond the last slot).
//!
//! Memory: one `Option<V>` per slot between the base and the highest dense id, holes
//! included, and nothing else — no hash, no control byte, no spare buckets. A vector's
//! capacity beyond its length is never written, so the doubling growth costs address
//! space, not resident memory. A `HashMap<u64, V>` costs `size_of::<(u64, V)>() + 1`
//! per bucket at a load factor between 7/16 and 7/8, and touches every bucket.

use std::collections::BTreeMap;

/// How many holes one insert may open past the last slot, beyond twice the live count.
const SLACK: usize = 4096;

/// Id → value, dense for sequential ids. Iteration is in id order within each part, in no
/// promised order overall.
#[derive(Debug, Clone)]
pub struct IdTable<V> {
    /// Id of `slots[0]`; fixed by the first insert into an empty dense part.
    base: u64,
    slots: Vec<Option<V>>,
    /// Occupied slots.
    dense_len: usize,
    /// Ids outside `base..base + slots.len()`.
    sparse: BTreeMap<u64, V>,
}

impl<V> Default for IdTable<V> {
    fn default() -> Self {
        IdTable {
            base: 0,
            slots: Vec::new(),
            dense_len: 0,
            sparse: BTreeMap::new(),
        }
    }
}

impl<V> IdTable<V> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes room for `additional` more sequential ids without moving the table (a load
    /// that knows its count: one allocation, no copies, no freed smaller tables left in
    /// the allocator). Untouched room costs address space only. Best effort: a size the
    /// allocator refuses is ignored, the table then grows as it goes.
    pub fn reserve(&mut self, additional: usize) {
        let _ = self.slots.try_reserve_exact(additional);
    }

    /// The slot index of `id` if it lies inside the dense part.
    fn slot(&self, id: u64) -> Option<usize> {
        let i = usize::try_from(id.checked_sub(self.base)?).ok()?;
        (i < self.slots.len()).then_some(i)
    }

    pub fn len(&self) -> usize {
        self.dense_len + self.sparse.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, id: u64) -> Option<&V> {
        match self.slot(id) {
            Some(i) => self.slots[i].as_ref(),
            None => self.sparse.get(&id),
        }
    }

    pub fn get_mut(&mut self, id: u64) -> Option<&mut V> {
        match self.slot(id) {
            Some(i) => self.slots[i].as_mut(),
            None => self.sparse.get_mut(&id),
        }
    }

    pub fn contains_key(&self, id: u64) -> bool {
        self.get(id).is_some()
    }

    /// Inserts `v` at `id`, returning the value it replaced.
    pub fn insert(&mut self, id: u64, v: V) -> Option<V> {
        if self.slots.is_empty() {
            self.base = id;
        }
        if let Some(i) = self.slot(id) {
            let old = self.slots[i].replace(v);
            if old.is_none() {
                self.dense_len += 1;
            }
            return old;
        }
        let Some(i) = id
            .checked_sub(self.base)
            .and_then(|i| usize::try_from(i).ok())
        else {
            return self.sparse.insert(id, v);
        };
        let limit = self
            .dense_len
            .saturating_add(1)
            .saturating_mul(2)
            .saturating_add(SLACK)
            .max(self.slots.len().saturating_add(SLACK));
        if i >= limit {
            return self.sparse.insert(id, v);
        }
        // Grow the dense part to cover `id`, moving in the side map's ids it now covers.
        // No overflow: slots.len() <= i, and base + i is id. The new slot is written once,
        // never read first: reading a fresh page maps the zero page, which the write then
        // has to copy (two faults per page of a load, and a TLB flush on every CPU the
        // process runs on).
        let old_end = self.base + self.slots.len() as u64;
        self.slots.resize_with(i, || None);
        let old = self.sparse.remove(&id);
        self.slots.push(Some(v));
        self.dense_len += 1;
        let moved: Vec<u64> = self.sparse.range(old_end..id).map(|(k, _)| *k).collect();
        for k in moved {
            if let Some(x) = self.sparse.remove(&k) {
                // k - base < i: it lies in old_end..id.
                self.slots[(k - self.base) as usize] = Some(x);
                self.dense_len += 1;
            }
        }
        old
    }

    pub fn remove(&mut self, id: u64) -> Option<V> {
        match self.slot(id) {
            Some(i) => {
                let old = self.slots[i].take();
                if old.is_some() {
                    self.dense_len -= 1;
                }
                old
            }
            None => self.sparse.remove(&id),
        }
    }

    /// Every (id, value).
    pub fn iter(&self) -> impl Iterator<Item = (u64, &V)> + '_ {
        let base = self.base;
        self.slots
            .iter()
            .enumerate()
            .filter_map(move |(i, s)| s.as_ref().map(|v| (base + i as u64, v)))
            .chain(self.sparse.iter().map(|(k, v)| (*k, v)))
    }

    /// Up to `n` ids above `after` (all ids with None), in increasing order: a walk of
    /// the whole table in bounded steps, each taking up where the last ended.
    pub fn keys_after(&self, after: Option<u64>, n: usize) -> Vec<u64> {
        let from = match after {
            None => 0,
            Some(a) => match a.checked_add(1) {
                Some(f) => f,
                None => return Vec::new(),
            },
        };
        let start = usize::try_from(from.saturating_sub(self.base))
            .unwrap_or(usize::MAX)
            .min(self.slots.len());
        let base = self.base;
        let dense = self.slots[start..]
            .iter()
            .enumerate()
            .filter(|(_, s)| s.is_some())
            .map(move |(i, _)| base + (start + i) as u64)
            .take(n);
        let sparse = self.sparse.range(from..).map(|(k, _)| *k).take(n);
        let mut out: Vec<u64> = dense.chain(sparse).collect();
        out.sort_unstable();
        out.truncate(n);
        out
    }

    pub fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl Iterator<Item = &V> + '_ {
        self.iter().map(|(_, v)| v)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use proptest::prelude::*;

    use super::*;

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u64, u32),
        Remove(u64),
    }

    fn id() -> impl Strategy<Value = u64> {
        prop_oneof![
            // mostly sequential near a base, some far away or below it
            4 => 1000u64..1200,
            1 => 0u64..1000,
            1 => 1200u64..20_000,
            1 => any::<u64>(),
        ]
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (id(), any::<u32>()).prop_map(|(k, v)| Op::Insert(k, v)),
            1 => id().prop_map(Op::Remove),
        ]
    }

    proptest! {
        /// The table behaves as a map.
        #[test]
        fn behaves_as_a_map(ops in proptest::collection::vec(op(), 0..300)) {
            let mut t = IdTable::new();
            let mut m = HashMap::new();
            for o in &ops {
                match *o {
                    Op::Insert(k, v) => prop_assert_eq!(t.insert(k, v), m.insert(k, v)),
                    Op::Remove(k) => prop_assert_eq!(t.remove(k), m.remove(&k)),
                }
                prop_assert_eq!(t.len(), m.len());
            }
            for (k, v) in &m {
                prop_assert_eq!(t.get(*k), Some(v));
                prop_assert!(t.contains_key(*k));
            }
            let mut got: Vec<(u64, u32)> = t.iter().map(|(k, v)| (k, *v)).collect();
            got.sort_unstable();
            let mut want: Vec<(u64, u32)> = m.into_iter().collect();
            want.sort_unstable();
            prop_assert_eq!(got, want);
        }
    }

    proptest! {
        /// Walking the table with `keys_after` in steps of any size gives every id once,
        /// in increasing order.
        #[test]
        fn keys_after_walks_every_id_in_order(
            ops in proptest::collection::vec(op(), 0..300),
            step in 1usize..50,
        ) {
            let mut t = IdTable::new();
            for o in &ops {
                match *o {
                    Op::Insert(k, v) => { t.insert(k, v); }
                    Op::Remove(k) => { t.remove(k); }
                }
            }
            let mut walked = Vec::new();
            let mut after = None;
            loop {
                let ids = t.keys_after(after, step);
                prop_assert!(ids.len() <= step);
                if ids.is_empty() {
                    break;
                }
                after = ids.last().copied();
                walked.extend(ids);
            }
            let mut want: Vec<u64> = t.keys().collect();
            want.sort_unstable();
            prop_assert_eq!(walked, want);
        }
    }

    #[test]
    fn sequential_ids_are_dense() {
        let mut t = IdTable::new();
        for id in 100..10_100u64 {
            t.insert(id, id);
        }
        assert!(t.sparse.is_empty());
        assert_eq!(t.slots.len(), 10_000);
        // one far away goes to the side map, and is moved in once the dense part reaches it
        t.insert(100 + 100_000, 7);
        assert_eq!(t.sparse.len(), 1);
        for id in 10_100..100_100u64 {
            t.insert(id, id);
        }
        assert_eq!(t.sparse.len(), 1);
        assert_eq!(t.get(100_100), Some(&7));
        t.insert(100_100, 100_100);
        assert!(t.sparse.is_empty());
        assert_eq!(t.get(100_100), Some(&100_100));
        assert_eq!(t.len(), 100_001);
        // below the base
        t.insert(5, 5);
        assert_eq!(t.get(5), Some(&5));
        assert_eq!(t.remove(5), Some(5));
        assert_eq!(t.get(5), None);
        if let Some(v) = t.get_mut(150) {
            *v = 1;
        }
        assert_eq!(t.get(150), Some(&1));
    }
}
