//! Unit tests of the storage layer: meta files, unaligned overwrites, scan after restart.

use std::fs;
use std::path::PathBuf;

use crate::checksum::{ChecksumSpec, ChecksumType};
use crate::dataset::{Dataset, delete_files};
use crate::reader::ReplicaReader;
use crate::replica::ReplicaState;

const BP: &str = "BP-1-127.0.0.1-1";

fn spec() -> ChecksumSpec {
    ChecksumSpec::new(ChecksumType::Crc32c, 512)
}

fn meta_crcs(path: &PathBuf) -> Vec<u32> {
    let bytes = fs::read(path).unwrap();
    assert_eq!(&bytes[..7], &[0, 1, 2, 0, 0, 2, 0]);
    bytes[7..]
        .chunks(4)
        .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn expected_crcs(data: &[u8]) -> Vec<u32> {
    data.chunks(512).map(crc32c::crc32c).collect()
}

#[test]
fn write_finalize_layout_and_meta() {
    let d = tempfile::tempdir().unwrap();
    let ds = Dataset::open(&[d.path().to_path_buf()], 0).unwrap();
    let data: Vec<u8> = (0..1300u32).map(|i| (i * 7) as u8).collect();
    let mut w = ds.create_rbw(BP, 1073741825, 1001, spec(), 0).unwrap();
    let rbw = d
        .path()
        .join("current")
        .join(BP)
        .join("current")
        .join("rbw");
    assert!(rbw.join("blk_1073741825").exists());
    w.write_at(0, &data).unwrap();
    let info = w.finalize().unwrap();
    assert_eq!(info.state, ReplicaState::Finalized);
    assert_eq!(info.num_bytes, 1300);
    let fin = d
        .path()
        .join("current")
        .join(BP)
        .join("current")
        .join("finalized");
    assert_eq!(fs::read(fin.join("blk_1073741825")).unwrap(), data);
    let m = fin.join("blk_1073741825_1001.meta");
    assert_eq!(meta_crcs(&m), expected_crcs(&data));
    assert!(!rbw.join("blk_1073741825").exists());
}

#[test]
fn unaligned_and_overlapping_writes_recompute_crc() {
    let d = tempfile::tempdir().unwrap();
    let ds = Dataset::open(&[d.path().to_path_buf()], 0).unwrap();
    let full: Vec<u8> = (0..2000u32).map(|i| (i % 251) as u8).collect();
    let mut w = ds.create_rbw(BP, 5, 1001, spec(), 0).unwrap();
    // hflush pattern: 3 bytes, then the same chunk re-sent with more bytes.
    w.write_at(0, &full[..3]).unwrap();
    w.write_at(0, &full[..6]).unwrap();
    w.write_at(0, &full[..9]).unwrap();
    // append pattern: mid-chunk start, never crossing the boundary.
    w.write_at(9, &full[9..512]).unwrap();
    w.write_at(512, &full[512..1000]).unwrap();
    w.write_at(1000, &full[1000..1024]).unwrap();
    // a packet starting mid-chunk and crossing chunk boundaries.
    w.write_at(1024, &full[1024..1030]).unwrap();
    w.write_at(1030, &full[1030..1700]).unwrap();
    // overwrite inside existing data, ending mid-chunk with old bytes after it.
    w.write_at(1100, &full[1100..1200]).unwrap();
    w.write_at(1700, &full[1700..]).unwrap();
    assert_eq!(w.len(), 2000);
    let meta = ds.meta_path(BP, &ds.get(BP, 5).unwrap());
    assert_eq!(meta_crcs(&meta), expected_crcs(&full));
    // a gap is refused
    assert!(w.write_at(2500, b"x").is_err());
    // truncation recomputes the last partial chunk
    w.truncate(1500).unwrap();
    assert_eq!(meta_crcs(&meta), expected_crcs(&full[..1500]));
    let info = w.finalize().unwrap();
    let r = ReplicaReader::open(&ds, BP, 5, 1001).unwrap();
    let (data, sums) = r.read(512, 1500).unwrap();
    assert_eq!(data, &full[512..1500]);
    assert_eq!(sums, spec().compute(&full[512..1500]));
    // BLOCK_CHECKSUM over a shorter length recomputes the last partial chunk
    let crcs = r.block_crcs(700).unwrap();
    assert_eq!(crcs, spec().compute(&full[..700]));
    assert_eq!(info.num_bytes, 1500);
}

/// A packet's CRCs are stored as received when the packet covers whole chunks (or ends the
/// replica) — so bytes damaged on the way to a node that did not verify them leave CRCs that
/// disagree with the data, as Hadoop's receiver leaves them — and are computed again over old
/// and new bytes when the packet starts or ends inside a chunk with data.
#[test]
fn packet_crcs_stored_as_received_on_chunk_boundaries() {
    let d = tempfile::tempdir().unwrap();
    let ds = Dataset::open(&[d.path().to_path_buf()], 0).unwrap();
    let full: Vec<u8> = (0..1800u32).map(|i| (i % 241) as u8).collect();
    let mut w = ds.create_rbw(BP, 11, 1001, spec(), 0).unwrap();
    let meta = ds.meta_path(BP, &ds.get(BP, 11).unwrap());
    // Whole chunks with CRCs that are not those of the data: stored as received.
    let wrong: Vec<u8> = (0..8u8).collect();
    w.write_packet(0, &full[..1024], &wrong).unwrap();
    assert_eq!(&fs::read(&meta).unwrap()[7..], &wrong[..]);
    // Ending the replica inside a chunk: the received CRC of the short chunk is stored.
    let sums = spec().compute(&full[1024..1300]);
    w.write_packet(1024, &full[1024..1300], &sums).unwrap();
    // Starting inside that chunk: its CRC is computed over the old and new bytes, whatever
    // the packet says.
    w.write_packet(1300, &full[1300..1800], &[0xff; 8]).unwrap();
    let crcs = meta_crcs(&meta);
    assert_eq!(crcs[2..], expected_crcs(&full)[2..]);
    // Checksum bytes that do not match the chunking are not stored: computed instead.
    w.write_packet(0, &full[..1024], &[0u8; 4]).unwrap();
    assert_eq!(meta_crcs(&meta), expected_crcs(&full));
    assert_eq!(w.len(), 1800);
}

/// A run of packets lands as the same packets written one by one would: data in place, CRCs
/// as received where every packet but the last ends on a chunk boundary, and computed (over
/// old and new bytes) where a run cannot be taken whole.
#[test]
fn packet_runs_write_as_their_packets_would() {
    let d = tempfile::tempdir().unwrap();
    let ds = Dataset::open(&[d.path().to_path_buf()], 0).unwrap();
    let full: Vec<u8> = (0..5000u32).map(|i| (i % 239) as u8).collect();
    let mut w = ds.create_rbw(BP, 12, 1001, spec(), 0).unwrap();
    let info = ds.get(BP, 12).unwrap();
    let (block, meta) = (ds.block_path(BP, &info), ds.meta_path(BP, &info));
    // Whole chunks, the last ending mid-chunk at the replica's end: one write of each file,
    // the received CRCs stored (wrong ones included, as a single packet's would be).
    let wrong = [7u8; 8];
    let sums_b = spec().compute(&full[1024..2048]);
    let sums_c = spec().compute(&full[2048..2300]);
    let run: [(&[u8], &[u8]); 3] = [
        (&full[..1024], &wrong),
        (&full[1024..2048], &sums_b),
        (&full[2048..2300], &sums_c),
    ];
    w.write_packets(0, &run).unwrap();
    assert_eq!(w.len(), 2300);
    assert_eq!(fs::read(&block).unwrap(), &full[..2300]);
    let crcs = meta_crcs(&meta);
    assert_eq!(&fs::read(&meta).unwrap()[7..15], &wrong);
    assert_eq!(crcs[2..], expected_crcs(&full[..2300])[2..]);
    // Starting mid-chunk: packet by packet, the first chunk's CRC over old and new bytes.
    let run: [(&[u8], &[u8]); 2] = [
        (&full[2300..3072], &[0xff; 8]),
        (&full[3072..5000], &spec().compute(&full[3072..5000])),
    ];
    w.write_packets(2300, &run).unwrap();
    assert_eq!(w.len(), 5000);
    // A packet in the middle ending mid-chunk: packet by packet too.
    let run: [(&[u8], &[u8]); 2] = [
        (&full[..1000], &spec().compute(&full[..1000])),
        (&full[1000..2048], &spec().compute(&full[1000..2048])),
    ];
    w.write_packets(0, &run).unwrap();
    // Rewriting whole chunks in the middle with the run ending inside data that follows:
    // the last chunk's CRC is computed over the old bytes after it.
    let run: [(&[u8], &[u8]); 2] = [
        (&full[2048..2560], &spec().compute(&full[2048..2560])),
        (&full[2560..2600], &[0u8; 4]),
    ];
    w.write_packets(2048, &run).unwrap();
    assert_eq!(fs::read(&block).unwrap(), full);
    assert_eq!(meta_crcs(&meta), expected_crcs(&full));
    assert_eq!(w.len(), 5000);
}

#[test]
fn append_moves_to_rbw_with_new_gs() {
    let d = tempfile::tempdir().unwrap();
    let ds = Dataset::open(&[d.path().to_path_buf()], 0).unwrap();
    let mut w = ds.create_rbw(BP, 9, 1001, spec(), 0).unwrap();
    w.write_at(0, &[1u8; 1000]).unwrap();
    w.finalize().unwrap();
    assert!(ds.append(BP, 9, 1001, 1002, 999).is_err());
    let mut w = ds.append(BP, 9, 1001, 1002, 1000).unwrap();
    let r = ds.get(BP, 9).unwrap();
    assert_eq!((r.state, r.gs), (ReplicaState::Rbw, 1002));
    w.write_at(1000, &[2u8; 6]).unwrap();
    let info = w.finalize().unwrap();
    assert_eq!((info.gs, info.num_bytes), (1002, 1006));
    let mut all = vec![1u8; 1000];
    all.extend_from_slice(&[2u8; 6]);
    assert_eq!(meta_crcs(&ds.meta_path(BP, &info)), expected_crcs(&all));
}

#[test]
fn scan_rebuilds_map_after_restart() {
    let d1 = tempfile::tempdir().unwrap();
    let d2 = tempfile::tempdir().unwrap();
    let dirs = vec![d1.path().to_path_buf(), d2.path().join("sub")];
    let (uuid, ids) = {
        let ds = Dataset::open(&dirs, 0).unwrap();
        for id in 1..=4u64 {
            let mut w = ds.create_rbw(BP, id, 1000 + id, spec(), 0).unwrap();
            w.write_at(0, &vec![id as u8; 100 * id as usize]).unwrap();
            if id % 2 == 0 {
                w.finalize().unwrap();
            }
        }
        let mut t = ds.create_temporary(BP, 77, 1001, spec(), 0).unwrap();
        t.write_at(0, b"tmp").unwrap();
        let vols: Vec<usize> = (1..=4).map(|id| ds.get(BP, id).unwrap().volume).collect();
        assert!(
            vols.contains(&0) && vols.contains(&1),
            "round robin over volumes"
        );
        (ds.datanode_uuid().to_string(), ds.storage_ids())
    };
    let ds = Dataset::open(&dirs, 0).unwrap();
    assert_eq!(ds.datanode_uuid(), uuid);
    assert_eq!(ds.storage_ids(), ids);
    let mut reps = ds.replicas(BP);
    reps.sort_by_key(|r| r.id);
    let got: Vec<_> = reps
        .iter()
        .map(|r| (r.id, r.gs, r.state, r.num_bytes))
        .collect();
    assert_eq!(
        got,
        vec![
            (1, 1001, ReplicaState::Rwr, 100),
            (2, 1002, ReplicaState::Finalized, 200),
            (3, 1003, ReplicaState::Rwr, 300),
            (4, 1004, ReplicaState::Finalized, 400),
        ]
    );
    // invalidate removes from the map, the caller deletes the files
    let del = ds.remove_for_delete(BP, 2, 1002).unwrap();
    assert!(del.block_file.exists());
    delete_files(&del).unwrap();
    assert!(!del.block_file.exists() && !del.meta_file.exists());
    assert!(ds.get(BP, 2).is_none());
    assert!(ds.remove_for_delete(BP, 4, 1003).is_none(), "newer GS kept");
}

#[test]
fn slow_volumes_are_avoided_but_never_leave_none() {
    let t = tempfile::tempdir().unwrap();
    let dirs = vec![t.path().join("a"), t.path().join("b")];
    let ds = Dataset::open(&dirs, 0).unwrap();
    ds.set_slow_volumes(vec![dirs[1].display().to_string()]);
    for id in 1..=4u64 {
        assert_eq!(ds.create_rbw(BP, id, 1001, spec(), 0).unwrap().volume(), 0);
    }
    // Every volume slow: they are used all the same.
    ds.set_slow_volumes(dirs.iter().map(|d| d.display().to_string()).collect());
    let used: std::collections::HashSet<usize> = (10..14u64)
        .map(|id| ds.create_rbw(BP, id, 1001, spec(), 0).unwrap().volume())
        .collect();
    assert_eq!(used.len(), 2);
    ds.set_slow_volumes(Vec::new());
}

/// A replica's short-circuit slots lose VALID when the replica is reopened for append, taken
/// into recovery, dropped with its failed volume or deleted; a replica that only moves from rbw
/// to finalized keeps none to lose.
#[test]
fn short_circuit_slots_follow_the_replica() {
    use rhdfs_transfer::shm::VALID;
    let d = tempfile::tempdir().unwrap();
    let shm = tempfile::tempdir().unwrap();
    let ds = Dataset::open(&[d.path().join("a"), d.path().join("b")], 0).unwrap();
    let data = vec![5u8; 1000];
    for id in 1..=4u64 {
        let mut w = ds.create_rbw(BP, id, 1001, spec(), 0).unwrap();
        w.write_at(0, &data).unwrap();
        w.finalize().unwrap();
    }
    let reg = ds.short_circuit_registry().clone();
    let (shm_id, seg) = reg
        .create_segment("t", &[shm.path().to_path_buf()])
        .unwrap();
    for id in 1..=4u64 {
        seg.set(id as usize, VALID);
        reg.register_slot(shm_id, id as usize, BP, id).unwrap();
    }
    let valid = |id: u64| seg.is_valid(id as usize);

    let w = ds.append(BP, 1, 1001, 1002, 1000).unwrap();
    assert!(!valid(1), "reopened for append");
    assert!(valid(2) && valid(3) && valid(4));
    drop(w);

    ds.init_replica_recovery(BP, 2, 1001, 1003).unwrap();
    assert!(!valid(2), "under recovery");

    let on = ds.get(BP, 3).unwrap().volume;
    ds.fail_volumes(&[on], 0);
    assert!(!valid(3), "its volume failed");
    let other = ds.get(BP, 4);
    if other.is_some_and(|r| r.volume != on) {
        assert!(valid(4), "a replica on the other volume is untouched");
        ds.remove_for_delete(BP, 4, u64::MAX).unwrap();
    }
    assert!(!valid(4), "deleted (or on the failed volume)");
    // Invalidated slots stay registered until released.
    assert_eq!(reg.counts(), (1, 4));
}

/// Bytes the file system holds for `path` (its allocated blocks).
fn allocated(path: &std::path::Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    fs::metadata(path).unwrap().blocks() * 512
}

#[test]
fn block_file_space_is_reserved_ahead_and_given_back() {
    use crate::writer::PREALLOCATION;
    let d = tempfile::tempdir().unwrap();
    // Whether this file system reserves space past a file's end at all.
    let probe = d.path().join("probe");
    let f = fs::File::create(&probe).unwrap();
    // SAFETY: a plain system call on an open descriptor.
    let supported = unsafe {
        libc::fallocate64(
            std::os::fd::AsRawFd::as_raw_fd(&f),
            libc::FALLOC_FL_KEEP_SIZE,
            0,
            1 << 20,
        )
    } == 0;
    drop(f);
    fs::remove_file(&probe).unwrap();

    let ds = Dataset::open(&[d.path().to_path_buf()], 0).unwrap();
    let data: Vec<u8> = (0..300_000u32).map(|i| (i * 13) as u8).collect();
    let mut w = ds.create_rbw(BP, 21, 1001, spec(), 0).unwrap();
    w.write_at(0, &data).unwrap();
    let rbw = ds.block_path(BP, &ds.get(BP, 21).unwrap());
    // The length is the data's; the space ahead is reserved where the file system can.
    assert_eq!(fs::metadata(&rbw).unwrap().len(), 300_000);
    if supported {
        assert!(allocated(&rbw) >= PREALLOCATION, "{}", allocated(&rbw));
    }
    // A write past the first step reserves the next one.
    let more = vec![7u8; PREALLOCATION as usize];
    w.write_at(300_000, &more).unwrap();
    let end = 300_000 + PREALLOCATION;
    assert_eq!(fs::metadata(&rbw).unwrap().len(), end);
    if supported {
        assert!(allocated(&rbw) >= 2 * PREALLOCATION);
    }
    // Truncating gives the reservation back; writing again reserves again.
    w.truncate(200_000).unwrap();
    assert!(allocated(&rbw) < 1 << 20, "{}", allocated(&rbw));
    w.write_at(200_000, &data[200_000..]).unwrap();
    let info = w.finalize().unwrap();
    assert_eq!(info.num_bytes, 300_000);
    let fin = ds.block_path(BP, &info);
    assert_eq!(fs::read(&fin).unwrap(), data);
    assert_eq!(meta_crcs(&ds.meta_path(BP, &info)), expected_crcs(&data));
    // Finalized: nothing held past the data.
    assert!(allocated(&fin) < 1 << 20, "{}", allocated(&fin));

    // An append reserves from the file's end and gives it back at its end too.
    let mut w = ds.append(BP, 21, 1001, 1002, 300_000).unwrap();
    w.write_at(300_000, &[5u8; 1000]).unwrap();
    let rbw = ds.block_path(BP, &ds.get(BP, 21).unwrap());
    assert_eq!(fs::metadata(&rbw).unwrap().len(), 301_000);
    if supported {
        assert!(allocated(&rbw) >= PREALLOCATION);
    }
    let info = w.finalize().unwrap();
    assert_eq!(info.num_bytes, 301_000);
    assert!(allocated(&ds.block_path(BP, &info)) < 1 << 20);
}
