//! Short-circuit local reads (Hadoop's BlockReaderFactory + DomainSocketFactory +
//! ShortCircuitCache + DfsClientShmManager): with `dfs.client.read.shortcircuit` and
//! `dfs.domain.socket.path`, a replica on a DataNode whose address is this machine's is read
//! straight from its block file, the descriptors asked for over the DataNode's domain socket
//! (REQUEST_SHORT_CIRCUIT_FDS) and kept open for reuse (`cache`). Each opened replica has a
//! shared-memory slot (`shm`) when the DataNode gives segments: once the DataNode invalidates
//! the replica (deleted, moved, reopened), its slot says so and the open files are no longer
//! read — the replica is dropped from the cache and the read goes back to the DataNode.
//!
//! A domain socket that cannot be reached, or a DataNode that refuses short-circuit access
//! altogether, is not tried again for ten minutes (Hadoop's DomainSocketFactory); a refusal for
//! one block only (ERROR_UNSUPPORTED with a version, e.g. a replica not finalized) stops
//! requests for that block by the reader (`read/local.rs`). Any failure falls back to TCP.

mod cache;
mod replica;
mod shm;

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use rhdfs_conf::clock::SharedClock;
use rhdfs_conf::{Configuration, keys};
use rhdfs_proto::hdfs::{DatanodeInfoProto, LocatedBlockProto, Status};
use rhdfs_transfer::short_circuit::{FdsAnswer, effective_path, request_fds};
use tokio::net::UnixStream;

pub(crate) use replica::{LocalReadError, LocalReplica, PieceBuf};

use crate::error::Result;

/// dfs.client.read.shortcircuit.buffer.size, Hadoop's BlockReaderLocal buffer: here the piece a
/// sequential short-circuit read takes from a block file at a time, the next piece read ahead
/// while the caller uses this one. (Kept beside the other short-circuit keys' use rather than
/// in `rhdfs_conf::keys`.)
const BUFFER_SIZE_KEY: &str = "dfs.client.read.shortcircuit.buffer.size";
const BUFFER_SIZE_DEFAULT: u64 = 1024 * 1024;

/// How long a domain socket path that failed stays unused (DomainSocketFactory's pathMap).
const PATH_DISABLED_FOR: Duration = Duration::from_secs(600);

/// The short-circuit keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShortCircuitConf {
    /// dfs.client.read.shortcircuit (and a non-empty dfs.domain.socket.path).
    pub enabled: bool,
    /// dfs.domain.socket.path, `_PORT` not yet replaced.
    pub socket_path: String,
    /// dfs.client.read.shortcircuit.skip.checksum.
    pub skip_checksum: bool,
    /// dfs.client.read.shortcircuit.streams.cache.size.
    pub cache_size: usize,
    /// dfs.client.read.shortcircuit.streams.cache.expiry.ms.
    pub cache_expiry: Duration,
    /// dfs.client.read.shortcircuit.buffer.size: bytes a sequential read takes at a time.
    pub buffer_size: u64,
}

impl ShortCircuitConf {
    pub fn from_conf(conf: &Configuration) -> Result<Self> {
        let socket_path = conf
            .get_trimmed(keys::DFS_DOMAIN_SOCKET_PATH_KEY)
            .unwrap_or(keys::DFS_DOMAIN_SOCKET_PATH_DEFAULT)
            .to_string();
        let on = conf.get_bool(
            keys::DFS_CLIENT_READ_SHORTCIRCUIT_KEY,
            keys::DFS_CLIENT_READ_SHORTCIRCUIT_DEFAULT,
        )?;
        Ok(ShortCircuitConf {
            enabled: on && !socket_path.is_empty(),
            socket_path,
            skip_checksum: conf.get_bool(
                keys::DFS_CLIENT_READ_SHORTCIRCUIT_SKIP_CHECKSUM_KEY,
                keys::DFS_CLIENT_READ_SHORTCIRCUIT_SKIP_CHECKSUM_DEFAULT,
            )?,
            cache_size: usize::try_from(conf.get_u64(
                keys::DFS_CLIENT_READ_SHORTCIRCUIT_STREAMS_CACHE_SIZE_KEY,
                keys::DFS_CLIENT_READ_SHORTCIRCUIT_STREAMS_CACHE_SIZE_DEFAULT,
            )?)
            .unwrap_or(usize::MAX),
            cache_expiry: conf.get_duration(
                keys::DFS_CLIENT_READ_SHORTCIRCUIT_STREAMS_CACHE_EXPIRY_MS_KEY,
                keys::DFS_CLIENT_READ_SHORTCIRCUIT_STREAMS_CACHE_EXPIRY_MS_DEFAULT,
                keys::DFS_CLIENT_READ_SHORTCIRCUIT_STREAMS_CACHE_EXPIRY_MS_UNIT,
            )?,
            buffer_size: conf.get_size(BUFFER_SIZE_KEY, BUFFER_SIZE_DEFAULT)?.max(1),
        })
    }
}

