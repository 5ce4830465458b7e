//! A compact set of block ids: the blocks one storage holds (the reverse index a full block
//! report diffs against, and what removing a storage walks).
//!
//! Block ids are handed out in sequence, so a storage's ids cluster in a few ranges. The
//! set splits an id into its high bits (`id >> 16`, one chunk per distinct value, kept in a
//! sorted vector) and its low 16 bits, held per chunk as a sorted array of `u16` while the
//! chunk has few ids and as a 65,536-bit bitmap (8 KiB) once it has more than 4,096 (a
//! roaring bitmap's layout). A member costs 2 bytes in an array chunk and at most 2 bytes
//! in a bitmap chunk (less when it is fuller), where a `HashMap<u64, u64>` entry cost 16
//! bytes plus a control byte at a load factor of 7/16 to 7/8.

/// Ids per array chunk beyond which it becomes a bitmap (both then take 8 KiB).
const ARRAY_MAX: usize = 4096;
/// Ids per bitmap chunk below which it goes back to an array (hysteresis: an id added and
/// removed at the boundary does not convert each time).
const BITMAP_MIN: usize = 2048;
const WORDS: usize = 1 << 10; // 65,536 bits

#[derive(Clone, Debug)]
enum Chunk {
    /// Sorted, distinct.
    Array(Vec<u16>),
    /// Bit `lo` set for each member; the member count.
    Bits(Box<[u64; WORDS]>, usize),
}

impl Chunk {
    fn len(&self) -> usize {
        match self {
            Chunk::Array(a) => a.len(),
            Chunk::Bits(_, n) => *n,
        }
    }

    fn contains(&self, lo: u16) -> bool {
        match self {
            Chunk::Array(a) => a.binary_search(&lo).is_ok(),
            Chunk::Bits(b, _) => b[usize::from(lo >> 6)] & (1 << (lo & 63)) != 0,
        }
    }

    fn insert(&mut self, lo: u16) -> bool {
        match self {
            Chunk::Array(a) => {
                // Ids mostly come in increasing order (a storage's full report): after the
                // last one, no search.
                let pos = match a.last() {
                    Some(&last) if last < lo => a.len(),
                    _ => match a.binary_search(&lo) {
                        Err(pos) => pos,
                        Ok(_) => return false,
                    },
                };
                a.insert(pos, lo);
                if a.len() > ARRAY_MAX {
                    let mut bits = Box::new([0u64; WORDS]);
                    for &x in a.iter() {
                        bits[usize::from(x >> 6)] |= 1 << (x & 63);
                    }
                    *self = Chunk::Bits(bits, a.len());
                }
                true
            }
            Chunk::Bits(b, n) => {
                let (w, bit) = (usize::from(lo >> 6), 1u64 << (lo & 63));
                if b[w] & bit != 0 {
                    return false;
                }
                b[w] |= bit;
                *n += 1;
                true
            }
        }
    }

    fn remove(&mut self, lo: u16) -> bool {
        match self {
            Chunk::Array(a) => match a.binary_search(&lo) {
                Ok(pos) => {
                    a.remove(pos);
                    if a.len() < a.capacity() / 4 {
                        a.shrink_to(a.len() * 2);
                    }
                    true
                }
                Err(_) => false,
            },
            Chunk::Bits(b, n) => {
                let (w, bit) = (usize::from(lo >> 6), 1u64 << (lo & 63));
                if b[w] & bit == 0 {
                    return false;
                }
                b[w] &= !bit;
                *n -= 1;
                if *n < BITMAP_MIN {
                    let a: Vec<u16> = bits_iter(b).collect();
                    *self = Chunk::Array(a);
                }
                true
            }
        }
    }
}

fn bits_iter(b: &[u64; WORDS]) -> impl Iterator<Item = u16> + '_ {
    b.iter().enumerate().flat_map(|(w, &word)| {
        let mut word = word;
        std::iter::from_fn(move || {
            if word == 0 {
                return None;
            }
            let t = word.trailing_zeros();
            word &= word - 1;
            // w < 1024 and t < 64: the value fits 16 bits.
            Some(((w as u32) << 6 | t) as u16)
        })
    })
}

