//! Write/read round trips over TCP against in-process transfer servers (no NameNode: block
//! events go to a channel).

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use rhdfs_proto::hdfs::op_write_block_proto::BlockConstructionStage as Stage;
use rhdfs_proto::hdfs::{
    BaseHeaderProto, BlockOpResponseProto, ChecksumProto, ClientOperationHeaderProto,
    ClientReadStatusProto, DatanodeIdProto, DatanodeInfoProto, ExtendedBlockProto,
    OpBlockChecksumProto, OpReadBlockProto, OpTransferBlockProto, OpWriteBlockProto,
    PipelineAckProto, Status,
};
use rhdfs_transfer::op::read_delimited;
use rhdfs_transfer::{
    ChecksumKind, DataChecksum, Op, Packet, read_packet, write_delimited, write_op,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

use super::{XceiverConfig, XceiverContext, XceiverServer};
use crate::dataset::Dataset;
use crate::faults::FaultHooks;
use crate::notify::{BlockEvent, BlockStatus};
use crate::replica::ReplicaState;

pub(crate) const BP: &str = "BP-7-127.0.0.1-7";
const MAX: usize = 1 << 20;

pub(crate) struct Node {
    _dir: tempfile::TempDir,
    pub(crate) ds: Arc<Dataset>,
    server: XceiverServer,
    events: mpsc::UnboundedReceiver<BlockEvent>,
    faults: Arc<FaultHooks>,
    /// The connections the server counts as served.
    active: Arc<std::sync::atomic::AtomicUsize>,
}

impl Node {
    pub(crate) async fn start() -> Node {
        Node::start_with(XceiverConfig::default()).await
    }

    pub(crate) async fn start_with(config: XceiverConfig) -> Node {
        let dir = tempfile::tempdir().unwrap();
        let ds = Dataset::open(&[dir.path().to_path_buf()], 0).unwrap();
        let (tx, events) = mpsc::unbounded_channel();
        let faults = Arc::new(FaultHooks::default());
        let ctx = XceiverContext {
            dataset: ds.clone(),
            notifier: Arc::new(tx),
            faults: faults.clone(),
            config,
            active: Default::default(),
            activity: Default::default(),
        };
        let active = ctx.active.clone();
        let server = XceiverServer::bind("127.0.0.1:0".parse().unwrap(), ctx)
            .await
            .unwrap();
        Node {
            _dir: dir,
            ds,
            server,
            events,
            faults,
            active,
        }
    }

    /// Waits until the server counts `n` connections as served.
    async fn wait_serving(&self, n: usize) {
        use std::sync::atomic::Ordering;
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
        while self.active.load(Ordering::Relaxed) != n {
            assert!(
                tokio::time::Instant::now() < deadline,
                "never {n} connections served"
            );
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    }

    pub(crate) fn addr(&self) -> SocketAddr {
        self.server.local_addr()
    }

    pub(crate) fn info(&self) -> DatanodeInfoProto {
        dn_info(self.addr())
    }
}

pub(crate) fn dn_info(a: SocketAddr) -> DatanodeInfoProto {
    DatanodeInfoProto {
        id: DatanodeIdProto {
            ip_addr: a.ip().to_string(),
            host_name: "localhost".into(),
            datanode_uuid: "x".into(),
            xfer_port: u32::from(a.port()),
            info_port: 0,
            ipc_port: 0,
            info_secure_port: None,
        },
        ..Default::default()
    }
}

pub(crate) fn block(id: u64, gs: u64, len: u64) -> ExtendedBlockProto {
    ExtendedBlockProto {
        pool_id: BP.into(),
        block_id: id,
        generation_stamp: gs,
        num_bytes: Some(len),
    }
}

pub(crate) fn write_req(
    id: u64,
    gs: u64,
    targets: Vec<DatanodeInfoProto>,
    stage: Stage,
) -> OpWriteBlockProto {
    OpWriteBlockProto {
        header: ClientOperationHeaderProto {
            base_header: BaseHeaderProto {
                block: block(id, gs, 134217728),
                token: None,
                trace_info: None,
            },
            client_name: "DFSClient_test".into(),
        },
        pipeline_size: targets.len() as u32 + 1,
        targets,
        stage: stage as i32,
        requested_checksum: ChecksumProto {
            r#type: 2,
            bytes_per_checksum: 512,
        },
        ..Default::default()
    }
}

pub(crate) fn csum() -> DataChecksum {
    DataChecksum::new(ChecksumKind::Crc32c, 512)
}

pub(crate) fn data_packet(off: u64, seqno: i64, data: &[u8], sync: bool) -> Bytes {
    Packet::with_data(
        &csum(),
        off as i64,
        seqno,
        Bytes::copy_from_slice(data),
        false,
        sync,
    )
    .unwrap()
    .to_bytes()
}

pub(crate) async fn ack(s: &mut TcpStream) -> PipelineAckProto {
    read_delimited(s, MAX).await.unwrap()
}

pub(crate) fn data(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 31 % 253) as u8).collect()
}

