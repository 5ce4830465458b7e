//! The DataNode's IPC port serves ClientDatanodeProtocol and InterDatanodeProtocol; calls
//! are routed by the protocol named in each request.

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, RpcService};
use rhdfs_proto::protocols::INTER_DATANODE_PROTOCOL;

use super::InterDatanodeService;
use crate::dataset::Dataset;

/// Routes InterDatanodeProtocol to the recovery service, everything else to `client`.
pub struct DatanodeIpcRouter<C> {
    client: C,
    inter: InterDatanodeService,
}

impl<C: RpcService> DatanodeIpcRouter<C> {
    pub fn new(client: C, ds: Arc<Dataset>) -> Self {
        DatanodeIpcRouter {
            client,
            inter: InterDatanodeService::new(ds),
        }
    }
}

#[async_trait]
impl<C: RpcService> RpcService for DatanodeIpcRouter<C> {
    async fn call(&self, ctx: CallContext, body: Bytes) -> Result<Bytes, RpcError> {
        if ctx.protocol == INTER_DATANODE_PROTOCOL {
            self.inter.call(ctx, body).await
        } else {
            self.client.call(ctx, body).await
        }
    }
}
