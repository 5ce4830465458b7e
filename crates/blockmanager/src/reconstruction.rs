//! Reconstruction bookkeeping: blocks needing more replicas (neededReconstruction, the
//! priority queues of `redundancy::low_redundancy`), replicas being made
//! (pendingReconstruction, with a timeout), and the per-source queue of DNA_TRANSFER work
//! waiting for the source's next heartbeat. It also holds the postponed over-replicated
//! blocks with the storages whose contents are current, and the rack of each live node.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use crate::block::Block;
use crate::redundancy::low_redundancy::{LowRedundancyBlocks, QUEUE_HIGHEST_PRIORITY};
use crate::redundancy::postponed::{PostponedBlocks, StorageFreshness};
use crate::redundancy::racks::RackMap;

/// A replica copy: `block` from the source node to `targets` (uuid, storage id).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transfer {
    pub block: Block,
    pub targets: Vec<(Arc<str>, Arc<str>)>,
    /// The low-redundancy queue the block was taken from (0 = highest).
    pub priority: usize,
}

#[derive(Debug, Default)]
struct Pending {
    targets: Vec<Arc<str>>,
    /// The nodes told to send the copies: when one dies the copies cannot come.
    sources: Vec<Arc<str>>,
    /// When the monitor first saw the entry (the timeout runs from there).
    since: Option<Duration>,
}

#[derive(Debug, Default)]
pub struct Reconstruction {
    needed: LowRedundancyBlocks,
    pending: HashMap<u64, Pending>,
    transfers: HashMap<Arc<str>, VecDeque<Transfer>>,
    /// Blocks that may have surplus live replicas (`redundancy::excess` decides which go).
    excess: BTreeSet<u64>,
    /// Over-replicated blocks whose surplus waits for stale storages to report
    /// (`redundancy::postponed`).
    pub postponed: PostponedBlocks,
    /// Storages whose contents are current (a full report since the NameNode started).
    pub freshness: StorageFreshness,
    /// Each live node's rack, for the rack-spread check (`redundancy::racks`).
    pub racks: RackMap,
}

impl Reconstruction {
    /// Puts the block in low-redundancy queue `priority` (moving it if already queued).
    pub fn mark_needed(&mut self, id: u64, priority: usize) {
        self.needed.update(id, priority);
    }

    /// Blocks in every low-redundancy queue (the corrupt / missing one included).
    pub fn needed_len(&self) -> usize {
        self.needed.len()
    }

    pub fn is_needed(&self, id: u64) -> bool {
        self.needed.contains(id)
    }

    pub fn priority_of(&self, id: u64) -> Option<usize> {
        self.needed.priority_of(id)
    }

    /// Blocks in one priority queue.
    pub fn queue_size(&self, priority: usize) -> usize {
        self.needed.size_of(priority)
    }

    pub fn unmark(&mut self, id: u64) {
        self.needed.remove(id);
    }

