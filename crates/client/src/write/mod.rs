//! `FileWriter`: the output stream of `create` and `append`.
//!
//! Data is cut into packets of whole checksum chunks (`dfs.client-write-packet-size`), sent
//! down the pipeline of the current block, and kept in a queue until acknowledged (at most
//! `dfs.client.write.max-packets-in-flight`). A failing node starts pipeline recovery
//! (`recovery.rs`); a full block is closed with an empty last packet and the next one is
//! allocated with addBlock.

mod lease_recovery;
mod packet_buf;
mod packetizer;
mod pipeline;
mod recovery;
mod slow_acks;

use std::collections::VecDeque;

use bytes::Bytes;
use rhdfs_proto::common::TokenProto;
use rhdfs_proto::hdfs::{
    AbandonBlockRequestProto, AbandonBlockResponseProto, AddBlockRequestProto,
    AddBlockResponseProto, AppendRequestProto, AppendResponseProto, CompleteRequestProto,
    CompleteResponseProto, CreateRequestProto, CreateResponseProto, DatanodeInfoProto,
    ExtendedBlockProto, FsPermissionProto, FsyncRequestProto, FsyncResponseProto,
    LocatedBlockProto, op_write_block_proto::BlockConstructionStage,
};
use rhdfs_transfer::packet::HEARTBEAT_SEQNO;
use rhdfs_transfer::{DataChecksum, Packet, PipelineAck};
use tracing::{debug, warn};

use crate::datanode::{block_name, same_node, xfer_addr};
use crate::error::{ClientError, Result};
use crate::filesystem::{
    CREATE_FLAG_APPEND, CREATE_FLAG_CREATE, CREATE_FLAG_OVERWRITE, CreateOptions, FileSystem,
    WHOLE_FILE,
};
use crate::lease::LeaseGuard;
use packet_buf::PacketBuf;
use packetizer::packet_capacity;
use pipeline::{NodeFailure, Pipeline, Setup};
use slow_acks::SlowAcks;

/// The block currently being written and its pipeline.
struct BlockState {
    /// Current generation stamp; `num_bytes` = bytes acknowledged by every node.
    block: ExtendedBlockProto,
    token: TokenProto,
    nodes: Vec<DatanodeInfoProto>,
    storage_ids: Vec<String>,
    storage_types: Vec<i32>,
    /// `None` after a failure until recovery reconnects.
    pipe: Option<Pipeline>,
    /// Sent, not yet acknowledged, in seqno order.
    unacked: VecDeque<Packet>,
    /// Block offset after the last packet handed to the pipeline.
    bytes_sent: u64,
    bytes_acked: u64,
    /// Nodes dropped from this block's pipeline.
    failed: Vec<DatanodeInfoProto>,
    /// The last (empty) packet has been sent.
    closing: bool,
    /// The pipeline was set up for an append and has not streamed yet.
    append_setup: bool,
    recoveries: u32,
    original: Vec<DatanodeInfoProto>,
}

/// An open file being written. Call [`FileWriter::close`]; dropping it leaves the file open
/// until its lease expires on the NameNode, unless a write failed on its DataNodes (then the
/// file goes to lease recovery, `lease_recovery`).
pub struct FileWriter {
    fs: FileSystem,
    src: String,
    file_id: u64,
    block_size: u64,
    replication: u16,
    checksum: DataChecksum,
    chunks_per_packet: usize,
    max_in_flight: usize,
    buf: PacketBuf,
    cur: Option<BlockState>,
    prev: Option<ExtendedBlockProto>,
    seqno: i64,
    excluded: Vec<DatanodeInfoProto>,
    /// Consecutive SLOW acks per pipeline node.
    slow_acks: SlowAcks,
    flushed: bool,
    appended: bool,
    fsynced_block: bool,
    written: u64,
    closed: bool,
    error: Option<String>,
    /// The failure was the DataNodes' (`lease_recovery`).
    failed_on_datanodes: bool,
    /// recoverLease was asked for after the failure.
    lease_recovery_asked: bool,
    _lease: Option<LeaseGuard>,
}

impl std::fmt::Debug for FileWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileWriter")
            .field("src", &self.src)
            .field("written", &self.written)
            .finish()
    }
}

