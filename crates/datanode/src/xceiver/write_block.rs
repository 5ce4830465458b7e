//! WRITE_BLOCK: open the replica for the stage, connect the mirror (targets[0]), answer the
//! connect ack, then receive packets (forward, verify, write) while a responder sends acks in
//! seqno order with this node's status first and the mirror's replies after it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use prost::Message;
use rhdfs_proto::hdfs::op_write_block_proto::BlockConstructionStage as Stage;
use rhdfs_proto::hdfs::{BlockOpResponseProto, OpWriteBlockProto, PipelineAckProto, Status};
use rhdfs_transfer::op::{DEFAULT_MAX_MESSAGE_LEN, read_delimited};
use rhdfs_transfer::{PacketRx, write_delimited, write_op};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::mpsc;

use super::write_disk::{Acks, DiskWriter, Job, PendingAck};
use super::{
    Conn, Next, XceiverContext, XceiverError, blocking, spec_from_proto, spec_to_wire, timed,
    xfer_addr,
};
use crate::dataset::delete_files;
use crate::notify::{BlockEvent, BlockStatus};
use crate::replica::ReplicaInfo;
use crate::writer::ReplicaWriter;

pub(crate) async fn write_block(
    ctx: &Arc<XceiverContext>,
    conn: &mut Conn,
    req: OpWriteBlockProto,
) -> Result<Next, XceiverError> {
    let started = Instant::now();
    let client_name = req.header.client_name.clone();
    let block = req.header.base_header.block.clone();
    let stage = Stage::try_from(req.stage)
        .map_err(|_| XceiverError::Other(format!("unknown stage {}", req.stage)))?;
    let is_client = !client_name.is_empty();
    let is_datanode = !is_client;
    let is_transfer = matches!(stage, Stage::TransferRbw | Stage::TransferFinalized);
    let acks = is_client && !is_transfer;
    let requested = spec_from_proto(Some(&req.requested_checksum))?;
    let bpid = block.pool_id.clone();
    tracing::debug!(peer = %conn.peer, id = block.block_id, gs = block.generation_stamp,
        ?stage, client = %client_name, targets = req.targets.len(), "WRITE_BLOCK");

    // 1. Open the replica for this stage.
    let new_gs = req.latest_generation_stamp.max(block.generation_stamp);
    let ds = ctx.dataset.clone();
    let (b, min, max) = (block.clone(), req.min_bytes_rcvd, req.max_bytes_rcvd);
    let expected = block.num_bytes.unwrap_or(0);
    let opened = blocking(move || -> Result<Opened, crate::error::StorageError> {
        let (id, gs) = (b.block_id, b.generation_stamp);
        Ok(if is_datanode || is_transfer {
            Opened::Writer(ds.create_temporary(&b.pool_id, id, gs, requested, expected)?)
        } else {
            match stage {
                Stage::PipelineSetupCreate => {
                    Opened::Writer(ds.create_rbw(&b.pool_id, id, gs, requested, expected)?)
                }
                Stage::PipelineSetupAppend => {
                    Opened::Writer(ds.append(&b.pool_id, id, gs, new_gs, min)?)
                }
                Stage::PipelineSetupAppendRecovery => {
                    Opened::Writer(ds.recover_append(&b.pool_id, id, gs, new_gs, min)?)
                }
                Stage::PipelineSetupStreamingRecovery => {
                    Opened::Writer(ds.recover_rbw(&b.pool_id, id, gs, new_gs, min, max)?)
                }
                Stage::PipelineCloseRecovery => {
                    Opened::Closed(ds.recover_close(&b.pool_id, id, gs, new_gs, min)?)
                }
                other => {
                    return Err(crate::error::StorageError::BadReplicaState {
                        id,
                        msg: format!("stage {other:?} is not a DataNode stage"),
                    });
                }
            }
        })
    })
    .await?;
    let opened = match opened {
        Ok(o) => o,
        Err(e) => {
            tracing::warn!(peer = %conn.peer, id = block.block_id, ?stage, error = %e, "cannot open replica for writing");
            if acks {
                let resp = BlockOpResponseProto {
                    status: Status::Error as i32,
                    message: Some(e.to_string()),
                    ..Default::default()
                };
                write_delimited(&mut conn.wr, &resp).await?;
            }
            return Ok(Next::Close);
        }
    };
    let (mut writer, closed) = match opened {
        Opened::Writer(w) => (Some(w), None),
        Opened::Closed(info) => (None, Some(info)),
    };
    let storage_id = ctx
        .dataset
        .volume(
            writer
                .as_ref()
                .map(|w| w.volume())
                .or(closed.as_ref().map(|i| i.volume))
                .unwrap_or(0),
        )
        .map(|v| v.storage_id.clone())
        .unwrap_or_default();

    // 2. Mirror: forward the op to targets[0] and (for client writes) read its connect ack.
    let mut mirror: Option<(BufReader<OwnedReadHalf>, OwnedWriteHalf)> = None;
    let mut mirror_status = Status::Success;
    let mut first_bad_link = String::new();
    if let Some(target) = req.targets.first() {
        let addr = xfer_addr(target);
        match connect_mirror(ctx, &addr, &req, acks).await {
            Ok((m, st, link)) => {
                mirror = Some(m);
                mirror_status = st;
                first_bad_link = link;
            }
            Err(e) => {
                tracing::warn!(peer = %conn.peer, mirror = %addr, error = %e, "cannot set up the pipeline to the mirror");
                discard_new(ctx, &bpid, stage, writer).await;
                if acks {
                    let resp = BlockOpResponseProto {
                        status: Status::Error as i32,
                        first_bad_link: Some(addr),
                        message: Some(format!("cannot connect to the mirror: {e}")),
                        ..Default::default()
                    };
                    write_delimited(&mut conn.wr, &resp).await?;
                }
                return Ok(Next::Close);
            }
        }
    }

    // 3. Connect ack, only after the whole downstream answered.
    if acks {
        let resp = BlockOpResponseProto {
            status: mirror_status as i32,
            first_bad_link: Some(first_bad_link.clone()),
            ..Default::default()
        };
        write_delimited(&mut conn.wr, &resp).await?;
        if mirror_status != Status::Success {
            tracing::warn!(peer = %conn.peer, id = block.block_id, link = %first_bad_link, "downstream refused the pipeline");
            discard_new(ctx, &bpid, stage, writer).await;
            return Ok(Next::Close);
        }
        if let Some(w) = &writer {
            ctx.notifier.notify(BlockEvent {
                bpid: bpid.clone(),
                storage_id: storage_id.clone(),
                block_id: w.id(),
                gs: w.gs(),
                num_bytes: w.len(),
                status: BlockStatus::Receiving,
            });
        }
    }

    // 4. Packets and acks.
    let verify = req.targets.is_empty() || is_datanode || is_transfer;
    let (mirror_rd, mirror_wr) = match mirror {
        Some((r, w)) => (Some(r), Some(w)),
        None => (None, None),
    };
    let has_mirror = mirror_rd.is_some();
    let peer_key = crate::metrics::pipeline_peer_key(ctx.config.metrics.as_deref(), &req.targets);
    let mirror_addr = req.targets.first().map(xfer_addr).unwrap_or_default();
    let mirror_dead = AtomicBool::new(false);
    let (tx, rx) = mpsc::unbounded_channel::<PendingAck>();
    let recv = Receiver {
        ctx,
        bpid: &bpid,
        storage_id: &storage_id,
        stage,
        verify,
        packet_checksum: spec_to_wire(requested),
        mirror_dead: &mirror_dead,
        acks: Acks { tx, on: acks },
        peer_key,
        mirror_addr: &mirror_addr,
    };
    let Conn { rd, wr, peer } = conn;
    let (received, responded) = tokio::join!(
        recv.run(rd, mirror_wr, writer.take(), closed.clone()),
        respond_acks(ctx, wr, mirror_rd, has_mirror, &mirror_dead, rx),
    );
    if let Err(e) = &responded {
        tracing::debug!(peer = %peer, error = %e, "ack responder stopped");
    }
    let info = match received {
        Ok(info) => info,
        Err(e) => {
            if is_transfer && is_client {
                let resp = BlockOpResponseProto {
                    status: Status::Error as i32,
                    message: Some(e.to_string()),
                    ..Default::default()
                };
                let _ = write_delimited(wr, &resp).await;
            }
            return Err(e);
        }
    };
    tracing::info!(peer = %peer, id = info.id, gs = info.gs, len = info.num_bytes,
        state = %info.state, ?stage, "received block");
    ctx.activity.recent.record(
        crate::metrics::TransferKind::Write,
        peer.to_string(),
        info.id,
        info.num_bytes,
        started.elapsed(),
    );
    // 5. Transfers with a client name get one close ack.
    if is_transfer && is_client {
        let resp = BlockOpResponseProto {
            status: Status::Success as i32,
            ..Default::default()
        };
        write_delimited(wr, &resp).await?;
    }
    // A pipeline that broke (a mirror that stopped answering, or acks that could not be
    // sent) is being recovered by the client on new connections; what it still sends here
    // (a heartbeat packet while it waited for the last ack, say) is no op header. Close
    // rather than read it as one.
    if responded.is_ok() && !mirror_dead.load(Ordering::Relaxed) {
        Ok(Next::Continue)
    } else {
        Ok(Next::Close)
    }
}

