//! create.

use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, decode_request, encode_response};
use rhdfs_proto::hdfs::{CreateRequestProto, CreateResponseProto};

use super::ClientProtocolService;
use super::convert::file_status;
use crate::error::FsError;
use crate::namespace::CreateArgs;

impl ClientProtocolService {
    /// The status carries fileId, blocksize and block_replication, and an empty path.
    pub(super) async fn create(&self, ctx: &CallContext, body: &Bytes) -> Result<Bytes, RpcError> {
        let req: CreateRequestProto = decode_request(body)?;
        let caller = self.caller(ctx).await;
        let replication = u16::try_from(req.replication).map_err(|_| {
            FsError::Io(format!(
                "Requested replication factor of {} exceeds maximum of {} for {} from {}",
                req.replication,
                self.fs.with_ns(|ns| ns.config().max_replication),
                req.src,
                req.client_name
            ))
        })?;
        let args = CreateArgs {
            src: &req.src,
            masked: (req.masked.perm & 0o7777) as u16,
            unmasked: req.unmasked.map(|u| (u.perm & 0o7777) as u16),
            client_name: &req.client_name,
            client_machine: &caller.machine,
            flags: req.create_flag,
            create_parent: req.create_parent,
            replication,
            block_size: req.block_size,
        };
        let applied = self.fs.create(&caller, &args).await?;
        let st = self.fs.commit(applied).await?;
        Ok(encode_response(&CreateResponseProto {
            fs: Some(file_status(&st, None)),
        }))
    }

    /// A create another NameNode ran and committed: the status of the file it left open by
    /// the client. A namespace without it (the call's edits were not all committed) runs the
    /// create.
    pub(super) async fn create_replayed(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: CreateRequestProto = decode_request(body)?;
        let caller = self.caller(ctx).await;
        match self
            .fs
            .created_status(&caller, &req.src, &req.client_name)?
        {
            Some(st) => Ok(encode_response(&CreateResponseProto {
                fs: Some(file_status(&st, None)),
            })),
            None => self.create(ctx, body).await,
        }
    }
}
