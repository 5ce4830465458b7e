//! The primary DataNode's part of a block recovery (DNA_RECOVERBLOCK): ask every replica
//! (initReplicaRecovery), decide the common length, bring each participant to it
//! (updateReplicaUnderRecovery), then report to the NameNode
//! (commitBlockSynchronization), which closes the file at that length.

use std::sync::Arc;

use rhdfs_ipc::{IpcError, RpcClient, RpcError};
use rhdfs_proto::datanode::{
    CommitBlockSynchronizationRequestProto, CommitBlockSynchronizationResponseProto,
    InitReplicaRecoveryRequestProto, InitReplicaRecoveryResponseProto, RecoveringBlockProto,
    UpdateReplicaUnderRecoveryRequestProto, UpdateReplicaUnderRecoveryResponseProto,
};
use rhdfs_proto::hdfs::{DatanodeIdProto, ExtendedBlockProto};
use rhdfs_proto::protocols::{DATANODE_PROTOCOL, INTER_DATANODE_PROTOCOL};

use super::service::{InterDatanodeService, RECOVERY_IN_PROGRESS};
use super::sync::{ReplicaReport, SyncDecision, SyncError, decide};
use crate::dataset::Dataset;
use crate::replica::ReplicaState;

/// Why a recovery did not reach the NameNode.
#[derive(Debug, thiserror::Error)]
pub enum RecoveryError {
    #[error("block recovery of blk_{id}: {source}")]
    Sync { id: u64, source: SyncError },
    #[error(
        "block recovery of blk_{id}: recovery for a replica is already in progress; recovery id {recovery_id} is aborted: {msg}"
    )]
    InProgress {
        id: u64,
        recovery_id: u64,
        msg: String,
    },
    #[error("block recovery of blk_{id}: no replica could be updated")]
    NoneUpdated { id: u64 },
    #[error("block recovery of blk_{id}: commitBlockSynchronization failed: {msg}")]
    Commit { id: u64, msg: String },
}

fn state_of(code: i32) -> ReplicaState {
    match code {
        0 => ReplicaState::Finalized,
        1 => ReplicaState::Rbw,
        3 => ReplicaState::Rur,
        4 => ReplicaState::Temporary,
        _ => ReplicaState::Rwr,
    }
}

/// A failed call as the remote (or local) service raised it.
fn rpc_error(e: IpcError) -> RpcError {
    match e {
        IpcError::Remote {
            class_name,
            message,
        } => RpcError::new(class_name, message),
        e => RpcError::io(e.to_string()),
    }
}

async fn init_on(
    local: &InterDatanodeService,
    my_uuid: &str,
    user: &str,
    node: &DatanodeIdProto,
    req: &InitReplicaRecoveryRequestProto,
) -> Result<InitReplicaRecoveryResponseProto, RpcError> {
    if node.datanode_uuid == my_uuid {
        return local.init(req.clone()).await;
    }
    let addr = format!("{}:{}", node.ip_addr, node.ipc_port);
    let c = RpcClient::connect(&addr, INTER_DATANODE_PROTOCOL, user)
        .await
        .map_err(rpc_error)?;
    c.call("initReplicaRecovery", req).await.map_err(rpc_error)
}

async fn update_on(
    local: &InterDatanodeService,
    my_uuid: &str,
    user: &str,
    node: &DatanodeIdProto,
    req: &UpdateReplicaUnderRecoveryRequestProto,
) -> Result<UpdateReplicaUnderRecoveryResponseProto, String> {
    if node.datanode_uuid == my_uuid {
        return local.update(req.clone()).await.map_err(|e| e.message);
    }
    let addr = format!("{}:{}", node.ip_addr, node.ipc_port);
    let c = RpcClient::connect(&addr, INTER_DATANODE_PROTOCOL, user)
        .await
        .map_err(|e| e.to_string())?;
    c.call("updateReplicaUnderRecovery", req)
        .await
        .map_err(|e| e.to_string())
}

