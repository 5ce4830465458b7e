//! A hasher for maps keyed by block ids (`IdHashMap`): one 128-bit multiply folded to 64
//! bits per key, where the standard SipHash-1-3 took most of the time of a per-replica
//! queue update during a block report storm.
//!
//! Only for keys the NameNode handed out (block ids of blocks it knows): the hash has no
//! per-process key, so keys an outsider chooses could be made to collide. Maps keyed by
//! strings or ids from the wire keep the standard hasher.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// An odd 64-bit constant with well-spread bits (the golden ratio's fraction).
const K: u64 = 0x9E37_79B9_7F4A_7C15;

/// Folded multiply: the low and high halves of the 128-bit product XORed, so every key
/// bit reaches both the low bits (hashbrown's bucket index) and the top seven (its tag).
#[inline]
fn fold_mul(x: u64) -> u64 {
    let p = u128::from(x) * u128::from(K);
    (p as u64) ^ ((p >> 64) as u64)
}

/// The hasher of `IdHashMap`: `write_u64` is the fast path; other writes are folded in
/// byte by byte (correct, not fast).
#[derive(Clone, Copy, Debug, Default)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = fold_mul(self.0.rotate_left(8) ^ u64::from(b));
        }
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.0 = fold_mul(self.0 ^ n);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

pub type IdBuildHasher = BuildHasherDefault<IdHasher>;

/// A `HashMap` keyed by block ids, hashed by `IdHasher`.
pub type IdHashMap<V> = HashMap<u64, V, IdBuildHasher>;

#[cfg(test)]
mod tests {
    use std::hash::BuildHasher;

    use super::*;

    #[test]
    fn sequential_ids_spread_over_low_bits_and_tag() {
        let b = IdBuildHasher::default();
        let n = 1u64 << 16;
        let mut low = std::collections::HashSet::new();
        let mut tags = std::collections::HashSet::new();
        for id in (1u64 << 30)..(1u64 << 30) + n {
            let h = b.hash_one(id);
            low.insert(h & (n - 1));
            tags.insert(h >> 57);
        }
        // A good spread fills most of the buckets and every tag value.
        assert!(low.len() > (n as usize) * 6 / 10, "{}", low.len());
        assert_eq!(tags.len(), 128);
    }

    #[test]
    fn map_works_as_a_map() {
        let mut m: IdHashMap<u64> = IdHashMap::default();
        for id in 0..10_000u64 {
            m.insert(id * 7, id);
        }
        assert_eq!(m.len(), 10_000);
        assert_eq!(m.get(&(7 * 123)), Some(&123));
        assert_eq!(m.remove(&0), Some(0));
        assert!(!m.contains_key(&0));
    }
}
