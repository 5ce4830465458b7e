//! BlockWriter and transfer_replica against the fake DataNode.

use crate::support;

use std::time::Duration;

use rhdfs_proto::hdfs::op_write_block_proto::BlockConstructionStage;
use rhdfs_proto::hdfs::{OpWriteBlockProto, Status};
use rhdfs_transfer::ack;
use rhdfs_transfer::op::{self, DEFAULT_MAX_MESSAGE_LEN};
use rhdfs_transfer::packet::{self, MAX_PACKET_SIZE};
use rhdfs_transfer::{BlockWriter, TransferError, transfer_replica, transfer_replica_to};
use support::{Behaviour, FakeDn, cfg, pattern, write_params};
use tokio::io::BufReader;
use tokio::net::{TcpListener, TcpStream};

#[tokio::test]
async fn write_block_with_flush_sync_and_close() {
    let dn = FakeDn::new(Behaviour::default());
    let port = dn.start().await;
    let params = write_params(port, 20, 3);
    let mut w = BlockWriter::connect(&params, &cfg()).await.unwrap();
    let data = pattern(200_000);
    w.write(&data[..3]).await.unwrap();
    w.hflush().await.unwrap();
    assert_eq!(w.bytes_acked(), 3);
    w.write(&data[3..130_000]).await.unwrap();
    w.hsync().await.unwrap();
    assert_eq!(w.bytes_acked(), 130_000);
    w.write(&data[130_000..]).await.unwrap();
    let len = w.close().await.unwrap();
    assert_eq!(len, 200_000);
    assert_eq!(dn.blocks.lock().unwrap().get(&20).unwrap(), &data);

    let log = dn.log.lock().unwrap();
    let op = &log.write_ops[0];
    assert_eq!(op.targets.len(), 2);
    assert_eq!(op.pipeline_size, 3);
    assert_eq!(op.storage_id.as_deref(), Some("DS-0"));
    assert_eq!(
        op.target_storage_ids,
        vec!["DS-1".to_string(), "DS-2".to_string()]
    );
    assert_eq!(op.requested_checksum.r#type, 2);
    assert_eq!(op.requested_checksum.bytes_per_checksum, 512);
    let pk = &log.packets;
    // First packet: 3 bytes at 0; then a filler up to the chunk boundary; then full packets.
    assert_eq!(pk[0], (0, 19, 3, false, false));
    assert_eq!(pk[1], (3, 20, 509, false, false));
    assert_eq!(pk[2], (512, 21, 64512, false, false));
    // Seqnos strictly increase by one; the last packet is empty at the block end.
    for w in pk.windows(2) {
        assert_eq!(w[1].1, w[0].1 + 1);
    }
    assert!(pk.iter().any(|p| p.4), "a sync packet was sent");
    let last = pk.last().unwrap();
    assert_eq!((last.0, last.2, last.3), (200_000, 0, true));
    // No packet crosses a chunk boundary from an unaligned start.
    for p in pk.iter() {
        let off = p.0 as usize;
        if !off.is_multiple_of(512) {
            assert!(off % 512 + p.2 <= 512);
        }
    }
}

#[tokio::test]
async fn write_small_window() {
    let dn = FakeDn::new(Behaviour {
        ack_delay: Some(Duration::from_millis(5)),
        ..Default::default()
    });
    let port = dn.start().await;
    let mut c = cfg();
    c.max_packets_in_flight = 2;
    c.write_packet_size = 4096;
    let mut w = BlockWriter::connect(&write_params(port, 21, 1), &c)
        .await
        .unwrap();
    let data = pattern(50_000);
    w.write(&data).await.unwrap();
    assert!(w.unacked_packets().len() <= 2);
    assert_eq!(w.close().await.unwrap(), 50_000);
    assert_eq!(dn.blocks.lock().unwrap().get(&21).unwrap(), &data);
    // 4096-byte packets hold 7 chunks of 512.
    assert_eq!(dn.log.lock().unwrap().packets[0].2, 7 * 512);
}

#[tokio::test]
async fn write_connect_ack_first_bad_link() {
    let dn = FakeDn::new(Behaviour {
        connect_bad_link: Some("127.0.0.1:50010".into()),
        ..Default::default()
    });
    let port = dn.start().await;
    let err = BlockWriter::connect(&write_params(port, 22, 2), &cfg())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, TransferError::Remote { first_bad_link, .. } if first_bad_link == "127.0.0.1:50010"),
        "{err:?}"
    );
}

#[tokio::test]
async fn write_ack_failure_names_pipeline_index() {
    let dn = FakeDn::new(Behaviour {
        fail_ack: Some((20, 1)),
        ..Default::default()
    });
    let port = dn.start().await;
    let mut w = BlockWriter::connect(&write_params(port, 23, 3), &cfg())
        .await
        .unwrap();
    w.write(&pattern(100_000)).await.unwrap();
    let err = w.hflush().await.unwrap_err();
    assert!(
        matches!(
            err,
            TransferError::Pipeline {
                seqno: 20,
                index: 1,
                status: 1
            }
        ),
        "{err:?}"
    );
    // The packet that failed and all later ones are still unacked for replay.
    let unacked = w.unacked_packets();
    assert_eq!(unacked[0].header.seqno, 20);
    assert_eq!(w.bytes_acked(), 64512);
    assert!(w.write(b"x").await.is_err());
}