enum Opened {
    Writer(ReplicaWriter),
    Closed(ReplicaInfo),
}

/// Removes a replica that was created for this op and never received data.
async fn discard_new(
    ctx: &Arc<XceiverContext>,
    bpid: &str,
    stage: Stage,
    writer: Option<ReplicaWriter>,
) {
    let Some(w) = writer else { return };
    if !matches!(
        stage,
        Stage::PipelineSetupCreate | Stage::TransferRbw | Stage::TransferFinalized
    ) || !w.is_empty()
    {
        return;
    }
    let (ds, bpid, id, gs) = (ctx.dataset.clone(), bpid.to_string(), w.id(), w.gs());
    drop(w);
    let _ = blocking(move || {
        if let Some(d) = ds.remove_for_delete(&bpid, id, gs)
            && let Err(e) = delete_files(&d)
        {
            tracing::warn!(id, error = %e, "cannot remove abandoned replica");
        }
    })
    .await;
}

async fn connect_mirror(
    ctx: &Arc<XceiverContext>,
    addr: &str,
    req: &OpWriteBlockProto,
    acks: bool,
) -> Result<((BufReader<OwnedReadHalf>, OwnedWriteHalf), Status, String), XceiverError> {
    let t = ctx.config.socket_timeout;
    let sock = timed(t, connect_with_buffer(addr, ctx.config.send_buffer_size)).await?;
    let _ = sock.set_nodelay(true);
    let (r, mut w) = sock.into_split();
    let mut r = BufReader::with_capacity(64 * 1024, r);
    let mut down = req.clone();
    down.targets = req.targets.iter().skip(1).cloned().collect();
    down.storage_type = req.target_storage_types.first().copied();
    down.target_storage_types = req.target_storage_types.iter().skip(1).copied().collect();
    down.storage_id = req.target_storage_ids.first().cloned();
    down.target_storage_ids = req.target_storage_ids.iter().skip(1).cloned().collect();
    if !req.target_pinnings.is_empty() {
        down.pinning = req.target_pinnings.first().copied();
        down.target_pinnings = req.target_pinnings.iter().skip(1).copied().collect();
    }
    timed(t, write_op(&mut w, rhdfs_transfer::Op::WriteBlock, &down)).await?;
    if !acks {
        return Ok(((r, w), Status::Success, String::new()));
    }
    let resp: BlockOpResponseProto =
        timed(t, read_delimited(&mut r, DEFAULT_MAX_MESSAGE_LEN)).await?;
    let status = Status::try_from(resp.status).unwrap_or(Status::Error);
    let mut link = resp.first_bad_link.unwrap_or_default();
    if status != Status::Success && link.is_empty() {
        link = addr.to_string();
    }
    Ok(((r, w), status, link))
}

