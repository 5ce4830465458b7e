//! setReplication, setPermission, setOwner, setTimes.

use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, decode_request, encode_response};
use rhdfs_proto::hdfs::{
    SetOwnerRequestProto, SetOwnerResponseProto, SetPermissionRequestProto,
    SetPermissionResponseProto, SetReplicationRequestProto, SetReplicationResponseProto,
    SetTimesRequestProto, SetTimesResponseProto,
};

use super::ClientProtocolService;

/// setTimes' "-1 = unchanged", as it arrives in a uint64.
fn time_arg(t: u64) -> Option<u64> {
    (t as i64 >= 0).then_some(t)
}

impl ClientProtocolService {
    /// false for a directory or a missing path.
    pub(super) async fn set_replication(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: SetReplicationRequestProto = decode_request(body)?;
        let caller = self.caller(ctx).await;
        let replication = u16::try_from(req.replication).unwrap_or(u16::MAX);
        let applied = self.fs.set_replication(&caller, &req.src, replication)?;
        let result = self.fs.commit(applied).await?;
        Ok(encode_response(&SetReplicationResponseProto { result }))
    }

    pub(super) async fn set_permission(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: SetPermissionRequestProto = decode_request(body)?;
        let caller = self.caller(ctx).await;
        let mode = (req.permission.perm & 0o7777) as u16;
        self.fs.set_permission(&caller, &req.src, mode)?;
        Ok(encode_response(&SetPermissionResponseProto {}))
    }

    /// Absent username/groupname leave that field unchanged.
    pub(super) async fn set_owner(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: SetOwnerRequestProto = decode_request(body)?;
        let caller = self.caller(ctx).await;
        self.fs.set_owner(
            &caller,
            &req.src,
            req.username.as_deref(),
            req.groupname.as_deref(),
        )?;
        Ok(encode_response(&SetOwnerResponseProto {}))
    }

    pub(super) async fn set_times(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: SetTimesRequestProto = decode_request(body)?;
        let caller = self.caller(ctx).await;
        self.fs
            .set_times(&caller, &req.src, time_arg(req.mtime), time_arg(req.atime))?;
        Ok(encode_response(&SetTimesResponseProto {}))
    }
}