#[tokio::test]
async fn write_out_of_order_ack_fails() {
    let dn = FakeDn::new(Behaviour {
        wrong_seqno_at: Some(19),
        ..Default::default()
    });
    let port = dn.start().await;
    let mut w = BlockWriter::connect(&write_params(port, 24, 1), &cfg())
        .await
        .unwrap();
    w.write(b"hello").await.unwrap();
    let err = w.hflush().await.unwrap_err();
    assert!(
        matches!(err, TransferError::Protocol(ref m) if m.contains("expecting")),
        "{err:?}"
    );
}

#[tokio::test]
async fn write_sends_heartbeats_when_idle() {
    let dn = FakeDn::new(Behaviour::default());
    let port = dn.start().await;
    let mut c = cfg();
    c.heartbeat_interval = Duration::from_millis(40);
    let mut w = BlockWriter::connect(&write_params(port, 25, 2), &c)
        .await
        .unwrap();
    w.write(b"abc").await.unwrap();
    w.hflush().await.unwrap();
    tokio::time::sleep(Duration::from_millis(250)).await;
    w.write(b"def").await.unwrap();
    assert_eq!(w.close().await.unwrap(), 6);
    assert!(dn.log.lock().unwrap().heartbeats >= 2);
    assert_eq!(dn.blocks.lock().unwrap().get(&25).unwrap(), b"abcdef");
}

#[tokio::test]
async fn write_times_out_without_acks() {
    // A peer that accepts the op and the connect ack but never acks packets.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let (sock, _) = listener.accept().await.unwrap();
        let mut s = BufReader::new(sock);
        op::read_op(&mut s).await.unwrap();
        let _: OpWriteBlockProto = op::read_delimited(&mut s, DEFAULT_MAX_MESSAGE_LEN)
            .await
            .unwrap();
        ack::write_response(&mut s, &ack::response_connect_ack(Status::Success, ""))
            .await
            .unwrap();
        while packet::read_packet(&mut s, MAX_PACKET_SIZE).await.is_ok() {}
    });
    let mut c = cfg();
    c.socket_timeout = Duration::from_millis(200);
    c.heartbeat_interval = Duration::ZERO;
    let mut w = BlockWriter::connect(&write_params(port, 26, 1), &c)
        .await
        .unwrap();
    w.write(b"data").await.unwrap();
    assert!(matches!(w.hflush().await, Err(TransferError::Timeout(_))));
}

#[tokio::test]
async fn transfer_without_client_name_gets_no_acks() {
    let dn = FakeDn::new(Behaviour::default());
    let port = dn.start().await;
    let data = pattern(150_000);
    let mut p = write_params(port, 30, 1);
    p.client_name.clear();
    p.stage = BlockConstructionStage::TransferFinalized;
    p.first_seqno = 0;
    transfer_replica_to(&p, &data[..], data.len() as u64, &cfg())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(dn.blocks.lock().unwrap().get(&30).unwrap(), &data);
    let log = dn.log.lock().unwrap();
    assert_eq!(log.packets[0], (0, 0, 64512, false, false));
    assert!(log.packets.last().unwrap().3);
}

#[tokio::test]
async fn transfer_with_client_name_reads_close_ack() {
    let dn = FakeDn::new(Behaviour::default());
    let port = dn.start().await;
    let data = pattern(1000);
    let mut p = write_params(port, 31, 1);
    p.stage = BlockConstructionStage::TransferRbw;
    let stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    transfer_replica(stream, &p, &data[..], 1000, &cfg())
        .await
        .unwrap();
    assert_eq!(dn.blocks.lock().unwrap().get(&31).unwrap(), &data);

    // A source shorter than the announced length fails.
    let stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let err = transfer_replica(stream, &p, &data[..10], 1000, &cfg())
        .await
        .unwrap_err();
    assert!(err.is_eof(), "{err:?}");
}

#[tokio::test]
async fn block_writer_rejects_transfer_stage() {
    let mut p = write_params(1, 32, 1);
    p.stage = BlockConstructionStage::TransferRbw;
    let (a, _b) = tokio::io::duplex(64);
    assert!(matches!(
        BlockWriter::start(a, &p, &cfg()).await,
        Err(TransferError::Protocol(_))
    ));
}

#[tokio::test]
async fn write_append_at_unaligned_offset() {
    let dn = FakeDn::new(Behaviour::default());
    dn.blocks.lock().unwrap().insert(40, pattern(1000));
    let port = dn.start().await;
    let mut p = write_params(port, 40, 1);
    p.stage = BlockConstructionStage::PipelineSetupAppend;
    p.start_offset = 1000;
    p.min_bytes_rcvd = 1000;
    p.max_bytes_rcvd = 1000;
    let mut w = BlockWriter::connect(&p, &cfg()).await.unwrap();
    assert_eq!(w.bytes_acked(), 1000);
    let more = pattern(2000);
    w.write(&more).await.unwrap();
    // hsync with nothing buffered sends an empty sync packet.
    w.hflush().await.unwrap();
    w.hsync().await.unwrap();
    assert_eq!(w.close().await.unwrap(), 3000);
    let mut want = pattern(1000);
    want.extend_from_slice(&more);
    assert_eq!(dn.blocks.lock().unwrap().get(&40).unwrap(), &want);
    let log = dn.log.lock().unwrap();
    assert_eq!(log.write_ops[0].stage, 0);
    assert_eq!(log.packets[0], (1000, 19, 24, false, false));
    assert_eq!(log.packets[1], (1024, 20, 1976, false, false));
    assert_eq!(log.packets[2], (3000, 21, 0, false, true));
    assert_eq!(log.packets[3], (3000, 22, 0, true, false));
}