/// Connects to `addr`, with SO_SNDBUF `send_buffer` when it is not 0 (Hadoop's
/// dfs.datanode.transfer.socket.send.buffer.size on the mirror socket).
async fn connect_with_buffer(addr: &str, send_buffer: u32) -> std::io::Result<TcpStream> {
    if send_buffer == 0 {
        return TcpStream::connect(addr).await;
    }
    let mut last = None;
    for a in tokio::net::lookup_host(addr).await? {
        let sock = if a.is_ipv4() {
            tokio::net::TcpSocket::new_v4()?
        } else {
            tokio::net::TcpSocket::new_v6()?
        };
        sock.set_send_buffer_size(send_buffer)?;
        match sock.connect(a).await {
            Ok(s) => return Ok(s),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("no address for {addr}"),
        )
    }))
}

struct Receiver<'a> {
    ctx: &'a Arc<XceiverContext>,
    bpid: &'a str,
    storage_id: &'a str,
    stage: Stage,
    verify: bool,
    packet_checksum: rhdfs_transfer::DataChecksum,
    mirror_dead: &'a AtomicBool,
    acks: Acks,
    /// The mirror's peer stats key when this node is the penultimate one of the pipeline
    /// and peer stats are on: each packet's send time to the mirror is recorded under it.
    peer_key: Option<String>,
    /// The mirror's transfer address (for the send fault hook).
    mirror_addr: &'a str,
}

