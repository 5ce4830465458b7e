//! Hadoop's DirectoryScanner, for the failure it exists for: a FINALIZED replica the map
//! (and so every block report) still claims although its block or meta file is gone from the
//! disk, or whose block file no longer has the length the map records. Without it the
//! NameNode counts a replica that cannot be read and never restores the block's redundancy
//! until a reader trips over it.
//!
//! Each replica is checked twice: once from a snapshot of the map with no lock held (a stat
//! per file), and, for the few that look wrong, again holding the replica's guard (so no
//! state change is renaming its files) and the dataset lock, where it is acted on only if it
//! is still the same FINALIZED replica (same epoch, generation stamp, volume) and its files
//! still say the same. A replica moved or deleted meanwhile is left to the
//! next scan. Effects: a replica with a missing file leaves the map and is reported DELETED
//! (the NameNode then re-replicates the block); a length mismatch updates the map to the
//! file's length and is reported RECEIVED, so the NameNode marks the replica corrupt
//! (SIZE_MISMATCH) and replaces it. Files are never deleted by the scan.

use std::fs;
use std::path::Path;

use super::Dataset;
use crate::notify::BlockStatus;
use crate::replica::{ReplicaInfo, ReplicaState};

/// What one scan of one block pool found (Hadoop's "BlockPool ... Total blocks: ..." line).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScanSummary {
    pub bpid: String,
    /// FINALIZED replicas compared with their files.
    pub total: usize,
    /// Replicas whose block file was missing: removed from the map, reported DELETED.
    pub missing_block_files: usize,
    /// Replicas whose meta file was missing: removed from the map, reported DELETED.
    pub missing_meta_files: usize,
    /// Replicas whose block file length differed from the map: reported with the length
    /// found.
    pub mismatched_lengths: usize,
}

/// What the files of one replica say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Files {
    Fine,
    NoBlock,
    NoMeta,
    Length(u64),
}

fn files_of(block: &Path, meta: &Path, expected: u64) -> Files {
    let len = match fs::metadata(block) {
        Ok(m) => m.len(),
        Err(_) => return Files::NoBlock,
    };
    if fs::metadata(meta).is_err() {
        return Files::NoMeta;
    }
    if len == expected {
        Files::Fine
    } else {
        Files::Length(len)
    }
}

impl Dataset {
    /// Compares every FINALIZED replica of `bpid` with its files and repairs the map as the
    /// module says. Blocking (a stat per replica): run it on a blocking thread.
    pub fn scan_directories(&self, bpid: &str) -> ScanSummary {
        let mut summary = ScanSummary {
            bpid: bpid.to_string(),
            ..ScanSummary::default()
        };
        let finalized: Vec<ReplicaInfo> = self
            .replicas(bpid)
            .into_iter()
            .filter(|r| r.state == ReplicaState::Finalized)
            .collect();
        summary.total = finalized.len();
        for r in finalized {
            if self.volume(r.volume).is_none_or(|v| v.is_failed()) {
                continue;
            }
            let (block, meta) = (self.block_path(bpid, &r), self.meta_path(bpid, &r));
            if files_of(&block, &meta, r.num_bytes) != Files::Fine {
                match self.reconcile(bpid, &r, "directory scan") {
                    Some(Files::NoBlock) => summary.missing_block_files += 1,
                    Some(Files::NoMeta) => summary.missing_meta_files += 1,
                    Some(Files::Length(_)) => summary.mismatched_lengths += 1,
                    Some(Files::Fine) | None => {}
                }
            }
        }
        if summary.missing_block_files + summary.missing_meta_files + summary.mismatched_lengths > 0
        {
            tracing::warn!(
                bpid,
                total = summary.total,
                missing_block_files = summary.missing_block_files,
                missing_meta_files = summary.missing_meta_files,
                mismatched_lengths = summary.mismatched_lengths,
                "directory scan found replicas that differ from their files"
            );
        } else {
            tracing::info!(
                bpid,
                total = summary.total,
                "directory scan: every replica matches its files"
            );
        }
        summary
    }

    /// A FINALIZED replica a reader could not open because a file was not found (Hadoop's
    /// DataNode does the same, `invalidateMissingBlock`): checked and acted on as the
    /// directory scan does, so the NameNode hears at once that the replica is gone and
    /// copies the block again, instead of at the next scan (hours) while readers keep being
    /// sent to it. A replica that was moved or renamed meanwhile is left alone. Blocking.
    pub(crate) fn recheck_unreadable(&self, bpid: &str, seen: &ReplicaInfo) {
        if seen.state == ReplicaState::Finalized {
            self.reconcile(bpid, seen, "read");
        }
    }

