//! File I/O figures per volume, Hadoop's DataNodeVolumeMetrics (the `/jmx` beans
//! `DataNodeVolume-<dir>` and the `rhdfs_datanode_volume_io_*` families).
//!
//! As in Hadoop, only the operations drawn by
//! dfs.datanode.fileio.profiling.sampling.percentage are timed, so every figure here stays
//! 0 while profiling is off. Each timed replica data read or write counts as a data file
//! I/O and as a read or write; a timed sync (an hsync'd packet) as a data file I/O and a
//! sync; a timed metadata operation of the dataset (creating, opening, renaming, deleting
//! replica files: `crate::dataset::FileIoEvents`) as a metadata operation. A timed operation that failed counts as a file I/O error instead (Hadoop adds an
//! error's latency to the metadata rate; here it goes to the error rate its name promises).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::RwLock;
use rhdfs_metrics::{Histogram, HistogramSnapshot};

use super::IoKind;

/// What was timed on one file operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileOp {
    Metadata,
    Read,
    Write,
    Sync,
}

impl From<IoKind> for FileOp {
    fn from(k: IoKind) -> Self {
        match k {
            IoKind::Metadata => FileOp::Metadata,
            IoKind::Read => FileOp::Read,
            IoKind::Write => FileOp::Write,
        }
    }
}

/// The timed operations of one volume.
#[derive(Debug, Default)]
pub struct VolumeIo {
    metadata: Histogram,
    data_file: Histogram,
    read: Histogram,
    write: Histogram,
    sync: Histogram,
    flush: Histogram,
    errors: Histogram,
}

/// A copy of one volume's figures.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VolumeIoSnapshot {
    pub metadata: HistogramSnapshot,
    pub data_file: HistogramSnapshot,
    pub read: HistogramSnapshot,
    pub write: HistogramSnapshot,
    pub sync: HistogramSnapshot,
    /// Always empty: replica files are written with positioned writes, never through a
    /// buffered stream, so there is no flush to time.
    pub flush: HistogramSnapshot,
    pub errors: HistogramSnapshot,
}

impl VolumeIo {
    fn record(&self, op: FileOp, latency: Duration) {
        match op {
            FileOp::Metadata => self.metadata.observe(latency),
            FileOp::Read | FileOp::Write | FileOp::Sync => {
                self.data_file.observe(latency);
                match op {
                    FileOp::Read => self.read.observe(latency),
                    FileOp::Write => self.write.observe(latency),
                    _ => self.sync.observe(latency),
                }
            }
        }
    }

    fn snapshot(&self) -> VolumeIoSnapshot {
        VolumeIoSnapshot {
            metadata: self.metadata.snapshot(),
            data_file: self.data_file.snapshot(),
            read: self.read.snapshot(),
            write: self.write.snapshot(),
            sync: self.sync.snapshot(),
            flush: self.flush.snapshot(),
            errors: self.errors.snapshot(),
        }
    }
}

/// Every volume's figures, by the volume's base directory.
#[derive(Debug, Default)]
pub struct VolumeIoStats {
    by_volume: RwLock<BTreeMap<String, Arc<VolumeIo>>>,
}

impl VolumeIoStats {
    fn volume(&self, base: &str) -> Arc<VolumeIo> {
        if let Some(v) = self.by_volume.read().get(base) {
            return v.clone();
        }
        self.by_volume
            .write()
            .entry(base.to_string())
            .or_default()
            .clone()
    }

    /// One timed operation that succeeded on the volume at `base`.
    pub fn record(&self, base: &str, op: FileOp, latency: Duration) {
        self.volume(base).record(op, latency);
    }

    /// One timed operation that failed on the volume at `base`.
    pub fn record_error(&self, base: &str, latency: Duration) {
        self.volume(base).errors.observe(latency);
    }

    /// The figures of the volume at `base` (all 0 when nothing was timed there).
    pub fn snapshot(&self, base: &str) -> VolumeIoSnapshot {
        self.by_volume
            .read()
            .get(base)
            .map(|v| v.snapshot())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_op_counts_where_hadoop_counts_it() {
        let s = VolumeIoStats::default();
        let ms = Duration::from_millis;
        s.record("/d/1", FileOp::Write, ms(4));
        s.record("/d/1", FileOp::Read, ms(2));
        s.record("/d/1", FileOp::Sync, ms(6));
        s.record("/d/1", FileOp::Metadata, ms(1));
        s.record_error("/d/1", ms(3));
        s.record("/d/2", FileOp::Read, ms(8));
        let a = s.snapshot("/d/1");
        assert_eq!(a.data_file.count, 3);
        assert_eq!(a.data_file.mean_millis(), 4.0);
        assert_eq!((a.read.count, a.write.count, a.sync.count), (1, 1, 1));
        assert_eq!(a.metadata.count, 1);
        assert_eq!(a.errors.count, 1);
        assert_eq!(a.errors.mean_millis(), 3.0);
        assert_eq!(a.flush.count, 0);
        let b = s.snapshot("/d/2");
        assert_eq!((b.read.count, b.data_file.count, b.write.count), (1, 1, 0));
        assert_eq!(s.snapshot("/d/3"), VolumeIoSnapshot::default());
    }
}
