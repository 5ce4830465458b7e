//! Client side of READ_BLOCK: send the op, check the response, stream packets verifying CRCs,
//! return exactly the bytes of `[offset, offset + len)` and send the final read status.

use std::os::fd::AsRawFd;

use bytes::{Bytes, BytesMut};
use rhdfs_proto::common::TokenProto;
use rhdfs_proto::hdfs::{
    BlockOpResponseProto, CachingStrategyProto, ExtendedBlockProto, OpReadBlockProto, Status,
};
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::net::TcpStream;
use tracing::debug;

use crate::ack::{check_response, read_response, write_client_read_status};
use crate::checksum::{ChecksumKind, DataChecksum};
use crate::config::{TransferConfig, with_timeout};
use crate::error::{Result, TransferError};
use crate::headers::client_header;
use crate::op::{Op, encode_op};
use crate::packet_rx::PacketRx;

/// What to read.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadBlockParams {
    pub block: ExtendedBlockProto,
    /// Block token; `None` sends an empty token (security off).
    pub token: Option<TokenProto>,
    pub client_name: String,
    /// First byte, as an offset in the block.
    pub offset: u64,
    /// Number of bytes.
    pub len: u64,
    /// Ask for checksums and verify them (`sendChecksums`).
    pub verify_checksum: bool,
}

impl ReadBlockParams {
    pub fn new(
        block: ExtendedBlockProto,
        client_name: impl Into<String>,
        offset: u64,
        len: u64,
    ) -> Self {
        ReadBlockParams {
            block,
            token: None,
            client_name: client_name.into(),
            offset,
            len,
            verify_checksum: true,
        }
    }

    /// The `OpReadBlockProto` these parameters describe.
    pub fn to_proto(&self) -> OpReadBlockProto {
        OpReadBlockProto {
            header: client_header(&self.block, self.token.as_ref(), &self.client_name),
            offset: self.offset,
            len: self.len,
            send_checksums: Some(self.verify_checksum),
            caching_strategy: Some(CachingStrategyProto::default()),
        }
    }
}

/// A READ_BLOCK in progress over `S`.
#[derive(Debug)]
pub struct BlockReader<S> {
    stream: BufReader<S>,
    cfg: TransferConfig,
    checksum: DataChecksum,
    verify: bool,
    /// Requested range [start, end).
    start: u64,
    end: u64,
    /// Block offset of the next byte the DataNode sends.
    pos: u64,
    /// The last packet was read and the read status sent.
    done: bool,
    failed: bool,
    /// Received bytes packets are split from (a packet's bytes share its memory).
    rx: PacketRx,
}

impl BlockReader<TcpStream> {
    /// Connects to `addr` ("host:port", a DataNode's xfer address) and starts the read.
    pub async fn connect(
        addr: &str,
        params: &ReadBlockParams,
        cfg: &TransferConfig,
    ) -> Result<Self> {
        let stream = with_timeout(cfg.connect_timeout, "connect", async {
            Ok(TcpStream::connect(addr).await?)
        })
        .await?;
        let _ = stream.set_nodelay(true);
        Self::start_tcp(stream, params, cfg).await
    }

