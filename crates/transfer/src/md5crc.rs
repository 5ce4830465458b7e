//! MD5-of-CRCs: the per-block checksum a DataNode returns for BLOCK_CHECKSUM, and the
//! client-side file checksum (`MD5-of-<n>MD5-of-<bpc><CRC32C|CRC32>`) built from block MD5s.

use md5::{Digest, Md5};

use crate::checksum::{ChecksumKind, DataChecksum};

/// MD5 over the concatenation of a block's per-chunk CRCs, each 4 bytes big-endian
/// (`raw_crcs` is exactly that concatenation, e.g. a meta file minus its header).
pub fn block_md5_of_raw_crcs(raw_crcs: &[u8]) -> [u8; 16] {
    Md5::digest(raw_crcs).into()
}

/// MD5 over the given per-chunk CRCs written as 4-byte big-endian values.
pub fn block_md5_of_crcs(crcs: &[u32]) -> [u8; 16] {
    let mut h = Md5::new();
    for c in crcs {
        h.update(c.to_be_bytes());
    }
    h.finalize().into()
}

/// Block MD5 and CRC count for `data` (a block's bytes from offset 0), chunked by `checksum`.
/// Returns `(md5, crc_per_block)`.
pub fn block_md5_of_data(checksum: &DataChecksum, data: &[u8]) -> ([u8; 16], u64) {
    let crcs = checksum.compute(data);
    (block_md5_of_crcs(&crcs), crcs.len() as u64)
}

/// A file's MD5-of-MD5-of-CRC checksum as the Java client computes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChecksum {
    pub bytes_per_crc: u32,
    /// 0 for a file of at most one block, else the first block's CRC count.
    pub crc_per_block: u64,
    pub kind: ChecksumKind,
    pub md5: [u8; 16],
}

/// Capacity of a Java `DataOutputBuffer` after writing `len` bytes in 16-byte steps:
/// starts at 32 and doubles when full.
fn java_buffer_capacity(len: usize) -> usize {
    let mut cap = 32usize;
    while cap < len {
        cap *= 2;
    }
    cap
}

impl FileChecksum {
    /// Combines per-block results. `blocks` is, in file order, each block's
    /// (md5, crc_per_block); `bytes_per_crc` and `kind` are taken from the first block.
    /// An empty file gives bpc 0, CRC32, MD5 of 32 zero bytes.
    pub fn from_blocks(bytes_per_crc: u32, kind: ChecksumKind, blocks: &[([u8; 16], u64)]) -> Self {
        let mut buf = Vec::with_capacity(blocks.len() * 16);
        for (md5, _) in blocks {
            buf.extend_from_slice(md5);
        }
        // The Java client digests the whole backing array, zero padding included.
        buf.resize(java_buffer_capacity(buf.len()), 0);
        let md5: [u8; 16] = Md5::digest(&buf).into();
        if blocks.is_empty() {
            return FileChecksum {
                bytes_per_crc: 0,
                crc_per_block: 0,
                kind: ChecksumKind::Crc32,
                md5,
            };
        }
        let crc_per_block = if blocks.len() > 1 { blocks[0].1 } else { 0 };
        FileChecksum {
            bytes_per_crc,
            crc_per_block,
            kind,
            md5,
        }
    }

    /// E.g. `MD5-of-0MD5-of-512CRC32C`.
    pub fn algorithm_name(&self) -> String {
        let kind = match self.kind {
            ChecksumKind::Crc32c => "CRC32C",
            ChecksumKind::Crc32 | ChecksumKind::Null => "CRC32",
        };
        format!(
            "MD5-of-{}MD5-of-{}{}",
            self.crc_per_block, self.bytes_per_crc, kind
        )
    }

    /// int32 bytesPerCRC ‖ int64 crcPerBlock ‖ md5 (28 bytes, big-endian).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(28);
        v.extend_from_slice(&self.bytes_per_crc.to_be_bytes());
        v.extend_from_slice(&self.crc_per_block.to_be_bytes());
        v.extend_from_slice(&self.md5);
        v
    }

    /// Lower-case hex of [`FileChecksum::to_bytes`], as `hadoop fs -checksum` prints it.
    pub fn hex(&self) -> String {
        hex(&self.to_bytes())
    }
}

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}
