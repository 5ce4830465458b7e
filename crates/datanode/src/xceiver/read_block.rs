//! READ_BLOCK (any offset and length, chunk-aligned packets of ≤ 64 KiB, a final empty packet,
//! an optional client status) and BLOCK_CHECKSUM (MD5 of the chunk CRCs).

use std::os::fd::AsFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::Bytes;
use rhdfs_proto::hdfs::{
    BlockOpResponseProto, ClientReadStatusProto, OpBlockChecksumProto,
    OpBlockChecksumResponseProto, OpReadBlockProto, ReadOpChecksumInfoProto, Status,
};
use rhdfs_transfer::op::read_delimited_opt;
use rhdfs_transfer::write_delimited;

use super::block_sender::{SendPlan, send_block};
use super::sock_io::SockWriter;
use super::{Conn, Next, XceiverContext, XceiverError, blocking, respond, spec_to_proto};
use crate::checksum::{ChecksumSpec, ChecksumType};
use crate::reader::ReplicaReader;

/// How long a read of an RBW replica waits for the requested bytes to arrive.
const RBW_WAIT: Duration = Duration::from_secs(3);

async fn open_reader(
    ctx: &Arc<XceiverContext>,
    bpid: &str,
    id: u64,
    gs: u64,
    need: u64,
) -> Result<Result<ReplicaReader, String>, XceiverError> {
    let deadline = tokio::time::Instant::now() + RBW_WAIT;
    loop {
        let (ds, b) = (ctx.dataset.clone(), bpid.to_string());
        let r = blocking(move || ReplicaReader::open(&ds, &b, id, gs)).await?;
        match r {
            Err(e) => return Ok(Err(e.to_string())),
            Ok(r) if r.len() >= need => return Ok(Ok(r)),
            Ok(r) => {
                let finished = r.info().state == crate::replica::ReplicaState::Finalized;
                if finished || tokio::time::Instant::now() >= deadline {
                    return Ok(Err(format!(
                        "replica blk_{id} has {} bytes, fewer than the {need} requested",
                        r.len()
                    )));
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// Tells the sending thread to stop when the connection's task goes away mid-read.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

pub(crate) async fn read_block(
    ctx: &Arc<XceiverContext>,
    conn: &mut Conn,
    req: OpReadBlockProto,
) -> Result<Next, XceiverError> {
    let started = std::time::Instant::now();
    let block = req.header.base_header.block.clone();
    let (offset, len) = (req.offset, req.len);
    let delay = ctx.faults.read_delay();
    if !delay.is_zero() {
        tracing::info!(peer = %conn.peer, id = block.block_id, ?delay, "fault hook: slow read");
        tokio::time::sleep(delay).await;
    }
    let end_req = offset.saturating_add(len);
    let reader = match open_reader(
        ctx,
        &block.pool_id,
        block.block_id,
        block.generation_stamp,
        end_req,
    )
    .await?
    {
        Ok(r) => r,
        Err(msg) => {
            tracing::warn!(peer = %conn.peer, id = block.block_id, offset, len, %msg, "cannot serve READ_BLOCK");
            respond(conn, Status::Error, Some(msg)).await?;
            return Ok(Next::Close);
        }
    };
    let stored = reader.checksum();
    let send_sums = req.send_checksums.unwrap_or(true);
    let wire = if send_sums {
        stored
    } else {
        ChecksumSpec::new(ChecksumType::Null, stored.bytes_per_checksum)
    };
    let bpc = stored.bpc();
    let chunk_offset = offset - offset % bpc;
    let end = end_req.div_ceil(bpc).saturating_mul(bpc).min(reader.len());
    let resp = BlockOpResponseProto {
        status: Status::Success as i32,
        read_op_checksum_info: Some(ReadOpChecksumInfoProto {
            checksum: spec_to_proto(wire),
            chunk_offset,
        }),
        ..Default::default()
    };
    write_delimited(&mut conn.wr, &resp).await?;

    let fd = conn.wr.as_ref().as_fd().try_clone_to_owned()?;
    let cancel = Arc::new(AtomicBool::new(false));
    let _cancel_on_drop = CancelOnDrop(cancel.clone());
    let plan = SendPlan {
        start: chunk_offset,
        end,
        send_sums,
        transfer_to: ctx.config.transfer_to,
        packet_size: ctx.config.read_packet_size,
    };
    let (metrics, ds, timeout) = (
        ctx.config.metrics.clone(),
        ctx.dataset.clone(),
        ctx.config.socket_timeout,
    );
    let stats = blocking(move || {
        let out = SockWriter::new(fd, timeout, &cancel);
        send_block(&reader, &out, plan, (&metrics, &ds))
    })
    .await??;
    crate::metrics::Activity::add(
        &ctx.activity.bytes_read,
        stats.zero_copy_bytes + stats.copied_bytes,
    );
    crate::metrics::Activity::add(&ctx.activity.blocks_read, 1);
    ctx.activity.recent.record(
        crate::metrics::TransferKind::Read,
        conn.peer.to_string(),
        block.block_id,
        stats.zero_copy_bytes + stats.copied_bytes,
        started.elapsed(),
    );
    tracing::debug!(peer = %conn.peer, id = block.block_id, ?stats, "READ_BLOCK sent");

    // The client sends a status after reading the whole range; it may also just close.
    let status = tokio::time::timeout(
        ctx.config.socket_timeout,
        read_delimited_opt::<ClientReadStatusProto, _>(&mut conn.rd, 1024),
    )
    .await;
    match status {
        Ok(Ok(Some(s))) => {
            if s.status == Status::ErrorChecksum as i32 {
                tracing::warn!(peer = %conn.peer, id = block.block_id, "client reported a checksum error");
            }
            Ok(Next::Continue)
        }
        _ => Ok(Next::Close),
    }
}

pub(crate) async fn block_checksum(
    ctx: &Arc<XceiverContext>,
    conn: &mut Conn,
    req: OpBlockChecksumProto,
) -> Result<Next, XceiverError> {
    let block = req.header.block.clone();
    let (ds, b) = (ctx.dataset.clone(), block.clone());
    let res = blocking(move || -> Result<_, crate::error::StorageError> {
        let r = ReplicaReader::open(&ds, &b.pool_id, b.block_id, b.generation_stamp)?;
        let want = match b.num_bytes {
            Some(n) if n > 0 => n,
            _ => r.len(),
        };
        if want > r.len() {
            return Err(crate::error::StorageError::BadReplicaState {
                id: b.block_id,
                msg: format!("replica has {} bytes, fewer than {want}", r.len()),
            });
        }
        Ok((r.checksum(), r.block_crcs(want)?))
    })
    .await?;
    let (spec, crcs) = match res {
        Ok(v) => v,
        Err(e) => {
            tracing::warn!(peer = %conn.peer, id = block.block_id, error = %e, "cannot serve BLOCK_CHECKSUM");
            respond(conn, Status::Error, Some(e.to_string())).await?;
            return Ok(Next::Close);
        }
    };
    let md5 = rhdfs_transfer::md5crc::block_md5_of_raw_crcs(&crcs);
    let resp = BlockOpResponseProto {
        status: Status::Success as i32,
        checksum_response: Some(OpBlockChecksumResponseProto {
            bytes_per_crc: spec.bytes_per_checksum,
            crc_per_block: (crcs.len() / 4) as u64,
            block_checksum: Bytes::copy_from_slice(&md5),
            crc_type: Some(i32::from(spec.kind.code())),
            block_checksum_options: req.block_checksum_options,
        }),
        ..Default::default()
    };
    write_delimited(&mut conn.wr, &resp).await?;
    Ok(Next::Continue)
}
