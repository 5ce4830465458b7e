//! WRITE_BLOCK with the disk thread: packets streamed without waiting for acks, heartbeats
//! among them, acked in the order sent; a packet damaged on its way to a node that does not
//! verify it is stored with the CRCs it came with (Hadoop's BlockReceiver), so its chunk fails
//! the CRC check once read as finalized or scanned.

use bytes::Bytes;
use rhdfs_proto::hdfs::op_write_block_proto::BlockConstructionStage as Stage;
use rhdfs_proto::hdfs::{BlockOpResponseProto, Status};
use rhdfs_transfer::op::read_delimited;
use rhdfs_transfer::{Op, Packet, TransferError, write_op};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::tests::{BP, Node, ack, csum, data, data_packet, write_req};
use crate::reader::ReplicaReader;
use crate::replica::ReplicaState;

const MAX: usize = 1 << 20;
const PACKET: usize = 64_512;

pub(super) async fn open_pipeline(first: &Node, rest: &[&Node], id: u64) -> TcpStream {
    let mut s = TcpStream::connect(first.addr()).await.unwrap();
    let targets = rest.iter().map(|n| n.info()).collect();
    write_op(
        &mut s,
        Op::WriteBlock,
        &write_req(id, 1001, targets, Stage::PipelineSetupCreate),
    )
    .await
    .unwrap();
    let resp: BlockOpResponseProto = read_delimited(&mut s, MAX).await.unwrap();
    assert_eq!(resp.status, Status::Success as i32);
    s
}

#[tokio::test]
async fn streamed_packets_and_heartbeats_are_acked_in_order() {
    let dn1 = Node::start().await;
    let dn2 = Node::start().await;
    let id = 1 << 30 | 7;
    let body = data(40 * PACKET + 1000);
    let mut s = open_pipeline(&dn1, &[&dn2], id).await;
    // Every packet sent before any ack is read, a heartbeat after every seventh.
    let mut wire = Vec::new();
    let mut expect = Vec::new();
    let (mut off, mut seq) = (0usize, 0i64);
    while off < body.len() {
        let n = (body.len() - off).min(PACKET);
        wire.extend_from_slice(&data_packet(off as u64, seq, &body[off..off + n], false));
        expect.push(seq);
        if seq % 7 == 6 {
            wire.extend_from_slice(&Packet::heartbeat().to_bytes());
            expect.push(-1);
        }
        off += n;
        seq += 1;
    }
    wire.extend_from_slice(&Packet::empty(off as i64, seq, true).to_bytes());
    expect.push(seq);
    let (mut rd, mut wr) = s.split();
    let send = async {
        wr.write_all(&wire).await.unwrap();
    };
    let acks = async {
        let mut got = Vec::new();
        for _ in 0..expect.len() {
            let a: rhdfs_proto::hdfs::PipelineAckProto =
                read_delimited(&mut rd, MAX).await.unwrap();
            assert_eq!(a.reply, vec![0, 0], "ack {}", a.seqno);
            got.push(a.seqno);
        }
        got
    };
    let ((), got) = tokio::join!(send, acks);
    assert_eq!(got, expect);
    for n in [&dn1, &dn2] {
        let r = n.ds.get(BP, id).unwrap();
        assert_eq!(
            (r.state, r.num_bytes),
            (ReplicaState::Finalized, body.len() as u64)
        );
        assert_eq!(std::fs::read(n.ds.block_path(BP, &r)).unwrap(), body);
        let (got, sums) = ReplicaReader::open(&n.ds, BP, id, 1001)
            .unwrap()
            .read(0, body.len() as u64)
            .unwrap();
        assert_eq!(got, body);
        assert_eq!(sums, csum().compute_bytes(&body));
    }
}

