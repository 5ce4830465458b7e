//! Slow peer and slow disk detection on the DataNode: rolling latency statistics per
//! downstream peer and per volume, the outlier detector, and the reports that ride on
//! heartbeats every dfs.datanode.outliers.report.interval.

pub mod activity;
pub mod disk;
pub mod outlier;
pub mod peer;
pub mod rolling;
pub mod transfers;
pub mod volume_io;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use rhdfs_conf::clock::SharedClock;
use rhdfs_conf::{Configuration, keys};
use rhdfs_proto::datanode::{SlowDiskReportProto, SlowPeerReportProto};
use rhdfs_transfer::ack::SlowStatus;

pub use activity::Activity;
pub use disk::{DiskMetrics, DiskMetricsConfig, IoKind};
pub use outlier::{OutlierDetector, OutlierMetrics};
pub use peer::{PeerMetrics, PeerMetricsConfig};
pub use rolling::RollingAverages;
pub use transfers::{RecentTransfers, Transfer, TransferKind};
pub use volume_io::{FileOp, VolumeIoSnapshot, VolumeIoStats};

/// `dfs.metrics.rolling.averages.window.length` (Hadoop's key; rhdfs's default 30s).
pub const ROLLING_WINDOW_LENGTH_KEY: &str = keys::DFS_METRICS_ROLLING_AVERAGES_WINDOW_LENGTH_KEY;
/// `dfs.metrics.rolling.averages.window.numbers` (rhdfs's default 6).
pub const ROLLING_WINDOW_NUMBERS_KEY: &str = keys::DFS_METRICS_ROLLING_AVERAGES_WINDOW_NUMBERS_KEY;

/// Bad slow-peer/slow-disk settings.
#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    #[error("{key}: {msg}")]
    Config { key: &'static str, msg: String },
}

fn cfg_err(key: &'static str) -> impl Fn(rhdfs_conf::ConfError) -> MetricsError {
    move |e| MetricsError::Config {
        key,
        msg: e.to_string(),
    }
}

/// Everything the slow-node logic of one DataNode needs; shared by the transfer server
/// (samples) and the NameNode actor (reports).
#[derive(Debug)]
pub struct DataNodeMetrics {
    clock: SharedClock,
    /// Present when dfs.datanode.peer.stats.enabled (on by default in rhdfs).
    pub peers: Option<PeerMetrics>,
    /// Present when dfs.datanode.fileio.profiling.sampling.percentage > 0.
    pub disks: Option<DiskMetrics>,
    report_interval: Duration,
    next_report: Mutex<Option<Duration>>,
    /// dfs.pipeline.slownode: put the SLOW field in this node's ack flags.
    pipeline_slownode: bool,
    /// Whether the NameNode says this node is slow.
    slow_node: AtomicBool,
    /// The timed file operations per volume (Hadoop's DataNodeVolumeMetrics).
    pub volume_io: VolumeIoStats,
}

/// The slow peer and slow disk entries of one heartbeat.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OutlierReports {
    pub slow_peers: Vec<SlowPeerReportProto>,
    pub slow_disks: Vec<SlowDiskReportProto>,
}

impl DataNodeMetrics {
    pub fn new(
        clock: SharedClock,
        peers: Option<PeerMetricsConfig>,
        disks: Option<DiskMetricsConfig>,
        report_interval: Duration,
        pipeline_slownode: bool,
    ) -> Self {
        DataNodeMetrics {
            clock,
            peers: peers.map(PeerMetrics::new),
            disks: disks
                .filter(|d| d.sampling_percentage > 0)
                .map(DiskMetrics::new),
            report_interval,
            next_report: Mutex::new(None),
            pipeline_slownode,
            slow_node: AtomicBool::new(false),
            volume_io: VolumeIoStats::default(),
        }
    }

