//! Start-up safe mode: after a start the NameNode refuses mutations until the DataNodes
//! have reported enough of the blocks (`dfs.namenode.safemode.threshold-pct` of the
//! complete blocks with at least `dfs.namenode.replication.min` replicas) and enough
//! DataNodes are alive (`dfs.namenode.safemode.min.datanodes`), then waits
//! `dfs.namenode.safemode.extension` more. No reconstruction or deletion is scheduled
//! while any safe mode (start-up or manual) is on.
//!
//! [`SafeModeTracker`] is the pure state machine (driven with counts and a monotonic
//! time); [`spawn_safe_mode_monitor`] feeds it from the block manager and publishes the
//! reason to the namespace, whose `check_safe_mode` puts it in SafeModeException.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rhdfs_conf::{Configuration, keys};
use tokio::task::JoinHandle;

use crate::namesystem::{FutureReplicas, Namesystem};
use crate::startup::Phase as StartupPhase;

/// The thresholds of start-up safe mode.
#[derive(Debug, Clone, Copy)]
pub struct SafeModeConfig {
    pub threshold: f64,
    pub min_datanodes: u64,
    pub extension: Duration,
    /// How often the monitor looks at the counts.
    pub recheck: Duration,
}

impl SafeModeConfig {
    pub fn from_conf(conf: &Configuration) -> Result<Self, rhdfs_conf::ConfError> {
        Ok(SafeModeConfig {
            threshold: conf.get_f64(
                keys::DFS_NAMENODE_SAFEMODE_THRESHOLD_PCT_KEY,
                keys::DFS_NAMENODE_SAFEMODE_THRESHOLD_PCT_DEFAULT,
            )?,
            min_datanodes: conf.get_u64(
                keys::DFS_NAMENODE_SAFEMODE_MIN_DATANODES_KEY,
                keys::DFS_NAMENODE_SAFEMODE_MIN_DATANODES_DEFAULT,
            )?,
            extension: conf.get_duration(
                keys::DFS_NAMENODE_SAFEMODE_EXTENSION_KEY,
                keys::DFS_NAMENODE_SAFEMODE_EXTENSION_DEFAULT,
                rhdfs_conf::TimeUnit::Milliseconds,
            )?,
            recheck: Duration::from_millis(200),
        })
    }
}

/// What the tracker says after an update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SafeModeState {
    /// Still on; the text says why and for how long (HDFS's wording).
    On(String),
    /// Off for good.
    Off,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    Waiting,
    Extension { since: Duration },
    Off,
}

/// The start-up safe mode state machine.
#[derive(Debug, Clone)]
pub struct SafeModeTracker {
    cfg: SafeModeConfig,
    phase: Phase,
}

impl SafeModeTracker {
    pub fn new(cfg: SafeModeConfig) -> Self {
        SafeModeTracker {
            cfg,
            phase: Phase::Waiting,
        }
    }

    /// Blocks needed for the threshold (HDFS rounds the product up).
    fn block_threshold(&self, total: u64) -> u64 {
        ((total as f64 * self.cfg.threshold).ceil() as u64).min(total)
    }

    fn datanodes_text(&self, live: u64) -> String {
        if self.cfg.min_datanodes == 0 {
            "The minimum number of live datanodes is not required.".to_string()
        } else if live < self.cfg.min_datanodes {
            format!(
                "The number of live datanodes {live} needs an additional {} live datanodes to reach the minimum number {}.",
                self.cfg.min_datanodes - live,
                self.cfg.min_datanodes
            )
        } else {
            format!(
                "The number of live datanodes {live} has reached the minimum number {}.",
                self.cfg.min_datanodes
            )
        }
    }

    /// Whether the thresholds have been reached (in the extension, or off): the
    /// replication queues may be filled (Hadoop's replication queue threshold).
    pub fn thresholds_met(&self) -> bool {
        self.phase != Phase::Waiting
    }

