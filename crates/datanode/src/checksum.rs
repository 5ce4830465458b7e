//! Chunk checksums as stored in meta files: the type byte and bytes-per-checksum of a replica.

/// Checksum type codes as in Hadoop's meta header and `ChecksumTypeProto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChecksumType {
    Null,
    Crc32,
    Crc32c,
}

impl ChecksumType {
    /// Code used in the meta header byte and in `ChecksumTypeProto` (NULL 0, CRC32 1, CRC32C 2).
    pub fn code(self) -> u8 {
        match self {
            ChecksumType::Null => 0,
            ChecksumType::Crc32 => 1,
            ChecksumType::Crc32c => 2,
        }
    }

    pub fn from_code(code: i32) -> Option<Self> {
        match code {
            0 => Some(ChecksumType::Null),
            1 => Some(ChecksumType::Crc32),
            2 => Some(ChecksumType::Crc32c),
            _ => None,
        }
    }

    /// Bytes of checksum per chunk (0 for NULL).
    pub fn size(self) -> usize {
        match self {
            ChecksumType::Null => 0,
            _ => 4,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ChecksumType::Null => "NULL",
            ChecksumType::Crc32 => "CRC32",
            ChecksumType::Crc32c => "CRC32C",
        }
    }
}

/// The checksum a replica is stored with (kept from the writer's request).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChecksumSpec {
    pub kind: ChecksumType,
    pub bytes_per_checksum: u32,
}

impl Default for ChecksumSpec {
    fn default() -> Self {
        ChecksumSpec {
            kind: ChecksumType::Crc32c,
            bytes_per_checksum: 512,
        }
    }
}

impl ChecksumSpec {
    pub fn new(kind: ChecksumType, bytes_per_checksum: u32) -> Self {
        ChecksumSpec {
            kind,
            bytes_per_checksum: bytes_per_checksum.max(1),
        }
    }

    pub fn bpc(&self) -> u64 {
        u64::from(self.bytes_per_checksum.max(1))
    }

    /// CRC of one chunk.
    pub fn crc(&self, data: &[u8]) -> u32 {
        match self.kind {
            ChecksumType::Null => 0,
            ChecksumType::Crc32 => crc32fast::hash(data),
            ChecksumType::Crc32c => crc32c::crc32c(data),
        }
    }

    /// Number of chunks covering `len` bytes.
    pub fn chunks(&self, len: u64) -> u64 {
        len.div_ceil(self.bpc())
    }

    /// Big-endian CRCs of `data` cut into chunks of bytes_per_checksum from its start (empty for NULL).
    pub fn compute(&self, data: &[u8]) -> Vec<u8> {
        match self.kind {
            ChecksumType::Null => return Vec::new(),
            // Several chunks at a time (`rhdfs_transfer`'s bulk CRC32C, as packets are
            // verified): every DataNode of a write pipeline computes the CRCs it stores.
            ChecksumType::Crc32c => {
                let wire = rhdfs_transfer::DataChecksum::new(
                    rhdfs_transfer::ChecksumKind::Crc32c,
                    self.bytes_per_checksum.max(1),
                );
                return wire.compute_bytes(data);
            }
            ChecksumType::Crc32 => {}
        }
        let bpc = self.bpc() as usize;
        let mut out = Vec::with_capacity(data.len().div_ceil(bpc) * 4);
        for chunk in data.chunks(bpc) {
            out.extend_from_slice(&self.crc(chunk).to_be_bytes());
        }
        out
    }

    /// Verifies `data` against packet checksums `sums`; returns the index of the first bad chunk.
    pub fn verify(&self, data: &[u8], sums: &[u8]) -> Result<(), usize> {
        if self.kind == ChecksumType::Null {
            return Ok(());
        }
        let bpc = self.bpc() as usize;
        for (i, chunk) in data.chunks(bpc).enumerate() {
            let Some(want) = sums.get(i * 4..i * 4 + 4) else {
                return Err(i);
            };
            let want = u32::from_be_bytes([want[0], want[1], want[2], want[3]]);
            if self.crc(chunk) != want {
                return Err(i);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_values() {
        let c = ChecksumSpec::new(ChecksumType::Crc32c, 512);
        assert_eq!(c.crc(b"123456789"), 0xE306_9283);
        let c = ChecksumSpec::new(ChecksumType::Crc32, 512);
        assert_eq!(c.crc(b"123456789"), 0xCBF4_3926);
    }

    /// The bulk CRC32C gives each chunk's own CRC, for Hadoop's 512-byte chunks, sizes the
    /// folding path does not take, and a short last chunk.
    #[test]
    fn bulk_crc32c_matches_chunk_by_chunk() {
        let data: Vec<u8> = (0..70_001u32).map(|i| (i * 7 + i / 300) as u8).collect();
        for bpc in [512u32, 100, 64, 4096, 1] {
            let c = ChecksumSpec::new(ChecksumType::Crc32c, bpc);
            for len in [0usize, 1, 511, 512, 513, 2048, 2049, 70_001] {
                let want: Vec<u8> = data[..len]
                    .chunks(bpc as usize)
                    .flat_map(|ch| crc32c::crc32c(ch).to_be_bytes())
                    .collect();
                assert_eq!(c.compute(&data[..len]), want, "bpc {bpc} len {len}");
            }
        }
    }

    #[test]
    fn verify_names_bad_chunk() {
        let c = ChecksumSpec::new(ChecksumType::Crc32c, 4);
        let data = b"abcdefghij";
        let mut sums = c.compute(data);
        assert_eq!(sums.len(), 12);
        assert_eq!(c.verify(data, &sums), Ok(()));
        sums[5] ^= 1;
        assert_eq!(c.verify(data, &sums), Err(1));
    }
}
