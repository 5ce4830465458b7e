//! ClientDatanodeProtocol on dfs.datanode.ipc.address: getReplicaVisibleLength,
//! triggerBlockReport, getDatanodeInfo, shutdownDatanode and evictWriters (for
//! `dfsadmin -getDatanodeInfo / -shutdownDatanode / -evictWriters`); every other method answers
//! RpcNoSuchMethodException.

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, RpcService, decode_request, encode_response};
use rhdfs_proto::hdfs::{
    DatanodeLocalInfoProto, EvictWritersRequestProto, EvictWritersResponseProto,
    GetDatanodeInfoResponseProto, GetReplicaVisibleLengthRequestProto,
    GetReplicaVisibleLengthResponseProto, ShutdownDatanodeRequestProto,
    ShutdownDatanodeResponseProto, TriggerBlockReportRequestProto, TriggerBlockReportResponseProto,
};
use tokio::sync::watch;

use crate::actor::Triggers;
use crate::dataset::Dataset;

/// Software version reported by getDatanodeInfo.
pub const SOFTWARE_VERSION: &str = "3.5.0";

use rhdfs_ipc::exceptions::{ACCESS_CONTROL, REPLICA_NOT_FOUND};

/// Who may call the administrative methods (Hadoop's DataNode.checkSuperuserPrivilege):
/// the user the DataNode runs as and members of `dfs.permissions.superusergroup`, or
/// anyone when `dfs.permissions.enabled` is false.
#[derive(Debug, Clone)]
pub struct Admins {
    pub permissions_enabled: bool,
    pub superuser: String,
    pub supergroup: String,
}

impl Admins {
    async fn check(&self, user: &str) -> Result<(), RpcError> {
        if !self.permissions_enabled || user == self.superuser {
            return Ok(());
        }
        // The group lookup runs `id`: off the async threads.
        let u = user.to_string();
        let groups = tokio::task::spawn_blocking(move || rhdfs_conf::user::groups_of(&u))
            .await
            .unwrap_or_default();
        if groups.contains(&self.supergroup) {
            return Ok(());
        }
        Err(RpcError::new(
            ACCESS_CONTROL,
            format!(
                "Superuser privilege is required: {user} is not {} nor in group {}",
                self.superuser, self.supergroup
            ),
        ))
    }
}

/// Serves ClientDatanodeProtocol from the replica map.
#[derive(Debug, Clone)]
pub struct ClientDatanodeService {
    ds: Arc<Dataset>,
    triggers: Arc<Triggers>,
    admins: Admins,
    /// Set by shutdownDatanode: `Some(for_upgrade)`.
    shutdown: Arc<watch::Sender<Option<bool>>>,
    started: std::time::Instant,
}

impl ClientDatanodeService {
    pub fn new(
        ds: Arc<Dataset>,
        triggers: Arc<Triggers>,
        admins: Admins,
        shutdown: Arc<watch::Sender<Option<bool>>>,
    ) -> Self {
        ClientDatanodeService {
            ds,
            triggers,
            admins,
            shutdown,
            started: std::time::Instant::now(),
        }
    }

    fn visible_length(&self, req: &GetReplicaVisibleLengthRequestProto) -> Result<u64, RpcError> {
        let b = &req.block;
        let r = self.ds.get(&b.pool_id, b.block_id).ok_or_else(|| {
            RpcError::new(
                REPLICA_NOT_FOUND,
                format!(
                    "Replica not found for BP-{}:blk_{}_{}",
                    b.pool_id, b.block_id, b.generation_stamp
                ),
            )
        })?;
        if r.gs < b.generation_stamp {
            return Err(RpcError::io(format!(
                "replica blk_{}_{} has an older generation stamp than the requested {}",
                r.id, r.gs, b.generation_stamp
            )));
        }
        Ok(r.num_bytes)
    }
}

#[async_trait]
impl RpcService for ClientDatanodeService {
    async fn call(&self, ctx: CallContext, body: Bytes) -> Result<Bytes, RpcError> {
        match ctx.method.as_str() {
            "getReplicaVisibleLength" => {
                let req: GetReplicaVisibleLengthRequestProto = decode_request(&body)?;
                let length = self.visible_length(&req)?;
                Ok(encode_response(&GetReplicaVisibleLengthResponseProto {
                    length,
                }))
            }
            "triggerBlockReport" => {
                let req: TriggerBlockReportRequestProto = decode_request(&body)?;
                self.admins.check(&ctx.user).await?;
                if req.incremental {
                    self.triggers.incremental_report();
                } else {
                    self.triggers.full_report();
                }
                Ok(encode_response(&TriggerBlockReportResponseProto {}))
            }
            "getDatanodeInfo" => Ok(encode_response(&GetDatanodeInfoResponseProto {
                local_info: DatanodeLocalInfoProto {
                    software_version: SOFTWARE_VERSION.to_string(),
                    config_version: "rhdfs".to_string(),
                    uptime: self.started.elapsed().as_secs(),
                },
            })),
            "shutdownDatanode" => {
                let req: ShutdownDatanodeRequestProto = decode_request(&body)?;
                self.admins.check(&ctx.user).await?;
                if self.shutdown.borrow().is_some() {
                    return Err(RpcError::io("Shutdown already in progress."));
                }
                tracing::info!(
                    user = %ctx.user,
                    for_upgrade = req.for_upgrade,
                    "shutdownDatanode requested"
                );
                self.shutdown.send_replace(Some(req.for_upgrade));
                Ok(encode_response(&ShutdownDatanodeResponseProto {}))
            }
            "evictWriters" => {
                let _req: EvictWritersRequestProto = decode_request(&body)?;
                self.admins.check(&ctx.user).await?;
                let ds = self.ds.clone();
                let stopped = tokio::task::spawn_blocking(move || ds.stop_writers())
                    .await
                    .map_err(|e| RpcError::io(format!("evictWriters failed: {e}")))?;
                tracing::info!(user = %ctx.user, stopped, "evictWriters: writers stopped");
                Ok(encode_response(&EvictWritersResponseProto {}))
            }
            other => Err(RpcError::no_such_method(other)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Admins;

    #[tokio::test]
    async fn only_the_datanode_user_or_the_supergroup_administers() {
        let admins = Admins {
            permissions_enabled: true,
            superuser: "hdfs".into(),
            supergroup: "rhdfs-test-no-such-group".into(),
        };
        assert!(admins.check("hdfs").await.is_ok());
        let err = admins.check("rhdfs-test-no-such-user").await.unwrap_err();
        assert_eq!(
            err.class_name,
            "org.apache.hadoop.security.AccessControlException"
        );
        assert!(
            err.message.contains("Superuser privilege is required"),
            "{}",
            err.message
        );
        let open = Admins {
            permissions_enabled: false,
            ..admins
        };
        assert!(open.check("rhdfs-test-no-such-user").await.is_ok());
    }
}
