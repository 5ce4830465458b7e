//! BlockReader / BlockWriter / transfer_replica against a small fake DataNode on 127.0.0.1.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use rhdfs_proto::hdfs::op_write_block_proto::BlockConstructionStage;
use rhdfs_proto::hdfs::{
    BlockOpResponseProto, ChecksumProto, DatanodeIdProto, DatanodeInfoProto, ExtendedBlockProto,
    OpReadBlockProto, OpWriteBlockProto, ReadOpChecksumInfoProto, Status,
};
use rhdfs_transfer::ack::{self, PipelineAck};
use rhdfs_transfer::op::{self, DEFAULT_MAX_MESSAGE_LEN, Op};
use rhdfs_transfer::packet::{self, MAX_PACKET_SIZE, Packet};
use rhdfs_transfer::{
    BlockReader, BlockWriter, DataChecksum, ReadBlockParams, TransferConfig, TransferError,
    WriteBlockParams, read_block, transfer_replica, transfer_replica_to,
};
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::net::{TcpListener, TcpStream};

#[derive(Default, Clone)]
struct Behaviour {
    /// Flip a data byte at this block offset in READ_BLOCK responses.
    corrupt_at: Option<u64>,
    /// READ_BLOCK answers ERROR with this message.
    read_error: Option<String>,
    /// Connect ack status ERROR with this firstBadLink.
    connect_bad_link: Option<String>,
    /// Ack this data seqno with ERROR at this pipeline index.
    fail_ack: Option<(i64, usize)>,
    /// Ack this data seqno with a wrong seqno.
    wrong_seqno_at: Option<i64>,
    /// Delay before each data ack.
    ack_delay: Option<Duration>,
    /// Packet size used for READ_BLOCK responses.
    read_packet_chunks: usize,
}

#[derive(Default)]
struct Log {
    read_statuses: Vec<Option<Status>>,
    write_ops: Vec<OpWriteBlockProto>,
    /// (offset, seqno, len, last, sync) of every packet received.
    packets: Vec<(i64, i64, usize, bool, bool)>,
    heartbeats: usize,
    ops: usize,
}

#[derive(Clone)]
struct FakeDn {
    blocks: Arc<Mutex<HashMap<u64, Vec<u8>>>>,
    log: Arc<Mutex<Log>>,
    behaviour: Behaviour,
}

impl FakeDn {
    fn new(behaviour: Behaviour) -> Self {
        FakeDn {
            blocks: Arc::default(),
            log: Arc::default(),
            behaviour,
        }
    }