    /// From the configuration.
    pub fn from_conf(conf: &Configuration, clock: SharedClock) -> Result<Self, MetricsError> {
        use keys::*;
        let window = conf
            .get_duration(
                ROLLING_WINDOW_LENGTH_KEY,
                rolling::DEFAULT_WINDOW,
                keys::DFS_METRICS_ROLLING_AVERAGES_WINDOW_LENGTH_UNIT,
            )
            .map_err(cfg_err(ROLLING_WINDOW_LENGTH_KEY))?;
        let num_windows = conf
            .get_u64(
                ROLLING_WINDOW_NUMBERS_KEY,
                rolling::DEFAULT_NUM_WINDOWS as u64,
            )
            .map_err(cfg_err(ROLLING_WINDOW_NUMBERS_KEY))? as usize;
        let peers_on = conf
            .get_bool(
                DFS_DATANODE_PEER_STATS_ENABLED_KEY,
                DFS_DATANODE_PEER_STATS_ENABLED_DEFAULT,
            )
            .map_err(cfg_err(DFS_DATANODE_PEER_STATS_ENABLED_KEY))?;
        let peers = if peers_on {
            Some(PeerMetricsConfig {
                min_samples: conf
                    .get_u64(
                        DFS_DATANODE_PEER_METRICS_MIN_OUTLIER_DETECTION_SAMPLES_KEY,
                        DFS_DATANODE_PEER_METRICS_MIN_OUTLIER_DETECTION_SAMPLES_DEFAULT,
                    )
                    .map_err(cfg_err(
                        DFS_DATANODE_PEER_METRICS_MIN_OUTLIER_DETECTION_SAMPLES_KEY,
                    ))?,
                min_nodes: conf
                    .get_u64(
                        DFS_DATANODE_MIN_OUTLIER_DETECTION_NODES_KEY,
                        DFS_DATANODE_MIN_OUTLIER_DETECTION_NODES_DEFAULT,
                    )
                    .map_err(cfg_err(DFS_DATANODE_MIN_OUTLIER_DETECTION_NODES_KEY))?
                    as usize,
                low_threshold_ms: ms(conf
                    .get_duration(
                        DFS_DATANODE_SLOWPEER_LOW_THRESHOLD_MS_KEY,
                        DFS_DATANODE_SLOWPEER_LOW_THRESHOLD_MS_DEFAULT,
                        DFS_DATANODE_SLOWPEER_LOW_THRESHOLD_MS_UNIT,
                    )
                    .map_err(cfg_err(DFS_DATANODE_SLOWPEER_LOW_THRESHOLD_MS_KEY))?),
                max_nodes_to_report: conf
                    .get_u64(
                        DFS_DATANODE_MAX_NODES_TO_REPORT_KEY,
                        DFS_DATANODE_MAX_NODES_TO_REPORT_DEFAULT,
                    )
                    .map_err(cfg_err(DFS_DATANODE_MAX_NODES_TO_REPORT_KEY))?
                    as usize,
                window,
                num_windows,
            })
        } else {
            None
        };
        let pct = conf
            .get_u64(
                DFS_DATANODE_FILEIO_PROFILING_SAMPLING_PERCENTAGE_KEY,
                DFS_DATANODE_FILEIO_PROFILING_SAMPLING_PERCENTAGE_DEFAULT,
            )
            .map_err(cfg_err(
                DFS_DATANODE_FILEIO_PROFILING_SAMPLING_PERCENTAGE_KEY,
            ))?;
        if pct > 100 {
            return Err(MetricsError::Config {
                key: DFS_DATANODE_FILEIO_PROFILING_SAMPLING_PERCENTAGE_KEY,
                msg: format!("{pct} is not a percentage (0-100)"),
            });
        }
        let disks = if pct > 0 {
            Some(DiskMetricsConfig {
                sampling_percentage: pct as u8,
                min_disks: conf
                    .get_u64(
                        DFS_DATANODE_MIN_OUTLIER_DETECTION_DISKS_KEY,
                        DFS_DATANODE_MIN_OUTLIER_DETECTION_DISKS_DEFAULT,
                    )
                    .map_err(cfg_err(DFS_DATANODE_MIN_OUTLIER_DETECTION_DISKS_KEY))?
                    as usize,
                low_threshold_ms: ms(conf
                    .get_duration(
                        DFS_DATANODE_SLOWDISK_LOW_THRESHOLD_MS_KEY,
                        DFS_DATANODE_SLOWDISK_LOW_THRESHOLD_MS_DEFAULT,
                        DFS_DATANODE_SLOWDISK_LOW_THRESHOLD_MS_UNIT,
                    )
                    .map_err(cfg_err(DFS_DATANODE_SLOWDISK_LOW_THRESHOLD_MS_KEY))?),
                max_disks_to_report: conf
                    .get_u64(
                        DFS_DATANODE_MAX_DISKS_TO_REPORT_KEY,
                        DFS_DATANODE_MAX_DISKS_TO_REPORT_DEFAULT,
                    )
                    .map_err(cfg_err(DFS_DATANODE_MAX_DISKS_TO_REPORT_KEY))?
                    as usize,
                max_slow_disks_to_exclude: conf
                    .get_u64(
                        DFS_DATANODE_MAX_SLOWDISKS_TO_EXCLUDE_KEY,
                        DFS_DATANODE_MAX_SLOWDISKS_TO_EXCLUDE_DEFAULT,
                    )
                    .map_err(cfg_err(DFS_DATANODE_MAX_SLOWDISKS_TO_EXCLUDE_KEY))?
                    as usize,
                window,
                num_windows,
            })
        } else {
            None
        };
        let report_interval = conf
            .get_duration(
                DFS_DATANODE_OUTLIERS_REPORT_INTERVAL_KEY,
                DFS_DATANODE_OUTLIERS_REPORT_INTERVAL_DEFAULT,
                DFS_DATANODE_OUTLIERS_REPORT_INTERVAL_UNIT,
            )
            .map_err(cfg_err(DFS_DATANODE_OUTLIERS_REPORT_INTERVAL_KEY))?;
        let pipeline_slownode = conf
            .get_bool(DFS_PIPELINE_SLOWNODE_KEY, DFS_PIPELINE_SLOWNODE_DEFAULT)
            .map_err(cfg_err(DFS_PIPELINE_SLOWNODE_KEY))?;
        Ok(Self::new(
            clock,
            peers,
            disks,
            report_interval,
            pipeline_slownode,
        ))
    }

