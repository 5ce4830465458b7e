//! The buffer a writer fills packets' data into: packets are split off slabs of [`SLAB`]
//! bytes ([`Slabs`]), a slab every packet of which was dropped (acknowledged) taken again
//! before new memory.

use bytes::Bytes;
use rhdfs_transfer::slabs::Slabs;

/// Bytes of one slab: sixteen 64 KiB packets.
const SLAB: usize = 1 << 20;
/// Slabs kept for reuse: with the default 80 packets in flight, 5 MiB are held unacknowledged.
const SPARE_SLABS: usize = 8;

#[derive(Debug)]
pub(crate) struct PacketBuf {
    cur: Slabs,
}

impl Default for PacketBuf {
    fn default() -> Self {
        PacketBuf {
            cur: Slabs::new(SLAB, SPARE_SLABS),
        }
    }
}

impl PacketBuf {
    pub(crate) fn len(&self) -> usize {
        self.cur.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.cur.is_empty()
    }

    /// Appends `data` to the packet being filled, which will hold at most `packet` bytes.
    pub(crate) fn extend(&mut self, data: &[u8], packet: usize) {
        if self.cur.is_empty() {
            self.cur.room(packet.max(data.len()));
        } else {
            self.cur.room(data.len());
        }
        self.cur.extend_from_slice(data);
    }

    /// The packet's data, split off; the slab's rest fills the next packet.
    pub(crate) fn take(&mut self) -> Bytes {
        self.cur.split().freeze()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Packets come out with the bytes put in, whatever the sizes; once the packets of earlier
    /// slabs are dropped, their slabs are taken again instead of new memory.
    #[test]
    fn packets_keep_their_bytes_and_slabs_are_reused() {
        let mut b = PacketBuf::default();
        let mut held = std::collections::VecDeque::new();
        for i in 0..200usize {
            let n = 64_512 - (i % 3) * 1000;
            let data: Vec<u8> = (0..n).map(|k| (k + i) as u8).collect();
            // In two pieces, as writes of any size fill a packet.
            b.extend(&data[..n / 3], n);
            b.extend(&data[n / 3..], n);
            assert_eq!(b.len(), n);
            let p = b.take();
            assert_eq!(&p[..], &data[..]);
            assert!(b.is_empty());
            held.push_back(p);
            // Acknowledged a few dozen packets behind.
            if held.len() > 40 {
                held.pop_front();
            }
        }
        assert!(b.cur.spare() <= SPARE_SLABS);
        // 12.6 MB of packets, at most 2.6 MB held: a handful of slabs taken in turn.
        assert!(
            b.cur.allocated() <= 6,
            "{} slabs allocated",
            b.cur.allocated()
        );
    }

    /// A packet larger than a slab gets a buffer of its own size.
    #[test]
    fn a_packet_larger_than_a_slab_fits() {
        let mut b = PacketBuf::default();
        let data = vec![7u8; SLAB + 10];
        b.extend(&data, data.len());
        assert_eq!(&b.take()[..], &data[..]);
    }
}
