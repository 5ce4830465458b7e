//! Copying a replica to other DataNodes: WRITE_BLOCK as a pipeline head with stage TRANSFER_RBW /
//! TRANSFER_FINALIZED (TRANSFER_BLOCK from a client) or PIPELINE_SETUP_CREATE with no client
//! name (DNA_TRANSFER replication). No acks are exchanged except the close ack of a transfer
//! that carries a client name.

use std::sync::Arc;

use bytes::Bytes;
use rhdfs_proto::common::TokenProto;
use rhdfs_proto::hdfs::op_write_block_proto::BlockConstructionStage as Stage;
use rhdfs_proto::hdfs::{
    BaseHeaderProto, BlockOpResponseProto, ClientOperationHeaderProto, DatanodeInfoProto,
    ExtendedBlockProto, OpTransferBlockProto, OpWriteBlockProto, Status,
};
use rhdfs_transfer::op::{DEFAULT_MAX_MESSAGE_LEN, read_delimited};
use rhdfs_transfer::{Op, Packet, PacketHeader, write_op};
use tokio::io::{AsyncWriteExt, BufWriter};
use tokio::net::TcpStream;

use super::{
    Conn, Next, XceiverContext, XceiverError, blocking, respond, spec_to_proto, timed, xfer_addr,
};
use crate::reader::ReplicaReader;
use crate::replica::ReplicaState;

const SEND_PACKET_SIZE: u64 = 64 * 1024;

/// A replica to copy to `targets` (the first is connected to; the rest form its pipeline).
#[derive(Debug, Clone)]
pub struct SendRequest {
    pub bpid: String,
    pub block_id: u64,
    /// The replica must have at least this generation stamp.
    pub min_gs: u64,
    pub targets: Vec<DatanodeInfoProto>,
    pub target_storage_types: Vec<i32>,
    pub target_storage_ids: Vec<String>,
    /// TRANSFER_RBW / TRANSFER_FINALIZED, or PIPELINE_SETUP_CREATE for replication.
    pub stage: Stage,
    /// Empty for DataNode-initiated replication.
    pub client_name: String,
}

/// Streams the replica to `req.targets[0]`; returns the number of bytes sent.
pub async fn send_replica(ctx: &XceiverContext, req: SendRequest) -> Result<u64, XceiverError> {
    let target = req
        .targets
        .first()
        .ok_or_else(|| XceiverError::Other("transfer without targets".into()))?;
    let addr = xfer_addr(target);
    let (ds, bpid, id, gs) = (
        ctx.dataset.clone(),
        req.bpid.clone(),
        req.block_id,
        req.min_gs,
    );
    let reader = blocking(move || ReplicaReader::open(&ds, &bpid, id, gs)).await??;
    let len = reader.len();
    let info = reader.info().clone();
    let spec = reader.checksum();
    let t = ctx.config.socket_timeout;
    let sock = timed(t, TcpStream::connect(&addr)).await?;
    let _ = sock.set_nodelay(true);
    let (mut rd, wr) = sock.into_split();
    let mut wr = BufWriter::with_capacity(128 * 1024, wr);
    let op = OpWriteBlockProto {
        header: ClientOperationHeaderProto {
            base_header: BaseHeaderProto {
                block: ExtendedBlockProto {
                    pool_id: req.bpid.clone(),
                    block_id: info.id,
                    generation_stamp: info.gs,
                    num_bytes: Some(len),
                },
                token: Some(TokenProto::default()),
                trace_info: None,
            },
            client_name: req.client_name.clone(),
        },
        targets: req.targets.iter().skip(1).cloned().collect(),
        source: None,
        stage: req.stage as i32,
        pipeline_size: req.targets.len() as u32,
        min_bytes_rcvd: len,
        max_bytes_rcvd: len,
        latest_generation_stamp: info.gs,
        requested_checksum: spec_to_proto(spec),
        storage_type: req.target_storage_types.first().copied(),
        target_storage_types: req.target_storage_types.iter().skip(1).copied().collect(),
        storage_id: req.target_storage_ids.first().cloned(),
        target_storage_ids: req.target_storage_ids.iter().skip(1).cloned().collect(),
        ..Default::default()
    };
    timed(t, write_op(&mut wr, Op::WriteBlock, &op)).await?;
    let bpc = spec.bpc();
    let csize = spec.kind.size() as u64;
    let step = (SEND_PACKET_SIZE / (bpc + csize)).max(1) * bpc;
    let reader = Arc::new(reader);
    let mut pos = 0u64;
    let mut seqno = 0i64;
    while pos < len {
        let upto = (pos + step).min(len);
        let r = reader.clone();
        let (data, sums) = blocking(move || r.read(pos, upto)).await??;
        let pkt = Packet {
            header: PacketHeader {
                offset_in_block: pos as i64,
                seqno,
                last_packet_in_block: false,
                data_len: data.len() as i32,
                sync_block: false,
            },
            checksums: Bytes::from(sums),
            data: Bytes::from(data),
        };
        timed(t, wr.write_all(&pkt.to_bytes())).await?;
        pos = upto;
        seqno += 1;
    }
    timed(
        t,
        wr.write_all(&Packet::empty(len as i64, seqno, true).to_bytes()),
    )
    .await?;
    timed(t, wr.flush()).await?;
    let transfer = matches!(req.stage, Stage::TransferRbw | Stage::TransferFinalized);
    if transfer && !req.client_name.is_empty() {
        let resp: BlockOpResponseProto =
            timed(t, read_delimited(&mut rd, DEFAULT_MAX_MESSAGE_LEN)).await?;
        if resp.status != Status::Success as i32 {
            return Err(XceiverError::Other(format!(
                "target {addr} answered status {} to the transfer of blk_{}: {}",
                resp.status,
                info.id,
                resp.message.unwrap_or_default()
            )));
        }
    }
    let _ = wr.shutdown().await;
    tracing::info!(id = info.id, gs = info.gs, len, target = %addr, stage = ?req.stage, "replica sent");
    Ok(len)
}

/// TRANSFER_BLOCK from a client recovering its pipeline.
pub(crate) async fn transfer_block(
    ctx: &Arc<XceiverContext>,
    conn: &mut Conn,
    req: OpTransferBlockProto,
) -> Result<Next, XceiverError> {
    let header = &req.header;
    let block = header.base_header.block.clone();
    let stage = match ctx.dataset.get(&block.pool_id, block.block_id) {
        Some(r) if r.state == ReplicaState::Finalized => Stage::TransferFinalized,
        Some(_) => Stage::TransferRbw,
        None => {
            let msg = format!("replica blk_{} not found", block.block_id);
            respond(conn, Status::Error, Some(msg)).await?;
            return Ok(Next::Close);
        }
    };
    let send = SendRequest {
        bpid: block.pool_id.clone(),
        block_id: block.block_id,
        min_gs: block.generation_stamp,
        targets: req.targets.clone(),
        target_storage_types: req.target_storage_types.clone(),
        target_storage_ids: req.target_storage_ids.clone(),
        stage,
        client_name: header.client_name.clone(),
    };
    match send_replica(ctx, send).await {
        Ok(_) => {
            respond(conn, Status::Success, None).await?;
            Ok(Next::Continue)
        }
        Err(e) => {
            tracing::warn!(peer = %conn.peer, id = block.block_id, error = %e, "TRANSFER_BLOCK failed");
            respond(conn, Status::Error, Some(e.to_string())).await?;
            Ok(Next::Close)
        }
    }
}
