//! Background tasks: the heartbeat checker and the RedundancyMonitor. They hold only a
//! weak reference, so dropping the last `Arc<BlockManager>` ends them.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use parking_lot::Mutex;

use crate::datanodes::LivenessCounters;
use crate::heartbeat_scan::{HeartbeatScanGate, ScanVerdict};
use crate::manager::BlockManager;

/// What one pass of the heartbeat checker did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeartbeatPass {
    /// Scanned; these nodes were declared dead (possibly none).
    Scanned(Vec<Arc<str>>),
    /// Not scanned: the checker was held up, or is settling after that.
    Skipped(ScanVerdict),
    /// Scanned, but the scan took `took` (> the recheck interval): nothing applied.
    Aborted { took: Duration },
}

impl BlockManager {
    /// How often the heartbeat checker runs.
    pub fn heartbeat_check_period(&self) -> Duration {
        self.cfg
            .heartbeat_recheck
            .min(self.cfg.heartbeat_interval)
            .max(Duration::from_millis(10))
    }

    /// A gate for [`BlockManager::heartbeat_check_pass`] with this manager's intervals.
    pub fn heartbeat_scan_gate(&self) -> HeartbeatScanGate {
        HeartbeatScanGate::new(self.cfg.heartbeat_recheck, self.heartbeat_check_period())
    }

    /// One pass of the heartbeat checker: declares dead the nodes silent for longer than the
    /// dead interval and drops their replicas, unless `gate` finds the checker was held up
    /// (then nothing expires until the queued heartbeats have been processed).
    pub fn heartbeat_check_pass(&self, gate: &mut HeartbeatScanGate) -> HeartbeatPass {
        let started = self.now_mono();
        let verdict = gate.begin_pass(started);
        if verdict != ScanVerdict::Scan {
            if let ScanVerdict::SkipPause { gap } = verdict {
                tracing::warn!(
                    pause_ms = gap.as_millis() as u64,
                    threshold_ms = gate.pause_threshold().as_millis() as u64,
                    "Skipping next heartbeat scan due to excessive pause"
                );
            }
            self.datanodes
                .lock("heartbeat_check")
                .record_heartbeat_pass(false);
            return HeartbeatPass::Skipped(verdict);
        }
        let dead = {
            let mut dns = self.datanodes.lock("heartbeat_check");
            // Read under the lock: no heartbeat lands between this reading and the marking.
            let expired = dns.expired(self.now_mono());
            let now = self.now_mono();
            if !expired.is_empty() && gate.overran(started, now) {
                let took = now.saturating_sub(started);
                tracing::warn!(
                    took_ms = took.as_millis() as u64,
                    candidates = expired.len(),
                    "Skipping next heartbeat scan due to excessive pause: the scan itself took longer than the recheck interval"
                );
                dns.record_heartbeat_pass(false);
                return HeartbeatPass::Aborted { took };
            }
            dns.record_heartbeat_pass(true);
            dns.mark_dead(&expired);
            expired
        };
        self.remove_dead_nodes(&dead);
        HeartbeatPass::Scanned(dead)
    }

    /// Registrations, nodes declared dead and heartbeat checker passes since start (the
    /// NameNode's /jmx shows them).
    pub fn liveness_counters(&self) -> LivenessCounters {
        self.datanodes.lock("liveness_counters").counters()
    }

    /// Spawns the heartbeat checker and the RedundancyMonitor on the current tokio runtime.
    /// Calling it again does nothing.
    pub fn start(self: &Arc<Self>) {
        let mut tasks = self.tasks.lock();
        if !tasks.is_empty() || tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        let check_every = self.heartbeat_check_period();
        let gate = Arc::new(Mutex::new(self.heartbeat_scan_gate()));
        let weak = Arc::downgrade(self);
        tasks.push(tokio::spawn(tracing::Instrument::in_current_span(
            async move {
                let mut tick = tokio::time::interval(check_every);
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    tick.tick().await;
                    let Some(bm) = weak.upgrade() else { break };
                    if bm.stopped.load(Ordering::Relaxed) {
                        break;
                    }
                    let gate = Arc::clone(&gate);
                    // Dead-node removal may walk many replicas: keep it off the async workers.
                    let _ = tokio::task::spawn_blocking(move || {
                        bm.heartbeat_check_pass(&mut gate.lock())
                    })
                    .await;
                }
            },
        )));
        let every = self.cfg.redundancy_interval.max(Duration::from_millis(10));
        let weak = Arc::downgrade(self);
        tasks.push(tokio::spawn(tracing::Instrument::in_current_span(
            async move {
                let mut tick = tokio::time::interval(every);
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    tick.tick().await;
                    let Some(bm) = weak.upgrade() else { break };
                    if bm.stopped.load(Ordering::Relaxed) {
                        break;
                    }
                    if bm.replication_queues_due() {
                        // One scan of every block (`ops::repl_queues`): off the async workers.
                        let scan = Arc::clone(&bm);
                        let _ = tokio::task::spawn_blocking(move || {
                            scan.initialize_replication_queues()
                        })
                        .await;
                    }
                    let n = bm.redundancy_monitor_pass();
                    if n > 0 {
                        tracing::debug!(scheduled = n, "RedundancyMonitor scheduled invalidations");
                    }
                }
            },
        )));
    }

    /// Stops the background tasks.
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::Relaxed);
        for t in self.tasks.lock().drain(..) {
            t.abort();
        }
    }
}
