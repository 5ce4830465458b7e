//! The data transfer server (dfs.datanode.address): accepts connections and runs the op loop
//! of each (WRITE_BLOCK, READ_BLOCK, BLOCK_CHECKSUM, TRANSFER_BLOCK) on a reused connection.
//! `domain`: the UNIX domain socket for short-circuit local reads (REQUEST_SHORT_CIRCUIT_FDS);
//! `accept`: the accept loop both listeners share.

mod accept;
mod block_sender;
mod domain;
mod domain_path;
mod read_block;
mod send;
mod short_circuit_fds;
mod short_circuit_shm;
mod sock_io;
mod write_block;
mod write_disk;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rhdfs_proto::hdfs::{
    BlockOpResponseProto, DatanodeInfoProto, OpBlockChecksumProto, OpReadBlockProto,
    OpTransferBlockProto, OpWriteBlockProto, Status,
};
use rhdfs_transfer::op::{DEFAULT_MAX_MESSAGE_LEN, read_delimited};
use rhdfs_transfer::{ChecksumKind, DataChecksum, Op, TransferError, read_op, write_delimited};
use tokio::io::BufReader;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::watch;

use crate::checksum::{ChecksumSpec, ChecksumType};
use crate::dataset::Dataset;
use crate::error::StorageError;
use crate::faults::FaultHooks;
use crate::notify::BlockNotifier;

pub(crate) use block_sender::read_packet_size;
pub use domain::{DomainServer, socket_path as domain_socket_path};
pub use send::{SendRequest, send_replica};

/// Timeouts and limits of the transfer server.
#[derive(Debug, Clone)]
pub struct XceiverConfig {
    /// Wait for the next op on a reused connection (dfs.datanode.socket.reuse.keepalive).
    pub keepalive: Duration,
    /// Read timeout for ops, packets and acks (dfs.client.socket-timeout).
    pub socket_timeout: Duration,
    /// Largest packet accepted (PLEN + HLEN).
    pub max_packet_size: usize,
    /// fsync a replica before finalizing it (dfs.datanode.synconclose).
    pub sync_on_close: bool,
    /// Start each 8 MiB of a replica's write-back as soon as it is written
    /// (dfs.datanode.sync.behind.writes).
    pub sync_behind_writes: bool,
    /// Slow peer / slow disk statistics (None: all off).
    pub metrics: Option<Arc<crate::metrics::DataNodeMetrics>>,
    /// Send read data with sendfile (dfs.datanode.transferTo.allowed).
    pub transfer_to: bool,
    /// Data and checksum bytes per READ_BLOCK packet: Hadoop's BlockSender takes
    /// max(io.file.buffer.size, rhdfs.datanode.read.packet.size, 64 KiB)
    /// (`block_sender::read_packet_size`).
    pub read_packet_size: u64,
    /// SO_SNDBUF of the socket to a pipeline's mirror
    /// (dfs.datanode.transfer.socket.send.buffer.size; 0: the OS tunes it).
    pub send_buffer_size: u32,
    /// SO_RCVBUF of accepted data-transfer sockets
    /// (dfs.datanode.transfer.socket.recv.buffer.size; 0: the OS tunes it).
    pub recv_buffer_size: u32,
    /// Where short-circuit shared memory segments are created
    /// (dfs.datanode.shared.file.descriptor.paths; empty: REQUEST_SHORT_CIRCUIT_SHM unsupported).
    pub shm_paths: Vec<std::path::PathBuf>,
    /// Data transfer connections served at once (dfs.datanode.max.transfer.threads); a
    /// connection accepted beyond it is closed, as Hadoop's DataXceiverServer does.
    pub max_xceivers: usize,
}

impl Default for XceiverConfig {
    fn default() -> Self {
        XceiverConfig {
            keepalive: Duration::from_millis(4000),
            socket_timeout: Duration::from_secs(60),
            max_packet_size: rhdfs_transfer::packet::MAX_PACKET_SIZE,
            sync_on_close: false,
            sync_behind_writes: rhdfs_conf::keys::DFS_DATANODE_SYNC_BEHIND_WRITES_DEFAULT,
            metrics: None,
            transfer_to: true,
            read_packet_size: block_sender::READ_PACKET_SIZE,
            send_buffer_size: 0,
            recv_buffer_size: 0,
            shm_paths: crate::short_circuit_registry::shared_paths(
                crate::short_circuit_registry::SHARED_FILE_DESCRIPTOR_PATHS_DEFAULT,
            ),
            max_xceivers: rhdfs_conf::keys::DFS_DATANODE_MAX_TRANSFER_THREADS_DEFAULT as usize,
        }
    }
}

/// Everything a connection handler needs.
#[derive(Debug, Clone)]
pub struct XceiverContext {
    pub dataset: Arc<Dataset>,
    pub notifier: Arc<dyn BlockNotifier>,
    pub faults: Arc<FaultHooks>,
    pub config: XceiverConfig,
    /// Connections being served (reported as xceiverCount in heartbeats).
    pub active: Arc<AtomicUsize>,
    /// Bytes, blocks and op times (the DataNodeActivity bean, `/metrics`).
    pub activity: Arc<crate::metrics::Activity>,
}

