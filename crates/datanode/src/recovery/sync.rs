//! The length the replicas of a block under recovery agree on.
//!
//! Only replicas with data and a generation stamp at least the NameNode's take part. The
//! best state decides: if any replica is FINALIZED its length is the answer (every
//! finalized replica must have it) and RBW replicas at least that long join; otherwise
//! the shortest of the RBW replicas (or, with none, of the RWR ones) is the length all of
//! them hold, and they all join. With no replica holding data the block is deleted.

use crate::replica::ReplicaState;

/// One replica's answer to initReplicaRecovery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplicaReport {
    pub state: ReplicaState,
    pub gs: u64,
    pub len: u64,
}

/// What the primary does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyncDecision {
    /// Bring the replicas at these indexes to `len` (new GS = the recovery id).
    Sync { len: u64, participants: Vec<usize> },
    /// No replica holds data: the block is removed from the file.
    DeleteBlock,
}

/// Why no decision is possible.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SyncError {
    #[error("Inconsistent size of finalized replicas: {0} and {1}")]
    FinalizedMismatch(u64, u64),
    #[error("no replica of the block answered")]
    NoReplica,
}

fn rank(s: ReplicaState) -> u8 {
    match s {
        ReplicaState::Finalized => 0,
        ReplicaState::Rbw => 1,
        ReplicaState::Rwr => 2,
        ReplicaState::Rur => 3,
        ReplicaState::Temporary => 4,
    }
}

/// Decides from the replicas' reports (`None` = not found or unreachable). `block_gs` is
/// the generation stamp the NameNode knows.
pub fn decide(block_gs: u64, reports: &[Option<ReplicaReport>]) -> Result<SyncDecision, SyncError> {
    if reports.iter().all(Option::is_none) {
        return Err(SyncError::NoReplica);
    }
    let candidates: Vec<(usize, ReplicaReport)> = reports
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.map(|r| (i, r)))
        .filter(|(_, r)| r.gs >= block_gs && r.len > 0 && r.state != ReplicaState::Temporary)
        .collect();
    let Some(best) = candidates.iter().map(|(_, r)| rank(r.state)).min() else {
        return Ok(SyncDecision::DeleteBlock);
    };
    if best == rank(ReplicaState::Finalized) {
        let mut finalized = candidates
            .iter()
            .filter(|(_, r)| r.state == ReplicaState::Finalized);
        let len = finalized.next().map(|(_, r)| r.len).unwrap_or(0);
        if let Some((_, other)) = finalized.find(|(_, r)| r.len != len) {
            return Err(SyncError::FinalizedMismatch(len, other.len));
        }
        let participants = candidates
            .iter()
            .filter(|(_, r)| {
                r.state == ReplicaState::Finalized || (r.state == ReplicaState::Rbw && r.len >= len)
            })
            .map(|(i, _)| *i)
            .collect();
        return Ok(SyncDecision::Sync { len, participants });
    }
    let same: Vec<&(usize, ReplicaReport)> = candidates
        .iter()
        .filter(|(_, r)| rank(r.state) == best)
        .collect();
    let len = same.iter().map(|(_, r)| r.len).min().unwrap_or(0);
    Ok(SyncDecision::Sync {
        len,
        participants: same.iter().map(|(i, _)| *i).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ReplicaState::*;

    fn r(state: ReplicaState, gs: u64, len: u64) -> Option<ReplicaReport> {
        Some(ReplicaReport { state, gs, len })
    }

    #[test]
    fn rbw_replicas_agree_on_the_shortest() {
        let d = decide(10, &[r(Rbw, 10, 300), r(Rbw, 10, 200), r(Rwr, 10, 100)]).unwrap();
        assert_eq!(
            d,
            SyncDecision::Sync {
                len: 200,
                participants: vec![0, 1]
            }
        );
    }

    #[test]
    fn finalized_wins_and_longer_rbw_joins() {
        let d = decide(
            10,
            &[r(Rbw, 10, 100), r(Finalized, 11, 250), r(Rbw, 10, 300)],
        )
        .unwrap();
        assert_eq!(
            d,
            SyncDecision::Sync {
                len: 250,
                participants: vec![1, 2]
            }
        );
        assert_eq!(
            decide(10, &[r(Finalized, 10, 1), r(Finalized, 10, 2)]),
            Err(SyncError::FinalizedMismatch(1, 2))
        );
    }

    #[test]
    fn rwr_only_after_a_restart_and_stale_or_empty_replicas_skipped() {
        let d = decide(
            10,
            &[r(Rwr, 10, 700), None, r(Rwr, 9, 900), r(Rwr, 10, 650)],
        )
        .unwrap();
        assert_eq!(
            d,
            SyncDecision::Sync {
                len: 650,
                participants: vec![0, 3]
            }
        );
        assert_eq!(
            decide(10, &[r(Rbw, 10, 0), None]).unwrap(),
            SyncDecision::DeleteBlock
        );
        assert_eq!(decide(10, &[None, None]), Err(SyncError::NoReplica));
    }
}
