//! Client side of WRITE_BLOCK as the pipeline head: send the op, read the connect ack, stream
//! packets with a bounded window of unacknowledged packets, check acks in strict seqno order
//! in a background task, send heartbeats while idle, hflush/hsync, close with the empty last
//! packet.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex as StdMutex};
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, ReadHalf, WriteHalf};
use tokio::net::TcpStream;
use tokio::sync::{Mutex, Semaphore, watch};
use tokio::task::JoinHandle;
use tracing::debug;

use crate::ack::{check_response, read_response};
use crate::checksum::DataChecksum;
use crate::config::{TransferConfig, with_timeout};
use crate::error::{Result, TransferError};
use crate::headers::xfer_addr;
use crate::op::{Op, encode_op};
use crate::packet::Packet;
use crate::write_params::WriteBlockParams;
use crate::writer_tasks::{Pending, Progress, Shared, Sink, ack_loop, duplicate, heartbeat_loop};

/// Sends the WRITE_BLOCK op and, for client writes, reads and checks the connect ack. A
/// failed connect ack is [`TransferError::Remote`] whose `first_bad_link` names the failed
/// node ("" means the first node itself).
pub(crate) async fn send_write_op<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    params: &WriteBlockParams,
    cfg: &TransferConfig,
    read_connect_ack: bool,
) -> Result<()> {
    if params.pipeline.is_empty() {
        return Err(TransferError::protocol(
            "WRITE_BLOCK needs at least one target",
        ));
    }
    params.checksum.validate()?;
    let req = encode_op(Op::WriteBlock, &params.to_proto());
    with_timeout(cfg.write_timeout, "sending WRITE_BLOCK", async {
        stream.write_all(&req).await?;
        stream.flush().await?;
        Ok(())
    })
    .await?;
    if read_connect_ack {
        let resp = with_timeout(
            cfg.socket_timeout,
            "WRITE_BLOCK connect ack",
            read_response(stream),
        )
        .await?;
        check_response(&resp)?;
    }
    Ok(())
}

/// Writes one block through a pipeline. Created with [`BlockWriter::connect`] or
/// [`BlockWriter::start`]; finish with [`BlockWriter::close`].
pub struct BlockWriter {
    shared: Arc<Shared>,
    sink: Arc<Mutex<Sink>>,
    progress: watch::Receiver<Progress>,
    ack_task: JoinHandle<()>,
    heartbeat_task: JoinHandle<()>,
    cfg: TransferConfig,
    checksum: DataChecksum,
    pipeline_len: usize,
    next_seqno: i64,
    /// Data not yet sent; starts at block offset `buf_offset`.
    buf: BytesMut,
    buf_offset: u64,
    last_sent_seqno: Option<i64>,
    failed: bool,
    closed: bool,
}

impl std::fmt::Debug for BlockWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockWriter")
            .field("pipeline_len", &self.pipeline_len)
            .field("next_seqno", &self.next_seqno)
            .field("offset", &self.buf_offset)
            .field("buffered", &self.buf.len())
            .finish()
    }
}

impl BlockWriter {
    /// Connects to `params.pipeline[0]` (ipAddr:xferPort) and starts the write.
    pub async fn connect(params: &WriteBlockParams, cfg: &TransferConfig) -> Result<Self> {
        let first = params
            .pipeline
            .first()
            .ok_or_else(|| TransferError::protocol("WRITE_BLOCK needs at least one target"))?;
        let addr = xfer_addr(first);
        let stream = with_timeout(cfg.connect_timeout, "connect", async {
            Ok(TcpStream::connect(&addr).await?)
        })
        .await?;
        let _ = stream.set_nodelay(true);
        Self::start(stream, params, cfg).await
    }

