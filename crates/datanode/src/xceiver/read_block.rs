//! READ_BLOCK (any offset and length, chunk-aligned packets of ≤ 64 KiB, a final empty packet,
//! an optional client status) and BLOCK_CHECKSUM (MD5 of the chunk CRCs).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use rhdfs_proto::hdfs::{
    BlockOpResponseProto, ClientReadStatusProto, OpBlockChecksumProto,
    OpBlockChecksumResponseProto, OpReadBlockProto, ReadOpChecksumInfoProto, Status,
};
use rhdfs_transfer::op::read_delimited_opt;
use rhdfs_transfer::{Packet, PacketHeader, write_delimited};
use tokio::io::AsyncWriteExt;

use super::{Conn, Next, XceiverContext, XceiverError, blocking, respond, spec_to_proto};
use crate::checksum::{ChecksumSpec, ChecksumType};
use crate::reader::ReplicaReader;

/// Data bytes per read packet are the most whole chunks fitting in this (with their CRCs).
const READ_PACKET_SIZE: u64 = 64 * 1024;
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

pub(crate) async fn read_block(
    ctx: &Arc<XceiverContext>,
    conn: &mut Conn,
    req: OpReadBlockProto,
) -> Result<Next, XceiverError> {
    let block = req.header.base_header.block.clone();
    let (offset, len) = (req.offset, req.len);
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

    let csize = wire.kind.size() as u64;
    let chunks_per_packet = (READ_PACKET_SIZE / (bpc + csize)).max(1);
    let step = chunks_per_packet * bpc;
    let reader = Arc::new(reader);
    let mut pos = chunk_offset;
    let mut seqno = 0i64;
    while pos < end {
        let upto = (pos + step).min(end);
        let r = reader.clone();
        let io =
            crate::metrics::IoSample::start(&ctx.config.metrics, &ctx.dataset, r.info().volume);
        let (data, sums) = blocking(move || {
            let out = r.read(pos, upto);
            io.finish(crate::metrics::IoKind::Read);
            out
        })
        .await??;
        let pkt = Packet {
            header: PacketHeader {
                offset_in_block: pos as i64,
                seqno,
                last_packet_in_block: false,
                data_len: data.len() as i32,
                sync_block: false,
            },
            checksums: if send_sums {
                Bytes::from(sums)
            } else {
                Bytes::new()
            },
            data: Bytes::from(data),
        };
        conn.wr.write_all(&pkt.to_bytes()).await?;
        crate::metrics::Activity::add(&ctx.activity.bytes_read, pkt.data.len() as u64);
        seqno += 1;
        pos = upto;
    }
    let last = Packet::empty(end as i64, seqno, true);
    conn.wr.write_all(&last.to_bytes()).await?;
    conn.wr.flush().await?;
    crate::metrics::Activity::add(&ctx.activity.blocks_read, 1);

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
