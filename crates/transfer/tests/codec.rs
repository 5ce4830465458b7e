//! Codec tests that need no sockets: checksums, meta header, file checksum, op framing, packets.

use bytes::Bytes;
use md5::{Digest, Md5};
use rhdfs_transfer::TransferError;
use rhdfs_transfer::checksum::{ChecksumKind, DataChecksum, MetaHeader};
use rhdfs_transfer::md5crc::{FileChecksum, block_md5_of_crcs, block_md5_of_raw_crcs};
use rhdfs_transfer::op::{self, Op};
use rhdfs_transfer::packet::{self, MAX_PACKET_SIZE, Packet, PacketHeader};

#[test]
fn crc_check_values() {
    assert_eq!(ChecksumKind::Crc32c.crc(b"123456789"), 0xE306_9283);
    assert_eq!(ChecksumKind::Crc32.crc(b"123456789"), 0xCBF4_3926);
    assert_eq!(ChecksumKind::Null.crc(b"123456789"), 0);
}

#[test]
fn kind_proto_values() {
    for (k, v) in [
        (ChecksumKind::Null, 0),
        (ChecksumKind::Crc32, 1),
        (ChecksumKind::Crc32c, 2),
    ] {
        assert_eq!(k.to_proto(), v);
        assert_eq!(ChecksumKind::from_proto(v).unwrap(), k);
    }
    assert!(ChecksumKind::from_proto(3).is_err());
}

#[test]
fn compute_and_verify_chunks() {
    let cs = DataChecksum::default();
    let data: Vec<u8> = (0..1300u32).map(|i| (i * 7) as u8).collect();
    let crcs = cs.compute(&data);
    assert_eq!(crcs.len(), 3);
    assert_eq!(crcs[0], crc32c::crc32c(&data[..512]));
    assert_eq!(crcs[2], crc32c::crc32c(&data[1024..]));
    let bytes = cs.compute_bytes(&data);
    assert_eq!(bytes.len(), 12);
    cs.verify(&data, &bytes, 4096).unwrap();

    let mut bad = data.clone();
    bad[600] ^= 1;
    match cs.verify(&bad, &bytes, 4096) {
        Err(TransferError::Checksum { chunk, offset }) => {
            assert_eq!(chunk, 1);
            assert_eq!(offset, 4096 + 512);
        }
        other => panic!("expected checksum error, got {other:?}"),
    }
    assert!(matches!(
        cs.verify(&data, &bytes[..8], 0),
        Err(TransferError::Protocol(_))
    ));
    let null = DataChecksum::new(ChecksumKind::Null, 512);
    assert!(null.compute(&data).is_empty());
    null.verify(&bad, &[], 0).unwrap();
}

#[test]
fn unaligned_chunk_crc_covers_only_its_bytes() {
    // Java append to a 1000-byte block: packet at offset 1000 with 6 bytes and one CRC over
    // just those 6 bytes.
    let cs = DataChecksum::default();
    let tail = b"abcdef";
    let p = Packet::with_data(&cs, 1000, 7, Bytes::from_static(tail), false, false).unwrap();
    assert_eq!(p.checksums.len(), 4);
    assert_eq!(&p.checksums[..], &crc32c::crc32c(tail).to_be_bytes());
    p.verify(&cs).unwrap();
    assert_eq!(cs.chunk_crc(tail), crc32c::crc32c(tail));
}

#[test]
fn packet_sizing_matches_java() {
    let cs = DataChecksum::default();
    assert_eq!(cs.chunks_per_packet(65536), 126);
    let crc32 = DataChecksum::new(ChecksumKind::Crc32, 512);
    assert_eq!(crc32.chunks_per_packet(65536), 126);
}

#[test]
fn meta_header_round_trip() {
    let h = MetaHeader::new(DataChecksum::default());
    let b = h.encode();
    assert_eq!(b, [0, 1, 2, 0, 0, 2, 0]);
    assert_eq!(MetaHeader::decode(&b).unwrap(), h);
    assert!(MetaHeader::decode(&[0, 2, 2, 0, 0, 2, 0]).is_err());
    assert!(MetaHeader::decode(&[0, 1, 9, 0, 0, 2, 0]).is_err());
    assert!(MetaHeader::decode(&[0, 1, 2]).is_err());
    let h1 = MetaHeader::decode(&[0, 1, 1, 0, 0, 1, 0, 0xff]).unwrap();
    assert_eq!(h1.checksum, DataChecksum::new(ChecksumKind::Crc32, 256));
}

#[test]
fn block_md5_of_crcs_is_md5_of_be_bytes() {
    let crcs = [0x0102_0304u32, 0xA0B0_C0D0];
    let raw = [1u8, 2, 3, 4, 0xA0, 0xB0, 0xC0, 0xD0];
    let want: [u8; 16] = Md5::digest(raw).into();
    assert_eq!(block_md5_of_crcs(&crcs), want);
    assert_eq!(block_md5_of_raw_crcs(&raw), want);
}

