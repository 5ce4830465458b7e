//! The DataNode's UNIX domain socket for short-circuit local reads, as Hadoop's
//! DomainPeerServer: listening at `dfs.domain.socket.path` (`_PORT` replaced by the transfer
//! port) when `dfs.client.read.shortcircuit` is true and the path is set. A stale socket file
//! at the path is replaced; the file is removed at shutdown. A path in a directory other users
//! could write to stops the DataNode from starting (`domain_path`), as in Hadoop.
//!
//! Ops served on it: REQUEST_SHORT_CIRCUIT_FDS (`short_circuit_fds`), REQUEST_SHORT_CIRCUIT_SHM
//! and RELEASE_SHORT_CIRCUIT_FDS (`short_circuit_shm`: shared-memory segments whose slots tell
//! clients when a replica they hold descriptors of was invalidated; with
//! `dfs.datanode.shared.file.descriptor.paths` empty, REQUEST_SHORT_CIRCUIT_SHM is answered
//! ERROR_UNSUPPORTED, which Hadoop's client takes as "read without slots"). Data traffic over
//! the domain socket (Hadoop's
//! `dfs.client.domain.socket.data.traffic`) is not served: other ops get ERROR_UNSUPPORTED
//! and the connection closes.

use std::path::PathBuf;
use std::sync::Arc;

use rhdfs_conf::{Configuration, keys};
use rhdfs_proto::hdfs::{
    BlockOpResponseProto, OpRequestShortCircuitAccessProto, ReleaseShortCircuitAccessRequestProto,
    ShortCircuitShmRequestProto, Status,
};
use rhdfs_transfer::op::{DEFAULT_MAX_MESSAGE_LEN, read_delimited};
use rhdfs_transfer::short_circuit::effective_path;
use rhdfs_transfer::{Op, read_op, write_delimited};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::watch;

use super::{
    Next, XceiverContext, XceiverError, domain_path, short_circuit_fds, short_circuit_shm, timed,
};

/// The domain socket path this DataNode listens on: `None` when short-circuit reads are off or
/// `dfs.domain.socket.path` is empty (then, as Hadoop, a warning when they were asked for).
pub fn socket_path(conf: &Configuration, xfer_port: u16) -> Result<Option<PathBuf>, String> {
    let on = conf
        .get_bool(
            keys::DFS_CLIENT_READ_SHORTCIRCUIT_KEY,
            keys::DFS_CLIENT_READ_SHORTCIRCUIT_DEFAULT,
        )
        .map_err(|e| e.to_string())?;
    if !on {
        return Ok(None);
    }
    let template = conf
        .get_trimmed(keys::DFS_DOMAIN_SOCKET_PATH_KEY)
        .unwrap_or(keys::DFS_DOMAIN_SOCKET_PATH_DEFAULT);
    if template.is_empty() {
        tracing::warn!(
            "Although short-circuit local reads are configured, they are disabled because you didn't configure {}",
            keys::DFS_DOMAIN_SOCKET_PATH_KEY
        );
        return Ok(None);
    }
    Ok(Some(PathBuf::from(effective_path(template, xfer_port))))
}

/// A running domain socket server.
#[derive(Debug)]
pub struct DomainServer {
    path: PathBuf,
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl DomainServer {
    /// Binds `path` (replacing a stale socket file) and starts accepting connections. A path
    /// whose directories other users could write to is refused (`domain_path`).
    pub async fn bind(path: PathBuf, ctx: XceiverContext) -> std::io::Result<Self> {
        let p = path.clone();
        tokio::task::spawn_blocking(move || {
            domain_path::check(&p, domain_path::effective_uid())
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::PermissionDenied, e))
        })
        .await
        .map_err(std::io::Error::other)??;
        match std::fs::symlink_metadata(&path) {
            Ok(m) if std::os::unix::fs::FileTypeExt::is_socket(&m.file_type()) => {
                std::fs::remove_file(&path)?;
            }
            _ => {}
        }
        let listener = UnixListener::bind(&path)?;
        let (stop, stop_rx) = watch::channel(false);
        let task = tokio::spawn(tracing::Instrument::in_current_span(accept_loop(
            listener,
            Arc::new(ctx),
            stop_rx,
        )));
        tracing::info!(path = %path.display(), "Listening on UNIX domain socket");
        Ok(DomainServer { path, stop, task })
    }

    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Stops accepting, closes every connection and removes the socket file.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
        let _ = std::fs::remove_file(&self.path);
    }
}

