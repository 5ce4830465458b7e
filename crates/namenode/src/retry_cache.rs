//! At-most-once execution of non-idempotent ClientProtocol calls: the answer to a call is
//! remembered by (clientId, callId), and a retry of the same call (a client that lost the
//! connection before the answer arrived) gets that first answer instead of running again.
//! A retry that arrives while the first run is still going waits for it. Entries expire
//! after `dfs.namenode.retrycache.expirytime.millis`.

use std::collections::HashMap;
use std::time::Duration;

use bytes::Bytes;
use parking_lot::Mutex;
use rhdfs_conf::clock::SharedClock;
use rhdfs_ipc::RpcError;
use tokio::sync::watch;

/// Default expiry (HDFS's 10 minutes).
pub const DEFAULT_EXPIRY: Duration = Duration::from_secs(600);

type Answer = Result<Bytes, RpcError>;

/// The retry cache's entry lifetime as configured: `dfs.namenode.enable.retrycache`
/// (default true) and `dfs.namenode.retrycache.expirytime.millis` (default 600000);
/// `None` when the cache is switched off.
pub fn expiry_from_conf(
    conf: &rhdfs_conf::Configuration,
) -> Result<Option<Duration>, rhdfs_conf::ConfError> {
    use rhdfs_conf::keys;
    if !conf.get_bool(
        keys::DFS_NAMENODE_ENABLE_RETRYCACHE_KEY,
        keys::DFS_NAMENODE_ENABLE_RETRYCACHE_DEFAULT,
    )? {
        return Ok(None);
    }
    conf.get_duration(
        keys::DFS_NAMENODE_RETRYCACHE_EXPIRYTIME_MILLIS_KEY,
        keys::DFS_NAMENODE_RETRYCACHE_EXPIRYTIME_MILLIS_DEFAULT,
        keys::DFS_NAMENODE_RETRYCACHE_EXPIRYTIME_MILLIS_UNIT,
    )
    .map(Some)
}

#[derive(Debug)]
enum Entry {
    Running(watch::Receiver<Option<Answer>>),
    Done { answer: Answer, at: Duration },
}

/// What a caller must do with a call.
pub enum Lookup {
    /// Run it, then hand the answer to the guard.
    Run(RunGuard),
    /// The call ran (or is running): this is its answer.
    Cached(Answer),
}

/// Completes a running entry; dropped without an answer, the entry is removed so a later
/// retry runs the call again.
pub struct RunGuard {
    key: (Bytes, i32),
    tx: Option<watch::Sender<Option<Answer>>>,
    cache: std::sync::Arc<RetryCache>,
}

impl RunGuard {
    pub fn finish(mut self, answer: &Answer) {
        if let Some(tx) = self.tx.take() {
            let now = self.cache.clock.monotonic();
            self.cache.entries.lock().insert(
                self.key.clone(),
                Entry::Done {
                    answer: answer.clone(),
                    at: now,
                },
            );
            let _ = tx.send(Some(answer.clone()));
        }
    }
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        if self.tx.take().is_some() {
            self.cache.entries.lock().remove(&self.key);
        }
    }
}

/// The retry cache.
#[derive(Debug)]
pub struct RetryCache {
    entries: Mutex<HashMap<(Bytes, i32), Entry>>,
    expiry: Duration,
    clock: SharedClock,
    last_sweep: Mutex<Duration>,
}

impl RetryCache {
    pub fn new(expiry: Duration, clock: SharedClock) -> std::sync::Arc<Self> {
        let now = clock.monotonic();
        std::sync::Arc::new(RetryCache {
            entries: Mutex::new(HashMap::new()),
            expiry,
            clock,
            last_sweep: Mutex::new(now),
        })
    }

    /// Whether calls of `method` from this client go through the cache.
    /// Whether a call of an at-most-once method (`rpc::MethodKind::AtMostOnce`) carries
    /// the ids the cache needs.
    pub fn applies(client_id: &[u8], call_id: i32) -> bool {
        !client_id.is_empty() && call_id >= 0
    }

    /// Number of remembered calls.
    pub fn len(&self) -> usize {
        self.entries.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn sweep(&self, now: Duration) {
        {
            let mut last = self.last_sweep.lock();
            if now.saturating_sub(*last) < self.expiry / 4 {
                return;
            }
            *last = now;
        }
        let expiry = self.expiry;
        self.entries.lock().retain(|_, e| match e {
            Entry::Running(_) => true,
            Entry::Done { at, .. } => now.saturating_sub(*at) < expiry,
        });
    }

    /// Looks the call up: the first caller gets [`Lookup::Run`], later ones the answer
    /// (waiting while the first is still running).
    pub async fn lookup(self: &std::sync::Arc<Self>, client_id: &Bytes, call_id: i32) -> Lookup {
        let now = self.clock.monotonic();
        self.sweep(now);
        let key = (client_id.clone(), call_id);
        let mut rx = {
            let mut entries = self.entries.lock();
            match entries.get(&key) {
                Some(Entry::Done { answer, at }) if now.saturating_sub(*at) < self.expiry => {
                    return Lookup::Cached(answer.clone());
                }
                Some(Entry::Running(rx)) => rx.clone(),
                _ => {
                    let (tx, rx) = watch::channel(None);
                    entries.insert(key.clone(), Entry::Running(rx));
                    return Lookup::Run(RunGuard {
                        key,
                        tx: Some(tx),
                        cache: self.clone(),
                    });
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

    #[test]
    fn expiry_follows_the_configuration() -> Result<(), rhdfs_conf::ConfError> {
        let mut conf = rhdfs_conf::Configuration::new();
        assert_eq!(expiry_from_conf(&conf)?, Some(DEFAULT_EXPIRY));
        conf.set("dfs.namenode.retrycache.expirytime.millis", "1500");
        assert_eq!(expiry_from_conf(&conf)?, Some(Duration::from_millis(1500)));
        conf.set("dfs.namenode.enable.retrycache", "false");
        assert_eq!(expiry_from_conf(&conf)?, None);
        conf.set("dfs.namenode.enable.retrycache", "maybe");
        assert!(expiry_from_conf(&conf).is_err());
        Ok(())
    }

    #[tokio::test]
    async fn retry_gets_first_answer_and_expires() {
        let clock = Arc::new(ManualClock::new(0));
        let cache = RetryCache::new(Duration::from_secs(10), clock.clone());
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
        let cache = RetryCache::new(DEFAULT_EXPIRY, clock);
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
    async fn dropped_run_lets_a_retry_run() {
        let clock = Arc::new(ManualClock::new(0));
        let cache = RetryCache::new(DEFAULT_EXPIRY, clock);
        let id = Bytes::from_static(b"c");
        let Lookup::Run(g) = cache.lookup(&id, 1).await else {
            panic!()
        };
        drop(g);
        assert!(matches!(cache.lookup(&id, 1).await, Lookup::Run(_)));
    }
}
