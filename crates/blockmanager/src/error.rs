//! The block manager's error type.

use thiserror::Error;

/// Errors returned by the block manager. The NameNode's RPC edge
/// (`namenode/src/rpc/errors.rs`) names the Java exception each kind becomes.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum BlockManagerError {
    /// Placement could not reach `dfs.namenode.replication.min` targets. The message is
    /// Hadoop's, word for word.
    #[error("{0}")]
    NotEnoughReplicas(String),
    /// The block id is not in the blocks map.
    #[error("Block blk_{0} does not exist")]
    UnknownBlock(u64),
    /// The operation does not fit the block's current state (e.g. commit of a COMPLETE block).
    #[error("{0}")]
    InvalidState(String),
    /// A DataNode that is not (or no longer) registered sent a report; the message is
    /// Hadoop's for that report kind.
    #[error("{0}")]
    UnregisteredNode(String),
    /// A block report could not be decoded.
    #[error("Malformed block report: {0}")]
    MalformedReport(String),
    /// A configuration key held a value that cannot be used.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// A DataNode the include list (`dfs.hosts`) does not name registered or heartbeated;
    /// the message is Hadoop's DisallowedDatanodeException text.
    #[error("{0}")]
    DisallowedDatanode(String),
    /// A DataNode's rack could not be resolved or does not fit the topology.
    #[error(transparent)]
    Topology(#[from] crate::topology::TopologyError),
}
