//! What the configuration says about the NameNode's slow node handling (seed 002): which
//! reports are kept and for how long, how often the slow set is collected, how large it may
//! be, and whether placement and read ordering act on it — on by default in rhdfs.

use std::time::Duration;

use rhdfs_conf::{Configuration, keys};

use crate::error::BlockManagerError;

/// Settings of the NameNode's slow node handling.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SlowNodeConfig {
    /// dfs.datanode.peer.stats.enabled (the NameNode tracks peer reports only when on).
    pub peer_stats_enabled: bool,
    /// dfs.datanode.fileio.profiling.sampling.percentage > 0.
    pub disk_stats_enabled: bool,
    /// 3 × dfs.datanode.outliers.report.interval.
    pub report_validity: Duration,
    /// dfs.namenode.max.slowpeer.collect.nodes
    pub max_collect_nodes: usize,
    /// dfs.namenode.slowpeer.collect.interval
    pub collect_interval: Duration,
    /// dfs.namenode.block-placement-policy.exclude-slow-nodes.enabled
    pub exclude_for_write: bool,
    /// dfs.namenode.avoid.read.slow.datanode
    pub avoid_for_read: bool,
    /// rhdfs.namenode.slownodes.max.percent: the slow set holds at most this share of the
    /// registered DataNodes (rounded down).
    pub max_avoided_percent: u32,
}

impl Default for SlowNodeConfig {
    fn default() -> Self {
        SlowNodeConfig {
            peer_stats_enabled: keys::DFS_DATANODE_PEER_STATS_ENABLED_DEFAULT,
            disk_stats_enabled: false,
            report_validity: keys::DFS_DATANODE_OUTLIERS_REPORT_INTERVAL_DEFAULT * 3,
            max_collect_nodes: keys::DFS_NAMENODE_MAX_SLOWPEER_COLLECT_NODES_DEFAULT as usize,
            collect_interval: keys::DFS_NAMENODE_SLOWPEER_COLLECT_INTERVAL_DEFAULT,
            exclude_for_write:
                keys::DFS_NAMENODE_BLOCKPLACEMENTPOLICY_EXCLUDE_SLOW_NODES_ENABLED_DEFAULT,
            avoid_for_read: keys::DFS_NAMENODE_AVOID_READ_SLOW_DATANODE_DEFAULT,
            max_avoided_percent: keys::RHDFS_NAMENODE_SLOWNODES_MAX_PERCENT_DEFAULT,
        }
    }
}

fn conf_err(key: &str) -> impl Fn(rhdfs_conf::ConfError) -> BlockManagerError + '_ {
    move |e| BlockManagerError::Config(format!("{key}: {e}"))
}

impl SlowNodeConfig {
    pub fn from_conf(conf: &Configuration) -> Result<Self, BlockManagerError> {
        use keys::*;
        let d = SlowNodeConfig::default();
        let interval = conf
            .get_duration(
                DFS_DATANODE_OUTLIERS_REPORT_INTERVAL_KEY,
                DFS_DATANODE_OUTLIERS_REPORT_INTERVAL_DEFAULT,
                DFS_DATANODE_OUTLIERS_REPORT_INTERVAL_UNIT,
            )
            .map_err(conf_err(DFS_DATANODE_OUTLIERS_REPORT_INTERVAL_KEY))?;
        Ok(SlowNodeConfig {
            peer_stats_enabled: conf
                .get_bool(DFS_DATANODE_PEER_STATS_ENABLED_KEY, d.peer_stats_enabled)
                .map_err(conf_err(DFS_DATANODE_PEER_STATS_ENABLED_KEY))?,
            disk_stats_enabled: conf
                .get_u64(
                    DFS_DATANODE_FILEIO_PROFILING_SAMPLING_PERCENTAGE_KEY,
                    DFS_DATANODE_FILEIO_PROFILING_SAMPLING_PERCENTAGE_DEFAULT,
                )
                .map_err(conf_err(
                    DFS_DATANODE_FILEIO_PROFILING_SAMPLING_PERCENTAGE_KEY,
                ))?
                > 0,
            report_validity: interval * 3,
            max_collect_nodes: conf
                .get_u64(
                    DFS_NAMENODE_MAX_SLOWPEER_COLLECT_NODES_KEY,
                    DFS_NAMENODE_MAX_SLOWPEER_COLLECT_NODES_DEFAULT,
                )
                .map_err(conf_err(DFS_NAMENODE_MAX_SLOWPEER_COLLECT_NODES_KEY))?
                as usize,
            collect_interval: conf
                .get_duration(
                    DFS_NAMENODE_SLOWPEER_COLLECT_INTERVAL_KEY,
                    DFS_NAMENODE_SLOWPEER_COLLECT_INTERVAL_DEFAULT,
                    DFS_NAMENODE_SLOWPEER_COLLECT_INTERVAL_UNIT,
                )
                .map_err(conf_err(DFS_NAMENODE_SLOWPEER_COLLECT_INTERVAL_KEY))?,
            exclude_for_write: conf
                .get_bool(
                    DFS_NAMENODE_BLOCKPLACEMENTPOLICY_EXCLUDE_SLOW_NODES_ENABLED_KEY,
                    d.exclude_for_write,
                )
                .map_err(conf_err(
                    DFS_NAMENODE_BLOCKPLACEMENTPOLICY_EXCLUDE_SLOW_NODES_ENABLED_KEY,
                ))?,
            avoid_for_read: conf
                .get_bool(DFS_NAMENODE_AVOID_READ_SLOW_DATANODE_KEY, d.avoid_for_read)
                .map_err(conf_err(DFS_NAMENODE_AVOID_READ_SLOW_DATANODE_KEY))?,
            max_avoided_percent: conf
                .get_u32(
                    RHDFS_NAMENODE_SLOWNODES_MAX_PERCENT_KEY,
                    d.max_avoided_percent,
                )
                .map_err(conf_err(RHDFS_NAMENODE_SLOWNODES_MAX_PERCENT_KEY))?
                .min(100),
        })
    }

    /// How many of `registered` DataNodes the slow set may hold: the smaller of
    /// dfs.namenode.max.slowpeer.collect.nodes and rhdfs.namenode.slownodes.max.percent of
    /// them (rounded down).
    pub fn max_avoided(&self, registered: usize) -> usize {
        let share = registered.saturating_mul(self.max_avoided_percent as usize) / 100;
        self.max_collect_nodes.min(share)
    }

    /// Whether the slow node set is collected at all: whenever peer stats are on, since the
    /// heartbeat's isSlownode is read from it (placement and read order use it only when
    /// their own keys say so).
    pub fn collects(&self) -> bool {
        self.peer_stats_enabled
    }
}
