//! How data is cut into packets: whole chunks per packet, never crossing a block boundary,
//! and a single "filler" chunk when a packet starts mid-chunk (after hflush or append).

/// Data bytes the packet starting at `offset_in_block` may carry.
pub(crate) fn packet_capacity(
    offset_in_block: u64,
    block_size: u64,
    bytes_per_checksum: u64,
    chunks_per_packet: usize,
) -> usize {
    let room = block_size.saturating_sub(offset_in_block);
    let bpc = bytes_per_checksum.max(1);
    let into_chunk = offset_in_block % bpc;
    let cap = if into_chunk != 0 {
        bpc - into_chunk
    } else {
        bpc * chunks_per_packet.max(1) as u64
    };
    cap.min(room) as usize
}

/// The (offset in block, length) of each packet a write of `len` bytes starting at block
/// offset `start` produces when flushed at the end (used by tests and for reasoning).
#[cfg(test)]
pub(crate) fn layout(
    start: u64,
    len: u64,
    block_size: u64,
    bpc: u64,
    chunks_per_packet: usize,
) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut off = start;
    let end = start + len;
    while off < end {
        let cap = packet_capacity(off, block_size, bpc, chunks_per_packet) as u64;
        let n = cap.min(end - off);
        out.push((off, n));
        off += n;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const BS: u64 = 128 * 1024 * 1024;

    #[test]
    fn java_sized_packets() {
        // 126 chunks of 512 = 64512 bytes, as the Java writer sends with 64 KiB packets.
        assert_eq!(packet_capacity(0, BS, 512, 126), 64512);
        let l = layout(0, 200_000, BS, 512, 126);
        assert_eq!(
            l,
            vec![(0, 64512), (64512, 64512), (129024, 64512), (193536, 6464)]
        );
    }

    #[test]
    fn filler_chunk_after_unaligned_offset() {
        assert_eq!(packet_capacity(1000, BS, 512, 126), 24);
        let l = layout(1000, 2000, BS, 512, 126);
        assert_eq!(l, vec![(1000, 24), (1024, 1976)]);
        assert_eq!(packet_capacity(21, BS, 512, 126), 491);
    }

    #[test]
    fn never_crosses_a_block() {
        let bs = 1024 * 1024;
        assert_eq!(packet_capacity(bs - 100, bs, 512, 126), 100);
        assert_eq!(packet_capacity(bs, bs, 512, 126), 0);
        let l = layout(bs - 64512 - 10, 64512 + 10, bs, 512, 126);
        assert_eq!(l.iter().map(|x| x.1).sum::<u64>(), 64522);
        assert!(l.iter().all(|(o, n)| o + n <= bs));
    }

    #[test]
    fn small_blocks_and_chunks() {
        assert_eq!(packet_capacity(0, 300, 512, 126), 300);
        assert_eq!(packet_capacity(0, BS, 1, 3), 3);
    }
}
