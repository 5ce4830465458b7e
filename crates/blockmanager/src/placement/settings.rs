//! Placement and load settings read from the configuration: the policy
//! `dfs.block.replicator.classname` names, the considerLoad and stale-node keys, the rack
//! mapping (`PlacementConfig`).

use std::fmt;

use rhdfs_conf::Configuration;
use rhdfs_conf::keys::*;

use crate::error::BlockManagerError;
use crate::topology::TopologyConfig;

/// Placement and load settings.
#[derive(Clone, Debug, PartialEq)]
pub struct PlacementSettings {
    /// `dfs.namenode.block-placement-policy.default.prefer-local-node`.
    pub prefer_local_node: bool,
    /// `dfs.namenode.redundancy.considerLoad`.
    pub consider_load: bool,
    /// `dfs.namenode.redundancy.considerLoad.factor`.
    pub consider_load_factor: f64,
    /// `dfs.namenode.block-placement.min-blocks-for.write`.
    pub min_blocks_for_write: u64,
    /// `dfs.namenode.avoid.write.stale.datanode`.
    pub avoid_stale_for_write: bool,
    /// `dfs.namenode.write.stale.datanode.ratio`: stale nodes are avoided only while at
    /// most this fraction of the live nodes is stale.
    pub stale_write_ratio: f64,
    /// `dfs.namenode.block-placement-policy.exclude-slow-nodes.enabled`.
    pub exclude_slow_nodes: bool,
    /// `dfs.namenode.avoid.read.stale.datanode`: stale nodes read last.
    pub avoid_stale_for_read: bool,
    /// `dfs.namenode.read.considerLoad`: equally distant replicas, least busy first.
    pub read_consider_load: bool,
    /// `dfs.namenode.read.considerStorageType`: equally distant replicas, fastest storage
    /// first (ignored when `read_consider_load` is set).
    pub read_consider_storage_type: bool,
}

impl Default for PlacementSettings {
    fn default() -> Self {
        PlacementSettings {
            prefer_local_node: DFS_NAMENODE_BLOCKPLACEMENTPOLICY_DEFAULT_PREFER_LOCAL_NODE_DEFAULT,
            consider_load: DFS_NAMENODE_REDUNDANCY_CONSIDERLOAD_DEFAULT,
            consider_load_factor: DFS_NAMENODE_REDUNDANCY_CONSIDERLOAD_FACTOR_DEFAULT,
            min_blocks_for_write: DFS_NAMENODE_BLOCKPLACEMENT_MIN_BLOCKS_FOR_WRITE_DEFAULT,
            avoid_stale_for_write: DFS_NAMENODE_AVOID_STALE_DATANODE_FOR_WRITE_DEFAULT,
            stale_write_ratio: DFS_NAMENODE_USE_STALE_DATANODE_FOR_WRITE_RATIO_DEFAULT,
            exclude_slow_nodes:
                DFS_NAMENODE_BLOCKPLACEMENTPOLICY_EXCLUDE_SLOW_NODES_ENABLED_DEFAULT,
            avoid_stale_for_read: DFS_NAMENODE_AVOID_STALE_DATANODE_FOR_READ_DEFAULT,
            read_consider_load: DFS_NAMENODE_READ_CONSIDERLOAD_DEFAULT,
            read_consider_storage_type: DFS_NAMENODE_READ_CONSIDERSTORAGETYPE_DEFAULT,
        }
    }
}

fn conf_err(e: impl fmt::Display) -> BlockManagerError {
    BlockManagerError::Config(e.to_string())
}

