//! Held orphans: replicas that DataNodes report for blocks the namespace does not know,
//! kept on the DataNodes instead of being deleted at once (beyond HDFS, which deletes
//! them or, for "blocks in future", refuses to leave safe mode until the operator accepts
//! the loss).
//!
//! The rules (`BlockState::process_replica` applies them to a replica of an unknown block):
//! - A replica already queued for deletion stays queued.
//! - **Future**: its generation stamp is newer than the namespace's last generation stamp,
//!   or than the hold floor the namespace logged when it first saw such replicas. Only a
//!   namespace older than the DataNodes' data produces these (a restored or rolled-back
//!   name directory): they are held until an operator releases them
//!   (`rhdfs dfsadmin -releaseOrphans`), and while start-up safe mode is on they keep it on
//!   until `-safemode forceExit`.
//! - **Startup**: any other unknown replica in a storage's first full report since the
//!   NameNode started (or since its DataNode came back from the dead) is left alone, as
//!   Hadoop's first-report rule does, and held until the NameNode is out of safe mode and
//!   `dfs.namenode.startup.delay.block.deletion.sec` has passed since it started; then it
//!   is deleted (its block was removed by a logged edit this namespace has replayed).
//! - Otherwise the block was removed by an edit the namespace holds (its generation stamp
//!   is not newer): the replica is deleted as before. Replicas of blocks deleted through
//!   the namespace while the NameNode runs are never held.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::block::{Block, ReplicaState};

/// Why a replica is held.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OrphanClass {
    /// Generation stamp newer than the namespace's: held until an operator releases it.
    Future,
    /// Reported in a storage's first full report: held until the start-up delay passed.
    Startup,
}

impl OrphanClass {
    pub fn name(self) -> &'static str {
        match self {
            OrphanClass::Future => "FUTURE",
            OrphanClass::Startup => "STARTUP",
        }
    }
}

/// One held replica.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeldReplica {
    pub block: Block,
    pub dn_uuid: Arc<str>,
    pub storage_id: Arc<str>,
    /// As last reported (a RECEIVED after a RECEIVING makes it finalized).
    pub state: ReplicaState,
    pub class: OrphanClass,
    /// Monotonic time it was first held.
    pub since: Duration,
}

/// Totals of the held replicas.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OrphanCounts {
    pub replicas: u64,
    pub bytes: u64,
    /// Of which from the future (they keep start-up safe mode on).
    pub future_replicas: u64,
    pub future_bytes: u64,
    /// Highest block id and generation stamp among future replicas (0 when none): the
    /// namespace's counters must move past them so no new block reuses their ids.
    pub future_max_id: u64,
    pub future_max_gs: u64,
}

/// The held replicas, by (block id, DataNode).
#[derive(Debug, Default)]
pub struct Orphans {
    held: BTreeMap<(u64, Arc<str>), HeldReplica>,
    counts: OrphanCounts,
}

impl Orphans {
    /// Holds a replica; an already held replica keeps its class and time (a later
    /// report may call it a startup orphan after the first called it future), and takes
    /// the later report's length, stamp and state.
    pub fn hold(
        &mut self,
        dn: &Arc<str>,
        storage: &Arc<str>,
        block: Block,
        state: ReplicaState,
        class: OrphanClass,
        now: Duration,
    ) -> bool {
        let key = (block.id, dn.clone());
        if let Some(mut held) = self.held.remove(&key) {
            self.count(&held, false);
            held.block = block;
            held.state = state;
            self.count(&held, true);
            self.held.insert(key, held);
            return false;
        }
        let r = HeldReplica {
            block,
            dn_uuid: dn.clone(),
            storage_id: storage.clone(),
            state,
            class,
            since: now,
        };
        self.count(&r, true);
        self.held.insert(key, r);
        true
    }

    pub fn is_held(&self, id: u64, dn: &str) -> bool {
        self.held.contains_key(&(id, Arc::from(dn)))
    }

