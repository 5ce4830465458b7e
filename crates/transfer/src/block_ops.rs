//! Request/response helpers for the smaller ops: READ_BLOCK response and range arithmetic
//! (DataNode side), BLOCK_CHECKSUM (both sides) and TRANSFER_BLOCK (client side).

use bytes::Bytes;
use rhdfs_proto::common::TokenProto;
use rhdfs_proto::hdfs::{
    BlockChecksumOptionsProto, BlockChecksumTypeProto, BlockOpResponseProto, DatanodeInfoProto,
    ExtendedBlockProto, OpBlockChecksumProto, OpBlockChecksumResponseProto, OpTransferBlockProto,
    ReadOpChecksumInfoProto, Status,
};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};

use crate::ack::{check_response, read_response};
use crate::checksum::{ChecksumKind, DataChecksum};
use crate::config::{TransferConfig, with_timeout};
use crate::error::{Result, TransferError};
use crate::headers::{base_header, client_header};
use crate::op::{Op, encode_op};

/// The byte range a DataNode streams for READ_BLOCK(offset, len) of a replica of
/// `replica_len` bytes: `(chunk_offset, end)` where chunk_offset is `offset` rounded down to a
/// chunk and `end` is `offset + len` rounded up to a chunk, capped at the replica length.
/// Errors if the range starts beyond the replica.
pub fn read_range(
    checksum: &DataChecksum,
    offset: u64,
    len: u64,
    replica_len: u64,
) -> Result<(u64, u64)> {
    let end = offset
        .checked_add(len)
        .ok_or_else(|| TransferError::protocol("read range overflows"))?;
    if offset > replica_len || end > replica_len {
        return Err(TransferError::protocol(format!(
            "read of [{offset}, {end}) beyond replica length {replica_len}"
        )));
    }
    let bpc = u64::from(checksum.bytes_per_checksum.max(1));
    let chunk_offset = offset - offset % bpc;
    let end = end.div_ceil(bpc).saturating_mul(bpc).min(replica_len);
    Ok((chunk_offset, end))
}

/// `BlockOpResponseProto{SUCCESS, readOpChecksumInfo{checksum, chunkOffset}}`.
pub fn read_block_response(checksum: &DataChecksum, chunk_offset: u64) -> BlockOpResponseProto {
    BlockOpResponseProto {
        status: Status::Success as i32,
        read_op_checksum_info: Some(ReadOpChecksumInfoProto {
            checksum: checksum.to_proto(),
            chunk_offset,
        }),
        ..Default::default()
    }
}

/// A block's MD5-of-CRCs as BLOCK_CHECKSUM reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockChecksum {
    pub bytes_per_crc: u32,
    pub crc_per_block: u64,
    pub md5: [u8; 16],
    pub kind: ChecksumKind,
}

impl BlockChecksum {
    /// The SUCCESS response carrying this checksum (crcType always set, MD5CRC options).
    pub fn to_response(&self) -> BlockOpResponseProto {
        BlockOpResponseProto {
            status: Status::Success as i32,
            checksum_response: Some(OpBlockChecksumResponseProto {
                bytes_per_crc: self.bytes_per_crc,
                crc_per_block: self.crc_per_block,
                block_checksum: Bytes::copy_from_slice(&self.md5),
                crc_type: Some(self.kind.to_proto()),
                block_checksum_options: Some(md5crc_options()),
            }),
            ..Default::default()
        }
    }

    /// Parses a BLOCK_CHECKSUM response (errors for non-SUCCESS or a missing / malformed
    /// checksum). A missing crcType reads as CRC32, like the Java client's default.
    pub fn from_response(resp: &BlockOpResponseProto) -> Result<Self> {
        check_response(resp)?;
        let c = resp
            .checksum_response
            .as_ref()
            .ok_or_else(|| TransferError::protocol("BLOCK_CHECKSUM response without checksum"))?;
        let md5: [u8; 16] = c.block_checksum.as_ref().try_into().map_err(|_| {
            TransferError::protocol(format!(
                "block checksum of {} bytes, expected 16",
                c.block_checksum.len()
            ))
        })?;
        let kind = match c.crc_type {
            Some(t) => ChecksumKind::from_proto(t)?,
            None => ChecksumKind::Crc32,
        };
        Ok(BlockChecksum {
            bytes_per_crc: c.bytes_per_crc,
            crc_per_block: c.crc_per_block,
            md5,
            kind,
        })
    }
}

fn md5crc_options() -> BlockChecksumOptionsProto {
    BlockChecksumOptionsProto {
        block_checksum_type: Some(BlockChecksumTypeProto::Md5crc as i32),
        stripe_length: Some(0),
    }
}

/// `OpBlockChecksumProto` for an MD5CRC checksum of `block` (numBytes = the length to cover).
pub fn block_checksum_request(
    block: &ExtendedBlockProto,
    token: Option<&TokenProto>,
) -> OpBlockChecksumProto {
    OpBlockChecksumProto {
        header: base_header(block, token),
        block_checksum_options: Some(md5crc_options()),
    }
}

/// Sends BLOCK_CHECKSUM on `stream` and returns the DataNode's answer.
pub async fn request_block_checksum<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    block: &ExtendedBlockProto,
    token: Option<&TokenProto>,
    cfg: &TransferConfig,
) -> Result<BlockChecksum> {
    let req = encode_op(Op::BlockChecksum, &block_checksum_request(block, token));
    send(stream, &req, cfg, "sending BLOCK_CHECKSUM").await?;
    let resp = with_timeout(
        cfg.socket_timeout,
        "BLOCK_CHECKSUM response",
        read_response(stream),
    )
    .await?;
    BlockChecksum::from_response(&resp)
}

/// `OpTransferBlockProto`: copy the replica of `block` to `targets`.
pub fn transfer_block_request(
    block: &ExtendedBlockProto,
    token: Option<&TokenProto>,
    client_name: &str,
    targets: &[DatanodeInfoProto],
    target_storage_types: &[i32],
    target_storage_ids: &[String],
) -> OpTransferBlockProto {
    OpTransferBlockProto {
        header: client_header(block, token, client_name),
        targets: targets.to_vec(),
        target_storage_types: target_storage_types.to_vec(),
        target_storage_ids: target_storage_ids.to_vec(),
    }
}

/// Sends TRANSFER_BLOCK on `stream` (to a DataNode holding the replica) and waits for its
/// answer, which comes after the copy finished.
pub async fn request_transfer_block<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    op: &OpTransferBlockProto,
    cfg: &TransferConfig,
) -> Result<()> {
    let req = encode_op(Op::TransferBlock, op);
    send(stream, &req, cfg, "sending TRANSFER_BLOCK").await?;
    let resp = with_timeout(
        cfg.socket_timeout,
        "TRANSFER_BLOCK response",
        read_response(stream),
    )
    .await?;
    check_response(&resp)
}

async fn send<S: AsyncWrite + Unpin>(
    stream: &mut S,
    req: &[u8],
    cfg: &TransferConfig,
    what: &str,
) -> Result<()> {
    with_timeout(cfg.write_timeout, what, async {
        stream.write_all(req).await?;
        stream.flush().await?;
        Ok(())
    })
    .await
}