impl FileSystem {
    /// Creates (or with `overwrite`, replaces) a file and opens it for writing.
    pub async fn create(&self, p: &str, opts: CreateOptions) -> Result<FileWriter> {
        let src = self.resolve(p)?;
        let cc = &self.inner.conf;
        let replication = opts.replication.unwrap_or(cc.replication);
        let block_size = opts.block_size.unwrap_or(cc.block_size);
        let unmasked = opts.permission.unwrap_or(0o666);
        let mut flag = CREATE_FLAG_CREATE;
        if opts.overwrite {
            flag |= CREATE_FLAG_OVERWRITE;
        }
        let resp: CreateResponseProto = self
            .call(
                "create",
                &CreateRequestProto {
                    src: src.clone(),
                    masked: FsPermissionProto {
                        perm: u32::from(unmasked & !cc.umask),
                    },
                    client_name: self.client_name().to_string(),
                    create_flag: flag,
                    create_parent: opts.create_parent,
                    replication: u32::from(replication),
                    block_size,
                    crypto_protocol_version: vec![2],
                    unmasked: Some(FsPermissionProto {
                        perm: u32::from(unmasked),
                    }),
                    ec_policy_name: None,
                    storage_policy: None,
                },
            )
            .await?;
        let st = resp.fs.ok_or_else(|| {
            ClientError::Failed(format!("create of {src} returned no file status"))
        })?;
        let block_size = st.blocksize.filter(|b| *b > 0).unwrap_or(block_size);
        let replication = st
            .block_replication
            .filter(|r| *r > 0)
            .map(|r| r as u16)
            .unwrap_or(replication);
        Ok(FileWriter::new(
            self.clone(),
            src,
            st.file_id.unwrap_or(0),
            block_size,
            replication,
            0,
        ))
    }

    /// Opens an existing file for appending.
    pub async fn append(&self, p: &str) -> Result<FileWriter> {
        let src = self.resolve(p)?;
        let resp: AppendResponseProto = self
            .call(
                "append",
                &AppendRequestProto {
                    src: src.clone(),
                    client_name: self.client_name().to_string(),
                    flag: Some(CREATE_FLAG_APPEND),
                },
            )
            .await?;
        let st = match resp.stat {
            Some(s) => crate::types::FileStatus::from_proto(&s, &src),
            None => self.status(&src).await?,
        };
        let block_size = if st.block_size > 0 {
            st.block_size
        } else {
            self.inner.conf.block_size
        };
        let replication = if st.replication > 0 {
            st.replication
        } else {
            self.inner.conf.replication
        };
        let mut w = FileWriter::new(
            self.clone(),
            src.clone(),
            st.file_id,
            block_size,
            replication,
            st.length,
        );
        w.appended = true;
        match resp.block {
            Some(lb)
                if lb.b.num_bytes.unwrap_or(0) > 0 && lb.b.num_bytes.unwrap_or(0) < block_size =>
            {
                w.start_append(lb).await?;
            }
            Some(lb) => {
                // A full (or empty) last block: new data goes to a new block.
                let mut b = lb.b;
                if b.num_bytes.is_none() {
                    b.num_bytes = Some(0);
                }
                w.prev = Some(b);
            }
            None => {
                // Last block complete and full: the next block follows it.
                let lbs = self.located_blocks(&src, 0, WHOLE_FILE).await?;
                w.prev = lbs
                    .last_block
                    .map(|lb| lb.b)
                    .or_else(|| lbs.blocks.last().map(|lb| lb.b.clone()));
            }
        }
        Ok(w)
    }
}

