//! Slow peers and slow disks as DataNodes report them in heartbeats.
//!
//! - [`SlowPeerTracker`]: for each node reported slow, which nodes reported it and when.
//!   A report is valid for 3 × dfs.datanode.outliers.report.interval, so a slow node stays
//!   known across at least two report rounds and is forgotten when reports stop.
//! - [`SlowDiskTracker`] (`crate::slowdisks`): the same for (DataNode, volume) pairs with their latencies.
//! - [`SlowNodes`]: both trackers plus the slow node set (the nodes reported by the most
//!   peers, at most dfs.namenode.max.slowpeer.collect.nodes and — beyond Hadoop — at most
//!   rhdfs.namenode.slownodes.max.percent of the registered DataNodes, so a noisy cluster
//!   never has more than that share avoided at once), recomputed at most every
//!   dfs.namenode.slowpeer.collect.interval. Placement skips these nodes when
//!   dfs.namenode.block-placement-policy.exclude-slow-nodes.enabled, and read ordering puts
//!   them last when dfs.namenode.avoid.read.slow.datanode (all on by default in rhdfs).
//!
//! Reports name nodes by address ("ip:port"); [`SlowNodes::slow_node_uuids`] resolves them
//! against the registered DataNodes.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use rhdfs_conf::clock::SharedClock;

use crate::datanodes::DatanodeId;
use crate::limits::MAX_NODES_IN_JSON;
use crate::placement::NodeView;
pub use crate::slow_config::SlowNodeConfig;
pub use crate::slowdisks::{DiskReport, SlowDiskEntry, SlowDiskTracker};

/// One valid report on a slow node.
#[derive(Debug, Clone, PartialEq)]
pub struct PeerReport {
    pub reporting_node: String,
    pub latency: f64,
    pub stats: OutlierStats,
    /// Monotonic time the report came in.
    pub at: Duration,
}

/// The detector's numbers behind one slow peer report (SlowPeerReportProto fields 3–5):
/// the reporting node's median peer latency, the median absolute deviation, and the limit
/// the reported latency exceeded.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct OutlierStats {
    pub median: f64,
    pub mad: f64,
    pub upper_limit: f64,
}

/// One heartbeat's entry on a slow peer (DataNodeProtocol's SlowPeerReportProto): the
/// peer's address, the mean latency the reporter saw, and the reporter's detector numbers
/// (absent from DataNodes older than Hadoop 3.4). Entries with no peer are ignored;
/// missing or non-finite figures count as 0.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SlowPeerEntry {
    pub peer: String,
    pub latency: Option<f64>,
    pub median: Option<f64>,
    pub mad: Option<f64>,
    pub upper_limit: Option<f64>,
}

/// Reporting node -> (monotonic time of its latest report, reported latency, detector stats).
type ReportsOnNode = BTreeMap<String, (Duration, f64, OutlierStats)>;

/// Reports per (slow node, reporting node), each stamped with the monotonic time it came in.
#[derive(Debug)]
pub struct SlowPeerTracker {
    validity: Duration,
    reports: Mutex<BTreeMap<String, ReportsOnNode>>,
}

impl SlowPeerTracker {
    pub fn new(validity: Duration) -> Self {
        SlowPeerTracker {
            validity,
            reports: Mutex::new(BTreeMap::new()),
        }
    }

    pub fn report_validity(&self) -> Duration {
        self.validity
    }

    /// `reporting` says `slow` is slow (replacing its previous report on `slow`).
    pub fn add_report(&self, slow: &str, reporting: &str, latency: f64, now: Duration) {
        self.add_report_with_stats(slow, reporting, latency, OutlierStats::default(), now);
    }

    /// [`Self::add_report`] with the reporting node's median, MAD and upper limit.
    pub fn add_report_with_stats(
        &self,
        slow: &str,
        reporting: &str,
        latency: f64,
        stats: OutlierStats,
        now: Duration,
    ) {
        self.reports
            .lock()
            .entry(slow.to_string())
            .or_default()
            .insert(reporting.to_string(), (now, latency, stats));
    }

    fn valid(&self, at: Duration, now: Duration) -> bool {
        now.saturating_sub(at) < self.validity
    }

    /// Valid reports on `slow`, by reporting node.
    pub fn reports_for_node(&self, slow: &str, now: Duration) -> Vec<PeerReport> {
        let g = self.reports.lock();
        g.get(slow)
            .into_iter()
            .flatten()
            .filter(|(_, (at, _, _))| self.valid(*at, now))
            .map(|(r, (at, l, st))| PeerReport {
                reporting_node: r.clone(),
                latency: *l,
                stats: *st,
                at: *at,
            })
            .collect()
    }

