//! A NameNode on a socket keeps every acknowledged mutation across a crash, starts in
//! safe mode when its blocks are not reported, and answers retried calls once.

use std::time::Duration;

use bytes::Bytes;
use prost::Message;
use rhdfs_conf::clock::system_clock;
use rhdfs_editlog::RecoveryMode;
use rhdfs_ipc::{CallContext, IpcError, RpcClient, RpcService};
use rhdfs_namenode::NameNode;
use rhdfs_namenode::edit::EditOp;
use rhdfs_namenode::fsdir::{FileBlock, PermissionStatus, ROOT_INODE_ID};
use rhdfs_namenode::rpc::{ClientProtocolService, server_defaults};
use rhdfs_proto::hdfs::*;
use rhdfs_proto::protocols::CLIENT_PROTOCOL;

use crate::common::conf;

async fn client(addr: &str) -> RpcClient {
    RpcClient::connect(addr, CLIENT_PROTOCOL, &rhdfs_conf::user::current_user())
        .await
        .unwrap()
}

async fn info(c: &RpcClient, src: &str) -> Option<HdfsFileStatusProto> {
    let r: GetFileInfoResponseProto = c
        .call("getFileInfo", &GetFileInfoRequestProto { src: src.into() })
        .await
        .unwrap();
    r.fs
}

async fn mkdirs(c: &RpcClient, src: &str) -> Result<bool, IpcError> {
    let r: MkdirsResponseProto = c
        .call(
            "mkdirs",
            &MkdirsRequestProto {
                src: src.into(),
                masked: FsPermissionProto { perm: 0o755 },
                create_parent: true,
                unmasked: None,
            },
        )
        .await?;
    Ok(r.result)
}

fn create_req(src: &str) -> CreateRequestProto {
    CreateRequestProto {
        src: src.into(),
        masked: FsPermissionProto { perm: 0o644 },
        client_name: "DFSClient_test".into(),
        create_flag: 1, // CREATE
        create_parent: true,
        replication: 1,
        block_size: 1 << 20,
        ..Default::default()
    }
}

#[tokio::test]
async fn restart_after_a_crash_keeps_every_acknowledged_mutation() {
    let t = tempfile::tempdir().unwrap();
    let nn = NameNode::start(conf(t.path()), system_clock())
        .await
        .unwrap();
    let addr = nn.rpc_addr().to_string();
    let c = client(&addr).await;
    assert!(mkdirs(&c, "/a/b").await.unwrap());
    assert!(mkdirs(&c, "/gone/x").await.unwrap());
    let _: CreateResponseProto = c.call("create", &create_req("/a/f")).await.unwrap();
    let done: CompleteResponseProto = c
        .call(
            "complete",
            &CompleteRequestProto {
                src: "/a/f".into(),
                client_name: "DFSClient_test".into(),
                last: None,
                file_id: None,
            },
        )
        .await
        .unwrap();
    assert!(done.result);
    let _: CreateResponseProto = c.call("create", &create_req("/open")).await.unwrap();
    let _: RenameResponseProto = c
        .call(
            "rename",
            &RenameRequestProto {
                src: "/a/f".into(),
                dst: "/a/b/g".into(),
            },
        )
        .await
        .unwrap();
    let _: DeleteResponseProto = c
        .call(
            "delete",
            &DeleteRequestProto {
                src: "/gone".into(),
                recursive: true,
            },
        )
        .await
        .unwrap();
    let _: SetPermissionResponseProto = c
        .call(
            "setPermission",
            &SetPermissionRequestProto {
                src: "/a/b".into(),
                permission: FsPermissionProto { perm: 0o700 },
            },
        )
        .await
        .unwrap();
    let _: SetTimesResponseProto = c
        .call(
            "setTimes",
            &SetTimesRequestProto {
                src: "/a/b/g".into(),
                mtime: 123_456,
                atime: 654_321,
            },
        )
        .await
        .unwrap();
    let _: SetReplicationResponseProto = c
        .call(
            "setReplication",
            &SetReplicationRequestProto {
                src: "/a/b/g".into(),
                replication: 3,
            },
        )
        .await
        .unwrap();
    let user = rhdfs_conf::user::current_user();
    let _: SetOwnerResponseProto = c
        .call(
            "setOwner",
            &SetOwnerRequestProto {
                src: "/a".into(),
                username: Some(user.clone()),
                groupname: Some("g2".into()),
            },
        )
        .await
        .unwrap();
    let before_g = info(&c, "/a/b/g").await.unwrap();
    drop(c);
    nn.crash().await;

    let nn = NameNode::start(conf(t.path()), system_clock())
        .await
        .unwrap();
    let c = client(&nn.rpc_addr().to_string()).await;
    let g = info(&c, "/a/b/g").await.expect("renamed file");
    assert_eq!(g.file_id, before_g.file_id);
    assert_eq!(g.modification_time, 123_456);
    assert_eq!(g.access_time, 654_321);
    assert_eq!(g.block_replication, Some(3));
    assert!(info(&c, "/a/f").await.is_none());
    assert!(info(&c, "/gone").await.is_none());
    assert_eq!(info(&c, "/a/b").await.unwrap().permission.perm, 0o700);
    assert_eq!(info(&c, "/a").await.unwrap().group, "g2");
    assert!(info(&c, "/open").await.is_some());
    // New inode ids continue after the old ones.
    let _: CreateResponseProto = c.call("create", &create_req("/new")).await.unwrap();
    let new = info(&c, "/new").await.unwrap();
    assert!(new.file_id > info(&c, "/open").await.unwrap().file_id);
    nn.shutdown().await;
}