/// The members of a bitmap chunk from `from` on, in increasing order.
fn bits_iter_from(b: &[u64; WORDS], from: u16) -> impl Iterator<Item = u16> + '_ {
    let first = usize::from(from >> 6);
    // The first word without the bits below `from`.
    let mask = !0u64 << (from & 63);
    b[first..].iter().enumerate().flat_map(move |(k, &word)| {
        let w = first + k;
        let mut word = if k == 0 { word & mask } else { word };
        std::iter::from_fn(move || {
            if word == 0 {
                return None;
            }
            let t = word.trailing_zeros();
            word &= word - 1;
            // w < 1024 and t < 64: the value fits 16 bits.
            Some(((w as u32) << 6 | t) as u16)
        })
    })
}

/// A set of block ids, iterated in increasing order.
#[derive(Clone, Debug, Default)]
pub struct BlockSet {
    /// (id >> 16, chunk), sorted by the first; no chunk is empty.
    chunks: Vec<(u64, Chunk)>,
    len: usize,
}

fn split(id: u64) -> (u64, u16) {
    (id >> 16, (id & 0xFFFF) as u16)
}

impl BlockSet {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn chunk(&self, hi: u64) -> Result<usize, usize> {
        self.chunks.binary_search_by_key(&hi, |(h, _)| *h)
    }

    pub fn contains(&self, id: u64) -> bool {
        let (hi, lo) = split(id);
        self.chunk(hi).is_ok_and(|i| self.chunks[i].1.contains(lo))
    }

    /// Adds `id`; false if it was there already.
    pub fn insert(&mut self, id: u64) -> bool {
        let (hi, lo) = split(id);
        // The last chunk first: ids mostly come in increasing order.
        let at = match self.chunks.last() {
            Some(&(h, _)) if h == hi => Ok(self.chunks.len() - 1),
            Some(&(h, _)) if h < hi => Err(self.chunks.len()),
            None => Err(0),
            _ => self.chunk(hi),
        };
        let added = match at {
            Ok(i) => self.chunks[i].1.insert(lo),
            Err(i) => {
                self.chunks.insert(i, (hi, Chunk::Array(vec![lo])));
                true
            }
        };
        self.len += usize::from(added);
        added
    }

    /// Removes `id`; false if it was not there.
    pub fn remove(&mut self, id: u64) -> bool {
        let (hi, lo) = split(id);
        let Ok(i) = self.chunk(hi) else {
            return false;
        };
        let removed = self.chunks[i].1.remove(lo);
        if removed {
            self.len -= 1;
            if self.chunks[i].1.len() == 0 {
                self.chunks.remove(i);
            }
        }
        removed
    }