    /// Takes every held replica of block `id` out of the table (its block became known:
    /// a standby applied the edit that added it).
    pub fn take_block(&mut self, id: u64) -> Vec<HeldReplica> {
        let keys: Vec<(u64, Arc<str>)> = self
            .held
            .range((id, Arc::from(""))..)
            .take_while(|((b, _), _)| *b == id)
            .map(|(k, _)| k.clone())
            .collect();
        self.remove_keys(keys)
    }

    /// Forgets a replica the DataNode no longer has.
    pub fn remove(&mut self, id: u64, dn: &str) -> bool {
        match self.held.remove(&(id, Arc::from(dn))) {
            Some(r) => {
                self.count(&r, false);
                true
            }
            None => false,
        }
    }

    /// Forgets every replica of a node (it died: what it holds is reported again when it
    /// comes back).
    pub fn remove_node(&mut self, dn: &str) -> usize {
        self.remove_where(|r| &*r.dn_uuid == dn).len()
    }

    /// Forgets the replicas of `storage` that a full report did not list.
    pub fn remove_unreported(&mut self, storage: &str, reported: impl Fn(u64) -> bool) -> usize {
        self.remove_where(|r| &*r.storage_id == storage && !reported(r.block.id))
            .len()
    }

    /// Takes the replicas of `class` (every class when None) out of the table.
    pub fn take(&mut self, class: Option<OrphanClass>) -> Vec<HeldReplica> {
        self.remove_where(|r| class.is_none_or(|c| r.class == c))
    }

    fn remove_where(&mut self, pred: impl Fn(&HeldReplica) -> bool) -> Vec<HeldReplica> {
        let keys: Vec<(u64, Arc<str>)> = self
            .held
            .iter()
            .filter(|(_, r)| pred(r))
            .map(|(k, _)| k.clone())
            .collect();
        self.remove_keys(keys)
    }

    /// Removes these held replicas, uncounted; the future high-water marks reset once no
    /// future replica is left.
    fn remove_keys(&mut self, keys: Vec<(u64, Arc<str>)>) -> Vec<HeldReplica> {
        let mut out = Vec::with_capacity(keys.len());
        for k in keys {
            if let Some(r) = self.held.remove(&k) {
                self.count(&r, false);
                out.push(r);
            }
        }
        if self.counts.future_replicas == 0 {
            self.counts.future_max_id = 0;
            self.counts.future_max_gs = 0;
        }
        out
    }

    fn count(&mut self, r: &HeldReplica, add: bool) {
        let c = &mut self.counts;
        let future = r.class == OrphanClass::Future;
        if add {
            c.replicas += 1;
            c.bytes = c.bytes.saturating_add(r.block.num_bytes);
            if future {
                c.future_replicas += 1;
                c.future_bytes = c.future_bytes.saturating_add(r.block.num_bytes);
                c.future_max_id = c.future_max_id.max(r.block.id);
                c.future_max_gs = c.future_max_gs.max(r.block.gs);
            }
        } else {
            c.replicas -= 1;
            c.bytes = c.bytes.saturating_sub(r.block.num_bytes);
            if future {
                c.future_replicas -= 1;
                c.future_bytes = c.future_bytes.saturating_sub(r.block.num_bytes);
            }
        }
    }

    pub fn counts(&self) -> OrphanCounts {
        self.counts
    }

    /// Replicas and bytes held with a generation stamp above `gs` (a walk of the held
    /// replicas: only while some are from the future).
    pub fn above(&self, gs: u64) -> (u64, u64) {
        if self.counts.future_replicas == 0 {
            return (0, 0);
        }
        self.held
            .values()
            .filter(|r| r.block.gs > gs)
            .fold((0, 0), |(n, b), r| (n + 1, b + r.block.num_bytes))
    }