#[test]
fn file_checksum_single_block() {
    // §3.8: one block -> MD5(blockMD5 ‖ 16 zero bytes), crcPerBlock printed as 0.
    let data = vec![b'x'; 1000];
    let cs = DataChecksum::default();
    let (block_md5, n) = rhdfs_transfer::md5crc::block_md5_of_data(&cs, &data);
    assert_eq!(n, 2);
    let fc = FileChecksum::from_blocks(512, ChecksumKind::Crc32c, &[(block_md5, n)]);
    let mut buf = block_md5.to_vec();
    buf.extend_from_slice(&[0u8; 16]);
    let want: [u8; 16] = Md5::digest(&buf).into();
    assert_eq!(fc.md5, want);
    assert_eq!(fc.algorithm_name(), "MD5-of-0MD5-of-512CRC32C");
    let hex = fc.hex();
    assert!(hex.starts_with("00000200"), "{hex}");
    assert_eq!(&hex[8..24], "0000000000000000");
    assert_eq!(&hex[24..], rhdfs_transfer::md5crc::hex(&want));
}

#[test]
fn file_checksum_padding_grows_like_java_buffer() {
    let blocks: Vec<([u8; 16], u64)> = (0..3u8).map(|i| ([i + 1; 16], 262_144)).collect();
    let fc = FileChecksum::from_blocks(512, ChecksumKind::Crc32, &blocks);
    // Three blocks: 48 bytes in a 64-byte buffer.
    let mut buf = Vec::new();
    for (m, _) in &blocks {
        buf.extend_from_slice(m);
    }
    buf.extend_from_slice(&[0u8; 16]);
    let want: [u8; 16] = Md5::digest(&buf).into();
    assert_eq!(fc.md5, want);
    assert_eq!(fc.algorithm_name(), "MD5-of-262144MD5-of-512CRC32");
    assert_eq!(fc.to_bytes().len(), 28);

    // Five blocks: 80 bytes in a 128-byte buffer.
    let blocks5: Vec<([u8; 16], u64)> = (0..5u8).map(|i| ([i; 16], 4)).collect();
    let fc5 = FileChecksum::from_blocks(512, ChecksumKind::Crc32c, &blocks5);
    let mut buf5 = Vec::new();
    for (m, _) in &blocks5 {
        buf5.extend_from_slice(m);
    }
    buf5.resize(128, 0);
    assert_eq!(fc5.md5, <[u8; 16]>::from(Md5::digest(&buf5)));
}

#[test]
fn file_checksum_empty_file() {
    let fc = FileChecksum::from_blocks(512, ChecksumKind::Crc32c, &[]);
    assert_eq!(fc.algorithm_name(), "MD5-of-0MD5-of-0CRC32");
    assert_eq!(fc.md5, <[u8; 16]>::from(Md5::digest([0u8; 32])));
}

#[test]
fn packet_header_sizes() {
    let mut h = PacketHeader {
        offset_in_block: 4096,
        seqno: 19,
        last_packet_in_block: false,
        data_len: 64512,
        sync_block: false,
    };
    let mut b = Vec::new();
    h.encode(&mut b);
    assert_eq!(b.len(), 25);
    assert_eq!(PacketHeader::decode(&b).unwrap(), h);
    h.sync_block = true;
    let mut b2 = Vec::new();
    h.encode(&mut b2);
    assert_eq!(b2.len(), 27);
    assert_eq!(PacketHeader::decode(&b2).unwrap(), h);
    assert!(PacketHeader::decode(&b2[..20]).is_err());
    // Missing required field.
    assert!(PacketHeader::decode(&b[..18]).is_err());
}

#[tokio::test]
async fn packet_round_trip() {
    let cs = DataChecksum::default();
    let data: Vec<u8> = (0..64512u32).map(|i| i as u8).collect();
    let p = Packet::with_data(&cs, 0, 3, Bytes::from(data), false, true).unwrap();
    assert_eq!(p.payload_len(), 65020 - 4 + 4);
    let mut wire = Vec::new();
    packet::write_packet(&mut wire, &p).await.unwrap();
    assert_eq!(wire.len(), 6 + 27 + 504 + 64512);
    assert_eq!(&wire[..4], &65020u32.to_be_bytes());
    assert_eq!(&wire[4..6], &27u16.to_be_bytes());
    let (back, raw) = packet::read_packet_raw(&mut wire.as_slice(), MAX_PACKET_SIZE)
        .await
        .unwrap();
    assert_eq!(back, p);
    assert_eq!(&raw[..], &wire[..]);
    back.verify(&cs).unwrap();

    let hb = Packet::heartbeat();
    let hb_bytes = hb.to_bytes();
    assert_eq!(hb_bytes.len(), 6 + 25);
    let back = packet::read_packet(&mut &hb_bytes[..], MAX_PACKET_SIZE)
        .await
        .unwrap();
    assert!(back.header.is_heartbeat());
    assert!(back.data.is_empty() && back.checksums.is_empty());
}