impl FileWriter {
    fn new(
        fs: FileSystem,
        src: String,
        file_id: u64,
        block_size: u64,
        replication: u16,
        start_len: u64,
    ) -> Self {
        let t = &fs.inner.conf.transfer;
        let checksum = t.checksum;
        let chunks_per_packet = checksum.chunks_per_packet(t.write_packet_size);
        let max_in_flight = t.max_packets_in_flight.max(1);
        let lease = fs.lease();
        let slow_threshold = fs.inner.conf.mark_slownode_as_badnode_threshold;
        FileWriter {
            fs,
            src,
            file_id,
            block_size: block_size.max(1),
            replication: replication.max(1),
            checksum,
            chunks_per_packet,
            max_in_flight,
            buf: PacketBuf::default(),
            cur: None,
            prev: None,
            seqno: 0,
            excluded: Vec::new(),
            slow_acks: SlowAcks::new(slow_threshold),
            flushed: false,
            appended: false,
            fsynced_block: false,
            written: start_len,
            closed: false,
            error: None,
            failed_on_datanodes: false,
            lease_recovery_asked: false,
            _lease: Some(lease),
        }
    }

    /// The absolute path being written.
    pub fn path(&self) -> &str {
        &self.src
    }

    /// Bytes in the file so far, including buffered ones.
    pub fn pos(&self) -> u64 {
        self.written
    }

    /// The current block's pipeline (transfer addresses), for tests and diagnostics.
    pub fn pipeline(&self) -> Vec<String> {
        let host = self.fs.inner.conf.use_datanode_hostname;
        self.cur
            .as_ref()
            .map(|c| c.nodes.iter().map(|d| xfer_addr(d, host)).collect())
            .unwrap_or_default()
    }

    fn check_open(&self) -> Result<()> {
        if self.closed {
            return Err(ClientError::Closed);
        }
        if let Some(e) = &self.error {
            return Err(ClientError::Failed(e.clone()));
        }
        Ok(())
    }

    fn fail<T>(&mut self, e: ClientError) -> Result<T> {
        self.error = Some(e.to_string());
        self.failed_on_datanodes = lease_recovery::failed_on_datanodes(&e);
        if let Some(c) = self.cur.as_mut() {
            c.pipe = None;
        }
        Err(e)
    }

    /// Writes all of `data`.
    pub async fn write(&mut self, data: &[u8]) -> Result<()> {
        self.check_open()?;
        match self.write_inner(data).await {
            Ok(()) => Ok(()),
            Err(e) => self.fail(e),
        }
    }

    async fn write_inner(&mut self, mut data: &[u8]) -> Result<()> {
        while !data.is_empty() {
            if self.cur.is_none() {
                self.start_block().await?;
            }
            let sent = self.cur.as_ref().map(|c| c.bytes_sent).unwrap_or(0);
            let cap = packet_capacity(
                sent,
                self.block_size,
                u64::from(self.checksum.bytes_per_checksum),
                self.chunks_per_packet,
            );
            let take = (cap - self.buf.len()).min(data.len());
            self.buf.extend(&data[..take], cap);
            self.written += take as u64;
            data = &data[take..];
            if self.buf.len() == cap {
                self.send_buffered(false).await?;
                if self
                    .cur
                    .as_ref()
                    .is_some_and(|c| c.bytes_sent >= self.block_size)
                {
                    self.finish_block().await?;
                }
            }
        }
        Ok(())
    }

