//! File checksums (`hadoop fs -checksum`): BLOCK_CHECKSUM from one replica of every block,
//! combined as Hadoop's MD5-of-MD5-of-CRC.

use rhdfs_proto::hdfs::{BlockChecksumOptionsProto, OpBlockChecksumProto};
use rhdfs_transfer::ack::{check_response, read_response};
use rhdfs_transfer::headers::base_header;
use rhdfs_transfer::op::{Op, encode_op};
use rhdfs_transfer::{ChecksumKind, FileChecksum, TransferError};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tracing::warn;

use crate::datanode::{block_name, xfer_addr};
use crate::error::{ClientError, Result};
use crate::filesystem::{FileSystem, WHOLE_FILE};

/// BlockChecksumTypeProto MD5CRC.
const MD5CRC: i32 = 1;

struct BlockResult {
    md5: [u8; 16],
    crc_per_block: u64,
    bytes_per_crc: u32,
    kind: ChecksumKind,
}

impl FileSystem {
    /// The file's MD5-of-MD5-of-CRC checksum, as `hadoop fs -checksum` prints it.
    pub async fn file_checksum(&self, p: &str) -> Result<FileChecksum> {
        let src = self.resolve(p)?;
        let lbs = self.located_blocks(&src, 0, WHOLE_FILE).await?;
        let mut parts = Vec::new();
        let mut first: Option<(u32, ChecksumKind)> = None;
        for lb in &lbs.blocks {
            if lb.b.num_bytes.unwrap_or(0) == 0 {
                continue;
            }
            let mut result = None;
            let mut last_err = String::from("no locations");
            for dn in &lb.locs {
                let addr = xfer_addr(dn, self.inner.conf.use_datanode_hostname);
                match block_checksum(&addr, lb, &self.inner.conf.transfer).await {
                    Ok(r) => {
                        result = Some(r);
                        break;
                    }
                    Err(e) => {
                        warn!(
                            "BLOCK_CHECKSUM of {} from {addr} failed: {e}",
                            block_name(&lb.b)
                        );
                        last_err = e.to_string();
                    }
                }
            }
            let r = result.ok_or_else(|| {
                ClientError::Failed(format!(
                    "Fail to get block MD5 for {}: {last_err}",
                    block_name(&lb.b)
                ))
            })?;
            match first {
                None => first = Some((r.bytes_per_crc, r.kind)),
                Some((bpc, _)) if bpc != r.bytes_per_crc => {
                    return Err(ClientError::Failed(format!(
                        "Byte-per-checksum not matched: bpc={} but bytesPerCRC={bpc}",
                        r.bytes_per_crc
                    )));
                }
                _ => {}
            }
            parts.push((r.md5, r.crc_per_block));
        }
        let (bpc, kind) = first.unwrap_or((0, ChecksumKind::Crc32));
        Ok(FileChecksum::from_blocks(bpc, kind, &parts))
    }
}

async fn block_checksum(
    addr: &str,
    lb: &rhdfs_proto::hdfs::LocatedBlockProto,
    cfg: &rhdfs_transfer::TransferConfig,
) -> std::result::Result<BlockResult, TransferError> {
    let mut s = tokio::time::timeout(cfg.connect_timeout, TcpStream::connect(addr))
        .await
        .map_err(|_| TransferError::Timeout(format!("connect to {addr}")))??;
    let op = OpBlockChecksumProto {
        header: base_header(&lb.b, Some(&lb.block_token)),
        block_checksum_options: Some(BlockChecksumOptionsProto {
            block_checksum_type: Some(MD5CRC),
            stripe_length: Some(0),
        }),
    };
    s.write_all(&encode_op(Op::BlockChecksum, &op)).await?;
    s.flush().await?;
    let resp = tokio::time::timeout(cfg.socket_timeout, read_response(&mut s))
        .await
        .map_err(|_| TransferError::Timeout(format!("BLOCK_CHECKSUM response from {addr}")))??;
    check_response(&resp)?;
    let c = resp.checksum_response.ok_or_else(|| {
        TransferError::protocol("BLOCK_CHECKSUM response without checksumResponse")
    })?;
    let md5: [u8; 16] = c
        .block_checksum
        .as_ref()
        .try_into()
        .map_err(|_| TransferError::protocol("block checksum is not 16 bytes"))?;
    let kind = match c.crc_type {
        Some(t) => ChecksumKind::from_proto(t)?,
        None => ChecksumKind::Crc32,
    };
    Ok(BlockResult {
        md5,
        crc_per_block: c.crc_per_block,
        bytes_per_crc: c.bytes_per_crc,
        kind,
    })
}
