//! At-most-once execution of non-idempotent ClientProtocol calls: the answer to a call is
//! remembered by (clientId, callId), and a retry of the same call (a client that lost the
//! connection before the answer arrived) gets that first answer instead of running again.
//! A retry that arrives while the first run is still going waits for it. Entries expire
//! after `dfs.namenode.retrycache.expirytime.millis`.
//!
//! Memory is bounded as Hadoop bounds it (a LightWeightCache sized from
//! `dfs.namenode.retrycache.heap.percent`): rhdfs has no heap, so the share is taken of the
//! machine's memory and divided by the measured cost of one entry (`ENTRY_BYTES`); when the
//! cache is full the oldest answer is forgotten first. Answers are kept in a queue in the
//! order they were recorded, so expiry and eviction take entries from its front a few at a
//! time (`SWEEP_MAX` per call): no hold of the cache's lock walks the whole cache.
//!
//! With HA the cache holds across failover as Hadoop's does (its edits carry the rpc client
//! id and call id): the ids of the at-most-once call running on a task ([`CallIds`], set by
//! the RPC layer around the handler with [`CallIds::scope`]) travel with the edits the call
//! logs, and a standby applying them remembers the call as committed
//! ([`RetryCache::record_committed`]). A retry that reaches it after it became active gets
//! [`Lookup::Replay`]: the answer is rebuilt from the namespace (the method's replay handler)
//! instead of the call running a second time.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use bytes::Bytes;
use parking_lot::Mutex;
use rhdfs_conf::clock::SharedClock;
use rhdfs_ipc::RpcError;
use tokio::sync::watch;

/// Default expiry (HDFS's 10 minutes).
pub const DEFAULT_EXPIRY: Duration = Duration::from_secs(600);

/// Resident memory one remembered answer costs: measured with `rhdfs bench nn-memory` as
/// the difference per created file between the cache on and off (~540 B, a create's answer
/// included), rounded down.
pub const ENTRY_BYTES: u64 = 512;

/// The fewest entries a cache holds, however small the share of memory.
pub const MIN_CAPACITY: usize = 1024;

/// Memory assumed when /proc/meminfo cannot be read (Hadoop's default heap is of this order).
const FALLBACK_MEMORY: u64 = 1 << 30;

/// Expired or surplus entries dropped per lookup or answer, at most.
const SWEEP_MAX: usize = 64;

type Answer = Result<Bytes, RpcError>;

/// How the cache is configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryCacheSettings {
    /// `dfs.namenode.retrycache.expirytime.millis`.
    pub expiry: Duration,
    /// Answers kept at most (from `dfs.namenode.retrycache.heap.percent`).
    pub capacity: usize,
}

impl RetryCacheSettings {
    /// Entries living `expiry`, with no bound on their number (tests and embedded use).
    pub fn with_expiry(expiry: Duration) -> Self {
        RetryCacheSettings {
            expiry,
            capacity: usize::MAX,
        }
    }
}

/// The cache as configured: `dfs.namenode.enable.retrycache` (default true),
/// `dfs.namenode.retrycache.expirytime.millis` (default 600000) and
/// `dfs.namenode.retrycache.heap.percent` (default 0.03, of `memory_bytes`); `None` when
/// the cache is switched off.
pub fn settings_from_conf(
    conf: &rhdfs_conf::Configuration,
    memory_bytes: u64,
) -> Result<Option<RetryCacheSettings>, rhdfs_conf::ConfError> {
    use rhdfs_conf::keys;
    if !conf.get_bool(
        keys::DFS_NAMENODE_ENABLE_RETRYCACHE_KEY,
        keys::DFS_NAMENODE_ENABLE_RETRYCACHE_DEFAULT,
    )? {
        return Ok(None);
    }
    let expiry = conf.get_duration(
        keys::DFS_NAMENODE_RETRYCACHE_EXPIRYTIME_MILLIS_KEY,
        keys::DFS_NAMENODE_RETRYCACHE_EXPIRYTIME_MILLIS_DEFAULT,
        keys::DFS_NAMENODE_RETRYCACHE_EXPIRYTIME_MILLIS_UNIT,
    )?;
    let percent = conf.get_f64(
        keys::DFS_NAMENODE_RETRYCACHE_HEAP_PERCENT_KEY,
        keys::DFS_NAMENODE_RETRYCACHE_HEAP_PERCENT_DEFAULT,
    )?;
    if !(percent > 0.0 && percent <= 1.0) {
        return Err(rhdfs_conf::ConfError::InvalidValue {
            key: keys::DFS_NAMENODE_RETRYCACHE_HEAP_PERCENT_KEY.to_string(),
            value: percent.to_string(),
            reason: "must be a fraction in (0, 1]".to_string(),
        });
    }
    let entries = (memory_bytes as f64 * percent / ENTRY_BYTES as f64) as usize;
    Ok(Some(RetryCacheSettings {
        expiry,
        capacity: entries.max(MIN_CAPACITY),
    }))
}

