//! The NameNode's side of block recovery, for files whose writer is gone and whose last
//! block is still being written: a new generation stamp (the recovery id) is logged, the
//! block manager marks the block UNDER_RECOVERY and picks a primary DataNode among its
//! live locations, the primary gets a DNA_RECOVERBLOCK command with its next heartbeat,
//! and its `commitBlockSynchronization` closes the file at the length the replicas
//! agreed on.
//!
//! Commands wait in `BlockRecoveries` (`block_recoveries.rs`) until the primary
//! heartbeats; the DatanodeProtocol heartbeat handler (`rpc/datanode/heartbeat.rs`) adds
//! them to its answer, and `rpc/datanode/commit_sync.rs` serves the primary's answer. A recovery that got no answer within the block recovery timeout,
//! or whose primary died, is started again with a newer recovery id and, when there is
//! one, a primary not tried yet.

use rhdfs_blockmanager::Block;
use rhdfs_proto::datanode::{CommitBlockSynchronizationRequestProto, RecoveringBlockProto};
use rhdfs_proto::hdfs::BlockProto;

use crate::block_recoveries::BlockRecoveries;
use crate::edit::EditOp;
use crate::error::{FsError, FsResult};
use crate::fsdir::FileBlock;
use crate::namespace::OpenFile;
use crate::namesystem::{Applied, Effects, Namesystem};

impl Namesystem {
    /// The block recoveries of this namesystem.
    pub fn block_recoveries(&self) -> &BlockRecoveries {
        &self.recoveries
    }

