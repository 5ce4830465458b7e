//! The block manager's settings, read from Hadoop's configuration keys.

use std::time::Duration;

use rhdfs_conf::Configuration;
use rhdfs_conf::keys::*;

use crate::datanodes::LivenessConfig;
use crate::error::BlockManagerError;
use crate::placement::rack_aware::PlacementConfig;

#[derive(Clone, Debug)]
pub struct BlockManagerConfig {
    pub heartbeat_interval: Duration,
    pub heartbeat_recheck: Duration,
    pub liveness: LivenessConfig,
    pub min_replication: usize,
    pub redundancy_interval: Duration,
    pub invalidate_work_pct: f64,
    /// Effective per-node limit: max(dfs.block.invalidate.limit, 20 × heartbeat seconds).
    pub block_invalidate_limit: usize,
    pub deletion_increment: usize,
    /// dfs.namenode.block.deletion.lock.threshold.ms: one hold of the blocks lock while
    /// removing a deleted file's blocks ends once it has lasted this long (at least one block
    /// per hold), as Hadoop's MarkedDeleteBlockScrubber.
    pub deletion_lock_threshold: Duration,
    pub startup_delay_deletion: Duration,
    pub report_max_lock_hold: Duration,
    pub max_report_leases: usize,
    pub report_lease_length: Duration,
    /// `dfs.namenode.tolerate.heartbeat.multiplier`: a holder silent for this many heartbeat
    /// intervals is the first to lose a surplus replica.
    pub tolerate_heartbeat_multiplier: u32,
    /// Blocks given reconstruction work per pass = live nodes × this.
    pub replication_work_multiplier: usize,
    /// Copies a DataNode is asked to send at once (minus those in progress).
    pub max_replication_streams: usize,
    /// A scheduled copy not reported within this is scheduled again.
    pub reconstruction_pending_timeout: Duration,
    /// `dfs.namenode.blocks.per.postponedblocks.rescan`: postponed over-replicated blocks
    /// looked at per RedundancyMonitor pass.
    pub postponed_rescan: usize,
    /// Seed of the placement / shuffling RNG (None: `$RHDFS_SEED` or entropy).
    pub seed: Option<u64>,
    /// Slow peer / slow disk tracking and the slow node set (`slowpeers`).
    pub slow: crate::slowpeers::SlowNodeConfig,
    /// The placement policy (`dfs.block.replicator.classname`), its load / space / stale
    /// settings and the rack mapping.
    pub placement: PlacementConfig,
    /// Decommissioning and the replication stream hard limit (`redundancy::decommission`).
    pub admin: crate::redundancy::decommission::AdminConfig,
}

