//! Per-chunk data checksums (CRC32 / CRC32C / none) and the 7-byte meta file header.

use bytes::BufMut;
use rhdfs_proto::hdfs::{ChecksumProto, ChecksumTypeProto};

use crate::crc32c_lanes::crc32c_chunks;
use crate::error::{Result, TransferError};

/// Size in bytes of one stored checksum for CRC kinds.
pub const CRC_SIZE: usize = 4;

/// Default chunk size (`dfs.bytes-per-checksum`).
pub const DEFAULT_BYTES_PER_CHECKSUM: u32 = 512;

/// The checksum algorithm. Its numeric value is the same in `ChecksumTypeProto` and in the
/// meta file header: 0 NULL, 1 CRC32, 2 CRC32C.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChecksumKind {
    Null,
    Crc32,
    Crc32c,
}

impl ChecksumKind {
    /// From the `ChecksumTypeProto` value (also the meta header type byte).
    pub fn from_proto(v: i32) -> Result<Self> {
        match v {
            0 => Ok(ChecksumKind::Null),
            1 => Ok(ChecksumKind::Crc32),
            2 => Ok(ChecksumKind::Crc32c),
            other => Err(TransferError::protocol(format!(
                "unknown checksum type {other}"
            ))),
        }
    }

    /// The `ChecksumTypeProto` value.
    pub fn to_proto(self) -> i32 {
        match self {
            ChecksumKind::Null => 0,
            ChecksumKind::Crc32 => 1,
            ChecksumKind::Crc32c => 2,
        }
    }

    /// Bytes per stored checksum: 0 for NULL, 4 otherwise.
    pub fn size(self) -> usize {
        match self {
            ChecksumKind::Null => 0,
            ChecksumKind::Crc32 | ChecksumKind::Crc32c => CRC_SIZE,
        }
    }

    /// Hadoop's name for the type, as used in file checksum algorithm names.
    pub fn name(self) -> &'static str {
        match self {
            ChecksumKind::Null => "NULL",
            ChecksumKind::Crc32 => "CRC32",
            ChecksumKind::Crc32c => "CRC32C",
        }
    }

    /// CRC of `data` (0 for NULL).
    pub fn crc(self, data: &[u8]) -> u32 {
        match self {
            ChecksumKind::Null => 0,
            ChecksumKind::Crc32 => crc32fast::hash(data),
            ChecksumKind::Crc32c => crc32c::crc32c(data),
        }
    }
}

impl From<ChecksumKind> for ChecksumTypeProto {
    fn from(k: ChecksumKind) -> Self {
        match k {
            ChecksumKind::Null => ChecksumTypeProto::ChecksumNull,
            ChecksumKind::Crc32 => ChecksumTypeProto::ChecksumCrc32,
            ChecksumKind::Crc32c => ChecksumTypeProto::ChecksumCrc32c,
        }
    }
}

impl From<ChecksumTypeProto> for ChecksumKind {
    fn from(t: ChecksumTypeProto) -> Self {
        match t {
            ChecksumTypeProto::ChecksumNull => ChecksumKind::Null,
            ChecksumTypeProto::ChecksumCrc32 => ChecksumKind::Crc32,
            ChecksumTypeProto::ChecksumCrc32c => ChecksumKind::Crc32c,
        }
    }
}

/// Checksum algorithm plus chunk size, as negotiated per block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DataChecksum {
    pub kind: ChecksumKind,
    pub bytes_per_checksum: u32,
}

impl Default for DataChecksum {
    /// CRC32C over 512-byte chunks, the HDFS default.
    fn default() -> Self {
        DataChecksum {
            kind: ChecksumKind::Crc32c,
            bytes_per_checksum: DEFAULT_BYTES_PER_CHECKSUM,
        }
    }
}

impl DataChecksum {
    pub fn new(kind: ChecksumKind, bytes_per_checksum: u32) -> Self {
        DataChecksum {
            kind,
            bytes_per_checksum,
        }
    }