/// A namespace whose one file has a block no DataNode reports: start-up safe mode holds.
#[tokio::test]
async fn unreported_blocks_keep_the_namenode_in_safe_mode() {
    let t = tempfile::tempdir().unwrap();
    let c = conf(t.path());
    {
        let ns_cfg = rhdfs_namenode::server::namespace_config(&c, "hdfs").unwrap();
        let (d, mut ns) =
            rhdfs_namenode::persist::load(&c, &system_clock(), ns_cfg, RecoveryMode::Strict)
                .unwrap();
        let id = ROOT_INODE_ID + 1;
        let ops = [
            EditOp::AddFile {
                id,
                parent: ROOT_INODE_ID,
                name: b"f".to_vec(),
                perm: PermissionStatus {
                    owner: "hdfs".into(),
                    group: "supergroup".into(),
                    mode: 0o644,
                },
                mtime: 1,
                replication: 1,
                block_size: 1 << 20,
                client_name: "c".into(),
                client_machine: "m".into(),
                replaced: None,
            },
            EditOp::AddBlock {
                file: id,
                block: FileBlock {
                    id: (1 << 30) + 1,
                    gs: 1001,
                    num_bytes: 10,
                },
            },
            EditOp::CloseFile {
                file: id,
                mtime: 2,
                atime: 2,
            },
        ];
        for op in ops {
            ns.log_and_apply(op, Duration::ZERO).unwrap();
        }
        d.close();
    }
    let nn = NameNode::start(c.clone(), system_clock()).await.unwrap();
    let cl = client(&nn.rpc_addr().to_string()).await;
    let err = mkdirs(&cl, "/x").await.unwrap_err();
    match err {
        IpcError::Remote {
            class_name,
            message,
        } => {
            assert_eq!(
                class_name,
                "org.apache.hadoop.hdfs.server.namenode.SafeModeException"
            );
            assert!(
                message.starts_with("Cannot create directory /x. Name node is in safe mode. The reported blocks 0 needs additional 1 blocks to reach the threshold 0.9990 of total blocks 1."),
                "{message}"
            );
        }
        e => panic!("{e:?}"),
    }
    let get: SetSafeModeResponseProto = cl
        .call(
            "setSafeMode",
            &SetSafeModeRequestProto {
                action: SafeModeActionProto::SafemodeGet as i32,
                checked: None,
            },
        )
        .await
        .unwrap();
    assert!(get.result);
    let left: SetSafeModeResponseProto = cl
        .call(
            "setSafeMode",
            &SetSafeModeRequestProto {
                action: SafeModeActionProto::SafemodeLeave as i32,
                checked: None,
            },
        )
        .await
        .unwrap();
    assert!(!left.result);
    assert!(mkdirs(&cl, "/x").await.unwrap());
    nn.shutdown().await;
}

async fn raw<Req: Message, Resp: Message + Default>(
    svc: &ClientProtocolService,
    method: &str,
    call_id: i32,
    req: &Req,
) -> Result<Resp, rhdfs_ipc::RpcError> {
    let ctx = CallContext {
        user: rhdfs_conf::user::current_user(),
        protocol: CLIENT_PROTOCOL.into(),
        method: method.into(),
        client_id: Bytes::from_static(b"0123456789abcdef"),
        call_id,
        retry_count: 1,
        peer: "127.0.0.1:50000".parse().unwrap(),
        forwarded: None,
    };
    let out = svc.call(ctx, Bytes::from(req.encode_to_vec())).await?;
    Ok(Resp::decode(out).unwrap())
}