/// Why no descriptors were had for a replica.
#[derive(Debug)]
pub(crate) enum NoReplica {
    /// Not for this block (refused for it, or its files are unusable): ask again for others.
    Block(String),
    /// Not on this DataNode for a while (socket unreachable or access disabled).
    Node(String),
}

/// The FileSystem's short-circuit state.
#[derive(Debug)]
pub(crate) struct ShortCircuit {
    conf: ShortCircuitConf,
    clock: SharedClock,
    socket_timeout: Duration,
    local: Mutex<HashMap<IpAddr, bool>>,
    /// Socket paths not to try until the given monotonic time.
    disabled: Mutex<HashMap<PathBuf, Duration>>,
    replicas: cache::ReplicaCache<LocalReplica>,
    shm: shm::ShmManager,
    fds_received: AtomicU64,
    bytes_read: AtomicU64,
}

impl ShortCircuit {
    pub(crate) fn new(
        conf: ShortCircuitConf,
        socket_timeout: Duration,
        clock: SharedClock,
    ) -> Self {
        ShortCircuit {
            replicas: cache::ReplicaCache::new(conf.cache_size, conf.cache_expiry),
            conf,
            clock,
            socket_timeout,
            local: Mutex::new(HashMap::new()),
            disabled: Mutex::new(HashMap::new()),
            shm: shm::ShmManager::new(format!("DFSClient_rhdfs_{}", std::process::id())),
            fds_received: AtomicU64::new(0),
            bytes_read: AtomicU64::new(0),
        }
    }

    pub(crate) fn enabled(&self) -> bool {
        self.conf.enabled
    }

    pub(crate) fn skip_checksum(&self) -> bool {
        self.conf.skip_checksum
    }

    pub(crate) fn buffer_size(&self) -> u64 {
        self.conf.buffer_size
    }

    /// (descriptor pairs received, bytes read through short-circuit reads).
    pub(crate) fn stats(&self) -> (u64, u64) {
        (
            self.fds_received.load(Ordering::Relaxed),
            self.bytes_read.load(Ordering::Relaxed),
        )
    }

