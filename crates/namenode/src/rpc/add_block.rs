//! addBlock and abandonBlock.

use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, decode_request, encode_response};
use rhdfs_proto::hdfs::{
    AbandonBlockRequestProto, AbandonBlockResponseProto, AddBlockRequestProto,
    AddBlockResponseProto,
};

use super::ClientProtocolService;
use super::convert::{block_from_proto, located_block};
use super::datanode_info::datanode_id_from_proto;
use crate::namesystem::AddBlockArgs;

impl ClientProtocolService {
    pub(super) async fn add_block(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: AddBlockRequestProto = decode_request(body)?;
        let caller = self.caller(ctx).await;
        let args = AddBlockArgs {
            src: req.src,
            client_name: req.client_name,
            previous: req.previous.as_ref().map(block_from_proto),
            excluded: req
                .exclude_nodes
                .iter()
                .map(|d| datanode_id_from_proto(&d.id))
                .collect(),
            file_id: req.file_id.unwrap_or(0),
            favored: req.favored_nodes,
        };
        let lb = self.fs.add_block(&caller, &args).await?;
        Ok(encode_response(&AddBlockResponseProto {
            block: located_block(self.pool(), &lb),
        }))
    }

    pub(super) async fn abandon_block(
        &self,
        _ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: AbandonBlockRequestProto = decode_request(body)?;
        let applied = self.fs.abandon_block(
            &block_from_proto(&req.b),
            &req.src,
            &req.holder,
            req.file_id.unwrap_or(0),
        )?;
        self.fs.commit(applied).await?;
        Ok(encode_response(&AbandonBlockResponseProto {}))
    }
}
