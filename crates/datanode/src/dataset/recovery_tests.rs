//! Block recovery on one dataset: RBW/RWR/FINALIZED -> RUR (initReplicaRecovery), RUR ->
//! FINALIZED (updateReplicaUnderRecovery), stopped writers, newer recoveries, restarts.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::mpsc;

use crate::actor::report::encode_block_list;
use crate::checksum::{ChecksumSpec, ChecksumType};
use crate::dataset::Dataset;
use crate::error::StorageError;
use crate::notify::{BlockEvent, BlockNotifier, BlockStatus};
use crate::reader::ReplicaReader;
use crate::recovery::replica::{init_replica_recovery, update_replica_under_recovery};
use crate::recovery::sync::ReplicaReport;
use crate::replica::ReplicaState;

const BP: &str = "BP-7-127.0.0.1-7";
const ID: u64 = (1 << 30) + 7;

fn spec() -> ChecksumSpec {
    ChecksumSpec::new(ChecksumType::Crc32c, 512)
}

fn data(n: usize) -> Vec<u8> {
    (0..n as u32).map(|i| (i * 31 + 7) as u8).collect()
}

fn open(dir: &Path) -> Arc<Dataset> {
    Dataset::open(&[dir.to_path_buf()], 0).unwrap()
}

fn pool_dir(dir: &Path, state: &str) -> PathBuf {
    dir.join("current").join(BP).join("current").join(state)
}

fn meta_crcs(path: &Path) -> Vec<u8> {
    fs::read(path).unwrap()[7..].to_vec()
}

/// An RBW replica of `len` bytes at GS 1001 whose writer is gone.
fn rbw(ds: &Arc<Dataset>, len: usize) {
    let mut w = ds.create_rbw(BP, ID, 1001, spec(), 0).unwrap();
    w.write_at(0, &data(len)).unwrap();
}

#[test]
fn init_moves_rbw_to_rur_and_reports_rbw_with_its_length_on_disk() {
    let d = tempfile::tempdir().unwrap();
    let ds = open(d.path());
    let mut w = ds.create_rbw(BP, ID, 1001, spec(), 0).unwrap();
    w.write_at(0, &data(1300)).unwrap();

    let rep = init_replica_recovery(&ds, BP, ID, 1001, 1005).unwrap();
    assert_eq!(
        rep,
        Some(ReplicaReport {
            state: ReplicaState::Rbw,
            gs: 1001,
            len: 1300
        })
    );
    let r = ds.get(BP, ID).unwrap();
    assert_eq!(r.state, ReplicaState::Rur);
    assert_eq!(r.original_state(), ReplicaState::Rbw);
    assert_eq!(r.recovery_id(), Some(1005));
    // The files stay in rbw/.
    assert!(pool_dir(d.path(), "rbw").join(format!("blk_{ID}")).exists());
    assert_eq!(
        ds.block_path(BP, &r),
        pool_dir(d.path(), "rbw").join(format!("blk_{ID}"))
    );
    // Full block reports tell the NameNode what the replica was: RBW, GS 1001, 1300 bytes.
    let (list, n) = encode_block_list(&ds.replicas(BP));
    let m = u64::MAX;
    assert_eq!(n, 1);
    assert_eq!(list, vec![0, 1, m, m, m, ID, 1300, 1001, 1]);
    // Still readable at its length.
    let reader = ReplicaReader::open(&ds, BP, ID, 1001).unwrap();
    assert_eq!(reader.read(0, 1300).unwrap().0, data(1300));
    drop(w);
}

#[test]
fn init_reports_only_bytes_the_meta_file_vouches_for() {
    let d = tempfile::tempdir().unwrap();
    let ds = open(d.path());
    rbw(&ds, 1024);
    let r = ds.get(BP, ID).unwrap();
    // Bytes whose checksums never reached the meta file (a write cut off after the data)
    // do not count.
    let mut f = OpenOptions::new()
        .append(true)
        .open(ds.block_path(BP, &r))
        .unwrap();
    f.write_all(&[9u8; 700]).unwrap();
    drop(f);
    let rep = init_replica_recovery(&ds, BP, ID, 1001, 1005)
        .unwrap()
        .unwrap();
    assert_eq!(rep.len, 1024);

    // A last chunk that does not match its CRC is left out (a write torn between data
    // and checksum).
    let id2 = ID + 1;
    let mut w = ds.create_rbw(BP, id2, 1001, spec(), 0).unwrap();
    w.write_at(0, &data(1300)).unwrap();
    drop(w);
    let r2 = ds.get(BP, id2).unwrap();
    let f = OpenOptions::new()
        .write(true)
        .open(ds.block_path(BP, &r2))
        .unwrap();
    std::os::unix::fs::FileExt::write_all_at(&f, b"torn", 1100).unwrap();
    let rep = init_replica_recovery(&ds, BP, id2, 1001, 1005)
        .unwrap()
        .unwrap();
    assert_eq!((rep.state, rep.len), (ReplicaState::Rbw, 1024));
}