    /// Sends WRITE_BLOCK on `stream`, reads the connect ack and starts the ack and heartbeat
    /// tasks. `params.client_name` must be non-empty and the stage not a transfer stage (those
    /// get no acks; use [`crate::transfer_replica`]).
    pub async fn start<S>(
        stream: S,
        params: &WriteBlockParams,
        cfg: &TransferConfig,
    ) -> Result<Self>
    where
        S: AsyncRead + AsyncWrite + Send + 'static,
    {
        if !params.expects_acks() {
            return Err(TransferError::protocol(
                "BlockWriter needs a client name and a non-transfer stage",
            ));
        }
        let mut stream = Box::pin(stream);
        send_write_op(&mut stream, params, cfg, true).await?;
        let (rd, wr): (ReadHalf<_>, WriteHalf<_>) = tokio::io::split(stream);
        let (tx, rx) = watch::channel(Progress {
            acked_seqno: None,
            acked_bytes: params.start_offset,
            failed: false,
        });
        let shared = Arc::new(Shared {
            queue: StdMutex::new(VecDeque::new()),
            error: StdMutex::new(None),
            progress: tx,
            window: Semaphore::new(cfg.max_packets_in_flight.max(1)),
            closing: AtomicBool::new(false),
        });
        let sink = Arc::new(Mutex::new(Sink {
            w: Box::new(wr),
            last_send: Instant::now(),
        }));
        let ack_task = tokio::spawn(ack_loop(
            BufReader::new(rd),
            shared.clone(),
            cfg.socket_timeout,
        ));
        let heartbeat_task =
            tokio::spawn(heartbeat_loop(sink.clone(), shared.clone(), cfg.clone()));
        Ok(BlockWriter {
            shared,
            sink,
            progress: rx,
            ack_task,
            heartbeat_task,
            cfg: cfg.clone(),
            checksum: params.checksum,
            pipeline_len: params.pipeline.len(),
            next_seqno: params.first_seqno,
            buf: BytesMut::new(),
            buf_offset: params.start_offset,
            last_sent_seqno: None,
            failed: false,
            closed: false,
        })
    }

    /// The seqno the next packet will carry (continue with it on the next block).
    pub fn next_seqno(&self) -> i64 {
        self.next_seqno
    }

    /// Block length including data still buffered.
    pub fn bytes_written(&self) -> u64 {
        self.buf_offset + self.buf.len() as u64
    }

    /// Block length acknowledged by the whole pipeline.
    pub fn bytes_acked(&self) -> u64 {
        self.progress.borrow().acked_bytes
    }

    /// Number of nodes in the pipeline.
    pub fn pipeline_len(&self) -> usize {
        self.pipeline_len
    }

    /// Packets sent but not acknowledged, in order (to replay after pipeline recovery).
    pub fn unacked_packets(&self) -> Vec<Packet> {
        match self.shared.queue.lock() {
            Ok(q) => q.iter().map(|p| p.packet.clone()).collect(),
            Err(_) => Vec::new(),
        }
    }

    /// Data accepted by [`BlockWriter::write`] but not yet sent in a packet.
    pub fn buffered(&self) -> Bytes {
        Bytes::copy_from_slice(&self.buf)
    }

    /// Capacity of the packet that starts at `offset`: a single filler chunk after a partial
    /// chunk, otherwise as many whole chunks as fit in the configured packet size.
    fn packet_capacity(&self, offset: u64) -> usize {
        let bpc = u64::from(self.checksum.bytes_per_checksum.max(1));
        let misaligned = offset % bpc;
        if misaligned != 0 {
            (bpc - misaligned) as usize
        } else {
            self.checksum.chunks_per_packet(self.cfg.write_packet_size) * bpc as usize
        }
    }

    fn ensure_open(&self) -> Result<()> {
        if self.closed {
            return Err(TransferError::protocol("block writer is closed"));
        }
        if self.failed || self.progress.borrow().failed {
            return Err(self.shared.error());
        }
        Ok(())
    }

    /// Appends data to the block, sending full packets as they fill.
    pub async fn write(&mut self, mut data: &[u8]) -> Result<()> {
        self.ensure_open()?;
        while !data.is_empty() {
            let cap = self.packet_capacity(self.buf_offset);
            let n = (cap - self.buf.len()).min(data.len());
            self.buf.extend_from_slice(&data[..n]);
            data = &data[n..];
            if self.buf.len() >= cap {
                self.send_buffered(false).await?;
            }
        }
        Ok(())
    }

