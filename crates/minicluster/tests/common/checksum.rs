//! The HDFS file checksum (`hadoop fs -checksum`, MD5MD5CRC32C) computed locally from the file's
//! bytes, PROTOCOL.md §3.8:
//! - per block: MD5 over the 4-byte big-endian CRC32C of every 512-byte chunk (last one partial);
//! - per file: MD5 over the concatenated block MD5s, zero-padded to the capacity of the Java
//!   `DataOutputBuffer` they were written into (32 bytes, doubling);
//! - printed as `MD5-of-<crcPerBlock>MD5-of-<bytesPerCrc>CRC32C` and the hex of
//!   int32 bytesPerCrc ‖ int64 crcPerBlock ‖ md5, where crcPerBlock is 0 for a one-block file.

use md5::{Digest, Md5};

pub const BYTES_PER_CRC: usize = 512;

/// MD5 over the per-chunk CRC32Cs of one block.
pub fn block_md5(block: &[u8]) -> [u8; 16] {
    let mut h = Md5::new();
    for chunk in block.chunks(BYTES_PER_CRC) {
        h.update(crc32c::crc32c(chunk).to_be_bytes());
    }
    h.finalize().into()
}

/// Capacity of a Java DataOutputBuffer after writing `n` bytes into a fresh one (32, doubling).
pub fn java_buffer_capacity(n: usize) -> usize {
    let mut cap = 32;
    while cap < n {
        cap *= 2;
    }
    cap
}

/// (algorithm name, hex value) exactly as FsShell `-checksum` prints them.
pub fn file_checksum(data: &[u8], block_size: usize) -> (String, String) {
    if data.is_empty() {
        // Computed client-side without any block: MD5 of an empty (32-byte) buffer, CRC32 type.
        let md5: [u8; 16] = Md5::digest([0u8; 32]).into();
        return (
            "MD5-of-0MD5-of-0CRC32".to_owned(),
            format!("{:08x}{:016x}{}", 0, 0, hex(&md5)),
        );
    }
    let blocks: Vec<&[u8]> = data.chunks(block_size).collect();
    let mut buf = Vec::new();
    for b in &blocks {
        buf.extend_from_slice(&block_md5(b));
    }
    buf.resize(java_buffer_capacity(buf.len()), 0);
    let md5: [u8; 16] = Md5::digest(&buf).into();
    let crc_per_block = if blocks.len() > 1 {
        blocks[0].len().div_ceil(BYTES_PER_CRC)
    } else {
        0
    };
    (
        format!("MD5-of-{crc_per_block}MD5-of-{BYTES_PER_CRC}CRC32C"),
        format!("{:08x}{:016x}{}", BYTES_PER_CRC, crc_per_block, hex(&md5)),
    )
}

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Parses one FsShell `-checksum` output line: `path<TAB>algorithm<TAB>hex`.
pub fn parse_checksum_line(line: &str) -> Option<(String, String, String)> {
    let mut it = line.trim_end().split('\t');
    let path = it.next()?.to_owned();
    let algo = it.next()?.to_owned();
    let value = it.next()?.to_owned();
    Some((path, algo, value))
}
