//! Which replicas go when a block has too many (Hadoop's chooseReplicasToDelete): rack
//! spread kept, then the oldest heartbeat past the tolerance, then the least free space.

use std::collections::HashMap;
use std::time::Duration;

/// One node holding a replica, as the excess-replica choice sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplicaHolder {
    pub uuid: String,
    pub rack: String,
    /// Free space of the storage holding the replica.
    pub remaining: u64,
    /// Monotonic time of the holder's last heartbeat.
    pub last_update_mono: Duration,
}

/// Hadoop's chooseReplicasToDelete: which of `candidates` (indices into `available`, the
/// block's good replicas) to delete so that `expected` replicas remain. `del_hint` (a
/// replica the caller suggests, e.g. the source of a move) goes first when removing it
/// keeps the number of racks; otherwise each pick prefers a rack holding more than one
/// replica, and within the set picks the holder with the oldest heartbeat when that is
/// older than `now - heartbeat_tolerance`, else the one with the least free space.
pub fn choose_replicas_to_delete(
    available: &[ReplicaHolder],
    candidates: &[usize],
    expected: usize,
    added: Option<usize>,
    del_hint: Option<usize>,
    now_mono: Duration,
    heartbeat_tolerance: Duration,
) -> Vec<usize> {
    // Racks counted over all available replicas (a rack whose only other replica is not a
    // candidate still has more than one).
    let mut rack_total: HashMap<&str, usize> = HashMap::new();
    for a in available {
        *rack_total.entry(a.rack.as_str()).or_default() += 1;
    }
    let (mut more_than_one, mut exactly_one): (Vec<usize>, Vec<usize>) = candidates
        .iter()
        .partition(|&&c| rack_total[available[c].rack.as_str()] > 1);
    let oldest_allowed = now_mono.checked_sub(heartbeat_tolerance);
    let mut out = Vec::new();
    let mut first = true;
    while candidates.len().saturating_sub(expected) > out.len() {
        let use_hint = first
            && del_hint.is_some_and(|h| {
                candidates.contains(&h)
                    && (more_than_one.contains(&h)
                        || added.is_some_and(|a| {
                            candidates.contains(&a) && !more_than_one.contains(&a)
                        }))
            });
        first = false;
        let cur = if use_hint {
            del_hint
        } else {
            let set = if more_than_one.is_empty() {
                &exactly_one
            } else {
                &more_than_one
            };
            let mut oldest: Option<(Duration, usize)> = oldest_allowed.map(|t| (t, usize::MAX));
            let mut oldest_pick = None;
            let mut min_space: Option<(u64, usize)> = None;
            for &c in set {
                let h = &available[c];
                if let Some((t, _)) = oldest
                    && h.last_update_mono < t
                {
                    oldest = Some((h.last_update_mono, c));
                    oldest_pick = Some(c);
                }
                if min_space.is_none_or(|(s, _)| h.remaining < s) {
                    min_space = Some((h.remaining, c));
                }
            }
            oldest_pick.or(min_space.map(|(_, c)| c))
        };
        let Some(cur) = cur else { break };
        // Adjust the rack sets: the chosen replica leaves; a rack left with one replica
        // moves its survivor from "more than one" to "exactly one".
        let rack = available[cur].rack.as_str();
        if let Some(t) = rack_total.get_mut(rack) {
            *t -= 1;
            if *t == 1 {
                let survivors: Vec<usize> = more_than_one
                    .iter()
                    .copied()
                    .filter(|&c| c != cur && available[c].rack == rack)
                    .collect();
                more_than_one.retain(|c| !survivors.contains(c));
                exactly_one.extend(survivors);
            }
        }
        more_than_one.retain(|&c| c != cur);
        exactly_one.retain(|&c| c != cur);
        out.push(cur);
    }
    out
}
