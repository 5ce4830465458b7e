//! Acks written upstream together: the responder writes every ack that is ready in one
//! write, in order, and never holds one back while it waits for a later packet's mirror ack;
//! the disk thread hands its acks over after each packet's write, so every ack a client
//! reads comes after its packet is in the replica's file.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::task::{Context, Poll};

use prost::Message;
use rhdfs_proto::hdfs::{PipelineAckProto, Status};
use rhdfs_transfer::Packet;
use rhdfs_transfer::op::read_delimited;
use tokio::io::{AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use super::tests::{BP, Node, data, data_packet};
use super::write_block::respond_acks;
use super::write_disk::PendingAck;
use super::{XceiverConfig, XceiverContext};
use crate::dataset::Dataset;
use crate::faults::FaultHooks;

/// A writer handing each write it is given to the test, whole.
struct Writes(mpsc::UnboundedSender<Vec<u8>>);

impl AsyncWrite for Writes {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let _ = self.0.send(buf.to_vec());
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

fn context(dir: &tempfile::TempDir) -> Arc<XceiverContext> {
    Arc::new(XceiverContext {
        dataset: Dataset::open(&[dir.path().to_path_buf()], 0).unwrap(),
        notifier: Arc::new(crate::notify::NoopNotifier),
        faults: Arc::new(FaultHooks::default()),
        config: XceiverConfig::default(),
        active: Default::default(),
        activity: Default::default(),
    })
}

fn pending(seqno: i64, end: bool) -> PendingAck {
    PendingAck {
        seqno,
        status: Status::Success,
        end,
    }
}

/// The delimited acks in one write: (seqno, replies) each.
fn acks_in(mut write: &[u8]) -> Vec<(i64, Vec<i32>)> {
    let mut acks = Vec::new();
    while !write.is_empty() {
        let a = PipelineAckProto::decode_length_delimited(&mut write).unwrap();
        acks.push((a.seqno, a.reply));
    }
    acks
}

fn mirror_ack(seqno: i64) -> Vec<u8> {
    PipelineAckProto {
        seqno,
        reply: vec![Status::Success as i32],
        downstream_ack_time_nanos: Some(0),
        flag: vec![0],
    }
    .encode_length_delimited_to_vec()
}

/// The last node of a pipeline: acks queued together go upstream in one write, in order.
#[tokio::test]
async fn acks_ready_together_go_in_one_write_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(&dir);
    let (tx, rx) = mpsc::unbounded_channel();
    for seqno in 0..5 {
        tx.send(pending(seqno, seqno == 4)).unwrap();
    }
    let (wtx, mut writes) = mpsc::unbounded_channel();
    let mut w = Writes(wtx);
    let dead = AtomicBool::new(false);
    respond_acks::<_, tokio::io::DuplexStream>(&ctx, &mut w, None, false, &dead, rx)
        .await
        .unwrap();
    drop(w);
    let first = writes.recv().await.unwrap();
    assert_eq!(
        acks_in(&first),
        (0..5).map(|s| (s, vec![0])).collect::<Vec<_>>()
    );
    assert!(writes.recv().await.is_none(), "one write");
}

/// A middle node: the acks whose mirror acks are here go upstream before the responder
/// waits for the next mirror ack, and each carries its own mirror's reply.
#[tokio::test]
async fn acks_ready_are_written_before_waiting_for_the_mirror() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(&dir);
    let (tx, rx) = mpsc::unbounded_channel();
    for seqno in 0..4 {
        tx.send(pending(seqno, seqno == 3)).unwrap();
    }
    let (mut mirror_end, mirror) = tokio::io::duplex(4096);
    let mut both = mirror_ack(0);
    both.extend(mirror_ack(1));
    mirror_end.write_all(&both).await.unwrap();
    let (wtx, mut writes) = mpsc::unbounded_channel();
    let responder = tokio::spawn(async move {
        let mut w = Writes(wtx);
        let dead = AtomicBool::new(false);
        respond_acks(&ctx, &mut w, Some(BufReader::new(mirror)), true, &dead, rx).await
    });
    // Acks 0 and 1 are written while the mirror's ack 2 has not come.
    let first = writes.recv().await.unwrap();
    assert_eq!(acks_in(&first), vec![(0, vec![0, 0]), (1, vec![0, 0])]);
    let mut rest = mirror_ack(2);
    rest.extend(mirror_ack(3));
    mirror_end.write_all(&rest).await.unwrap();
    responder.await.unwrap().unwrap();
    let second = writes.recv().await.unwrap();
    assert_eq!(acks_in(&second), vec![(2, vec![0, 0]), (3, vec![0, 0])]);
    assert!(writes.recv().await.is_none());
}

/// Packets sent in one write to a single node: every ack comes in order, and when a
/// packet's ack arrives its bytes are in the replica's file.
#[tokio::test]
async fn each_ack_follows_its_packets_write() {
    const PACKET: usize = 64_512;
    let dn = Node::start().await;
    let id = 1 << 30 | 21;
    let mut s = super::write_tests::open_pipeline(&dn, &[], id).await;
    let n = 24usize;
    let body = data(n * PACKET);
    let mut wire = Vec::new();
    for i in 0..n {
        let off = i * PACKET;
        wire.extend_from_slice(&data_packet(
            off as u64,
            i as i64,
            &body[off..off + PACKET],
            false,
        ));
    }
    wire.extend_from_slice(&Packet::empty(body.len() as i64, n as i64, true).to_bytes());
    let (mut rd, mut wr) = s.split();
    let send = async { wr.write_all(&wire).await.unwrap() };
    let acks = async {
        for i in 0..n {
            let a: PipelineAckProto = read_delimited(&mut rd, 1 << 20).await.unwrap();
            assert_eq!((a.seqno, a.reply), (i as i64, vec![0]));
            let on_disk = file_len(&dn, id);
            assert!(
                on_disk >= ((i + 1) * PACKET) as u64,
                "ack {i} with {on_disk} bytes in the file"
            );
        }
        let last: PipelineAckProto = read_delimited(&mut rd, 1 << 20).await.unwrap();
        assert_eq!(last.seqno, n as i64);
    };
    tokio::join!(send, acks);
    assert_eq!(
        std::fs::read(dn.ds.block_path(BP, &dn.ds.get(BP, id).unwrap())).unwrap(),
        body
    );
}

/// The length of the replica's block file. Finalizing moves the file and then updates the
/// replica map, so between the two the path the map gives is gone: looked up again until the
/// file is found (bounded).
fn file_len(dn: &Node, id: u64) -> u64 {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let r = dn.ds.get(BP, id).unwrap();
        match std::fs::metadata(dn.ds.block_path(BP, &r)) {
            Ok(m) => return m.len(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                assert!(std::time::Instant::now() < deadline, "no block file: {e}");
                std::thread::yield_now();
            }
            Err(e) => panic!("block file: {e}"),
        }
    }
}
