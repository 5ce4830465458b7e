//! getServerDefaults, getFsStats/getStats, getFsReplicatedBlockStats, getDatanodeReport,
//! setSafeMode.

use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, decode_request, encode_response};
use rhdfs_proto::hdfs::{
    GetDatanodeReportRequestProto, GetDatanodeReportResponseProto,
    GetFsReplicatedBlockStatsResponseProto, GetFsStatsResponseProto,
    GetServerDefaultsResponseProto, SafeModeActionProto, SetSafeModeRequestProto,
    SetSafeModeResponseProto,
};

use super::ClientProtocolService;
use super::datanode_info::{datanode_info_to_proto, report_kind};
use crate::safemode::SafeModeAction;

impl ClientProtocolService {
    pub(super) async fn get_server_defaults(
        &self,
        _ctx: &CallContext,
        _body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        Ok(encode_response(&GetServerDefaultsResponseProto {
            server_defaults: self.defaults.clone(),
        }))
    }

    pub(super) async fn get_fs_stats(
        &self,
        _ctx: &CallContext,
        _body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let s = self.fs.block_manager().fs_stats();
        let orphans = self.fs.orphan_counts();
        Ok(encode_response(&GetFsStatsResponseProto {
            capacity: s.capacity,
            used: s.used,
            remaining: s.remaining,
            under_replicated: s.under_replicated,
            corrupt_blocks: s.corrupt_blocks,
            missing_blocks: s.missing_blocks,
            missing_repl_one_blocks: Some(s.missing_repl_one),
            blocks_in_future: Some(self.fs.future_replicas().replicas),
            rhdfs_held_orphan_replicas: Some(orphans.replicas),
            rhdfs_held_orphan_bytes: Some(orphans.bytes),
            pending_deletion_blocks: Some(s.pending_deletion_blocks()),
        }))
    }

    pub(super) async fn get_fs_replicated_block_stats(
        &self,
        _ctx: &CallContext,
        _body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let s = self.fs.block_manager().fs_stats();
        Ok(encode_response(&GetFsReplicatedBlockStatsResponseProto {
            low_redundancy: s.under_replicated,
            corrupt_blocks: s.corrupt_blocks,
            missing_blocks: s.missing_blocks,
            missing_repl_one_blocks: s.missing_repl_one,
            blocks_in_future: self.fs.future_replicas().replicas,
            pending_deletion_blocks: s.pending_deletion_blocks(),
            highest_prio_low_redundancy_blocks: Some(
                self.fs.block_manager().highest_priority_low_redundancy(),
            ),
        }))
    }

    /// Superuser only, as in HDFS.
    pub(super) async fn get_datanode_report(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: GetDatanodeReportRequestProto = decode_request(body)?;
        self.require_superuser(ctx).await?;
        let di = report_kind(req.r#type)
            .map(|kind| self.fs.block_manager().datanode_report(kind))
            .unwrap_or_default()
            .iter()
            .map(datanode_info_to_proto)
            .collect();
        Ok(encode_response(&GetDatanodeReportResponseProto { di }))
    }

    /// GET reports; ENTER/LEAVE/FORCE_EXIT change safe mode (superuser only;
    /// `Namesystem::safe_mode_action`).
    pub(super) async fn set_safe_mode(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: SetSafeModeRequestProto = decode_request(body)?;
        let action = SafeModeActionProto::try_from(req.action)
            .map_err(|_| RpcError::io(format!("Unknown safe mode action {}", req.action)))?;
        let caller = if action == SafeModeActionProto::SafemodeGet {
            None
        } else {
            Some(self.require_superuser(ctx).await?)
        };
        let action = match action {
            SafeModeActionProto::SafemodeGet => SafeModeAction::Get,
            SafeModeActionProto::SafemodeEnter => SafeModeAction::Enter,
            SafeModeActionProto::SafemodeLeave => SafeModeAction::Leave,
            SafeModeActionProto::SafemodeForceExit => SafeModeAction::ForceExit,
        };
        let result = self.fs.safe_mode_action(action).await?;
        if let Some(caller) = caller {
            tracing::info!(user = %caller.user, "safe mode is {}", if result { "ON" } else { "OFF" });
        }
        Ok(encode_response(&SetSafeModeResponseProto { result }))
    }
}