    /// Shared when anything is enabled, None otherwise.
    pub fn into_enabled(self) -> Option<Arc<Self>> {
        self.enabled().then(|| Arc::new(self))
    }

    /// Whether anything is collected at all.
    pub fn enabled(&self) -> bool {
        self.peers.is_some() || self.disks.is_some() || self.pipeline_slownode
    }

    /// Monotonic time now.
    pub fn now(&self) -> Duration {
        self.clock.monotonic()
    }

    /// One packet's latency to the downstream peer `peer` (ip:infoPort).
    pub fn record_peer(&self, peer: &str, latency: Duration) {
        if let Some(p) = &self.peers {
            p.record(peer, latency, self.now());
        }
    }

    /// Starts timing a file operation when it is sampled.
    pub fn sample_io(&self) -> Option<std::time::Instant> {
        self.disks
            .as_ref()
            .filter(|d| d.should_sample())
            .map(|_| std::time::Instant::now())
    }

    /// Records a file operation started by [`Self::sample_io`].
    pub fn record_io(&self, base_path: &str, kind: IoKind, started: Option<std::time::Instant>) {
        if let Some(t) = started {
            self.record_io_ops(base_path, kind, t.elapsed(), 1);
        }
    }

    /// Records `n` operations that together took `total` (one call that did the work of `n`,
    /// such as a run of packets written at once), each with an equal share of it.
    fn record_io_ops(&self, base_path: &str, kind: IoKind, total: Duration, n: u32) {
        let Some(d) = &self.disks else { return };
        let n = n.max(1);
        let latency = total / n;
        let now = self.now();
        for _ in 0..n {
            d.record(base_path, kind, latency, now);
            self.volume_io.record(base_path, kind.into(), latency);
        }
    }

