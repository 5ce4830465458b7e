//! Sampled file I/O latency per volume (metadata operations, reads, writes) and the slow
//! disks this node reports to the NameNode (`SlowDiskReportProto` in heartbeats).
//!
//! With dfs.datanode.fileio.profiling.sampling.percentage = p, about p% of file operations
//! are timed (Hadoop's ProfilingFileIoEvents): replica data reads and writes, and the
//! metadata operations on a volume — opening, creating, renaming and deleting replica files
//! (`crate::dataset::FileIoEvents`). Which operations are drawn comes from a seeded RNG, so a
//! run can be replayed. Each kind is checked for outliers across volumes on its own; a
//! volume that is an outlier for any kind is reported with its mean latencies.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use parking_lot::Mutex;
use rand::Rng;
use rand::rngs::StdRng;
use rhdfs_proto::datanode::SlowDiskReportProto;

use super::outlier::OutlierDetector;
use super::rolling::RollingAverages;

/// Kind of a sampled file operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum IoKind {
    Metadata,
    Read,
    Write,
}

impl IoKind {
    pub const ALL: [IoKind; 3] = [IoKind::Metadata, IoKind::Read, IoKind::Write];

    /// Name used in NameNode views (Hadoop's DiskOp).
    pub fn name(self) -> &'static str {
        match self {
            IoKind::Metadata => "METADATA",
            IoKind::Read => "READ",
            IoKind::Write => "WRITE",
        }
    }
}

/// Settings of [`DiskMetrics`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiskMetricsConfig {
    /// dfs.datanode.fileio.profiling.sampling.percentage (0..=100; 0 = off)
    pub sampling_percentage: u8,
    /// dfs.datanode.min.outlier.detection.disks
    pub min_disks: usize,
    /// dfs.datanode.slowdisk.low.threshold.ms
    pub low_threshold_ms: f64,
    /// dfs.datanode.max.disks.to.report
    pub max_disks_to_report: usize,
    /// dfs.datanode.max.slowdisks.to.exclude (0 = none)
    pub max_slow_disks_to_exclude: usize,
    pub window: Duration,
    pub num_windows: usize,
}

impl Default for DiskMetricsConfig {
    fn default() -> Self {
        DiskMetricsConfig {
            sampling_percentage: 0,
            min_disks: 5,
            low_threshold_ms: 20.0,
            max_disks_to_report: 5,
            max_slow_disks_to_exclude: 0,
            window: super::rolling::DEFAULT_WINDOW,
            num_windows: super::rolling::DEFAULT_NUM_WINDOWS,
        }
    }
}

/// Sampled per-volume latencies.
#[derive(Debug)]
pub struct DiskMetrics {
    cfg: DiskMetricsConfig,
    detector: OutlierDetector,
    by_kind: [RollingAverages; 3],
    /// The sampling draws.
    rng: Mutex<StdRng>,
}

fn idx(k: IoKind) -> usize {
    match k {
        IoKind::Metadata => 0,
        IoKind::Read => 1,
        IoKind::Write => 2,
    }
}

impl DiskMetrics {
    /// Sampling draws seeded from `$RHDFS_SEED`, else from entropy (the seed is logged at
    /// debug level).
    pub fn new(cfg: DiskMetricsConfig) -> Self {
        Self::with_rng(cfg, rhdfs_conf::rng::seeded_rng(None))
    }

    /// Sampling draws from `rng` (tests replay a seed).
    pub fn with_rng(cfg: DiskMetricsConfig, rng: StdRng) -> Self {
        let r = || RollingAverages::new(cfg.window, cfg.num_windows);
        DiskMetrics {
            detector: OutlierDetector::new(cfg.min_disks, cfg.low_threshold_ms),
            by_kind: [r(), r(), r()],
            rng: Mutex::new(rng),
            cfg,
        }
    }

    pub fn config(&self) -> &DiskMetricsConfig {
        &self.cfg
    }

    /// Whether to time the next operation (a draw against the sampling percentage).
    pub fn should_sample(&self) -> bool {
        match self.cfg.sampling_percentage {
            0 => false,
            p if p >= 100 => true,
            p => self.rng.lock().random_range(0..100u8) < p,
        }
    }

    /// One timed operation on the volume at `base_path`.
    pub fn record(&self, base_path: &str, kind: IoKind, latency: Duration, now: Duration) {
        self.by_kind[idx(kind)].add(base_path, latency.as_secs_f64() * 1000.0, now);
    }

    /// Mean latency (ms) per volume for one kind.
    pub fn averages(&self, kind: IoKind, now: Duration) -> BTreeMap<String, f64> {
        self.by_kind[idx(kind)].averages(1, now)
    }

    /// Slow volumes: for each, the kinds it is an outlier in and its mean per kind.
    pub fn slow_disks(&self, now: Duration) -> BTreeMap<String, BTreeMap<IoKind, f64>> {
        let avgs: Vec<(IoKind, BTreeMap<String, f64>)> = IoKind::ALL
            .iter()
            .map(|k| (*k, self.averages(*k, now)))
            .collect();
        let mut slow = BTreeSet::new();
        for (_, a) in &avgs {
            slow.extend(self.detector.outliers(a).into_keys());
        }
        slow.into_iter()
            .map(|disk| {
                let lat = avgs
                    .iter()
                    .filter_map(|(k, a)| a.get(&disk).map(|v| (*k, *v)))
                    .collect();
                (disk, lat)
            })
            .collect()
    }