#[test]
fn a_newer_recovery_takes_over_an_older_or_equal_one_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let ds = open(d.path());
    rbw(&ds, 1000);
    init_replica_recovery(&ds, BP, ID, 1001, 1005).unwrap();
    for old in [1004, 1005] {
        let err = init_replica_recovery(&ds, BP, ID, 1001, old).unwrap_err();
        assert!(
            matches!(err, StorageError::RecoveryInProgress { .. }),
            "{old}: {err}"
        );
        assert_eq!(ds.get(BP, ID).unwrap().recovery_id(), Some(1005));
    }
    // The newer one takes the replica over and hears its original state.
    let rep = init_replica_recovery(&ds, BP, ID, 1001, 1007)
        .unwrap()
        .unwrap();
    assert_eq!(
        (rep.state, rep.gs, rep.len),
        (ReplicaState::Rbw, 1001, 1000)
    );
    assert_eq!(ds.get(BP, ID).unwrap().recovery_id(), Some(1007));
    // Neither a transfer nor a pipeline recovery replaces a replica under recovery.
    assert!(ds.create_temporary(BP, ID, 1009, spec(), 0).is_err());
    assert!(ds.recover_rbw(BP, ID, 1001, 1008, 0, 1000).is_err());
    // The older recovery can no longer finish.
    let err = update_replica_under_recovery(&ds, BP, ID, 1005, Some(1000), 900).unwrap_err();
    assert!(err.to_string().contains("differs from 1005"), "{err}");
    assert_eq!(ds.get(BP, ID).unwrap().state, ReplicaState::Rur);
}

#[test]
fn init_refuses_stale_replicas_old_recovery_ids_and_temporary_replicas() {
    let d = tempfile::tempdir().unwrap();
    let ds = open(d.path());
    rbw(&ds, 100);
    // The NameNode knows a newer GS than this replica has.
    assert!(init_replica_recovery(&ds, BP, ID, 1002, 1005).is_err());
    // A recovery id not newer than the replica's GS.
    assert!(init_replica_recovery(&ds, BP, ID, 1001, 1001).is_err());
    assert_eq!(ds.get(BP, ID).unwrap().state, ReplicaState::Rbw);
    // No replica at all.
    assert_eq!(
        init_replica_recovery(&ds, BP, ID + 9, 1001, 1005).unwrap(),
        None
    );
    // TEMPORARY (a DataNode-to-DataNode copy) is not recovered, and its writer is stopped.
    let mut t = ds.create_temporary(BP, ID + 1, 1001, spec(), 0).unwrap();
    t.write_at(0, b"abc").unwrap();
    let err = init_replica_recovery(&ds, BP, ID + 1, 1001, 1005).unwrap_err();
    assert!(err.to_string().contains("TEMPORARY"), "{err}");
    assert!(t.write_at(3, b"def").is_err());
    assert_eq!(ds.get(BP, ID + 1).unwrap().state, ReplicaState::Temporary);
}

#[test]
fn update_needs_the_owning_recovery_of_an_rur_replica() {
    let d = tempfile::tempdir().unwrap();
    let ds = open(d.path());
    rbw(&ds, 1000);
    let err = update_replica_under_recovery(&ds, BP, ID, 1005, None, 1000).unwrap_err();
    assert!(err.to_string().contains("not RUR"), "{err}");
    init_replica_recovery(&ds, BP, ID, 1001, 1005).unwrap();
    let err = update_replica_under_recovery(&ds, BP, ID, 1004, None, 1000).unwrap_err();
    assert!(err.to_string().contains("differs from 1004"), "{err}");
    let err = update_replica_under_recovery(&ds, BP, ID, 1005, None, 1001).unwrap_err();
    assert!(
        err.to_string().contains("fewer than the recovered length"),
        "{err}"
    );
    let err = update_replica_under_recovery(&ds, BP, ID, 1005, Some(999), 900).unwrap_err();
    assert!(err.to_string().contains("not the 999 it reported"), "{err}");
    let err = update_replica_under_recovery(&ds, BP, ID + 5, 1005, None, 1).unwrap_err();
    assert!(matches!(err, StorageError::ReplicaNotFound(_)), "{err}");
    let r = ds.get(BP, ID).unwrap();
    assert_eq!(
        (r.state, r.gs, r.num_bytes),
        (ReplicaState::Rur, 1001, 1000)
    );
}

