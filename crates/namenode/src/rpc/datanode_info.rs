//! The block manager's DataNode identities and snapshots as Hadoop's DatanodeIDProto and
//! DatanodeInfoProto: what located blocks, transfer commands, getDatanodeReport and
//! getSlowDatanodeReport carry.

use rhdfs_blockmanager::{AdminState, DatanodeId, DatanodeInfo, ReportKind};
use rhdfs_proto::hdfs::datanode_info_proto::AdminState as AdminStateProto;
use rhdfs_proto::hdfs::{DatanodeIdProto, DatanodeInfoProto, DatanodeReportTypeProto};

pub fn datanode_id_to_proto(id: &DatanodeId) -> DatanodeIdProto {
    DatanodeIdProto {
        ip_addr: id.ip_addr.clone(),
        host_name: id.host_name.clone(),
        datanode_uuid: id.uuid.clone(),
        xfer_port: id.xfer_port,
        info_port: id.info_port,
        ipc_port: id.ipc_port,
        info_secure_port: Some(id.info_secure_port),
    }
}

pub fn datanode_id_from_proto(p: &DatanodeIdProto) -> DatanodeId {
    DatanodeId {
        uuid: p.datanode_uuid.clone(),
        ip_addr: p.ip_addr.clone(),
        host_name: p.host_name.clone(),
        xfer_port: p.xfer_port,
        info_port: p.info_port,
        info_secure_port: p.info_secure_port.unwrap_or(0),
        ipc_port: p.ipc_port,
    }
}

pub fn admin_state_to_proto(s: AdminState) -> i32 {
    match s {
        AdminState::Normal => AdminStateProto::Normal as i32,
        AdminState::DecommissionInProgress => AdminStateProto::DecommissionInprogress as i32,
        AdminState::Decommissioned => AdminStateProto::Decommissioned as i32,
    }
}

/// A node a client names (getAdditionalDatanode's existing pipeline), as it sent it.
pub fn datanode_info_from_proto(p: &DatanodeInfoProto) -> DatanodeInfo {
    let admin_state = match AdminStateProto::try_from(p.admin_state.unwrap_or(0)) {
        Ok(AdminStateProto::DecommissionInprogress) => AdminState::DecommissionInProgress,
        Ok(AdminStateProto::Decommissioned) => AdminState::Decommissioned,
        _ => AdminState::Normal,
    };
    DatanodeInfo {
        id: datanode_id_from_proto(&p.id),
        capacity: p.capacity.unwrap_or(0),
        dfs_used: p.dfs_used.unwrap_or(0),
        remaining: p.remaining.unwrap_or(0),
        block_pool_used: p.block_pool_used.unwrap_or(0),
        non_dfs_used: p.non_dfs_used.unwrap_or(0),
        xceiver_count: p.xceiver_count.unwrap_or(0),
        last_update_ms: p.last_update.unwrap_or(0),
        last_update_mono_ms: p.last_update_monotonic.unwrap_or(0),
        last_block_report_ms: p.last_block_report_time.unwrap_or(0),
        last_block_report_mono_ms: p.last_block_report_monotonic.unwrap_or(0),
        location: p.location.clone().unwrap_or_default(),
        admin_state,
        ..DatanodeInfo::default()
    }
}

/// The nodes a DatanodeReportTypeProto asks for; None for the maintenance kinds, which no
/// node is ever in (their report is empty).
pub fn report_kind(t: i32) -> Option<ReportKind> {
    match DatanodeReportTypeProto::try_from(t).ok()? {
        DatanodeReportTypeProto::All => Some(ReportKind::All),
        DatanodeReportTypeProto::Live => Some(ReportKind::Live),
        DatanodeReportTypeProto::Dead => Some(ReportKind::Dead),
        DatanodeReportTypeProto::Decommissioning => Some(ReportKind::Decommissioning),
        _ => None,
    }
}

/// Hadoop's fields, then rhdfs's report extensions (field 1001: why a decommission cannot
/// complete; 1002-1005: volume failures) only when the snapshot has them.
pub fn datanode_info_to_proto(d: &DatanodeInfo) -> DatanodeInfoProto {
    let summary = d.volume_failure_summary.as_ref();
    DatanodeInfoProto {
        id: datanode_id_to_proto(&d.id),
        capacity: Some(d.capacity),
        dfs_used: Some(d.dfs_used),
        remaining: Some(d.remaining),
        block_pool_used: Some(d.block_pool_used),
        last_update: Some(d.last_update_ms),
        xceiver_count: Some(d.xceiver_count),
        location: Some(d.location.clone()),
        non_dfs_used: Some(d.non_dfs_used),
        admin_state: Some(admin_state_to_proto(d.admin_state)),
        cache_capacity: Some(0),
        cache_used: Some(0),
        last_update_monotonic: Some(d.last_update_mono_ms),
        last_block_report_time: Some(d.last_block_report_ms),
        last_block_report_monotonic: Some(d.last_block_report_mono_ms),
        num_blocks: d.num_blocks,
        rhdfs_volume_failures: (d.volume_failures > 0).then_some(d.volume_failures),
        rhdfs_failed_storage_locations: summary
            .map(|s| s.failed_storage_locations.clone())
            .unwrap_or_default(),
        rhdfs_last_volume_failure_date: summary.map(|s| s.last_volume_failure_date),
        rhdfs_estimated_capacity_lost: summary.map(|s| s.estimated_capacity_lost_total),
        rhdfs_admin_note: d.admin_note.clone(),
        ..DatanodeInfoProto::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admin_states_and_report_kinds_are_hadoops_numbers() {
        assert_eq!(admin_state_to_proto(AdminState::Normal), 0);
        assert_eq!(admin_state_to_proto(AdminState::DecommissionInProgress), 1);
        assert_eq!(admin_state_to_proto(AdminState::Decommissioned), 2);
        assert_eq!(report_kind(1), Some(ReportKind::All));
        assert_eq!(report_kind(2), Some(ReportKind::Live));
        assert_eq!(report_kind(3), Some(ReportKind::Dead));
        assert_eq!(report_kind(4), Some(ReportKind::Decommissioning));
        assert_eq!(report_kind(5), None);
        assert_eq!(report_kind(99), None);
    }

    #[test]
    fn report_extensions_only_when_present() {
        let plain = datanode_info_to_proto(&DatanodeInfo::default());
        assert_eq!(plain.rhdfs_volume_failures, None);
        assert_eq!(plain.rhdfs_last_volume_failure_date, None);
        assert_eq!(plain.rhdfs_admin_note, None);
        assert_eq!(plain.num_blocks, None);
        let id = DatanodeId {
            uuid: "u".into(),
            ip_addr: "10.0.0.1".into(),
            xfer_port: 9866,
            info_secure_port: 7,
            ..DatanodeId::default()
        };
        assert_eq!(datanode_id_from_proto(&datanode_id_to_proto(&id)), id);
        let info = DatanodeInfo {
            id,
            capacity: 100,
            remaining: 40,
            location: "/r1".into(),
            admin_state: AdminState::DecommissionInProgress,
            ..DatanodeInfo::default()
        };
        assert_eq!(
            datanode_info_from_proto(&datanode_info_to_proto(&info)),
            info
        );
    }
}
