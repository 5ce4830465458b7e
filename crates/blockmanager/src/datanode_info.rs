//! A DataNode as clients, `dfsadmin -report` and the web pages see it (Hadoop's
//! DatanodeInfo): a snapshot of its descriptor taken under the datanodes lock. The NameNode
//! renders it as DatanodeInfoProto at its RPC edge (`namenode/src/rpc/datanode_info.rs`).

use crate::datanode_id::DatanodeId;
use crate::datanodes::{DatanodeDescriptor, Liveness};
use crate::redundancy::decommission::AdminState;
use crate::volume_failures::VolumeFailureSummary;

/// Which nodes a datanode report lists (DatanodeReportTypeProto's ALL, LIVE, DEAD,
/// DECOMMISSIONING; no node is ever in maintenance here).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportKind {
    All,
    Live,
    Dead,
    Decommissioning,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct DatanodeInfo {
    pub id: DatanodeId,
    /// Capacity and usage figures are zero for a dead node, as Hadoop's are once its
    /// storages are gone.
    pub capacity: u64,
    pub dfs_used: u64,
    pub remaining: u64,
    pub block_pool_used: u64,
    pub non_dfs_used: u64,
    pub xceiver_count: u32,
    /// Blocks chosen to be written to the node and not yet reported (Hadoop's
    /// getBlocksScheduled; datanode reports only, it is not on the wire).
    pub blocks_scheduled: u64,
    /// Wall-clock and monotonic ms of the last heartbeat.
    pub last_update_ms: u64,
    pub last_update_mono_ms: u64,
    /// Wall-clock and monotonic ms of the last full block report.
    pub last_block_report_ms: u64,
    pub last_block_report_mono_ms: u64,
    /// The rack.
    pub location: String,
    pub admin_state: AdminState,
    /// Replicas the node holds (datanode reports only).
    pub num_blocks: Option<u32>,
    /// Failed volumes and their summary (datanode reports only).
    pub volume_failures: u32,
    pub volume_failure_summary: Option<VolumeFailureSummary>,
    /// Why a decommission cannot complete (datanode reports only).
    pub admin_note: Option<String>,
}

impl DatanodeInfo {
    pub(crate) fn of(d: &DatanodeDescriptor, liveness: Liveness) -> DatanodeInfo {
        let dead = liveness == Liveness::Dead;
        let num = |v: u64| if dead { 0 } else { v };
        DatanodeInfo {
            id: d.id.clone(),
            capacity: num(d.capacity()),
            dfs_used: num(d.dfs_used()),
            remaining: num(d.remaining()),
            block_pool_used: num(d.block_pool_used()),
            non_dfs_used: num(d.non_dfs_used()),
            xceiver_count: if dead { 0 } else { d.xceiver_count },
            blocks_scheduled: 0,
            last_update_ms: d.last_update_ms,
            last_update_mono_ms: millis(d.last_update_mono),
            last_block_report_ms: d.last_block_report_ms,
            last_block_report_mono_ms: millis(d.last_block_report_mono),
            location: d.network_location.clone(),
            admin_state: d.admin,
            num_blocks: None,
            volume_failures: 0,
            volume_failure_summary: None,
            admin_note: None,
        }
    }

    /// As `of`, with what a datanode report adds: the replica count, blocks scheduled and
    /// volume failures.
    pub(crate) fn for_report(
        d: &DatanodeDescriptor,
        liveness: Liveness,
        num_blocks: usize,
    ) -> DatanodeInfo {
        DatanodeInfo {
            num_blocks: Some(u32::try_from(num_blocks).unwrap_or(u32::MAX)),
            blocks_scheduled: d.scheduled.total(),
            volume_failures: d.volume_failures,
            volume_failure_summary: d.volume_failure_summary.clone(),
            ..DatanodeInfo::of(d, liveness)
        }
    }
}

fn millis(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