impl Receiver<'_> {
    /// Queues an ack: behind the disk thread's writes while it runs, so acks keep the
    /// packets' order; straight to the responder otherwise.
    async fn ack(&self, disk: &mut Option<DiskWriter>, seqno: i64, status: Status, end: bool) {
        match disk {
            Some(d) => {
                // A disk thread that stopped on an error queued its own ack, the last one.
                let _ = d.send(Job::Ack { seqno, status, end }).await;
            }
            None => self.acks.send(seqno, status, end),
        }
    }

    /// Writes one packet to the mirror and flushes it. As Hadoop's BlockReceiver, the time
    /// this takes (on the injected clock) is the mirror's latency in peer stats when this
    /// node is the penultimate one: a slow mirror reads slowly, its socket buffers fill, and
    /// the write waits.
    async fn forward(&self, m: &mut OwnedWriteHalf, raw: &[u8], packets: usize) {
        let metrics = self.ctx.config.metrics.as_deref();
        let timed_peer = self.peer_key.as_deref().zip(metrics);
        let t0 = timed_peer.map(|(_, m)| m.now());
        self.ctx.faults.before_mirror_send(self.mirror_addr);
        let res = match m.write_all(raw).await {
            Ok(()) => m.flush().await,
            Err(e) => Err(e),
        };
        match res {
            Ok(()) => {
                if let (Some((key, m)), Some(t0)) = (timed_peer, t0) {
                    // Each packet's share of the write, as many samples as packets.
                    let n = u32::try_from(packets.max(1)).unwrap_or(u32::MAX);
                    let each = m.now().saturating_sub(t0) / n;
                    for _ in 0..n {
                        m.record_peer(key, each);
                    }
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "forwarding a packet to the mirror failed");
                self.mirror_dead.store(true, Ordering::Relaxed);
            }
        }
    }

    fn own_status(&self) -> Status {
        if self.ctx.faults.ack_error() {
            Status::Error
        } else {
            Status::Success
        }
    }

    async fn run(
        self,
        rd: &mut BufReader<OwnedReadHalf>,
        mut mirror: Option<OwnedWriteHalf>,
        writer: Option<ReplicaWriter>,
        closed: Option<ReplicaInfo>,
    ) -> Result<ReplicaInfo, XceiverError> {
        let cfg = &self.ctx.config;
        // Packets are split out of large socket reads without a copy; each frame's memory
        // is reused once the disk thread dropped it.
        let mut rx = PacketRx::for_pipeline();
        // The packets' CRCs are stored as received when made with the replica's checksum.
        let sums_fit = writer
            .as_ref()
            .is_some_and(|w| spec_to_wire(w.checksum()) == self.packet_checksum);
        let mut disk = match writer {
            Some(w) => Some(DiskWriter::start(self.ctx.clone(), w, self.acks.clone())?),
            None => None,
        };
        loop {
            // Every whole packet one read brought, forwarded in one write.
            let (run, packets) =
                timed(cfg.socket_timeout, rx.next_frames(rd, cfg.max_packet_size)).await?;
            let delay = self.ctx.faults.packet_delay();
            if !delay.is_zero() {
                tokio::time::sleep(delay * packets.len() as u32).await;
            }
            if let Some(m) = mirror.as_mut()
                && !self.mirror_dead.load(Ordering::Relaxed)
            {
                self.forward(m, &run, packets.len()).await;
            }
            drop(run);
            for pkt in packets {
                if let Some(info) = self
                    .packet(pkt, &mut disk, &mut mirror, &rx, sums_fit, &closed)
                    .await?
                {
                    return Ok(info);
                }
            }
        }
    }

    /// One received packet (already forwarded): checked, queued for the disk thread, acked;
    /// the replica's info once it was the block's last.
    async fn packet(
        &self,
        pkt: rhdfs_transfer::Packet,
        disk: &mut Option<DiskWriter>,
        mirror: &mut Option<OwnedWriteHalf>,
        rx: &PacketRx,
        sums_fit: bool,
        closed: &Option<ReplicaInfo>,
    ) -> Result<Option<ReplicaInfo>, XceiverError> {
        let h = pkt.header;
        if h.is_heartbeat() {
            self.ack(disk, h.seqno, self.own_status(), false).await;
            return Ok(None);
        }
        if let Err(e) = pkt.validate(&self.packet_checksum) {
            self.ack(disk, h.seqno, Status::Error, true).await;
            return Err(e.into());
        }
        if h.offset_in_block < 0 {
            self.ack(disk, h.seqno, Status::Error, true).await;
            return Err(XceiverError::Other(format!(
                "negative packet offset {}",
                h.offset_in_block
            )));
        }
        if self.verify
            && !pkt.data.is_empty()
            && let Err(e) = pkt.verify(&self.packet_checksum)
        {
            tracing::warn!(error = %e, offset = h.offset_in_block, "checksum error in received packet");
            self.ack(disk, h.seqno, Status::ErrorChecksum, true).await;
            return Err(e.into());
        }
        if let Some(d) = disk.as_mut() {
            d.send(Job::Write {
                seqno: h.seqno,
                offset: h.offset_in_block as u64,
                sums: sums_fit.then(|| pkt.checksums.clone()),
                data: pkt.data,
                sync: h.sync_block,
                ack: !h.last_packet_in_block,
            })
            .await?;
        }
        if h.last_packet_in_block {
            if rx.buffered() > 0 {
                tracing::warn!(
                    bytes = rx.buffered(),
                    "bytes after the last packet of a block"
                );
            }
            let info = match (disk.take(), closed) {
                (Some(d), _) => {
                    let w = d.finish().await?;
                    let to_rbw = self.stage == Stage::TransferRbw;
                    let sync = self.ctx.config.sync_on_close;
                    let res = blocking(move || {
                        if sync {
                            w.sync()?;
                        }
                        if to_rbw { w.into_rbw() } else { w.finalize() }
                    })
                    .await?;
                    match res {
                        Ok(i) => i,
                        Err(e) => {
                            self.acks.send(h.seqno, Status::Error, true);
                            return Err(e.into());
                        }
                    }
                }
                (None, Some(c)) => c.clone(),
                (None, None) => {
                    return Err(XceiverError::Other("no replica to close".into()));
                }
            };
            if info.state == crate::replica::ReplicaState::Finalized {
                crate::metrics::Activity::add(&self.ctx.activity.blocks_written, 1);
                self.ctx.notifier.notify(BlockEvent {
                    bpid: self.bpid.to_string(),
                    storage_id: self.storage_id.to_string(),
                    block_id: info.id,
                    gs: info.gs,
                    num_bytes: info.num_bytes,
                    status: BlockStatus::Received,
                });
            }
            self.acks.send(h.seqno, self.own_status(), true);
            if let Some(m) = mirror.as_mut() {
                let _ = m.flush().await;
            }
            return Ok(Some(info));
        }
        if disk.is_none() {
            self.acks.send(h.seqno, self.own_status(), false);
        }
        Ok(None)
    }
}