impl Default for BlockManagerConfig {
    fn default() -> Self {
        let heartbeat = DFS_HEARTBEAT_INTERVAL_DEFAULT;
        let recheck = DFS_NAMENODE_HEARTBEAT_RECHECK_INTERVAL_DEFAULT;
        BlockManagerConfig {
            heartbeat_interval: heartbeat,
            heartbeat_recheck: recheck,
            liveness: LivenessConfig::from_intervals(
                heartbeat,
                recheck,
                DFS_NAMENODE_STALE_DATANODE_INTERVAL_DEFAULT,
                DFS_NAMENODE_STALE_DATANODE_MINIMUM_INTERVAL_DEFAULT as u32,
            ),
            min_replication: DFS_NAMENODE_REPLICATION_MIN_DEFAULT as usize,
            redundancy_interval: DFS_NAMENODE_REDUNDANCY_INTERVAL_SECONDS_DEFAULT,
            invalidate_work_pct: DFS_NAMENODE_INVALIDATE_WORK_PCT_PER_ITERATION_DEFAULT,
            block_invalidate_limit: effective_invalidate_limit(
                DFS_BLOCK_INVALIDATE_LIMIT_DEFAULT,
                heartbeat,
            ),
            deletion_increment: DFS_NAMENODE_BLOCK_DELETION_INCREMENT_DEFAULT as usize,
            deletion_lock_threshold: DFS_NAMENODE_BLOCK_DELETION_LOCK_THRESHOLD_MS_DEFAULT,
            startup_delay_deletion: DFS_NAMENODE_STARTUP_DELAY_BLOCK_DELETION_SEC_DEFAULT,
            report_max_lock_hold: DFS_NAMENODE_BLOCKREPORT_MAX_LOCK_HOLD_TIME_DEFAULT,
            max_report_leases: DFS_NAMENODE_MAX_FULL_BLOCK_REPORT_LEASES_DEFAULT as usize,
            report_lease_length: DFS_NAMENODE_FULL_BLOCK_REPORT_LEASE_LENGTH_MS_DEFAULT,
            replication_work_multiplier:
                DFS_NAMENODE_REPLICATION_WORK_MULTIPLIER_PER_ITERATION_DEFAULT as usize,
            max_replication_streams: DFS_NAMENODE_REPLICATION_MAX_STREAMS_DEFAULT as usize,
            tolerate_heartbeat_multiplier: DFS_NAMENODE_TOLERATE_HEARTBEAT_MULTIPLIER_DEFAULT,
            reconstruction_pending_timeout: Duration::from_secs(
                DFS_NAMENODE_RECONSTRUCTION_PENDING_TIMEOUT_SEC_DEFAULT as u64,
            ),
            postponed_rescan: DFS_NAMENODE_BLOCKS_PER_POSTPONEDBLOCKS_RESCAN_DEFAULT as usize,
            slow: Default::default(),
            seed: None,
            placement: PlacementConfig::default(),
            admin: Default::default(),
        }
    }
}

/// `max(configured, 20 × heartbeat seconds)`, as Hadoop's DatanodeManager computes it.
pub fn effective_invalidate_limit(configured: u64, heartbeat: Duration) -> usize {
    configured.max(20 * heartbeat.as_secs()) as usize
}

fn conf_err(e: impl std::fmt::Display) -> BlockManagerError {
    BlockManagerError::Config(e.to_string())
}

