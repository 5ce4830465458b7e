//! Read order: the replicas a reader is given, nearest first (the reader's own node, its
//! rack, then the rest; stale and slow nodes last).

use rand::Rng;
use rand::rngs::StdRng;

use super::deletion::ReplicaHolder;
use super::{NodeView, PlacementPolicy};
use crate::topology::{DEFAULT_RACK, ReadNode, ReadSortFlags, Reader, sort_by_distance};

/// The racks the views carry (empty: /default-rack).
pub fn view_racks(nodes: &[NodeView]) -> Vec<String> {
    nodes
        .iter()
        .map(|n| {
            if n.rack.is_empty() {
                DEFAULT_RACK.to_string()
            } else {
                n.rack.clone()
            }
        })
        .collect()
}

/// `nodes` as replica holders on `racks`.
pub fn replica_holders(nodes: &[NodeView], racks: Vec<String>) -> Vec<ReplicaHolder> {
    nodes
        .iter()
        .zip(racks)
        .map(|(v, rack)| ReplicaHolder {
            uuid: v.uuid.clone(),
            rack,
            remaining: v.remaining,
            last_update_mono: v.last_update_mono,
        })
        .collect()
}

/// Read order for `nodes` under policy `p`'s racks: see `PlacementPolicy::sort_for_read`.
/// A reader on the host of one of `nodes` reads from that node (one picked with `rng` when
/// the host has several), else its rack comes from `p.rack_of_host`.
pub fn sort_for_read<P: PlacementPolicy + ?Sized>(
    p: &P,
    reader_host: Option<&str>,
    nodes: &[NodeView],
    flags: ReadSortFlags,
    rng: &mut StdRng,
) -> Vec<usize> {
    let racks = p.racks_of(nodes);
    let (reader_node, reader_rack): (Option<usize>, Option<String>) = match reader_host {
        None => (None, None),
        Some(h) => {
            let on_host: Vec<usize> = (0..nodes.len())
                .filter(|&i| nodes[i].matches_host(h))
                .collect();
            match on_host.len() {
                0 => (None, p.rack_of_host(h)),
                k => {
                    let i = on_host[rng.random_range(0..k)];
                    (Some(i), Some(racks[i].clone()))
                }
            }
        }
    };
    let reader = reader_host.map(|_| Reader {
        node: reader_node.map(|i| nodes[i].uuid.as_str()),
        rack: reader_rack.as_deref(),
    });
    let read_nodes: Vec<ReadNode<'_>> = nodes
        .iter()
        .zip(&racks)
        .map(|(v, r)| ReadNode {
            uuid: &v.uuid,
            rack: r,
            stale: v.stale,
            decommissioning: v.out_of_service && !v.decommissioned,
            decommissioned: v.decommissioned,
            slow: v.slow,
            xceiver_count: v.xceiver_count,
            storage_type: 1,
        })
        .collect();
    sort_by_distance(reader.as_ref(), &read_nodes, flags, rng)
}