    /// Every slow disk, the slowest (by its worst operation's latency) first.
    fn slowest_first(&self, now: Duration) -> Vec<(String, BTreeMap<IoKind, f64>)> {
        let mut v: Vec<(String, BTreeMap<IoKind, f64>)> =
            self.slow_disks(now).into_iter().collect();
        let worst = |m: &BTreeMap<IoKind, f64>| m.values().copied().fold(0.0, f64::max);
        v.sort_by(|a, b| {
            worst(&b.1)
                .total_cmp(&worst(&a.1))
                .then_with(|| a.0.cmp(&b.0))
        });
        v
    }

    /// Hadoop's getSlowDisksToExclude: the `max` slowest disks (all outliers, not only
    /// those reported), by their worst operation's latency.
    pub fn slowest(&self, now: Duration, max: usize) -> Vec<String> {
        self.slowest_first(now)
            .into_iter()
            .take(max)
            .map(|(p, _)| p)
            .collect()
    }

    /// The heartbeat's slow disk entries: the slowest first, at most max.disks.to.report.
    pub fn slow_disk_reports(&self, now: Duration) -> Vec<SlowDiskReportProto> {
        let mut v = self.slowest_first(now);
        v.truncate(self.cfg.max_disks_to_report);
        v.into_iter()
            .map(|(path, m)| SlowDiskReportProto {
                base_path: Some(path),
                mean_metadata_op_latency: m.get(&IoKind::Metadata).copied(),
                mean_read_io_latency: m.get(&IoKind::Read).copied(),
                mean_write_io_latency: m.get(&IoKind::Write).copied(),
            })
            .collect()
    }
}

/// The profiler of the dataset's metadata operations (Hadoop's ProfilingFileIoEvents
/// before/afterMetadataOp): a sampled operation's latency, on the metrics' clock, joins its
/// volume's metadata-op average, which the slow-disk detector weighs beside reads and writes.
impl crate::dataset::FileIoEvents for super::DataNodeMetrics {
    fn begin_metadata_op(&self) -> Option<Duration> {
        self.disks
            .as_ref()
            .filter(|d| d.should_sample())
            .map(|_| self.now())
    }

    fn end_metadata_op(&self, base: &str, started: Duration, ok: bool) {
        // A failed operation's latency says nothing of the disk's speed (Hadoop counts it
        // as a file I/O error only).
        let Some(d) = &self.disks else { return };
        let now = self.now();
        let latency = now.saturating_sub(started);
        if ok {
            d.record(base, IoKind::Metadata, latency, now);
            self.volume_io
                .record(base, super::FileOp::Metadata, latency);
        } else {
            self.volume_io.record_error(base, latency);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampling_percentage_bounds() {
        let off = DiskMetrics::new(DiskMetricsConfig::default());
        assert!((0..100).all(|_| !off.should_sample()));
        let all = DiskMetrics::new(DiskMetricsConfig {
            sampling_percentage: 100,
            ..Default::default()
        });
        assert!((0..100).all(|_| all.should_sample()));
    }

    #[test]
    fn sampling_draws_replay_from_the_seed() {
        let cfg = DiskMetricsConfig {
            sampling_percentage: 30,
            ..Default::default()
        };
        let seeded = |seed| DiskMetrics::with_rng(cfg, rhdfs_conf::rng::seeded_rng(Some(seed)));
        let draws =
            |m: &DiskMetrics| -> Vec<bool> { (0..2000).map(|_| m.should_sample()).collect() };
        let a = draws(&seeded(16));
        assert_eq!(a, draws(&seeded(16)), "same seed, same draws");
        assert_ne!(a, draws(&seeded(17)));
        // About 30% of 2000 (binomial: the standard deviation is about 20).
        let sampled = a.iter().filter(|s| **s).count();
        assert!((500..=700).contains(&sampled), "{sampled} of 2000 sampled");
    }

    #[test]
    fn slow_write_disk_is_reported() {
        let m = DiskMetrics::new(DiskMetricsConfig {
            sampling_percentage: 100,
            window: Duration::from_secs(1),
            max_disks_to_report: 5,
            ..Default::default()
        });
        let t0 = Duration::ZERO;
        for d in 0..6 {
            let path = format!("/data/{d}");
            let w = if d == 3 { 250 } else { 4 };
            m.record(&path, IoKind::Write, Duration::from_millis(w), t0);
            m.record(&path, IoKind::Read, Duration::from_millis(3), t0);
        }
        let t1 = Duration::from_secs(1);
        let r = m.slow_disk_reports(t1);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].base_path.as_deref(), Some("/data/3"));
        assert_eq!(r[0].mean_write_io_latency, Some(250.0));
        assert_eq!(r[0].mean_read_io_latency, Some(3.0));
        assert_eq!(r[0].mean_metadata_op_latency, None);
    }
}