impl BlockManagerConfig {
    pub fn from_conf(conf: &Configuration) -> Result<Self, BlockManagerError> {
        let heartbeat = conf
            .get_duration(
                DFS_HEARTBEAT_INTERVAL_KEY,
                DFS_HEARTBEAT_INTERVAL_DEFAULT,
                DFS_HEARTBEAT_INTERVAL_UNIT,
            )
            .map_err(conf_err)?;
        let recheck = conf
            .get_duration(
                DFS_NAMENODE_HEARTBEAT_RECHECK_INTERVAL_KEY,
                DFS_NAMENODE_HEARTBEAT_RECHECK_INTERVAL_DEFAULT,
                DFS_NAMENODE_HEARTBEAT_RECHECK_INTERVAL_UNIT,
            )
            .map_err(conf_err)?;
        let stale = conf
            .get_duration(
                DFS_NAMENODE_STALE_DATANODE_INTERVAL_KEY,
                DFS_NAMENODE_STALE_DATANODE_INTERVAL_DEFAULT,
                DFS_NAMENODE_STALE_DATANODE_INTERVAL_UNIT,
            )
            .map_err(conf_err)?;
        let stale_min = conf
            .get_u64(
                DFS_NAMENODE_STALE_DATANODE_MINIMUM_INTERVAL_KEY,
                DFS_NAMENODE_STALE_DATANODE_MINIMUM_INTERVAL_DEFAULT,
            )
            .map_err(conf_err)?;
        let min_replication = conf
            .get_u64(
                DFS_NAMENODE_REPLICATION_MIN_KEY,
                DFS_NAMENODE_REPLICATION_MIN_DEFAULT,
            )
            .map_err(conf_err)?;
        if min_replication == 0 {
            return Err(BlockManagerError::Config(format!(
                "{DFS_NAMENODE_REPLICATION_MIN_KEY} = 0 must be greater than 0"
            )));
        }
        let pct = conf
            .get_f64(
                DFS_NAMENODE_INVALIDATE_WORK_PCT_PER_ITERATION_KEY,
                DFS_NAMENODE_INVALIDATE_WORK_PCT_PER_ITERATION_DEFAULT,
            )
            .map_err(conf_err)?;
        if !(pct > 0.0 && pct <= 1.0) {
            return Err(BlockManagerError::Config(format!(
                "{DFS_NAMENODE_INVALIDATE_WORK_PCT_PER_ITERATION_KEY} = '{pct}' is invalid. \
                 It should be a positive, non-zero float value, not greater than 1.0f, \
                 to indicate a percentage."
            )));
        }
        let limit = conf
            .get_u64(
                DFS_BLOCK_INVALIDATE_LIMIT_KEY,
                DFS_BLOCK_INVALIDATE_LIMIT_DEFAULT,
            )
            .map_err(conf_err)?;
        let increment = conf
            .get_u64(
                DFS_NAMENODE_BLOCK_DELETION_INCREMENT_KEY,
                DFS_NAMENODE_BLOCK_DELETION_INCREMENT_DEFAULT,
            )
            .map_err(conf_err)?
            .max(1);
        let pending_timeout = conf
            .get_i64(
                DFS_NAMENODE_RECONSTRUCTION_PENDING_TIMEOUT_SEC_KEY,
                DFS_NAMENODE_RECONSTRUCTION_PENDING_TIMEOUT_SEC_DEFAULT,
            )
            .map_err(conf_err)?;
        // <= 0 means the default of five minutes, as in Hadoop.
        let pending_timeout = if pending_timeout <= 0 {
            300
        } else {
            pending_timeout as u64
        };
        Ok(BlockManagerConfig {
            replication_work_multiplier: conf
                .get_u64(
                    DFS_NAMENODE_REPLICATION_WORK_MULTIPLIER_PER_ITERATION_KEY,
                    DFS_NAMENODE_REPLICATION_WORK_MULTIPLIER_PER_ITERATION_DEFAULT,
                )
                .map_err(conf_err)? as usize,
            max_replication_streams: conf
                .get_u64(
                    DFS_NAMENODE_REPLICATION_MAX_STREAMS_KEY,
                    DFS_NAMENODE_REPLICATION_MAX_STREAMS_DEFAULT,
                )
                .map_err(conf_err)? as usize,
            reconstruction_pending_timeout: Duration::from_secs(pending_timeout),
            tolerate_heartbeat_multiplier: conf
                .get_u32(
                    DFS_NAMENODE_TOLERATE_HEARTBEAT_MULTIPLIER_KEY,
                    DFS_NAMENODE_TOLERATE_HEARTBEAT_MULTIPLIER_DEFAULT,
                )
                .map_err(conf_err)?,
            heartbeat_interval: heartbeat,
            heartbeat_recheck: recheck,
            liveness: LivenessConfig::from_intervals(heartbeat, recheck, stale, stale_min as u32),
            min_replication: min_replication as usize,
            redundancy_interval: conf
                .get_duration(
                    DFS_NAMENODE_REDUNDANCY_INTERVAL_SECONDS_KEY,
                    DFS_NAMENODE_REDUNDANCY_INTERVAL_SECONDS_DEFAULT,
                    DFS_NAMENODE_REDUNDANCY_INTERVAL_SECONDS_UNIT,
                )
                .map_err(conf_err)?,
            invalidate_work_pct: pct,
            block_invalidate_limit: effective_invalidate_limit(limit, heartbeat),
            deletion_increment: increment as usize,
            deletion_lock_threshold: conf
                .get_duration(
                    DFS_NAMENODE_BLOCK_DELETION_LOCK_THRESHOLD_MS_KEY,
                    DFS_NAMENODE_BLOCK_DELETION_LOCK_THRESHOLD_MS_DEFAULT,
                    DFS_NAMENODE_BLOCK_DELETION_LOCK_THRESHOLD_MS_UNIT,
                )
                .map_err(conf_err)?,
            startup_delay_deletion: conf
                .get_duration(
                    DFS_NAMENODE_STARTUP_DELAY_BLOCK_DELETION_SEC_KEY,
                    DFS_NAMENODE_STARTUP_DELAY_BLOCK_DELETION_SEC_DEFAULT,
                    DFS_NAMENODE_STARTUP_DELAY_BLOCK_DELETION_SEC_UNIT,
                )
                .map_err(conf_err)?,
            report_max_lock_hold: conf
                .get_duration(
                    DFS_NAMENODE_BLOCKREPORT_MAX_LOCK_HOLD_TIME_KEY,
                    DFS_NAMENODE_BLOCKREPORT_MAX_LOCK_HOLD_TIME_DEFAULT,
                    DFS_NAMENODE_BLOCKREPORT_MAX_LOCK_HOLD_TIME_UNIT,
                )
                .map_err(conf_err)?,
            max_report_leases: conf
                .get_u64(
                    DFS_NAMENODE_MAX_FULL_BLOCK_REPORT_LEASES_KEY,
                    DFS_NAMENODE_MAX_FULL_BLOCK_REPORT_LEASES_DEFAULT,
                )
                .map_err(conf_err)? as usize,
            report_lease_length: conf
                .get_duration(
                    DFS_NAMENODE_FULL_BLOCK_REPORT_LEASE_LENGTH_MS_KEY,
                    DFS_NAMENODE_FULL_BLOCK_REPORT_LEASE_LENGTH_MS_DEFAULT,
                    DFS_NAMENODE_FULL_BLOCK_REPORT_LEASE_LENGTH_MS_UNIT,
                )
                .map_err(conf_err)?,
            postponed_rescan: conf
                .get_u64(
                    DFS_NAMENODE_BLOCKS_PER_POSTPONEDBLOCKS_RESCAN_KEY,
                    DFS_NAMENODE_BLOCKS_PER_POSTPONEDBLOCKS_RESCAN_DEFAULT,
                )
                .map_err(conf_err)? as usize,
            slow: crate::slowpeers::SlowNodeConfig::from_conf(conf)?,
            seed: None,
            placement: PlacementConfig::from_conf(conf)?,
            admin: crate::redundancy::decommission::AdminConfig::from_conf(conf)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_hadoop() {
        let c = BlockManagerConfig::from_conf(&Configuration::new()).unwrap_or_default();
        assert_eq!(c.liveness.dead_after, Duration::from_secs(630));
        assert_eq!(c.liveness.stale_after, Duration::from_secs(30));
        assert_eq!(c.block_invalidate_limit, 1000);
        assert_eq!(c.deletion_increment, 1000);
        assert_eq!(c.deletion_lock_threshold, Duration::from_millis(50));
        assert_eq!(c.min_replication, 1);
        assert_eq!(c.redundancy_interval, Duration::from_secs(3));
        assert_eq!(c.postponed_rescan, 10_000);
        assert_eq!(c.tolerate_heartbeat_multiplier, 4);
        let mut conf = Configuration::new();
        conf.set(DFS_NAMENODE_TOLERATE_HEARTBEAT_MULTIPLIER_KEY, "10");
        let c = BlockManagerConfig::from_conf(&conf).unwrap_or_default();
        assert_eq!(c.tolerate_heartbeat_multiplier, 10);
    }

    #[test]
    fn invalidate_limit_has_heartbeat_floor() {
        let mut conf = Configuration::new();
        conf.set(DFS_BLOCK_INVALIDATE_LIMIT_KEY, "10");
        conf.set(DFS_HEARTBEAT_INTERVAL_KEY, "100");
        let c = BlockManagerConfig::from_conf(&conf).unwrap_or_default();
        assert_eq!(c.block_invalidate_limit, 2000);
        conf.set(DFS_NAMENODE_INVALIDATE_WORK_PCT_PER_ITERATION_KEY, "1.5");
        assert!(BlockManagerConfig::from_conf(&conf).is_err());
    }
}
