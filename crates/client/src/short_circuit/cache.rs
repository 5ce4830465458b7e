//! Open short-circuit replicas kept for reuse, as Hadoop's ShortCircuitCache (a replica whose
//! shared-memory slot the DataNode invalidated is dropped by the caller, `super::replica`): at most `dfs.client.read.shortcircuit.streams.cache.size` replicas, each closed
//! once unused for `dfs.client.read.shortcircuit.streams.cache.expiry.ms`, least recently used
//! first out. Keyed by DataNode transfer port, block pool, block id and generation stamp (a new
//! generation stamp is a new key).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// (DataNode xfer port, pool, block id, generation stamp).
pub(crate) type Key = (u16, String, u64, u64);

#[derive(Debug)]
pub(crate) struct ReplicaCache<T> {
    capacity: usize,
    expiry: Duration,
    map: Mutex<HashMap<Key, (Arc<T>, Duration)>>,
}

impl<T> ReplicaCache<T> {
    pub(crate) fn new(capacity: usize, expiry: Duration) -> Self {
        ReplicaCache {
            capacity,
            expiry,
            map: Mutex::new(HashMap::new()),
        }
    }

    /// The replica under `key`, unless it expired; marks it used at `now`.
    pub(crate) fn get(&self, key: &Key, now: Duration) -> Option<Arc<T>> {
        let mut m = self.map.lock().unwrap_or_else(|p| p.into_inner());
        let expiry = self.expiry;
        m.retain(|_, (_, used)| now.saturating_sub(*used) < expiry);
        let (r, used) = m.get_mut(key)?;
        *used = now;
        Some(r.clone())
    }

    /// Keeps `r` under `key` (nothing is kept with capacity 0), evicting the least recently
    /// used when full.
    pub(crate) fn put(&self, key: Key, r: Arc<T>, now: Duration) {
        if self.capacity == 0 {
            return;
        }
        let mut m = self.map.lock().unwrap_or_else(|p| p.into_inner());
        while m.len() >= self.capacity && !m.contains_key(&key) {
            let oldest = m
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(k) => m.remove(&k),
                None => break,
            };
        }
        m.insert(key, (r, now));
    }

    /// Forgets `key` (its files close when the last reader lets go).
    pub(crate) fn remove(&self, key: &Key) {
        self.map
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(key);
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.map.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(id: u64) -> Key {
        (1, "BP".into(), id, 1)
    }

    #[test]
    fn capacity_expiry_and_lru() {
        let c = ReplicaCache::new(2, Duration::from_secs(10));
        let s = Duration::from_secs;
        c.put(k(1), Arc::new(1), s(0));
        c.put(k(2), Arc::new(2), s(1));
        assert_eq!(c.get(&k(1), s(2)).as_deref(), Some(&1));
        c.put(k(3), Arc::new(3), s(3));
        assert!(c.get(&k(2), s(3)).is_none(), "least recently used went");
        assert_eq!(c.len(), 2);
        assert!(c.get(&k(1), s(13)).is_none(), "expired");
        c.remove(&k(3));
        assert_eq!(c.len(), 0);
        let none = ReplicaCache::new(0, Duration::from_secs(1));
        none.put(k(1), Arc::new(1), s(0));
        assert!(none.get(&k(1), s(0)).is_none());
    }
}
