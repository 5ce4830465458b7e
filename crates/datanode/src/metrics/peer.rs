//! Per-peer latency of the packets this node sends down a write pipeline, and the slow peers
//! it reports to the NameNode (`SlowPeerReportProto` in heartbeats).
//!
//! As in HDFS, only the penultimate node of a pipeline records samples (its mirror is the
//! last node), so each sample measures exactly one downstream node; a sample is the time to
//! write and flush one packet to the mirror's socket (Hadoop's BlockReceiver
//! `addSendPacketDownstream`), which grows when a slow mirror leaves its socket buffers full. Peers are keyed by the
//! address the NameNode knows them by (`ip:infoPort`, like Hadoop's `getInfoAddr()`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rhdfs_proto::datanode::SlowPeerReportProto;

use super::outlier::{OutlierDetector, OutlierMetrics};
use super::rolling::RollingAverages;

/// How a downstream node is named in peer stats and slow peer reports: `ip:infoSecurePort`
/// when it has one, else `ip:infoPort`, else (no HTTP port advertised, as in tests)
/// `ip:xferPort`. The NameNode resolves any of these to the node.
pub fn peer_key(id: &rhdfs_proto::hdfs::DatanodeIdProto) -> String {
    let port = match id.info_secure_port {
        Some(p) if p != 0 => p,
        _ if id.info_port != 0 => id.info_port,
        _ => id.xfer_port,
    };
    format!("{}:{}", id.ip_addr, port)
}

/// Settings of [`PeerMetrics`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PeerMetricsConfig {
    /// dfs.datanode.peer.metrics.min.outlier.detection.samples
    pub min_samples: u64,
    /// dfs.datanode.min.outlier.detection.nodes
    pub min_nodes: usize,
    /// dfs.datanode.slowpeer.low.threshold.ms
    pub low_threshold_ms: f64,
    /// dfs.datanode.max.nodes.to.report
    pub max_nodes_to_report: usize,
    /// dfs.metrics.rolling.averages.window.length / .numbers
    pub window: Duration,
    pub num_windows: usize,
}

impl Default for PeerMetricsConfig {
    fn default() -> Self {
        use rhdfs_conf::keys::*;
        PeerMetricsConfig {
            min_samples: DFS_DATANODE_PEER_METRICS_MIN_OUTLIER_DETECTION_SAMPLES_DEFAULT,
            min_nodes: DFS_DATANODE_MIN_OUTLIER_DETECTION_NODES_DEFAULT as usize,
            low_threshold_ms: DFS_DATANODE_SLOWPEER_LOW_THRESHOLD_MS_DEFAULT.as_secs_f64() * 1000.0,
            max_nodes_to_report: DFS_DATANODE_MAX_NODES_TO_REPORT_DEFAULT as usize,
            window: super::rolling::DEFAULT_WINDOW,
            num_windows: super::rolling::DEFAULT_NUM_WINDOWS,
        }
    }
}

/// Rolling send latencies per downstream peer.
#[derive(Debug)]
pub struct PeerMetrics {
    cfg: PeerMetricsConfig,
    detector: OutlierDetector,
    sends: RollingAverages,
    /// Reports computed with enough peers for the detector to judge (dfs.datanode.min.outlier.detection.nodes).
    judged: AtomicU64,
}

impl PeerMetrics {
    pub fn new(cfg: PeerMetricsConfig) -> Self {
        PeerMetrics {
            detector: OutlierDetector::new(cfg.min_nodes, cfg.low_threshold_ms),
            sends: RollingAverages::new(cfg.window, cfg.num_windows),
            judged: AtomicU64::new(0),
            cfg,
        }
    }

    pub fn config(&self) -> &PeerMetricsConfig {
        &self.cfg
    }

    /// One packet's latency to `peer`, at monotonic time `now`.
    pub fn record(&self, peer: &str, latency: Duration, now: Duration) {
        self.sends.add(peer, latency.as_secs_f64() * 1000.0, now);
    }