    /// Starts (or leaves running) the recovery of `of`'s last block `last` (Hadoop's
    /// addBlockRecoveryAttempt + initializeBlockRecovery). A recovery is left running
    /// while it is younger than the block recovery timeout and its primary is alive (or,
    /// when it found no live location, while there still is none). Returns true when a
    /// command was queued for a primary DataNode.
    pub fn start_block_recovery(&self, of: &OpenFile, last: &FileBlock) -> FsResult<bool> {
        let _starting = self.recoveries.starting();
        let now = self.now();
        let bm = self.block_manager();
        let timeout = self.settings().block_recovery_timeout;
        if let Some(primary) = self.recoveries.running(last.id, now.mono, timeout) {
            let stuck = match &primary {
                Some(p) => !bm.is_datanode_alive(p),
                None => !bm.locations(last.id).is_empty(),
            };
            if !stuck {
                return Ok(false);
            }
        }
        let recovery_id = self.with_ns(|ns| {
            let gs = ns.last_generation_stamp() + 1;
            ns.log_and_apply(EditOp::SetGenstamp { gs }, now.mono)?;
            Ok::<_, FsError>(gs)
        })?;
        let targets = bm.initialize_block_recovery(last.id, recovery_id)?;
        self.recoveries.drop_commands(last.id);
        let uuid = targets.as_ref().map(|(p, _)| p.info.id.uuid.clone());
        self.recoveries
            .begin(last.id, recovery_id, now.mono, uuid.clone());
        let (Some(uuid), Some((_, locations))) = (uuid, targets) else {
            tracing::warn!(
                file = of.file,
                block = last.id,
                recovery_id,
                "block recovery impossible for now: no live location for the last block"
            );
            return Ok(false);
        };
        let pool = self.block_pool_id().to_string();
        let block = crate::rpc::convert::located_from_parts(&pool, last, 0, &locations, false);
        self.recoveries.queue(
            uuid.clone(),
            RecoveringBlockProto {
                new_gen_stamp: recovery_id,
                block,
                // A truncate's recovery cuts the replicas to this length (Hadoop's
                // truncate block, its generation stamp the recovery id).
                truncate_block: of.truncate_last_to.map(|len| BlockProto {
                    block_id: last.id,
                    gen_stamp: recovery_id,
                    num_bytes: Some(len),
                }),
                ec_policy: None,
                block_indices: None,
            },
        );
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
    ) -> FsResult<Applied<()>> {
        let id = req.block.block_id;
        let old_gs = req.block.generation_stamp;
        let now = self.now();
        let file = self.with_ns(|ns| ns.block_owner(id));
        let Some(file) = file else {
            // A block deleted meanwhile (or already dropped by an earlier call).
            self.recoveries.finish(id);
            return Err(FsError::Io(format!(
                "Block (=BP:{}:blk_{id}_{old_gs}) not found",
                self.block_pool_id()
            )));
        };
        let of = self.with_ns(|ns| ns.open_file_by_id(file));
        let Some(of) = of else {
            // Closed already: a repeated call after the file was closed succeeds.
            self.recoveries.finish(id);
            return Ok(Applied::plain("commit_block_synchronization", ()));
        };
        // Only the recovery the block manager has on record may commit (Hadoop compares
        // with the block's recovery id, 0 when no recovery was started).
        let expected = self
            .block_manager()
            .block_recovery(id)
            .map_or(0, |r| r.recovery_id);
        if expected != req.new_gen_stamp {
            return Err(FsError::Io(format!(
                "The recovery id {} does not match current recovery id {expected} for block {}:blk_{id}_{old_gs}",
                req.new_gen_stamp,
                self.block_pool_id()
            )));
        }
        if of.blocks.last().map(|b| b.id) != Some(id) {
            return Err(FsError::Io(format!(
                "blk_{id}_{old_gs} is not the last block of the file it belongs to"
            )));
        }
        let new = FileBlock {
            id,
            gs: req.new_gen_stamp,
            num_bytes: req.new_length,
        };
        let mut effects = Effects::None;
        if req.delete_block {
            self.with_ns(|ns| {
                ns.log_and_apply(EditOp::AbandonBlock { file, block_id: id }, now.mono)
            })?;
            effects = Effects::Abandon(id);
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
        self.recoveries.finish(id);
        Ok(Applied::new("commit_block_synchronization", (), effects))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use bytes::Bytes;
    use prost::Message;
    use rhdfs_blockmanager::{
        BlockManager, BlockManagerConfig, BlockUcState, DatanodeId, NamespaceInfo, StorageReport,
    };
    use rhdfs_conf::Configuration;
    use rhdfs_conf::clock::{ManualClock, SharedClock};
    use rhdfs_ipc::{CallContext, RpcError, RpcService};
    use rhdfs_proto::datanode::CommitBlockSynchronizationRequestProto;
    use rhdfs_proto::hdfs::*;
    use rhdfs_proto::protocols::CLIENT_PROTOCOL;

    use crate::block_recoveries::block_recovery_timeout;
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
            forwarded: None,
        };
        let out = svc.call(ctx, Bytes::from(req.encode_to_vec())).await?;
        Ok(Resp::decode(out).unwrap())
    }

    const HARD_LIMIT: Duration = Duration::from_secs(120);

    struct Env {
        clock: Arc<ManualClock>,
        bm: Arc<BlockManager>,
        fs: Arc<Namesystem>,
        svc: ClientProtocolService,
    }

    fn heartbeat(bm: &BlockManager, uuid: &str) {
        bm.heartbeat(
            uuid,
            vec![StorageReport {
                storage_id: format!("DS-{uuid}"),
                storage_type: 1,
                capacity: 1 << 40,
                remaining: 1 << 40,
                ..StorageReport::default()
            }],
            0,
            0,
            false,
        );
    }

