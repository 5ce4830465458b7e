//! Handler-level tests: encoded requests into the ClientProtocol service, with a real
//! block manager and DataNodes simulated through its report API.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use prost::Message;
use rhdfs_blockmanager::{
    Block, BlockManager, BlockManagerConfig, DatanodeId, IncrementalItem, NamespaceInfo,
    StorageReport,
};
use rhdfs_conf::Configuration;
use rhdfs_conf::clock::{ManualClock, SharedClock};
use rhdfs_ipc::{CallContext, RpcError, RpcService};
use rhdfs_proto::hdfs::*;
use rhdfs_proto::protocols::CLIENT_PROTOCOL;

use super::{ClientProtocolService, server_defaults};
use crate::namespace::{Namespace, NamespaceConfig, Now};
use crate::namesystem::{Namesystem, NamesystemSettings};

const POOL: &str = "BP-1-127.0.0.1-1";

struct Env {
    svc: ClientProtocolService,
    bm: Arc<BlockManager>,
    clock: Arc<ManualClock>,
}

fn env() -> Env {
    let clock = ManualClock::shared(1_700_000_000_000);
    let shared: SharedClock = clock.clone();
    let bm = BlockManager::with_config(
        BlockManagerConfig {
            seed: Some(7),
            ..BlockManagerConfig::default()
        },
        shared.clone(),
        NamespaceInfo {
            namespace_id: 1,
            cluster_id: "CID-test".into(),
            block_pool_id: POOL.into(),
            ctime: 0,
        },
    );
    for i in 1..=3u32 {
        let uuid = format!("dn{i}");
        bm.register_datanode(
            DatanodeId {
                uuid: uuid.clone(),
                ip_addr: "127.0.0.1".into(),
                host_name: "localhost".into(),
                xfer_port: 9000 + i,
                ..DatanodeId::default()
            },
            "3.5.0",
        )
        .expect("register");
        bm.heartbeat(
            &uuid,
            vec![StorageReport {
                storage_id: format!("DS-{i}"),
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
    let ns = Namespace::new(
        NamespaceConfig {
            superuser: "root".into(),
            ls_limit: 2,
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
        NamesystemSettings {
            replication_wait: Duration::from_millis(20),
            lease_recheck: Duration::from_secs(1),
            ..NamesystemSettings::default()
        },
        Arc::new(|_u: &str| Vec::new()),
    );
    let defaults = server_defaults(&Configuration::new()).unwrap();
    Env {
        svc: ClientProtocolService::new(fs, defaults),
        bm,
        clock,
    }
}

impl Env {
    async fn call<Req: Message, Resp: Message + Default>(
        &self,
        user: &str,
        method: &str,
        req: &Req,
    ) -> Result<Resp, RpcError> {
        let ctx = CallContext {
            user: user.into(),
            protocol: CLIENT_PROTOCOL.into(),
            method: method.into(),
            client_id: Bytes::new(),
            call_id: 0,
            retry_count: 0,
            peer: "127.0.0.1:50000".parse().unwrap(),
            forwarded: None,
        };
        let body = Bytes::from(req.encode_to_vec());
        let out = self.svc.call(ctx, body).await?;
        Ok(Resp::decode(out).expect("response decodes"))
    }

    async fn root<Req: Message, Resp: Message + Default>(
        &self,
        method: &str,
        req: &Req,
    ) -> Result<Resp, RpcError> {
        self.call("root", method, req).await
    }

    /// Every DataNode of `locs` reports a finalized replica of `b`.
    fn report(&self, b: &ExtendedBlockProto, locs: &[DatanodeInfoProto], storages: &[String]) {
        for (l, s) in locs.iter().zip(storages) {
            self.bm
                .incremental_report(
                    &l.id.datanode_uuid,
                    s,
                    1,
                    &[IncrementalItem::Received(Block::new(
                        b.block_id,
                        b.generation_stamp,
                        b.num_bytes.unwrap_or(0),
                    ))],
                )
                .unwrap();
        }
    }

    async fn create(&self, src: &str, client: &str) -> HdfsFileStatusProto {
        let r: CreateResponseProto = self
            .root(
                "create",
                &CreateRequestProto {
                    src: src.into(),
                    masked: FsPermissionProto { perm: 0o644 },
                    client_name: client.into(),
                    create_flag: 3,
                    create_parent: true,
                    replication: 3,
                    block_size: 4 << 20,
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        r.fs.unwrap()
    }

    async fn add_block(
        &self,
        src: &str,
        client: &str,
        file_id: u64,
        previous: Option<ExtendedBlockProto>,
    ) -> Result<LocatedBlockProto, RpcError> {
        let r: AddBlockResponseProto = self
            .root(
                "addBlock",
                &AddBlockRequestProto {
                    src: src.into(),
                    client_name: client.into(),
                    previous,
                    file_id: Some(file_id),
                    ..Default::default()
                },
            )
            .await?;
        Ok(r.block)
    }

    async fn complete(
        &self,
        src: &str,
        client: &str,
        file_id: u64,
        last: Option<ExtendedBlockProto>,
    ) -> Result<bool, RpcError> {
        let r: CompleteResponseProto = self
            .root(
                "complete",
                &CompleteRequestProto {
                    src: src.into(),
                    client_name: client.into(),
                    last,
                    file_id: Some(file_id),
                },
            )
            .await?;
        Ok(r.result)
    }

    async fn info(&self, src: &str) -> Option<HdfsFileStatusProto> {
        let r: GetFileInfoResponseProto = self
            .root("getFileInfo", &GetFileInfoRequestProto { src: src.into() })
            .await
            .unwrap();
        r.fs
    }

    /// Writes a closed file of the given block lengths; returns its blocks.
    async fn write_file(&self, src: &str, lens: &[u64]) -> Vec<ExtendedBlockProto> {
        let st = self.create(src, "w").await;
        let id = st.file_id.unwrap();
        let mut prev: Option<ExtendedBlockProto> = None;
        let mut out = Vec::new();
        for &len in lens {
            let lb = self.add_block(src, "w", id, prev.clone()).await.unwrap();
            let mut b = lb.b.clone();
            b.num_bytes = Some(len);
            self.report(&b, &lb.locs, &lb.storage_i_ds);
            out.push(b.clone());
            prev = Some(b);
        }
        assert!(self.complete(src, "w", id, prev).await.unwrap());
        out
    }
}

#[tokio::test]
async fn file_info_and_server_defaults() {
    let e = env();
    let st = e.info("/").await.unwrap();
    assert_eq!(st.file_id, Some(16385));
    assert!(st.path.is_empty());
    assert_eq!(st.owner, "root");
    assert_eq!(st.permission.perm, 0o755);
    assert!(e.info("/missing").await.is_none());
    let d: GetServerDefaultsResponseProto = e
        .root("getServerDefaults", &GetServerDefaultsRequestProto {})
        .await
        .unwrap();
    let d = d.server_defaults;
    assert_eq!(
        (
            d.block_size,
            d.bytes_per_checksum,
            d.write_packet_size,
            d.replication
        ),
        (134217728, 512, 65536, 3)
    );
    assert_eq!(
        d.checksum_type,
        Some(ChecksumTypeProto::ChecksumCrc32c as i32)
    );
    assert_eq!(d.encrypt_data_transfer, Some(false));
    let err = e
        .root::<_, GetFileInfoResponseProto>("noSuchMethod", &GetFileInfoRequestProto::default())
        .await
        .unwrap_err();
    assert_eq!(
        err.class_name,
        "org.apache.hadoop.ipc.RpcNoSuchMethodException"
    );
}

#[tokio::test]
async fn write_read_delete_a_file() {
    let e = env();
    let st = e.create("/d/f", "c1").await;
    assert!(st.path.is_empty());
    assert_eq!(
        (st.block_replication, st.blocksize),
        (Some(3), Some(4 << 20))
    );
    let id = st.file_id.unwrap();
    let lb = e.add_block("/d/f", "c1", id, None).await.unwrap();
    assert_eq!(
        (lb.b.block_id, lb.b.generation_stamp, lb.offset),
        (1073741825, 1001, 0)
    );
    assert_eq!(lb.locs.len(), 3);
    assert_eq!(lb.storage_i_ds.len(), 3);
    assert_eq!(lb.storage_types, vec![1, 1, 1]);
    assert!(lb.block_indices.is_none());
    assert_eq!(lb.block_token, Default::default());
    let mut b1 = lb.b.clone();
    b1.num_bytes = Some(4 << 20);
    // The previous block is not reported yet: NotReplicatedYetException.
    let err = e
        .add_block("/d/f", "c1", id, Some(b1.clone()))
        .await
        .unwrap_err();
    assert_eq!(
        err.class_name,
        "org.apache.hadoop.hdfs.server.namenode.NotReplicatedYetException"
    );
    e.report(&b1, &lb.locs, &lb.storage_i_ds);
    let lb2 = e
        .add_block("/d/f", "c1", id, Some(b1.clone()))
        .await
        .unwrap();
    assert_eq!((lb2.b.block_id, lb2.offset), (1073741826, 4 << 20));
    let mut b2 = lb2.b.clone();
    b2.num_bytes = Some(100);
    // Not reported: complete answers false, then true once reported.
    assert!(
        !e.complete("/d/f", "c1", id, Some(b2.clone()))
            .await
            .unwrap()
    );
    e.report(&b2, &lb2.locs, &lb2.storage_i_ds);
    assert!(
        e.complete("/d/f", "c1", id, Some(b2.clone()))
            .await
            .unwrap()
    );
    assert_eq!(e.info("/d/f").await.unwrap().length, (4 << 20) + 100);

    let r: GetBlockLocationsResponseProto = e
        .root(
            "getBlockLocations",
            &GetBlockLocationsRequestProto {
                src: "/d/f".into(),
                offset: (4 << 20) + 1,
                length: 10,
            },
        )
        .await
        .unwrap();
    let l = r.locations.unwrap();
    assert_eq!(l.file_length, (4 << 20) + 100);
    assert!(l.is_last_block_complete && !l.under_construction);
    assert_eq!(l.blocks.len(), 1);
    assert_eq!(l.blocks[0].b.block_id, b2.block_id);
    assert_eq!(l.blocks[0].locs.len(), 3);
    assert_eq!(l.last_block.unwrap().b.block_id, b2.block_id);

    let cs: GetContentSummaryResponseProto = e
        .root(
            "getContentSummary",
            &GetContentSummaryRequestProto { path: "/d".into() },
        )
        .await
        .unwrap();
    let cs = cs.summary;
    assert_eq!(
        (cs.file_count, cs.directory_count, cs.length),
        (1, 1, (4 << 20) + 100)
    );
    assert_eq!(cs.space_consumed, 3 * ((4 << 20) + 100));
    assert_eq!((cs.quota, cs.space_quota), (u64::MAX, u64::MAX));

    let d: DeleteResponseProto = e
        .root(
            "delete",
            &DeleteRequestProto {
                src: "/d".into(),
                recursive: true,
            },
        )
        .await
        .unwrap();
    assert!(d.result);
    for _ in 0..100 {
        if e.bm.get_block(b1.block_id).is_none() && e.bm.get_block(b2.block_id).is_none() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(e.bm.get_block(b1.block_id).is_none());
    assert!(e.bm.get_block(b2.block_id).is_none());
}

#[tokio::test]
async fn exceptions_by_class() {
    let e = env();
    e.write_file("/f", &[10]).await;
    let err = e
        .root::<_, CreateResponseProto>(
            "create",
            &CreateRequestProto {
                src: "/f".into(),
                masked: FsPermissionProto { perm: 0o644 },
                client_name: "c2".into(),
                create_flag: 1,
                create_parent: true,
                replication: 3,
                block_size: 4 << 20,
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.class_name,
        "org.apache.hadoop.fs.FileAlreadyExistsException"
    );
    let err = e
        .root::<_, GetBlockLocationsResponseProto>(
            "getBlockLocations",
            &GetBlockLocationsRequestProto {
                src: "/nope".into(),
                offset: 0,
                length: 1,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(
        (err.class_name.as_str(), err.message.as_str()),
        (
            "java.io.FileNotFoundException",
            "File does not exist: /nope"
        )
    );
    let m: MkdirsResponseProto = e
        .root(
            "mkdirs",
            &MkdirsRequestProto {
                src: "/dir/sub".into(),
                masked: FsPermissionProto { perm: 0o755 },
                create_parent: true,
                unmasked: None,
            },
        )
        .await
        .unwrap();
    assert!(m.result);
    let err = e
        .root::<_, DeleteResponseProto>(
            "delete",
            &DeleteRequestProto {
                src: "/dir".into(),
                recursive: false,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.class_name,
        "org.apache.hadoop.fs.PathIsNotEmptyDirectoryException"
    );
    let d: DeleteResponseProto = e
        .root(
            "delete",
            &DeleteRequestProto {
                src: "/missing".into(),
                recursive: false,
            },
        )
        .await
        .unwrap();
    assert!(!d.result);
    let err = e
        .call::<_, MkdirsResponseProto>(
            "alice",
            "mkdirs",
            &MkdirsRequestProto {
                src: "/alice".into(),
                masked: FsPermissionProto { perm: 0o755 },
                create_parent: true,
                unmasked: None,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.class_name,
        "org.apache.hadoop.security.AccessControlException"
    );
    let err = e
        .root::<_, MkdirsResponseProto>(
            "mkdirs",
            &MkdirsRequestProto {
                src: "/f/x".into(),
                masked: FsPermissionProto { perm: 0o755 },
                create_parent: true,
                unmasked: None,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.class_name,
        "org.apache.hadoop.fs.ParentNotDirectoryException"
    );
    let err = e
        .root::<_, Rename2ResponseProto>(
            "rename2",
            &Rename2RequestProto {
                src: "/nope".into(),
                dst: "/x".into(),
                overwrite_dest: false,
                move_to_trash: None,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(err.class_name, "java.io.FileNotFoundException");
    let r: RenameResponseProto = e
        .root(
            "rename",
            &RenameRequestProto {
                src: "/f".into(),
                dst: "/dir".into(),
            },
        )
        .await
        .unwrap();
    assert!(r.result);
    assert!(e.info("/dir/f").await.is_some());
    // Non-superusers may not read the datanode report or enter safe mode.
    let err = e
        .call::<_, GetDatanodeReportResponseProto>(
            "alice",
            "getDatanodeReport",
            &GetDatanodeReportRequestProto { r#type: 1 },
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.class_name,
        "org.apache.hadoop.security.AccessControlException"
    );
    let rep: GetDatanodeReportResponseProto = e
        .root(
            "getDatanodeReport",
            &GetDatanodeReportRequestProto { r#type: 2 },
        )
        .await
        .unwrap();
    assert_eq!(rep.di.len(), 3);
}

#[tokio::test]
async fn listing_pages_and_located_listing() {
    let e = env();
    for n in ["c", "a", "b"] {
        e.write_file(&format!("/l/{n}"), &[5]).await;
    }
    let r: GetListingResponseProto = e
        .root(
            "getListing",
            &GetListingRequestProto {
                src: "/l".into(),
                start_after: Bytes::new(),
                need_location: true,
            },
        )
        .await
        .unwrap();
    let dl = r.dir_list.unwrap();
    let names: Vec<_> = dl.partial_listing.iter().map(|s| s.path.clone()).collect();
    assert_eq!(
        names,
        vec![Bytes::from_static(b"a"), Bytes::from_static(b"b")]
    );
    assert_eq!(dl.remaining_entries, 1);
    assert_eq!(
        dl.partial_listing[0].locations.as_ref().unwrap().blocks[0]
            .locs
            .len(),
        3
    );
    let r: GetListingResponseProto = e
        .root(
            "getListing",
            &GetListingRequestProto {
                src: "/l".into(),
                start_after: Bytes::from_static(b"b"),
                need_location: false,
            },
        )
        .await
        .unwrap();
    let dl = r.dir_list.unwrap();
    assert_eq!(dl.partial_listing.len(), 1);
    assert_eq!(dl.remaining_entries, 0);
    let r: GetListingResponseProto = e
        .root(
            "getListing",
            &GetListingRequestProto {
                src: "/zz".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(r.dir_list.is_none());
}

#[tokio::test]
async fn append_fsync_and_pipeline_update() {
    let e = env();
    let blocks = e.write_file("/a", &[1000]).await;
    let r: AppendResponseProto = e
        .root(
            "append",
            &AppendRequestProto {
                src: "/a".into(),
                client_name: "app".into(),
                flag: Some(4),
            },
        )
        .await
        .unwrap();
    let lb = r.block.unwrap();
    assert!(r.stat.unwrap().path.is_empty());
    assert_eq!(
        (lb.b.block_id, lb.b.num_bytes, lb.offset),
        (blocks[0].block_id, Some(1000), 0)
    );
    assert_eq!(lb.locs.len(), 3);
    // Another client cannot append while the lease is held.
    let err = e
        .root::<_, AppendResponseProto>(
            "append",
            &AppendRequestProto {
                src: "/a".into(),
                client_name: "other".into(),
                flag: Some(4),
            },
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.class_name,
        "org.apache.hadoop.hdfs.protocol.AlreadyBeingCreatedException"
    );
    // Java-style: new GS, updatePipeline, then complete with the new GS.
    let u: UpdateBlockForPipelineResponseProto = e
        .root(
            "updateBlockForPipeline",
            &UpdateBlockForPipelineRequestProto {
                block: lb.b.clone(),
                client_name: "app".into(),
            },
        )
        .await
        .unwrap();
    let new_gs = u.block.b.generation_stamp;
    assert!(new_gs > lb.b.generation_stamp);
    let mut nb = lb.b.clone();
    nb.generation_stamp = new_gs;
    let _: UpdatePipelineResponseProto = e
        .root(
            "updatePipeline",
            &UpdatePipelineRequestProto {
                client_name: "app".into(),
                old_block: lb.b.clone(),
                new_block: nb.clone(),
                new_nodes: lb.locs.iter().map(|l| l.id.clone()).collect(),
                storage_i_ds: lb.storage_i_ds.clone(),
            },
        )
        .await
        .unwrap();
    // hflush: fsync makes the new length visible.
    let _: FsyncResponseProto = e
        .root(
            "fsync",
            &FsyncRequestProto {
                src: "/a".into(),
                client: "app".into(),
                last_block_length: Some(1500),
                file_id: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(e.info("/a").await.unwrap().length, 1500);
    let r: GetBlockLocationsResponseProto = e
        .root(
            "getBlockLocations",
            &GetBlockLocationsRequestProto {
                src: "/a".into(),
                offset: 0,
                length: u64::MAX >> 1,
            },
        )
        .await
        .unwrap();
    let l = r.locations.unwrap();
    assert!(l.under_construction && !l.is_last_block_complete);
    assert_eq!(l.file_length, 0);
    nb.num_bytes = Some(2000);
    e.report(&nb, &lb.locs, &lb.storage_i_ds);
    let id = e.info("/a").await.unwrap().file_id.unwrap();
    assert!(e.complete("/a", "app", id, Some(nb)).await.unwrap());
    assert_eq!(e.info("/a").await.unwrap().length, 2000);
    let c: IsFileClosedResponseProto = e
        .root(
            "isFileClosed",
            &IsFileClosedRequestProto { src: "/a".into() },
        )
        .await
        .unwrap();
    assert!(c.result);
}

#[tokio::test]
async fn attributes_safe_mode_and_recover_lease() {
    let e = env();
    e.write_file("/t", &[1]).await;
    let _: SetTimesResponseProto = e
        .root(
            "setTimes",
            &SetTimesRequestProto {
                src: "/t".into(),
                mtime: 1234,
                atime: u64::MAX,
            },
        )
        .await
        .unwrap();
    let st = e.info("/t").await.unwrap();
    assert_eq!(st.modification_time, 1234);
    assert_ne!(st.access_time, u64::MAX);
    let _: SetPermissionResponseProto = e
        .root(
            "setPermission",
            &SetPermissionRequestProto {
                src: "/t".into(),
                permission: FsPermissionProto { perm: 0o600 },
            },
        )
        .await
        .unwrap();
    let _: SetOwnerResponseProto = e
        .root(
            "setOwner",
            &SetOwnerRequestProto {
                src: "/t".into(),
                username: Some("bob".into()),
                groupname: None,
            },
        )
        .await
        .unwrap();
    let r: SetReplicationResponseProto = e
        .root(
            "setReplication",
            &SetReplicationRequestProto {
                src: "/t".into(),
                replication: 2,
            },
        )
        .await
        .unwrap();
    assert!(r.result);
    let st = e.info("/t").await.unwrap();
    assert_eq!(
        (
            st.permission.perm,
            st.owner.as_str(),
            st.group.as_str(),
            st.block_replication
        ),
        (0o600, "bob", "supergroup", Some(2))
    );

    let s: SetSafeModeResponseProto = e
        .root(
            "setSafeMode",
            &SetSafeModeRequestProto {
                action: SafeModeActionProto::SafemodeEnter as i32,
                checked: None,
            },
        )
        .await
        .unwrap();
    assert!(s.result);
    let err = e
        .root::<_, MkdirsResponseProto>(
            "mkdirs",
            &MkdirsRequestProto {
                src: "/x".into(),
                masked: FsPermissionProto { perm: 0o755 },
                create_parent: true,
                unmasked: None,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.class_name,
        "org.apache.hadoop.hdfs.server.namenode.SafeModeException"
    );
    let s: SetSafeModeResponseProto = e
        .root(
            "setSafeMode",
            &SetSafeModeRequestProto {
                action: SafeModeActionProto::SafemodeLeave as i32,
                checked: None,
            },
        )
        .await
        .unwrap();
    assert!(!s.result);

    // A writer that allocated a block and died: recoverLease drops the empty block.
    let st = e.create("/open", "dead").await;
    e.add_block("/open", "dead", st.file_id.unwrap(), None)
        .await
        .unwrap();
    let r: RecoverLeaseResponseProto = e
        .root(
            "recoverLease",
            &RecoverLeaseRequestProto {
                src: "/open".into(),
                client_name: "x".into(),
            },
        )
        .await
        .unwrap();
    assert!(r.result);
    assert_eq!(e.info("/open").await.unwrap().length, 0);
    // A file past the hard limit is closed by the lease monitor.
    let st = e.create("/old", "gone").await;
    assert!(st.file_id.is_some());
    e.clock.advance(Duration::from_secs(1201));
    assert_eq!(e.svc.namesystem().check_leases().await, 1);
    let c: IsFileClosedResponseProto = e
        .root(
            "isFileClosed",
            &IsFileClosedRequestProto { src: "/old".into() },
        )
        .await
        .unwrap();
    assert!(c.result);
}

#[tokio::test]
async fn soft_limit_lets_another_client_take_over() {
    let e = env();
    let st = e.create("/s", "first").await;
    let id = st.file_id.unwrap();
    let lb = e.add_block("/s", "first", id, None).await.unwrap();
    let mut b = lb.b.clone();
    b.num_bytes = Some(10);
    // complete commits the block but answers false: no replica was reported yet.
    assert!(
        !e.complete("/s", "first", id, Some(b.clone()))
            .await
            .unwrap()
    );
    let append = |client: &'static str| AppendRequestProto {
        src: "/s".into(),
        client_name: client.into(),
        flag: Some(4),
    };
    let err = e
        .root::<_, AppendResponseProto>("append", &append("second"))
        .await
        .unwrap_err();
    assert_eq!(
        err.class_name,
        "org.apache.hadoop.hdfs.protocol.AlreadyBeingCreatedException"
    );
    e.clock.advance(Duration::from_secs(61));
    // Past the soft limit, but the committed block has no replica: recovery pending.
    let err = e
        .root::<_, AppendResponseProto>("append", &append("second"))
        .await
        .unwrap_err();
    assert_eq!(
        err.class_name,
        "org.apache.hadoop.hdfs.protocol.RecoveryInProgressException"
    );
    e.report(&b, &lb.locs, &lb.storage_i_ds);
    let r: AppendResponseProto = e.root("append", &append("second")).await.unwrap();
    assert_eq!(r.block.unwrap().b.num_bytes, Some(10));
    // The first writer lost its lease.
    let err = e
        .root::<_, FsyncResponseProto>(
            "fsync",
            &FsyncRequestProto {
                src: "/s".into(),
                client: "first".into(),
                last_block_length: Some(1),
                file_id: None,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.class_name,
        "org.apache.hadoop.hdfs.server.namenode.LeaseExpiredException"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_get_distinct_blocks() {
    let e = Arc::new(env());
    let mut tasks = Vec::new();
    for i in 0..8 {
        let e = e.clone();
        tasks.push(tokio::spawn(async move {
            let src = format!("/c/f{i}");
            let blocks = e.write_file(&src, &[1, 2, 3]).await;
            blocks
                .iter()
                .map(|b| (b.block_id, b.generation_stamp))
                .collect::<Vec<_>>()
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    let mut ids: Vec<u64> = all.iter().map(|(id, _)| *id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 24);
    assert_eq!(ids[0], 1073741825);
    assert_eq!(ids[23], 1073741825 + 23);
    let cs: GetContentSummaryResponseProto = e
        .root(
            "getContentSummary",
            &GetContentSummaryRequestProto { path: "/c".into() },
        )
        .await
        .unwrap();
    assert_eq!((cs.summary.file_count, cs.summary.length), (8, 48));
    let bad = e.svc.namesystem().with_ns(|ns| ns.check_consistency());
    assert!(bad.is_empty(), "{bad:?}");
}

#[tokio::test]
async fn list_open_files_all_and_blocking_decommission() {
    let e = env();
    let a = e.create("/o/a", "c1").await;
    e.create("/o/b", "c2").await;
    e.create("/p/c", "c3").await;
    e.write_file("/o/closed", &[10]).await;
    let req = |types: Vec<i32>, path: &str| ListOpenFilesRequestProto {
        id: 0,
        types,
        path: Some(path.into()),
    };
    let paths = |r: &ListOpenFilesResponseProto| -> Vec<(String, String)> {
        r.entries
            .iter()
            .map(|x| (x.path.clone(), x.client_name.clone()))
            .collect()
    };
    let all = OpenFilesTypeProto::AllOpenFiles as i32;
    let blocking = OpenFilesTypeProto::BlockingDecommission as i32;
    let r: ListOpenFilesResponseProto = e
        .root("listOpenFiles", &req(vec![all], "/o"))
        .await
        .unwrap();
    assert_eq!(
        paths(&r),
        vec![("/o/a".into(), "c1".into()), ("/o/b".into(), "c2".into())]
    );
    assert!(!r.has_more);
    assert_eq!(r.types, vec![all]);
    // Ids increase with creation; a request after the first one's id skips it.
    let after = ListOpenFilesRequestProto {
        id: r.entries[0].id,
        ..req(vec![all], "/")
    };
    let r: ListOpenFilesResponseProto = e.root("listOpenFiles", &after).await.unwrap();
    assert_eq!(
        paths(&r),
        vec![("/o/b".into(), "c2".into()), ("/p/c".into(), "c3".into())]
    );

    let err = e
        .call::<_, ListOpenFilesResponseProto>("alice", "listOpenFiles", &req(vec![all], "/"))
        .await
        .unwrap_err();
    assert_eq!(
        err.class_name,
        "org.apache.hadoop.security.AccessControlException"
    );
    let err = e
        .root::<_, ListOpenFilesResponseProto>("listOpenFiles", &req(vec![7], "/"))
        .await
        .unwrap_err();
    assert_eq!(err.class_name, "java.lang.IllegalArgumentException");

    // Nothing holds up a decommission yet.
    let r: ListOpenFilesResponseProto = e
        .root("listOpenFiles", &req(vec![blocking], "/"))
        .await
        .unwrap();
    assert!(r.entries.is_empty());
    // /o/a's first block is finalized on one node only (replication 3) and the writer
    // moved on to a second block; that node starts decommissioning: /o/a is in its way.
    let id = a.file_id.unwrap();
    let lb = e.add_block("/o/a", "c1", id, None).await.unwrap();
    let mut b1 = lb.b.clone();
    b1.num_bytes = Some(4 << 20);
    e.report(&b1, &lb.locs[..1], &lb.storage_i_ds[..1]);
    e.add_block("/o/a", "c1", id, Some(b1)).await.unwrap();
    e.bm.start_decommission(&lb.locs[0].id.datanode_uuid);
    let r: ListOpenFilesResponseProto = e
        .root("listOpenFiles", &req(vec![blocking], "/"))
        .await
        .unwrap();
    assert_eq!(paths(&r), vec![("/o/a".into(), "c1".into())]);
    assert_eq!(r.types, vec![blocking]);
}

#[tokio::test]
async fn groups_are_cached_for_hadoop_security_groups_cache_secs() {
    let clock = ManualClock::shared(1_700_000_000_000);
    let shared: SharedClock = clock.clone();
    let bm = BlockManager::with_config(
        BlockManagerConfig::default(),
        shared.clone(),
        NamespaceInfo::default(),
    );
    let ns = Namespace::new(
        NamespaceConfig::default(),
        Now {
            wall_ms: shared.now_millis(),
            mono: shared.monotonic(),
        },
    );
    let lookups = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = lookups.clone();
    let fs = Namesystem::new(
        ns,
        bm,
        shared,
        NamesystemSettings {
            groups_cache: Duration::from_secs(300),
            ..NamesystemSettings::default()
        },
        Arc::new(move |_u: &str| {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            vec!["staff".to_string()]
        }),
    );
    let count = || lookups.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(fs.caller("alice", "h").await.groups, vec!["staff"]);
    assert_eq!(count(), 1);
    clock.advance(Duration::from_secs(299));
    fs.caller("alice", "h").await;
    assert_eq!(count(), 1, "still cached");
    clock.advance(Duration::from_secs(1));
    fs.caller("alice", "h").await;
    assert_eq!(count(), 2, "looked up again once the cache time has passed");
    // Whether a caller is the superuser is decided with its groups and cached with them.
    for _ in 0..2 {
        let (hdfs, alice) = (fs.caller("hdfs", "h").await, fs.caller("alice", "h").await);
        assert!(hdfs.superuser && !alice.superuser);
        assert_eq!((hdfs.machine.as_str(), alice.user.as_str()), ("h", "alice"));
    }
    assert_eq!(count(), 3, "hdfs looked up once");
}

/// The method table agrees with ClientProtocol's retry declarations, which a failing-over
/// client trusts: a method declared at-most-once is answered from the retry cache here (and
/// only such methods are), and no read is declared at-most-once.
#[test]
fn method_kinds_match_the_declared_retry_classes() {
    use super::{MethodKind, SERVED_METHODS, method_kind};
    use rhdfs_proto::client_methods::{Retry, retry_class};
    for &m in SERVED_METHODS {
        let kind = method_kind(m);
        let declared = retry_class(m);
        assert_eq!(
            kind == Some(MethodKind::AtMostOnce),
            declared == Some(Retry::AtMostOnce),
            "{m}: kind {kind:?}, declared {declared:?}"
        );
        if matches!(kind, Some(MethodKind::Read | MethodKind::Unchecked)) {
            assert_ne!(declared, Some(Retry::AtMostOnce), "{m}");
        }
    }
}