#[tokio::test]
async fn two_node_pipeline_write_then_read() {
    let mut dn1 = Node::start().await;
    let mut dn2 = Node::start().await;
    let body = data(200_000);
    let mut s = TcpStream::connect(dn1.addr()).await.unwrap();
    write_op(
        &mut s,
        Op::WriteBlock,
        &write_req(
            1 << 30 | 1,
            1001,
            vec![dn2.info()],
            Stage::PipelineSetupCreate,
        ),
    )
    .await
    .unwrap();
    let resp: BlockOpResponseProto = read_delimited(&mut s, MAX).await.unwrap();
    assert_eq!(resp.status, Status::Success as i32);
    // seqnos do not start at 0; hflush pattern re-sends a partial chunk; heartbeat in between.
    let mut seq = 19;
    let mut sent = 0usize;
    let plan: &[(usize, usize, bool)] =
        &[(0, 3, false), (0, 6, true), (0, 9, true), (9, 64503, false)];
    for &(off, end, sync) in plan {
        s.write_all(&data_packet(off as u64, seq, &body[off..end], sync))
            .await
            .unwrap();
        let a = ack(&mut s).await;
        assert_eq!(
            (a.seqno, a.reply.clone(), a.flag.clone()),
            (seq, vec![0, 0], vec![0, 0])
        );
        seq += 1;
        sent = end;
    }
    s.write_all(&Packet::heartbeat().to_bytes()).await.unwrap();
    let a = ack(&mut s).await;
    assert_eq!((a.seqno, a.reply), (-1, vec![0, 0]));
    while sent < body.len() {
        let n = (body.len() - sent).min(64512);
        s.write_all(&data_packet(sent as u64, seq, &body[sent..sent + n], false))
            .await
            .unwrap();
        assert_eq!(ack(&mut s).await.seqno, seq);
        seq += 1;
        sent += n;
    }
    s.write_all(&Packet::empty(sent as i64, seq, true).to_bytes())
        .await
        .unwrap();
    let a = ack(&mut s).await;
    assert_eq!((a.seqno, a.reply), (seq, vec![0, 0]));
    drop(s);

    for n in [&mut dn1, &mut dn2] {
        let r = n.ds.get(BP, 1 << 30 | 1).unwrap();
        assert_eq!(
            (r.state, r.num_bytes, r.gs),
            (ReplicaState::Finalized, body.len() as u64, 1001)
        );
        assert_eq!(std::fs::read(n.ds.block_path(BP, &r)).unwrap(), body);
        let mut got = Vec::new();
        while let Ok(ev) = n.events.try_recv() {
            got.push(ev.status);
        }
        assert!(got.contains(&BlockStatus::Received), "{got:?}");
    }

    // READ_BLOCK at an unaligned offset on DN2, then BLOCK_CHECKSUM on the same connection.
    let mut s = TcpStream::connect(dn2.addr()).await.unwrap();
    let (off, len) = (1000u64, 70_000u64);
    let rd = OpReadBlockProto {
        header: ClientOperationHeaderProto {
            base_header: BaseHeaderProto {
                block: block(1 << 30 | 1, 1001, body.len() as u64),
                token: None,
                trace_info: None,
            },
            client_name: "c".into(),
        },
        offset: off,
        len,
        send_checksums: Some(true),
        caching_strategy: None,
    };
    write_op(&mut s, Op::ReadBlock, &rd).await.unwrap();
    let resp: BlockOpResponseProto = read_delimited(&mut s, MAX).await.unwrap();
    assert_eq!(resp.status, Status::Success as i32);
    let info = resp.read_op_checksum_info.unwrap();
    assert_eq!(info.chunk_offset, 512);
    let mut got = Vec::new();
    let mut expect_off = 512i64;
    loop {
        let p = read_packet(&mut s, 16 << 20).await.unwrap();
        if p.header.last_packet_in_block {
            assert!(p.data.is_empty());
            break;
        }
        assert_eq!(p.header.offset_in_block, expect_off);
        assert!(p.data.len() <= 65536);
        p.verify(&csum()).unwrap();
        expect_off += p.data.len() as i64;
        got.extend_from_slice(&p.data);
    }
    let end = ((off + len).div_ceil(512) * 512) as usize;
    assert_eq!(got, &body[512..end]);
    write_delimited(
        &mut s,
        &ClientReadStatusProto {
            status: Status::ChecksumOk as i32,
        },
    )
    .await
    .unwrap();

    let ck = OpBlockChecksumProto {
        header: BaseHeaderProto {
            block: block(1 << 30 | 1, 1001, body.len() as u64),
            token: None,
            trace_info: None,
        },
        block_checksum_options: None,
    };
    write_op(&mut s, Op::BlockChecksum, &ck).await.unwrap();
    let resp: BlockOpResponseProto = read_delimited(&mut s, MAX).await.unwrap();
    let c = resp.checksum_response.unwrap();
    let crcs = csum().compute_bytes(&body);
    assert_eq!(c.crc_per_block, crcs.len() as u64 / 4);
    assert_eq!(c.bytes_per_crc, 512);
    assert_eq!(c.crc_type, Some(2));
    assert_eq!(
        &c.block_checksum[..],
        &rhdfs_transfer::md5crc::block_md5_of_raw_crcs(&crcs)
    );
}

