//! Background tasks: the heartbeat checker and the RedundancyMonitor. They hold only a
//! weak reference, so dropping the last `Arc<BlockManager>` ends them.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::manager::BlockManager;

impl BlockManager {
    /// Spawns the heartbeat checker and the RedundancyMonitor on the current tokio runtime.
    /// Calling it again does nothing.
    pub fn start(self: &Arc<Self>) {
        let mut tasks = self.tasks.lock();
        if !tasks.is_empty() || tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        let check_every = self
            .cfg
            .heartbeat_recheck
            .min(self.cfg.heartbeat_interval)
            .max(Duration::from_millis(10));
        let weak = Arc::downgrade(self);
        tasks.push(tokio::spawn(async move {
            let mut tick = tokio::time::interval(check_every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(bm) = weak.upgrade() else { break };
                if bm.stopped.load(Ordering::Relaxed) {
                    break;
                }
                let bm2 = Arc::clone(&bm);
                // Dead-node removal may walk many replicas: keep it off the async workers.
                let _ = tokio::task::spawn_blocking(move || bm2.check_heartbeats()).await;
            }
        }));
        let every = self.cfg.redundancy_interval.max(Duration::from_millis(10));
        let weak = Arc::downgrade(self);
        tasks.push(tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(bm) = weak.upgrade() else { break };
                if bm.stopped.load(Ordering::Relaxed) {
                    break;
                }
                let n = bm.redundancy_monitor_pass();
                if n > 0 {
                    tracing::debug!(scheduled = n, "RedundancyMonitor scheduled invalidations");
                }
            }
        }));
    }

    /// Stops the background tasks.
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::Relaxed);
        for t in self.tasks.lock().drain(..) {
            t.abort();
        }
    }
}