#[tokio::test]
async fn unverified_damaged_packet_is_stored_with_the_crcs_it_came_with() {
    let dn1 = Node::start().await;
    let dn2 = Node::start().await;
    let id = 1 << 30 | 8;
    let mut s = open_pipeline(&dn1, &[&dn2], id).await;
    // A packet whose data no longer matches its CRCs (as if damaged on the way): the first
    // node forwards and stores it unverified, the last node verifies and refuses it.
    let body = data(PACKET);
    let mut p = Packet::with_data(&csum(), 0, 0, Bytes::from(body.clone()), false, false).unwrap();
    let mut bad = p.data.to_vec();
    bad[700] ^= 0x01;
    p.data = Bytes::from(bad);
    s.write_all(&p.to_bytes()).await.unwrap();
    let a = ack(&mut s).await;
    assert_eq!(a.seqno, 0);
    assert!(
        a.reply.contains(&(Status::ErrorChecksum as i32)),
        "{:?}",
        a.reply
    );
    assert_eq!(dn2.ds.get(BP, id).unwrap().num_bytes, 0, "never stored");
    // The first node's copy keeps the CRCs the packet came with: its second chunk disagrees.
    let r = dn1.ds.get(BP, id).unwrap();
    assert_eq!(r.num_bytes, PACKET as u64);
    let got = std::fs::read(dn1.ds.block_path(BP, &r)).unwrap();
    let meta = std::fs::read(dn1.ds.meta_path(BP, &r)).unwrap();
    let err = csum().verify(&got, &meta[7..], 0).unwrap_err();
    assert!(
        matches!(
            err,
            TransferError::Checksum {
                chunk: 1,
                offset: 512
            }
        ),
        "{err}"
    );
}

/// A mirror that stops acking breaks the pipeline: the first node acks the mirror as ERROR
/// and, once the block's last packet is in, closes the connection instead of waiting on it
/// for another op (what a client still sends there — a heartbeat packet while it waited
/// for the last ack — is no op header; the client recovers the pipeline on new
/// connections).
#[tokio::test]
async fn a_connection_whose_mirror_stopped_acking_is_closed_after_the_block() {
    use rhdfs_proto::hdfs::OpWriteBlockProto;
    use rhdfs_transfer::{read_op, write_delimited};
    use tokio::io::AsyncReadExt;

    let config = super::XceiverConfig {
        socket_timeout: std::time::Duration::from_secs(2),
        // Far longer than the test waits: a connection still open after the block waits
        // this long for an op.
        keepalive: std::time::Duration::from_secs(120),
        ..Default::default()
    };
    let dn = Node::start_with(config).await;
    // The mirror accepts the block and then reads on without ever acking.
    let mirror = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let mirror_addr = mirror.local_addr().unwrap();
    let silent = tokio::spawn(async move {
        let (mut m, _) = mirror.accept().await.unwrap();
        assert_eq!(read_op(&mut m).await.unwrap(), Some(Op::WriteBlock));
        let _: OpWriteBlockProto = read_delimited(&mut m, MAX).await.unwrap();
        let ok = BlockOpResponseProto {
            status: Status::Success as i32,
            ..Default::default()
        };
        write_delimited(&mut m, &ok).await.unwrap();
        // Reads what comes (the node's write side ends after the last packet) and keeps
        // the connection open.
        let mut sink = Vec::new();
        let _ = m.read_to_end(&mut sink).await;
        std::future::pending::<()>().await;
    });
    let mut s = TcpStream::connect(dn.addr()).await.unwrap();
    write_op(
        &mut s,
        Op::WriteBlock,
        &write_req(
            41,
            1001,
            vec![super::tests::dn_info(mirror_addr)],
            Stage::PipelineSetupCreate,
        ),
    )
    .await
    .unwrap();
    let resp: BlockOpResponseProto = read_delimited(&mut s, MAX).await.unwrap();
    assert_eq!(resp.status, Status::Success as i32);
    // The whole block at once: the node's wait for packets is as long as its wait for the
    // mirror's ack (the socket timeout).
    let body = data(1000);
    s.write_all(&data_packet(0, 0, &body, false)).await.unwrap();
    s.write_all(&Packet::empty(1000, 1, true).to_bytes())
        .await
        .unwrap();
    let a = ack(&mut s).await;
    assert_eq!((a.seqno, a.reply), (0, vec![0, Status::Error as i32]));
    let a = ack(&mut s).await;
    assert_eq!((a.seqno, a.reply), (1, vec![0, Status::Error as i32]));
    // The connection ends (well before the keepalive) with nothing more on it.
    let mut rest = Vec::new();
    let n = tokio::time::timeout(std::time::Duration::from_secs(60), s.read_to_end(&mut rest))
        .await
        .expect("the connection is closed after the block")
        .unwrap_or(0);
    assert_eq!(n, 0, "{rest:?}");
    assert!(
        !silent.is_finished(),
        "the mirror stayed connected and silent"
    );
    silent.abort();
}
