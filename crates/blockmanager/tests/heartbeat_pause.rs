//! The heartbeat checker after the NameNode was held up (Hadoop's HDFS-9107): the first pass
//! after a pause and the passes of the following recheck interval declare nobody dead, so
//! the heartbeats queued during the pause refresh their nodes first; a node that stays
//! silent is still declared dead afterwards; a scan that itself overran is not applied.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use common::*;
use rhdfs_blockmanager::{BlockManager, HeartbeatPass, ScanVerdict};
use rhdfs_conf::clock::{Clock, SharedClock};

fn dead_interval() -> Duration {
    config().liveness.dead_after
}

#[test]
fn a_pause_longer_than_the_dead_interval_expires_nobody() {
    let (bm, clock) = manager(config());
    add_nodes(&bm, 3, GB);
    first_reports(&bm, 3);
    complete_block(&bm, 1, &[1, 2, 3]);
    let period = bm.heartbeat_check_period();
    assert_eq!(period, secs(3), "checked every heartbeat interval");
    let mut gate = bm.heartbeat_scan_gate();
    assert_eq!(
        bm.heartbeat_check_pass(&mut gate),
        HeartbeatPass::Scanned(vec![])
    );

    // Held up for three dead intervals: every node looks silent for that long.
    clock.advance(dead_interval() * 3);
    assert!(matches!(
        bm.heartbeat_check_pass(&mut gate),
        HeartbeatPass::Skipped(ScanVerdict::SkipPause { gap }) if gap == dead_interval() * 3
    ));
    // The heartbeats sent during the pause are processed right after it; then the
    // checker carries on, settling for one recheck interval.
    heartbeat_all(&bm, 3);
    clock.advance(period);
    assert_eq!(
        bm.heartbeat_check_pass(&mut gate),
        HeartbeatPass::Skipped(ScanVerdict::Settling)
    );
    for _ in 0..(config().heartbeat_recheck.as_secs() / 3 + 2) {
        clock.advance(period);
        heartbeat_all(&bm, 3);
        let pass = bm.heartbeat_check_pass(&mut gate);
        assert!(
            matches!(
                pass,
                HeartbeatPass::Scanned(ref d) if d.is_empty()
            ) || pass == HeartbeatPass::Skipped(ScanVerdict::Settling),
            "{pass:?}"
        );
    }
    assert_eq!(
        bm.heartbeat_check_pass(&mut gate),
        HeartbeatPass::Scanned(vec![])
    );
    assert_eq!(bm.live_datanodes(), 3);
    assert_eq!(bm.locations(1).len(), 3);
    let s = bm.fs_stats();
    assert_eq!((s.missing_blocks, s.dead_datanodes), (0, 0));
    let c = bm.liveness_counters();
    assert_eq!((c.registrations, c.declared_dead), (3, 0));
    // Recheck 300 s, a pass every 3 s: skipped are the pass after the pause (at T) and the
    // 99 settling ones (T+3 s .. T+297 s); scanned the one before the pause, T+300 s ..
    // T+309 s and the last.
    assert_eq!((c.heartbeat_scans, c.skipped_scans), (6, 100));
}

#[test]
fn a_node_silent_after_the_pause_dies_once_the_settling_is_over() {
    let (bm, clock) = manager(config());
    add_nodes(&bm, 3, GB);
    complete_block(&bm, 1, &[1, 2, 3]);
    let period = bm.heartbeat_check_period();
    let mut gate = bm.heartbeat_scan_gate();
    bm.heartbeat_check_pass(&mut gate);
    clock.advance(dead_interval() * 3);
    assert!(matches!(
        bm.heartbeat_check_pass(&mut gate),
        HeartbeatPass::Skipped(ScanVerdict::SkipPause { .. })
    ));
    // Node 3 really went away meanwhile: only 1 and 2 heartbeat after the pause.
    let mut passes = Vec::new();
    for _ in 0..(config().heartbeat_recheck.as_secs() / 3 + 2) {
        clock.advance(period);
        heartbeat_all(&bm, 2);
        passes.push(bm.heartbeat_check_pass(&mut gate));
    }
    let dead: Vec<&HeartbeatPass> = passes
        .iter()
        .filter(|p| matches!(p, HeartbeatPass::Scanned(d) if !d.is_empty()))
        .collect();
    assert_eq!(
        dead,
        vec![&HeartbeatPass::Scanned(vec![Arc::from(uuid(3).as_str())])],
        "{passes:?}"
    );
    assert_eq!(bm.locations(1).len(), 2);
    assert_eq!(bm.liveness_counters().declared_dead, 1);
}

/// Monotonic time that moves `step` further at every reading, once armed: a scan that is
/// itself slow.
#[derive(Debug, Default)]
struct SteppingClock {
    nanos: AtomicU64,
    step: AtomicU64,
}

impl SteppingClock {
    fn advance(&self, d: Duration) {
        self.nanos.fetch_add(d.as_nanos() as u64, Ordering::SeqCst);
    }
}

impl Clock for SteppingClock {
    fn now_millis(&self) -> u64 {
        1_700_000_000_000 + self.nanos.load(Ordering::SeqCst) / 1_000_000
    }
    fn monotonic(&self) -> Duration {
        let step = self.step.load(Ordering::SeqCst);
        Duration::from_nanos(self.nanos.fetch_add(step, Ordering::SeqCst))
    }
}

#[test]
fn a_scan_slower_than_the_recheck_interval_is_not_applied() {
    let clock = Arc::new(SteppingClock::default());
    let shared: SharedClock = clock.clone();
    let bm = BlockManager::with_config(config(), shared, ns());
    add_nodes(&bm, 2, GB);
    complete_block(&bm, 1, &[1, 2]);
    let mut gate = bm.heartbeat_scan_gate();
    clock.advance(dead_interval() + secs(1));
    // Every reading of the clock during the pass is one recheck interval and a bit later.
    clock.step.store(
        (config().heartbeat_recheck + secs(1)).as_nanos() as u64,
        Ordering::SeqCst,
    );
    let pass = bm.heartbeat_check_pass(&mut gate);
    assert!(
        matches!(pass, HeartbeatPass::Aborted { took } if took > config().heartbeat_recheck),
        "{pass:?}"
    );
    clock.step.store(0, Ordering::SeqCst);
    assert_eq!(bm.live_datanodes(), 0, "both silent for the dead interval");
    assert_eq!(bm.liveness_counters().declared_dead, 0);
    assert_eq!(
        bm.fs_stats().dead_datanodes,
        2,
        "listed dead, not yet removed"
    );
    // Still silent once the checker has settled (the slow pass made the next one late,
    // itself a pause): now they are declared dead, once.
    let mut passes = Vec::new();
    for _ in 0..(config().heartbeat_recheck.as_secs() / 3 + 3) {
        clock.advance(bm.heartbeat_check_period());
        passes.push(bm.heartbeat_check_pass(&mut gate));
    }
    let applied: Vec<&HeartbeatPass> = passes
        .iter()
        .filter(|p| matches!(p, HeartbeatPass::Scanned(d) if !d.is_empty()))
        .collect();
    let both = vec![Arc::from(uuid(1).as_str()), Arc::from(uuid(2).as_str())];
    assert_eq!(applied, vec![&HeartbeatPass::Scanned(both)], "{passes:?}");
    assert_eq!(bm.liveness_counters().declared_dead, 2);
}