#[tokio::test]
async fn checksum_error_is_reported_not_stored() {
    let dn = Node::start().await;
    let mut s = TcpStream::connect(dn.addr()).await.unwrap();
    write_op(
        &mut s,
        Op::WriteBlock,
        &write_req(5, 1001, vec![], Stage::PipelineSetupCreate),
    )
    .await
    .unwrap();
    let resp: BlockOpResponseProto = read_delimited(&mut s, MAX).await.unwrap();
    assert_eq!(resp.status, Status::Success as i32);
    let mut p = Packet::with_data(&csum(), 0, 0, Bytes::from(data(1000)), false, false).unwrap();
    let mut sums = p.checksums.to_vec();
    sums[0] ^= 0xff;
    p.checksums = Bytes::from(sums);
    s.write_all(&p.to_bytes()).await.unwrap();
    let a = ack(&mut s).await;
    assert_eq!(a.reply, vec![Status::ErrorChecksum as i32]);
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest).await;
    let r = dn.ds.get(BP, 5).unwrap();
    assert_eq!(r.num_bytes, 0, "corrupt data never stored");
}

#[tokio::test]
async fn unreachable_mirror_gives_first_bad_link() {
    let dn = Node::start().await;
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead_addr = dead.local_addr().unwrap();
    drop(dead);
    let mut s = TcpStream::connect(dn.addr()).await.unwrap();
    write_op(
        &mut s,
        Op::WriteBlock,
        &write_req(
            6,
            1001,
            vec![dn_info(dead_addr)],
            Stage::PipelineSetupCreate,
        ),
    )
    .await
    .unwrap();
    let resp: BlockOpResponseProto = read_delimited(&mut s, MAX).await.unwrap();
    assert_eq!(resp.status, Status::Error as i32);
    assert_eq!(
        resp.first_bad_link.as_deref(),
        Some(dead_addr.to_string().as_str())
    );
    assert!(dn.ds.get(BP, 6).is_none(), "abandoned replica removed");
}

