//! Format, load, replay, torn tails, corruption and checkpoints under writers.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rhdfs_conf::Configuration;
use rhdfs_conf::clock::{ManualClock, SharedClock};
use rhdfs_editlog::{EditLogError, RecoveryMode};

use super::{Durable, PersistError, format, load};
use crate::edit::EditOp;
use crate::fsdir::{FileBlock, PermissionStatus, ROOT_INODE_ID};
use crate::namespace::{Namespace, NamespaceConfig};

fn conf(dirs: &[PathBuf]) -> Configuration {
    let mut c = Configuration::new();
    c.set("dfs.namenode.rpc-address", "127.0.0.1:0");
    let list: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    c.set("dfs.namenode.name.dir", list.join(","));
    c
}

fn clock() -> SharedClock {
    ManualClock::shared(1_700_000_000_000)
}

fn cfg() -> NamespaceConfig {
    NamespaceConfig {
        superuser: "hdfs".into(),
        ..NamespaceConfig::default()
    }
}

fn open(c: &Configuration) -> Result<(Arc<Durable>, Namespace), PersistError> {
    load(c, &clock(), cfg(), RecoveryMode::Strict)
}

fn perm(mode: u16) -> PermissionStatus {
    PermissionStatus {
        owner: "alice".into(),
        group: "staff".into(),
        mode,
    }
}

fn blk(id: u64, gs: u64, len: u64) -> FileBlock {
    FileBlock {
        id,
        gs,
        num_bytes: len,
    }
}

/// One op of every kind, on inodes 16386.. under the root.
fn script() -> Vec<EditOp> {
    let r = ROOT_INODE_ID;
    let add_file = |id, parent, name: &str| EditOp::AddFile {
        id,
        parent,
        name: name.as_bytes().to_vec(),
        perm: perm(0o644),
        mtime: 10 + id,
        replication: 3,
        block_size: 1 << 20,
        client_name: "DFSClient_1".into(),
        client_machine: "127.0.0.1".into(),
        replaced: None,
    };
    vec![
        EditOp::Mkdir {
            id: 16386,
            parent: r,
            name: b"a".to_vec(),
            perm: perm(0o755),
            mtime: 5,
        },
        add_file(16387, 16386, "f"),
        EditOp::AddBlock {
            file: 16387,
            block: blk(1 << 30 | 1, 1001, 0),
        },
        EditOp::UpdateLastBlock {
            file: 16387,
            block: blk(1 << 30 | 1, 1002, 1000),
        },
        EditOp::AddBlock {
            file: 16387,
            block: blk(1 << 30 | 2, 1003, 0),
        },
        EditOp::AbandonBlock {
            file: 16387,
            block_id: 1 << 30 | 2,
        },
        EditOp::SetGenstamp { gs: 1004 },
        EditOp::CloseFile {
            file: 16387,
            mtime: 20,
            atime: 20,
        },
        EditOp::ReopenFile {
            file: 16387,
            client_name: "DFSClient_2".into(),
            client_machine: "127.0.0.2".into(),
            new_block: false,
        },
        EditOp::UpdateLastBlock {
            file: 16387,
            block: blk(1 << 30 | 1, 1005, 1500),
        },
        EditOp::CloseFile {
            file: 16387,
            mtime: 30,
            atime: 30,
        },
        EditOp::SetReplication {
            id: 16387,
            replication: 2,
        },
        EditOp::SetPermission {
            id: 16386,
            mode: 0o700,
        },
        EditOp::SetOwner {
            id: 16387,
            owner: Some("bob".into()),
            group: None,
        },
        EditOp::SetTimes {
            id: 16387,
            mtime: Some(40),
            atime: None,
        },
        EditOp::Mkdir {
            id: 16388,
            parent: r,
            name: b"b".to_vec(),
            perm: perm(0o755),
            mtime: 41,
        },
        EditOp::Rename {
            id: 16387,
            dst_parent: 16388,
            dst_name: b"g".to_vec(),
            replaced: None,
            mtime: 42,
        },
        add_file(16389, r, "open"),
        EditOp::AddBlock {
            file: 16389,
            block: blk(1 << 30 | 3, 1006, 0),
        },
        add_file(16390, r, "gone"),
        EditOp::Delete {
            id: 16390,
            mtime: 50,
        },
    ]
}