#[tokio::test]
async fn packet_limits_and_validation() {
    let cs = DataChecksum::default();
    let p = Packet::with_data(&cs, 0, 0, Bytes::from(vec![1u8; 2000]), false, false).unwrap();
    let wire = p.to_bytes();
    assert!(matches!(
        packet::read_packet(&mut &wire[..], 1000).await,
        Err(TransferError::Protocol(_))
    ));
    // Truncated frame.
    assert!(
        packet::read_packet(&mut &wire[..100], MAX_PACKET_SIZE)
            .await
            .unwrap_err()
            .is_eof()
    );
    // Checksum count inconsistent with data.
    let mut bad = p.clone();
    bad.checksums = bad.checksums.slice(..8);
    assert!(matches!(bad.validate(&cs), Err(TransferError::Protocol(_))));
    // Corrupted data.
    let mut corrupt = wire.to_vec();
    let n = corrupt.len();
    corrupt[n - 1] ^= 0xff;
    let back = packet::read_packet(&mut &corrupt[..], MAX_PACKET_SIZE)
        .await
        .unwrap();
    assert!(matches!(
        back.verify(&cs),
        Err(TransferError::Checksum {
            chunk: 3,
            offset: 1536
        })
    ));
    // PLEN below 4.
    let tiny = [0u8, 0, 0, 3, 0, 0];
    assert!(
        packet::read_packet(&mut &tiny[..], MAX_PACKET_SIZE)
            .await
            .is_err()
    );
}

#[tokio::test]
async fn packets_read_into_one_buffer() {
    let cs = DataChecksum::default();
    let a = Packet::with_data(&cs, 0, 0, Bytes::from(vec![3u8; 3000]), false, false).unwrap();
    let b = Packet::with_data(&cs, 3000, 1, Bytes::from(vec![4u8; 2500]), true, false).unwrap();
    let mut wire = a.to_bytes().to_vec();
    wire.extend_from_slice(&b.to_bytes());
    wire.extend_from_slice(&a.to_bytes()[..50]);
    let mut r = wire.as_slice();
    let mut buf = bytes::BytesMut::new();
    let (back, raw) = packet::read_packet_into(&mut r, MAX_PACKET_SIZE, &mut buf)
        .await
        .unwrap();
    assert_eq!(back, a);
    let first = raw.as_ptr();
    drop((back, raw));
    let (back, raw) = packet::read_packet_into(&mut r, MAX_PACKET_SIZE, &mut buf)
        .await
        .unwrap();
    assert_eq!(back, b, "the next packet only");
    assert_eq!(raw.as_ptr(), first, "read into the same memory");
    // Still held: the next frame goes elsewhere and this one stays intact.
    let held = back;
    assert!(
        packet::read_packet_into(&mut r, MAX_PACKET_SIZE, &mut buf)
            .await
            .unwrap_err()
            .is_eof(),
        "a frame cut short"
    );
    assert_eq!(held, b);
}

#[derive(Clone, PartialEq, prost::Message)]
struct Dummy {
    #[prost(string, tag = "1")]
    name: String,
}

#[tokio::test]
async fn op_framing() {
    let msg = Dummy {
        name: "hello".into(),
    };
    let mut wire = Vec::new();
    op::write_op(&mut wire, Op::ReadBlock, &msg).await.unwrap();
    assert_eq!(&wire[..3], &[0x00, 0x1C, 81]);
    let mut r = wire.as_slice();
    assert_eq!(op::read_op(&mut r).await.unwrap(), Some(Op::ReadBlock));
    let back: Dummy = op::read_delimited(&mut r, 1024).await.unwrap();
    assert_eq!(back, msg);
    // Clean EOF before the next op.
    assert_eq!(op::read_op(&mut r).await.unwrap(), None);

    assert!(op::read_op(&mut &[0x00u8, 0x1B, 81][..]).await.is_err());
    assert!(op::read_op(&mut &[0x00u8, 0x1C, 79][..]).await.is_err());
    assert!(
        op::read_op(&mut &[0xDEu8, 0xAD, 0xBE, 0xEF][..])
            .await
            .is_err()
    );
    assert!(op::read_op(&mut &[0x00u8][..]).await.unwrap_err().is_eof());

    let mut d = Vec::new();
    op::write_delimited(&mut d, &msg).await.unwrap();
    assert!(
        op::read_delimited::<Dummy, _>(&mut d.as_slice(), 3)
            .await
            .is_err()
    );
    let none: Option<Dummy> = op::read_delimited_opt(&mut &[][..], 16).await.unwrap();
    assert!(none.is_none());
    for code in [80u8, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 127] {
        assert_eq!(Op::from_code(code).unwrap().code(), code);
    }
    assert_eq!(Op::from_code(91), None);
}