    /// Updates with `safe` blocks (complete, with enough replicas) of `total` complete
    /// blocks, `live` DataNodes, at monotonic time `now`.
    pub fn update(&mut self, safe: u64, total: u64, live: u64, now: Duration) -> SafeModeState {
        if self.phase == Phase::Off {
            return SafeModeState::Off;
        }
        let threshold = self.block_threshold(total);
        let blocks_met = safe >= threshold;
        let nodes_met = live >= self.cfg.min_datanodes;
        let dn = self.datanodes_text(live);
        if !(blocks_met && nodes_met) {
            self.phase = Phase::Waiting;
            let blocks = if blocks_met {
                format!(
                    "The reported blocks {safe} has reached the threshold {:.4} of total blocks {total}.",
                    self.cfg.threshold
                )
            } else {
                format!(
                    "The reported blocks {safe} needs additional {} blocks to reach the threshold {:.4} of total blocks {total}.",
                    threshold - safe,
                    self.cfg.threshold
                )
            };
            return SafeModeState::On(format!(
                "{blocks} {dn} Safe mode will be turned off automatically once the thresholds have been reached."
            ));
        }
        // Nothing to wait for at all (an empty namespace, no DataNode minimum): off now.
        let need_extension =
            !self.cfg.extension.is_zero() && (threshold > 0 || self.cfg.min_datanodes > 0);
        let since = match self.phase {
            Phase::Extension { since } => since,
            _ => {
                if !need_extension {
                    self.phase = Phase::Off;
                    return SafeModeState::Off;
                }
                tracing::info!(
                    safe,
                    total,
                    live,
                    "safe mode thresholds reached; in safe mode extension"
                );
                self.phase = Phase::Extension { since: now };
                now
            }
        };
        let elapsed = now.saturating_sub(since);
        if elapsed >= self.cfg.extension {
            self.phase = Phase::Off;
            return SafeModeState::Off;
        }
        let left = (self.cfg.extension - elapsed).as_secs_f64().ceil() as u64;
        SafeModeState::On(format!(
            "The reported blocks {safe} has reached the threshold {:.4} of total blocks {total}. {dn} In safe mode extension. Safe mode will be turned off automatically in {left} seconds.",
            self.cfg.threshold
        ))
    }
}

/// The start-up safe mode state once replicas from the future are known: they keep it on
/// (never left by itself) and their warning joins the reason.
pub fn with_future(state: SafeModeState, future: FutureReplicas) -> SafeModeState {
    if future.replicas == 0 {
        return state;
    }
    match state {
        SafeModeState::On(reason) => SafeModeState::On(format!("{reason} {}", future.message())),
        SafeModeState::Off => SafeModeState::On(future.message()),
    }
}

/// One look at the counts: publishes the state to the namespace and the block manager.
/// Returns false once start-up safe mode is over.
pub fn tick(fs: &Namesystem, tracker: &mut SafeModeTracker) -> bool {
    let bm = fs.block_manager();
    // The block manager keeps these two counts as blocks change (no scan of the map).
    let (safe_blocks, complete_blocks) = bm.safe_block_counts();
    let now = fs.clock().monotonic();
    let state = tracker.update(
        safe_blocks,
        complete_blocks,
        bm.live_datanodes() as u64,
        now,
    );
    let future = fs.future_replicas();
    if future.replicas > 0 {
        tracing::warn!(
            replicas = future.replicas,
            bytes = future.bytes,
            "start-up safe mode held on: replicas with generation stamps in the future"
        );
    }
    if tracker.thresholds_met() {
        bm.replication_queues_wanted();
    }
    let state = with_future(state, future);
    let starting = fs.with_ns(|ns| match &state {
        SafeModeState::On(reason) => ns.set_startup_safe_mode(Some(reason.clone())),
        SafeModeState::Off => ns.set_startup_safe_mode(None),
    });
    fs.publish_safe_mode();
    if let Some(progress) = fs.startup_progress() {
        progress.set_total(StartupPhase::SafeMode, complete_blocks);
        progress.set_count(StartupPhase::SafeMode, safe_blocks);
        if !starting {
            progress.end(StartupPhase::SafeMode);
        }
    }
    starting
}