/// Errors that end one connection.
#[derive(Debug, thiserror::Error)]
pub enum XceiverError {
    #[error(transparent)]
    Transfer(#[from] TransferError),
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    #[error("timed out: {0}")]
    Timeout(&'static str),
    #[error("{0}")]
    Other(String),
}

impl XceiverError {
    fn is_eof(&self) -> bool {
        match self {
            XceiverError::Transfer(t) => t.is_eof(),
            XceiverError::Io(e) => e.kind() == std::io::ErrorKind::UnexpectedEof,
            _ => false,
        }
    }
}

/// What the op loop does after an op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    Continue,
    Close,
}

/// One client connection, split so acks can be written while packets are read.
pub(crate) struct Conn {
    pub rd: BufReader<OwnedReadHalf>,
    pub wr: OwnedWriteHalf,
    pub peer: SocketAddr,
}

/// A running transfer server.
#[derive(Debug)]
pub struct XceiverServer {
    local_addr: SocketAddr,
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl XceiverServer {
    /// Binds `addr` and starts accepting connections.
    pub async fn bind(addr: SocketAddr, ctx: XceiverContext) -> std::io::Result<Self> {
        let sock = if addr.is_ipv4() {
            TcpSocket::new_v4()?
        } else {
            TcpSocket::new_v6()?
        };
        sock.set_reuseaddr(true)?;
        if ctx.config.recv_buffer_size > 0 {
            // Set before listen so accepted sockets inherit it (and the window scale).
            sock.set_recv_buffer_size(ctx.config.recv_buffer_size)?;
        }
        sock.bind(addr)?;
        let listener = sock.listen(1024)?;
        let local_addr = listener.local_addr()?;
        let (stop, stop_rx) = watch::channel(false);
        let ctx = Arc::new(ctx);
        let task = tokio::spawn(tracing::Instrument::in_current_span(accept_loop(
            listener, ctx, stop_rx,
        )));
        tracing::info!(%local_addr, "data transfer server listening");
        Ok(XceiverServer {
            local_addr,
            stop,
            task,
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Stops accepting and closes every connection.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

async fn accept_loop(listener: TcpListener, ctx: Arc<XceiverContext>, stop: watch::Receiver<bool>) {
    let on_conn = |(sock, peer): (TcpStream, SocketAddr)| {
        if ctx.faults.reject_transfers() {
            tracing::info!(%peer, "fault hook: transfer connection rejected");
            return None;
        }
        let serving = ctx.admit(&peer)?;
        let _ = sock.set_nodelay(true);
        let ctx = ctx.clone();
        Some(async move {
            serve_ops(&ctx, sock, peer).await;
            drop(serving);
        })
    };
    accept::accept_until_stopped("data transfer", || listener.accept(), stop, on_conn).await;
}

/// One connection counted in [`XceiverContext::active`] until dropped (also when its task is
/// aborted at shutdown).
pub(crate) struct Serving(Arc<AtomicUsize>);

impl Drop for Serving {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl XceiverContext {
    /// Counts a new connection (TCP or domain socket: Hadoop's xceiver count holds both) unless
    /// `dfs.datanode.max.transfer.threads` are served already; then it is refused with
    /// Hadoop's warning and the caller closes it unanswered, as DataXceiverServer does. The
    /// count is taken and checked in one step, so a burst of accepts cannot overshoot it.
    pub(crate) fn admit(&self, peer: &dyn std::fmt::Debug) -> Option<Serving> {
        let serving = self.active.fetch_add(1, Ordering::Relaxed);
        let admitted = Serving(self.active.clone());
        if serving >= self.config.max_xceivers {
            drop(admitted);
            tracing::warn!(
                ?peer,
                "Xceiver count {serving} exceeds the limit of concurrent xceivers: {}",
                self.config.max_xceivers
            );
            return None;
        }
        Some(admitted)
    }
}

async fn serve_ops(ctx: &Arc<XceiverContext>, sock: TcpStream, peer: SocketAddr) {
    let (rd, wr) = sock.into_split();
    let mut conn = Conn {
        rd: BufReader::with_capacity(128 * 1024, rd),
        wr,
        peer,
    };
    let mut first = true;
    loop {
        let wait = if first {
            ctx.config.socket_timeout
        } else {
            ctx.config.keepalive
        };
        first = false;
        let op = match tokio::time::timeout(wait, read_op(&mut conn.rd)).await {
            Err(_) => break,
            Ok(Ok(None)) => break,
            Ok(Ok(Some(op))) => op,
            Ok(Err(e)) => {
                if !e.is_eof() {
                    tracing::warn!(%peer, error = %e, "bad data transfer op; closing connection");
                }
                break;
            }
        };
        match handle_op(ctx, &mut conn, op).await {
            Ok(Next::Continue) => {}
            Ok(Next::Close) => break,
            Err(e) => {
                if e.is_eof() {
                    tracing::debug!(%peer, ?op, error = %e, "peer closed during op");
                } else {
                    tracing::warn!(%peer, ?op, error = %e, "data transfer op failed; closing connection");
                }
                break;
            }
        }
    }
}

async fn handle_op(
    ctx: &Arc<XceiverContext>,
    conn: &mut Conn,
    op: Op,
) -> Result<Next, XceiverError> {
    let started = std::time::Instant::now();
    let res = dispatch_op(ctx, conn, op).await;
    let a = &ctx.activity;
    let h = match op {
        Op::WriteBlock => Some(&a.write_block_op),
        Op::ReadBlock => Some(&a.read_block_op),
        Op::BlockChecksum => Some(&a.block_checksum_op),
        Op::TransferBlock => Some(&a.transfer_block_op),
        _ => None,
    };
    if let Some(h) = h {
        h.observe(started.elapsed());
    }
    if res.as_ref().is_err_and(|e| !e.is_eof()) {
        crate::metrics::Activity::add(&a.network_errors, 1);
    }
    res
}

async fn dispatch_op(
    ctx: &Arc<XceiverContext>,
    conn: &mut Conn,
    op: Op,
) -> Result<Next, XceiverError> {
    let max = DEFAULT_MAX_MESSAGE_LEN;
    let t = ctx.config.socket_timeout;
    match op {
        Op::WriteBlock => {
            let req: OpWriteBlockProto = timed(t, read_delimited(&mut conn.rd, max)).await?;
            write_block::write_block(ctx, conn, req).await
        }
        Op::ReadBlock => {
            let req: OpReadBlockProto = timed(t, read_delimited(&mut conn.rd, max)).await?;
            read_block::read_block(ctx, conn, req).await
        }
        Op::BlockChecksum => {
            let req: OpBlockChecksumProto = timed(t, read_delimited(&mut conn.rd, max)).await?;
            read_block::block_checksum(ctx, conn, req).await
        }
        Op::TransferBlock => {
            let req: OpTransferBlockProto = timed(t, read_delimited(&mut conn.rd, max)).await?;
            send::transfer_block(ctx, conn, req).await
        }
        other => {
            tracing::warn!(peer = %conn.peer, op = ?other, "unsupported data transfer op");
            let resp = BlockOpResponseProto {
                status: Status::ErrorUnsupported as i32,
                message: Some(format!("op {other:?} is not supported")),
                ..Default::default()
            };
            write_delimited(&mut conn.wr, &resp).await?;
            Ok(Next::Close)
        }
    }
}

pub(crate) async fn timed<T, E: Into<XceiverError>>(
    d: Duration,
    f: impl Future<Output = Result<T, E>>,
) -> Result<T, XceiverError> {
    match tokio::time::timeout(d, f).await {
        Ok(r) => r.map_err(Into::into),
        Err(_) => Err(XceiverError::Timeout("waiting for the peer")),
    }
}

pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, XceiverError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| XceiverError::Other(format!("blocking task failed: {e}")))
}

pub(crate) async fn respond(
    conn: &mut Conn,
    status: Status,
    message: Option<String>,
) -> Result<(), XceiverError> {
    let resp = BlockOpResponseProto {
        status: status as i32,
        message,
        ..Default::default()
    };
    write_delimited(&mut conn.wr, &resp).await?;
    Ok(())
}

/// "ip:xferPort" of a target.
pub(crate) fn xfer_addr(dn: &DatanodeInfoProto) -> String {
    format!("{}:{}", dn.id.ip_addr, dn.id.xfer_port)
}

pub(crate) fn spec_to_wire(spec: ChecksumSpec) -> DataChecksum {
    let kind = match spec.kind {
        ChecksumType::Null => ChecksumKind::Null,
        ChecksumType::Crc32 => ChecksumKind::Crc32,
        ChecksumType::Crc32c => ChecksumKind::Crc32c,
    };
    DataChecksum::new(kind, spec.bytes_per_checksum)
}

pub(crate) fn spec_from_proto(
    p: Option<&rhdfs_proto::hdfs::ChecksumProto>,
) -> Result<ChecksumSpec, XceiverError> {
    let Some(p) = p else {
        return Ok(ChecksumSpec::default());
    };
    let kind = ChecksumType::from_code(p.r#type)
        .ok_or_else(|| XceiverError::Other(format!("unknown checksum type {}", p.r#type)))?;
    if p.bytes_per_checksum == 0 {
        return Err(XceiverError::Other("bytesPerChecksum is 0".into()));
    }
    Ok(ChecksumSpec::new(kind, p.bytes_per_checksum))
}

pub(crate) fn spec_to_proto(spec: ChecksumSpec) -> rhdfs_proto::hdfs::ChecksumProto {
    rhdfs_proto::hdfs::ChecksumProto {
        r#type: i32::from(spec.kind.code()),
        bytes_per_checksum: spec.bytes_per_checksum,
    }
}

#[cfg(test)]
pub(crate) mod tests;

#[cfg(test)]
mod ack_tests;
#[cfg(test)]
mod read_tests;
#[cfg(test)]
mod write_tests;
