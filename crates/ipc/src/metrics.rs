//! What the RPC server measures (Hadoop's RpcActivity and RpcDetailedActivity): bytes in and
//! out, time each call waited between being read and being handled (queue time), time its
//! handler ran (processing time, in total and per method), calls waiting and running, open
//! connections, authentication outcomes. Updated with atomics; the per-method table is a
//! short lock per call.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use rhdfs_metrics::{Bean, Exposition, Histogram, HistogramSnapshot};

/// Methods tracked one by one; calls to further (unknown) names share [`OTHER_METHOD`].
pub const MAX_METHODS: usize = 256;
/// Where calls past [`MAX_METHODS`] distinct names are counted.
pub const OTHER_METHOD: &str = "other";

#[derive(Debug)]
struct MethodStats {
    name: Arc<str>,
    processing: Histogram,
    failures: AtomicU64,
}

/// One call's method in the per-method table.
pub(crate) struct MethodHandle {
    stats: Arc<MethodStats>,
    /// The method's own name when it is counted under [`OTHER_METHOD`].
    own_name: Option<String>,
}

impl MethodHandle {
    /// The method's name, for log lines.
    pub(crate) fn name(&self) -> &str {
        self.own_name.as_deref().unwrap_or(&self.stats.name)
    }
}

/// The counters of one RPC server (shared by its connections).
#[derive(Debug, Default)]
pub struct RpcMetrics {
    received_bytes: AtomicU64,
    sent_bytes: AtomicU64,
    queue_time: Histogram,
    processing_time: Histogram,
    queued: AtomicI64,
    in_process: AtomicI64,
    open_connections: AtomicI64,
    auth_successes: AtomicU64,
    auth_failures: AtomicU64,
    failed_calls: AtomicU64,
    dropped_connections: AtomicU64,
    methods: Mutex<BTreeMap<String, Arc<MethodStats>>>,
}

/// Per-method figures at one moment.
#[derive(Debug, Clone)]
pub struct MethodSnapshot {
    pub method: String,
    pub processing: HistogramSnapshot,
    pub failures: u64,
}

/// The server's figures at one moment.
#[derive(Debug, Clone, Default)]
pub struct RpcSnapshot {
    pub received_bytes: u64,
    pub sent_bytes: u64,
    pub queue_time: HistogramSnapshot,
    pub processing_time: HistogramSnapshot,
    /// Calls read and not yet handed to their handler (Hadoop's CallQueueLength).
    pub call_queue_length: u64,
    /// Calls whose handler is running (NumInProcessHandler).
    pub in_process: u64,
    pub open_connections: u64,
    pub auth_successes: u64,
    pub auth_failures: u64,
    /// Calls answered with an exception.
    pub failed_calls: u64,
    /// Connections closed at accept because `ipc.server.max.connections` were open
    /// (Hadoop's NumDroppedConnections).
    pub dropped_connections: u64,
    pub methods: Vec<MethodSnapshot>,
}

fn gauge(v: &AtomicI64) -> u64 {
    u64::try_from(v.load(Ordering::Relaxed)).unwrap_or(0)
}