    /// Re-checks one suspicious replica under its guard and the lock and acts on what its
    /// files say; what it acted on, if anything (`by` names who asked, in the log). The
    /// guard matters: a state change (append, recovery, a generation stamp bump) renames
    /// the files under the replica's guard before it updates the map, so without it the
    /// check could see the map's old names already gone.
    fn reconcile(&self, bpid: &str, seen: &ReplicaInfo, by: &str) -> Option<Files> {
        let (block, meta) = (self.block_path(bpid, seen), self.meta_path(bpid, seen));
        let (now, guard) = self.guard_for(bpid, seen.id).ok()?;
        if now.writer_epoch != seen.writer_epoch {
            return None;
        }
        let _held = guard.lock();
        let (found, status, info) = {
            let mut inner = self.inner.lock();
            let m = inner.pools.get_mut(bpid)?;
            let same = m
                .get(&seen.id)
                .is_some_and(|cur| cur.is_same_finalized(seen));
            if !same {
                return None;
            }
            // Two stats under the lock, for the few replicas found suspicious: no writer can
            // finalize, move or delete this replica between the check and the act.
            match files_of(&block, &meta, seen.num_bytes) {
                Files::Fine => return None,
                found @ (Files::NoBlock | Files::NoMeta) => {
                    let info = m.remove(&seen.id)?;
                    inner.guards.remove(&info.writer_epoch);
                    self.invalidate_slots(bpid, seen.id);
                    (found, BlockStatus::Deleted, info)
                }
                found @ Files::Length(len) => {
                    let cur = m.get_mut(&seen.id)?;
                    cur.num_bytes = len;
                    (found, BlockStatus::Received, cur.clone())
                }
            }
        };
        tracing::warn!(
            bpid,
            block = info.id,
            gs = info.gs,
            path = %block.display(),
            "{by}: {}",
            match status {
                BlockStatus::Deleted => "replica removed from memory: its block or meta file is missing on the disk",
                _ => "replica's block file has another length than recorded; reported with the length found",
            }
        );
        self.notify(bpid, &info, status);
        Some(found)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::notify::{BlockEvent, BlockNotifier};
    use parking_lot::Mutex;

    #[derive(Debug, Default)]
    struct Events(Mutex<Vec<BlockEvent>>);
    impl BlockNotifier for Events {
        fn notify(&self, ev: BlockEvent) {
            self.0.lock().push(ev);
        }
    }

    #[test]
    fn files_classified() -> std::io::Result<()> {
        let tmp = tempfile::tempdir()?;
        let (b, m) = (tmp.path().join("blk_1"), tmp.path().join("blk_1_1.meta"));
        assert_eq!(files_of(&b, &m, 0), Files::NoBlock);
        fs::write(&b, b"abc")?;
        assert_eq!(files_of(&b, &m, 3), Files::NoMeta);
        fs::write(&m, b"")?;
        assert_eq!(files_of(&b, &m, 3), Files::Fine);
        assert_eq!(files_of(&b, &m, 5), Files::Length(3));
        Ok(())
    }

    #[test]
    fn scan_repairs_the_map_and_reports() -> Result<(), Box<dyn std::error::Error>> {
        let tmp = tempfile::tempdir()?;
        let ds = Dataset::open(&[tmp.path().to_path_buf()], 0)?;
        let events = Arc::new(Events::default());
        ds.set_notifier(events.clone());
        let bpid = "BP-1";
        ds.add_block_pool(bpid)?;
        let spec = crate::checksum::ChecksumSpec::new(crate::checksum::ChecksumType::Crc32c, 512);
        for id in 1..=4u64 {
            let mut w = ds.create_rbw(bpid, id, 1001, spec, 0)?;
            w.write_at(0, b"0123456789")?;
            w.finalize()?;
        }
        events.0.lock().clear();
        let get = |id| ds.get(bpid, id).ok_or_else(|| format!("no replica {id}"));
        let (r1, r2, r3) = (get(1)?, get(2)?, get(3)?);
        fs::remove_file(ds.block_path(bpid, &r1))?;
        fs::remove_file(ds.meta_path(bpid, &r2))?;
        fs::write(ds.block_path(bpid, &r3), b"01234")?;

        let s = ds.scan_directories(bpid);
        assert_eq!(
            (
                s.total,
                s.missing_block_files,
                s.missing_meta_files,
                s.mismatched_lengths
            ),
            (4, 1, 1, 1)
        );
        assert!(ds.get(bpid, 1).is_none() && ds.get(bpid, 2).is_none());
        assert_eq!(get(3)?.num_bytes, 5);
        assert_eq!(get(4)?.num_bytes, 10);
        let mut seen: Vec<(u64, BlockStatus, u64)> = events
            .0
            .lock()
            .iter()
            .map(|e| (e.block_id, e.status, e.num_bytes))
            .collect();
        seen.sort_by_key(|e| e.0);
        assert_eq!(
            seen,
            vec![
                (1, BlockStatus::Deleted, 10),
                (2, BlockStatus::Deleted, 10),
                (3, BlockStatus::Received, 5)
            ]
        );
        // A reader that finds a file gone drops the replica at once, without a scan.
        let r4 = get(4)?;
        fs::remove_file(ds.block_path(bpid, &r4))?;
        events.0.lock().clear();
        let read = crate::reader::ReplicaReader::open(&ds, bpid, 4, 0);
        assert!(read.is_err());
        assert!(ds.get(bpid, 4).is_none(), "replica 4 left the map");
        let seen: Vec<(u64, BlockStatus)> = events
            .0
            .lock()
            .iter()
            .map(|e| (e.block_id, e.status))
            .collect();
        assert_eq!(seen, vec![(4, BlockStatus::Deleted)]);
        // A copy sent to a node that holds the same replica finalized (the NameNode did not
        // count it) is refused, and the replica announced again.
        let r3 = get(3)?;
        events.0.lock().clear();
        let refused = ds.create_temporary(bpid, 3, r3.gs, spec, r3.num_bytes);
        assert!(refused.is_err());
        let seen: Vec<(u64, BlockStatus, u64)> = events
            .0
            .lock()
            .iter()
            .map(|e| (e.block_id, e.status, e.num_bytes))
            .collect();
        assert_eq!(seen, vec![(3, BlockStatus::Received, 5)]);
        // Not for another length or generation stamp.
        events.0.lock().clear();
        assert!(ds.create_temporary(bpid, 3, r3.gs, spec, 10).is_err());
        assert!(events.0.lock().is_empty());
        // A scan afterwards finds nothing more to do.
        let again = ds.scan_directories(bpid);
        assert_eq!(
            (
                again.total,
                again.missing_block_files,
                again.missing_meta_files,
                again.mismatched_lengths
            ),
            (1, 0, 0, 0)
        );
        Ok(())
    }
}
