//! getFileInfo, getLocatedFileInfo, isFileClosed, getPreferredBlockSize, getLinkTarget.

use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, decode_request, encode_response};
use rhdfs_proto::hdfs::{
    GetFileInfoRequestProto, GetFileInfoResponseProto, GetLinkTargetRequestProto,
    GetLinkTargetResponseProto, GetLocatedFileInfoRequestProto, GetLocatedFileInfoResponseProto,
    GetPreferredBlockSizeRequestProto, GetPreferredBlockSizeResponseProto,
    IsFileClosedRequestProto, IsFileClosedResponseProto,
};

use super::ClientProtocolService;
use super::convert::{file_status, located_blocks};

impl ClientProtocolService {
    /// A missing path is an empty response; `path` is empty in the status.
    pub(super) async fn get_file_info(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: GetFileInfoRequestProto = decode_request(body)?;
        let caller = self.caller(ctx).await;
        let st = self.fs.file_info(&caller, &req.src)?;
        Ok(encode_response(&GetFileInfoResponseProto {
            fs: st.map(|s| file_status(&s, None)),
        }))
    }

    pub(super) async fn get_located_file_info(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: GetLocatedFileInfoRequestProto = decode_request(body)?;
        let caller = self.caller(ctx).await;
        let src = req.src.unwrap_or_default();
        let st = self.fs.located_file_info(&caller, &src)?;
        let fs = st.map(|s| {
            let locs = s
                .blocks
                .as_ref()
                .map(|fb| located_blocks(self.pool(), &self.fs.located_blocks(fb, 0, u64::MAX)));
            file_status(&s, locs)
        });
        Ok(encode_response(&GetLocatedFileInfoResponseProto { fs }))
    }

    pub(super) async fn is_file_closed(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: IsFileClosedRequestProto = decode_request(body)?;
        let caller = self.caller(ctx).await;
        let result = self.fs.with_ns(|ns| ns.is_file_closed(&caller, &req.src))?;
        Ok(encode_response(&IsFileClosedResponseProto { result }))
    }

    pub(super) async fn get_preferred_block_size(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: GetPreferredBlockSizeRequestProto = decode_request(body)?;
        let caller = self.caller(ctx).await;
        let bsize = self
            .fs
            .with_ns(|ns| ns.preferred_block_size(&caller, &req.filename))?;
        Ok(encode_response(&GetPreferredBlockSizeResponseProto {
            bsize,
        }))
    }

    /// rhdfs has no symbolic links: an existing path is "not a symbolic link".
    pub(super) async fn get_link_target(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: GetLinkTargetRequestProto = decode_request(body)?;
        let caller = self.caller(ctx).await;
        let target = self.fs.with_ns(|ns| ns.link_target(&caller, &req.path))?;
        Ok(encode_response(&GetLinkTargetResponseProto {
            target_path: Some(target),
        }))
    }
}