    /// Every held replica, in block id order.
    pub fn list(&self) -> Vec<HeldReplica> {
        self.held.values().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dn(s: &str) -> Arc<str> {
        Arc::from(s)
    }

    #[test]
    fn counts_follow_holds_and_removals() {
        let mut o = Orphans::default();
        let (a, b, s) = (dn("a"), dn("b"), dn("s1"));
        assert!(o.hold(
            &a,
            &s,
            Block::new(7, 2000, 100),
            ReplicaState::Finalized,
            OrphanClass::Future,
            Duration::ZERO
        ));
        assert!(!o.hold(
            &a,
            &s,
            Block::new(7, 2000, 100),
            ReplicaState::Finalized,
            OrphanClass::Startup,
            Duration::ZERO
        ));
        assert!(o.hold(
            &b,
            &s,
            Block::new(9, 2002, 50),
            ReplicaState::Finalized,
            OrphanClass::Future,
            Duration::ZERO
        ));
        assert!(o.hold(
            &b,
            &s,
            Block::new(3, 1005, 10),
            ReplicaState::Finalized,
            OrphanClass::Startup,
            Duration::ZERO
        ));
        let c = o.counts();
        assert_eq!((c.replicas, c.bytes), (3, 160));
        assert_eq!((c.future_replicas, c.future_bytes), (2, 150));
        assert_eq!((c.future_max_id, c.future_max_gs), (9, 2002));
        assert!(o.is_held(7, "a"));
        assert!(o.remove(7, "a"));
        assert!(!o.remove(7, "a"));
        assert_eq!(o.counts().future_bytes, 50);
        let startup = o.take(Some(OrphanClass::Startup));
        assert_eq!(startup.len(), 1);
        assert_eq!(startup[0].block.id, 3);
        assert_eq!(o.remove_node("b"), 1);
        assert_eq!(o.counts(), OrphanCounts::default());
    }

    #[test]
    fn a_known_block_takes_its_held_replicas_as_last_reported() {
        let mut o = Orphans::default();
        let (a, b, s) = (dn("a"), dn("b"), dn("s1"));
        let now = Duration::ZERO;
        o.hold(
            &a,
            &s,
            Block::new(7, 2000, 0),
            ReplicaState::Rbw,
            OrphanClass::Future,
            now,
        );
        // The RECEIVED after the RECEIVING: finalized, full length, counted once.
        o.hold(
            &a,
            &s,
            Block::new(7, 2000, 64),
            ReplicaState::Finalized,
            OrphanClass::Future,
            now,
        );
        o.hold(
            &b,
            &s,
            Block::new(7, 2000, 64),
            ReplicaState::Finalized,
            OrphanClass::Future,
            now,
        );
        o.hold(
            &b,
            &s,
            Block::new(8, 2001, 5),
            ReplicaState::Rbw,
            OrphanClass::Future,
            now,
        );
        assert_eq!((o.counts().replicas, o.counts().bytes), (3, 133));
        let taken = o.take_block(7);
        assert_eq!(taken.len(), 2);
        assert!(
            taken
                .iter()
                .all(|r| r.state == ReplicaState::Finalized && r.block.num_bytes == 64)
        );
        assert_eq!((o.counts().replicas, o.counts().bytes), (1, 5));
        assert!(o.take_block(7).is_empty());
        assert_eq!(o.take_block(8).len(), 1);
        assert_eq!(o.counts(), OrphanCounts::default());
    }

    #[test]
    fn unreported_replicas_of_a_storage_are_forgotten() {
        let mut o = Orphans::default();
        let (a, s1, s2) = (dn("a"), dn("s1"), dn("s2"));
        for id in 1..=4 {
            let s = if id % 2 == 0 { &s2 } else { &s1 };
            o.hold(
                &a,
                s,
                Block::new(id, 5000, 1),
                ReplicaState::Finalized,
                OrphanClass::Future,
                Duration::ZERO,
            );
        }
        assert_eq!(o.remove_unreported("s1", |id| id == 3), 1);
        let left: Vec<u64> = o.list().iter().map(|r| r.block.id).collect();
        assert_eq!(left, vec![2, 3, 4]);
    }
}