/// Runs [`tick`] every `cfg.recheck` until `stop`, logging once when start-up safe mode
/// ends; after that it keeps the block manager in step with manual safe mode and moves
/// the namespace's counters past replicas from the future that arrive late.
pub fn spawn_safe_mode_monitor(
    fs: Arc<Namesystem>,
    mut tracker: SafeModeTracker,
    recheck: Duration,
    stop: Arc<AtomicBool>,
) -> JoinHandle<()> {
    tokio::spawn(tracing::Instrument::in_current_span(async move {
        let mut starting = true;
        while !stop.load(Ordering::Relaxed) {
            if starting {
                starting = tick(&fs, &mut tracker);
                if !starting {
                    tracing::info!("leaving start-up safe mode");
                }
            } else if !fs.publish_safe_mode()
                && fs.ha_role().get() == crate::ha::Role::Active
                && let Err(e) = fs.hold_future_orphans_durably().await
            {
                tracing::warn!("holding replicas from the future failed: {e}");
            }
            tokio::time::sleep(recheck).await;
        }
    }))
}

/// What `dfsadmin -safemode` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SafeModeAction {
    Get,
    Enter,
    Leave,
    ForceExit,
}

/// The client side of setSafeMode: whether the NameNode at `addr` (host:port) is in safe
/// mode after `action`.
pub async fn set_safe_mode(
    addr: &str,
    user: &str,
    action: SafeModeAction,
) -> Result<bool, rhdfs_ipc::IpcError> {
    use rhdfs_proto::hdfs::{
        SafeModeActionProto, SetSafeModeRequestProto, SetSafeModeResponseProto,
    };
    let c =
        rhdfs_ipc::RpcClient::connect(addr, rhdfs_proto::protocols::CLIENT_PROTOCOL, user).await?;
    let action = match action {
        SafeModeAction::Get => SafeModeActionProto::SafemodeGet,
        SafeModeAction::Enter => SafeModeActionProto::SafemodeEnter,
        SafeModeAction::Leave => SafeModeActionProto::SafemodeLeave,
        SafeModeAction::ForceExit => SafeModeActionProto::SafemodeForceExit,
    };
    let r: SetSafeModeResponseProto = c
        .call(
            "setSafeMode",
            &SetSafeModeRequestProto {
                action: action as i32,
                checked: Some(false),
            },
        )
        .await?;
    Ok(r.result)
}

/// The replicas with generation stamps in future the NameNode at `addr` reports
/// (getFsStats' blocks_in_future).
pub async fn blocks_in_future(addr: &str, user: &str) -> Result<u64, rhdfs_ipc::IpcError> {
    use rhdfs_proto::hdfs::{GetFsStatsResponseProto, GetFsStatusRequestProto};
    let c =
        rhdfs_ipc::RpcClient::connect(addr, rhdfs_proto::protocols::CLIENT_PROTOCOL, user).await?;
    let r: GetFsStatsResponseProto = c.call("getFsStats", &GetFsStatusRequestProto {}).await?;
    Ok(r.blocks_in_future.unwrap_or(0))
}

/// The client side of rollEdits: the txid the new edit log segment starts at.
pub async fn roll_edits(addr: &str, user: &str) -> Result<u64, rhdfs_ipc::IpcError> {
    use rhdfs_proto::hdfs::{RollEditsRequestProto, RollEditsResponseProto};
    let c =
        rhdfs_ipc::RpcClient::connect(addr, rhdfs_proto::protocols::CLIENT_PROTOCOL, user).await?;
    let r: RollEditsResponseProto = c.call("rollEdits", &RollEditsRequestProto {}).await?;
    Ok(r.new_segment_tx_id)
}