#[derive(Debug)]
struct Events(mpsc::UnboundedSender<BlockEvent>);

impl BlockNotifier for Events {
    fn notify(&self, ev: BlockEvent) {
        let _ = self.0.send(ev);
    }
}

#[test]
fn update_truncates_with_a_correct_checksum_and_finalizes_with_the_recovery_id() {
    let d = tempfile::tempdir().unwrap();
    let ds = open(d.path());
    let (tx, mut rx) = mpsc::unbounded_channel();
    ds.set_notifier(Arc::new(Events(tx)));
    rbw(&ds, 1300);
    init_replica_recovery(&ds, BP, ID, 1001, 1005).unwrap();
    let info = update_replica_under_recovery(&ds, BP, ID, 1005, Some(1300), 1000).unwrap();
    assert_eq!(
        (info.state, info.gs, info.num_bytes, info.recovery),
        (ReplicaState::Finalized, 1005, 1000, None)
    );
    assert_eq!(ds.get(BP, ID), Some(info.clone()));
    let fin = pool_dir(d.path(), "finalized");
    assert_eq!(fs::read(fin.join(format!("blk_{ID}"))).unwrap(), data(1000));
    assert_eq!(
        meta_crcs(&fin.join(format!("blk_{ID}_1005.meta"))),
        spec().compute(&data(1000)),
        "last partial chunk's CRC recomputed"
    );
    assert!(!pool_dir(d.path(), "rbw").join(format!("blk_{ID}")).exists());
    assert!(
        !pool_dir(d.path(), "rbw")
            .join(format!("blk_{ID}_1001.meta"))
            .exists()
    );
    // Read back through the reader: the stored CRCs of a finalized replica are served.
    let r = ReplicaReader::open(&ds, BP, ID, 1005).unwrap();
    let (bytes, sums) = r.read(0, 1000).unwrap();
    assert_eq!(bytes, data(1000));
    spec().verify(&bytes, &sums).unwrap();
    // RECEIVED_BLOCK with the new GS and length for the next incremental report.
    let ev = rx.try_recv().unwrap();
    assert_eq!(
        (ev.block_id, ev.gs, ev.num_bytes, ev.status),
        (ID, 1005, 1000, BlockStatus::Received)
    );
    assert_eq!(ev.storage_id, ds.storage_ids()[0]);
    // Survives a restart as finalized.
    drop(r);
    drop(ds);
    let ds = open(d.path());
    let r = ds.get(BP, ID).unwrap();
    assert_eq!(
        (r.state, r.gs, r.num_bytes),
        (ReplicaState::Finalized, 1005, 1000)
    );
}

#[test]
fn a_finalized_replica_under_recovery_stays_in_finalized_and_cannot_be_appended() {
    let d = tempfile::tempdir().unwrap();
    let ds = open(d.path());
    let mut w = ds.create_rbw(BP, ID, 1001, spec(), 0).unwrap();
    w.write_at(0, &data(800)).unwrap();
    w.finalize().unwrap();
    let rep = init_replica_recovery(&ds, BP, ID, 1001, 1003)
        .unwrap()
        .unwrap();
    assert_eq!((rep.state, rep.len), (ReplicaState::Finalized, 800));
    assert!(
        ds.append(BP, ID, 1001, 1002, 800).is_err(),
        "RUR is not appendable"
    );
    let (list, _) = encode_block_list(&ds.replicas(BP));
    let m = u64::MAX;
    assert_eq!(list, vec![1, 0, ID, 800, 1001, m, m, m]);
    let info = update_replica_under_recovery(&ds, BP, ID, 1003, Some(800), 800).unwrap();
    assert_eq!(
        (info.state, info.gs, info.num_bytes),
        (ReplicaState::Finalized, 1003, 800)
    );
    let fin = pool_dir(d.path(), "finalized");
    assert_eq!(
        meta_crcs(&fin.join(format!("blk_{ID}_1003.meta"))),
        spec().compute(&data(800))
    );
    assert!(!fin.join(format!("blk_{ID}_1001.meta")).exists());
}

