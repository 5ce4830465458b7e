//! Blocks scheduled to a DataNode and not yet received, as Hadoop's DatanodeDescriptor keeps
//! them (`currApproxBlocksScheduled` / `prevApproxBlocksScheduled`): counted per storage type
//! when a node is chosen as the target of a new block or of a copy, taken back when the node
//! reports a received replica (the older count first), and rolled every ten minutes so
//! targets that never received their block stop counting after ten to twenty minutes.
//! Placement subtracts `scheduled × blockSize` from a node's free space (`isGoodTarget`).

use std::collections::BTreeMap;
use std::time::Duration;

pub use crate::limits::SCHEDULED_ROLL_INTERVAL;

/// Scheduled block counts of one DataNode, by StorageTypeProto value.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlocksScheduled {
    curr: BTreeMap<i32, u64>,
    prev: BTreeMap<i32, u64>,
    last_roll: Duration,
}

impl BlocksScheduled {
    /// A counter whose first roll is due `SCHEDULED_ROLL_INTERVAL` after `now_mono`.
    pub fn new(now_mono: Duration) -> Self {
        BlocksScheduled {
            last_roll: now_mono,
            ..Default::default()
        }
    }

    /// Blocks scheduled to storages of type `t`.
    pub fn get(&self, t: i32) -> u64 {
        self.curr.get(&t).copied().unwrap_or(0) + self.prev.get(&t).copied().unwrap_or(0)
    }

    /// Blocks scheduled to any storage.
    pub fn total(&self) -> u64 {
        self.curr.values().chain(self.prev.values()).sum()
    }

    /// One more block is on its way to a storage of type `t`.
    pub fn increment(&mut self, t: i32) {
        *self.curr.entry(t).or_default() += 1;
    }

    /// A block arrived on a storage of type `t`: the older count goes down first.
    pub fn decrement(&mut self, t: i32) {
        for m in [&mut self.prev, &mut self.curr] {
            if let Some(v) = m.get_mut(&t).filter(|v| **v > 0) {
                *v -= 1;
                return;
            }
        }
    }

    /// On each heartbeat: when the interval has passed, the current counts become the
    /// previous ones and the previous ones are forgotten.
    pub fn roll(&mut self, now_mono: Duration) {
        if now_mono.saturating_sub(self.last_roll) > SCHEDULED_ROLL_INTERVAL {
            self.prev = std::mem::take(&mut self.curr);
            self.last_roll = now_mono;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DISK: i32 = 1;
    const SSD: i32 = 2;

    #[test]
    fn counts_decrements_and_rolls() {
        let mut s = BlocksScheduled::new(Duration::ZERO);
        s.increment(DISK);
        s.increment(DISK);
        s.increment(SSD);
        assert_eq!((s.get(DISK), s.get(SSD), s.total()), (2, 1, 3));
        s.decrement(DISK);
        assert_eq!(s.get(DISK), 1);
        // Not yet due.
        s.roll(SCHEDULED_ROLL_INTERVAL);
        assert_eq!(s.get(DISK), 1);
        // Rolled once: still counted (as previous); a new one goes to current.
        s.roll(SCHEDULED_ROLL_INTERVAL + Duration::from_secs(1));
        s.increment(DISK);
        assert_eq!(s.get(DISK), 2);
        // A received block takes back the previous count first.
        s.decrement(DISK);
        assert_eq!((s.prev.get(&DISK), s.curr.get(&DISK)), (Some(&0), Some(&1)));
        // Rolled twice: what was never received is forgotten.
        s.roll(2 * SCHEDULED_ROLL_INTERVAL + Duration::from_secs(2));
        s.roll(3 * SCHEDULED_ROLL_INTERVAL + Duration::from_secs(3));
        assert_eq!(s.total(), 0);
        // Never below zero.
        s.decrement(SSD);
        assert_eq!(s.get(SSD), 0);
    }
}