impl PlacementSettings {
    pub fn from_conf(conf: &Configuration) -> Result<Self, BlockManagerError> {
        let d = PlacementSettings::default();
        let ratio = conf
            .get_f64(
                DFS_NAMENODE_USE_STALE_DATANODE_FOR_WRITE_RATIO_KEY,
                d.stale_write_ratio,
            )
            .map_err(conf_err)?;
        if !(ratio > 0.0 && ratio <= 1.0) {
            return Err(BlockManagerError::Config(format!(
                "{DFS_NAMENODE_USE_STALE_DATANODE_FOR_WRITE_RATIO_KEY} = '{ratio}' is invalid. \
                 It should be a positive non-zero float value, not greater than 1.0f."
            )));
        }
        let factor = conf
            .get_f64(
                DFS_NAMENODE_REDUNDANCY_CONSIDERLOAD_FACTOR_KEY,
                d.consider_load_factor,
            )
            .map_err(conf_err)?;
        if factor <= 0.0 {
            return Err(BlockManagerError::Config(format!(
                "{DFS_NAMENODE_REDUNDANCY_CONSIDERLOAD_FACTOR_KEY} = '{factor}' must be greater than 0"
            )));
        }
        let read_consider_load = conf
            .get_bool(DFS_NAMENODE_READ_CONSIDERLOAD_KEY, d.read_consider_load)
            .map_err(conf_err)?;
        let read_consider_storage_type = conf
            .get_bool(
                DFS_NAMENODE_READ_CONSIDERSTORAGETYPE_KEY,
                d.read_consider_storage_type,
            )
            .map_err(conf_err)?;
        if read_consider_load && read_consider_storage_type {
            tracing::warn!(
                "{DFS_NAMENODE_READ_CONSIDERLOAD_KEY} and {DFS_NAMENODE_READ_CONSIDERSTORAGETYPE_KEY} \
                 are incompatible and only one can be enabled. Both are currently enabled. \
                 {DFS_NAMENODE_READ_CONSIDERSTORAGETYPE_KEY} will be ignored."
            );
        }
        Ok(PlacementSettings {
            read_consider_load,
            read_consider_storage_type,
            prefer_local_node: conf
                .get_bool(
                    DFS_NAMENODE_BLOCKPLACEMENTPOLICY_DEFAULT_PREFER_LOCAL_NODE_KEY,
                    d.prefer_local_node,
                )
                .map_err(conf_err)?,
            consider_load: conf
                .get_bool(DFS_NAMENODE_REDUNDANCY_CONSIDERLOAD_KEY, d.consider_load)
                .map_err(conf_err)?,
            consider_load_factor: factor,
            min_blocks_for_write: conf
                .get_u64(
                    DFS_NAMENODE_BLOCKPLACEMENT_MIN_BLOCKS_FOR_WRITE_KEY,
                    d.min_blocks_for_write,
                )
                .map_err(conf_err)?,
            avoid_stale_for_write: conf
                .get_bool(
                    DFS_NAMENODE_AVOID_STALE_DATANODE_FOR_WRITE_KEY,
                    d.avoid_stale_for_write,
                )
                .map_err(conf_err)?,
            stale_write_ratio: ratio,
            exclude_slow_nodes: conf
                .get_bool(
                    DFS_NAMENODE_BLOCKPLACEMENTPOLICY_EXCLUDE_SLOW_NODES_ENABLED_KEY,
                    d.exclude_slow_nodes,
                )
                .map_err(conf_err)?,
            avoid_stale_for_read: conf
                .get_bool(
                    DFS_NAMENODE_AVOID_STALE_DATANODE_FOR_READ_KEY,
                    d.avoid_stale_for_read,
                )
                .map_err(conf_err)?,
        })
    }
}

/// Which policy `dfs.block.replicator.classname` names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PolicyKind {
    /// BlockPlacementPolicyDefault (the default): `RackAwarePlacement`.
    #[default]
    RackAware,
    /// rhdfs's rack-blind `SimplePlacement` ("SimplePlacement").
    Simple,
}

impl PolicyKind {
    /// Accepts the full or short class name of BlockPlacementPolicyDefault, or
    /// "SimplePlacement".
    pub fn from_class_name(name: &str) -> Result<Self, BlockManagerError> {
        let name = name.trim();
        match name.rsplit('.').next().unwrap_or(name) {
            "BlockPlacementPolicyDefault" => Ok(PolicyKind::RackAware),
            "SimplePlacement" => Ok(PolicyKind::Simple),
            _ => Err(BlockManagerError::Config(format!(
                "{DFS_BLOCK_REPLICATOR_CLASSNAME_KEY} = '{name}' is not a supported block \
                 placement policy (supported: {DFS_BLOCK_REPLICATOR_CLASSNAME_DEFAULT}, SimplePlacement)"
            ))),
        }
    }
}

/// Everything placement reads from the configuration.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PlacementConfig {
    pub policy: PolicyKind,
    pub settings: PlacementSettings,
    pub topology: TopologyConfig,
}

impl PlacementConfig {
    pub fn from_conf(conf: &Configuration) -> Result<Self, BlockManagerError> {
        Ok(PlacementConfig {
            policy: PolicyKind::from_class_name(
                conf.get_trimmed(DFS_BLOCK_REPLICATOR_CLASSNAME_KEY)
                    .unwrap_or(DFS_BLOCK_REPLICATOR_CLASSNAME_DEFAULT),
            )?,
            settings: PlacementSettings::from_conf(conf)?,
            topology: TopologyConfig::from_conf(conf).map_err(conf_err)?,
        })
    }
}
