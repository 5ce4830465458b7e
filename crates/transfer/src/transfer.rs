//! DataNode-to-DataNode replica transfer (WRITE_BLOCK with stage TRANSFER_RBW or
//! TRANSFER_FINALIZED, or any stage with an empty clientName): no connect ack and no
//! per-packet acks; one close ack after the last packet when a clientName is set.

use bytes::BytesMut;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tracing::debug;

use crate::ack::{check_response, read_response};
use crate::config::{TransferConfig, with_timeout};
use crate::error::{Result, TransferError};
use crate::headers::xfer_addr;
use crate::packet::Packet;
use crate::write_params::WriteBlockParams;
use crate::writer::send_write_op;

/// Streams `len` bytes of replica data from `source` (block offset 0 onwards) to
/// `params.pipeline[0]` over `stream`: the op, chunk-aligned packets with seqnos from
/// `params.first_seqno`, the empty last packet, then the close ack if `params.client_name`
/// is set. Returns the stream.
pub async fn transfer_replica<S, R>(
    stream: S,
    params: &WriteBlockParams,
    source: R,
    len: u64,
    cfg: &TransferConfig,
) -> Result<S>
where
    S: AsyncRead + AsyncWrite + Unpin,
    R: AsyncRead + Unpin,
{
    if params.expects_acks() {
        return Err(TransferError::protocol(
            "transfer_replica needs a transfer stage or an empty client name",
        ));
    }
    let mut stream = BufReader::new(stream);
    send_write_op(&mut stream, params, cfg, false).await?;
    let mut source = source;
    let checksum = params.checksum;
    let bpc = checksum.bytes_per_checksum.max(1) as usize;
    let packet_data = checksum.chunks_per_packet(cfg.write_packet_size) * bpc;
    let mut seqno = params.first_seqno;
    let mut offset = 0u64;
    while offset < len {
        let n = usize::try_from(len - offset)
            .unwrap_or(usize::MAX)
            .min(packet_data);
        let mut data = BytesMut::zeroed(n);
        with_timeout(cfg.socket_timeout, "reading replica data", async {
            source.read_exact(&mut data).await?;
            Ok(())
        })
        .await?;
        let packet =
            Packet::with_data(&checksum, offset as i64, seqno, data.freeze(), false, false)?;
        write_frame(&mut stream, &packet, cfg).await?;
        seqno += 1;
        offset += n as u64;
    }
    let last = Packet::empty(offset as i64, seqno, true);
    write_frame(&mut stream, &last, cfg).await?;
    if !params.client_name.is_empty() {
        let resp = with_timeout(
            cfg.socket_timeout,
            "transfer close ack",
            read_response(&mut stream),
        )
        .await?;
        check_response(&resp)?;
    }
    debug!(len, "replica transfer sent");
    Ok(stream.into_inner())
}

/// Connects to `params.pipeline[0]` and runs [`transfer_replica`].
pub async fn transfer_replica_to<R: AsyncRead + Unpin>(
    params: &WriteBlockParams,
    source: R,
    len: u64,
    cfg: &TransferConfig,
) -> Result<()> {
    let first = params
        .pipeline
        .first()
        .ok_or_else(|| TransferError::protocol("transfer needs a target"))?;
    let addr = xfer_addr(first);
    let stream = with_timeout(cfg.connect_timeout, "connect", async {
        Ok(TcpStream::connect(&addr).await?)
    })
    .await?;
    let _ = stream.set_nodelay(true);
    let mut stream = transfer_replica(stream, params, source, len, cfg).await?;
    let _ = stream.shutdown().await;
    Ok(())
}

async fn write_frame<W: AsyncWrite + Unpin>(
    w: &mut W,
    p: &Packet,
    cfg: &TransferConfig,
) -> Result<()> {
    let bytes = p.to_bytes();
    with_timeout(cfg.write_timeout, "sending packet", async {
        w.write_all(&bytes).await?;
        w.flush().await?;
        Ok(())
    })
    .await
}
