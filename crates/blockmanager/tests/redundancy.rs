//! Redundancy rules on a manual clock: decommissioning (state machine, sources, targets,
//! open files), excess replicas when a node returns to service, and corrupt replicas
//! replaced before they are deleted.

use crate::common;

use std::path::PathBuf;
use std::sync::Arc;

use common::*;
use rhdfs_blockmanager::redundancy::decommission::AdminState;
use rhdfs_blockmanager::{Block, BlockManager, IncrementalItem, ReportKind};

fn received(bm: &BlockManager, node: u32, b: Block) {
    bm.incremental_report(
        &uuid(node),
        &storage(node),
        1,
        &[IncrementalItem::Received(b)],
    )
    .expect("ibr");
}

fn exclude_file(name: &str, text: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("rhdfs-exclude-{}-{name}", std::process::id()));
    std::fs::write(&p, text).expect("write exclude file");
    p
}

fn with_exclude(name: &str, text: &str) -> (Arc<BlockManager>, PathBuf) {
    let path = exclude_file(name, text);
    let mut cfg = config();
    cfg.admin.hosts_exclude = Some(path.clone());
    let (bm, _clock) = manager(cfg);
    (bm, path)
}

/// Delivers every queued transfer of nodes 1..=n as if the copies succeeded.
fn run_transfers(bm: &BlockManager, n: u32) -> usize {
    let mut done = 0;
    for i in 1..=n {
        for (b, targets) in bm
            .heartbeat(&uuid(i), vec![report(i, GB)], 0, 0, false)
            .transfers
        {
            for t in targets {
                let node: u32 = t.info.id.uuid["dn-uuid-".len()..].parse().unwrap();
                received(bm, node, b);
                done += 1;
            }
        }
    }
    done
}

fn admin_of(bm: &BlockManager, kind: ReportKind, node: u32) -> Option<AdminState> {
    bm.datanode_report(kind)
        .into_iter()
        .find(|d| d.id.uuid == uuid(node))
        .map(|d| d.admin_state)
}

#[test]
fn decommission_waits_for_every_block_then_completes() {
    let (bm, path) = with_exclude("sm", "");
    add_nodes(&bm, 4, GB);
    for id in 1..=3 {
        complete_block(&bm, id, &[1, 2, 3]);
    }
    assert_eq!(bm.compute_reconstruction_work(), 0);
    std::fs::write(&path, "# decommission node 1\n10.0.0.1\n").unwrap();
    let out = bm.refresh_nodes().expect("refresh");
    assert_eq!(out.started, vec!["10.0.0.1:9866".to_string()]);
    assert_eq!(bm.admin_state(&uuid(1)), AdminState::DecommissionInProgress);
    // dfsadmin -report -decommissioning lists it, as DECOMMISSION_INPROGRESS.
    assert_eq!(
        admin_of(&bm, ReportKind::Decommissioning, 1),
        Some(AdminState::DecommissionInProgress)
    );
    assert_eq!(admin_of(&bm, ReportKind::Decommissioning, 2), None);
    // Not a write target any more.
    for _ in 0..20 {
        let t = bm
            .choose_targets("/f", 3, None, &[], &[], 1)
            .expect("targets");
        assert!(t.iter().all(|l| l.info.id.uuid != uuid(1)));
    }
    // Its blocks are copied to node 4 (the only in-service node without them).
    assert!(bm.decommission_check(true).is_empty());
    assert_eq!(bm.compute_reconstruction_work(), 3);
    // Before the copies arrive it stays in progress.
    assert!(bm.decommission_check(true).is_empty());
    assert_eq!(run_transfers(&bm, 4), 3);
    assert_eq!(bm.decommission_check(true), vec![Arc::<str>::from(uuid(1))]);
    assert_eq!(bm.admin_state(&uuid(1)), AdminState::Decommissioned);
    assert_eq!(
        admin_of(&bm, ReportKind::All, 1),
        Some(AdminState::Decommissioned)
    );
    // Its replicas are kept (readable) and not counted: nothing is deleted or copied.
    assert_eq!(bm.fs_stats().pending_deletion, 0);
    assert_eq!(bm.compute_reconstruction_work(), 0);
    assert_eq!(bm.fs_stats().under_replicated, 0);
    let _ = std::fs::remove_file(path);
}

