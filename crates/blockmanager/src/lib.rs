//! rhdfs-blockmanager: the NameNode's block side — DataNodes, the blocks map, placement,
//! block reports, and the delete path — behind its own locks, separate from the
//! namespace's. Plain synchronous logic with an injectable clock; `start()` adds the
//! heartbeat checker and the RedundancyMonitor as tokio tasks.
//!
//! Map, in three layers whose imports point downwards only:
//! - plain types and queues, no manager: `block`, `datanode_id`, `datanode_info`
//!   (DatanodeInfo snapshots for clients and reports), `datanodes` (registry, liveness),
//!   `blocks_map`, `invalidate`, `reconstruction` (needed / pending / queued DNA_TRANSFER
//!   bookkeeping), `scheduled`, `orphans`, `report` (BlockListAsLongs and reportDiff
//!   classification), `report_leases`, `placement` (the policy: `rack_aware` chooser,
//!   `reasons`, `settings`, `read_order`, `deletion`), `topology`, `slowpeers`,
//!   `volume_failures`, `heartbeat_scan`, `locks` (hold-time statistics), `config` and
//!   `limits` (every fixed limit with its reason), `id_table` and `id_hash` (dense and
//!   hashed maps keyed by block ids);
//! - the locked state: `state` (`BlockState` behind the blocks lock);
//! - the operations: `manager` (the `BlockManager` struct: API, write path, locations,
//!   stats), `ops/` (one file per concern: `reports` — registration, heartbeats,
//!   incremental/full reports, dead nodes; `deletion` — remove_blocks, invalidation
//!   scheduling; `topology`; `slow_nodes`; `decommission`; `postponed`; `racks`;
//!   `report_leases`; `volume_failures`), `redundancy/` (the RedundancyMonitor pass:
//!   `low_redundancy` priority queues, source choice and stream limits, `excess` replicas,
//!   `decommission` = DatanodeAdminManager and host lists, `decommission_health`),
//!   `monitor` (tasks), `views` (fsck / metasave views);
//! - `testing` (feature `testing`: a block manager on a manual clock and DataNodes, for the
//!   tests of this crate and of the NameNode's DatanodeProtocol handlers).
//!
//! The wire (DatanodeProtocol decoding, replies, Java exception classes) is the NameNode's:
//! `namenode/src/rpc/datanode/`; this crate exposes domain calls and domain errors.
//!
//! Locks: `blocks` (blocks map, InvalidateBlocks, reconstruction queues) and `datanodes`
//! (registry, heartbeat stats) are separate parking_lot mutexes, each hold bounded (reports,
//! deletions and dead-node removal work in chunks). Never take `blocks` while holding
//! `datanodes`; code that needs both takes them one after the other.

pub mod block;
pub mod block_set;
pub mod blocks_map;
pub mod config;
pub mod datanode_id;
pub mod datanode_info;
pub mod datanodes;
pub mod deleting;
pub mod error;
pub mod heartbeat_scan;
pub mod id_hash;
pub mod id_table;
pub mod invalidate;
pub mod limits;
pub mod locks;
mod manager;
mod monitor;
mod ops;
pub mod orphans;
pub mod placement;
pub mod reconstruction;
pub mod redundancy;
pub mod report;
pub mod report_leases;
pub mod scheduled;
pub mod slow_config;
pub mod slowdisks;
pub mod slowpeers;
pub mod state;
#[cfg(feature = "testing")]
pub mod testing;
pub mod topology;
pub mod views;
pub mod volume_failures;

pub use block::{
    Block, BlockInfo, BlockRecovery, BlockUcState, CorruptReason, Replica, ReplicaState, Replicas,
    StorageIdx,
};
pub use config::BlockManagerConfig;
pub use datanode_info::{DatanodeInfo, ReportKind};
pub use datanodes::{DatanodeId, Liveness, LivenessCounters, StorageReport};
pub use error::BlockManagerError;
pub use heartbeat_scan::{HeartbeatScanGate, ScanVerdict};
pub use id_table::IdTable;
pub use locks::LockStat;
pub use manager::{BlockLocations, BlockManager, FsStats, Location, NamespaceInfo};
pub use monitor::HeartbeatPass;
pub use ops::reload::{ReloadSummary, ReloadedBlock};
pub use ops::reports::{FullReportSummary, HeartbeatOutcome, IncrementalItem};
pub use orphans::{HeldReplica, OrphanClass, OrphanCounts};
pub use placement::rack_aware::{PlacementConfig, PlacementOutcome, RackAwarePlacement};
pub use placement::{PlacementPolicy, SimplePlacement};
pub use redundancy::decommission::AdminState;
pub use report::{ReportedReplica, decode_buffers, decode_longs, encode_buffer, encode_longs};