    /// The outlier reports for the next heartbeat: computed once every report interval
    /// (the first heartbeat is due at once), empty otherwise.
    pub fn heartbeat_reports(&self) -> OutlierReports {
        let now = self.now();
        {
            let mut next = self.next_report.lock();
            if next.is_some_and(|n| now < n) {
                return OutlierReports::default();
            }
            *next = Some(now + self.report_interval);
        }
        let r = OutlierReports {
            slow_peers: self
                .peers
                .as_ref()
                .map(|p| p.slow_peer_reports(now))
                .unwrap_or_default(),
            slow_disks: self
                .disks
                .as_ref()
                .map(|d| d.slow_disk_reports(now))
                .unwrap_or_default(),
        };
        if !r.slow_peers.is_empty() || !r.slow_disks.is_empty() {
            tracing::info!(peers = ?r.slow_peers, disks = ?r.slow_disks, "reporting slow peers/disks");
        }
        r
    }

    /// The DataNodeInfo JMX attribute `SendPacketDownstreamAvgInfo`: average latency (ms)
    /// per downstream peer, as `{"[peer]RollingAvgTime":ms,...}`; None when peer stats are off.
    pub fn send_packet_downstream_avg_info(&self) -> Option<String> {
        let p = self.peers.as_ref()?;
        let items: Vec<String> = p
            .averages(self.now())
            .iter()
            .map(|(k, v)| {
                format!(
                    "{}:{}",
                    rhdfs_conf::json::string(&format!("[{k}]RollingAvgTime")),
                    rhdfs_conf::json::number(*v)
                )
            })
            .collect();
        Some(format!("{{{}}}", items.join(",")))
    }

    /// The DataNodeInfo JMX attribute `SlowDisks`: slow volumes with their mean latency per
    /// operation, as `{"/data/1":{"WRITE":ms},...}`; None when disk stats are off.
    pub fn slow_disks_json(&self) -> Option<String> {
        let d = self.disks.as_ref()?;
        let items: Vec<String> = d
            .slow_disks(self.now())
            .iter()
            .map(|(path, lat)| {
                let ops: Vec<String> = lat
                    .iter()
                    .map(|(k, v)| {
                        format!(
                            "{}:{}",
                            rhdfs_conf::json::string(k.name()),
                            rhdfs_conf::json::number(*v)
                        )
                    })
                    .collect();
                format!("{}:{{{}}}", rhdfs_conf::json::string(path), ops.join(","))
            })
            .collect();
        Some(format!("{{{}}}", items.join(",")))
    }

    /// Base paths of the slow volumes new replicas should avoid, at most `max`
    /// (dfs.datanode.max.slowdisks.to.exclude; 0 = none), the slowest first.
    pub fn slow_volumes_to_exclude(&self, max: usize) -> Vec<String> {
        let Some(d) = self.disks.as_ref().filter(|_| max > 0) else {
            return Vec::new();
        };
        d.slowest(self.now(), max)
    }

    /// The volumes new replicas avoid now: [`Self::slow_volumes_to_exclude`] with
    /// dfs.datanode.max.slowdisks.to.exclude.
    pub fn volumes_to_exclude(&self) -> Vec<String> {
        let max = self
            .disks
            .as_ref()
            .map_or(0, |d| d.config().max_slow_disks_to_exclude);
        self.slow_volumes_to_exclude(max)
    }

    /// Records whether the NameNode considers this node slow.
    pub fn set_slow_node(&self, slow: bool) {
        if self.slow_node.swap(slow, Ordering::Relaxed) != slow {
            tracing::info!(
                slow,
                "the NameNode says this DataNode is{} slow",
                if slow { "" } else { " no longer" }
            );
        }
    }