#[test]
fn a_writer_attached_before_init_cannot_write_or_finalize_afterwards() {
    let d = tempfile::tempdir().unwrap();
    let ds = open(d.path());
    let mut w = ds.create_rbw(BP, ID, 1001, spec(), 0).unwrap();
    w.write_at(0, &data(600)).unwrap();
    init_replica_recovery(&ds, BP, ID, 1001, 1005).unwrap();
    let err = w.write_at(600, &data(100)).unwrap_err();
    assert!(err.to_string().contains("under recovery"), "{err}");
    assert!(w.truncate(10).is_err());
    assert!(w.finalize().is_err());
    let r = ds.get(BP, ID).unwrap();
    assert_eq!((r.state, r.num_bytes), (ReplicaState::Rur, 600));
    let block = pool_dir(d.path(), "rbw").join(format!("blk_{ID}"));
    assert_eq!(
        fs::metadata(&block).unwrap().len(),
        600,
        "nothing written after init"
    );
    // The recovery finishes normally.
    let info = update_replica_under_recovery(&ds, BP, ID, 1005, Some(600), 600).unwrap();
    assert_eq!((info.state, info.gs), (ReplicaState::Finalized, 1005));
}

#[test]
fn init_waits_for_a_write_in_flight_and_no_write_lands_after_it() {
    let d = tempfile::tempdir().unwrap();
    let ds = open(d.path());
    let mut w = ds.create_rbw(BP, ID, 1001, spec(), 0).unwrap();
    w.write_at(0, &data(512)).unwrap();
    let started = Arc::new(AtomicBool::new(false));
    let s = started.clone();
    let writer = std::thread::spawn(move || {
        let chunk = data(4096);
        let mut n = 0u64;
        loop {
            let off = w.len();
            if w.write_at(off, &chunk).is_err() {
                return n;
            }
            n += 1;
            s.store(true, Ordering::Release);
        }
    });
    while !started.load(Ordering::Acquire) {
        std::thread::yield_now();
    }
    let rep = init_replica_recovery(&ds, BP, ID, 1001, 1005)
        .unwrap()
        .unwrap();
    let writes = writer.join().unwrap();
    assert!(writes >= 1);
    let block = pool_dir(d.path(), "rbw").join(format!("blk_{ID}"));
    let on_disk = fs::metadata(&block).unwrap().len();
    assert_eq!(
        rep.len, on_disk,
        "the reported length is every byte written"
    );
    assert_eq!(rep.len, 512 + 4096 * writes);
    let info = update_replica_under_recovery(&ds, BP, ID, 1005, Some(rep.len), rep.len).unwrap();
    let r = ReplicaReader::open(&ds, BP, ID, 1005).unwrap();
    let (bytes, sums) = r.read(0, info.num_bytes).unwrap();
    spec().verify(&bytes, &sums).unwrap();
}

#[test]
fn a_restarted_dataset_reports_a_replica_under_recovery_as_rwr() {
    let d = tempfile::tempdir().unwrap();
    {
        let ds = open(d.path());
        rbw(&ds, 1300);
        init_replica_recovery(&ds, BP, ID, 1001, 1005).unwrap();
        assert_eq!(ds.get(BP, ID).unwrap().state, ReplicaState::Rur);
    }
    let ds = open(d.path());
    let r = ds.get(BP, ID).unwrap();
    assert_eq!(
        (r.state, r.gs, r.num_bytes, r.recovery),
        (ReplicaState::Rwr, 1001, 1300, None)
    );
    let (list, _) = encode_block_list(&ds.replicas(BP));
    let m = u64::MAX;
    assert_eq!(list, vec![0, 1, m, m, m, ID, 1300, 1001, 2]);
    // A new recovery takes it from RWR.
    let rep = init_replica_recovery(&ds, BP, ID, 1001, 1006)
        .unwrap()
        .unwrap();
    assert_eq!((rep.state, rep.len), (ReplicaState::Rwr, 1300));
}