#[tokio::test]
async fn garbage_op_closes_only_that_connection() {
    let dn = Node::start().await;
    let mut s = TcpStream::connect(dn.addr()).await.unwrap();
    s.write_all(b"\x00\x1c\x50\xff\xff\xff\xff\xff\xff\x0fjunk")
        .await
        .unwrap();
    let mut buf = Vec::new();
    let n = s.read_to_end(&mut buf).await.unwrap_or(0);
    assert_eq!(n, 0);
    let mut s = TcpStream::connect(dn.addr()).await.unwrap();
    s.write_all(b"\x00\x1c").await.unwrap();
    drop(s);
    // still serving
    let mut s = TcpStream::connect(dn.addr()).await.unwrap();
    write_op(
        &mut s,
        Op::WriteBlock,
        &write_req(8, 1001, vec![], Stage::PipelineSetupCreate),
    )
    .await
    .unwrap();
    let resp: BlockOpResponseProto = read_delimited(&mut s, MAX).await.unwrap();
    assert_eq!(resp.status, Status::Success as i32);
    assert!(
        dn.faults.replica_files(8).is_none(),
        "hooks not attached in this test"
    );
}

#[tokio::test]
async fn append_and_transfer_block() {
    let src = Node::start().await;
    let mut dst = Node::start().await;
    let body = data(1000);
    // create 1000 bytes
    let mut s = TcpStream::connect(src.addr()).await.unwrap();
    write_op(
        &mut s,
        Op::WriteBlock,
        &write_req(9, 1001, vec![], Stage::PipelineSetupCreate),
    )
    .await
    .unwrap();
    let _: BlockOpResponseProto = read_delimited(&mut s, MAX).await.unwrap();
    s.write_all(&data_packet(0, 0, &body, false)).await.unwrap();
    ack(&mut s).await;
    s.write_all(&Packet::empty(1000, 1, true).to_bytes())
        .await
        .unwrap();
    ack(&mut s).await;
    // append 6 bytes mid-chunk with a new GS
    let mut s = TcpStream::connect(src.addr()).await.unwrap();
    let mut req = write_req(9, 1001, vec![], Stage::PipelineSetupAppend);
    req.latest_generation_stamp = 1002;
    req.min_bytes_rcvd = 1000;
    req.max_bytes_rcvd = 1000;
    write_op(&mut s, Op::WriteBlock, &req).await.unwrap();
    let r: BlockOpResponseProto = read_delimited(&mut s, MAX).await.unwrap();
    assert_eq!(r.status, 0);
    s.write_all(&data_packet(1000, 2, b"abcdef", false))
        .await
        .unwrap();
    assert_eq!(ack(&mut s).await.reply, vec![0]);
    s.write_all(&Packet::empty(1006, 3, true).to_bytes())
        .await
        .unwrap();
    ack(&mut s).await;
    let r = src.ds.get(BP, 9).unwrap();
    assert_eq!(
        (r.gs, r.num_bytes, r.state),
        (1002, 1006, ReplicaState::Finalized)
    );

    // TRANSFER_BLOCK to dst
    let mut s = TcpStream::connect(src.addr()).await.unwrap();
    let tb = OpTransferBlockProto {
        header: ClientOperationHeaderProto {
            base_header: BaseHeaderProto {
                block: block(9, 1002, 1006),
                token: None,
                trace_info: None,
            },
            client_name: "c".into(),
        },
        targets: vec![dst.info()],
        target_storage_types: vec![1],
        target_storage_ids: vec![dst.ds.storage_ids()[0].clone()],
    };
    write_op(&mut s, Op::TransferBlock, &tb).await.unwrap();
    let r: BlockOpResponseProto = read_delimited(&mut s, MAX).await.unwrap();
    assert_eq!(r.status, Status::Success as i32, "{:?}", r.message);
    let d = dst.ds.get(BP, 9).unwrap();
    assert_eq!(
        (d.gs, d.num_bytes, d.state),
        (1002, 1006, ReplicaState::Finalized)
    );
    let mut all = body.clone();
    all.extend_from_slice(b"abcdef");
    assert_eq!(std::fs::read(dst.ds.block_path(BP, &d)).unwrap(), all);
    assert_eq!(
        dst.events.try_recv().map(|e| e.status).ok(),
        Some(BlockStatus::Received)
    );
}