/// The machine's memory (MemTotal of /proc/meminfo), or `FALLBACK_MEMORY`. Blocking; read
/// once at start-up.
pub fn machine_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| mem_total(&text))
        .unwrap_or(FALLBACK_MEMORY)
}

fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}

/// The at-most-once call a task is running: what a journal attaches to the edits it logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallIds {
    pub client_id: Bytes,
    pub call_id: i32,
}

tokio::task_local! {
    static CURRENT_CALL: CallIds;
}

impl CallIds {
    /// Runs `f` (a handler) as this call: edits it logs carry the ids.
    pub async fn scope<F: std::future::Future>(self, f: F) -> F::Output {
        CURRENT_CALL.scope(self, f).await
    }

    /// The call the current task runs, if it runs an at-most-once call.
    pub fn current() -> Option<CallIds> {
        CURRENT_CALL.try_with(Clone::clone).ok()
    }
}

#[derive(Debug)]
enum Entry {
    Running(watch::Receiver<Option<Answer>>),
    Done {
        answer: Answer,
        at: Duration,
    },
    /// Ran on another NameNode, whose edits this one applied: the answer is not known here.
    Committed {
        at: Duration,
    },
}

impl Entry {
    fn recorded_at(&self) -> Option<Duration> {
        match self {
            Entry::Running(_) => None,
            Entry::Done { at, .. } | Entry::Committed { at } => Some(*at),
        }
    }
}

/// What a caller must do with a call.
pub enum Lookup {
    /// Run it, then hand the answer to the guard.
    Run(RunGuard),
    /// The call ran (or is running): this is its answer.
    Cached(Answer),
    /// The call ran on the NameNode that was active before and its edits are applied here:
    /// rebuild its answer from the namespace (never run it again), then hand it to the
    /// guard.
    Replay(RunGuard),
}

/// Completes a running entry; dropped without an answer, the entry is removed so a later
/// retry runs the call again.
pub struct RunGuard {
    key: (Bytes, i32),
    tx: Option<watch::Sender<Option<Answer>>>,
    cache: std::sync::Arc<RetryCache>,
    /// For a replay: when the call was recorded as committed, restored if the guard is
    /// dropped without an answer (the call must still not run again).
    committed_at: Option<Duration>,
}

impl RunGuard {
    pub fn finish(mut self, answer: &Answer) {
        if let Some(tx) = self.tx.take() {
            let now = self.cache.clock.monotonic();
            {
                let mut entries = self.cache.entries.lock();
                entries.map.insert(
                    self.key.clone(),
                    Entry::Done {
                        answer: answer.clone(),
                        at: now,
                    },
                );
                entries.answered.push_back((now, self.key.clone()));
                entries.sweep(now, self.cache.expiry, self.cache.capacity);
            }
            let _ = tx.send(Some(answer.clone()));
        }
    }
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        if self.tx.take().is_some() {
            let mut entries = self.cache.entries.lock();
            match self.committed_at {
                Some(at) => {
                    entries
                        .map
                        .insert(self.key.clone(), Entry::Committed { at });
                }
                None => {
                    entries.map.remove(&self.key);
                }
            }
        }
    }
}

type Key = (Bytes, i32);

/// The entries, and the answered ones in the order they were recorded.
#[derive(Debug, Default)]
struct Entries {
    map: HashMap<Key, Entry>,
    answered: VecDeque<(Duration, Key)>,
}

