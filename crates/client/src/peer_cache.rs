//! The client's cache of idle DataNode connections, as Hadoop's PeerCache: a connection whose
//! READ_BLOCK finished (its status sent) is kept for the next block or read on the same
//! DataNode, up to `dfs.client.socketcache.capacity` connections for
//! `dfs.client.socketcache.expiryMsec` each (the DataNode waits
//! `dfs.datanode.socket.reuse.keepalive` for the next op). Also counts the connections opened.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rhdfs_conf::clock::SharedClock;
use std::sync::Mutex;
use tokio::net::TcpStream;

/// Idle connections by DataNode address, oldest first.
#[derive(Debug)]
pub(crate) struct PeerCache {
    capacity: usize,
    expiry: Duration,
    clock: SharedClock,
    idle: Mutex<VecDeque<Idle>>,
    opened: AtomicU64,
    reused: AtomicU64,
}

#[derive(Debug)]
struct Idle {
    addr: String,
    stream: TcpStream,
    /// Monotonic time it was put back.
    since: Duration,
}

impl PeerCache {
    pub(crate) fn new(capacity: usize, expiry: Duration, clock: SharedClock) -> Self {
        PeerCache {
            capacity,
            expiry,
            clock,
            idle: Mutex::new(VecDeque::new()),
            opened: AtomicU64::new(0),
            reused: AtomicU64::new(0),
        }
    }

    /// The most recently returned idle connection to `addr` that has not expired.
    pub(crate) fn take(&self, addr: &str) -> Option<TcpStream> {
        let mut idle = lock(&self.idle);
        self.evict_expired(&mut idle);
        let i = idle.iter().rposition(|p| p.addr == addr)?;
        let p = idle.remove(i)?;
        self.reused.fetch_add(1, Ordering::Relaxed);
        Some(p.stream)
    }

    /// Keeps `stream` for reuse (dropping the oldest connection when full).
    pub(crate) fn put(&self, addr: &str, stream: TcpStream) {
        if self.capacity == 0 || self.expiry.is_zero() {
            return;
        }
        let mut idle = lock(&self.idle);
        self.evict_expired(&mut idle);
        while idle.len() >= self.capacity {
            idle.pop_front();
        }
        idle.push_back(Idle {
            addr: addr.to_string(),
            stream,
            since: self.clock.monotonic(),
        });
    }

    fn evict_expired(&self, idle: &mut VecDeque<Idle>) {
        let now = self.clock.monotonic();
        idle.retain(|p| now.saturating_sub(p.since) < self.expiry);
    }

    /// Records a new connection to a DataNode.
    pub(crate) fn note_opened(&self) {
        self.opened.fetch_add(1, Ordering::Relaxed);
    }

    /// Connections opened so far.
    pub(crate) fn opened(&self) -> u64 {
        self.opened.load(Ordering::Relaxed)
    }

    /// Connections taken from the cache so far.
    pub(crate) fn reused(&self) -> u64 {
        self.reused.load(Ordering::Relaxed)
    }

    /// Idle connections held now.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        lock(&self.idle).len()
    }

    /// Drops every idle connection.
    pub(crate) fn clear(&self) {
        lock(&self.idle).clear();
    }
}

fn lock(m: &Mutex<VecDeque<Idle>>) -> std::sync::MutexGuard<'_, VecDeque<Idle>> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use rhdfs_conf::clock::ManualClock;

    use super::*;

    async fn pair(l: &tokio::net::TcpListener) -> TcpStream {
        let addr = l.local_addr().unwrap();
        let (c, _) = tokio::join!(TcpStream::connect(addr), l.accept());
        c.unwrap()
    }

    #[tokio::test]
    async fn capacity_expiry_and_address() {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let clock = Arc::new(ManualClock::new(0));
        let c = PeerCache::new(2, Duration::from_millis(3000), clock.clone());
        c.put("a", pair(&l).await);
        c.put("b", pair(&l).await);
        c.put("a", pair(&l).await);
        // Full at 2: the oldest ("a") went.
        assert_eq!(c.len(), 2);
        assert!(c.take("b").is_some());
        assert!(c.take("b").is_none());
        assert!(c.take("a").is_some());
        c.put("a", pair(&l).await);
        clock.advance(Duration::from_millis(2999));
        c.put("b", pair(&l).await);
        clock.advance(Duration::from_millis(1));
        assert!(c.take("a").is_none(), "expired after 3000 ms");
        assert!(c.take("b").is_some());
        assert_eq!(c.reused(), 3);
        let none = PeerCache::new(0, Duration::from_millis(3000), clock);
        none.put("a", pair(&l).await);
        assert_eq!(none.len(), 0);
    }
}