/// Sends the acks in the order the receiver queued them, each after this node's write of its
/// packet (queued by the disk thread then) and, with a mirror, after the mirror's ack for it.
/// The acks ready together are written upstream in one write: the responder takes every ack
/// already queued and every mirror ack already buffered before it writes, and writes what it
/// has before it waits — for the next queued ack or for a mirror ack not yet here — so no
/// ack waits on a later packet.
pub(super) async fn respond_acks<W, R>(
    ctx: &Arc<XceiverContext>,
    wr: &mut W,
    mut mirror: Option<BufReader<R>>,
    has_mirror: bool,
    mirror_dead: &AtomicBool,
    mut rx: mpsc::UnboundedReceiver<PendingAck>,
) -> Result<(), XceiverError>
where
    W: AsyncWrite + Unpin,
    R: AsyncRead + Unpin,
{
    let t = ctx.config.socket_timeout;
    let mut out = Vec::with_capacity(1024);
    loop {
        let p = match rx.try_recv() {
            Ok(p) => p,
            Err(_) => {
                send_acks(wr, &mut out).await?;
                match rx.recv().await {
                    Some(p) => p,
                    None => break,
                }
            }
        };
        let mut reply = vec![p.status as i32];
        let mut flag = vec![crate::metrics::own_ack_flag(
            ctx.config.metrics.as_deref(),
            p.status,
        )];
        let started = Instant::now();
        let mut waited = 0u64;
        if has_mirror {
            let mut got = None;
            if let Some(m) = mirror.as_mut()
                && !mirror_dead.load(Ordering::Relaxed)
                && p.status != Status::ErrorChecksum
            {
                if !holds_whole_message(m.buffer()) {
                    send_acks(wr, &mut out).await?;
                }
                match timed(
                    t,
                    read_delimited::<PipelineAckProto, _>(m, DEFAULT_MAX_MESSAGE_LEN),
                )
                .await
                {
                    Ok(a) if a.seqno == p.seqno => got = Some(a),
                    Ok(a) => {
                        tracing::warn!(want = p.seqno, got = a.seqno, "mirror acked out of order");
                    }
                    Err(e) => tracing::warn!(error = %e, "reading the mirror's ack failed"),
                }
                waited = started.elapsed().as_nanos() as u64;
            }
            match got {
                Some(a) => {
                    let flags = if a.flag.len() == a.reply.len() {
                        a.flag.clone()
                    } else {
                        a.reply.iter().map(|r| *r as u32).collect()
                    };
                    reply.extend(a.reply);
                    flag.extend(flags);
                }
                None => {
                    mirror_dead.store(true, Ordering::Relaxed);
                    reply.push(Status::Error as i32);
                    flag.push(Status::Error as u32);
                }
            }
        }
        let ack = PipelineAckProto {
            seqno: p.seqno,
            reply,
            downstream_ack_time_nanos: Some(waited),
            flag,
        };
        ack.encode_length_delimited(&mut out)
            .map_err(|e| XceiverError::Other(format!("encoding an ack: {e}")))?;
        if p.end {
            break;
        }
    }
    send_acks(wr, &mut out).await
}

/// Writes the encoded acks in `out` (if any) in one write and empties it.
async fn send_acks<W: AsyncWrite + Unpin>(
    wr: &mut W,
    out: &mut Vec<u8>,
) -> Result<(), XceiverError> {
    if out.is_empty() {
        return Ok(());
    }
    wr.write_all(out).await?;
    wr.flush().await?;
    out.clear();
    Ok(())
}

/// Whether `buf` starts with a whole varint-delimited message (one read of it will not wait).
fn holds_whole_message(buf: &[u8]) -> bool {
    let mut rest = buf;
    match prost::encoding::decode_varint(&mut rest) {
        Ok(len) => usize::try_from(len).is_ok_and(|len| rest.len() >= len),
        Err(_) => false,
    }
}