    /// Every id, in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.chunks.iter().flat_map(|(hi, c)| {
            let base = hi << 16;
            let lows: Box<dyn Iterator<Item = u16> + '_> = match c {
                Chunk::Array(a) => Box::new(a.iter().copied()),
                Chunk::Bits(b, _) => Box::new(bits_iter(b)),
            };
            lows.map(move |lo| base | u64::from(lo))
        })
    }

    /// The ids from `start` on, in increasing order.
    pub fn iter_from(&self, start: u64) -> impl Iterator<Item = u64> + '_ {
        let (hi, lo) = split(start);
        let first = match self.chunk(hi) {
            Ok(i) | Err(i) => i,
        };
        self.chunks[first..].iter().flat_map(move |(h, c)| {
            let base = h << 16;
            let from = if *h == hi { lo } else { 0 };
            let lows: Box<dyn Iterator<Item = u16> + '_> = match c {
                Chunk::Array(a) => {
                    let p = a.partition_point(|&x| x < from);
                    Box::new(a[p..].iter().copied())
                }
                Chunk::Bits(b, _) => Box::new(bits_iter_from(b, from)),
            };
            lows.map(move |lo| base | u64::from(lo))
        })
    }

    /// Heap bytes held (for tests and memory figures).
    pub fn heap_bytes(&self) -> usize {
        self.chunks.capacity() * std::mem::size_of::<(u64, Chunk)>()
            + self
                .chunks
                .iter()
                .map(|(_, c)| match c {
                    Chunk::Array(a) => a.capacity() * 2,
                    Chunk::Bits(..) => WORDS * 8,
                })
                .sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use proptest::prelude::*;

    use super::*;

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u64),
        Remove(u64),
    }

    fn id() -> impl Strategy<Value = u64> {
        prop_oneof![
            // dense runs inside one or two chunks, so arrays turn into bitmaps and back
            6 => (1u64 << 30)..((1u64 << 30) + 140_000),
            1 => any::<u64>(),
        ]
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => id().prop_map(Op::Insert),
            2 => id().prop_map(Op::Remove),
        ]
    }

    proptest! {
        /// Ids inserted mostly in increasing order (the appending path), duplicates and
        /// a few out of order among them, then any operations: still a set.
        #[test]
        fn increasing_inserts_behave_as_a_set(
            mut ids in proptest::collection::vec(id(), 0..600),
            late in proptest::collection::vec(id(), 0..20),
            ops in proptest::collection::vec(op(), 0..100),
        ) {
            ids.sort_unstable();
            let mut s = BlockSet::new();
            let mut m = BTreeSet::new();
            for (i, &k) in ids.iter().enumerate() {
                prop_assert_eq!(s.insert(k), m.insert(k));
                if let Some(&l) = late.get(i % 40) {
                    prop_assert_eq!(s.insert(l), m.insert(l));
                }
            }
            for o in &ops {
                match *o {
                    Op::Insert(k) => prop_assert_eq!(s.insert(k), m.insert(k)),
                    Op::Remove(k) => prop_assert_eq!(s.remove(k), m.remove(&k)),
                }
            }
            prop_assert_eq!(s.len(), m.len());
            prop_assert_eq!(s.iter().collect::<Vec<_>>(), m.iter().copied().collect::<Vec<_>>());
        }

        /// The set behaves as a set, iterated in order.
        #[test]
        fn behaves_as_a_set(ops in proptest::collection::vec(op(), 0..400)) {
            let mut s = BlockSet::new();
            let mut m = BTreeSet::new();
            for o in &ops {
                match *o {
                    Op::Insert(k) => prop_assert_eq!(s.insert(k), m.insert(k)),
                    Op::Remove(k) => prop_assert_eq!(s.remove(k), m.remove(&k)),
                }
                prop_assert_eq!(s.len(), m.len());
            }
            for k in &m {
                prop_assert!(s.contains(*k));
            }
            prop_assert!(s.iter().eq(m.iter().copied()));
        }

        /// Iteration from any id gives the members from there on.
        #[test]
        fn iterates_from_any_id(
            ids in proptest::collection::vec(id(), 0..400),
            from in proptest::collection::vec(id(), 1..20),
        ) {
            let s: BlockSet = {
                let mut s = BlockSet::new();
                for &k in &ids {
                    s.insert(k);
                }
                s
            };
            let m: BTreeSet<u64> = ids.iter().copied().collect();
            for &f in from.iter().chain(ids.iter().take(10)) {
                prop_assert!(s.iter_from(f).eq(m.range(f..).copied()));
            }
        }
    }

    #[test]
    fn dense_chunks_become_bitmaps_and_back() {
        let base = 7u64 << 16;
        let mut s = BlockSet::new();
        let mut m = BTreeSet::new();
        // every third id of two chunks: arrays beyond 4,096 members turn into bitmaps
        for id in (base..base + 2 * 65_536).step_by(3) {
            assert!(s.insert(id));
            m.insert(id);
        }
        assert!(matches!(s.chunks[0].1, Chunk::Bits(..)));
        assert!(s.iter().eq(m.iter().copied()));
        for f in [
            base,
            base + 1,
            base + 64,
            base + 65_535,
            base + 65_536,
            base + 99_999,
        ] {
            assert!(s.iter_from(f).eq(m.range(f..).copied()));
        }
        assert!(s.heap_bytes() <= 2 * WORDS * 8 + 256);
        // emptied again: back to arrays, then no chunk at all
        for id in m.iter().copied().skip(100) {
            assert!(s.remove(id));
        }
        assert!(matches!(s.chunks[0].1, Chunk::Array(_)));
        assert_eq!(s.len(), 100);
        for id in m.iter().copied().take(100) {
            assert!(s.remove(id));
        }
        assert!(s.is_empty() && s.chunks.is_empty());
        assert!(!s.remove(base));
    }
}
