//! READ_BLOCK through sendfile and through the copying fallback: the same bytes on the wire for
//! many ranges, several reads on one connection, and a corrupt block file still caught by the
//! reader's CRC check.

use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use rhdfs_proto::hdfs::{BlockOpResponseProto, ClientReadStatusProto, Status};
use rhdfs_transfer::op::read_delimited;
use rhdfs_transfer::{
    BlockReader, Op, ReadBlockParams, TransferConfig, TransferError, read_packet_raw,
    write_delimited, write_op,
};
use tokio::net::TcpStream;

use super::tests::{BP, block, data};
use super::{XceiverConfig, XceiverContext, XceiverServer};
use crate::checksum::{ChecksumSpec, ChecksumType};
use crate::dataset::Dataset;
use crate::faults::FaultHooks;

const MAX: usize = 1 << 20;
const LEN: usize = 300_000;

async fn server(ds: &Arc<Dataset>, transfer_to: bool) -> XceiverServer {
    server_with(ds, transfer_to, super::block_sender::READ_PACKET_SIZE).await
}

async fn server_with(ds: &Arc<Dataset>, transfer_to: bool, packet: u64) -> XceiverServer {
    let ctx = XceiverContext {
        dataset: ds.clone(),
        notifier: Arc::new(crate::notify::NoopNotifier),
        faults: Arc::new(FaultHooks::default()),
        config: XceiverConfig {
            transfer_to,
            read_packet_size: packet,
            ..XceiverConfig::default()
        },
        active: Default::default(),
        activity: Default::default(),
    };
    XceiverServer::bind("127.0.0.1:0".parse().unwrap(), ctx)
        .await
        .unwrap()
}

/// A finalized replica `id` and an RBW one `id + 1` (open while its writer lives) holding
/// `data(LEN)`.
fn replicas(ds: &Arc<Dataset>, id: u64) -> crate::writer::ReplicaWriter {
    let spec = ChecksumSpec::new(ChecksumType::Crc32c, 512);
    let d = data(LEN);
    let mut w = ds.create_rbw(BP, id, 1001, spec, 0).unwrap();
    w.write_at(0, &d).unwrap();
    w.finalize().unwrap();
    let mut w = ds.create_rbw(BP, id + 1, 1001, spec, 0).unwrap();
    w.write_at(0, &d).unwrap();
    w
}

/// One READ_BLOCK on `s`: the raw response and packet frames, and the data they carry.
async fn raw_read(s: &mut TcpStream, id: u64, off: u64, len: u64, sums: bool) -> (Bytes, Bytes) {
    let mut p = ReadBlockParams::new(block(id, 1001, LEN as u64), "DFSClient_t", off, len);
    p.verify_checksum = sums;
    write_op(s, Op::ReadBlock, &p.to_proto()).await.unwrap();
    let resp: BlockOpResponseProto = read_delimited(s, MAX).await.unwrap();
    assert_eq!(resp.status, Status::Success as i32, "{resp:?}");
    let mut wire = BytesMut::new();
    wire.extend_from_slice(&prost::Message::encode_length_delimited_to_vec(&resp));
    let mut got = BytesMut::new();
    loop {
        let (pkt, frame) = read_packet_raw(s, MAX).await.unwrap();
        wire.extend_from_slice(&frame);
        got.extend_from_slice(&pkt.data);
        if pkt.header.last_packet_in_block {
            break;
        }
    }
    let st = ClientReadStatusProto {
        status: Status::ChecksumOk as i32,
    };
    write_delimited(s, &st).await.unwrap();
    let chunk_off = resp.read_op_checksum_info.unwrap().chunk_offset;
    let from = (off - chunk_off) as usize;
    (wire.freeze(), got.freeze().slice(from..from + len as usize))
}