#[test]
fn decommissioning_replica_is_a_source_when_it_is_the_only_one() {
    let (bm, path) = with_exclude("src", "host1\n");
    add_nodes(&bm, 3, GB);
    // Registration of an excluded host starts its decommission at once.
    assert_eq!(bm.admin_state(&uuid(1)), AdminState::DecommissionInProgress);
    complete_block(&bm, 7, &[1]);
    // All its replicas are on a decommissioning node: highest priority, source node 1.
    assert_eq!(bm.highest_priority_low_redundancy(), 1);
    assert_eq!(bm.low_redundancy_queue_sizes(), [1, 0, 0, 0, 0]);
    assert_eq!(bm.compute_reconstruction_work(), 2);
    let t = bm
        .heartbeat(&uuid(1), vec![report(1, GB)], 0, 0, false)
        .transfers;
    assert_eq!(t.len(), 1);
    assert_eq!(t[0].0.id, 7);
    assert_eq!(t[0].1.len(), 2);
    let _ = std::fs::remove_file(path);
}

#[test]
fn open_file_blocks_hold_decommission_until_replicated_elsewhere() {
    let (bm, path) = with_exclude("open", "");
    add_nodes(&bm, 4, GB);
    // A block being written whose only replica so far is on node 1.
    bm.add_block_under_construction(Block::new(5, 1001, 0), 3, &[]);
    bm.incremental_report(
        &uuid(1),
        &storage(1),
        1,
        &[IncrementalItem::Receiving(Block::new(5, 1001, 0))],
    )
    .expect("ibr");
    std::fs::write(&path, "10.0.0.1:9866\n").unwrap();
    bm.refresh_nodes().expect("refresh");
    assert!(
        bm.decommission_check(true).is_empty(),
        "open block only on node 1"
    );
    // The pipeline reaches node 2 as well.
    bm.incremental_report(
        &uuid(2),
        &storage(2),
        1,
        &[IncrementalItem::Receiving(Block::new(5, 1001, 0))],
    )
    .expect("ibr");
    assert_eq!(bm.decommission_check(true).len(), 1);
    let _ = std::fs::remove_file(path);
}

#[test]
fn back_in_service_removes_excess_replicas() {
    let (bm, path) = with_exclude("back", "10.0.0.1\n");
    add_nodes(&bm, 4, GB);
    first_reports(&bm, 4);
    complete_block(&bm, 1, &[1, 2, 3]);
    assert_eq!(bm.compute_reconstruction_work(), 1);
    run_transfers(&bm, 4);
    assert_eq!(bm.decommission_check(true).len(), 1);
    std::fs::write(&path, "").unwrap();
    let out = bm.refresh_nodes().expect("refresh");
    assert_eq!(out.stopped.len(), 1);
    assert_eq!(bm.admin_state(&uuid(1)), AdminState::Normal);
    // Four live replicas of a block with replication 3: one goes.
    assert_eq!(bm.fs_stats().pending_deletion, 1);
    assert_eq!(bm.locations(1).len(), 3);
    let _ = std::fs::remove_file(path);
}

#[test]
fn corrupt_replica_is_replaced_before_it_is_deleted() {
    let (bm, _clock) = manager(config());
    add_nodes(&bm, 4, GB);
    complete_block(&bm, 1, &[1, 2, 3]);
    bm.report_bad_block(Block::new(1, 1001, 64), &uuid(1), Some(&storage(1)));
    // Two good replicas of three: the corrupt one is kept (not served) for now.
    assert_eq!(bm.fs_stats().pending_deletion, 0);
    assert_eq!(bm.fs_stats().corrupt_blocks, 1);
    assert!(bm.locations(1).iter().all(|l| l.info.id.uuid != uuid(1)));
    assert_eq!(bm.compute_reconstruction_work(), 1);
    assert_eq!(run_transfers(&bm, 4), 1);
    // Three good replicas again: now the corrupt one is deleted.
    assert_eq!(bm.fs_stats().pending_deletion, 1);
    assert_eq!(bm.fs_stats().corrupt_blocks, 0);
}

