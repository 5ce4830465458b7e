//! commitBlockSynchronization: the primary of a block recovery reports the length and
//! generation stamp the replicas agreed on; the namespace closes (or keeps open) the file
//! and answers once its edits are durable.

use bytes::Bytes;
use rhdfs_ipc::{RpcError, decode_request, encode_response};
use rhdfs_proto::datanode::{
    CommitBlockSynchronizationRequestProto, CommitBlockSynchronizationResponseProto,
};

use super::DatanodeProtocolService;

impl DatanodeProtocolService {
    pub(super) async fn commit_block_synchronization(
        &self,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: CommitBlockSynchronizationRequestProto = decode_request(body)?;
        match self.fs.commit_block_synchronization(&req) {
            Ok(applied) => self.fs.commit(applied).await?,
            Err(e) => {
                // Edits logged before the refusal become durable before it is answered.
                self.fs.sync_edits().await?;
                return Err(e.into());
            }
        }
        Ok(encode_response(&CommitBlockSynchronizationResponseProto {}))
    }
}