    /// Every node with at least one valid report, with those reports; expired reports are
    /// dropped from the tracker on the way.
    pub fn all_reports(&self, now: Duration) -> BTreeMap<String, Vec<PeerReport>> {
        let mut g = self.reports.lock();
        g.retain(|_, by| {
            by.retain(|_, (at, _, _)| now.saturating_sub(*at) < self.validity);
            !by.is_empty()
        });
        g.iter()
            .map(|(slow, by)| {
                let v = by
                    .iter()
                    .map(|(r, (at, l, st))| PeerReport {
                        reporting_node: r.clone(),
                        latency: *l,
                        stats: *st,
                        at: *at,
                    })
                    .collect();
                (slow.clone(), v)
            })
            .collect()
    }

    /// The `n` nodes reported by the most peers (ties by name), most reported first.
    pub fn slow_nodes(&self, n: usize, now: Duration) -> Vec<String> {
        let mut v: Vec<(String, usize)> = self
            .all_reports(now)
            .into_iter()
            .map(|(k, r)| (k, r.len()))
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        v.into_iter().take(n).map(|(k, _)| k).collect()
    }

    /// JSON of the top `n` slow nodes (Hadoop's SlowPeersReport attribute):
    /// `[{"SlowNode":..,"SlowPeerLatencyWithReportingNodes":[{"ReportingNode":..,"ReportedLatency":..}]}]`.
    pub fn json(&self, n: usize, now: Duration) -> String {
        self.json_with(n, now, |_, _| None)
    }

    /// [`Self::json`] with, when `detail` gives them for a node, extra fields after its
    /// reports (already rendered as `"Name":value` pairs) and each report's age and time
    /// left (`ReportedSecondsAgo`, `ExpiresInSeconds`).
    pub fn json_with(
        &self,
        n: usize,
        now: Duration,
        detail: impl Fn(&str, &[PeerReport]) -> Option<String>,
    ) -> String {
        let all = self.all_reports(now);
        let top = self.slow_nodes(n, now);
        let items: Vec<String> = top
            .iter()
            .filter_map(|slow| {
                let reps = all.get(slow)?;
                let extra = detail(slow, reps);
                let inner: Vec<String> = reps
                    .iter()
                    .map(|r| {
                        let times = if extra.is_some() {
                            let left = (r.at + self.validity).saturating_sub(now);
                            format!(
                                ",\"ReportedSecondsAgo\":{},\"ExpiresInSeconds\":{}",
                                now.saturating_sub(r.at).as_secs(),
                                left.as_secs()
                            )
                        } else {
                            String::new()
                        };
                        format!(
                            "{{\"ReportingNode\":{},\"ReportedLatency\":{},\"MedianLatency\":{},\"MadLatency\":{},\"UpperLimitLatency\":{}{times}}}",
                            rhdfs_conf::json::string(&r.reporting_node),
                            rhdfs_conf::json::number(r.latency),
                            rhdfs_conf::json::number(r.stats.median),
                            rhdfs_conf::json::number(r.stats.mad),
                            rhdfs_conf::json::number(r.stats.upper_limit)
                        )
                    })
                    .collect();
                let extra = extra.map(|e| format!(",{e}")).unwrap_or_default();
                Some(format!(
                    "{{\"SlowNode\":{},\"SlowPeerLatencyWithReportingNodes\":[{}]{extra}}}",
                    rhdfs_conf::json::string(slow),
                    inner.join(",")
                ))
            })
            .collect();
        format!("[{}]", items.join(","))
    }
}

/// One reported node and the NameNode's decision about it.
#[derive(Debug, Clone, PartialEq)]
pub struct SlowNodeDetail {
    /// The address the reports name it by.
    pub addr: String,
    /// Each valid report, with its age and the time it has left.
    pub reports: Vec<(PeerReport, Duration, Duration)>,
    /// In the slow set: avoided by placement and read ordering, told it is slow.
    pub avoided: bool,
    /// When it leaves the slow set if no new report comes in (0 when not in it).
    pub eligible_in: Duration,
}

#[derive(Debug, Default)]
struct Collected {
    next: Option<Duration>,
    /// Slow node addresses as of the last collection (bounded, most reported first).
    nodes: Arc<Vec<String>>,
}

/// The NameNode's slow node state: trackers fed by heartbeats and the collected slow set.
#[derive(Debug)]
pub struct SlowNodes {
    cfg: SlowNodeConfig,
    clock: SharedClock,
    pub peers: SlowPeerTracker,
    pub disks: SlowDiskTracker,
    collected: Mutex<Collected>,
    /// Slow peer entries taken from heartbeats since the start.
    peer_entries: AtomicU64,
}