/// The client side of saveNamespace: `time_window_secs` and `tx_gap` 0 always save;
/// otherwise the NameNode skips the save while its newest image is within both. Returns
/// whether an image was saved.
pub async fn save_namespace(
    addr: &str,
    user: &str,
    time_window_secs: u64,
    tx_gap: u64,
) -> Result<bool, rhdfs_ipc::IpcError> {
    use rhdfs_proto::hdfs::{SaveNamespaceRequestProto, SaveNamespaceResponseProto};
    let c =
        rhdfs_ipc::RpcClient::connect(addr, rhdfs_proto::protocols::CLIENT_PROTOCOL, user).await?;
    let r: SaveNamespaceResponseProto = c
        .call(
            "saveNamespace",
            &SaveNamespaceRequestProto {
                time_window: Some(time_window_secs),
                tx_gap: Some(tx_gap),
            },
        )
        .await?;
    Ok(r.saved.unwrap_or(true))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(min_dn: u64, ext_secs: u64) -> SafeModeConfig {
        SafeModeConfig {
            threshold: 0.999,
            min_datanodes: min_dn,
            extension: Duration::from_secs(ext_secs),
            recheck: Duration::from_millis(10),
        }
    }

    #[test]
    fn empty_namespace_leaves_at_once() {
        let mut t = SafeModeTracker::new(cfg(0, 30));
        assert_eq!(t.update(0, 0, 0, Duration::ZERO), SafeModeState::Off);
    }

    #[test]
    fn waits_for_blocks_then_the_extension() {
        let mut t = SafeModeTracker::new(cfg(0, 30));
        let SafeModeState::On(m) = t.update(1, 3, 2, Duration::ZERO) else {
            panic!()
        };
        assert_eq!(
            m,
            "The reported blocks 1 needs additional 2 blocks to reach the threshold 0.9990 of total blocks 3. \
             The minimum number of live datanodes is not required. \
             Safe mode will be turned off automatically once the thresholds have been reached."
        );
        let SafeModeState::On(m) = t.update(3, 3, 3, Duration::from_secs(1)) else {
            panic!()
        };
        assert!(m.contains("In safe mode extension"), "{m}");
        assert!(m.contains("in 30 seconds"), "{m}");
        assert!(matches!(
            t.update(3, 3, 3, Duration::from_secs(20)),
            SafeModeState::On(_)
        ));
        assert_eq!(
            t.update(3, 3, 3, Duration::from_secs(31)),
            SafeModeState::Off
        );
        // Off for good, whatever happens later.
        assert_eq!(
            t.update(0, 3, 0, Duration::from_secs(40)),
            SafeModeState::Off
        );
    }

    #[test]
    fn needs_blocks_message_counts() {
        let mut t = SafeModeTracker::new(cfg(0, 30));
        let SafeModeState::On(m) = t.update(0, 2000, 1, Duration::ZERO) else {
            panic!()
        };
        // ceil(2000 * 0.999) = 1998
        assert!(
            m.starts_with(
                "The reported blocks 0 needs additional 1998 blocks to reach the threshold 0.9990 of total blocks 2000."
            ),
            "{m}"
        );
    }

    #[test]
    fn waits_for_datanodes() {
        let mut t = SafeModeTracker::new(cfg(3, 0));
        let SafeModeState::On(m) = t.update(0, 0, 1, Duration::ZERO) else {
            panic!()
        };
        assert!(
            m.contains(
                "The number of live datanodes 1 needs an additional 2 live datanodes to reach the minimum number 3."
            ),
            "{m}"
        );
        assert_eq!(t.update(0, 0, 3, Duration::ZERO), SafeModeState::Off);
    }

    #[test]
    fn falling_back_below_the_threshold_restarts_the_extension() {
        let mut t = SafeModeTracker::new(cfg(0, 10));
        assert!(matches!(
            t.update(1, 1, 1, Duration::ZERO),
            SafeModeState::On(_)
        ));
        assert!(matches!(
            t.update(0, 1, 0, Duration::from_secs(5)),
            SafeModeState::On(_)
        ));
        assert!(matches!(
            t.update(1, 1, 1, Duration::from_secs(6)),
            SafeModeState::On(_)
        ));
        assert!(matches!(
            t.update(1, 1, 1, Duration::from_secs(12)),
            SafeModeState::On(_)
        ));
        assert_eq!(
            t.update(1, 1, 1, Duration::from_secs(16)),
            SafeModeState::Off
        );
    }
}
