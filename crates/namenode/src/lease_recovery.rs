//! The NameNode's side of block recovery, for files whose writer is gone and whose last
//! block is still being written: a new generation stamp (the recovery id) is logged, a
//! primary DataNode among the block's locations gets a DNA_RECOVERBLOCK command with its
//! next heartbeat, and its `commitBlockSynchronization` closes the file at the length the
//! replicas agreed on.
//!
//! Commands wait in [`BlockRecoveries`] until the primary heartbeats; the NameNode's
//! router appends them to the block manager's heartbeat answer ([`append_commands`]).
//! A recovery that got no answer within [`RECOVERY_RETRY`] may be started again with a
//! newer recovery id.

use std::collections::HashMap;
use std::time::Duration;

use parking_lot::Mutex;
use rhdfs_blockmanager::Block;
use rhdfs_proto::datanode::{
    BlockRecoveryCommandProto, CommitBlockSynchronizationRequestProto, DatanodeCommandProto,
    HeartbeatResponseProto, RecoveringBlockProto, datanode_command_proto,
};

use crate::edit::EditOp;
use crate::error::{FsError, FsResult};
use crate::fsdir::BlockInfo;
use crate::namespace::OpenFile;
use crate::namesystem::Namesystem;

/// How long a recovery may go unanswered before another is started.
pub const RECOVERY_RETRY: Duration = Duration::from_secs(30);

#[derive(Debug, Clone)]
struct Recovery {
    recovery_id: u64,
    started: Duration,
}

/// Recoveries in progress and the commands waiting for their primary's heartbeat.
#[derive(Debug, Default)]
pub struct BlockRecoveries {
    in_progress: Mutex<HashMap<u64, Recovery>>,
    pending: Mutex<HashMap<String, Vec<RecoveringBlockProto>>>,
}

impl BlockRecoveries {
    /// The recovery id of the block's recovery in progress.
    pub fn recovery_id(&self, block_id: u64) -> Option<u64> {
        self.in_progress
            .lock()
            .get(&block_id)
            .map(|r| r.recovery_id)
    }

    /// Takes the commands waiting for DataNode `uuid`.
    pub fn take_commands(&self, uuid: &str) -> Vec<RecoveringBlockProto> {
        self.pending.lock().remove(uuid).unwrap_or_default()
    }

    fn running(&self, block_id: u64, now: Duration) -> bool {
        self.in_progress
            .lock()
            .get(&block_id)
            .is_some_and(|r| now.saturating_sub(r.started) < RECOVERY_RETRY)
    }
}

/// Adds the block recovery commands waiting for the heartbeat's sender to its answer.
pub fn append_commands(
    recoveries: &BlockRecoveries,
    uuid: &str,
    resp: &mut HeartbeatResponseProto,
) -> usize {
    let blocks = recoveries.take_commands(uuid);
    let n = blocks.len();
    if n > 0 {
        resp.cmds.push(DatanodeCommandProto {
            cmd_type: datanode_command_proto::Type::BlockRecoveryCommand as i32,
            recovery_cmd: Some(BlockRecoveryCommandProto { blocks }),
            ..Default::default()
        });
    }
    n
}

impl Namesystem {
    /// The block recoveries of this namesystem.
    pub fn block_recoveries(&self) -> &BlockRecoveries {
        &self.recoveries
    }

