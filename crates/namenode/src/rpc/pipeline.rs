//! updateBlockForPipeline, updatePipeline and getAdditionalDatanode.

use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, decode_request, encode_response};
use rhdfs_proto::hdfs::{
    GetAdditionalDatanodeRequestProto, GetAdditionalDatanodeResponseProto,
    UpdateBlockForPipelineRequestProto, UpdateBlockForPipelineResponseProto,
    UpdatePipelineRequestProto, UpdatePipelineResponseProto,
};

use super::ClientProtocolService;
use super::convert::{block_from_proto, located_block};
use super::datanode_info::{datanode_id_from_proto, datanode_info_from_proto};

impl ClientProtocolService {
    /// A new generation stamp for the block's pipeline.
    pub(super) async fn update_block_for_pipeline(
        &self,
        _ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: UpdateBlockForPipelineRequestProto = decode_request(body)?;
        let lb = self
            .fs
            .update_block_for_pipeline(&block_from_proto(&req.block), &req.client_name)?;
        Ok(encode_response(&UpdateBlockForPipelineResponseProto {
            block: located_block(self.pool(), &lb),
        }))
    }

    pub(super) async fn update_pipeline(
        &self,
        _ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: UpdatePipelineRequestProto = decode_request(body)?;
        let nodes: Vec<String> = req
            .new_nodes
            .iter()
            .map(|n| n.datanode_uuid.clone())
            .collect();
        self.fs.update_pipeline(
            &req.client_name,
            &block_from_proto(&req.old_block),
            &block_from_proto(&req.new_block),
            &nodes,
            &req.storage_i_ds,
        )?;
        Ok(encode_response(&UpdatePipelineResponseProto {}))
    }

    /// An updatePipeline another NameNode ran and committed.
    pub(super) async fn update_pipeline_replayed(
        &self,
        _ctx: &CallContext,
        _body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        Ok(encode_response(&UpdatePipelineResponseProto {}))
    }

    /// The existing pipeline followed by the new nodes.
    pub(super) async fn get_additional_datanode(
        &self,
        _ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: GetAdditionalDatanodeRequestProto = decode_request(body)?;
        let lb = self.fs.get_additional_datanode(
            &req.src,
            req.file_id.unwrap_or(0),
            &block_from_proto(&req.blk),
            &req.existings
                .iter()
                .map(datanode_info_from_proto)
                .collect::<Vec<_>>(),
            &req.existing_storage_uuids,
            &req.excludes
                .iter()
                .map(|d| datanode_id_from_proto(&d.id))
                .collect::<Vec<_>>(),
            req.num_additional_nodes as usize,
            &req.client_name,
        )?;
        Ok(encode_response(&GetAdditionalDatanodeResponseProto {
            block: located_block(self.pool(), &lb),
        }))
    }
}