#[tokio::test]
async fn streaming_and_close_recovery() {
    let mut dn = Node::start().await;
    let body = data(2000);
    let mut s = TcpStream::connect(dn.addr()).await.unwrap();
    write_op(
        &mut s,
        Op::WriteBlock,
        &write_req(11, 1001, vec![], Stage::PipelineSetupCreate),
    )
    .await
    .unwrap();
    let _: BlockOpResponseProto = read_delimited(&mut s, MAX).await.unwrap();
    s.write_all(&data_packet(0, 0, &body[..1024], false))
        .await
        .unwrap();
    ack(&mut s).await;
    s.write_all(&data_packet(1024, 1, &body[1024..1500], false))
        .await
        .unwrap();
    ack(&mut s).await;
    drop(s);

    // READ_BLOCK of the RBW replica serves what is on disk.
    let mut r = TcpStream::connect(dn.addr()).await.unwrap();
    let rd = OpReadBlockProto {
        header: ClientOperationHeaderProto {
            base_header: BaseHeaderProto {
                block: block(11, 1001, 1500),
                token: None,
                trace_info: None,
            },
            client_name: "c".into(),
        },
        offset: 0,
        len: 1500,
        send_checksums: Some(true),
        caching_strategy: None,
    };
    write_op(&mut r, Op::ReadBlock, &rd).await.unwrap();
    let resp: BlockOpResponseProto = read_delimited(&mut r, MAX).await.unwrap();
    assert_eq!(resp.status, 0);
    let p = read_packet(&mut r, 16 << 20).await.unwrap();
    p.verify(&csum()).unwrap();
    assert_eq!(&p.data[..], &body[..1500]);
    assert!(
        read_packet(&mut r, 16 << 20)
            .await
            .unwrap()
            .header
            .last_packet_in_block
    );
    drop(r); // no client status: tolerated

    // Streaming recovery: the client saw only 1024 bytes acked.
    let mut s = TcpStream::connect(dn.addr()).await.unwrap();
    let mut req = write_req(11, 1001, vec![], Stage::PipelineSetupStreamingRecovery);
    req.latest_generation_stamp = 1002;
    req.min_bytes_rcvd = 1024;
    req.max_bytes_rcvd = 1500;
    write_op(&mut s, Op::WriteBlock, &req).await.unwrap();
    let resp: BlockOpResponseProto = read_delimited(&mut s, MAX).await.unwrap();
    assert_eq!(resp.status, 0, "{:?}", resp.message);
    let r = dn.ds.get(BP, 11).unwrap();
    assert_eq!(
        (r.gs, r.num_bytes, r.state),
        (1002, 1024, ReplicaState::Rbw)
    );
    s.write_all(&data_packet(1024, 5, &body[1024..2000], false))
        .await
        .unwrap();
    assert_eq!(ack(&mut s).await.reply, vec![0]);
    s.write_all(&Packet::empty(2000, 6, true).to_bytes())
        .await
        .unwrap();
    ack(&mut s).await;
    let r = dn.ds.get(BP, 11).unwrap();
    assert_eq!(
        (r.gs, r.num_bytes, r.state),
        (1002, 2000, ReplicaState::Finalized)
    );
    assert_eq!(std::fs::read(dn.ds.block_path(BP, &r)).unwrap(), body);
    let meta = std::fs::read(dn.ds.meta_path(BP, &r)).unwrap();
    assert_eq!(&meta[7..], &csum().compute_bytes(&body)[..]);

    // Close recovery on the finalized replica: new GS, one RECEIVED after the last packet.
    while dn.events.try_recv().is_ok() {}
    let mut s = TcpStream::connect(dn.addr()).await.unwrap();
    let mut req = write_req(11, 1002, vec![], Stage::PipelineCloseRecovery);
    req.latest_generation_stamp = 1003;
    req.min_bytes_rcvd = 2000;
    req.max_bytes_rcvd = 2000;
    write_op(&mut s, Op::WriteBlock, &req).await.unwrap();
    let resp: BlockOpResponseProto = read_delimited(&mut s, MAX).await.unwrap();
    assert_eq!(resp.status, 0, "{:?}", resp.message);
    s.write_all(&Packet::empty(2000, 7, true).to_bytes())
        .await
        .unwrap();
    assert_eq!(ack(&mut s).await.seqno, 7);
    let r = dn.ds.get(BP, 11).unwrap();
    assert_eq!(
        (r.gs, r.num_bytes, r.state),
        (1003, 2000, ReplicaState::Finalized)
    );
    let ev = dn.events.try_recv().unwrap();
    assert_eq!((ev.status, ev.gs), (BlockStatus::Received, 1003));
}