    /// From `ChecksumProto{type, bytesPerChecksum}`.
    pub fn from_proto(p: &ChecksumProto) -> Result<Self> {
        let c = DataChecksum::new(ChecksumKind::from_proto(p.r#type)?, p.bytes_per_checksum);
        c.validate()?;
        Ok(c)
    }

    /// To `ChecksumProto`.
    pub fn to_proto(&self) -> ChecksumProto {
        ChecksumProto {
            r#type: self.kind.to_proto(),
            bytes_per_checksum: self.bytes_per_checksum,
        }
    }

    /// Checks that the chunk size is usable (non-zero unless the kind is NULL).
    pub fn validate(&self) -> Result<()> {
        if self.bytes_per_checksum == 0 && self.kind != ChecksumKind::Null {
            return Err(TransferError::protocol("bytesPerChecksum is 0"));
        }
        Ok(())
    }

    /// Bytes per stored checksum (0 or 4).
    pub fn checksum_size(&self) -> usize {
        self.kind.size()
    }

    pub(crate) fn bpc(&self) -> usize {
        (self.bytes_per_checksum as usize).max(1)
    }

    /// Number of chunks `data_len` bytes are cut into, counting from the start of the data.
    pub fn chunk_count(&self, data_len: usize) -> usize {
        if self.kind == ChecksumKind::Null {
            return 0;
        }
        data_len.div_ceil(self.bpc())
    }

    /// Bytes of checksums for `data_len` bytes of data.
    pub fn checksum_len(&self, data_len: usize) -> usize {
        self.chunk_count(data_len) * self.checksum_size()
    }

    /// CRC of one chunk (any length, e.g. a chunk that starts mid-chunk in an unaligned packet
    /// covers only its own bytes).
    pub fn chunk_crc(&self, chunk: &[u8]) -> u32 {
        self.kind.crc(chunk)
    }

    /// One CRC per chunk of `data`, chunking from the start of `data` (the last chunk may be
    /// short). Empty for NULL.
    pub fn compute(&self, data: &[u8]) -> Vec<u32> {
        if self.kind == ChecksumKind::Null {
            return Vec::new();
        }
        data.chunks(self.bpc()).map(|c| self.kind.crc(c)).collect()
    }

    /// Appends the checksums of `data` (4-byte big-endian each) to `out`.
    pub fn compute_into<B: BufMut>(&self, data: &[u8], out: &mut B) {
        if self.kind == ChecksumKind::Null {
            return;
        }
        if self.kind == ChecksumKind::Crc32c {
            crc32c_chunks(data, self.bpc(), |_, c| {
                out.put_u32(c);
                true
            });
            return;
        }
        for c in data.chunks(self.bpc()) {
            out.put_u32(self.kind.crc(c));
        }
    }

    /// Checksums of `data` as bytes.
    pub fn compute_bytes(&self, data: &[u8]) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.checksum_len(data.len()));
        self.compute_into(data, &mut v);
        v
    }

    /// Verifies `data` against `checksums` (4-byte BE per chunk, chunking from the start of
    /// `data`). `first_chunk_offset_in_block` is the block offset of `data[0]`, used only to name
    /// the failing chunk in the error.
    pub fn verify(
        &self,
        data: &[u8],
        checksums: &[u8],
        first_chunk_offset_in_block: u64,
    ) -> Result<()> {
        if self.kind == ChecksumKind::Null {
            return Ok(());
        }
        let expected_len = self.checksum_len(data.len());
        if checksums.len() != expected_len {
            return Err(TransferError::protocol(format!(
                "{} checksum bytes for {} data bytes, expected {expected_len}",
                checksums.len(),
                data.len()
            )));
        }
        let bpc = self.bpc();
        let want = |i: usize| {
            let s = &checksums[i * CRC_SIZE..(i + 1) * CRC_SIZE];
            u32::from_be_bytes([s[0], s[1], s[2], s[3]])
        };
        if self.kind == ChecksumKind::Crc32c {
            return match crc32c_chunks(data, bpc, |i, c| c == want(i)) {
                None => Ok(()),
                Some(i) => Err(TransferError::Checksum {
                    chunk: i as u64,
                    offset: first_chunk_offset_in_block + (i * bpc) as u64,
                }),
            };
        }
        for (i, (chunk, sum)) in data
            .chunks(bpc)
            .zip(checksums.chunks_exact(CRC_SIZE))
            .enumerate()
        {
            let want = u32::from_be_bytes([sum[0], sum[1], sum[2], sum[3]]);
            if self.kind.crc(chunk) != want {
                return Err(TransferError::Checksum {
                    chunk: i as u64,
                    offset: first_chunk_offset_in_block + (i * bpc) as u64,
                });
            }
        }
        Ok(())
    }
}

/// Meta file header version.
pub const META_VERSION: u16 = 1;
/// Meta file header length.
pub const META_HEADER_LEN: usize = 7;

/// The 7-byte header of a `blk_<id>_<gs>.meta` file: version int16 (1), type byte,
/// bytesPerChecksum int32, all big-endian.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetaHeader {
    pub version: u16,
    pub checksum: DataChecksum,
}

impl MetaHeader {
    pub fn new(checksum: DataChecksum) -> Self {
        MetaHeader {
            version: META_VERSION,
            checksum,
        }
    }

    pub fn encode(&self) -> [u8; META_HEADER_LEN] {
        let mut out = [0u8; META_HEADER_LEN];
        out[0..2].copy_from_slice(&self.version.to_be_bytes());
        out[2] = self.checksum.kind.to_proto() as u8;
        out[3..7].copy_from_slice(&self.checksum.bytes_per_checksum.to_be_bytes());
        out
    }

    /// Decodes the first 7 bytes of `buf`; rejects versions other than 1 and unknown types.
    pub fn decode(buf: &[u8]) -> Result<Self> {
        if buf.len() < META_HEADER_LEN {
            return Err(TransferError::protocol(format!(
                "meta header needs {META_HEADER_LEN} bytes, got {}",
                buf.len()
            )));
        }
        let version = u16::from_be_bytes([buf[0], buf[1]]);
        if version != META_VERSION {
            return Err(TransferError::protocol(format!(
                "unsupported meta file version {version}"
            )));
        }
        let kind = ChecksumKind::from_proto(i32::from(buf[2]))?;
        let bpc = u32::from_be_bytes([buf[3], buf[4], buf[5], buf[6]]);
        let checksum = DataChecksum::new(kind, bpc);
        checksum.validate()?;
        Ok(MetaHeader { version, checksum })
    }
}