    /// [`BlockReader::start`] on a TCP connection (a new or a pooled one): its packets are
    /// read with a raised receive low-water mark (see `packet_rx`).
    pub async fn start_tcp(
        stream: TcpStream,
        params: &ReadBlockParams,
        cfg: &TransferConfig,
    ) -> Result<Self> {
        let fd = stream.as_raw_fd();
        let mut r = Self::start(stream, params, cfg).await?;
        r.rx = PacketRx::new(Some(fd));
        Ok(r)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> BlockReader<S> {
    /// Sends READ_BLOCK on `stream` and reads the DataNode's response. A non-SUCCESS response
    /// is [`TransferError::Remote`].
    pub async fn start(stream: S, params: &ReadBlockParams, cfg: &TransferConfig) -> Result<Self> {
        let mut stream = BufReader::new(stream);
        let req = encode_op(Op::ReadBlock, &params.to_proto());
        with_timeout(cfg.write_timeout, "sending READ_BLOCK", async {
            use tokio::io::AsyncWriteExt;
            stream.write_all(&req).await?;
            stream.flush().await?;
            Ok(())
        })
        .await?;
        let resp: BlockOpResponseProto = with_timeout(
            cfg.socket_timeout,
            "READ_BLOCK response",
            read_response(&mut stream),
        )
        .await?;
        check_response(&resp)?;
        let info = resp.read_op_checksum_info.ok_or_else(|| {
            TransferError::protocol("READ_BLOCK response without readOpChecksumInfo")
        })?;
        let checksum = DataChecksum::from_proto(&info.checksum)?;
        let chunk_offset = info.chunk_offset;
        let bpc = u64::from(checksum.bytes_per_checksum);
        if chunk_offset > params.offset || (bpc > 0 && chunk_offset + bpc <= params.offset) {
            return Err(TransferError::protocol(format!(
                "READ_BLOCK chunkOffset {chunk_offset} invalid for offset {} with {bpc}-byte chunks",
                params.offset
            )));
        }
        let end = params
            .offset
            .checked_add(params.len)
            .ok_or_else(|| TransferError::protocol("read range overflows"))?;
        Ok(BlockReader {
            stream,
            cfg: cfg.clone(),
            checksum,
            verify: params.verify_checksum && checksum.kind != ChecksumKind::Null,
            start: params.offset,
            end,
            pos: chunk_offset,
            done: false,
            failed: false,
            rx: PacketRx::new(None),
        })
    }

    /// The checksum the DataNode uses for this replica.
    pub fn checksum(&self) -> DataChecksum {
        self.checksum
    }

    /// True once the whole range was read and the read status sent: the connection may carry
    /// another op.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Bytes of the requested range not yet returned.
    pub fn remaining(&self) -> u64 {
        self.end.saturating_sub(self.pos.max(self.start))
    }

    /// The next piece of the requested range, or `None` when it has all been returned (then the
    /// read status has been sent). A CRC mismatch is [`TransferError::Checksum`]; the
    /// DataNode is told ERROR_CHECKSUM.
    pub async fn next_chunk(&mut self) -> Result<Option<Bytes>> {
        loop {
            if self.done {
                return Ok(None);
            }
            if self.failed {
                return Err(TransferError::protocol("block reader already failed"));
            }
            match self.next_packet_piece().await {
                Ok(Some(b)) if b.is_empty() => continue,
                Ok(other) => return Ok(other),
                Err(e) => {
                    self.failed = true;
                    return Err(e);
                }
            }
        }
    }

    async fn next_packet_piece(&mut self) -> Result<Option<Bytes>> {
        let data_left = self.end.saturating_sub(self.pos);
        let packet = with_timeout(
            self.cfg.socket_timeout,
            "READ_BLOCK packet",
            self.rx
                .next(&mut self.stream, self.cfg.max_packet_size, data_left),
        )
        .await?;
        let h = packet.header;
        let data_len = packet.data.len() as u64;
        if data_len > 0 && u64::try_from(h.offset_in_block).ok() != Some(self.pos) {
            return Err(TransferError::protocol(format!(
                "packet at offset {}, expected {}",
                h.offset_in_block, self.pos
            )));
        }
        packet.validate(&self.checksum)?;
        if self.verify
            && let Err(e) = packet.verify(&self.checksum)
        {
            if matches!(e, TransferError::Checksum { .. }) {
                let _ = with_timeout(
                    self.cfg.write_timeout,
                    "sending read status",
                    write_client_read_status(self.stream.get_mut(), Status::ErrorChecksum),
                )
                .await;
            }
            return Err(e);
        }
        let pkt_start = self.pos;
        let pkt_end = pkt_start + data_len;
        self.pos = pkt_end;
        let from = self.start.clamp(pkt_start, pkt_end);
        let to = self.end.clamp(pkt_start, pkt_end);
        let piece = packet
            .data
            .slice((from - pkt_start) as usize..(to - pkt_start) as usize);
        if h.last_packet_in_block {
            if self.pos < self.end {
                return Err(TransferError::protocol(format!(
                    "block ended at offset {} before the requested end {}",
                    self.pos, self.end
                )));
            }
            let status = if self.verify {
                Status::ChecksumOk
            } else {
                Status::Success
            };
            with_timeout(
                self.cfg.write_timeout,
                "sending read status",
                write_client_read_status(self.stream.get_mut(), status),
            )
            .await?;
            self.done = true;
            debug!(end = self.end, "READ_BLOCK complete");
            if piece.is_empty() {
                return Ok(None);
            }
        }
        Ok(Some(piece))
    }

    /// Reads the whole remaining range.
    pub async fn read_all(&mut self) -> Result<Bytes> {
        let mut out = BytesMut::with_capacity(usize::try_from(self.remaining()).unwrap_or(0));
        while let Some(b) = self.next_chunk().await? {
            out.extend_from_slice(&b);
        }
        Ok(out.freeze())
    }

    /// The stream, when it can carry another op: the whole range was read, the status sent, and
    /// nothing unread is buffered.
    pub fn into_reusable(mut self) -> Option<S> {
        self.rx.reset_low_water();
        (self.done && !self.failed && self.stream.buffer().is_empty() && self.rx.buffered() == 0)
            .then(|| self.stream.into_inner())
    }

    /// The underlying stream; reusable for another op only if [`BlockReader::is_done`].
    pub fn into_inner(mut self) -> S {
        self.rx.reset_low_water();
        self.stream.into_inner()
    }
}

/// Reads `[params.offset, params.offset + params.len)` over `stream` and returns the bytes
/// and the stream (ready for another op).
pub async fn read_block<S: AsyncRead + AsyncWrite + Unpin>(
    stream: S,
    params: &ReadBlockParams,
    cfg: &TransferConfig,
) -> Result<(Bytes, S)> {
    let mut r = BlockReader::start(stream, params, cfg).await?;
    let data = r.read_all().await?;
    Ok((data, r.into_inner()))
}