    /// Up to `n` needed blocks with their priorities, highest priority first, each queue
    /// continuing after the last block it handed out (round robin).
    pub fn next_needed(&mut self, n: usize) -> Vec<(u64, usize)> {
        self.needed.choose(n)
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

    /// Records that `source` was told to send the pending copies of `id`.
    pub fn set_pending_source(&mut self, id: u64, source: Arc<str>) {
        if let Some(p) = self.pending.get_mut(&id)
            && !p.sources.contains(&source)
        {
            p.sources.push(source);
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

    /// Hands out queued transfers of `source` in order: at most `limit` in all, and once
    /// `limit` is reached only highest-priority ones up to `hard_limit`.
    pub fn take_transfers(
        &mut self,
        source: &str,
        limit: usize,
        hard_limit: usize,
    ) -> Vec<Transfer> {
        let Some(q) = self.transfers.get_mut(source) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut kept = VecDeque::new();
        while let Some(t) = q.pop_front() {
            let room = if t.priority == QUEUE_HIGHEST_PRIORITY {
                out.len() < hard_limit.max(limit)
            } else {
                out.len() < limit
            };
            if room {
                out.push(t);
            } else {
                kept.push_back(t);
            }
        }
        *q = kept;
        if q.is_empty() {
            self.transfers.remove(source);
        }
        out
    }

    /// Transfers queued for `source` and not yet handed to it.
    pub fn queued_for(&self, source: &str) -> usize {
        self.transfers.get(source).map_or(0, VecDeque::len)
    }

    pub fn queued_transfers(&self) -> usize {
        self.transfers.values().map(|q| q.len()).sum()
    }

    /// Marks a block whose surplus replicas must be chosen and deleted.
    pub fn mark_excess(&mut self, id: u64) {
        self.excess.insert(id);
    }

    /// The blocks marked for the excess check, in id order (tests and views).
    pub fn excess_ids(&self) -> Vec<u64> {
        self.excess.iter().copied().collect()
    }

    /// Up to `n` blocks marked for the excess check (removed from the mark set).
    pub fn take_excess(&mut self, n: usize) -> Vec<u64> {
        let ids: Vec<u64> = self.excess.iter().take(n).copied().collect();
        for id in &ids {
            self.excess.remove(id);
        }
        ids
    }

    /// Forgets a block entirely (it left the namespace).
    pub fn remove_block(&mut self, id: u64) {
        self.excess.remove(&id);
        self.postponed.remove(id);
        self.needed.remove(id);
        self.pending.remove(&id);
    }

    /// Forgets a node: its queued transfers, its pending targets, and the pending copies it
    /// was to send (they are rescheduled now rather than after the pending timeout). Returns
    /// the blocks that lost a pending target or their source.
    pub fn remove_node(&mut self, dn: &str) -> Vec<u64> {
        self.transfers.remove(dn);
        let mut out = Vec::new();
        for (id, p) in self.pending.iter_mut() {
            let before = p.targets.len();
            if p.sources.iter().any(|s| &**s == dn) {
                p.targets.clear();
            }
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
    fn a_dead_source_releases_its_pending_copies() {
        let mut r = Reconstruction::default();
        r.add_pending(1, [Arc::from("t1")]);
        r.set_pending_source(1, Arc::from("src"));
        r.add_pending(2, [Arc::from("t2")]);
        r.set_pending_source(2, Arc::from("other"));
        assert_eq!(r.remove_node("src"), vec![1]);
        assert_eq!(r.pending_count(1), 0);
        assert_eq!(r.pending_count(2), 1);
    }

    #[test]
    fn round_robin_over_needed() {
        let mut r = Reconstruction::default();
        for id in [5, 1, 9, 3] {
            r.mark_needed(id, 2);
        }
        let ids = |v: Vec<(u64, usize)>| v.into_iter().map(|(id, _)| id).collect::<Vec<_>>();
        assert_eq!(ids(r.next_needed(2)), vec![1, 3]);
        assert_eq!(ids(r.next_needed(3)), vec![5, 9, 1]);
        r.unmark(3);
        assert_eq!(ids(r.next_needed(10)), vec![5, 9, 1]);
    }

    #[test]
    fn stream_limits_let_highest_priority_reach_the_hard_limit() {
        let mut r = Reconstruction::default();
        let src: Arc<str> = Arc::from("src");
        let t = |id: u64, priority: usize| Transfer {
            block: Block::new(id, 1, 1),
            targets: vec![(Arc::from("t"), Arc::from("s"))],
            priority,
        };
        for id in 1..=3 {
            r.queue_transfer(&src, t(id, 2));
        }
        for id in 10..=13 {
            r.queue_transfer(&src, t(id, QUEUE_HIGHEST_PRIORITY));
        }
        let got: Vec<u64> = r
            .take_transfers("src", 2, 4)
            .iter()
            .map(|t| t.block.id)
            .collect();
        // Two normal ones fill the normal limit; highest ones go on up to the hard limit.
        assert_eq!(got, vec![1, 2, 10, 11]);
        assert_eq!(r.queued_for("src"), 3);
        let got: Vec<u64> = r
            .take_transfers("src", 0, 1)
            .iter()
            .map(|t| t.block.id)
            .collect();
        assert_eq!(got, vec![12]);
        let got: Vec<u64> = r
            .take_transfers("src", 2, 4)
            .iter()
            .map(|t| t.block.id)
            .collect();
        assert_eq!(got, vec![3, 13]);
        assert_eq!(r.queued_for("src"), 0);
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