async fn accept_loop(
    listener: UnixListener,
    ctx: Arc<XceiverContext>,
    stop: watch::Receiver<bool>,
) {
    let on_conn = |(sock, peer): (UnixStream, tokio::net::unix::SocketAddr)| {
        let serving = ctx.admit(&peer)?;
        let ctx = ctx.clone();
        Some(async move {
            serve(ctx, sock).await;
            drop(serving);
        })
    };
    super::accept::accept_until_stopped("domain socket", || listener.accept(), stop, on_conn).await;
}

/// The op loop of one local client (unbuffered: descriptors ride on single bytes).
async fn serve(ctx: Arc<XceiverContext>, mut sock: UnixStream) {
    let mut first = true;
    loop {
        let wait = if first {
            ctx.config.socket_timeout
        } else {
            ctx.config.keepalive
        };
        first = false;
        let op = match tokio::time::timeout(wait, read_op(&mut sock)).await {
            Ok(Ok(Some(op))) => op,
            Ok(Err(e)) if !e.is_eof() => {
                tracing::warn!(error = %e, "bad op on the domain socket; closing it");
                break;
            }
            _ => break,
        };
        match dispatch(&ctx, &mut sock, op).await {
            Ok(Next::Continue) => {}
            Ok(Next::Close) => break,
            Err(e) => {
                tracing::debug!(?op, error = %e, "domain socket op failed; closing it");
                break;
            }
        }
    }
}