#[test]
fn all_replicas_corrupt_are_kept_and_nothing_is_scheduled() {
    let (bm, _clock) = manager(config());
    add_nodes(&bm, 4, GB);
    complete_block(&bm, 1, &[1, 2]);
    for i in [1, 2] {
        bm.report_bad_block(Block::new(1, 1001, 64), &uuid(i), Some(&storage(i)));
    }
    assert_eq!(bm.compute_reconstruction_work(), 0);
    let s = bm.fs_stats();
    assert_eq!(s.pending_deletion, 0);
    assert_eq!(s.corrupt_blocks, 1);
    assert_eq!(s.missing_blocks, 1);
    let loc = bm.block_locations(1).expect("block");
    assert!(loc.corrupt);
    assert_eq!(loc.locations.len(), 2);
}

#[test]
fn setrep_down_keeps_rack_spread() {
    let table = exclude_file(
        "racks",
        "10.0.0.1 /r1\n10.0.0.2 /r1\n10.0.0.3 /r2\n10.0.0.4 /r2\n",
    );
    let mut conf = rhdfs_conf::Configuration::new();
    conf.set(
        "net.topology.node.switch.mapping.impl",
        "org.apache.hadoop.net.TableMapping",
    );
    conf.set(
        "net.topology.table.file.name",
        table.to_string_lossy().to_string(),
    );
    let mut cfg = rhdfs_blockmanager::BlockManagerConfig::from_conf(&conf).expect("conf");
    cfg.seed = Some(7);
    let (bm, _clock) = manager(cfg);
    add_nodes(&bm, 4, GB);
    first_reports(&bm, 4);
    // Node 3 (alone on /r2) has the least free space of all, node 2 the least of /r1.
    bm.heartbeat(&uuid(2), vec![report(2, GB / 4)], 0, 0, false);
    bm.heartbeat(&uuid(3), vec![report(3, GB / 8)], 0, 0, false);
    complete_block(&bm, 1, &[1, 2, 3]);
    bm.set_replication(&[1], 2);
    let mut left: Vec<String> = bm
        .locations(1)
        .into_iter()
        .map(|l| l.info.id.uuid)
        .collect();
    left.sort();
    // One replica per rack stays: /r1 (the one with more room) and /r2.
    assert_eq!(left, vec![uuid(1), uuid(3)]);
    assert_eq!(bm.fs_stats().pending_deletion, 1);
    let _ = std::fs::remove_file(table);
}

#[test]
fn include_list_refuses_unknown_hosts() {
    let include = exclude_file("include", "10.0.0.1\nhost2\n");
    let mut cfg = config();
    cfg.admin.hosts_include = Some(include.clone());
    let (bm, _clock) = manager(cfg);
    assert!(bm.is_host_allowed(&dn_id(1)));
    assert!(bm.is_host_allowed(&dn_id(2)));
    assert!(!bm.is_host_allowed(&dn_id(3)));
    add_nodes(&bm, 2, GB);
    // Node 2 leaves the include list: after refreshNodes its heartbeats are refused.
    std::fs::write(&include, "10.0.0.1\n").unwrap();
    let out = bm.refresh_nodes().expect("refresh");
    assert_eq!(out.not_included, vec!["10.0.0.2:9866".to_string()]);
    assert!(bm.is_disallowed(&uuid(2)));
    assert!(!bm.is_disallowed(&uuid(1)));
    let e = rhdfs_blockmanager::redundancy::decommission::disallowed_error(&dn_id(2));
    assert!(matches!(
        e,
        rhdfs_blockmanager::BlockManagerError::DisallowedDatanode(_)
    ));
    assert!(e.to_string().starts_with(
        "Datanode denied communication with namenode because the host is not in the include-list: DatanodeRegistration(10.0.0.2:9866"
    ));
    let _ = std::fs::remove_file(include);
}
