//! Metadata operations on a volume, told to a profiler (Hadoop's FileIoProvider calling
//! its FileIoEvents before and after each operation): opening or creating a replica's
//! files, renaming them (finalize, a new generation stamp, back to rbw) and deleting them.
//! The profiler decides which operations it times (the sampling percentage) and where the
//! latency goes (the volume's metadata-op figures, the slow-disk detector); the dataset
//! only marks where each operation starts and ends.

use std::sync::Arc;
use std::time::Duration;

use super::{Dataset, DeletedReplica, delete_files};
use crate::error::StorageError;

/// What hears of the dataset's metadata operations (implemented by the DataNode's metrics).
pub trait FileIoEvents: Send + Sync + std::fmt::Debug {
    /// Before an operation: the profiler's clock when this one is to be timed, else None.
    fn begin_metadata_op(&self) -> Option<Duration>;

    /// After an operation `begin_metadata_op` chose: on the volume at `base`, started at
    /// `started`, succeeded or not.
    fn end_metadata_op(&self, base: &str, started: Duration, ok: bool);
}

impl Dataset {
    /// Sets the profiler of metadata operations (once; later calls are ignored).
    pub fn set_file_io_events(&self, events: Arc<dyn FileIoEvents>) {
        let _ = self.file_io.set(events);
    }

    /// Runs `op`, a metadata operation on volume `volume`, telling the profiler.
    /// Renames a replica's meta file, then its block file, to their new names (a generation
    /// stamp or state change) as one metadata operation; a failed block rename puts the meta
    /// file back, so the pair never ends up half renamed.
    pub(crate) fn rename_replica_files(
        &self,
        volume: usize,
        (old_block, old_meta): (&std::path::Path, &std::path::Path),
        (new_block, new_meta): (&std::path::Path, &std::path::Path),
    ) -> std::io::Result<()> {
        self.metadata_op(volume, || {
            if old_meta != new_meta {
                std::fs::rename(old_meta, new_meta)?;
            }
            if old_block != new_block
                && let Err(e) = std::fs::rename(old_block, new_block)
            {
                let _ = std::fs::rename(new_meta, old_meta);
                return Err(e);
            }
            Ok(())
        })
    }

    pub(crate) fn metadata_op<T, E>(
        &self,
        volume: usize,
        op: impl FnOnce() -> Result<T, E>,
    ) -> Result<T, E> {
        let Some(events) = self.file_io.get() else {
            return op();
        };
        let started = events.begin_metadata_op();
        let r = op();
        if let (Some(t), Some(v)) = (started, self.volumes.get(volume)) {
            events.end_metadata_op(&v.base.display().to_string(), t, r.is_ok());
        }
        r
    }