    /// A namesystem with DataNodes `dns`, registered and heartbeating one second apart
    /// in that order (the last one has the most recent heartbeat).
    fn env(dns: &[&str], settings: NamesystemSettings) -> Env {
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
        for (i, dn) in dns.iter().enumerate() {
            let port = 9001 + u32::try_from(i).unwrap();
            // Checked below through the locations addBlock hands out.
            let _ = bm.register_datanode(
                DatanodeId {
                    uuid: (*dn).into(),
                    ip_addr: "127.0.0.1".into(),
                    host_name: "localhost".into(),
                    xfer_port: port,
                    ..DatanodeId::default()
                },
                "3.5.0",
            );
            heartbeat(&bm, dn);
            clock.advance(Duration::from_secs(1));
        }
        let ns = Namespace::new(
            NamespaceConfig {
                superuser: "root".into(),
                // Short enough for the lease monitor test.
                hard_limit: HARD_LIMIT,
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
            settings,
            Arc::new(|_u: &str| Vec::new()),
        );
        let svc =
            ClientProtocolService::new(fs.clone(), server_defaults(&Configuration::new()).unwrap());
        Env { clock, bm, fs, svc }
    }

    /// Creates `/f` (replication `repl`), adds a block and hflushes 100 bytes of it;
    /// returns the block.
    async fn open_file_with_block(svc: &ClientProtocolService, repl: u32) -> ExtendedBlockProto {
        let _: CreateResponseProto = call(
            svc,
            "create",
            &CreateRequestProto {
                src: "/f".into(),
                masked: FsPermissionProto { perm: 0o644 },
                client_name: "writer".into(),
                create_flag: 1,
                create_parent: true,
                replication: repl,
                block_size: 1 << 20,
                ..Default::default()
            },
        )
        .await
        .unwrap();
        let ab: AddBlockResponseProto = call(
            svc,
            "addBlock",
            &AddBlockRequestProto {
                src: "/f".into(),
                client_name: "writer".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
        assert_eq!(ab.block.locs.len(), repl as usize);
        let _: FsyncResponseProto = call(
            svc,
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
        ab.block.b
    }

    async fn recover_lease(svc: &ClientProtocolService) -> bool {
        let rl = RecoverLeaseRequestProto {
            src: "/f".into(),
            client_name: "other".into(),
        };
        let r: RecoverLeaseResponseProto = call(svc, "recoverLease", &rl).await.unwrap();
        r.result
    }

    async fn is_closed(svc: &ClientProtocolService) -> bool {
        let closed: IsFileClosedResponseProto = call(
            svc,
            "isFileClosed",
            &IsFileClosedRequestProto { src: "/f".into() },
        )
        .await
        .unwrap();
        closed.result
    }

    fn commit_sync(
        b: &ExtendedBlockProto,
        recovery_id: u64,
        dns: &[&str],
    ) -> CommitBlockSynchronizationRequestProto {
        CommitBlockSynchronizationRequestProto {
            block: b.clone(),
            new_gen_stamp: recovery_id,
            new_length: 150,
            close_file: true,
            delete_block: false,
            new_taragets: dns
                .iter()
                .map(|d| DatanodeIdProto {
                    datanode_uuid: (*d).into(),
                    ..Default::default()
                })
                .collect(),
            new_target_storages: dns.iter().map(|d| format!("DS-{d}")).collect(),
        }
    }

    #[test]
    fn recovery_timeout_is_thirty_heartbeats() {
        assert_eq!(
            block_recovery_timeout(Duration::from_secs(3)),
            Duration::from_secs(90)
        );
        assert_eq!(
            NamesystemSettings::default().block_recovery_timeout,
            Duration::from_secs(90)
        );
        assert_eq!(
            NamesystemSettings::default().lease_recheck,
            Duration::from_millis(2000)
        );
    }

    #[tokio::test]
    async fn recover_lease_queues_a_recovery_and_commit_sync_closes_the_file() {
        let Env { fs, svc, bm, .. } = env(&["dn1"], NamesystemSettings::default());
        let b = open_file_with_block(&svc, 1).await;
        assert!(!recover_lease(&svc).await);
        let cmds = fs.block_recoveries().take_commands("dn1");
        assert_eq!(cmds.len(), 1);
        let rb = &cmds[0];
        assert_eq!(rb.block.b.block_id, b.block_id);
        assert!(rb.new_gen_stamp > b.generation_stamp);
        assert_eq!(
            bm.get_block(b.block_id).map(|(_, s)| s),
            Some(BlockUcState::UnderRecovery)
        );
        // A second recoverLease while it runs queues nothing more.
        assert!(!recover_lease(&svc).await);
        assert!(fs.block_recoveries().take_commands("dn1").is_empty());

        // A stale recovery id is refused.
        let mut req = commit_sync(&b, rb.new_gen_stamp - 1, &["dn1"]);
        assert!(fs.commit_block_synchronization(&req).is_err());
        req.new_gen_stamp = rb.new_gen_stamp;
        let applied = fs.commit_block_synchronization(&req).unwrap();
        fs.commit(applied).await.unwrap();
        assert!(is_closed(&svc).await);
        let st: GetFileInfoResponseProto = call(
            &svc,
            "getFileInfo",
            &GetFileInfoRequestProto { src: "/f".into() },
        )
        .await
        .unwrap();
        assert_eq!(st.fs.unwrap().length, 150);
        assert_eq!(
            bm.get_block(b.block_id).map(|(_, s)| s),
            Some(BlockUcState::Committed)
        );
        assert!(bm.block_recovery(b.block_id).is_none());
        // Repeated by a retrying DataNode: still fine.
        let applied = fs.commit_block_synchronization(&req).unwrap();
        fs.commit(applied).await.unwrap();
    }

    /// What the cut-off writer ("writer") gets for addBlock and complete.
    async fn writer_calls_fail(svc: &ClientProtocolService, owner: &str) {
        let add = call::<_, AddBlockResponseProto>(
            svc,
            "addBlock",
            &AddBlockRequestProto {
                src: "/f".into(),
                client_name: "writer".into(),
                ..Default::default()
            },
        )
        .await;
        let complete = call::<_, CompleteResponseProto>(
            svc,
            "complete",
            &CompleteRequestProto {
                src: "/f".into(),
                client_name: "writer".into(),
                ..Default::default()
            },
        )
        .await;
        for r in [add.err(), complete.err()] {
            let e = format!("{r:?}");
            assert!(e.contains("LeaseExpiredException"), "{e}");
            assert!(
                e.contains(&format!(
                    "Client (=writer) is not the lease owner (={owner}"
                )),
                "{e}"
            );
        }
    }

    #[tokio::test]
    async fn recovery_takes_the_lease_from_the_cut_off_writer() {
        // recoverLease passes the lease to its caller.
        let Env { svc, .. } = env(&["dn1"], NamesystemSettings::default());
        open_file_with_block(&svc, 1).await;
        assert!(!recover_lease(&svc).await);
        writer_calls_fail(&svc, "other").await;
        assert!(!is_closed(&svc).await);

        // The lease monitor passes it to the NameNode.
        let Env { clock, fs, svc, .. } = env(&["dn1"], NamesystemSettings::default());
        open_file_with_block(&svc, 1).await;
        clock.advance(HARD_LIMIT + Duration::from_secs(1));
        assert_eq!(fs.check_leases().await, 0);
        writer_calls_fail(&svc, crate::leases::NAMENODE_LEASE_HOLDER).await;
        let mono = fs.now().mono;
        let holders = fs.with_ns(|ns| ns.hard_expired_leases(mono));
        assert_eq!(holders.len(), 1);
        assert_eq!(holders[0].0, crate::leases::NAMENODE_LEASE_HOLDER);
    }

    #[tokio::test]
    async fn unanswered_recovery_is_restarted_after_the_timeout_with_another_primary() {
        let Env {
            clock, fs, svc, bm, ..
        } = env(&["dn1", "dn2", "dn3"], NamesystemSettings::default());
        let b = open_file_with_block(&svc, 3).await;
        // No recovery started yet: commitBlockSynchronization has nothing to match.
        let early =
            fs.commit_block_synchronization(&commit_sync(&b, b.generation_stamp + 1, &["dn1"]));
        assert!(early.is_err());

        assert!(!recover_lease(&svc).await);
        let first = bm.block_recovery(b.block_id).expect("recovery on record");
        // dn3 heartbeated last.
        assert_eq!(first.primary.as_deref(), Some("dn3"));
        let cmds = fs.block_recoveries().take_commands("dn3");
        assert_eq!(cmds.len(), 1);
        assert_eq!(cmds[0].new_gen_stamp, first.recovery_id);
        assert_eq!(cmds[0].block.locs.len(), 3);

        // Just under the timeout: left running, still UNDER_RECOVERY.
        clock.advance(Duration::from_secs(89));
        assert!(!recover_lease(&svc).await);
        for dn in ["dn1", "dn2", "dn3"] {
            assert!(fs.block_recoveries().take_commands(dn).is_empty());
        }
        assert_eq!(
            bm.block_recovery(b.block_id).map(|r| r.recovery_id),
            Some(first.recovery_id)
        );
        assert_eq!(
            bm.get_block(b.block_id).map(|(_, s)| s),
            Some(BlockUcState::UnderRecovery)
        );

        // Past it: a newer recovery id, and dn2 (the next most recent, not yet tried).
        clock.advance(Duration::from_secs(2));
        assert!(!recover_lease(&svc).await);
        let second = bm.block_recovery(b.block_id).expect("recovery on record");
        assert!(second.recovery_id > first.recovery_id);
        assert_eq!(second.primary.as_deref(), Some("dn2"));
        let cmds = fs.block_recoveries().take_commands("dn2");
        assert_eq!(cmds.len(), 1);
        assert_eq!(cmds[0].new_gen_stamp, second.recovery_id);
        assert!(fs.block_recoveries().take_commands("dn3").is_empty());
        assert_eq!(
            bm.get_block(b.block_id).map(|(_, s)| s),
            Some(BlockUcState::UnderRecovery)
        );

        // The first primary answers late: refused, the file stays open.
        let late = fs.commit_block_synchronization(&commit_sync(&b, first.recovery_id, &["dn3"]));
        let msg = late.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            msg.contains(&format!(
                "The recovery id {} does not match current recovery id {}",
                first.recovery_id, second.recovery_id
            )),
            "{msg}"
        );
        assert!(!is_closed(&svc).await);
        // The current one closes it.
        let applied = fs
            .commit_block_synchronization(&commit_sync(
                &b,
                second.recovery_id,
                &["dn1", "dn2", "dn3"],
            ))
            .unwrap();
        fs.commit(applied).await.unwrap();
        assert!(is_closed(&svc).await);
        assert_eq!(
            bm.get_block(b.block_id)
                .map(|(blk, s)| (blk.gs, blk.num_bytes, s)),
            Some((second.recovery_id, 150, BlockUcState::Committed))
        );
    }

    #[tokio::test]
    async fn recovery_moves_on_when_its_primary_dies() {
        let settings = NamesystemSettings {
            block_recovery_timeout: Duration::from_secs(3600),
            ..NamesystemSettings::default()
        };
        let Env {
            clock, fs, svc, bm, ..
        } = env(&["dn1", "dn2", "dn3"], settings);
        let b = open_file_with_block(&svc, 3).await;
        assert!(!recover_lease(&svc).await);
        let first = bm.block_recovery(b.block_id).expect("recovery on record");
        assert_eq!(first.primary.as_deref(), Some("dn3"));
        // dn3 never heartbeats again; dn1 and dn2 do, until dn3 is dead (630 s).
        for _ in 0..8 {
            clock.advance(Duration::from_secs(100));
            heartbeat(&bm, "dn2");
            clock.advance(Duration::from_secs(1));
            heartbeat(&bm, "dn1");
        }
        assert!(!bm.is_datanode_alive("dn3"));
        assert!(!recover_lease(&svc).await);
        let second = bm.block_recovery(b.block_id).expect("recovery on record");
        assert!(second.recovery_id > first.recovery_id);
        // dn1 heartbeated last among the live ones.
        assert_eq!(second.primary.as_deref(), Some("dn1"));
        // The dead primary's unsent command was withdrawn.
        assert!(fs.block_recoveries().take_commands("dn3").is_empty());
        let cmds = fs.block_recoveries().take_commands("dn1");
        assert_eq!(cmds.len(), 1);
        assert_eq!(cmds[0].new_gen_stamp, second.recovery_id);
        assert_eq!(cmds[0].block.locs.len(), 2);
    }

    #[tokio::test]
    async fn lease_monitor_starts_and_retries_recovery_of_an_abandoned_file() {
        let Env {
            clock, fs, svc, bm, ..
        } = env(&["dn1", "dn2"], NamesystemSettings::default());
        let b = open_file_with_block(&svc, 2).await;
        // Within the hard limit the monitor leaves the writer alone.
        clock.advance(HARD_LIMIT);
        assert_eq!(fs.check_leases().await, 0);
        assert_eq!(
            bm.get_block(b.block_id).map(|(_, s)| s),
            Some(BlockUcState::UnderConstruction)
        );
        clock.advance(Duration::from_secs(1));
        assert_eq!(fs.check_leases().await, 0);
        let first = bm.block_recovery(b.block_id).expect("recovery on record");
        assert_eq!(first.primary.as_deref(), Some("dn2"));
        assert_eq!(fs.block_recoveries().take_commands("dn2").len(), 1);
        // Monitor passes every 2 s (dfs.namenode.lease-recheck-interval-ms) until the
        // recovery timeout leaves it alone; the next one after it tries dn1.
        for _ in 0..44 {
            clock.advance(Duration::from_secs(2));
            fs.check_leases().await;
            assert_eq!(
                bm.block_recovery(b.block_id).map(|r| r.recovery_id),
                Some(first.recovery_id)
            );
        }
        clock.advance(Duration::from_secs(2));
        fs.check_leases().await;
        let second = bm.block_recovery(b.block_id).expect("recovery on record");
        assert!(second.recovery_id > first.recovery_id);
        assert_eq!(second.primary.as_deref(), Some("dn1"));
        assert_eq!(fs.block_recoveries().take_commands("dn1").len(), 1);
        let applied = fs
            .commit_block_synchronization(&commit_sync(&b, second.recovery_id, &["dn1", "dn2"]))
            .unwrap();
        fs.commit(applied).await.unwrap();
        assert!(is_closed(&svc).await);
    }

    #[tokio::test]
    async fn stale_replicas_are_left_out_when_two_fresh_ones_remain() {
        let Env {
            clock, fs, svc, bm, ..
        } = env(&["dn1", "dn2", "dn3"], NamesystemSettings::default());
        let b = open_file_with_block(&svc, 3).await;
        // dn1 falls silent for longer than the stale interval (30 s); dn2 and dn3 do not.
        clock.advance(Duration::from_secs(40));
        heartbeat(&bm, "dn2");
        clock.advance(Duration::from_secs(1));
        heartbeat(&bm, "dn3");
        assert!(!recover_lease(&svc).await);
        let cmds = fs.block_recoveries().take_commands("dn3");
        assert_eq!(cmds.len(), 1);
        let mut nodes: Vec<&str> = cmds[0]
            .block
            .locs
            .iter()
            .map(|l| l.id.datanode_uuid.as_str())
            .collect();
        nodes.sort_unstable();
        assert_eq!(nodes, ["dn2", "dn3"]);

        // With dn2 stale too, only one fresh replica is left: every live one takes part.
        clock.advance(Duration::from_secs(89));
        heartbeat(&bm, "dn3");
        clock.advance(Duration::from_secs(2));
        assert!(!recover_lease(&svc).await);
        let primary = bm
            .block_recovery(b.block_id)
            .and_then(|r| r.primary)
            .expect("a primary");
        let cmds = fs.block_recoveries().take_commands(&primary);
        assert_eq!(cmds.len(), 1);
        assert_eq!(cmds[0].block.locs.len(), 3);
    }
}