impl Entries {
    /// Drops answers from the front of the queue that have expired, or that are over the
    /// capacity, at most `SWEEP_MAX`. A queue record whose key was answered again later (its
    /// time differs from the map's) only leaves the queue.
    fn sweep(&mut self, now: Duration, expiry: Duration, capacity: usize) {
        for _ in 0..SWEEP_MAX {
            let Some((at, _)) = self.answered.front() else {
                return;
            };
            let expired = now.saturating_sub(*at) >= expiry;
            if !expired && self.answered.len() <= capacity {
                return;
            }
            let Some((at, key)) = self.answered.pop_front() else {
                return;
            };
            if self.map.get(&key).and_then(Entry::recorded_at) == Some(at) {
                self.map.remove(&key);
            }
        }
    }
}

/// The retry cache.
#[derive(Debug)]
pub struct RetryCache {
    entries: Mutex<Entries>,
    expiry: Duration,
    capacity: usize,
    clock: SharedClock,
}

impl RetryCache {
    pub fn new(settings: RetryCacheSettings, clock: SharedClock) -> std::sync::Arc<Self> {
        std::sync::Arc::new(RetryCache {
            entries: Mutex::new(Entries::default()),
            expiry: settings.expiry,
            capacity: settings.capacity.max(1),
            clock,
        })
    }

    /// Answers kept at most.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Whether a call of an at-most-once method (`rpc::MethodKind::AtMostOnce`) carries
    /// the ids the cache needs.
    pub fn applies(client_id: &[u8], call_id: i32) -> bool {
        !client_id.is_empty() && call_id >= 0
    }

