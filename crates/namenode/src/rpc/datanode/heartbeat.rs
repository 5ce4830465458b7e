//! sendHeartbeat: the DataNode's storages and load go to the block manager; the answer
//! carries its commands (register again, or transfers, invalidations and the block
//! recoveries this node is the primary of), the HA state and the slow-node verdict.

use bytes::Bytes;
use rhdfs_blockmanager::StorageReport;
use rhdfs_blockmanager::redundancy::decommission::disallowed_error;
use rhdfs_ipc::{RpcError, decode_request, encode_response};
use rhdfs_proto::datanode::{HeartbeatRequestProto, HeartbeatResponseProto};
use rhdfs_proto::hdfs::NnhaStatusHeartbeatProto;

use crate::rpc::ha_state::datanode_ha_state;

use super::DatanodeProtocolService;
use super::commands::{invalidate_command, recovery_command, register_command, transfer_command};
use super::convert::{slow_disk, slow_peer, storage_report, volume_failure_summary};
use crate::rpc::datanode_info::datanode_id_from_proto;
use crate::rpc::errors::block_manager_to_rpc;

impl DatanodeProtocolService {
    pub(super) fn heartbeat(&self, body: &Bytes) -> Result<Bytes, RpcError> {
        let req: HeartbeatRequestProto = decode_request(body)?;
        let bm = self.bm();
        let dn = &req.registration.datanode_id;
        let uuid = &dn.datanode_uuid;
        if bm.is_disallowed(uuid) {
            let id = datanode_id_from_proto(dn);
            return Err(block_manager_to_rpc(disallowed_error(&id)));
        }
        let reports: Vec<StorageReport> = req.reports.iter().map(storage_report).collect();
        let out = bm.heartbeat_with_failures(
            uuid,
            reports,
            req.xceiver_count.unwrap_or(0),
            req.xmits_in_progress.unwrap_or(0),
            req.request_full_block_report_lease.unwrap_or(false),
            req.failed_volumes.unwrap_or(0),
            req.volume_failure_summary
                .as_ref()
                .map(volume_failure_summary),
        );
        if out.registered && (!req.slow_peers.is_empty() || !req.slow_disks.is_empty()) {
            let reporting = format!("{}:{}", dn.ip_addr, dn.ipc_port);
            let peers: Vec<_> = req.slow_peers.iter().map(slow_peer).collect();
            let disks: Vec<_> = req.slow_disks.iter().map(slow_disk).collect();
            bm.slow_nodes().on_heartbeat(&reporting, &peers, &disks);
        }
        let mut cmds = Vec::new();
        let role = self.fs.ha_role().get();
        let active = role == crate::ha::Role::Active;
        if !out.registered {
            // As Hadoop: an unknown node gets only DNA_REGISTER; its recoveries wait. A
            // DataNode takes this one from a standby too.
            cmds.push(register_command());
        } else if active {
            // A standby sends no other command (a DataNode would ignore it: Hadoop's
            // BPOfferService obeys only the NameNode it believes active).
            if !out.transfers.is_empty() {
                cmds.push(transfer_command(bm.block_pool_id(), &out.transfers));
            }
            if !out.invalidate.is_empty() {
                cmds.push(invalidate_command(bm.block_pool_id(), &out.invalidate));
            }
            let recoveries = self.fs.block_recoveries().take_commands(uuid);
            if !recoveries.is_empty() {
                cmds.push(recovery_command(recoveries));
            }
        }
        Ok(encode_response(&HeartbeatResponseProto {
            cmds,
            ha_status: NnhaStatusHeartbeatProto {
                state: datanode_ha_state(role) as i32,
                txid: bm.last_txid(),
            },
            rolling_upgrade_status: None,
            rolling_upgrade_status_v2: None,
            full_block_report_lease_id: Some(out.full_report_lease),
            is_slownode: Some(out.registered && bm.is_slow_node(uuid)),
        }))
    }
}