    /// Whether the NameNode's last heartbeat response said this node is slow.
    pub fn is_slow_node(&self) -> bool {
        self.slow_node.load(Ordering::Relaxed)
    }

    /// The SLOW field of this node's own ack flag: DISABLED unless dfs.pipeline.slownode.
    pub fn slow_status(&self) -> SlowStatus {
        if !self.pipeline_slownode {
            SlowStatus::Disabled
        } else if self.slow_node.load(Ordering::Relaxed) {
            SlowStatus::Slow
        } else {
            SlowStatus::Normal
        }
    }
}

/// The peer key of a pipeline's mirror when this node is the penultimate one (exactly one
/// target downstream) and peer stats are on: `ip:infoSecurePort` when set, else `ip:infoPort`.
pub fn pipeline_peer_key(
    metrics: Option<&DataNodeMetrics>,
    targets: &[rhdfs_proto::hdfs::DatanodeInfoProto],
) -> Option<String> {
    metrics?.peers.as_ref()?;
    match targets {
        [only] => Some(peer::peer_key(&only.id)),
        _ => None,
    }
}

/// This node's own flag in a pipeline ack: the status, plus the SLOW field when
/// dfs.pipeline.slownode is on.
pub fn own_ack_flag(metrics: Option<&DataNodeMetrics>, status: rhdfs_proto::hdfs::Status) -> u32 {
    let slow = metrics.map_or(SlowStatus::Disabled, |m| m.slow_status());
    rhdfs_transfer::ack::make_flag(status, rhdfs_transfer::ack::Ecn::Disabled, slow)
}

/// One possibly-sampled file operation on a volume: started before the operation, finished
/// after it (on any thread).
#[derive(Debug)]
#[must_use]
pub struct IoSample {
    started: Option<(Arc<DataNodeMetrics>, String, std::time::Instant)>,
}

impl IoSample {
    /// Starts timing when disk stats are on and this operation is drawn.
    pub fn start(
        metrics: &Option<Arc<DataNodeMetrics>>,
        dataset: &crate::dataset::Dataset,
        volume: usize,
    ) -> Self {
        let started = metrics.as_ref().and_then(|m| {
            let t = m.sample_io()?;
            let base = dataset.volume(volume)?.base.display().to_string();
            Some((m.clone(), base, t))
        });
        IoSample { started }
    }

    /// Records the operation's latency if it was sampled.
    pub fn finish(self, kind: IoKind) {
        if let Some((m, base, t)) = self.started {
            m.record_io(&base, kind, Some(t));
        }
    }

    /// Records a sampled operation's outcome: its latency when `ok`, else a file I/O
    /// error on its volume.
    pub fn finish_checked(self, kind: IoKind, ok: bool) {
        self.finish_run(kind, ok, 1);
    }

    /// [`IoSample::finish_checked`] of a run of `n` packets written with one call: `n`
    /// operations with an equal share of its latency, so that a volume's write counts and
    /// average latency stay per packet (Hadoop writes packet by packet) whether packets came
    /// alone or in runs, and slow disk detection compares like with like.
    pub fn finish_run(self, kind: IoKind, ok: bool, n: u32) {
        match self.started {
            Some((m, base, t)) if ok => m.record_io_ops(&base, kind, t.elapsed(), n),
            Some((m, base, t)) => m.volume_io.record_error(&base, t.elapsed()),
            None => {}
        }
    }