async fn dispatch(
    ctx: &Arc<XceiverContext>,
    sock: &mut UnixStream,
    op: Op,
) -> Result<Next, XceiverError> {
    let (max, t) = (DEFAULT_MAX_MESSAGE_LEN, ctx.config.socket_timeout);
    match op {
        Op::RequestShortCircuitFds => {
            let req: OpRequestShortCircuitAccessProto = timed(t, read_delimited(sock, max)).await?;
            short_circuit_fds::request_short_circuit_fds(ctx, sock, req).await
        }
        Op::RequestShortCircuitShm => {
            let req: ShortCircuitShmRequestProto = timed(t, read_delimited(sock, max)).await?;
            short_circuit_shm::request_shm(ctx, sock, req).await
        }
        Op::ReleaseShortCircuitFds => {
            let req: ReleaseShortCircuitAccessRequestProto =
                timed(t, read_delimited(sock, max)).await?;
            short_circuit_shm::release(ctx, sock, req).await
        }
        other => {
            let resp = BlockOpResponseProto {
                status: Status::ErrorUnsupported as i32,
                message: Some(format!(
                    "op {other:?} is not served on the domain socket; use the TCP port"
                )),
                ..Default::default()
            };
            write_delimited(sock, &resp).await?;
            Ok(Next::Close)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use rhdfs_transfer::short_circuit::{FdsAnswer, request_fds};
    use rhdfs_transfer::write_op;

    use super::super::tests::{BP, block, data};
    use super::*;
    use crate::checksum::{ChecksumSpec, ChecksumType};
    use crate::dataset::Dataset;
    use crate::faults::FaultHooks;

    const LEN: usize = 70_000;

    #[test]
    fn path_from_keys() {
        let mut c = Configuration::new();
        assert_eq!(socket_path(&c, 9866), Ok(None));
        c.set(keys::DFS_CLIENT_READ_SHORTCIRCUIT_KEY, "true");
        assert_eq!(socket_path(&c, 9866), Ok(None), "no path: off, as Hadoop");
        c.set(keys::DFS_DOMAIN_SOCKET_PATH_KEY, "/run/dn._PORT");
        assert_eq!(
            socket_path(&c, 9866),
            Ok(Some(PathBuf::from("/run/dn.9866")))
        );
    }

    #[tokio::test]
    async fn passes_descriptors_of_finalized_replicas_only() {
        let dir = tempfile::tempdir().unwrap();
        let ds = Dataset::open(&[dir.path().join("data")], 0).unwrap();
        let spec = ChecksumSpec::new(ChecksumType::Crc32c, 512);
        let d = data(LEN);
        let mut w = ds.create_rbw(BP, 1, 1001, spec, 0).unwrap();
        w.write_at(0, &d).unwrap();
        w.finalize().unwrap();
        let mut rbw = ds.create_rbw(BP, 2, 1001, spec, 0).unwrap();
        rbw.write_at(0, &d).unwrap();
        let path = dir.path().join("dn.sock");
        std::fs::write(&path, b"").unwrap();
        let server = DomainServer::bind(path.clone(), ctx_again(&ds)).await;
        assert!(server.is_err(), "a plain file at the path is not replaced");
        std::fs::remove_file(&path).unwrap();
        let server = DomainServer::bind(path.clone(), ctx_again(&ds))
            .await
            .unwrap();

        let mut s = UnixStream::connect(&path).await.unwrap();
        // Finalized: both files, and several requests on one connection.
        for _ in 0..2 {
            match request_fds(&mut s, &block(1, 1001, LEN as u64), None, None)
                .await
                .unwrap()
            {
                FdsAnswer::Granted { mut block, meta } => {
                    let mut got = Vec::new();
                    block.read_to_end(&mut got).unwrap();
                    assert_eq!(got, d);
                    assert!(meta.metadata().unwrap().len() > 7);
                }
                other => panic!("expected descriptors, got {other:?}"),
            }
        }
        // Being written: refused for this block (with the version).
        match request_fds(&mut s, &block(2, 1001, LEN as u64), None, None)
            .await
            .unwrap()
        {
            FdsAnswer::Refused {
                status,
                has_version,
                ..
            } => {
                assert_eq!(status, Status::ErrorUnsupported as i32);
                assert!(has_version);
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
        // Unknown: ERROR naming the replica.
        match request_fds(&mut s, &block(3, 1001, 1), None, None)
            .await
            .unwrap()
        {
            FdsAnswer::Refused {
                status,
                message,
                has_version,
            } => {
                assert_eq!(status, Status::Error as i32);
                assert!(message.starts_with("Replica not found for"), "{message}");
                assert!(!has_version);
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
        // A client that reads no block format version 1.
        let req = OpRequestShortCircuitAccessProto {
            header: rhdfs_transfer::headers::base_header(&block(1, 1001, 1), None),
            max_version: 0,
            slot_id: None,
            supports_receipt_verification: None,
        };
        write_op(&mut s, Op::RequestShortCircuitFds, &req)
            .await
            .unwrap();
        let r: BlockOpResponseProto = read_delimited(&mut s, 1 << 20).await.unwrap();
        assert_eq!(r.status, Status::ErrorUnsupported as i32);
        assert!(
            r.message
                .unwrap_or_default()
                .starts_with("Your client is too old")
        );
        // No shared memory segments (dfs.datanode.shared.file.descriptor.paths empty).
        let shm = ShortCircuitShmRequestProto {
            client_name: "DFSClient_t".into(),
            trace_info: None,
        };
        write_op(&mut s, Op::RequestShortCircuitShm, &shm)
            .await
            .unwrap();
        let r: rhdfs_proto::hdfs::ShortCircuitShmResponseProto =
            read_delimited(&mut s, 1 << 20).await.unwrap();
        assert_eq!(r.status, Status::ErrorUnsupported as i32);
        drop(rbw);
        server.shutdown().await;
        assert!(!path.exists(), "the socket file is removed");
    }

    /// A segment's slots: registered with REQUEST_SHORT_CIRCUIT_FDS, invalidated when the
    /// replica is deleted, released with RELEASE_SHORT_CIRCUIT_FDS, and all freed when the
    /// segment's connection closes.
    #[tokio::test]
    async fn shared_memory_slots() {
        use rhdfs_transfer::shm::{SEGMENT_SIZE, Segment, VALID};
        use rhdfs_transfer::short_circuit::{ShmAnswer, release_slot, request_shm, slot_proto};

        let dir = tempfile::tempdir().unwrap();
        let ds = Dataset::open(&[dir.path().join("data")], 0).unwrap();
        let spec = ChecksumSpec::new(ChecksumType::Crc32c, 512);
        for id in [1, 2] {
            let mut w = ds.create_rbw(BP, id, 1001, spec, 0).unwrap();
            w.write_at(0, &data(LEN)).unwrap();
            w.finalize().unwrap();
        }
        let shm_dir = dir.path().join("shm");
        std::fs::create_dir(&shm_dir).unwrap();
        let path = dir.path().join("dn.sock");
        let server = DomainServer::bind(path.clone(), ctx_with_shm(&ds, vec![shm_dir.clone()]))
            .await
            .unwrap();
        let registry = ds.short_circuit_registry().clone();

        let mut shm_conn = UnixStream::connect(&path).await.unwrap();
        let (id, fd) = match request_shm(&mut shm_conn, "DFSClient_test").await.unwrap() {
            ShmAnswer::Granted { id, fd } => (id, fd),
            other => panic!("expected a segment, got {other:?}"),
        };
        assert_eq!(std::fs::read_dir(&shm_dir).unwrap().count(), 0, "unlinked");
        let seg = Segment::map(fd, SEGMENT_SIZE).unwrap();
        assert_eq!(registry.counts(), (1, 0));

        let mut s = UnixStream::connect(&path).await.unwrap();
        // A slot the client did not mark valid is refused.
        match request_fds(
            &mut s,
            &block(1, 1001, LEN as u64),
            None,
            Some(slot_proto(id, 0)),
        )
        .await
        .unwrap()
        {
            FdsAnswer::Refused {
                status, message, ..
            } => {
                assert_eq!(status, Status::Error as i32);
                assert!(message.contains("not marked as valid"), "{message}");
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
        seg.set(0, VALID);
        seg.set(1, VALID);
        for (idx, blk) in [(0, 1), (1, 2)] {
            let a = request_fds(
                &mut s,
                &block(blk, 1001, LEN as u64),
                None,
                Some(slot_proto(id, idx)),
            )
            .await
            .unwrap();
            assert!(matches!(a, FdsAnswer::Granted { .. }), "{a:?}");
        }
        assert_eq!(registry.counts(), (1, 2));
        // Deleting replica 1 invalidates its slot only.
        let gone = ds.remove_for_delete(BP, 1, u64::MAX).unwrap();
        assert!(!seg.is_valid(0));
        assert!(seg.is_valid(1));
        // A slot for a replica that is gone is not registered.
        seg.set(2, VALID);
        let a = request_fds(
            &mut s,
            &block(1, 1001, LEN as u64),
            None,
            Some(slot_proto(id, 2)),
        )
        .await
        .unwrap();
        assert!(matches!(a, FdsAnswer::Refused { .. }), "{a:?}");
        assert_eq!(registry.counts(), (1, 2));
        // Release frees the slot; a second release is an error.
        assert_eq!(
            release_slot(&mut s, slot_proto(id, 0)).await.unwrap(),
            Ok(())
        );
        assert!(
            release_slot(&mut s, slot_proto(id, 0))
                .await
                .unwrap()
                .is_err()
        );
        assert_eq!(registry.counts(), (1, 1));
        // Closing the segment's connection frees its slots.
        drop(shm_conn);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while registry.counts() != (0, 0) {
            assert!(
                std::time::Instant::now() < deadline,
                "{:?}",
                registry.counts()
            );
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        assert!(
            release_slot(&mut s, slot_proto(id, 1))
                .await
                .unwrap()
                .is_err()
        );
        drop(gone);
        server.shutdown().await;
    }

    #[tokio::test]
    async fn domain_connections_count_against_the_transfer_limit() {
        use std::sync::atomic::Ordering;
        use tokio::io::AsyncReadExt;
        let dir = tempfile::tempdir().unwrap();
        let ds = Dataset::open(&[dir.path().join("data")], 0).unwrap();
        let mut ctx = ctx_again(&ds);
        ctx.config.max_xceivers = 1;
        let active = ctx.active.clone();
        let serving = |n: usize| {
            let active = active.clone();
            async move {
                let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
                while active.load(Ordering::Relaxed) != n {
                    assert!(std::time::Instant::now() < deadline, "never {n} served");
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                }
            }
        };
        let path = dir.path().join("dn.sock");
        let server = DomainServer::bind(path.clone(), ctx).await.unwrap();
        let first = UnixStream::connect(&path).await.unwrap();
        serving(1).await;
        // The limit is reached: the next local client is closed unanswered.
        let mut second = UnixStream::connect(&path).await.unwrap();
        let mut buf = [0u8; 1];
        let read = second.read(&mut buf).await;
        assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
        assert_eq!(
            active.load(Ordering::Relaxed),
            1,
            "a refused one is not counted"
        );
        drop(first);
        serving(0).await;
        let _third = UnixStream::connect(&path).await.unwrap();
        serving(1).await;
        server.shutdown().await;
        // Connections closed at shutdown are no longer counted.
        serving(0).await;
    }

    fn ctx_again(ds: &Arc<Dataset>) -> XceiverContext {
        ctx_with_shm(ds, Vec::new())
    }

    fn ctx_with_shm(ds: &Arc<Dataset>, shm_paths: Vec<PathBuf>) -> XceiverContext {
        XceiverContext {
            dataset: ds.clone(),
            notifier: Arc::new(crate::notify::NoopNotifier),
            faults: Arc::new(FaultHooks::default()),
            config: super::super::XceiverConfig {
                shm_paths,
                ..Default::default()
            },
            active: Default::default(),
            activity: Default::default(),
        }
    }
}
