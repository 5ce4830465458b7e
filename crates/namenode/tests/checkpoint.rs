//! Checkpoints on a running NameNode are built off the live namespace: one completes while
//! the namespace lock is held elsewhere the whole time, and a NameNode restarted from a
//! checkpoint taken under concurrent mutations (plus the later edits) has exactly the
//! namespace the live one had.

use std::sync::mpsc;
use std::time::Duration;

use rhdfs_conf::clock::system_clock;
use rhdfs_ipc::RpcClient;
use rhdfs_namenode::NameNode;
use rhdfs_proto::hdfs::*;
use rhdfs_proto::protocols::CLIENT_PROTOCOL;

use crate::common::conf;

async fn client(addr: &str) -> RpcClient {
    RpcClient::connect(addr, CLIENT_PROTOCOL, &rhdfs_conf::user::current_user())
        .await
        .unwrap()
}

async fn mkdirs(c: &RpcClient, src: &str) {
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
        .await
        .unwrap();
    assert!(r.result, "mkdirs {src}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkpoint_completes_while_the_namespace_lock_is_held() {
    let t = tempfile::tempdir().unwrap();
    let nn = NameNode::start(conf(t.path()), system_clock())
        .await
        .unwrap();
    let c = client(&nn.rpc_addr().to_string()).await;
    for i in 0..50 {
        mkdirs(&c, &format!("/held/d{i}")).await;
    }
    let fs = nn.namesystem().clone();
    let durable = fs.durable().unwrap().clone();
    let before = durable.newest_image_txid();

    // Another thread takes the namespace lock and keeps it until told to let go (or 60 s).
    let (locked_tx, locked_rx) = mpsc::channel::<u64>();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let holder = {
        let fs = fs.clone();
        std::thread::spawn(move || {
            fs.with_ns(|ns| {
                let _ = locked_tx.send(ns.last_txid());
                release_rx.recv_timeout(Duration::from_secs(60)).is_ok()
            })
        })
    };
    let at_lock = locked_rx.recv_timeout(Duration::from_secs(20)).unwrap();
    // The checkpoint runs on its own thread and runtime and is waited for with a plain
    // timeout: tasks of the NameNode's runtime may be stuck behind the held lock too.
    let (done_tx, done_rx) = mpsc::channel();
    let runner = {
        let fs = fs.clone();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            let _ = done_tx.send(rt.block_on(fs.checkpoint_now()));
        })
    };
    let res = done_rx.recv_timeout(Duration::from_secs(20));
    let _ = release_tx.send(());
    let released_by_us = holder.join().unwrap();
    runner.join().unwrap();
    let txid = res
        .expect("the checkpoint waited for the namespace lock")
        .unwrap();
    assert!(released_by_us, "the lock was held for the whole checkpoint");
    assert!(
        txid >= at_lock && txid > before,
        "{txid} {at_lock} {before}"
    );
    assert_eq!(durable.newest_image_txid(), txid);
    nn.shutdown().await;
}

/// Writer `w`'s mutations, round after round, each acknowledged before the next.
async fn writer(addr: String, w: usize, rounds: usize) {
    let c = client(&addr).await;
    let me = format!("DFSClient_w{w}");
    for i in 0..rounds {
        let d = format!("/w{w}/d{i}");
        mkdirs(&c, &d).await;
        let f = format!("{d}/f");
        let _: CreateResponseProto = c
            .call(
                "create",
                &CreateRequestProto {
                    src: f.clone(),
                    masked: FsPermissionProto { perm: 0o640 },
                    client_name: me.clone(),
                    create_flag: 1,
                    create_parent: true,
                    replication: 2,
                    block_size: 1 << 20,
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        // Every seventh file stays open for write.
        if !i.is_multiple_of(7) {
            let done: CompleteResponseProto = c
                .call(
                    "complete",
                    &CompleteRequestProto {
                        src: f.clone(),
                        client_name: me.clone(),
                        last: None,
                        file_id: None,
                    },
                )
                .await
                .unwrap();
            assert!(done.result);
        }
        if i == 0 {
            continue;
        }
        let prev = format!("/w{w}/d{}", i - 1);
        if i.is_multiple_of(5) {
            let _: DeleteResponseProto = c
                .call(
                    "delete",
                    &DeleteRequestProto {
                        src: prev,
                        recursive: true,
                    },
                )
                .await
                .unwrap();
        } else if i.is_multiple_of(3) {
            let dst = format!("/w{w}/r{i}");
            let _: RenameResponseProto = c
                .call(
                    "rename",
                    &RenameRequestProto {
                        src: prev,
                        dst: dst.clone(),
                    },
                )
                .await
                .unwrap();
            let _: SetPermissionResponseProto = c
                .call(
                    "setPermission",
                    &SetPermissionRequestProto {
                        src: dst.clone(),
                        permission: FsPermissionProto { perm: 0o700 },
                    },
                )
                .await
                .unwrap();
            let _: SetTimesResponseProto = c
                .call(
                    "setTimes",
                    &SetTimesRequestProto {
                        src: format!("{dst}/f"),
                        mtime: 1_000_000 + i as u64,
                        atime: 2_000_000 + i as u64,
                    },
                )
                .await
                .unwrap();
            let _: SetReplicationResponseProto = c
                .call(
                    "setReplication",
                    &SetReplicationRequestProto {
                        src: format!("{dst}/f"),
                        replication: 3,
                    },
                )
                .await
                .unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_from_a_checkpoint_taken_under_mutations_gives_the_live_namespace() {
    let t = tempfile::tempdir().unwrap();
    let nn = NameNode::start(conf(t.path()), system_clock())
        .await
        .unwrap();
    let addr = nn.rpc_addr().to_string();
    let fs = nn.namesystem().clone();
    let writers: Vec<_> = (0..4)
        .map(|w| tokio::spawn(writer(addr.clone(), w, 40)))
        .collect();
    let mut taken = Vec::new();
    while taken.len() < 3 || !writers.iter().all(|w| w.is_finished()) {
        tokio::time::sleep(Duration::from_millis(20)).await;
        taken.push(fs.checkpoint_now().await.unwrap());
    }
    for w in writers {
        w.await.unwrap();
    }
    // Edits after the last checkpoint, replayed from the log at the restart.
    let c = client(&addr).await;
    mkdirs(&c, "/after/the/checkpoint").await;
    let durable = fs.durable().unwrap().clone();
    let image = durable.newest_image_txid();
    let (live_txid, live) = fs.with_ns(|ns| ns.encode_image());
    assert!(image > 0 && image < live_txid, "{taken:?} {live_txid}");
    assert!(
        taken.iter().any(|&txid| txid > 0 && txid < image),
        "a checkpoint was taken while the writers ran: {taken:?}"
    );
    drop((c, durable, fs));
    nn.crash().await;

    let nn = NameNode::start(conf(t.path()), system_clock())
        .await
        .unwrap();
    let (txid, restarted) = nn.namesystem().with_ns(|ns| ns.encode_image());
    assert_eq!(txid, live_txid);
    assert!(
        restarted == live,
        "the restarted namespace differs from the live one"
    );
    nn.shutdown().await;
}