impl SlowNodes {
    pub fn new(cfg: SlowNodeConfig, clock: SharedClock) -> Self {
        SlowNodes {
            peers: SlowPeerTracker::new(cfg.report_validity),
            disks: SlowDiskTracker::new(cfg.report_validity),
            collected: Mutex::new(Collected::default()),
            peer_entries: AtomicU64::new(0),
            cfg,
            clock,
        }
    }

    pub fn config(&self) -> &SlowNodeConfig {
        &self.cfg
    }

    /// Slow peer entries taken from heartbeats since the start (0: no DataNode ever
    /// reported a slow peer).
    pub fn peer_entries_received(&self) -> u64 {
        self.peer_entries.load(Ordering::Relaxed)
    }

    /// Takes the slow peer/disk entries of one heartbeat from a registered node;
    /// `reporting` is its address (ip:ipcPort, as Hadoop keys reporters).
    pub fn on_heartbeat(
        &self,
        reporting: &str,
        slow_peers: &[SlowPeerEntry],
        slow_disks: &[SlowDiskEntry],
    ) {
        let now = self.clock.monotonic();
        if self.cfg.peer_stats_enabled && !slow_peers.is_empty() {
            tracing::info!(datanode = %reporting, ?slow_peers, "DataNode reported slow peers");
            for p in slow_peers {
                let id = p.peer.as_str();
                if id.is_empty() {
                    continue;
                }
                self.peer_entries.fetch_add(1, Ordering::Relaxed);
                let finite = |v: Option<f64>| v.filter(|l| l.is_finite()).unwrap_or(0.0);
                let stats = OutlierStats {
                    median: finite(p.median),
                    mad: finite(p.mad),
                    upper_limit: finite(p.upper_limit),
                };
                self.peers
                    .add_report_with_stats(id, reporting, finite(p.latency), stats, now);
            }
        }
        if self.cfg.disk_stats_enabled && !slow_disks.is_empty() {
            tracing::debug!(datanode = %reporting, ?slow_disks, "DataNode reported slow disks");
            self.disks.add_reports(reporting, slow_disks, now);
        }
    }

    /// Addresses of the slow node set as of the last collection.
    pub fn slow_node_addrs(&self) -> Arc<Vec<String>> {
        self.collected.lock().nodes.clone()
    }

    /// The slow node set when no collection is due, None when one is (then
    /// [`Self::slow_node_uuids`] collects it against the registered nodes). Lets callers
    /// skip listing the nodes while the set is empty.
    pub fn fresh_slow_node_addrs(&self) -> Option<Arc<Vec<String>>> {
        if !self.cfg.collects() {
            return Some(Arc::default());
        }
        let now = self.clock.monotonic();
        let c = self.collected.lock();
        c.next.is_some_and(|n| now < n).then(|| c.nodes.clone())
    }

    /// The slow node set, recollected against the registered `nodes` when the collect
    /// interval has passed: the nodes reported by the most peers that resolve to a
    /// registered node, at most [`SlowNodeConfig::max_avoided`] of them.
    fn collect(&self, nodes: &[&DatanodeId]) -> Arc<Vec<String>> {
        if !self.cfg.collects() {
            return Arc::default();
        }
        let now = self.clock.monotonic();
        let mut c = self.collected.lock();
        if c.next.is_none_or(|n| now >= n) {
            let bound = self.cfg.max_avoided(nodes.len());
            let ranked = self.peers.slow_nodes(usize::MAX, now);
            let reported = ranked.len();
            let chosen: Vec<String> = ranked
                .into_iter()
                .filter(|a| resolve(a, nodes.iter().copied()).is_some())
                .take(bound)
                .collect();
            if !chosen.is_empty() || !c.nodes.is_empty() {
                tracing::info!(nodes = ?chosen, reported, bound, registered = nodes.len(),
                    "slow peers collected (avoided until their reports expire)");
            }
            c.nodes = Arc::new(chosen);
            c.next = Some(now + self.cfg.collect_interval);
        }
        c.nodes.clone()
    }

    /// UUIDs of the slow node set among `nodes` (the registered DataNodes).
    pub fn slow_node_uuids(&self, nodes: &[&DatanodeId]) -> BTreeSet<String> {
        let addrs = self.collect(nodes);
        addrs
            .iter()
            .filter_map(|a| resolve(a, nodes.iter().copied()))
            .collect()
    }

    /// Sets `slow` on the views of the slow node set (what placement and read ordering
    /// consult when excluding or demoting slow nodes). `nodes` lists the registered
    /// DataNodes; it is called only when the slow set may be non-empty.
    pub fn mark_views<'a, I>(&self, views: &mut [NodeView], nodes: impl FnOnce() -> I)
    where
        I: IntoIterator<Item = &'a DatanodeId>,
    {
        if self.fresh_slow_node_addrs().is_some_and(|a| a.is_empty()) {
            return;
        }
        let ids: Vec<&DatanodeId> = nodes().into_iter().collect();
        let slow = self.slow_node_uuids(&ids);
        if slow.is_empty() {
            return;
        }
        for v in views.iter_mut() {
            if slow.contains(&v.uuid) {
                v.slow = true;
            }
        }
    }