    /// Starts (or leaves running) the recovery of `of`'s last block `last`. Returns true
    /// when a command was queued for a primary DataNode.
    pub fn start_block_recovery(&self, of: &OpenFile, last: &BlockInfo) -> FsResult<bool> {
        let now = self.now();
        if self.recoveries.running(last.id, now.mono) {
            return Ok(false);
        }
        let locations = self.block_manager().locations(last.id);
        let Some(primary) = locations.first() else {
            tracing::warn!(
                file = of.file,
                block = last.id,
                "block recovery impossible: no live location for the last block"
            );
            return Ok(false);
        };
        let recovery_id = self.with_ns(|ns| {
            let gs = ns.last_generation_stamp() + 1;
            ns.log_and_apply(EditOp::SetGenstamp { gs }, now.mono)?;
            Ok::<_, FsError>(gs)
        })?;
        let pool = self.block_pool_id().to_string();
        let block = crate::rpc::convert::located_from_parts(&pool, last, 0, &locations, false);
        let uuid = primary.info.id.datanode_uuid.clone();
        self.recoveries.in_progress.lock().insert(
            last.id,
            Recovery {
                recovery_id,
                started: now.mono,
            },
        );
        self.recoveries
            .pending
            .lock()
            .entry(uuid.clone())
            .or_default()
            .push(RecoveringBlockProto {
                new_gen_stamp: recovery_id,
                block,
                truncate_block: None,
                ec_policy: None,
                block_indices: None,
            });
        tracing::info!(
            file = of.file,
            block = last.id,
            recovery_id,
            primary = %uuid,
            "block recovery started for the lease of {}",
            of.holder
        );
        Ok(true)
    }

    /// commitBlockSynchronization from the primary DataNode: the last block takes the new
    /// generation stamp and length (or is removed), and the file is closed when asked.
    pub fn commit_block_synchronization(
        &self,
        req: &CommitBlockSynchronizationRequestProto,
    ) -> FsResult<()> {
        let id = req.block.block_id;
        let old_gs = req.block.generation_stamp;
        let now = self.now();
        let expected = self.recoveries.recovery_id(id);
        let file = self.with_ns(|ns| ns.block_owner(id));
        let Some(file) = file else {
            // A block deleted meanwhile (or already dropped by an earlier call).
            self.recoveries.in_progress.lock().remove(&id);
            return Err(FsError::Io(format!(
                "Block (=BP:{}:blk_{id}_{old_gs}) not found",
                self.block_pool_id()
            )));
        };
        let of = self.with_ns(|ns| ns.open_file_by_id(file));
        let Some(of) = of else {
            // Closed already: a repeated call after the file was closed succeeds.
            self.recoveries.in_progress.lock().remove(&id);
            return Ok(());
        };
        if expected.is_some_and(|r| r != req.new_gen_stamp) {
            return Err(FsError::Io(format!(
                "The recovery id {} does not match current recovery id {} for block blk_{id}_{old_gs}",
                req.new_gen_stamp,
                expected.unwrap_or(0)
            )));
        }
        if of.blocks.last().map(|b| b.id) != Some(id) {
            return Err(FsError::Io(format!(
                "blk_{id}_{old_gs} is not the last block of the file it belongs to"
            )));
        }
        let new = BlockInfo {
            id,
            gs: req.new_gen_stamp,
            num_bytes: req.new_length,
        };
        if req.delete_block {
            self.with_ns(|ns| {
                ns.log_and_apply(EditOp::AbandonBlock { file, block_id: id }, now.mono)
            })?;
            self.block_manager().abandon_block(id);
        } else {
            let nodes: Vec<String> = req
                .new_taragets
                .iter()
                .map(|d| d.datanode_uuid.clone())
                .collect();
            let old = self
                .block_manager()
                .get_block(id)
                .map(|(b, _)| b)
                .unwrap_or(Block::new(id, old_gs, req.new_length));
            let new_block = Block::new(id, new.gs, new.num_bytes);
            self.block_manager()
                .update_pipeline(old, new_block, &nodes, &req.new_target_storages);
            if req.close_file {
                self.block_manager().commit_block(new_block)?;
            }
            self.with_ns(|ns| {
                ns.log_and_apply(EditOp::UpdateLastBlock { file, block: new }, now.mono)
            })?;
        }
        if req.close_file {
            let of = OpenFile {
                blocks: self
                    .with_ns(|ns| ns.open_file_by_id(file))
                    .map(|o| o.blocks)
                    .unwrap_or_default(),
                ..of
            };
            let closed = self.with_ns(|ns| ns.release_lease(&of, None, false, now))?;
            if !req.delete_block {
                self.block_manager().try_complete_block(id);
            }
            tracing::info!(
                file,
                block = id,
                length = req.new_length,
                closed,
                "commitBlockSynchronization"
            );
        }
        self.recoveries.in_progress.lock().remove(&id);
        Ok(())
    }
}