#[tokio::test]
async fn replication_transfer_without_client_name() {
    let src = Node::start().await;
    let mut dst = Node::start().await;
    let body = data(150_000);
    let ds = src.ds.clone();
    let b2 = body.clone();
    tokio::task::spawn_blocking(move || {
        let mut w = ds
            .create_rbw(
                BP,
                21,
                1005,
                crate::ChecksumSpec::new(crate::ChecksumType::Crc32, 1024),
                0,
            )
            .unwrap();
        w.write_at(0, &b2).unwrap();
        w.finalize().unwrap();
    })
    .await
    .unwrap();
    let ctx = XceiverContext {
        dataset: src.ds.clone(),
        notifier: Arc::new(crate::notify::NoopNotifier),
        faults: Arc::new(FaultHooks::default()),
        config: XceiverConfig::default(),
        active: Default::default(),
        activity: Default::default(),
    };
    let req = super::SendRequest {
        bpid: BP.into(),
        block_id: 21,
        min_gs: 1005,
        targets: vec![dst.info()],
        target_storage_types: vec![1],
        target_storage_ids: vec![],
        stage: Stage::PipelineSetupCreate,
        client_name: String::new(),
    };
    assert_eq!(super::send_replica(&ctx, req).await.unwrap(), 150_000);
    let ev = tokio::time::timeout(std::time::Duration::from_secs(5), dst.events.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (ev.block_id, ev.gs, ev.num_bytes, ev.status),
        (21, 1005, 150_000, BlockStatus::Received)
    );
    let r = dst.ds.get(BP, 21).unwrap();
    assert_eq!(r.state, ReplicaState::Finalized);
    assert_eq!(
        r.checksum,
        crate::ChecksumSpec::new(crate::ChecksumType::Crc32, 1024),
        "checksum kept"
    );
    assert_eq!(std::fs::read(dst.ds.block_path(BP, &r)).unwrap(), body);
    // The copy's meta file equals the source's.
    let sm = std::fs::read(src.ds.meta_path(BP, &src.ds.get(BP, 21).unwrap())).unwrap();
    assert_eq!(std::fs::read(dst.ds.meta_path(BP, &r)).unwrap(), sm);
}

/// dfs.datanode.max.transfer.threads: a connection accepted while the limit is served is
/// closed unanswered (Hadoop's DataXceiverServer); once one ends, the next is served.
#[tokio::test]
async fn connections_beyond_the_limit_are_closed() {
    use tokio::io::AsyncReadExt;
    let node = Node::start_with(XceiverConfig {
        max_xceivers: 1,
        ..XceiverConfig::default()
    })
    .await;
    let first = TcpStream::connect(node.addr()).await.unwrap();
    node.wait_serving(1).await;
    let mut second = TcpStream::connect(node.addr()).await.unwrap();
    let mut buf = [0u8; 1];
    // Closed by the server: end of stream (or a reset).
    let read = second.read(&mut buf).await;
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
    drop(first);
    node.wait_serving(0).await;
    let _third = TcpStream::connect(node.addr()).await.unwrap();
    node.wait_serving(1).await;
}