    /// Sends buffered data (if any) as one packet.
    async fn send_buffered(&mut self, sync: bool) -> Result<()> {
        let data = self.buf.split().freeze();
        let len = data.len() as u64;
        let seqno = self.next_seqno;
        let offset = i64::try_from(self.buf_offset)
            .map_err(|_| TransferError::protocol("block offset too large"))?;
        let packet = Packet::with_data(&self.checksum, offset, seqno, data, false, sync)?;
        self.buf_offset += len;
        self.send_tracked(packet).await
    }

    /// Sends a packet that expects an ack, respecting the in-flight window.
    async fn send_tracked(&mut self, packet: Packet) -> Result<()> {
        let permit = match self.shared.window.acquire().await {
            Ok(p) => p,
            Err(_) => {
                self.failed = true;
                return Err(self.shared.error());
            }
        };
        permit.forget();
        let seqno = packet.header.seqno;
        let end_offset =
            u64::try_from(packet.header.offset_in_block).unwrap_or(0) + packet.data.len() as u64;
        let bytes = packet.to_bytes();
        let last = packet.header.last_packet_in_block;
        if let Ok(mut q) = self.shared.queue.lock() {
            q.push_back(Pending { packet, end_offset });
        }
        self.next_seqno = seqno + 1;
        self.last_sent_seqno = Some(seqno);
        let mut sink = self.sink.lock().await;
        if last {
            self.shared.closing.store(true, Ordering::SeqCst);
        }
        let res = with_timeout(self.cfg.write_timeout, "sending packet", async {
            sink.w.write_all(&bytes).await?;
            sink.w.flush().await?;
            Ok(())
        })
        .await;
        sink.last_send = Instant::now();
        drop(sink);
        if let Err(e) = res {
            self.failed = true;
            self.shared.fail(duplicate(&e));
            return Err(e);
        }
        Ok(())
    }

    /// Waits until every packet sent so far is acknowledged by the whole pipeline.
    async fn wait_all_acked(&mut self) -> Result<()> {
        let Some(target) = self.last_sent_seqno else {
            return Ok(());
        };
        let res = self
            .progress
            .wait_for(|p| p.failed || p.acked_seqno.is_some_and(|s| s >= target))
            .await
            .map(|p| p.failed);
        match res {
            Ok(false) => Ok(()),
            _ => {
                self.failed = true;
                Err(self.shared.error())
            }
        }
    }

    /// Sends buffered data and waits until the pipeline acknowledged everything written.
    pub async fn hflush(&mut self) -> Result<()> {
        self.ensure_open()?;
        if !self.buf.is_empty() {
            self.send_buffered(false).await?;
        }
        self.wait_all_acked().await
    }

    /// Like [`BlockWriter::hflush`] but the packet carries syncBlock so the DataNodes fsync; an
    /// empty sync packet is sent when nothing is buffered.
    pub async fn hsync(&mut self) -> Result<()> {
        self.ensure_open()?;
        self.send_buffered(true).await?;
        self.wait_all_acked().await
    }

    /// Sends buffered data, the empty last packet, and waits for its ack. Returns the block
    /// length.
    pub async fn close(mut self) -> Result<u64> {
        self.ensure_open()?;
        if !self.buf.is_empty() {
            self.send_buffered(false).await?;
        }
        let offset = i64::try_from(self.buf_offset)
            .map_err(|_| TransferError::protocol("block offset too large"))?;
        let last = Packet::empty(offset, self.next_seqno, true);
        self.send_tracked(last).await?;
        self.wait_all_acked().await?;
        self.closed = true;
        self.heartbeat_task.abort();
        debug!(len = self.buf_offset, "block write closed");
        Ok(self.buf_offset)
    }

    /// Stops the background tasks and drops the connection without finishing the block.
    pub fn abort(mut self) {
        self.closed = true;
        self.ack_task.abort();
        self.heartbeat_task.abort();
    }
}

impl Drop for BlockWriter {
    fn drop(&mut self) {
        self.ack_task.abort();
        self.heartbeat_task.abort();
    }
}