impl RpcMetrics {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    pub(crate) fn received(&self, n: u64) {
        self.received_bytes.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn sent(&self, n: u64) {
        self.sent_bytes.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn authenticated(&self, ok: bool) {
        let c = if ok {
            &self.auth_successes
        } else {
            &self.auth_failures
        };
        c.fetch_add(1, Ordering::Relaxed);
    }

    /// A connection opened; it counts until the guard is dropped.
    pub(crate) fn connection(self: &Arc<Self>) -> ConnectionGuard {
        self.open_connections.fetch_add(1, Ordering::Relaxed);
        ConnectionGuard(self.clone())
    }

    /// A connection was closed at accept: the server had its maximum open.
    pub(crate) fn dropped(&self) {
        self.dropped_connections.fetch_add(1, Ordering::Relaxed);
    }

    /// A call was read and waits for its handler.
    pub(crate) fn enqueued(&self) {
        self.queued.fetch_add(1, Ordering::Relaxed);
    }

    /// Its handler starts after `waited`.
    pub(crate) fn started(&self, waited: Duration) {
        self.queued.fetch_sub(1, Ordering::Relaxed);
        self.in_process.fetch_add(1, Ordering::Relaxed);
        self.queue_time.observe(waited);
    }

    /// The figures of `method`, found before its call runs (the call takes the name along).
    pub(crate) fn method(&self, method: &str) -> MethodHandle {
        let mut m = self.methods.lock();
        if let Some(s) = m.get(method) {
            return MethodHandle {
                stats: Arc::clone(s),
                own_name: None,
            };
        }
        let (key, own_name) = if m.len() < MAX_METHODS {
            (method, None)
        } else {
            (OTHER_METHOD, Some(method.to_owned()))
        };
        let stats = m.entry(key.to_string()).or_insert_with(|| {
            Arc::new(MethodStats {
                name: Arc::from(key),
                processing: Histogram::default(),
                failures: AtomicU64::new(0),
            })
        });
        MethodHandle {
            stats: Arc::clone(stats),
            own_name,
        }
    }

    /// Its handler ended after `took`.
    pub(crate) fn finished(&self, method: &MethodHandle, took: Duration, ok: bool) {
        self.in_process.fetch_sub(1, Ordering::Relaxed);
        self.processing_time.observe(took);
        if !ok {
            self.failed_calls.fetch_add(1, Ordering::Relaxed);
        }
        method.stats.processing.observe(took);
        if !ok {
            method.stats.failures.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub fn snapshot(&self) -> RpcSnapshot {
        let methods = self
            .methods
            .lock()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<Vec<_>>();
        RpcSnapshot {
            received_bytes: self.received_bytes.load(Ordering::Relaxed),
            sent_bytes: self.sent_bytes.load(Ordering::Relaxed),
            queue_time: self.queue_time.snapshot(),
            processing_time: self.processing_time.snapshot(),
            call_queue_length: gauge(&self.queued),
            in_process: gauge(&self.in_process),
            open_connections: gauge(&self.open_connections),
            auth_successes: self.auth_successes.load(Ordering::Relaxed),
            auth_failures: self.auth_failures.load(Ordering::Relaxed),
            failed_calls: self.failed_calls.load(Ordering::Relaxed),
            dropped_connections: self.dropped_connections.load(Ordering::Relaxed),
            methods: methods
                .into_iter()
                .map(|(method, s)| MethodSnapshot {
                    method,
                    processing: s.processing.snapshot(),
                    failures: s.failures.load(Ordering::Relaxed),
                })
                .collect(),
        }
    }
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

impl RpcSnapshot {
    /// Hadoop's `RpcActivityForPort<port>` and `RpcDetailedActivityForPort<port>` beans.
    pub fn beans(&self, service: &str, port: u16, host: &str) -> Vec<Bean> {
        let name = format!("RpcActivityForPort{port}");
        let mut a = Bean::new(
            format!("Hadoop:service={service},name={name}"),
            name.clone(),
        );
        a.push("tag.port", port.to_string());
        a.push("tag.Context", "rpc");
        a.push("tag.Hostname", host);
        a.push("ReceivedBytes", self.received_bytes);
        a.push("SentBytes", self.sent_bytes);
        a.push("RpcQueueTimeNumOps", self.queue_time.count);
        a.push("RpcQueueTimeAvgTime", self.queue_time.mean_millis());
        a.push("RpcProcessingTimeNumOps", self.processing_time.count);
        a.push(
            "RpcProcessingTimeAvgTime",
            self.processing_time.mean_millis(),
        );
        a.push("RpcAuthenticationFailures", self.auth_failures);
        a.push("RpcAuthenticationSuccesses", self.auth_successes);
        a.push("NumOpenConnections", self.open_connections);
        a.push("NumDroppedConnections", self.dropped_connections);
        a.push("NumInProcessHandler", self.in_process);
        a.push("CallQueueLength", self.call_queue_length);
        let dname = format!("RpcDetailedActivityForPort{port}");
        let mut d = Bean::new(
            format!("Hadoop:service={service},name={dname}"),
            dname.clone(),
        );
        d.push("tag.port", port.to_string());
        d.push("tag.Context", "rpcdetailed");
        d.push("tag.Hostname", host);
        for m in &self.methods {
            let cap = capitalize(&m.method);
            d.push(format!("{cap}NumOps"), m.processing.count);
            d.push(format!("{cap}AvgTime"), m.processing.mean_millis());
        }
        vec![a, d]
    }

    /// The `<prefix>_rpc_*` Prometheus families.
    pub fn expose(&self, e: &mut Exposition, prefix: &str) {
        e.counter(
            &format!("{prefix}_rpc_received_bytes_total"),
            "Bytes of RPC requests received.",
            self.received_bytes as f64,
        );
        e.counter(
            &format!("{prefix}_rpc_sent_bytes_total"),
            "Bytes of RPC responses sent.",
            self.sent_bytes as f64,
        );
        e.gauge(
            &format!("{prefix}_rpc_open_connections"),
            "Open RPC connections.",
            self.open_connections as f64,
        );
        e.counter(
            &format!("{prefix}_rpc_dropped_connections_total"),
            "Connections closed at accept because ipc.server.max.connections were open.",
            self.dropped_connections as f64,
        );
        e.gauge(
            &format!("{prefix}_rpc_call_queue_length"),
            "RPC calls read and waiting for their handler.",
            self.call_queue_length as f64,
        );
        e.gauge(
            &format!("{prefix}_rpc_in_process_calls"),
            "RPC calls whose handler is running.",
            self.in_process as f64,
        );
        e.counters(
            &format!("{prefix}_rpc_authentications_total"),
            "Connections whose handshake succeeded or failed.",
            [
                (
                    vec![("result", "success".to_string())],
                    self.auth_successes as f64,
                ),
                (
                    vec![("result", "failure".to_string())],
                    self.auth_failures as f64,
                ),
            ],
        );
        e.histogram(
            &format!("{prefix}_rpc_queue_time_seconds"),
            "Time RPC calls waited between being read and being handled.",
            &self.queue_time,
        );
        e.histogram(
            &format!("{prefix}_rpc_processing_time_seconds"),
            "Time RPC handlers ran.",
            &self.processing_time,
        );
        e.counters(
            &format!("{prefix}_rpc_calls_total"),
            "RPC calls handled per method.",
            self.methods.iter().map(|m| {
                (
                    vec![("method", m.method.clone())],
                    m.processing.count as f64,
                )
            }),
        );
        e.counters(
            &format!("{prefix}_rpc_failed_calls_total"),
            "RPC calls answered with an exception per method.",
            self.methods
                .iter()
                .map(|m| (vec![("method", m.method.clone())], m.failures as f64)),
        );
        e.histograms(
            &format!("{prefix}_rpc_method_processing_time_seconds"),
            "Time RPC handlers ran per method.",
            self.methods
                .iter()
                .map(|m| (vec![("method", m.method.clone())], &m.processing)),
        );
    }
}

/// Counts one open connection while alive.
#[derive(Debug)]
pub(crate) struct ConnectionGuard(Arc<RpcMetrics>);

impl Drop for ConnectionGuard {
    fn drop(&mut self) {
        self.0.open_connections.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_calls_per_method() {
        let m = RpcMetrics::new();
        let c = m.connection();
        m.enqueued();
        assert_eq!(m.snapshot().call_queue_length, 1);
        m.started(Duration::from_micros(5));
        m.finished(&m.method("getFileInfo"), Duration::from_millis(1), true);
        m.enqueued();
        m.started(Duration::from_micros(5));
        m.finished(&m.method("mkdirs"), Duration::from_millis(1), false);
        let s = m.snapshot();
        assert_eq!(s.call_queue_length, 0);
        assert_eq!(s.in_process, 0);
        assert_eq!(s.open_connections, 1);
        assert_eq!(s.processing_time.count, 2);
        assert_eq!(s.queue_time.count, 2);
        assert_eq!(s.failed_calls, 1);
        assert_eq!(s.methods.len(), 2);
        assert_eq!(s.methods[1].method, "mkdirs");
        assert_eq!(s.methods[1].failures, 1);
        drop(c);
        assert_eq!(m.snapshot().open_connections, 0);
    }

    #[test]
    fn method_names_are_bounded() {
        let m = RpcMetrics::new();
        for i in 0..MAX_METHODS + 10 {
            m.enqueued();
            m.started(Duration::ZERO);
            m.finished(&m.method(&format!("m{i}")), Duration::ZERO, true);
        }
        let s = m.snapshot();
        assert_eq!(s.methods.len(), MAX_METHODS + 1);
        let other = s.methods.iter().find(|x| x.method == OTHER_METHOD);
        assert_eq!(other.map(|o| o.processing.count), Some(10));
    }
}
