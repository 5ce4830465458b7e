//! One write pipeline connection: WRITE_BLOCK setup with its connect ack, packets out, acks
//! in (read by a small task so the writer never blocks on a half-read ack), and
//! TRANSFER_BLOCK for copying a partial replica to a replacement node.

use std::sync::Arc;
use std::time::Duration;

use rhdfs_proto::common::TokenProto;
use rhdfs_proto::hdfs::{
    CachingStrategyProto, DatanodeInfoProto, ExtendedBlockProto, OpTransferBlockProto,
    OpWriteBlockProto, op_write_block_proto::BlockConstructionStage,
};
use rhdfs_transfer::ack::{check_response, read_ack, read_response};
use rhdfs_transfer::headers::client_header;
use rhdfs_transfer::op::{Op, encode_op};
use rhdfs_transfer::packet::write_frame;
use rhdfs_transfer::{DataChecksum, Packet, PipelineAck, TransferConfig, TransferError};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::net::tcp::OwnedWriteHalf;
use tokio::sync::{Mutex, mpsc};
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// Storage type DISK.
pub(crate) const STORAGE_DISK: i32 = 1;

/// Everything needed to set a pipeline up.
pub(crate) struct Setup<'a> {
    pub block: &'a ExtendedBlockProto,
    pub token: &'a TokenProto,
    pub client_name: &'a str,
    pub nodes: &'a [DatanodeInfoProto],
    pub addrs: &'a [String],
    pub storage_ids: &'a [String],
    pub storage_types: &'a [i32],
    pub stage: BlockConstructionStage,
    pub min_bytes: u64,
    pub max_bytes: u64,
    pub latest_gs: u64,
    pub checksum: DataChecksum,
}

/// A setup or streaming failure, blaming pipeline index `index` (`None`: no node named).
#[derive(Debug)]
pub(crate) struct NodeFailure {
    pub index: Option<usize>,
    pub cause: String,
}

impl NodeFailure {
    pub(crate) fn at(index: Option<usize>, cause: impl Into<String>) -> Self {
        NodeFailure {
            index,
            cause: cause.into(),
        }
    }
}

/// A connected pipeline.
pub(crate) struct Pipeline {
    writer: Arc<Mutex<OwnedWriteHalf>>,
    acks: mpsc::UnboundedReceiver<Result<PipelineAck, TransferError>>,
    task: JoinHandle<()>,
    heartbeat: JoinHandle<()>,
    last_send: Arc<Mutex<Instant>>,
    write_timeout: Duration,
    socket_timeout: Duration,
}

impl Drop for Pipeline {
    fn drop(&mut self) {
        self.task.abort();
        self.heartbeat.abort();
    }
}

/// Sends a heartbeat packet (seqno -1) whenever nothing was sent for `interval`, so the
/// DataNodes' read timeouts do not end an idle pipeline.
fn spawn_heartbeat(
    writer: Arc<Mutex<OwnedWriteHalf>>,
    last_send: Arc<Mutex<Instant>>,
    interval: Duration,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        if interval.is_zero() {
            return;
        }
        let tick = (interval / 4).max(Duration::from_millis(10));
        let hb = Packet::heartbeat().to_bytes();
        loop {
            tokio::time::sleep(tick).await;
            let mut last = last_send.lock().await;
            if last.elapsed() < interval {
                continue;
            }
            let mut w = writer.lock().await;
            if w.write_all(&hb).await.is_err() {
                return;
            }
            *last = Instant::now();
        }
    })
}

fn pick<T: Clone>(v: &[T], i: usize) -> Option<T> {
    v.get(i).cloned()
}