/// The DatanodeProtocol calls the namespace takes part in: a heartbeat (answered by the
/// block manager, plus any block recovery for the sender) and commitBlockSynchronization
/// (answered once its edits are durable).
pub async fn route_datanode_call(
    fs: &std::sync::Arc<Namesystem>,
    datanode: &rhdfs_blockmanager::DatanodeProtocolService,
    ctx: rhdfs_ipc::CallContext,
    body: bytes::Bytes,
) -> Result<bytes::Bytes, rhdfs_ipc::RpcError> {
    use rhdfs_ipc::{RpcService, decode_request, encode_response};
    use rhdfs_proto::datanode::{CommitBlockSynchronizationResponseProto, HeartbeatRequestProto};
    if ctx.method == "commitBlockSynchronization" {
        let req: CommitBlockSynchronizationRequestProto = decode_request(&body)?;
        let result = fs.commit_block_synchronization(&req);
        fs.sync_edits().await?;
        result?;
        return Ok(encode_response(&CommitBlockSynchronizationResponseProto {}));
    }
    let uuid = decode_request::<HeartbeatRequestProto>(&body)
        .map(|r| r.registration.datanode_id.datanode_uuid)
        .unwrap_or_default();
    let out = datanode.call(ctx, body).await?;
    if fs.block_recoveries().pending.lock().get(&uuid).is_none() {
        return Ok(out);
    }
    let mut resp: HeartbeatResponseProto = decode_request(&out)?;
    append_commands(fs.block_recoveries(), &uuid, &mut resp);
    Ok(encode_response(&resp))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use bytes::Bytes;
    use prost::Message;
    use rhdfs_blockmanager::{
        BlockManager, BlockManagerConfig, DatanodeId, NamespaceInfo, StorageReport,
    };
    use rhdfs_conf::Configuration;
    use rhdfs_conf::clock::{ManualClock, SharedClock};
    use rhdfs_ipc::{CallContext, RpcError, RpcService};
    use rhdfs_proto::datanode::CommitBlockSynchronizationRequestProto;
    use rhdfs_proto::hdfs::*;
    use rhdfs_proto::protocols::CLIENT_PROTOCOL;

    use crate::namespace::{Namespace, NamespaceConfig, Now};
    use crate::namesystem::{Namesystem, NamesystemSettings};
    use crate::rpc::{ClientProtocolService, server_defaults};

    async fn call<Req: Message, Resp: Message + Default>(
        svc: &ClientProtocolService,
        method: &str,
        req: &Req,
    ) -> Result<Resp, RpcError> {
        let ctx = CallContext {
            user: "root".into(),
            protocol: CLIENT_PROTOCOL.into(),
            method: method.into(),
            client_id: Bytes::new(),
            call_id: 0,
            retry_count: 0,
            peer: "127.0.0.1:50000".parse().unwrap(),
        };
        let out = svc.call(ctx, Bytes::from(req.encode_to_vec())).await?;
        Ok(Resp::decode(out).unwrap())
    }

    #[tokio::test]
    async fn recover_lease_queues_a_recovery_and_commit_sync_closes_the_file() {
        let clock = ManualClock::shared(1_700_000_000_000);
        let shared: SharedClock = clock.clone();
        let bm = BlockManager::with_config(
            BlockManagerConfig {
                seed: Some(1),
                ..BlockManagerConfig::default()
            },
            shared.clone(),
            NamespaceInfo {
                namespace_id: 1,
                cluster_id: "CID-t".into(),
                block_pool_id: "BP-1-127.0.0.1-1".into(),
                ctime: 0,
            },
        );
        bm.register_datanode(
            DatanodeId {
                uuid: "dn1".into(),
                ip_addr: "127.0.0.1".into(),
                host_name: "localhost".into(),
                xfer_port: 9001,
                ..DatanodeId::default()
            },
            "3.5.0",
        );
        bm.heartbeat(
            "dn1",
            vec![StorageReport {
                storage_id: "DS-1".into(),
                storage_type: 1,
                capacity: 1 << 40,
                remaining: 1 << 40,
                ..StorageReport::default()
            }],
            0,
            0,
            false,
        );
        let ns = Namespace::new(
            NamespaceConfig {
                superuser: "root".into(),
                ..NamespaceConfig::default()
            },
            Now {
                wall_ms: shared.now_millis(),
                mono: shared.monotonic(),
            },
        );
        let fs = Namesystem::new(
            ns,
            bm.clone(),
            shared,
            NamesystemSettings::default(),
            Arc::new(|_u: &str| Vec::new()),
        );
        let svc =
            ClientProtocolService::new(fs.clone(), server_defaults(&Configuration::new()).unwrap());
        let _: CreateResponseProto = call(
            &svc,
            "create",
            &CreateRequestProto {
                src: "/f".into(),
                masked: FsPermissionProto { perm: 0o644 },
                client_name: "writer".into(),
                create_flag: 1,
                create_parent: true,
                replication: 1,
                block_size: 1 << 20,
                ..Default::default()
            },
        )
        .await
        .unwrap();
        let ab: AddBlockResponseProto = call(
            &svc,
            "addBlock",
            &AddBlockRequestProto {
                src: "/f".into(),
                client_name: "writer".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
        let b = ab.block.b;
        let _: FsyncResponseProto = call(
            &svc,
            "fsync",
            &FsyncRequestProto {
                src: "/f".into(),
                client: "writer".into(),
                last_block_length: Some(100),
                file_id: None,
            },
        )
        .await
        .unwrap();
        let rl = RecoverLeaseRequestProto {
            src: "/f".into(),
            client_name: "other".into(),
        };
        let r: RecoverLeaseResponseProto = call(&svc, "recoverLease", &rl).await.unwrap();
        assert!(!r.result);
        let cmds = fs.block_recoveries().take_commands("dn1");
        assert_eq!(cmds.len(), 1);
        let rb = &cmds[0];
        assert_eq!(rb.block.b.block_id, b.block_id);
        assert!(rb.new_gen_stamp > b.generation_stamp);
        // A second recoverLease while it runs queues nothing more.
        let r: RecoverLeaseResponseProto = call(&svc, "recoverLease", &rl).await.unwrap();
        assert!(!r.result);
        assert!(fs.block_recoveries().take_commands("dn1").is_empty());

        // A stale recovery id is refused.
        let mut req = CommitBlockSynchronizationRequestProto {
            block: b.clone(),
            new_gen_stamp: rb.new_gen_stamp - 1,
            new_length: 150,
            close_file: true,
            delete_block: false,
            new_taragets: vec![rb.block.locs[0].id.clone()],
            new_target_storages: vec!["DS-1".into()],
        };
        assert!(fs.commit_block_synchronization(&req).is_err());
        req.new_gen_stamp = rb.new_gen_stamp;
        fs.commit_block_synchronization(&req).unwrap();
        let closed: IsFileClosedResponseProto = call(
            &svc,
            "isFileClosed",
            &IsFileClosedRequestProto { src: "/f".into() },
        )
        .await
        .unwrap();
        assert!(closed.result);
        let st: GetFileInfoResponseProto = call(
            &svc,
            "getFileInfo",
            &GetFileInfoRequestProto { src: "/f".into() },
        )
        .await
        .unwrap();
        assert_eq!(st.fs.unwrap().length, 150);
        // Repeated by a retrying DataNode: still fine.
        fs.commit_block_synchronization(&req).unwrap();
    }
}