    /// Number of remembered calls (answered or running).
    pub fn len(&self) -> usize {
        self.entries.lock().map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Remembers a call whose edits this NameNode applied from the replicated log (it ran on
    /// the active of the time); a call already known here is left as it is.
    pub fn record_committed(&self, client_id: &[u8], call_id: i32) {
        let now = self.clock.monotonic();
        let key = (Bytes::copy_from_slice(client_id), call_id);
        let mut entries = self.entries.lock();
        if entries.map.contains_key(&key) {
            return;
        }
        entries
            .map
            .insert(key.clone(), Entry::Committed { at: now });
        entries.answered.push_back((now, key));
        entries.sweep(now, self.expiry, self.capacity);
    }

    /// Looks the call up: the first caller gets [`Lookup::Run`] (or [`Lookup::Replay`] for a
    /// call committed by another NameNode), later ones the answer (waiting while the first
    /// is still running).
    pub async fn lookup(self: &std::sync::Arc<Self>, client_id: &Bytes, call_id: i32) -> Lookup {
        let now = self.clock.monotonic();
        let key = (client_id.clone(), call_id);
        let mut rx = {
            let mut guard = self.entries.lock();
            let entries = &mut *guard;
            entries.sweep(now, self.expiry, self.capacity);
            match entries.map.get(&key) {
                Some(Entry::Done { answer, at }) if now.saturating_sub(*at) < self.expiry => {
                    return Lookup::Cached(answer.clone());
                }
                Some(Entry::Running(rx)) => rx.clone(),
                found => {
                    let committed_at = match found {
                        Some(Entry::Committed { at }) if now.saturating_sub(*at) < self.expiry => {
                            Some(*at)
                        }
                        _ => None,
                    };
                    let (tx, rx) = watch::channel(None);
                    entries.map.insert(key.clone(), Entry::Running(rx));
                    let guard = RunGuard {
                        key,
                        tx: Some(tx),
                        cache: self.clone(),
                        committed_at,
                    };
                    return if committed_at.is_some() {
                        Lookup::Replay(guard)
                    } else {
                        Lookup::Run(guard)
                    };
                }
            }
        };
        loop {
            if let Some(answer) = rx.borrow().clone() {
                return Lookup::Cached(answer);
            }
            if rx.changed().await.is_err() {
                // The first run ended without an answer (its task was dropped): run again.
                return Box::pin(self.lookup(client_id, call_id)).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhdfs_conf::clock::ManualClock;
    use std::sync::Arc;

    const GIB: u64 = 1 << 30;

    fn unbounded(expiry: Duration) -> RetryCacheSettings {
        RetryCacheSettings::with_expiry(expiry)
    }

    #[test]
    fn settings_follow_the_configuration() -> Result<(), rhdfs_conf::ConfError> {
        let mut conf = rhdfs_conf::Configuration::new();
        let s = settings_from_conf(&conf, 16 * GIB)?.expect("on by default");
        assert_eq!(s.expiry, DEFAULT_EXPIRY);
        // 3 % of 16 GiB in 512-byte entries.
        assert_eq!(s.capacity, (16 * GIB * 3 / 100 / ENTRY_BYTES) as usize);
        conf.set("dfs.namenode.retrycache.expirytime.millis", "1500");
        conf.set("dfs.namenode.retrycache.heap.percent", "0.0000001");
        let s = settings_from_conf(&conf, 16 * GIB)?.expect("on");
        assert_eq!(s.expiry, Duration::from_millis(1500));
        assert_eq!(s.capacity, MIN_CAPACITY, "never below the floor");
        conf.set("dfs.namenode.retrycache.heap.percent", "1.5");
        assert!(settings_from_conf(&conf, GIB).is_err());
        conf.set("dfs.namenode.enable.retrycache", "false");
        assert_eq!(settings_from_conf(&conf, GIB)?, None);
        conf.set("dfs.namenode.enable.retrycache", "maybe");
        assert!(settings_from_conf(&conf, GIB).is_err());
        Ok(())
    }

    #[test]
    fn machine_memory_is_read_from_meminfo() {
        assert_eq!(
            mem_total("MemTotal:       16314020 kB\nMemFree: 1 kB\n"),
            Some(16_314_020 * 1024)
        );
        assert_eq!(mem_total("MemFree: 1 kB\n"), None);
        assert_eq!(mem_total("MemTotal: lots\n"), None);
        assert!(machine_memory() > 0);
    }

    /// Answers `n` calls of one client, one after another.
    async fn answer_calls(cache: &Arc<RetryCache>, id: &Bytes, calls: std::ops::Range<i32>) {
        for call in calls {
            let Lookup::Run(g) = cache.lookup(id, call).await else {
                panic!("call {call} must run")
            };
            g.finish(&Ok(Bytes::from(call.to_string())));
        }
    }

    #[tokio::test]
    async fn a_full_cache_forgets_its_oldest_answers() {
        let clock = Arc::new(ManualClock::new(0));
        let settings = RetryCacheSettings {
            expiry: DEFAULT_EXPIRY,
            capacity: 100,
        };
        let cache = RetryCache::new(settings, clock.clone());
        let id = Bytes::from_static(b"c");
        answer_calls(&cache, &id, 0..250).await;
        assert_eq!(cache.len(), 100, "bounded by its capacity");
        // The newest answers are kept, the oldest ran out.
        assert!(matches!(
            cache.lookup(&id, 249).await,
            Lookup::Cached(Ok(_))
        ));
        assert!(matches!(
            cache.lookup(&id, 150).await,
            Lookup::Cached(Ok(_))
        ));
        assert!(matches!(cache.lookup(&id, 149).await, Lookup::Run(_)));
    }

    #[tokio::test]
    async fn expired_answers_leave_a_few_at_a_time() {
        let clock = Arc::new(ManualClock::new(0));
        let cache = RetryCache::new(unbounded(Duration::from_secs(10)), clock.clone());
        let id = Bytes::from_static(b"c");
        answer_calls(&cache, &id, 0..200).await;
        clock.advance(Duration::from_secs(11));
        // One lookup drops at most SWEEP_MAX expired answers (and runs its own call).
        let Lookup::Run(g) = cache.lookup(&id, 1000).await else {
            panic!("a new call runs")
        };
        assert_eq!(cache.len(), 200 - SWEEP_MAX + 1);
        drop(g);
        for call in 2000..2010 {
            drop(cache.lookup(&id, call).await);
        }
        assert_eq!(
            cache.len(),
            0,
            "every expired answer gone after a few calls"
        );
    }

    #[tokio::test]
    async fn an_answer_given_again_outlives_its_first_record() {
        let clock = Arc::new(ManualClock::new(0));
        let cache = RetryCache::new(unbounded(Duration::from_secs(10)), clock.clone());
        let id = Bytes::from_static(b"c");
        answer_calls(&cache, &id, 7..8).await;
        clock.advance(Duration::from_secs(11));
        // Expired: the call runs again and its new answer is recorded.
        answer_calls(&cache, &id, 7..8).await;
        clock.advance(Duration::from_secs(5));
        // The first record's sweep must not take the second answer with it.
        match cache.lookup(&id, 7).await {
            Lookup::Cached(Ok(b)) => assert_eq!(&b[..], b"7"),
            _ => panic!("the second answer is still cached"),
        }
    }

    #[tokio::test]
    async fn retry_gets_first_answer_and_expires() {
        let clock = Arc::new(ManualClock::new(0));
        let cache = RetryCache::new(unbounded(Duration::from_secs(10)), clock.clone());
        let id = Bytes::from_static(b"client-1");
        let Lookup::Run(g) = cache.lookup(&id, 7).await else {
            panic!("first call must run")
        };
        g.finish(&Ok(Bytes::from_static(b"first")));
        match cache.lookup(&id, 7).await {
            Lookup::Cached(Ok(b)) => assert_eq!(&b[..], b"first"),
            _ => panic!("retry must get the first answer"),
        }
        assert!(matches!(cache.lookup(&id, 8).await, Lookup::Run(_)));
        clock.advance(Duration::from_secs(11));
        assert!(matches!(cache.lookup(&id, 7).await, Lookup::Run(_)));
    }

    #[tokio::test]
    async fn concurrent_retry_waits_for_the_first_run() {
        let clock = Arc::new(ManualClock::new(0));
        let cache = RetryCache::new(unbounded(DEFAULT_EXPIRY), clock);
        let id = Bytes::from_static(b"c");
        let Lookup::Run(g) = cache.lookup(&id, 1).await else {
            panic!()
        };
        let c2 = cache.clone();
        let id2 = id.clone();
        let waiter = tokio::spawn(tracing::Instrument::in_current_span(async move {
            match c2.lookup(&id2, 1).await {
                Lookup::Cached(Err(e)) => e.message,
                _ => "ran again".to_string(),
            }
        }));
        tokio::time::sleep(Duration::from_millis(20)).await;
        g.finish(&Err(RpcError::io("boom")));
        assert_eq!(waiter.await.unwrap(), "boom");
    }

    #[tokio::test]
    async fn a_call_committed_elsewhere_is_replayed_never_run() {
        let clock = Arc::new(ManualClock::new(0));
        let cache = RetryCache::new(unbounded(Duration::from_secs(10)), clock.clone());
        let id = Bytes::from_static(b"c");
        cache.record_committed(&id, 4);
        // A replay dropped before it answered leaves the call committed.
        let Lookup::Replay(g) = cache.lookup(&id, 4).await else {
            panic!("a committed call is replayed")
        };
        drop(g);
        let Lookup::Replay(g) = cache.lookup(&id, 4).await else {
            panic!("still committed after a dropped replay")
        };
        g.finish(&Ok(Bytes::from_static(b"rebuilt")));
        match cache.lookup(&id, 4).await {
            Lookup::Cached(Ok(b)) => assert_eq!(&b[..], b"rebuilt"),
            _ => panic!("the rebuilt answer is kept"),
        }
        // A call answered here is not overwritten by its committed edits.
        answer_calls(&cache, &id, 5..6).await;
        cache.record_committed(&id, 5);
        assert!(matches!(cache.lookup(&id, 5).await, Lookup::Cached(Ok(_))));
        // Committed calls expire as answers do.
        cache.record_committed(&id, 6);
        clock.advance(Duration::from_secs(11));
        assert!(matches!(cache.lookup(&id, 6).await, Lookup::Run(_)));
    }

    #[tokio::test]
    async fn the_task_carries_its_call_ids() {
        assert_eq!(CallIds::current(), None);
        let ids = CallIds {
            client_id: Bytes::from_static(b"c"),
            call_id: 9,
        };
        let seen = ids.clone().scope(async { CallIds::current() }).await;
        assert_eq!(seen, Some(ids));
        assert_eq!(CallIds::current(), None);
    }

    #[tokio::test]
    async fn dropped_run_lets_a_retry_run() {
        let clock = Arc::new(ManualClock::new(0));
        let cache = RetryCache::new(unbounded(DEFAULT_EXPIRY), clock);
        let id = Bytes::from_static(b"c");
        let Lookup::Run(g) = cache.lookup(&id, 1).await else {
            panic!()
        };
        drop(g);
        assert!(matches!(cache.lookup(&id, 1).await, Lookup::Run(_)));
    }
}