fn apply_all(ns: &mut Namespace, ops: &[EditOp]) {
    for op in ops {
        ns.log_and_apply(op.clone(), Duration::ZERO).unwrap();
    }
}

/// The namespace as its image, minus the magic and txid (compared across restarts).
fn snapshot(ns: &Namespace) -> Vec<u8> {
    ns.encode_image().1
}

fn inprogress(dir: &Path) -> PathBuf {
    let cur = dir.join("current");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&cur)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("edits_inprogress_")
        })
        .collect();
    v.sort();
    v.pop().expect("an in-progress segment")
}

/// Bytes of records in an in-progress segment (its file also holds reserved zeros).
fn written_len(seg: &Path) -> u64 {
    let name = seg.file_name().unwrap().to_string_lossy().to_string();
    let first: u64 = name
        .trim_start_matches("edits_inprogress_")
        .parse()
        .unwrap();
    rhdfs_editlog::record::scan_segment(&std::fs::read(seg).unwrap(), first).valid_len
}

#[test]
fn format_refuses_existing_namespace_without_force() {
    let t = tempfile::tempdir().unwrap();
    let c = conf(&[t.path().join("n")]);
    let v1 = format(&c, &clock(), cfg(), false).unwrap();
    let err = format(&c, &clock(), cfg(), false).unwrap_err();
    assert!(
        matches!(
            err,
            PersistError::EditLog(EditLogError::AlreadyFormatted(_))
        ),
        "{err}"
    );
    let v2 = format(&c, &clock(), cfg(), true).unwrap();
    assert_ne!(v1.cluster_id, v2.cluster_id);
    let (d, ns) = open(&c).unwrap();
    assert_eq!(d.version().cluster_id, v2.cluster_id);
    assert_eq!(ns.last_txid(), 0);
    d.close();
}

#[test]
fn every_op_survives_a_crash_and_counters_are_restored() {
    let t = tempfile::tempdir().unwrap();
    let dirs = vec![t.path().join("n1"), t.path().join("n2")];
    let c = conf(&dirs);
    let (d, mut ns) = open(&c).unwrap();
    apply_all(&mut ns, &script());
    d.log().sync_all().unwrap();
    let want = snapshot(&ns);
    let (last_inode, last_block, last_gs) = (
        ns.next_inode_id(),
        ns.next_block_id(),
        ns.next_generation_stamp(),
    );
    d.abandon();
    drop(ns);

    let (d2, ns2) = open(&c).unwrap();
    assert_eq!(snapshot(&ns2), want);
    assert_eq!(ns2.last_txid(), script().len() as u64);
    assert_eq!(ns2.next_inode_id(), last_inode);
    assert_eq!(ns2.next_block_id(), last_block);
    assert_eq!(ns2.next_generation_stamp(), last_gs);
    // The open file keeps its writer's lease; the closed one has none.
    assert!(ns2.leases().has_lease("DFSClient_1"));
    assert!(!ns2.leases().has_lease("DFSClient_2"));
    let blocks = ns2.loaded_blocks();
    assert_eq!(blocks.len(), 2);
    assert!(
        blocks
            .iter()
            .any(|b| b.block.id == (1 << 30 | 3) && b.under_construction)
    );
    assert!(
        blocks
            .iter()
            .any(|b| b.block == blk(1 << 30 | 1, 1005, 1500) && !b.under_construction)
    );
    assert!(ns2.check_consistency().is_empty());
    d2.close();

    // A clean close then a restart: same namespace again.
    let (d3, ns3) = open(&c).unwrap();
    assert_eq!(snapshot(&ns3), want);
    d3.close();
}