    /// When a node of the slow set becomes eligible again if no new report on it comes in:
    /// its last report expires, then the next collection leaves it out.
    fn eligible_in(&self, reports: &[PeerReport], now: Duration) -> Duration {
        let expiry = reports
            .iter()
            .map(|r| r.at + self.cfg.report_validity)
            .max()
            .unwrap_or(now);
        let next = self.collected.lock().next.unwrap_or(now);
        let interval = self.cfg.collect_interval;
        let at = if next >= expiry || interval.is_zero() {
            next.max(expiry)
        } else {
            let behind = (expiry - next).as_nanos();
            let steps = behind.div_ceil(interval.as_nanos().max(1));
            next + Duration::from_nanos((interval.as_nanos() * steps) as u64)
        };
        at.saturating_sub(now)
    }

    /// Every node with a valid report, the most reported first, with the decision about it
    /// (for getSlowDatanodeReport's details); empty when peer stats are off.
    pub fn details(&self) -> Vec<SlowNodeDetail> {
        if !self.cfg.peer_stats_enabled {
            return Vec::new();
        }
        let now = self.clock.monotonic();
        let avoided = self.slow_node_addrs();
        let mut all = self.peers.all_reports(now);
        self.peers
            .slow_nodes(usize::MAX, now)
            .into_iter()
            .filter_map(|addr| {
                let reports = all.remove(&addr)?;
                let is_avoided = avoided.contains(&addr);
                let eligible_in = if is_avoided {
                    self.eligible_in(&reports, now)
                } else {
                    Duration::ZERO
                };
                let reports = reports
                    .into_iter()
                    .map(|r| {
                        let ago = now.saturating_sub(r.at);
                        let left = (r.at + self.cfg.report_validity).saturating_sub(now);
                        (r, ago, left)
                    })
                    .collect();
                Some(SlowNodeDetail {
                    addr,
                    reports,
                    avoided: is_avoided,
                    eligible_in,
                })
            })
            .collect()
    }

    /// Hadoop's JMX `SlowPeersReport` attribute (None when peer stats are off), each node
    /// with rhdfs's account of the decision: `ReportCount`, `Avoided` (in the slow set
    /// placement, read ordering and isSlownode use), `EligibleAgainInSeconds` (when it leaves
    /// that set if no new report comes in) and each report's age and time left.
    pub fn slow_peers_report(&self) -> Option<String> {
        if !self.cfg.peer_stats_enabled {
            return None;
        }
        let now = self.clock.monotonic();
        let avoided = self.slow_node_addrs();
        Some(self.peers.json_with(MAX_NODES_IN_JSON, now, |slow, reps| {
            let is_avoided = avoided.iter().any(|a| a == slow);
            let eligible = if is_avoided {
                self.eligible_in(reps, now).as_secs()
            } else {
                0
            };
            Some(format!(
                "\"ReportCount\":{},\"Avoided\":{is_avoided},\"EligibleAgainInSeconds\":{eligible}",
                reps.len()
            ))
        }))
    }

    /// Hadoop's JMX `SlowDisksReport` attribute (None when disk stats are off).
    pub fn slow_disks_report(&self) -> Option<String> {
        self.cfg
            .disk_stats_enabled
            .then(|| self.disks.json(MAX_NODES_IN_JSON, self.clock.monotonic()))
    }
}

/// The uuid of the node `addr` ("host:port") names: the node with that host (ip or name)
/// and one of its ports; failing that, the only node on that host.
pub fn resolve<'a>(addr: &str, nodes: impl IntoIterator<Item = &'a DatanodeId>) -> Option<String> {
    let (host, port) = match addr.rsplit_once(':') {
        Some((h, p)) => (h, p.parse::<u32>().ok()),
        None => (addr, None),
    };
    let on_host: Vec<&DatanodeId> = nodes
        .into_iter()
        .filter(|d| d.ip_addr == host || d.host_name == host)
        .collect();
    if let Some(p) = port
        && let Some(d) = on_host.iter().find(|d| {
            [d.info_port, d.info_secure_port, d.xfer_port, d.ipc_port]
                .iter()
                .any(|x| *x != 0 && *x == p)
        })
    {
        return Some(d.uuid.clone());
    }
    match on_host.as_slice() {
        [only] => Some(only.uuid.clone()),
        _ => None,
    }
}

#[cfg(test)]
#[path = "slowpeers_tests.rs"]
mod tests;