    /// Sends the buffered bytes as one packet.
    async fn send_buffered(&mut self, sync: bool) -> Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let data: Bytes = self.buf.take();
        let Some(cur) = self.cur.as_mut() else {
            return Err(ClientError::Failed("no block to write to".into()));
        };
        let offset = cur.bytes_sent;
        let pkt = Packet::with_data(&self.checksum, offset as i64, self.seqno, data, false, sync)?;
        self.seqno += 1;
        cur.bytes_sent += pkt.data.len() as u64;
        self.send_packet(pkt).await
    }

    /// Queues a packet, sends it, and keeps the unacknowledged queue bounded.
    async fn send_packet(&mut self, pkt: Packet) -> Result<()> {
        let res = {
            let Some(cur) = self.cur.as_mut() else {
                return Err(ClientError::Failed("no block to write to".into()));
            };
            cur.unacked.push_back(pkt.clone());
            match cur.pipe.as_mut() {
                Some(p) => p.send(&pkt).await,
                None => Err(NodeFailure::at(None, "pipeline not connected")),
            }
        };
        if let Err(f) = res {
            self.recover(f).await?;
        }
        self.drain_acks().await?;
        while self
            .cur
            .as_ref()
            .is_some_and(|c| c.unacked.len() > self.max_in_flight)
        {
            self.wait_one_ack().await?;
        }
        Ok(())
    }

    /// Processes acks that have already arrived.
    async fn drain_acks(&mut self) -> Result<()> {
        loop {
            let got = match self.cur.as_mut().and_then(|c| c.pipe.as_mut()) {
                Some(p) => p.try_ack(),
                None => None,
            };
            match got {
                None => return Ok(()),
                Some(Ok(ack)) => {
                    if let Err(f) = self.handle_ack(ack) {
                        self.recover(f).await?;
                    }
                }
                Some(Err(f)) => self.recover(f).await?,
            }
        }
    }

    /// Waits for one ack (recovering the pipeline on failure).
    async fn wait_one_ack(&mut self) -> Result<()> {
        let r = match self.cur.as_mut().and_then(|c| c.pipe.as_mut()) {
            Some(p) => p.next_ack().await,
            None => Err(NodeFailure::at(None, "pipeline not connected")),
        };
        match r.and_then(|ack| self.handle_ack(ack)) {
            Ok(()) => Ok(()),
            Err(f) => self.recover(f).await,
        }
    }

    /// Waits until every sent packet is acknowledged.
    async fn wait_all_acks(&mut self) -> Result<()> {
        while self.cur.as_ref().is_some_and(|c| !c.unacked.is_empty()) {
            self.wait_one_ack().await?;
        }
        Ok(())
    }

    fn handle_ack(&mut self, ack: PipelineAck) -> Result<(), NodeFailure> {
        if let Some((index, status)) = ack.first_failure() {
            return Err(NodeFailure::at(
                Some(index),
                format!(
                    "ack for seqno {} reports {status:?} from pipeline node {index}",
                    ack.seqno
                ),
            ));
        }
        // As Hadoop's ResponseProcessor: SLOW flags are counted on every ack, heartbeats
        // included, and the ack that reaches the threshold is not taken (its packet is
        // resent after recovery).
        let host = self.fs.inner.conf.use_datanode_hostname;
        let cur = &self.cur;
        let cur_nodes = || {
            cur.as_ref()
                .map(|c| c.nodes.iter().map(|d| xfer_addr(d, host)).collect())
                .unwrap_or_default()
        };
        if let Some((index, node)) = self.slow_acks.observe(&ack, cur_nodes) {
            warn!(node = %node, "Receive reply from slowNode {node} for continuous {} times, treating it as badNode", self.slow_acks.threshold());
            return Err(NodeFailure::at(
                Some(index),
                format!(
                    "Receive reply from slowNode {node} for continuous {} times, treating it as badNode",
                    self.slow_acks.threshold()
                ),
            ));
        }
        if ack.seqno == HEARTBEAT_SEQNO {
            return Ok(());
        }
        let Some(cur) = self.cur.as_mut() else {
            return Ok(());
        };
        let Some(front) = cur.unacked.front() else {
            return Err(NodeFailure::at(
                None,
                format!("unexpected ack for seqno {}", ack.seqno),
            ));
        };
        if front.header.seqno != ack.seqno {
            return Err(NodeFailure::at(
                None,
                format!(
                    "Expecting seqno {} but received {}",
                    front.header.seqno, ack.seqno
                ),
            ));
        }
        let end = front.header.offset_in_block as u64 + front.data.len() as u64;
        cur.unacked.pop_front();
        cur.bytes_acked = cur.bytes_acked.max(end);
        cur.block.num_bytes = Some(cur.bytes_acked);
        cur.append_setup = false;
        Ok(())
    }

    /// Ends the current block: all data acknowledged, the empty last packet sent and acked.
    async fn finish_block(&mut self) -> Result<()> {
        self.send_buffered(false).await?;
        self.wait_all_acks().await?;
        let offset = self.cur.as_ref().map(|c| c.bytes_sent).unwrap_or(0);
        let last = Packet::empty(offset as i64, self.seqno, true);
        self.seqno += 1;
        if let Some(c) = self.cur.as_mut() {
            c.closing = true;
        }
        self.send_packet(last).await?;
        self.wait_all_acks().await?;
        if let Some(mut c) = self.cur.take() {
            if let Some(p) = c.pipe.take() {
                p.close().await;
            }
            c.block.num_bytes = Some(c.bytes_acked);
            debug!(block = %block_name(&c.block), len = c.bytes_acked, "block finished");
            self.prev = Some(c.block);
        }
        self.fsynced_block = false;
        Ok(())
    }

    /// Flushes buffered data to every DataNode of the pipeline (visible to new readers).
    pub async fn hflush(&mut self) -> Result<()> {
        self.flush_impl(false).await
    }

    /// Like hflush, and asks the DataNodes to sync to disk.
    pub async fn hsync(&mut self) -> Result<()> {
        self.flush_impl(true).await
    }

    async fn flush_impl(&mut self, sync: bool) -> Result<()> {
        self.check_open()?;
        let r = async {
            if self.cur.is_none() {
                return Ok(());
            }
            self.send_buffered(sync).await?;
            self.wait_all_acks().await?;
            self.flushed = true;
            if !self.fsynced_block {
                let len = self.cur.as_ref().map(|c| c.bytes_acked).unwrap_or(0);
                let _: FsyncResponseProto = self
                    .fs
                    .call(
                        "fsync",
                        &FsyncRequestProto {
                            src: self.src.clone(),
                            client: self.fs.client_name().to_string(),
                            last_block_length: Some(len as i64),
                            file_id: Some(self.file_id),
                        },
                    )
                    .await?;
                self.fsynced_block = true;
            }
            if self
                .cur
                .as_ref()
                .is_some_and(|c| c.bytes_sent >= self.block_size)
            {
                self.finish_block().await?;
            }
            Ok(())
        }
        .await;
        match r {
            Ok(()) => Ok(()),
            Err(e) => self.fail(e),
        }
    }

    /// Flushes, closes the last block and completes the file with the NameNode.
    pub async fn close(&mut self) -> Result<()> {
        if self.closed {
            return Ok(());
        }
        if let Err(e) = self.check_open() {
            // An earlier write failed: the file is finished by lease recovery, if at all.
            self.recover_lease_after_failure().await;
            return Err(e);
        }
        let r = async {
            if self.cur.is_some() {
                self.finish_block().await?;
            }
            self.complete().await
        }
        .await;
        match r {
            Ok(()) => {
                self.closed = true;
                self._lease = None;
                Ok(())
            }
            Err(e) => {
                self._lease = None;
                let r = self.fail(e);
                self.recover_lease_after_failure().await;
                r
            }
        }
    }

    /// complete() until the NameNode says yes, with the locateFollowingBlock backoff.
    async fn complete(&mut self) -> Result<()> {
        let delays = self.fs.inner.conf.locate_following.delays();
        let mut attempt = 0;
        loop {
            let resp: CompleteResponseProto = self
                .fs
                .call(
                    "complete",
                    &CompleteRequestProto {
                        src: self.src.clone(),
                        client_name: self.fs.client_name().to_string(),
                        last: self.prev.clone(),
                        file_id: Some(self.file_id),
                    },
                )
                .await?;
            if resp.result {
                return Ok(());
            }
            let Some(d) = delays.get(attempt) else {
                let name = self
                    .prev
                    .as_ref()
                    .map(block_name)
                    .unwrap_or_else(|| "null".into());
                // Hadoop's DFSOutputStream.completeFile wording; nothing about locations, which
                // for a block still being written are the pipeline's targets, not reports.
                return Err(ClientError::Failed(format!(
                    "Unable to close file because the last block {name} does not have enough number of replicas."
                )));
            };
            debug!(src = %self.src, "complete() returned false; retrying in {d:?}");
            tokio::time::sleep(*d).await;
            attempt += 1;
        }
    }

    /// addBlock with NotReplicatedYetException retries.
    async fn add_block(&mut self) -> Result<LocatedBlockProto> {
        let delays = self.fs.inner.conf.locate_following.delays();
        let mut attempt = 0;
        loop {
            let req = AddBlockRequestProto {
                src: self.src.clone(),
                client_name: self.fs.client_name().to_string(),
                previous: self.prev.clone(),
                exclude_nodes: self.excluded.clone(),
                file_id: Some(self.file_id),
                favored_nodes: Vec::new(),
                flags: Vec::new(),
            };
            match self
                .fs
                .call::<_, AddBlockResponseProto>("addBlock", &req)
                .await
            {
                Ok(r) => return Ok(r.block),
                Err(e) if e.is_not_replicated_yet() => {
                    // Out of retries: the NameNode's NotReplicatedYetException itself, as
                    // Hadoop's DFSOutputStream.addBlock rethrows it.
                    let Some(d) = delays.get(attempt) else {
                        return Err(e);
                    };
                    debug!(src = %self.src, "NotReplicatedYetException; retrying addBlock in {d:?}");
                    tokio::time::sleep(*d).await;
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Allocates the next block and sets up its pipeline; a node that fails the setup is
    /// excluded, the block abandoned and another one requested.
    async fn start_block(&mut self) -> Result<()> {
        let retries = self.fs.inner.conf.block_write_retries;
        let mut last_err = String::new();
        for _ in 0..=retries {
            let lb = self.add_block().await?;
            let mut st = BlockState::from_located(lb);
            let host = self.fs.inner.conf.use_datanode_hostname;
            let addrs: Vec<String> = st.nodes.iter().map(|d| xfer_addr(d, host)).collect();
            let setup = Setup {
                block: &st.block,
                token: &st.token,
                client_name: self.fs.client_name(),
                nodes: &st.nodes,
                addrs: &addrs,
                storage_ids: &st.storage_ids,
                storage_types: &st.storage_types,
                stage: BlockConstructionStage::PipelineSetupCreate,
                min_bytes: 0,
                max_bytes: 0,
                latest_gs: st.block.generation_stamp,
                checksum: self.checksum,
            };
            match Pipeline::connect(&setup, &self.fs.inner.conf.transfer).await {
                Ok(p) => {
                    st.pipe = Some(p);
                    debug!(block = %block_name(&st.block), pipeline = ?addrs, "pipeline set up");
                    self.cur = Some(st);
                    self.fsynced_block = false;
                    return Ok(());
                }
                Err(f) => {
                    let idx = f.index.unwrap_or(0).min(st.nodes.len().saturating_sub(1));
                    warn!("Abandoning {}: {}", block_name(&st.block), f.cause);
                    let _: AbandonBlockResponseProto = self
                        .fs
                        .call(
                            "abandonBlock",
                            &AbandonBlockRequestProto {
                                b: st.block.clone(),
                                src: self.src.clone(),
                                holder: self.fs.client_name().to_string(),
                                file_id: Some(self.file_id),
                            },
                        )
                        .await?;
                    if let Some(bad) = st.nodes.get(idx) {
                        warn!("Excluding datanode {}", xfer_addr(bad, host));
                        if !self.excluded.iter().any(|e| same_node(e, bad)) {
                            self.excluded.push(bad.clone());
                        }
                    }
                    last_err = f.cause;
                }
            }
        }
        Err(ClientError::Failed(format!(
            "Unable to create new block for {}: {last_err}",
            self.src
        )))
    }

    /// Sets up the append pipeline on the partial last block.
    async fn start_append(&mut self, lb: LocatedBlockProto) -> Result<()> {
        let len = lb.b.num_bytes.unwrap_or(0);
        let mut st = BlockState::from_located(lb);
        st.bytes_sent = len;
        st.bytes_acked = len;
        st.append_setup = true;
        self.cur = Some(st);
        self.rebuild_until_ok(None).await
    }
}

impl BlockState {
    fn from_located(lb: LocatedBlockProto) -> Self {
        let mut block = lb.b;
        let acked = block.num_bytes.unwrap_or(0);
        block.num_bytes = Some(acked);
        BlockState {
            block,
            token: lb.block_token,
            original: lb.locs.clone(),
            nodes: lb.locs,
            storage_ids: lb.storage_i_ds,
            storage_types: lb.storage_types,
            pipe: None,
            unacked: VecDeque::new(),
            bytes_sent: acked,
            bytes_acked: acked,
            failed: Vec::new(),
            closing: false,
            append_setup: false,
            recoveries: 0,
        }
    }
}