#[test]
fn torn_tail_at_every_offset_keeps_exactly_the_prefix() {
    let t = tempfile::tempdir().unwrap();
    let master = t.path().join("master");
    let c = conf(std::slice::from_ref(&master));
    let ops = script();
    let (d, mut ns) = open(&c).unwrap();
    apply_all(&mut ns, &ops[..ops.len() - 1]);
    d.log().sync_all().unwrap();
    let want = snapshot(&ns);
    let seg = inprogress(&master);
    let before = written_len(&seg);
    apply_all(&mut ns, &ops[ops.len() - 1..]);
    d.log().sync_all().unwrap();
    let after = written_len(&seg);
    assert!(after > before);
    d.abandon();
    drop(ns);

    for cut in before..after {
        let copy = t.path().join(format!("cut{cut}"));
        copy_dir(&master, &copy);
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(copy.join("current").join(seg.file_name().unwrap()))
            .unwrap();
        f.set_len(cut).unwrap();
        drop(f);
        let (d, ns) = open(&conf(std::slice::from_ref(&copy))).unwrap();
        assert_eq!(snapshot(&ns), want, "cut at {cut}");
        assert_eq!(ns.last_txid(), ops.len() as u64 - 1);
        d.close();
        std::fs::remove_dir_all(&copy).unwrap();
    }
}

