//! The calls the actor makes to a NameNode, as a trait (so the actor can be tested against a
//! fake) and its implementation over Hadoop IPC.

use std::sync::Arc;

use async_trait::async_trait;
use rhdfs_ipc::{IpcError, RpcClient};
use rhdfs_proto::datanode::{
    BlockReceivedAndDeletedRequestProto, BlockReceivedAndDeletedResponseProto,
    BlockReportRequestProto, BlockReportResponseProto, DatanodeRegistrationProto,
    ErrorReportRequestProto, ErrorReportResponseProto, HeartbeatRequestProto,
    HeartbeatResponseProto, NamespaceInfoProto, RegisterDatanodeRequestProto,
    RegisterDatanodeResponseProto, ReportBadBlocksRequestProto, ReportBadBlocksResponseProto,
    VersionRequestProto, VersionResponseProto,
};
use rhdfs_proto::protocols::DATANODE_PROTOCOL;

/// Errors talking to the NameNode.
#[derive(Debug, thiserror::Error)]
pub enum ActorError {
    #[error("NameNode RPC failed: {0}")]
    Ipc(#[from] IpcError),
    #[error("storage: {0}")]
    Storage(#[from] crate::error::StorageError),
    #[error("{0}")]
    Other(String),
}

/// DatanodeProtocol as the DataNode uses it.
#[async_trait]
pub trait NamenodeProtocol: Send + Sync + 'static {
    async fn version_request(&self) -> Result<NamespaceInfoProto, ActorError>;
    async fn register_datanode(
        &self,
        reg: DatanodeRegistrationProto,
    ) -> Result<DatanodeRegistrationProto, ActorError>;
    async fn send_heartbeat(
        &self,
        req: HeartbeatRequestProto,
    ) -> Result<HeartbeatResponseProto, ActorError>;
    async fn block_report(
        &self,
        req: BlockReportRequestProto,
    ) -> Result<BlockReportResponseProto, ActorError>;
    async fn block_received_and_deleted(
        &self,
        req: BlockReceivedAndDeletedRequestProto,
    ) -> Result<(), ActorError>;
    /// errorReport (a failed volume: DISK_ERROR, or FATAL_DISK_ERROR when the DataNode
    /// stops). A NameNode that does not take error reports ignores them.
    async fn error_report(&self, _req: ErrorReportRequestProto) -> Result<(), ActorError> {
        Ok(())
    }
    /// reportBadBlocks: replicas of this DataNode its block scanner found corrupt.
    async fn report_bad_blocks(&self, req: ReportBadBlocksRequestProto) -> Result<(), ActorError>;
}

/// Opens a connection to a NameNode.
#[async_trait]
pub trait NamenodeConnector: Send + Sync + 'static {
    async fn connect(&self) -> Result<Arc<dyn NamenodeProtocol>, ActorError>;
    /// The NameNode's name in logs (its address).
    fn describe(&self) -> String {
        "NameNode".to_string()
    }
}

/// Hadoop IPC to `addr` ("host:port") as `user`.
#[derive(Debug, Clone)]
pub struct IpcConnector {
    pub addr: String,
    pub user: String,
}

#[async_trait]
impl NamenodeConnector for IpcConnector {
    async fn connect(&self) -> Result<Arc<dyn NamenodeProtocol>, ActorError> {
        let client = RpcClient::connect(&self.addr, DATANODE_PROTOCOL, &self.user).await?;
        Ok(Arc::new(IpcNamenode { client }))
    }

    fn describe(&self) -> String {
        self.addr.clone()
    }
}

struct IpcNamenode {
    client: RpcClient,
}

/// A NameNode call that takes longer than this ends the session (and reconnects).
const CALL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

impl IpcNamenode {
    async fn call<Req: prost::Message, Resp: prost::Message + Default>(
        &self,
        method: &str,
        req: &Req,
    ) -> Result<Resp, ActorError> {
        match tokio::time::timeout(CALL_TIMEOUT, self.client.call(method, req)).await {
            Ok(r) => Ok(r?),
            Err(_) => Err(ActorError::Other(format!("{method} timed out"))),
        }
    }
}

#[async_trait]
impl NamenodeProtocol for IpcNamenode {
    async fn version_request(&self) -> Result<NamespaceInfoProto, ActorError> {
        let r: VersionResponseProto = self.call("versionRequest", &VersionRequestProto {}).await?;
        Ok(r.info)
    }

    async fn register_datanode(
        &self,
        reg: DatanodeRegistrationProto,
    ) -> Result<DatanodeRegistrationProto, ActorError> {
        let r: RegisterDatanodeResponseProto = self
            .call(
                "registerDatanode",
                &RegisterDatanodeRequestProto { registration: reg },
            )
            .await?;
        Ok(r.registration)
    }

    async fn send_heartbeat(
        &self,
        req: HeartbeatRequestProto,
    ) -> Result<HeartbeatResponseProto, ActorError> {
        self.call("sendHeartbeat", &req).await
    }

    async fn block_report(
        &self,
        req: BlockReportRequestProto,
    ) -> Result<BlockReportResponseProto, ActorError> {
        self.call("blockReport", &req).await
    }

    async fn block_received_and_deleted(
        &self,
        req: BlockReceivedAndDeletedRequestProto,
    ) -> Result<(), ActorError> {
        let _: BlockReceivedAndDeletedResponseProto =
            self.call("blockReceivedAndDeleted", &req).await?;
        Ok(())
    }

    async fn error_report(&self, req: ErrorReportRequestProto) -> Result<(), ActorError> {
        let _: ErrorReportResponseProto = self.call("errorReport", &req).await?;
        Ok(())
    }

    async fn report_bad_blocks(&self, req: ReportBadBlocksRequestProto) -> Result<(), ActorError> {
        let _: ReportBadBlocksResponseProto = self.call("reportBadBlocks", &req).await?;
        Ok(())
    }
}
