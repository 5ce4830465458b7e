//! Op framing: `uint16 version (28) | uint8 op | varint-delimited Op*Proto`, and the
//! varint-delimited message codec used for every proto on the data-transfer socket.

use bytes::{BufMut, BytesMut};
use prost::Message;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::error::{Result, TransferError};

/// `DataTransferProtocol.DATA_TRANSFER_VERSION`.
pub const DATA_TRANSFER_VERSION: u16 = 28;

/// First two bytes of a SASL-wrapped data-transfer connection (0xDEADBEEF magic).
pub const SASL_MAGIC_PREFIX: u16 = 0xDEAD;

/// Default cap on a delimited message read from the network.
pub const DEFAULT_MAX_MESSAGE_LEN: usize = 4 * 1024 * 1024;

/// Data-transfer op codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Op {
    WriteBlock = 80,
    ReadBlock = 81,
    ReadMetadata = 82,
    ReplaceBlock = 83,
    CopyBlock = 84,
    BlockChecksum = 85,
    TransferBlock = 86,
    RequestShortCircuitFds = 87,
    ReleaseShortCircuitFds = 88,
    RequestShortCircuitShm = 89,
    BlockGroupChecksum = 90,
    Custom = 127,
}

impl Op {
    pub fn from_code(code: u8) -> Option<Op> {
        Some(match code {
            80 => Op::WriteBlock,
            81 => Op::ReadBlock,
            82 => Op::ReadMetadata,
            83 => Op::ReplaceBlock,
            84 => Op::CopyBlock,
            85 => Op::BlockChecksum,
            86 => Op::TransferBlock,
            87 => Op::RequestShortCircuitFds,
            88 => Op::ReleaseShortCircuitFds,
            89 => Op::RequestShortCircuitShm,
            90 => Op::BlockGroupChecksum,
            127 => Op::Custom,
            _ => return None,
        })
    }

    pub fn code(self) -> u8 {
        self as u8
    }
}

/// Reads the version and op code that start a request. A clean EOF before the first byte
/// (the peer closed a reused connection) gives `Ok(None)`; a wrong version (including a SASL
/// handshake) or an unknown op is a protocol error. The op's proto follows; read it with
/// [`read_delimited`].
pub async fn read_op<R: AsyncRead + Unpin>(r: &mut R) -> Result<Option<Op>> {
    let mut first = [0u8; 1];
    if r.read(&mut first).await? == 0 {
        return Ok(None);
    }
    let mut rest = [0u8; 2];
    r.read_exact(&mut rest).await?;
    let version = u16::from_be_bytes([first[0], rest[0]]);
    if version == SASL_MAGIC_PREFIX {
        return Err(TransferError::protocol(
            "SASL data-transfer handshake is not supported",
        ));
    }
    if version != DATA_TRANSFER_VERSION {
        return Err(TransferError::protocol(format!(
            "unsupported data transfer version {version}, expected {DATA_TRANSFER_VERSION}"
        )));
    }
    Op::from_code(rest[1])
        .map(Some)
        .ok_or_else(|| TransferError::protocol(format!("unknown op code {}", rest[1])))
}

/// Encodes version, op and the delimited request.
pub fn encode_op<M: Message>(op: Op, msg: &M) -> BytesMut {
    let len = msg.encoded_len();
    let mut buf = BytesMut::with_capacity(3 + prost::length_delimiter_len(len) + len);
    buf.put_u16(DATA_TRANSFER_VERSION);
    buf.put_u8(op.code());
    // Encoding into a BytesMut cannot run out of space.
    let _ = msg.encode_length_delimited(&mut buf);
    buf
}

/// Writes version, op and the delimited request, then flushes.
pub async fn write_op<W: AsyncWrite + Unpin, M: Message>(w: &mut W, op: Op, msg: &M) -> Result<()> {
    w.write_all(&encode_op(op, msg)).await?;
    w.flush().await?;
    Ok(())
}

/// Reads a varint length prefix. `Ok(None)` on EOF before its first byte.
async fn read_varint_len<R: AsyncRead + Unpin>(r: &mut R) -> Result<Option<u64>> {
    let mut value: u64 = 0;
    for i in 0..10 {
        let mut b = [0u8; 1];
        if r.read(&mut b).await? == 0 {
            if i == 0 {
                return Ok(None);
            }
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "EOF inside a length prefix",
            )
            .into());
        }
        value |= u64::from(b[0] & 0x7f) << (7 * i);
        if b[0] & 0x80 == 0 {
            return Ok(Some(value));
        }
    }
    Err(TransferError::protocol("length prefix varint too long"))
}

/// Reads one varint-delimited message of at most `max_len` bytes; EOF before the message
/// is `Ok(None)`.
pub async fn read_delimited_opt<M, R>(r: &mut R, max_len: usize) -> Result<Option<M>>
where
    M: Message + Default,
    R: AsyncRead + Unpin,
{
    let Some(len) = read_varint_len(r).await? else {
        return Ok(None);
    };
    if len > max_len as u64 {
        return Err(TransferError::protocol(format!(
            "message of {len} bytes exceeds the limit of {max_len}"
        )));
    }
    let mut buf = vec![0u8; len as usize];
    r.read_exact(&mut buf).await?;
    M::decode(buf.as_slice())
        .map(Some)
        .map_err(|e| TransferError::protocol(format!("bad message: {e}")))
}

/// Reads one varint-delimited message of at most `max_len` bytes; EOF is an I/O error.
pub async fn read_delimited<M, R>(r: &mut R, max_len: usize) -> Result<M>
where
    M: Message + Default,
    R: AsyncRead + Unpin,
{
    read_delimited_opt(r, max_len).await?.ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "connection closed while waiting for a message",
        )
        .into()
    })
}

/// Writes one varint-delimited message and flushes.
pub async fn write_delimited<M: Message, W: AsyncWrite + Unpin>(w: &mut W, msg: &M) -> Result<()> {
    w.write_all(&msg.encode_length_delimited_to_vec()).await?;
    w.flush().await?;
    Ok(())
}
