//! Meta file format (`blk_<id>_<gs>.meta`): a 7-byte header (version int16 = 1, checksum type byte,
//! bytesPerChecksum int32, big-endian) followed by one big-endian CRC per aligned chunk.

use crate::checksum::{ChecksumSpec, ChecksumType};
use crate::error::StorageError;

pub const META_VERSION: u16 = 1;
pub const META_HEADER_LEN: u64 = 7;

pub fn encode_header(spec: &ChecksumSpec) -> [u8; 7] {
    let mut h = [0u8; 7];
    h[0..2].copy_from_slice(&META_VERSION.to_be_bytes());
    h[2] = spec.kind.code();
    h[3..7].copy_from_slice(&spec.bytes_per_checksum.to_be_bytes());
    h
}

pub fn decode_header(h: &[u8]) -> Result<ChecksumSpec, StorageError> {
    if h.len() < 7 {
        return Err(StorageError::BadMeta(format!(
            "header is {} bytes, need 7",
            h.len()
        )));
    }
    let version = u16::from_be_bytes([h[0], h[1]]);
    if version != META_VERSION {
        return Err(StorageError::BadMeta(format!(
            "unsupported meta version {version}"
        )));
    }
    let kind = ChecksumType::from_code(i32::from(h[2]))
        .ok_or_else(|| StorageError::BadMeta(format!("unknown checksum type {}", h[2])))?;
    let bpc = u32::from_be_bytes([h[3], h[4], h[5], h[6]]);
    if bpc == 0 {
        return Err(StorageError::BadMeta("bytesPerChecksum is 0".into()));
    }
    Ok(ChecksumSpec::new(kind, bpc))
}

pub fn block_file_name(id: u64) -> String {
    format!("blk_{id}")
}

pub fn meta_file_name(id: u64, gs: u64) -> String {
    format!("blk_{id}_{gs}.meta")
}

/// Parses `blk_<id>` (block file) → id.
pub fn parse_block_file_name(name: &str) -> Option<u64> {
    let rest = name.strip_prefix("blk_")?;
    if rest.contains('_') || rest.contains('.') {
        return None;
    }
    rest.parse().ok()
}

/// Parses `blk_<id>_<gs>.meta` → (id, gs).
pub fn parse_meta_file_name(name: &str) -> Option<(u64, u64)> {
    let rest = name.strip_prefix("blk_")?.strip_suffix(".meta")?;
    let (id, gs) = rest.split_once('_')?;
    Some((id.parse().ok()?, gs.parse().ok()?))
}

/// Offset in the meta file of the CRC of chunk `index`.
pub fn crc_offset(spec: &ChecksumSpec, index: u64) -> u64 {
    META_HEADER_LEN + index * spec.kind.size() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip() {
        let spec = ChecksumSpec::new(ChecksumType::Crc32c, 512);
        let h = encode_header(&spec);
        assert_eq!(h, [0, 1, 2, 0, 0, 2, 0]);
        assert_eq!(decode_header(&h).ok(), Some(spec));
        let spec = ChecksumSpec::new(ChecksumType::Crc32, 4096);
        assert_eq!(decode_header(&encode_header(&spec)).ok(), Some(spec));
        assert!(decode_header(&[0, 2, 2, 0, 0, 2, 0]).is_err());
        assert!(decode_header(&[0, 1, 9, 0, 0, 2, 0]).is_err());
        assert!(decode_header(&[0, 1]).is_err());
    }

    #[test]
    fn names() {
        assert_eq!(parse_block_file_name("blk_1073741825"), Some(1073741825));
        assert_eq!(parse_block_file_name("blk_1_1001.meta"), None);
        assert_eq!(parse_meta_file_name("blk_7_1001.meta"), Some((7, 1001)));
        assert_eq!(parse_meta_file_name("blk_7"), None);
        assert_eq!(meta_file_name(7, 1001), "blk_7_1001.meta");
    }
}