    /// Average latency (ms) per peer with enough samples.
    pub fn averages(&self, now: Duration) -> BTreeMap<String, f64> {
        self.sends.averages(self.cfg.min_samples, now)
    }

    /// Slow peers with the numbers behind each decision.
    pub fn outlier_metrics(&self, now: Duration) -> BTreeMap<String, OutlierMetrics> {
        self.detector.outlier_metrics(&self.averages(now))
    }

    /// How many reports so far were computed over enough peers for the detector to judge
    /// them (at least dfs.datanode.min.outlier.detection.nodes with enough samples), whatever
    /// it found.
    pub fn judged_reports(&self) -> u64 {
        self.judged.load(Ordering::Relaxed)
    }

    /// The heartbeat's slow peer entries: the slowest first, at most max.nodes.to.report.
    pub fn slow_peer_reports(&self, now: Duration) -> Vec<SlowPeerReportProto> {
        let averages = self.averages(now);
        if averages.len() >= self.cfg.min_nodes.max(1) {
            self.judged.fetch_add(1, Ordering::Relaxed);
        }
        let mut out: Vec<(String, OutlierMetrics)> = self
            .detector
            .outlier_metrics(&averages)
            .into_iter()
            .collect();
        out.sort_by(|a, b| {
            b.1.actual
                .total_cmp(&a.1.actual)
                .then_with(|| a.0.cmp(&b.0))
        });
        out.truncate(self.cfg.max_nodes_to_report);
        out.into_iter()
            .map(|(id, m)| SlowPeerReportProto {
                data_node_id: Some(id),
                aggregate_latency: Some(m.actual),
                median: Some(m.median),
                mad: Some(m.mad),
                upper_limit_latency: Some(m.upper_limit),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peer_key_prefers_https_then_http_then_xfer() {
        let mut id = rhdfs_proto::hdfs::DatanodeIdProto {
            ip_addr: "10.0.0.4".into(),
            xfer_port: 9866,
            info_port: 9864,
            info_secure_port: Some(9865),
            ..Default::default()
        };
        assert_eq!(peer_key(&id), "10.0.0.4:9865");
        id.info_secure_port = Some(0);
        assert_eq!(peer_key(&id), "10.0.0.4:9864");
        id.info_port = 0;
        assert_eq!(peer_key(&id), "10.0.0.4:9866");
    }

    fn cfg() -> PeerMetricsConfig {
        PeerMetricsConfig {
            min_samples: 5,
            min_nodes: 4,
            low_threshold_ms: 5.0,
            max_nodes_to_report: 1,
            window: Duration::from_secs(1),
            num_windows: 4,
        }
    }

    #[test]
    fn slow_peer_is_reported_after_a_window() {
        let m = PeerMetrics::new(cfg());
        let t0 = Duration::ZERO;
        for i in 0..10 {
            for p in ["a:1", "b:1", "c:1", "d:1"] {
                m.record(p, Duration::from_millis(2 + i % 2), t0);
            }
            m.record("slow:1", Duration::from_millis(80), t0);
            m.record("slow2:1", Duration::from_millis(60), t0);
            m.record("worst:1", Duration::from_millis(500), t0);
        }
        assert!(m.slow_peer_reports(t0).is_empty(), "window still open");
        let t1 = Duration::from_secs(1);
        let avg = m.averages(t1);
        assert_eq!(avg.len(), 7);
        let r = m.slow_peer_reports(t1);
        // max.nodes.to.report = 1: the slowest of the outliers.
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].data_node_id.as_deref(), Some("worst:1"));
        assert_eq!(r[0].aggregate_latency, Some(500.0));
        let mut c = cfg();
        c.min_samples = 11;
        let m2 = PeerMetrics::new(c);
        m2.record("a:1", Duration::from_millis(1), t0);
        assert!(m2.averages(t1).is_empty());
    }
}