/// Recovers one block as its primary. `nn_addr` is the NameNode's host:port.
pub async fn recover_block(
    ds: &Arc<Dataset>,
    my_uuid: &str,
    user: &str,
    nn_addr: &str,
    rb: &RecoveringBlockProto,
) -> Result<(), RecoveryError> {
    let local = InterDatanodeService::new(ds.clone());
    let b = &rb.block.b;
    let id = b.block_id;
    let recovery_id = rb.new_gen_stamp;
    let nodes: Vec<&DatanodeIdProto> = rb.block.locs.iter().map(|l| &l.id).collect();
    let init = InitReplicaRecoveryRequestProto { block: rb.clone() };
    let mut reports: Vec<Option<ReplicaReport>> = Vec::with_capacity(nodes.len());
    for node in &nodes {
        let report = match init_on(&local, my_uuid, user, node, &init).await {
            Ok(r) if r.replica_found => r.block.map(|blk| ReplicaReport {
                state: state_of(r.state.unwrap_or(2)),
                gs: blk.gen_stamp,
                len: blk.num_bytes.unwrap_or(0),
            }),
            Ok(_) => None,
            // A newer recovery owns a replica: this one gives up (Hadoop's
            // RecoveryInProgressException).
            Err(e) if e.class_name == RECOVERY_IN_PROGRESS => {
                return Err(RecoveryError::InProgress {
                    id,
                    recovery_id,
                    msg: e.message,
                });
            }
            Err(e) => {
                tracing::warn!(block = id, node = %node.datanode_uuid, "initReplicaRecovery failed: {e}");
                None
            }
        };
        reports.push(report);
    }
    let decision = decide(b.generation_stamp, &reports)
        .map_err(|source| RecoveryError::Sync { id, source })?;
    let mut commit = CommitBlockSynchronizationRequestProto {
        block: b.clone(),
        new_gen_stamp: recovery_id,
        new_length: 0,
        close_file: true,
        delete_block: false,
        new_taragets: Vec::new(),
        new_target_storages: Vec::new(),
    };
    // A truncate's recovery cuts every participant to the truncate block's length.
    let truncate_to = rb.truncate_block.as_ref().and_then(|t| t.num_bytes);
    match decision {
        SyncDecision::DeleteBlock => commit.delete_block = true,
        SyncDecision::Sync { len, participants } => {
            let len = truncate_to.unwrap_or(len);
            commit.new_length = len;
            for i in participants {
                let node = nodes[i];
                let Some(rep) = reports[i] else { continue };
                if rep.len < len {
                    continue;
                }
                // Each replica is named as it reported itself (its GS and length).
                let update = UpdateReplicaUnderRecoveryRequestProto {
                    block: ExtendedBlockProto {
                        pool_id: b.pool_id.clone(),
                        block_id: id,
                        generation_stamp: rep.gs,
                        num_bytes: Some(rep.len),
                    },
                    recovery_id,
                    new_length: len,
                    new_block_id: None,
                };
                match update_on(&local, my_uuid, user, node, &update).await {
                    Ok(r) => {
                        commit.new_taragets.push(node.clone());
                        commit
                            .new_target_storages
                            .push(r.storage_uuid.unwrap_or_default());
                    }
                    Err(e) => tracing::warn!(
                        block = id,
                        node = %node.datanode_uuid,
                        "updateReplicaUnderRecovery failed: {e}"
                    ),
                }
            }
            if commit.new_taragets.is_empty() {
                return Err(RecoveryError::NoneUpdated { id });
            }
        }
    }
    let nn = RpcClient::connect(nn_addr, DATANODE_PROTOCOL, user)
        .await
        .map_err(|e| RecoveryError::Commit {
            id,
            msg: e.to_string(),
        })?;
    let _: CommitBlockSynchronizationResponseProto = nn
        .call("commitBlockSynchronization", &commit)
        .await
        .map_err(|e| RecoveryError::Commit {
            id,
            msg: e.to_string(),
        })?;
    tracing::info!(
        block = id,
        recovery_id,
        length = commit.new_length,
        replicas = commit.new_taragets.len(),
        deleted = commit.delete_block,
        "block recovered"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use async_trait::async_trait;
    use bytes::Bytes;
    use parking_lot::Mutex;
    use prost::Message;
    use rhdfs_conf::Configuration;
    use rhdfs_ipc::{CallContext, RpcError, RpcServer, RpcService, ServerConfig, encode_response};
    use rhdfs_proto::datanode::{
        CommitBlockSynchronizationRequestProto, CommitBlockSynchronizationResponseProto,
        RecoveringBlockProto,
    };
    use rhdfs_proto::hdfs::{
        DatanodeIdProto, DatanodeInfoProto, ExtendedBlockProto, LocatedBlockProto,
    };

    use super::recover_block;
    use crate::checksum::{ChecksumSpec, ChecksumType};
    use crate::dataset::Dataset;
    use crate::recovery::InterDatanodeService;
    use crate::replica::ReplicaState;

    const BP: &str = "BP-1-127.0.0.1-1";

    #[derive(Default)]
    struct FakeNameNode {
        got: Arc<Mutex<Vec<CommitBlockSynchronizationRequestProto>>>,
    }

    #[async_trait]
    impl RpcService for FakeNameNode {
        async fn call(&self, ctx: CallContext, body: Bytes) -> Result<Bytes, RpcError> {
            assert_eq!(ctx.method, "commitBlockSynchronization");
            let req = CommitBlockSynchronizationRequestProto::decode(body).unwrap();
            self.got.lock().push(req);
            Ok(encode_response(&CommitBlockSynchronizationResponseProto {}))
        }
    }

    fn node(uuid: &str, port: u16) -> DatanodeInfoProto {
        DatanodeInfoProto {
            id: DatanodeIdProto {
                ip_addr: "127.0.0.1".into(),
                host_name: "localhost".into(),
                datanode_uuid: uuid.into(),
                ipc_port: u32::from(port),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn primary_brings_replicas_to_the_shortest_rbw_and_commits() {
        let spec = ChecksumSpec::new(ChecksumType::Crc32c, 512);
        let data: Vec<u8> = (0..1300u32).map(|i| (i * 13) as u8).collect();
        let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let ds1 = Dataset::open(&[d1.path().to_path_buf()], 0).unwrap();
        let ds2 = Dataset::open(&[d2.path().to_path_buf()], 0).unwrap();
        let id = (1 << 30) + 1;
        let mut w1 = ds1.create_rbw(BP, id, 1001, spec, 0).unwrap();
        w1.write_at(0, &data).unwrap();
        let mut w2 = ds2.create_rbw(BP, id, 1001, spec, 0).unwrap();
        w2.write_at(0, &data[..1000]).unwrap();
        // The writer is gone: the replicas stay RBW with their writers dropped.
        drop((w1, w2));

        let cfg = ServerConfig::from_conf(&Configuration::new()).unwrap();
        let remote = RpcServer::bind(
            "127.0.0.1:0".parse().unwrap(),
            Arc::new(InterDatanodeService::new(ds2.clone())),
            cfg.clone(),
        )
        .await
        .unwrap();
        let got = Arc::new(Mutex::new(Vec::new()));
        let nn = FakeNameNode { got: got.clone() };
        let nn_server = RpcServer::bind("127.0.0.1:0".parse().unwrap(), Arc::new(nn), cfg)
            .await
            .unwrap();
        let rb = RecoveringBlockProto {
            new_gen_stamp: 1005,
            block: LocatedBlockProto {
                b: ExtendedBlockProto {
                    pool_id: BP.into(),
                    block_id: id,
                    generation_stamp: 1001,
                    num_bytes: Some(0),
                },
                locs: vec![node("dn1", 1), node("dn2", remote.local_addr().port())],
                ..Default::default()
            },
            truncate_block: None,
            ec_policy: None,
            block_indices: None,
        };
        recover_block(
            &ds1,
            "dn1",
            "hdfs",
            &nn_server.local_addr().to_string(),
            &rb,
        )
        .await
        .unwrap();
        for ds in [&ds1, &ds2] {
            let r = ds.get(BP, id).unwrap();
            assert_eq!(r.state, ReplicaState::Finalized);
            assert_eq!((r.gs, r.num_bytes), (1005, 1000));
        }
        let got = got.lock().clone();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].new_gen_stamp, 1005);
        assert_eq!(got[0].new_length, 1000);
        assert!(got[0].close_file && !got[0].delete_block);
        assert_eq!(got[0].new_taragets.len(), 2);
        remote.shutdown().await;
        nn_server.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn truncate_recovery_cuts_finalized_replicas_to_the_truncate_block() {
        let spec = ChecksumSpec::new(ChecksumType::Crc32c, 512);
        let data: Vec<u8> = (0..1300u32).map(|i| (i * 7) as u8).collect();
        let d1 = tempfile::tempdir().unwrap();
        let ds1 = Dataset::open(&[d1.path().to_path_buf()], 0).unwrap();
        let id = (1 << 30) + 2;
        let mut w1 = ds1.create_rbw(BP, id, 1001, spec, 0).unwrap();
        w1.write_at(0, &data).unwrap();
        w1.finalize().unwrap();
        let cfg = ServerConfig::from_conf(&Configuration::new()).unwrap();
        let got = Arc::new(Mutex::new(Vec::new()));
        let nn = FakeNameNode { got: got.clone() };
        let nn_server = RpcServer::bind("127.0.0.1:0".parse().unwrap(), Arc::new(nn), cfg)
            .await
            .unwrap();
        let rb = RecoveringBlockProto {
            new_gen_stamp: 1007,
            block: LocatedBlockProto {
                b: ExtendedBlockProto {
                    pool_id: BP.into(),
                    block_id: id,
                    generation_stamp: 1001,
                    num_bytes: Some(1300),
                },
                locs: vec![node("dn1", 1)],
                ..Default::default()
            },
            truncate_block: Some(rhdfs_proto::hdfs::BlockProto {
                block_id: id,
                gen_stamp: 1007,
                num_bytes: Some(700),
            }),
            ec_policy: None,
            block_indices: None,
        };
        recover_block(
            &ds1,
            "dn1",
            "hdfs",
            &nn_server.local_addr().to_string(),
            &rb,
        )
        .await
        .unwrap();
        let r = ds1.get(BP, id).unwrap();
        assert_eq!(r.state, ReplicaState::Finalized);
        assert_eq!((r.gs, r.num_bytes), (1007, 700));
        let got = got.lock().clone();
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].new_gen_stamp, got[0].new_length), (1007, 700));
        assert!(got[0].close_file && !got[0].delete_block);
        nn_server.shutdown().await;
    }
}