    pub(crate) fn count_read(&self, n: usize) {
        self.bytes_read.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// Whether `dn` runs on this machine: a loopback address, or one a socket can bind to
    /// (DFSUtilClient.isLocalAddress).
    pub(crate) fn is_local(&self, dn: &DatanodeInfoProto) -> bool {
        let Ok(ip) = dn.id.ip_addr.parse::<IpAddr>() else {
            return false;
        };
        let mut m = self.local.lock().unwrap_or_else(|p| p.into_inner());
        *m.entry(ip)
            .or_insert_with(|| ip.is_loopback() || std::net::UdpSocket::bind((ip, 0)).is_ok())
    }

    fn key(dn: &DatanodeInfoProto, lb: &LocatedBlockProto) -> cache::Key {
        let port = u16::try_from(dn.id.xfer_port).unwrap_or(0);
        (
            port,
            lb.b.pool_id.clone(),
            lb.b.block_id,
            lb.b.generation_stamp,
        )
    }

    /// Forgets the open replica of `lb` on `dn` (its files turned out unusable or corrupt).
    pub(crate) fn evict(&self, dn: &DatanodeInfoProto, lb: &LocatedBlockProto) {
        self.replicas.remove(&Self::key(dn, lb));
    }

    /// The open replica of `lb` on `dn`: from the cache, or asked for over the domain socket.
    pub(crate) async fn replica(
        &self,
        dn: &DatanodeInfoProto,
        lb: &LocatedBlockProto,
    ) -> std::result::Result<Arc<LocalReplica>, NoReplica> {
        let key = Self::key(dn, lb);
        let now = self.clock.monotonic();
        if let Some(r) = self.replicas.get(&key, now) {
            if !r.is_stale() {
                return Ok(r);
            }
            // The DataNode invalidated the replica: its files are not read again.
            self.replicas.remove(&key);
        }
        let path = PathBuf::from(effective_path(&self.conf.socket_path, key.0));
        {
            let mut d = self.disabled.lock().unwrap_or_else(|p| p.into_inner());
            match d.get(&path) {
                Some(until) if *until > now => {
                    return Err(NoReplica::Node(format!(
                        "domain socket {} is disabled",
                        path.display()
                    )));
                }
                Some(_) => {
                    d.remove(&path);
                }
                None => {}
            }
        }
        let slot = self.shm.allocate(&path, now, self.socket_timeout).await;
        let slot_id = slot.as_ref().map(shm::Slot::proto);
        let answer = tokio::time::timeout(self.socket_timeout, async {
            let mut sock = UnixStream::connect(&path).await?;
            request_fds(&mut sock, &lb.b, Some(&lb.block_token), slot_id)
                .await
                .map_err(|e| std::io::Error::other(e.to_string()))
        })
        .await
        .unwrap_or_else(|_| Err(std::io::Error::other("timed out")));
        let disable = |why: String| {
            tracing::warn!(
                "short-circuit reads from DataNode {}:{} are disabled for {} s: {why}",
                dn.id.ip_addr,
                dn.id.xfer_port,
                PATH_DISABLED_FOR.as_secs()
            );
            self.disabled
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(path.clone(), now + PATH_DISABLED_FOR);
            NoReplica::Node(why)
        };
        let (block, meta) = match answer {
            Ok(FdsAnswer::Granted { block, meta }) => (block, meta),
            Ok(FdsAnswer::Refused {
                status,
                message,
                has_version,
            }) => {
                let unsupported = status == Status::ErrorUnsupported as i32;
                if (unsupported && has_version) || status == Status::ErrorAccessToken as i32 {
                    return Err(NoReplica::Block(message));
                }
                return Err(disable(format!("status {status}: {message}")));
            }
            Err(e) => {
                return Err(disable(format!(
                    "I/O error requesting file descriptors from {}: {e}",
                    path.display()
                )));
            }
        };
        self.fds_received.fetch_add(1, Ordering::Relaxed);
        let len = lb.b.num_bytes.unwrap_or(0);
        let opened =
            tokio::task::spawn_blocking(move || LocalReplica::open(block, meta, len, slot))
                .await
                .map_err(|e| NoReplica::Block(format!("blocking task failed: {e}")))?;
        let r = Arc::new(opened.map_err(|e| NoReplica::Block(e.to_string()))?);
        self.replicas.put(key, r.clone(), now);
        Ok(r)
    }
}

/// A short-circuit read of `[off, off + n)` into `buf` on a blocking thread; `buf` comes back
/// with the answer for the next read.
pub(crate) fn spawn_read(
    r: Arc<LocalReplica>,
    off: u64,
    n: u64,
    skip_checksum: bool,
    mut buf: PieceBuf,
) -> tokio::task::JoinHandle<(PieceBuf, std::result::Result<Bytes, LocalReadError>)> {
    tokio::task::spawn_blocking(move || {
        let got = r.read(off, n, skip_checksum, &mut buf);
        (buf, got)
    })
}

/// The answer of a [`spawn_read`] task.
pub(crate) async fn piece(
    task: tokio::task::JoinHandle<(PieceBuf, std::result::Result<Bytes, LocalReadError>)>,
) -> (PieceBuf, std::result::Result<Bytes, LocalReadError>) {
    match task.await {
        Ok(answer) => answer,
        Err(e) => (
            PieceBuf::default(),
            Err(LocalReadError::Unusable(format!(
                "blocking task failed: {e}"
            ))),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys() {
        let mut c = Configuration::new();
        let d = ShortCircuitConf::from_conf(&c).expect("defaults");
        assert!(!d.enabled);
        assert_eq!(
            (d.cache_size, d.cache_expiry),
            (256, Duration::from_secs(300))
        );
        c.set(keys::DFS_CLIENT_READ_SHORTCIRCUIT_KEY, "true");
        assert!(!ShortCircuitConf::from_conf(&c).expect("no path").enabled);
        c.set(keys::DFS_DOMAIN_SOCKET_PATH_KEY, "/run/dn._PORT");
        c.set(keys::DFS_CLIENT_READ_SHORTCIRCUIT_SKIP_CHECKSUM_KEY, "true");
        let s = ShortCircuitConf::from_conf(&c).expect("on");
        assert!(s.enabled && s.skip_checksum);
        assert_eq!(s.socket_path, "/run/dn._PORT");
        assert_eq!(s.buffer_size, 1024 * 1024);
        c.set(BUFFER_SIZE_KEY, "65536");
        assert_eq!(
            ShortCircuitConf::from_conf(&c).expect("on").buffer_size,
            65536
        );
    }
}
