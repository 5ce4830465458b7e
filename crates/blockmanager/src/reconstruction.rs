//! Reconstruction bookkeeping: blocks needing more replicas (neededReconstruction),
//! replicas being made (pendingReconstruction, with a timeout), and the per-source queue
//! of DNA_TRANSFER work waiting for the source's next heartbeat.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use crate::block::Block;

/// A replica copy: `block` from the source node to `targets` (uuid, storage id).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transfer {
    pub block: Block,
    pub targets: Vec<(Arc<str>, Arc<str>)>,
}

#[derive(Debug, Default)]
struct Pending {
    targets: Vec<Arc<str>>,
    /// When the monitor first saw the entry (the timeout runs from there).
    since: Option<Duration>,
}

#[derive(Debug, Default)]
pub struct Reconstruction {
    needed: BTreeSet<u64>,
    cursor: u64,
    pending: HashMap<u64, Pending>,
    transfers: HashMap<Arc<str>, VecDeque<Transfer>>,
}

impl Reconstruction {
    pub fn mark_needed(&mut self, id: u64) {
        self.needed.insert(id);
    }

    pub fn needed_len(&self) -> usize {
        self.needed.len()
    }

    pub fn is_needed(&self, id: u64) -> bool {
        self.needed.contains(&id)
    }

    pub fn unmark(&mut self, id: u64) {
        self.needed.remove(&id);
    }

    /// Up to `n` needed blocks, continuing after the last one handed out (round robin).
    pub fn next_needed(&mut self, n: usize) -> Vec<u64> {
        let mut out: Vec<u64> = self.needed.range(self.cursor..).take(n).copied().collect();
        if out.len() < n {
            let more: Vec<u64> = self
                .needed
                .range(..self.cursor)
                .take(n - out.len())
                .copied()
                .collect();
            out.extend(more);
        }
        self.cursor = out.last().map_or(0, |id| id.wrapping_add(1));
        out
    }

    pub fn pending_count(&self, id: u64) -> usize {
        self.pending.get(&id).map_or(0, |p| p.targets.len())
    }

    pub fn pending_targets(&self, id: u64) -> Vec<Arc<str>> {
        self.pending
            .get(&id)
            .map(|p| p.targets.clone())
            .unwrap_or_default()
    }

    pub fn pending_blocks(&self) -> usize {
        self.pending.len()
    }

    pub fn add_pending(&mut self, id: u64, targets: impl IntoIterator<Item = Arc<str>>) {
        let p = self.pending.entry(id).or_default();
        for t in targets {
            if !p.targets.contains(&t) {
                p.targets.push(t);
            }
        }
        if p.targets.is_empty() {
            self.pending.remove(&id);
        }
    }

    /// A target reported its replica.
    pub fn replica_arrived(&mut self, id: u64, dn: &str) {
        if let Some(p) = self.pending.get_mut(&id) {
            p.targets.retain(|t| &**t != dn);
            if p.targets.is_empty() {
                self.pending.remove(&id);
            }
        }
    }

    /// Starts the clock of new pending entries and drops those older than `timeout`;
    /// returns the ids that timed out (to be checked again).
    pub fn expire(&mut self, now: Duration, timeout: Duration) -> Vec<u64> {
        let mut out = Vec::new();
        self.pending.retain(|id, p| match p.since {
            None => {
                p.since = Some(now);
                true
            }
            Some(s) if now.saturating_sub(s) > timeout => {
                out.push(*id);
                false
            }
            Some(_) => true,
        });
        out.sort_unstable();
        out
    }

    pub fn queue_transfer(&mut self, source: &Arc<str>, t: Transfer) {
        self.transfers
            .entry(source.clone())
            .or_default()
            .push_back(t);
    }

    pub fn take_transfers(&mut self, source: &str, limit: usize) -> Vec<Transfer> {
        let Some(q) = self.transfers.get_mut(source) else {
            return Vec::new();
        };
        let n = limit.min(q.len());
        let out: Vec<Transfer> = q.drain(..n).collect();
        if q.is_empty() {
            self.transfers.remove(source);
        }
        out
    }

    pub fn queued_transfers(&self) -> usize {
        self.transfers.values().map(|q| q.len()).sum()
    }

    /// Forgets a block entirely (it left the namespace).
    pub fn remove_block(&mut self, id: u64) {
        self.needed.remove(&id);
        self.pending.remove(&id);
    }

    /// Forgets a node: its queued transfers and its pending targets. Returns the blocks
    /// that lost a pending target.
    pub fn remove_node(&mut self, dn: &str) -> Vec<u64> {
        self.transfers.remove(dn);
        let mut out = Vec::new();
        for (id, p) in self.pending.iter_mut() {
            let before = p.targets.len();
            p.targets.retain(|t| &**t != dn);
            if p.targets.len() != before {
                out.push(*id);
            }
        }
        self.pending.retain(|_, p| !p.targets.is_empty());
        out.sort_unstable();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_over_needed() {
        let mut r = Reconstruction::default();
        for id in [5, 1, 9, 3] {
            r.mark_needed(id);
        }
        assert_eq!(r.next_needed(2), vec![1, 3]);
        assert_eq!(r.next_needed(3), vec![5, 9, 1]);
        r.unmark(3);
        assert_eq!(r.next_needed(10), vec![5, 9, 1]);
    }

    #[test]
    fn pending_expires_after_timeout() {
        let mut r = Reconstruction::default();
        r.add_pending(1, [Arc::from("a"), Arc::from("b")]);
        assert_eq!(r.pending_count(1), 2);
        assert!(
            r.expire(Duration::from_secs(10), Duration::from_secs(300))
                .is_empty()
        );
        r.replica_arrived(1, "a");
        assert_eq!(r.pending_count(1), 1);
        assert!(
            r.expire(Duration::from_secs(300), Duration::from_secs(300))
                .is_empty()
        );
        assert_eq!(
            r.expire(Duration::from_secs(311), Duration::from_secs(300)),
            vec![1]
        );
        assert_eq!(r.pending_count(1), 0);
    }
}
