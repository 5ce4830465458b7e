//! Property tests: checksum chunking and packet codec round trips, and decoders never panic.

use bytes::Bytes;
use proptest::prelude::*;
use rhdfs_transfer::packet::{self, MAX_PACKET_SIZE, Packet, PacketHeader};
use rhdfs_transfer::{ChecksumKind, DataChecksum};

fn kind() -> impl Strategy<Value = ChecksumKind> {
    prop_oneof![
        Just(ChecksumKind::Null),
        Just(ChecksumKind::Crc32),
        Just(ChecksumKind::Crc32c)
    ]
}

proptest! {
    #[test]
    fn compute_verify(data in proptest::collection::vec(any::<u8>(), 0..3000), bpc in 1u32..1100, k in kind()) {
        let cs = DataChecksum::new(k, bpc);
        let sums = cs.compute_bytes(&data);
        prop_assert_eq!(sums.len(), cs.checksum_len(data.len()));
        prop_assert!(cs.verify(&data, &sums, 0).is_ok());
        if k != ChecksumKind::Null && !data.is_empty() {
            let mut bad = data.clone();
            let i = data.len() / 2;
            bad[i] ^= 0x80;
            prop_assert!(cs.verify(&bad, &sums, 0).is_err());
        }
    }

    #[test]
    fn packet_round_trip(data in proptest::collection::vec(any::<u8>(), 0..5000),
                         offset in 0i64..1 << 40, seqno in -1i64..1 << 40,
                         last in any::<bool>(), sync in any::<bool>(), k in kind()) {
        let cs = DataChecksum::new(k, 512);
        let p = Packet::with_data(&cs, offset, seqno, Bytes::from(data), last, sync).unwrap();
        let wire = p.to_bytes();
        prop_assert_eq!(wire.len(), p.frame_len());
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let (back, raw) = rt.block_on(packet::read_packet_raw(&mut &wire[..], MAX_PACKET_SIZE)).unwrap();
        prop_assert_eq!(&back, &p);
        prop_assert_eq!(&raw[..], &wire[..]);
        prop_assert!(back.verify(&cs).is_ok());
    }

    #[test]
    fn header_decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let _ = PacketHeader::decode(&bytes);
    }

    #[test]
    fn packet_read_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..128)) {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let _ = rt.block_on(packet::read_packet(&mut &bytes[..], MAX_PACKET_SIZE));
    }
}