#[test]
fn flipped_bit_in_the_middle_names_file_and_offset_and_recover_keeps_prefix() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("n");
    let c = conf(std::slice::from_ref(&dir));
    let ops = script();
    let (d, mut ns) = open(&c).unwrap();
    apply_all(&mut ns, &ops[..3]);
    d.log().sync_all().unwrap();
    let seg = inprogress(&dir);
    let mid = written_len(&seg) - 2;
    apply_all(&mut ns, &ops[3..]);
    d.log().sync_all().unwrap();
    d.abandon();
    drop(ns);
    let mut bytes = std::fs::read(&seg).unwrap();
    bytes[mid as usize] ^= 0x10;
    std::fs::write(&seg, &bytes).unwrap();

    let err = open(&c).unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(err, PersistError::EditLog(EditLogError::Corrupt { .. })),
        "{msg}"
    );
    assert!(
        msg.contains(&seg.file_name().unwrap().to_string_lossy().to_string()),
        "{msg}"
    );
    assert!(msg.contains("offset"), "{msg}");

    let (d, ns) = load(&c, &clock(), cfg(), RecoveryMode::KeepPrefix).unwrap();
    assert_eq!(ns.last_txid(), 2);
    d.close();
    let (d, ns) = open(&c).unwrap();
    assert_eq!(ns.last_txid(), 2);
    d.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkpoint_under_concurrent_writers_then_restart_gives_same_namespace() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("n");
    let c = conf(std::slice::from_ref(&dir));
    let (d, ns) = open(&c).unwrap();
    let ns = Arc::new(parking_lot::Mutex::new(ns));
    let writers: Vec<_> = (0..4u64)
        .map(|w| {
            let ns = ns.clone();
            let d = d.clone();
            tokio::spawn(async move {
                for i in 0..150u64 {
                    let txid = {
                        let mut ns = ns.lock();
                        let id = ns.next_inode_id();
                        ns.log_and_apply(
                            EditOp::Mkdir {
                                id,
                                parent: ROOT_INODE_ID,
                                name: format!("w{w}-{i}").into_bytes(),
                                perm: perm(0o755),
                                mtime: i,
                            },
                            Duration::ZERO,
                        )
                        .unwrap();
                        ns.last_txid()
                    };
                    d.log().sync_async(txid).await.unwrap();
                }
            })
        })
        .collect();
    let mut images = Vec::new();
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(5)).await;
        let stats = d.checkpoint().await.unwrap();
        images.push(stats.txid);
    }
    for w in writers {
        w.await.unwrap();
    }
    let want = snapshot(&ns.lock());
    assert_eq!(ns.lock().last_txid(), 600);
    d.abandon();
    drop(ns);
    assert!(d.newest_image_txid() > 0, "{images:?}");

    let (d2, ns2) = open(&c).unwrap();
    assert_eq!(snapshot(&ns2), want);
    assert_eq!(ns2.total_files_and_dirs(), 601);
    d2.close();
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else if e.file_name() != rhdfs_editlog::LOCK_FILE {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

/// One writer's round `i`: a directory with a file of one block, closed; every third
/// round the previous directory is renamed and its mode changed, every fifth it is
/// deleted. Each op is logged under the lock, then synced as the RPC layer does.
async fn writer_round(ns: &parking_lot::Mutex<Namespace>, d: &Durable, w: u64, i: u64) {
    let txid = {
        let mut ns = ns.lock();
        let dir = ns.next_inode_id();
        let mut ops = vec![EditOp::Mkdir {
            id: dir,
            parent: ROOT_INODE_ID,
            name: format!("w{w}-{i}").into_bytes(),
            perm: perm(0o755),
            mtime: 1000 + i,
        }];
        let file = dir + 1;
        let block = ns.next_block_id();
        let gs = ns.next_generation_stamp();
        ops.push(EditOp::AddFile {
            id: file,
            parent: dir,
            name: b"f".to_vec(),
            perm: perm(0o640),
            mtime: 1000 + i,
            replication: 3,
            block_size: 1 << 20,
            client_name: format!("DFSClient_w{w}"),
            client_machine: "127.0.0.1".into(),
            replaced: None,
        });
        ops.push(EditOp::AddBlock {
            file,
            block: blk(block, gs, 0),
        });
        ops.push(EditOp::UpdateLastBlock {
            file,
            block: blk(block, gs, 100 + i),
        });
        // Every seventh file stays open for write.
        if !i.is_multiple_of(7) {
            ops.push(EditOp::CloseFile {
                file,
                mtime: 2000 + i,
                atime: 2000 + i,
            });
        }
        for op in ops {
            ns.log_and_apply(op, Duration::ZERO).unwrap();
        }
        if i > 0 {
            let prev = format!("w{w}-{}", i - 1).into_bytes();
            let prev_id = ns.dir().child(ROOT_INODE_ID, &prev);
            if let Some(prev_id) = prev_id {
                if i.is_multiple_of(5) {
                    ns.log_and_apply(
                        EditOp::Delete {
                            id: prev_id,
                            mtime: 3000 + i,
                        },
                        Duration::ZERO,
                    )
                    .unwrap();
                } else if i.is_multiple_of(3) {
                    ns.log_and_apply(
                        EditOp::Rename {
                            id: prev_id,
                            dst_parent: ROOT_INODE_ID,
                            dst_name: format!("r{w}-{i}").into_bytes(),
                            replaced: None,
                            mtime: 3000 + i,
                        },
                        Duration::ZERO,
                    )
                    .unwrap();
                    ns.log_and_apply(
                        EditOp::SetPermission {
                            id: prev_id,
                            mode: 0o700,
                        },
                        Duration::ZERO,
                    )
                    .unwrap();
                    ns.log_and_apply(
                        EditOp::SetTimes {
                            id: prev_id,
                            mtime: None,
                            atime: Some(4000 + i),
                        },
                        Duration::ZERO,
                    )
                    .unwrap();
                }
            }
        }
        ns.last_txid()
    };
    d.log().sync_async(txid).await.unwrap();
}

fn spawn_writers(
    ns: &Arc<parking_lot::Mutex<Namespace>>,
    d: &Arc<Durable>,
    writers: u64,
    rounds: u64,
) -> Vec<tokio::task::JoinHandle<()>> {
    (0..writers)
        .map(|w| {
            let (ns, d) = (ns.clone(), d.clone());
            tokio::spawn(async move {
                for i in 0..rounds {
                    writer_round(&ns, &d, w, i).await;
                    if i.is_multiple_of(8) {
                        tokio::task::yield_now().await;
                    }
                }
            })
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offline_image_equals_the_live_encoding_at_the_same_txid() {
    let t = tempfile::tempdir().unwrap();
    let dirs = vec![t.path().join("n1"), t.path().join("n2")];
    let c = conf(&dirs);
    let (d, mut ns) = open(&c).unwrap();
    apply_all(&mut ns, &script());
    d.log().sync_all().unwrap();
    let ns = Arc::new(parking_lot::Mutex::new(ns));
    let writers = spawn_writers(&ns, &d, 3, 150);
    tokio::time::sleep(Duration::from_millis(5)).await;

    // The live namespace at a roll: under its lock nothing is appended between the roll
    // and the encoding, so the encoding is exactly the namespace at txid T.
    let (upto, live) = {
        let (ns, d) = (ns.clone(), d.clone());
        tokio::task::spawn_blocking(move || {
            let g = ns.lock();
            let upto = d.log().roll().unwrap() - 1;
            (upto, g.encode_image())
        })
        .await
        .unwrap()
    };
    assert_eq!(live.0, upto);
    // The writers go on while the image for T is built off the live namespace.
    let stats = {
        let d = d.clone();
        let _one = d.checkpointing.lock().await;
        let d2 = d.clone();
        tokio::task::spawn_blocking(move || d2.checkpoint_upto(upto))
            .await
            .unwrap()
            .unwrap()
    };
    assert_eq!(stats.txid, upto);
    assert_eq!(stats.base_txid, 0);
    assert_eq!(stats.replayed, upto);
    assert_eq!(stats.bytes, live.1.len());
    let during = ns.lock().last_txid();
    for w in writers {
        w.await.unwrap();
    }
    let end = ns.lock().last_txid();
    assert!(
        upto < during && during <= end,
        "writers ran on across the checkpoint: roll {upto}, after the build {during}, end {end}"
    );
    // Byte for byte the same payload, in every name directory.
    for dir in &dirs {
        let name = dir
            .join("current")
            .join(rhdfs_editlog::layout::image_name(upto));
        let file = std::fs::read(&name).unwrap();
        let payload = rhdfs_editlog::decode_image(&file).unwrap();
        assert!(payload == live.1.as_slice(), "{} differs", name.display());
    }
    d.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkpoints_under_writers_then_restart_from_image_and_later_edits() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("n");
    let c = conf(std::slice::from_ref(&dir));
    let (d, ns) = open(&c).unwrap();
    let ns = Arc::new(parking_lot::Mutex::new(ns));
    let writers = spawn_writers(&ns, &d, 4, 150);
    let mut taken = Vec::new();
    for _ in 0..4 {
        tokio::time::sleep(Duration::from_millis(5)).await;
        let s = d.checkpoint().await.unwrap();
        assert!(s.txid >= s.base_txid);
        taken.push(s);
    }
    for w in writers {
        w.await.unwrap();
    }
    // More edits after the last checkpoint, so the restart replays some.
    writer_round(&ns, &d, 9, 0).await;
    writer_round(&ns, &d, 9, 1).await;
    let want = snapshot(&ns.lock());
    let last = ns.lock().last_txid();
    let newest = d.newest_image_txid();
    assert!(newest > 0 && newest < last, "{taken:?} last {last}");
    assert!(
        taken.iter().filter(|s| s.replayed > 0).count() >= 2,
        "{taken:?}"
    );
    // Only the segments after the oldest retained image are left.
    let oldest = d.images().oldest_retained_txid().unwrap();
    let mut replayable = 0;
    d.log()
        .read_finalized::<PersistError>(oldest, d.log().roll().unwrap() - 1, |_, _| {
            replayable += 1;
            Ok(())
        })
        .unwrap();
    assert_eq!(replayable, last - oldest);
    d.abandon();
    drop(ns);

    let (d2, ns2) = open(&c).unwrap();
    assert_eq!(snapshot(&ns2), want);
    assert_eq!(ns2.last_txid(), last);
    assert!(ns2.check_consistency().is_empty());
    d2.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn damaged_segment_fails_the_checkpoint_naming_file_and_offset_and_saves_nothing() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("n");
    let c = conf(std::slice::from_ref(&dir));
    let (d, mut ns) = open(&c).unwrap();
    apply_all(&mut ns, &script());
    d.log().sync_all().unwrap();
    let upto = d.log().roll().unwrap() - 1;
    let seg = dir
        .join("current")
        .join(rhdfs_editlog::layout::finalized_name(1, upto));
    let good = std::fs::read(&seg).unwrap();
    let mut bad = good.clone();
    bad[good.len() / 2] ^= 0x08;
    std::fs::write(&seg, &bad).unwrap();

    let err = d.checkpoint().await.unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(&err, PersistError::EditLog(EditLogError::Corrupt { path, .. }) if *path == seg),
        "{msg}"
    );
    assert!(msg.contains("offset"), "{msg}");
    assert_eq!(d.images().image_txids(), vec![0], "no partial image saved");
    // The NameNode keeps logging.
    std::fs::write(&seg, &good).unwrap();
    apply_all(&mut ns, &[EditOp::SetGenstamp { gs: 5000 }]);
    d.log().sync_all().unwrap();

    // A record that passes its checksum but is not an op: named by file and offset too.
    let junk = d.log().append(b"not an edit op").unwrap();
    d.log().sync_all().unwrap();
    let err = d.checkpoint().await.unwrap_err();
    match &err {
        PersistError::RecordAt {
            path, offset, txid, ..
        } => {
            assert_eq!(*txid, junk);
            assert!(path.to_string_lossy().contains("edits_"), "{err}");
            assert!(*offset > 0);
        }
        other => panic!("unexpected {other}"),
    }
    assert_eq!(d.images().image_txids(), vec![0]);
    d.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkpointer_keeps_going_after_a_failure_and_retries_a_period_later() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("n");
    let c = conf(std::slice::from_ref(&dir));
    let manual = ManualClock::shared(1_700_000_000_000);
    let shared: SharedClock = manual.clone();
    let (d, mut ns) = load(&c, &shared, cfg(), RecoveryMode::Strict).unwrap();
    apply_all(&mut ns, &script());
    d.log().sync_all().unwrap();
    let upto = d.log().roll().unwrap() - 1;
    let seg = dir
        .join("current")
        .join(rhdfs_editlog::layout::finalized_name(1, upto));
    let good = std::fs::read(&seg).unwrap();
    let mut bad = good.clone();
    bad[good.len() / 2] ^= 0x01;
    std::fs::write(&seg, &bad).unwrap();

    let policy = super::CheckpointPolicy {
        period: Duration::from_secs(3600),
        txns: 1,
        check: Duration::from_millis(10),
    };
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let task = super::spawn_checkpointer(d.clone(), policy, shared, stop.clone());
    // The first try fails (damaged segment) and saves nothing; the log keeps working.
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert_eq!(d.images().image_txids(), vec![0]);
    apply_all(&mut ns, &[EditOp::SetGenstamp { gs: 7000 }]);
    d.log().sync_all().unwrap();
    // Repaired, but no retry before a period has passed.
    std::fs::write(&seg, &good).unwrap();
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert_eq!(d.images().image_txids(), vec![0]);
    manual.advance(Duration::from_secs(3601));
    let want = ns.last_txid();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while d.newest_image_txid() != want {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no checkpoint after the retry period: {:?}",
            d.images().image_txids()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    task.await.unwrap();
    // The image is the namespace.
    let (txid, payload) = d.images().load_latest_image().unwrap().unwrap();
    assert_eq!((txid, payload), ns.encode_image());
    d.close();
}