#[tokio::test]
async fn retried_create_delete_and_rename_get_the_first_answer() {
    let t = tempfile::tempdir().unwrap();
    let c = conf(t.path());
    let nn = NameNode::start(c.clone(), system_clock()).await.unwrap();
    let svc = ClientProtocolService::new(nn.namesystem().clone(), server_defaults(&c).unwrap());

    let first: CreateResponseProto = raw(&svc, "create", 1, &create_req("/f")).await.unwrap();
    let again: CreateResponseProto = raw(&svc, "create", 1, &create_req("/f")).await.unwrap();
    assert_eq!(first, again);
    // A new call id is a new call: the file exists now (open by this client).
    let err = raw::<_, CreateResponseProto>(&svc, "create", 2, &create_req("/f"))
        .await
        .unwrap_err();
    assert_eq!(
        err.class_name,
        "org.apache.hadoop.hdfs.protocol.AlreadyBeingCreatedException"
    );

    let ren = RenameRequestProto {
        src: "/f".into(),
        dst: "/g".into(),
    };
    let r1: RenameResponseProto = raw(&svc, "rename", 3, &ren).await.unwrap();
    let r2: RenameResponseProto = raw(&svc, "rename", 3, &ren).await.unwrap();
    assert!(r1.result && r2.result);
    let r3: RenameResponseProto = raw(&svc, "rename", 4, &ren).await.unwrap();
    assert!(!r3.result);

    let del = DeleteRequestProto {
        src: "/g".into(),
        recursive: false,
    };
    let d1: DeleteResponseProto = raw(&svc, "delete", 5, &del).await.unwrap();
    let d2: DeleteResponseProto = raw(&svc, "delete", 5, &del).await.unwrap();
    assert!(d1.result && d2.result);
    let d3: DeleteResponseProto = raw(&svc, "delete", 6, &del).await.unwrap();
    assert!(!d3.result);
    nn.shutdown().await;
}

#[tokio::test]
async fn save_namespace_in_safe_mode_then_restart_from_the_image() {
    let t = tempfile::tempdir().unwrap();
    let c = conf(t.path());
    let nn = NameNode::start(c.clone(), system_clock()).await.unwrap();
    let cl = client(&nn.rpc_addr().to_string()).await;
    assert!(mkdirs(&cl, "/before").await.unwrap());
    let err = cl
        .call::<_, SaveNamespaceResponseProto>(
            "saveNamespace",
            &SaveNamespaceRequestProto::default(),
        )
        .await
        .unwrap_err();
    assert!(
        format!("{err:?}").contains("Safe mode should be turned ON"),
        "{err:?}"
    );
    let safe = |action: SafeModeActionProto| SetSafeModeRequestProto {
        action: action as i32,
        checked: None,
    };
    let _: SetSafeModeResponseProto = cl
        .call("setSafeMode", &safe(SafeModeActionProto::SafemodeEnter))
        .await
        .unwrap();
    let r: SaveNamespaceResponseProto = cl
        .call("saveNamespace", &SaveNamespaceRequestProto::default())
        .await
        .unwrap();
    assert_eq!(r.saved, Some(true));
    // -beforeShutdown's form: a time window and a transaction gap the fresh image is
    // within, so nothing more is saved.
    let within = SaveNamespaceRequestProto {
        time_window: Some(3600),
        tx_gap: Some(1000),
    };
    let r: SaveNamespaceResponseProto = cl.call("saveNamespace", &within).await.unwrap();
    assert_eq!(r.saved, Some(false));
    let _: SetSafeModeResponseProto = cl
        .call("setSafeMode", &safe(SafeModeActionProto::SafemodeLeave))
        .await
        .unwrap();
    assert!(mkdirs(&cl, "/after").await.unwrap());
    // One edit past the image with no gap allowed: saved again (in safe mode), and the
    // image covers /after.
    let _: SetSafeModeResponseProto = cl
        .call("setSafeMode", &safe(SafeModeActionProto::SafemodeEnter))
        .await
        .unwrap();
    let no_gap = SaveNamespaceRequestProto {
        time_window: Some(3600),
        tx_gap: Some(0),
    };
    let r: SaveNamespaceResponseProto = cl.call("saveNamespace", &no_gap).await.unwrap();
    assert_eq!(r.saved, Some(true));
    let _: SetSafeModeResponseProto = cl
        .call("setSafeMode", &safe(SafeModeActionProto::SafemodeLeave))
        .await
        .unwrap();
    let images: Vec<_> = std::fs::read_dir(t.path().join("current"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with("fsimage_") && n != "fsimage_0000000000000000000")
        .filter(|n| !n.ends_with(".md5"))
        .collect();
    assert_eq!(images.len(), 2, "{images:?}");
    drop(cl);
    nn.crash().await;
    let nn = NameNode::start(c, system_clock()).await.unwrap();
    let cl = client(&nn.rpc_addr().to_string()).await;
    assert!(info(&cl, "/before").await.is_some());
    assert!(info(&cl, "/after").await.is_some());
    nn.shutdown().await;
}
