//! Slow disks as DataNodes report them in heartbeats: the latest report per (DataNode,
//! volume), valid for the same time as slow peer reports (Hadoop's SlowDiskTracker).

use std::collections::BTreeMap;
use std::time::Duration;

use parking_lot::Mutex;

/// One heartbeat's entry on a slow volume of the reporting DataNode (SlowDiskReportProto):
/// its base path and mean latencies in ms. Entries with no path are ignored; missing or
/// non-finite latencies are left out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SlowDiskEntry {
    pub base_path: String,
    pub metadata_latency: Option<f64>,
    pub read_latency: Option<f64>,
    pub write_latency: Option<f64>,
}

/// The latest report on one (DataNode, volume) pair.
#[derive(Debug, Clone, PartialEq)]
pub struct DiskReport {
    /// "dataNodeAddress:basePath", as Hadoop names slow disks.
    pub disk_id: String,
    /// (op name, mean latency ms): METADATA, READ, WRITE as reported.
    pub latencies: BTreeMap<&'static str, f64>,
}

impl DiskReport {
    fn worst(&self) -> f64 {
        self.latencies.values().copied().fold(0.0, f64::max)
    }
}

/// Slow disk reports per (DataNode, volume), valid for the same time as peer reports.
#[derive(Debug)]
pub struct SlowDiskTracker {
    validity: Duration,
    reports: Mutex<BTreeMap<String, (Duration, DiskReport)>>,
}

impl SlowDiskTracker {
    pub fn new(validity: Duration) -> Self {
        SlowDiskTracker {
            validity,
            reports: Mutex::new(BTreeMap::new()),
        }
    }

    /// The slow disks of one heartbeat from `datanode` (its address).
    pub fn add_reports(&self, datanode: &str, disks: &[SlowDiskEntry], now: Duration) {
        let mut g = self.reports.lock();
        for d in disks {
            let path = d.base_path.as_str();
            if path.is_empty() {
                continue;
            }
            let mut latencies = BTreeMap::new();
            for (name, v) in [
                ("METADATA", d.metadata_latency),
                ("READ", d.read_latency),
                ("WRITE", d.write_latency),
            ] {
                if let Some(v) = v.filter(|v| v.is_finite()) {
                    latencies.insert(name, v);
                }
            }
            let disk_id = format!("{datanode}:{path}");
            g.insert(disk_id.clone(), (now, DiskReport { disk_id, latencies }));
        }
    }

    /// Valid reports, the slowest first (ties by id), at most `n`; expired ones are dropped.
    pub fn slow_disks(&self, n: usize, now: Duration) -> Vec<DiskReport> {
        let mut g = self.reports.lock();
        g.retain(|_, (at, _)| now.saturating_sub(*at) < self.validity);
        let mut v: Vec<DiskReport> = g.values().map(|(_, r)| r.clone()).collect();
        v.sort_by(|a, b| {
            b.worst()
                .total_cmp(&a.worst())
                .then_with(|| a.disk_id.cmp(&b.disk_id))
        });
        v.truncate(n);
        v
    }

    /// JSON of the top `n` slow disks (Hadoop's SlowDisksReport attribute):
    /// `[{"SlowDiskID":..,"Latencies":{"METADATA":..,"READ":..,"WRITE":..}}]`.
    pub fn json(&self, n: usize, now: Duration) -> String {
        let items: Vec<String> = self
            .slow_disks(n, now)
            .iter()
            .map(|r| {
                let lat: Vec<String> = r
                    .latencies
                    .iter()
                    .map(|(k, v)| {
                        format!(
                            "{}:{}",
                            rhdfs_conf::json::string(k),
                            rhdfs_conf::json::number(*v)
                        )
                    })
                    .collect();
                format!(
                    "{{\"SlowDiskID\":{},\"Latencies\":{{{}}}}}",
                    rhdfs_conf::json::string(&r.disk_id),
                    lat.join(",")
                )
            })
            .collect();
        format!("[{}]", items.join(","))
    }
}