    /// Records a sampled sync (an hsync'd packet) on its volume: a data file I/O and a sync
    /// in the volume's figures (slow disk detection knows reads, writes and metadata only).
    pub fn finish_sync(self, ok: bool) {
        if let Some((m, base, t)) = self.started {
            if ok {
                m.volume_io.record(&base, FileOp::Sync, t.elapsed());
            } else {
                m.volume_io.record_error(&base, t.elapsed());
            }
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhdfs_conf::clock::ManualClock;
    use std::sync::Arc;

    fn slow_conf() -> Configuration {
        let mut c = Configuration::new();
        c.set(keys::DFS_DATANODE_PEER_STATS_ENABLED_KEY, "true");
        c.set(
            keys::DFS_DATANODE_PEER_METRICS_MIN_OUTLIER_DETECTION_SAMPLES_KEY,
            "3",
        );
        c.set(keys::DFS_DATANODE_MIN_OUTLIER_DETECTION_NODES_KEY, "3");
        c.set(keys::DFS_DATANODE_OUTLIERS_REPORT_INTERVAL_KEY, "10s");
        c.set(ROLLING_WINDOW_LENGTH_KEY, "1s");
        c.set(keys::DFS_PIPELINE_SLOWNODE_KEY, "true");
        c
    }

    #[test]
    fn defaults_time_peers_only() {
        let m =
            DataNodeMetrics::from_conf(&Configuration::new(), rhdfs_conf::clock::system_clock())
                .unwrap();
        assert!(m.enabled());
        let p = m.peers.as_ref().expect("peer stats on by default");
        assert_eq!(*p.config(), PeerMetricsConfig::default());
        assert_eq!(p.config().window, Duration::from_secs(30));
        assert_eq!(p.config().num_windows, 6);
        assert_eq!((p.config().min_samples, p.config().min_nodes), (100, 5));
        assert_eq!(m.report_interval, Duration::from_secs(30));
        assert_eq!(m.slow_status(), SlowStatus::Disabled);
        assert!(m.sample_io().is_none());
    }

    /// A run of packets written with one call counts as that many writes, each with its share
    /// of the time, as packet-by-packet writes would.
    #[test]
    fn a_run_counts_as_its_packets() {
        let mut c = Configuration::new();
        c.set(
            keys::DFS_DATANODE_FILEIO_PROFILING_SAMPLING_PERCENTAGE_KEY,
            "100",
        );
        let m = DataNodeMetrics::from_conf(&c, rhdfs_conf::clock::system_clock()).unwrap();
        assert!(m.sample_io().is_some());
        m.record_io_ops("/d/1", IoKind::Write, Duration::from_millis(8), 4);
        m.record_io_ops("/d/1", IoKind::Write, Duration::from_millis(2), 1);
        let v = m.volume_io.snapshot("/d/1");
        assert_eq!((v.write.count, v.data_file.count), (5, 5));
        assert_eq!(v.write.mean_millis(), 2.0);
    }

    #[test]
    fn bad_percentage_is_an_error() {
        let mut c = Configuration::new();
        c.set(
            keys::DFS_DATANODE_FILEIO_PROFILING_SAMPLING_PERCENTAGE_KEY,
            "101",
        );
        let e = DataNodeMetrics::from_conf(&c, rhdfs_conf::clock::system_clock()).unwrap_err();
        assert!(e.to_string().contains("fileio.profiling"), "{e}");
    }

    #[test]
    fn reports_once_per_interval() {
        let clock = Arc::new(ManualClock::new(0));
        let m = DataNodeMetrics::from_conf(&slow_conf(), clock.clone()).unwrap();
        for _ in 0..5 {
            for p in ["a:1", "b:1", "c:1"] {
                m.record_peer(p, Duration::from_millis(1));
            }
            m.record_peer("slow:1", Duration::from_millis(100));
        }
        // First heartbeat: due, but the window has not closed yet.
        assert!(m.heartbeat_reports().slow_peers.is_empty());
        clock.advance(Duration::from_secs(2));
        // Not due again until 10s after the first report.
        assert!(m.heartbeat_reports().slow_peers.is_empty());
        clock.advance(Duration::from_secs(8));
        let r = m.heartbeat_reports();
        assert_eq!(r.slow_peers.len(), 1);
        assert_eq!(r.slow_peers[0].data_node_id.as_deref(), Some("slow:1"));
        assert!(m.heartbeat_reports().slow_peers.is_empty());
        assert_eq!(m.slow_status(), SlowStatus::Normal);
        m.set_slow_node(true);
        assert_eq!(m.slow_status(), SlowStatus::Slow);
        assert_eq!(
            m.send_packet_downstream_avg_info().as_deref(),
            Some(
                "{\"[a:1]RollingAvgTime\":1.0,\"[b:1]RollingAvgTime\":1.0,\
                 \"[c:1]RollingAvgTime\":1.0,\"[slow:1]RollingAvgTime\":100.0}"
            )
        );
        assert_eq!(m.slow_disks_json(), None);
        assert!(m.slow_volumes_to_exclude(3).is_empty());
    }

    /// rhdfs's defaults: a DataNode with nine peers, all sent 6 packets a second at 2 ms for
    /// the whole 3-minute history; then one peer turns 10× slower (20 ms) and, being the
    /// bottleneck of its pipelines, gets 10× fewer packets. It is reported within 4 minutes
    /// (the NameNode's 30 s collection and a heartbeat keep the whole under 5), never before
    /// it turned slow, and no healthy peer is ever reported.
    #[test]
    fn defaults_report_a_10x_slower_peer_within_4_minutes() {
        let clock = Arc::new(ManualClock::new(0));
        let m = DataNodeMetrics::from_conf(&Configuration::new(), clock.clone()).unwrap();
        let peers: Vec<String> = (1..=9).map(|i| format!("10.0.0.{i}:9864")).collect();
        let slow_from = Duration::from_secs(240);
        let mut first_report = None;
        for sec in 0..600u64 {
            let now = Duration::from_secs(sec);
            for (i, p) in peers.iter().enumerate() {
                let slow = i == 8 && now >= slow_from;
                let (n, ms) = if slow {
                    (u64::from(sec % 10 < 6), 20)
                } else {
                    (6, 2)
                };
                for _ in 0..n {
                    m.record_peer(p, Duration::from_millis(ms));
                }
            }
            for r in m.heartbeat_reports().slow_peers {
                assert_eq!(r.data_node_id.as_deref(), Some(peers[8].as_str()), "{r:?}");
                assert!(
                    now >= slow_from,
                    "reported at {now:?} before it turned slow"
                );
                first_report.get_or_insert(now);
            }
            clock.advance(Duration::from_secs(1));
        }
        let at = first_report.expect("the slow peer was never reported");
        assert!(
            at - slow_from <= Duration::from_secs(240),
            "reported {:?} after",
            at - slow_from
        );
        assert!(m.peers.as_ref().expect("on").judged_reports() >= 19);
    }

    #[test]
    fn slow_disk_views() {
        let clock = Arc::new(ManualClock::new(0));
        let m = DataNodeMetrics::new(
            clock.clone(),
            None,
            Some(DiskMetricsConfig {
                sampling_percentage: 100,
                min_disks: 3,
                max_slow_disks_to_exclude: 1,
                window: Duration::from_secs(1),
                ..Default::default()
            }),
            Duration::from_secs(60),
            false,
        );
        assert!(m.enabled());
        for (i, w) in [2u64, 3, 2, 300].iter().enumerate() {
            let path = format!("/d{i}");
            m.disks.as_ref().expect("disk stats on").record(
                &path,
                IoKind::Write,
                Duration::from_millis(*w),
                m.now(),
            );
        }
        assert!(m.sample_io().is_some());
        clock.advance(Duration::from_secs(1));
        assert_eq!(
            m.slow_disks_json().as_deref(),
            Some("{\"/d3\":{\"WRITE\":300.0}}")
        );
        assert_eq!(m.slow_volumes_to_exclude(0), Vec::<String>::new());
        assert_eq!(m.slow_volumes_to_exclude(2), vec!["/d3".to_string()]);
        assert_eq!(m.volumes_to_exclude(), vec!["/d3".to_string()]);
        let r = m.heartbeat_reports();
        assert_eq!(r.slow_disks.len(), 1);
        assert_eq!(m.send_packet_downstream_avg_info(), None);
    }
}

#[cfg(test)]
mod actor_tests;
#[cfg(test)]
mod pipeline_tests;