impl Pipeline {
    /// Connects to `nodes[0]`, sends WRITE_BLOCK and waits for the connect ack.
    pub(crate) async fn connect(s: &Setup<'_>, cfg: &TransferConfig) -> Result<Self, NodeFailure> {
        let first = s
            .addrs
            .first()
            .ok_or_else(|| NodeFailure::at(None, "empty pipeline"))?;
        let stream = tokio::time::timeout(cfg.connect_timeout, TcpStream::connect(first))
            .await
            .map_err(|_| NodeFailure::at(Some(0), format!("connect to {first} timed out")))?
            .map_err(|e| NodeFailure::at(Some(0), format!("connect to {first}: {e}")))?;
        let _ = stream.set_nodelay(true);
        let (rd, mut wr) = stream.into_split();
        let n = s.nodes.len();
        let op = OpWriteBlockProto {
            header: client_header(s.block, Some(s.token), s.client_name),
            targets: s.nodes[1..].to_vec(),
            source: None,
            stage: s.stage as i32,
            pipeline_size: n as u32,
            min_bytes_rcvd: s.min_bytes,
            max_bytes_rcvd: s.max_bytes,
            latest_generation_stamp: s.latest_gs,
            requested_checksum: s.checksum.to_proto(),
            caching_strategy: Some(CachingStrategyProto::default()),
            storage_type: Some(pick(s.storage_types, 0).unwrap_or(STORAGE_DISK)),
            target_storage_types: (1..n)
                .map(|i| pick(s.storage_types, i).unwrap_or(STORAGE_DISK))
                .collect(),
            allow_lazy_persist: Some(false),
            pinning: Some(false),
            target_pinnings: vec![false; n.saturating_sub(1)],
            storage_id: pick(s.storage_ids, 0),
            target_storage_ids: (1..n)
                .map(|i| pick(s.storage_ids, i).unwrap_or_default())
                .collect(),
        };
        let bytes = encode_op(Op::WriteBlock, &op);
        let sent = tokio::time::timeout(cfg.write_timeout, async {
            wr.write_all(&bytes).await?;
            wr.flush().await
        })
        .await;
        match sent {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                return Err(NodeFailure::at(
                    Some(0),
                    format!("sending WRITE_BLOCK to {first}: {e}"),
                ));
            }
            Err(_) => {
                return Err(NodeFailure::at(
                    Some(0),
                    format!("sending WRITE_BLOCK to {first} timed out"),
                ));
            }
        }
        let mut rd = BufReader::new(rd);
        let resp = tokio::time::timeout(cfg.socket_timeout, read_response(&mut rd))
            .await
            .map_err(|_| NodeFailure::at(Some(0), format!("no connect ack from {first}")))?
            .map_err(|e| NodeFailure::at(Some(0), format!("connect ack from {first}: {e}")))?;
        if let Err(e) = check_response(&resp) {
            let link = resp.first_bad_link.clone().unwrap_or_default();
            let index = if link.is_empty() {
                0
            } else {
                s.nodes
                    .iter()
                    .position(|d| rhdfs_transfer::headers::xfer_addr(d) == link)
                    .unwrap_or(0)
            };
            return Err(NodeFailure::at(
                Some(index),
                format!("Bad connect ack with firstBadLink as {link}: {e}"),
            ));
        }
        let (tx, acks) = mpsc::unbounded_channel();
        let task = tokio::spawn(async move {
            loop {
                let r = read_ack(&mut rd).await;
                let stop = r.is_err();
                if tx.send(r).is_err() || stop {
                    break;
                }
            }
        });
        let writer = Arc::new(Mutex::new(wr));
        let last_send = Arc::new(Mutex::new(Instant::now()));
        let heartbeat = spawn_heartbeat(
            Arc::clone(&writer),
            Arc::clone(&last_send),
            cfg.heartbeat_interval,
        );
        Ok(Pipeline {
            writer,
            acks,
            task,
            heartbeat,
            last_send,
            write_timeout: cfg.write_timeout,
            socket_timeout: cfg.socket_timeout,
        })
    }

    /// Sends one packet; a failure blames the first node (Java's markFirstNodeIfNotMarked).
    pub(crate) async fn send(&mut self, p: &Packet) -> Result<(), NodeFailure> {
        let mut last = self.last_send.lock().await;
        let mut w = self.writer.lock().await;
        let r = tokio::time::timeout(self.write_timeout, write_frame(&mut *w, p)).await;
        *last = Instant::now();
        match r {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(NodeFailure::at(
                Some(0),
                format!("sending packet {}: {e}", p.header.seqno),
            )),
            Err(_) => Err(NodeFailure::at(
                Some(0),
                format!("sending packet {} timed out", p.header.seqno),
            )),
        }
    }

    /// An ack if one is already there.
    pub(crate) fn try_ack(&mut self) -> Option<Result<PipelineAck, NodeFailure>> {
        match self.acks.try_recv() {
            Ok(r) => Some(r.map_err(ack_failure)),
            Err(mpsc::error::TryRecvError::Empty) => None,
            Err(mpsc::error::TryRecvError::Disconnected) => {
                Some(Err(NodeFailure::at(None, "ack stream closed")))
            }
        }
    }

    /// Waits for the next ack (up to the socket timeout).
    pub(crate) async fn next_ack(&mut self) -> Result<PipelineAck, NodeFailure> {
        match tokio::time::timeout(self.socket_timeout, self.acks.recv()).await {
            Ok(Some(r)) => r.map_err(ack_failure),
            Ok(None) => Err(NodeFailure::at(None, "ack stream closed")),
            Err(_) => Err(NodeFailure::at(
                None,
                format!("no ack within {:?}", self.socket_timeout),
            )),
        }
    }

    /// Closes the connection.
    pub(crate) async fn close(self) {
        self.heartbeat.abort();
        let _ = self.writer.lock().await.shutdown().await;
    }
}

fn ack_failure(e: TransferError) -> NodeFailure {
    NodeFailure::at(None, format!("reading ack: {e}"))
}

/// Asks `source_addr` to copy its replica of `block` to `target` (TRANSFER_BLOCK).
#[allow(clippy::too_many_arguments)]
pub(crate) async fn transfer_block(
    source_addr: &str,
    block: &ExtendedBlockProto,
    token: &TokenProto,
    client_name: &str,
    target: &DatanodeInfoProto,
    target_storage_type: i32,
    target_storage_id: &str,
    cfg: &TransferConfig,
) -> Result<(), TransferError> {
    let mut stream = tokio::time::timeout(cfg.connect_timeout, TcpStream::connect(source_addr))
        .await
        .map_err(|_| TransferError::Timeout(format!("connect to {source_addr}")))??;
    let op = OpTransferBlockProto {
        header: client_header(block, Some(token), client_name),
        targets: vec![target.clone()],
        target_storage_types: vec![target_storage_type],
        target_storage_ids: vec![target_storage_id.to_string()],
    };
    stream.write_all(&encode_op(Op::TransferBlock, &op)).await?;
    stream.flush().await?;
    let resp = tokio::time::timeout(cfg.socket_timeout * 2, read_response(&mut stream))
        .await
        .map_err(|_| {
            TransferError::Timeout(format!("TRANSFER_BLOCK response from {source_addr}"))
        })??;
    check_response(&resp)
}
