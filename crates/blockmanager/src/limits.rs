//! The block manager's fixed limits, gathered here with what they bound and why. None of
//! them is a Hadoop key (the tunables Hadoop exposes are read in `config`); each is either
//! a Hadoop constant kept at Hadoop's value or a bound on one hold of a lock that rhdfs
//! adds so no single hold grows with the size of the namespace.

use std::time::Duration;

/// Replicas of a full block report applied per hold of the blocks lock (a chunk also ends
/// early after `dfs.namenode.blockreport.max.lock.hold.time`). Hadoop holds the namesystem
/// lock for a whole storage's report.
pub const REPORT_CHUNK: usize = 1000;

/// Block ids of a storage read per hold of the blocks lock after its full report, to
/// find those the report did not list (a walk of the storage's `BlockSet`, a few
/// nanoseconds an id).
pub const REPORT_WALK_CHUNK: usize = 16_384;

/// Blocks checked per hold of the blocks lock by the scan that fills the replication
/// queues once start-up safe mode's thresholds are reached (`ops::repl_queues`; a hold
/// also ends after `dfs.namenode.blockreport.max.lock.hold.time`). Hadoop's
/// processMisReplicatedBlocks checks 10,000 per hold of the namesystem lock.
pub const REPL_QUEUE_SCAN_CHUNK: usize = 4096;

/// Blocks of a loaded namespace added per hold of the blocks lock (`load_blocks`, before
/// the NameNode serves: about a millisecond each).
pub const LOAD_CHUNK: usize = 4096;

/// Blocks counted per hold of the blocks lock for getFsStats / `dfsadmin -report`.
pub const STATS_CHUNK: usize = 4096;

/// Blocks read per hold of the blocks lock by fsck, metasave, listOpenFiles' blocking filter
/// and the other read-only views (`views`).
pub const VIEW_CHUNK: usize = 2_000;

/// Blocks of a decommissioning node checked per hold (Hadoop's DatanodeAdminManager checks
/// `dfs.namenode.decommission.blocks.per.interval` per tick, 500 000, under one lock).
pub const DECOMMISSION_CHECK_CHUNK: usize = 1000;

/// Surplus-replica candidates handled per hold (excess replicas and postponed decisions).
pub const EXCESS_CHUNK: usize = 1000;

/// Blocks rechecked for rack spread per hold after a topology change.
pub const RACK_RECHECK_CHUNK: usize = 1000;

/// Hadoop's DatanodeDescriptor BLOCKS_SCHEDULED_ROLL_INTERVAL: the scheduled-block count of
/// a node is rolled (the previous interval's forgotten) every 10 minutes, so blocks whose
/// RECEIVED report never came stop counting against the node's space.
pub const SCHEDULED_ROLL_INTERVAL: Duration = Duration::from_secs(600);

/// Nodes listed in the JMX SlowPeersReport / SlowDisksReport (Hadoop's SlowPeerTracker and
/// SlowDiskTracker MAX_NODES_TO_REPORT / disks to report: 5).
pub const MAX_NODES_IN_JSON: usize = 5;