    /// Deletes the files of a replica taken out of the map ([`delete_files`]), a metadata
    /// operation on its volume.
    pub fn delete_replica_files(&self, d: &DeletedReplica) -> Result<(), StorageError> {
        self.metadata_op(d.info.volume, || delete_files(d))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checksum::{ChecksumSpec, ChecksumType};
    use crate::metrics::{DataNodeMetrics, DiskMetricsConfig};
    use crate::reader::ReplicaReader;
    use parking_lot::Mutex;
    use rhdfs_conf::clock::ManualClock;
    use std::path::PathBuf;

    const BP: &str = "BP-1-127.0.0.1-1";

    fn spec() -> ChecksumSpec {
        ChecksumSpec::new(ChecksumType::Crc32c, 512)
    }

    fn dirs(root: &std::path::Path, n: usize) -> Vec<PathBuf> {
        (0..n).map(|i| root.join(format!("d{i}"))).collect()
    }

    /// Times every operation and keeps (volume, ok) of each.
    #[derive(Debug, Default)]
    struct Recorder(Mutex<Vec<(String, bool)>>);

    impl FileIoEvents for Recorder {
        fn begin_metadata_op(&self) -> Option<Duration> {
            Some(Duration::ZERO)
        }
        fn end_metadata_op(&self, base: &str, _started: Duration, ok: bool) {
            self.0.lock().push((base.to_string(), ok));
        }
    }

    #[test]
    fn replica_file_operations_are_metadata_ops_of_their_volume() {
        let t = tempfile::tempdir().unwrap();
        let ds = Dataset::open(&dirs(t.path(), 1), 0).unwrap();
        let rec = Arc::new(Recorder::default());
        ds.set_file_io_events(rec.clone());
        let base = ds.volume(0).unwrap().base.display().to_string();
        let ops = |rec: &Recorder| std::mem::take(&mut *rec.0.lock());

        // Creating the files, then renaming them to finalized.
        let mut w = ds.create_rbw(BP, 1, 1001, spec(), 0).unwrap();
        w.write_at(0, b"abc").unwrap();
        assert_eq!(ops(&rec), vec![(base.clone(), true)], "the create");
        let info = w.finalize().unwrap();
        assert_eq!(ops(&rec), vec![(base.clone(), true)], "the rename");
        // Opening for a read.
        drop(ReplicaReader::open(&ds, BP, 1, 1001).unwrap());
        assert_eq!(ops(&rec), vec![(base.clone(), true)], "the open");
        // A read whose files are gone: each attempt is a failed open.
        std::fs::remove_file(ds.block_path(BP, &info)).unwrap();
        assert!(ReplicaReader::open(&ds, BP, 1, 1001).is_err());
        let failed = ops(&rec);
        assert!(!failed.is_empty(), "failed opens are told");
        assert!(failed.iter().all(|(b, ok)| *b == base && !ok), "{failed:?}");
        // The replica whose file is gone left the map; deleting another.
        assert!(ds.get(BP, 1).is_none());
        let mut w = ds.create_rbw(BP, 3, 1001, spec(), 0).unwrap();
        w.write_at(0, b"abc").unwrap();
        w.finalize().unwrap();
        ops(&rec);
        let d = ds.remove_for_delete(BP, 3, 1001).unwrap();
        ds.delete_replica_files(&d).unwrap();
        assert_eq!(ops(&rec), vec![(base.clone(), true)], "the delete");

        // A block recovery cutting an rbw replica: opening its files, renaming them.
        let mut w = ds.create_rbw(BP, 2, 1001, spec(), 0).unwrap();
        w.write_at(0, &[7u8; 1024]).unwrap();
        drop(w);
        ds.init_replica_recovery(BP, 2, 1001, 1002).unwrap();
        ops(&rec);
        ds.update_replica_under_recovery(BP, 2, 1002, Some(1024), 512)
            .unwrap();
        assert_eq!(
            ops(&rec),
            vec![(base.clone(), true), (base, true)],
            "the recovery's open and rename"
        );
    }

    #[test]
    fn sampled_metadata_latency_reaches_the_slow_disk_report() {
        let t = tempfile::tempdir().unwrap();
        let ds = Dataset::open(&dirs(t.path(), 4), 0).unwrap();
        let clock = Arc::new(ManualClock::new(0));
        let window = Duration::from_secs(1);
        let m = Arc::new(DataNodeMetrics::new(
            clock.clone(),
            None,
            Some(DiskMetricsConfig {
                sampling_percentage: 100,
                min_disks: 3,
                max_slow_disks_to_exclude: 1,
                window,
                ..Default::default()
            }),
            Duration::from_secs(1),
            false,
        ));
        ds.set_file_io_events(m.clone());
        // Volume 2's metadata operations take 80 ms on the metrics' clock, the others' 2 ms.
        for _ in 0..5 {
            for v in 0..4 {
                let took = Duration::from_millis(if v == 2 { 80 } else { 2 });
                ds.metadata_op(v, || {
                    clock.advance(took);
                    Ok::<_, std::io::Error>(())
                })
                .unwrap();
            }
        }
        // A failed operation's latency is no sample of the disk's speed.
        let _ = ds.metadata_op(0, || {
            clock.advance(Duration::from_secs(5));
            Err::<(), _>(std::io::Error::other("gone"))
        });
        clock.advance(window);
        let slow = ds.volume(2).unwrap().base.display().to_string();
        let reports = m.heartbeat_reports().slow_disks;
        assert_eq!(reports.len(), 1, "{reports:?}");
        assert_eq!(reports[0].base_path.as_deref(), Some(slow.as_str()));
        assert_eq!(reports[0].mean_metadata_op_latency, Some(80.0));
        assert_eq!(reports[0].mean_read_io_latency, None);
        assert_eq!(reports[0].mean_write_io_latency, None);
        assert_eq!(m.volumes_to_exclude(), vec![slow.clone()]);
        let json = m.slow_disks_json().unwrap();
        assert!(json.contains("\"METADATA\":80.0"), "{json}");
    }

    #[test]
    fn without_a_profiler_or_when_not_drawn_nothing_is_timed() {
        let t = tempfile::tempdir().unwrap();
        let ds = Dataset::open(&dirs(t.path(), 1), 0).unwrap();
        assert_eq!(ds.metadata_op(0, || Ok::<_, ()>(7)), Ok(7));
        let m = Arc::new(DataNodeMetrics::new(
            Arc::new(ManualClock::new(0)),
            None,
            Some(DiskMetricsConfig {
                sampling_percentage: 100,
                ..Default::default()
            }),
            Duration::from_secs(1),
            false,
        ));
        // Profiling off (0%): the metrics keep no disk figures and time nothing.
        let off = DataNodeMetrics::new(
            Arc::new(ManualClock::new(0)),
            None,
            Some(DiskMetricsConfig::default()),
            Duration::from_secs(1),
            false,
        );
        assert!(off.disks.is_none());
        assert_eq!(off.begin_metadata_op(), None);
        assert_eq!(m.begin_metadata_op(), Some(Duration::ZERO));
    }
}
