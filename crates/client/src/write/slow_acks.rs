//! The writer's count of SLOW acks per pipeline node (Hadoop's DataStreamer slowNodeMap):
//! a node whose own ack flag says SLOW in `dfs.client.mark.slownode.as.badnode.threshold`
//! consecutive acks is treated as a bad node, so pipeline recovery drops it.

use std::collections::BTreeMap;

use rhdfs_transfer::PipelineAck;
use rhdfs_transfer::ack::{SlowStatus, flag_slow};

/// Consecutive SLOW acks per node (by transfer address).
#[derive(Debug, Default)]
pub(crate) struct SlowAcks {
    threshold: u32,
    counts: BTreeMap<String, u32>,
}

impl SlowAcks {
    pub(crate) fn new(threshold: u32) -> Self {
        SlowAcks {
            threshold,
            counts: BTreeMap::new(),
        }
    }

    /// Counts the SLOW flags of one ack from a pipeline of `nodes` (ack index i is node i).
    /// A node flagged in this ack goes up by one; a node not flagged is forgotten. Returns the
    /// index and address of a node that reached the threshold (its count is reset).
    /// `nodes` is asked for only when some node is flagged.
    pub(crate) fn observe(
        &mut self,
        ack: &PipelineAck,
        nodes: impl FnOnce() -> Vec<String>,
    ) -> Option<(usize, String)> {
        let flagged: Vec<usize> = (0..ack.len())
            .filter(|&i| flag_slow(ack.flag(i)) == SlowStatus::Slow)
            .collect();
        if flagged.is_empty() {
            self.counts.clear();
            return None;
        }
        let nodes = nodes();
        let slow: Vec<&String> = flagged.iter().filter_map(|&i| nodes.get(i)).collect();
        self.counts.retain(|k, _| slow.contains(&k));
        for n in &slow {
            *self.counts.entry((*n).clone()).or_default() += 1;
        }
        if self.threshold == 0 {
            return None;
        }
        let hit = self
            .counts
            .iter()
            .find(|(_, c)| **c >= self.threshold)
            .map(|(k, _)| k.clone())?;
        self.counts.remove(&hit);
        let index = nodes.iter().position(|n| *n == hit)?;
        Some((index, hit))
    }

    pub(crate) fn threshold(&self) -> u32 {
        self.threshold
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhdfs_proto::hdfs::Status;
    use rhdfs_transfer::ack::{Ecn, make_flag};

    fn ack(slow: &[bool]) -> PipelineAck {
        let mut a = PipelineAck::success(1, slow.len());
        a.flags = slow
            .iter()
            .map(|s| {
                let st = if *s {
                    SlowStatus::Slow
                } else {
                    SlowStatus::Normal
                };
                make_flag(Status::Success, Ecn::Disabled, st)
            })
            .collect();
        a
    }

    impl SlowAcks {
        fn observe_in(&mut self, ack: &PipelineAck, nodes: &[String]) -> Option<(usize, String)> {
            self.observe(ack, || nodes.to_vec())
        }
    }

    #[test]
    fn consecutive_slow_acks_reach_the_threshold() {
        let nodes: Vec<String> = ["a:1", "b:1", "c:1"].map(String::from).to_vec();
        let mut s = SlowAcks::new(3);
        assert_eq!(s.observe_in(&ack(&[false, true, false]), &nodes), None);
        assert_eq!(s.observe_in(&ack(&[false, true, false]), &nodes), None);
        // A clean ack resets every count.
        assert_eq!(s.observe_in(&ack(&[false, false, false]), &nodes), None);
        assert_eq!(s.observe_in(&ack(&[false, true, true]), &nodes), None);
        // c is not flagged this time: its count is dropped; b keeps counting.
        assert_eq!(s.observe_in(&ack(&[false, true, false]), &nodes), None);
        assert_eq!(
            s.observe_in(&ack(&[false, true, false]), &nodes),
            Some((1, "b:1".to_string()))
        );
        // Reset after being reported.
        assert_eq!(s.observe_in(&ack(&[false, true, false]), &nodes), None);
    }

    #[test]
    fn disabled_flags_never_count() {
        let nodes: Vec<String> = ["a:1", "b:1"].map(String::from).to_vec();
        let mut s = SlowAcks::new(1);
        for _ in 0..5 {
            assert_eq!(s.observe_in(&PipelineAck::success(1, 2), &nodes), None);
        }
        assert_eq!(
            s.observe_in(&ack(&[true, false]), &nodes),
            Some((0, "a:1".into()))
        );
    }
}