    async fn start(&self) -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let me = self.clone();
        tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                let me = me.clone();
                tokio::spawn(async move {
                    let _ = me.serve(sock).await;
                });
            }
        });
        port
    }

    async fn serve(&self, sock: TcpStream) -> Result<(), TransferError> {
        let mut s = BufReader::new(sock);
        while let Some(op) = op::read_op(&mut s).await? {
            self.log.lock().unwrap().ops += 1;
            match op {
                Op::ReadBlock => self.read_block(&mut s).await?,
                Op::WriteBlock => self.write_block(&mut s).await?,
                other => panic!("unexpected op {other:?}"),
            }
        }
        Ok(())
    }

    async fn read_block<S: AsyncRead + AsyncWrite + Unpin>(
        &self,
        s: &mut S,
    ) -> Result<(), TransferError> {
        let req: OpReadBlockProto = op::read_delimited(s, DEFAULT_MAX_MESSAGE_LEN).await?;
        if let Some(msg) = &self.behaviour.read_error {
            ack::write_response(s, &ack::response_error(Status::Error, msg.clone())).await?;
            return Ok(());
        }
        let id = req.header.base_header.block.block_id;
        let data = self
            .blocks
            .lock()
            .unwrap()
            .get(&id)
            .cloned()
            .unwrap_or_default();
        let cs = DataChecksum::default();
        let bpc = 512u64;
        let chunk_offset = req.offset / bpc * bpc;
        let end = (req.offset + req.len).div_ceil(bpc) * bpc;
        let end = end.min(data.len() as u64);
        let resp = BlockOpResponseProto {
            status: Status::Success as i32,
            read_op_checksum_info: Some(ReadOpChecksumInfoProto {
                checksum: ChecksumProto {
                    r#type: 2,
                    bytes_per_checksum: 512,
                },
                chunk_offset,
            }),
            ..Default::default()
        };
        ack::write_response(s, &resp).await?;
        let per_packet = self.behaviour.read_packet_chunks.max(1) as u64 * bpc;
        let mut off = chunk_offset;
        let mut seqno = 0;
        while off < end {
            let n = per_packet.min(end - off);
            let chunk = &data[off as usize..(off + n) as usize];
            let mut p = Packet::with_data(
                &cs,
                off as i64,
                seqno,
                Bytes::copy_from_slice(chunk),
                false,
                false,
            )?;
            if let Some(c) = self.behaviour.corrupt_at
                && c >= off
                && c < off + n
            {
                let mut d = p.data.to_vec();
                d[(c - off) as usize] ^= 0x55;
                p.data = Bytes::from(d);
            }
            packet::write_packet(s, &p).await?;
            off += n;
            seqno += 1;
        }
        packet::write_packet(s, &Packet::empty(off as i64, seqno, true)).await?;
        let status = ack::read_client_read_status(s).await?;
        self.log.lock().unwrap().read_statuses.push(status);
        Ok(())
    }

    async fn write_block<S: AsyncRead + AsyncWrite + Unpin>(
        &self,
        s: &mut S,
    ) -> Result<(), TransferError> {
        let req: OpWriteBlockProto = op::read_delimited(s, DEFAULT_MAX_MESSAGE_LEN).await?;
        self.log.lock().unwrap().write_ops.push(req.clone());
        let is_client = !req.header.client_name.is_empty();
        let is_transfer = req.stage == BlockConstructionStage::TransferRbw as i32
            || req.stage == BlockConstructionStage::TransferFinalized as i32;
        let acks = is_client && !is_transfer;
        let nodes = req.pipeline_size.max(1) as usize;
        if acks {
            if let Some(link) = &self.behaviour.connect_bad_link {
                ack::write_response(s, &ack::response_connect_ack(Status::Error, link.clone()))
                    .await?;
                return Ok(());
            }
            ack::write_response(s, &ack::response_connect_ack(Status::Success, "")).await?;
        }
        let cs = DataChecksum::from_proto(&req.requested_checksum)?;
        let id = req.header.base_header.block.block_id;
        loop {
            let p = packet::read_packet(s, MAX_PACKET_SIZE).await?;
            let h = p.header;
            if h.is_heartbeat() {
                self.log.lock().unwrap().heartbeats += 1;
                if acks {
                    ack::write_ack(s, &PipelineAck::success(-1, nodes)).await?;
                }
                continue;
            }
            p.verify(&cs)?;
            self.log.lock().unwrap().packets.push((
                h.offset_in_block,
                h.seqno,
                p.data.len(),
                h.last_packet_in_block,
                h.sync_block,
            ));
            {
                let mut blocks = self.blocks.lock().unwrap();
                let b = blocks.entry(id).or_default();
                let off = h.offset_in_block as usize;
                if b.len() < off + p.data.len() {
                    b.resize(off + p.data.len(), 0);
                }
                b[off..off + p.data.len()].copy_from_slice(&p.data);
            }
            if acks {
                if let Some(d) = self.behaviour.ack_delay {
                    tokio::time::sleep(d).await;
                }
                let mut a = PipelineAck::success(h.seqno, nodes);
                if let Some((seq, idx)) = self.behaviour.fail_ack
                    && seq == h.seqno
                {
                    a = PipelineAck::success(h.seqno, nodes);
                    a.replies[idx] = Status::Error;
                    a.flags[idx] = Status::Error as u32;
                }
                if self.behaviour.wrong_seqno_at == Some(h.seqno) {
                    a.seqno += 5;
                }
                ack::write_ack(s, &a).await?;
            }
            if h.last_packet_in_block {
                break;
            }
        }
        if is_client && is_transfer {
            ack::write_response(s, &ack::response_success()).await?;
        }
        Ok(())
    }
}

fn block(id: u64) -> ExtendedBlockProto {
    ExtendedBlockProto {
        pool_id: "BP-1".into(),
        block_id: id,
        generation_stamp: 1001,
        num_bytes: Some(0),
    }
}

fn dn_info(port: u16, uuid: &str) -> DatanodeInfoProto {
    DatanodeInfoProto {
        id: DatanodeIdProto {
            ip_addr: "127.0.0.1".into(),
            host_name: "localhost".into(),
            datanode_uuid: uuid.into(),
            xfer_port: u32::from(port),
            info_port: 0,
            ipc_port: 0,
            info_secure_port: None,
        },
        ..Default::default()
    }
}

fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 31 % 251) as u8).collect()
}

fn cfg() -> TransferConfig {
    TransferConfig {
        socket_timeout: Duration::from_secs(10),
        ..Default::default()
    }
}

#[tokio::test]
async fn read_ranges_and_reuse_connection() {
    let dn = FakeDn::new(Behaviour {
        read_packet_chunks: 3,
        ..Default::default()
    });
    let data = pattern(5000);
    dn.blocks.lock().unwrap().insert(7, data.clone());
    let port = dn.start().await;
    let addr = format!("127.0.0.1:{port}");

    let mut r = BlockReader::connect(
        &addr,
        &ReadBlockParams::new(block(7), "c1", 0, 5000),
        &cfg(),
    )
    .await
    .unwrap();
    let all = r.read_all().await.unwrap();
    assert_eq!(&all[..], &data[..]);
    assert!(r.is_done());
    let stream = r.into_inner();

    // Unaligned range on the same connection.
    let (part, stream) = read_block(
        stream,
        &ReadBlockParams::new(block(7), "c1", 700, 1000),
        &cfg(),
    )
    .await
    .unwrap();
    assert_eq!(&part[..], &data[700..1700]);
    // Tail of the block with a short last chunk.
    let (tail, _stream) = read_block(
        stream,
        &ReadBlockParams::new(block(7), "c1", 4999, 1),
        &cfg(),
    )
    .await
    .unwrap();
    assert_eq!(&tail[..], &data[4999..]);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let log = dn.log.lock().unwrap();
    assert_eq!(log.ops, 3);
    assert_eq!(log.read_statuses, vec![Some(Status::ChecksumOk); 3]);
}

#[tokio::test]
async fn read_checksum_mismatch() {
    let dn = FakeDn::new(Behaviour {
        corrupt_at: Some(1300),
        read_packet_chunks: 2,
        ..Default::default()
    });
    dn.blocks.lock().unwrap().insert(8, pattern(3000));
    let port = dn.start().await;
    let addr = format!("127.0.0.1:{port}");
    let mut r = BlockReader::connect(&addr, &ReadBlockParams::new(block(8), "c", 0, 3000), &cfg())
        .await
        .unwrap();
    let err = r.read_all().await.unwrap_err();
    match err {
        TransferError::Checksum { chunk, offset } => {
            assert_eq!(chunk, 0);
            assert_eq!(offset, 1024);
        }
        other => panic!("{other:?}"),
    }
    drop(r);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        dn.log.lock().unwrap().read_statuses,
        vec![Some(Status::ErrorChecksum)]
    );
}

#[tokio::test]
async fn read_error_response() {
    let dn = FakeDn::new(Behaviour {
        read_error: Some("Replica not found".into()),
        ..Default::default()
    });
    let port = dn.start().await;
    let addr = format!("127.0.0.1:{port}");
    let err = BlockReader::connect(&addr, &ReadBlockParams::new(block(9), "c", 0, 10), &cfg())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, TransferError::Remote { status: 1, message, .. } if message == "Replica not found"),
        "{err:?}"
    );
}

#[tokio::test]
async fn read_short_replica_is_an_error() {
    let dn = FakeDn::new(Behaviour::default());
    dn.blocks.lock().unwrap().insert(10, pattern(100));
    let port = dn.start().await;
    let addr = format!("127.0.0.1:{port}");
    let mut r = BlockReader::connect(&addr, &ReadBlockParams::new(block(10), "c", 0, 200), &cfg())
        .await
        .unwrap();
    assert!(matches!(
        r.read_all().await,
        Err(TransferError::Protocol(_))
    ));
}

fn write_params(port: u16, id: u64, nodes: usize) -> WriteBlockParams {
    let pipeline = (0..nodes)
        .map(|i| dn_info(port, &format!("dn{i}")))
        .collect();
    let mut p = WriteBlockParams::new(
        block(id),
        "client-1",
        pipeline,
        BlockConstructionStage::PipelineSetupCreate,
    );
    p.storage_ids = (0..nodes).map(|i| format!("DS-{i}")).collect();
    p.latest_generation_stamp = 1001;
    p.first_seqno = 19;
    p
}

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