#[tokio::test]
async fn zero_copy_and_copying_reads_are_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let ds = Dataset::open(&[dir.path().to_path_buf()], 0).unwrap();
    let _rbw = replicas(&ds, 7000);
    let (zc, cp) = (server(&ds, true).await, server(&ds, false).await);
    let mut a = TcpStream::connect(zc.local_addr()).await.unwrap();
    let mut b = TcpStream::connect(cp.local_addr()).await.unwrap();
    let expect = data(LEN);
    let l = LEN as u64;
    let ranges = [
        (0, l),
        (0, 1),
        (1, 1),
        (511, 2),
        (513, 1000),
        (65_000, 70_000),
        (100_001, 99_999),
        (l - 1, 1),
        (l - 700, 700),
        (131_072, 65_536),
    ];
    for id in [7000, 7001] {
        for sums in [true, false] {
            for &(off, len) in &ranges {
                // Every read reuses the same two connections.
                let (wa, da) = raw_read(&mut a, id, off, len, sums).await;
                let (wb, db) = raw_read(&mut b, id, off, len, sums).await;
                assert_eq!(
                    wa, wb,
                    "wire bytes differ for blk {id} [{off}, +{len}) sums={sums}"
                );
                assert_eq!(&da[..], &expect[off as usize..(off + len) as usize]);
                assert_eq!(da, db);
            }
        }
    }
}

/// io.file.buffer.size above 64 KiB makes packets larger, as Hadoop's BlockSender: the same
/// bytes, zero-copy or not, in fewer packets.
#[tokio::test]
async fn larger_packets_carry_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let ds = Dataset::open(&[dir.path().to_path_buf()], 0).unwrap();
    let _rbw = replicas(&ds, 9000);
    let expect = data(LEN);
    let packet = super::read_packet_size(200_000);
    let (zc, cp) = (
        server_with(&ds, true, packet).await,
        server_with(&ds, false, packet).await,
    );
    let small = server(&ds, true).await;
    let mut a = TcpStream::connect(zc.local_addr()).await.unwrap();
    let mut b = TcpStream::connect(cp.local_addr()).await.unwrap();
    let mut c = TcpStream::connect(small.local_addr()).await.unwrap();
    let l = LEN as u64;
    for id in [9000, 9001] {
        for sums in [true, false] {
            for (off, len) in [(0, l), (511, 2), (65_000, 150_000), (l - 700, 700)] {
                let (wa, da) = raw_read(&mut a, id, off, len, sums).await;
                let (wb, db) = raw_read(&mut b, id, off, len, sums).await;
                let (wc, dc) = raw_read(&mut c, id, off, len, sums).await;
                assert_eq!(wa, wb, "blk {id} [{off}, +{len}) sums={sums}");
                assert_eq!(&da[..], &expect[off as usize..(off + len) as usize]);
                assert_eq!((&da, &db), (&dc, &dc));
                if len > 100_000 {
                    // Fewer packet heads on the wire than with 64 KiB packets.
                    assert!(wa.len() < wc.len(), "{} vs {}", wa.len(), wc.len());
                }
            }
        }
    }
}

#[tokio::test]
async fn corrupt_block_file_fails_the_crc_check() {
    let dir = tempfile::tempdir().unwrap();
    let ds = Dataset::open(&[dir.path().to_path_buf()], 0).unwrap();
    let _rbw = replicas(&ds, 8000);
    let info = ds.get(BP, 8000).unwrap();
    let path = ds.block_path(BP, &info);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[200_000] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();
    let sizes = [(true, 0), (false, 0), (true, 1 << 20), (false, 1 << 20)];
    for (transfer_to, io_buffer) in sizes {
        let packet = super::read_packet_size(io_buffer);
        let s = server_with(&ds, transfer_to, packet).await;
        let p = ReadBlockParams::new(block(8000, 1001, LEN as u64), "DFSClient_t", 0, LEN as u64);
        let addr = s.local_addr().to_string();
        let mut r = BlockReader::connect(&addr, &p, &TransferConfig::default())
            .await
            .unwrap();
        let err = r.read_all().await.unwrap_err();
        assert!(
            matches!(err, TransferError::Checksum { .. }),
            "transferTo={transfer_to}, {packet}-byte packets: {err}"
        );
    }
}
