//! A penultimate DataNode measures its mirror's latency per packet — the time to write and
//! flush the packet to the mirror, as Hadoop's BlockReceiver — and reports the slow one: five
//! fake mirrors behind one real transfer server with peer stats on; the send fault hook
//! advances the manual clock by each mirror's delay inside the timed send (one mirror slow),
//! while acks take no time, so only the send is measured.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rhdfs_conf::clock::ManualClock;
use rhdfs_proto::hdfs::op_write_block_proto::BlockConstructionStage as Stage;
use rhdfs_proto::hdfs::{BlockOpResponseProto, OpWriteBlockProto, PipelineAckProto, Status};
use rhdfs_transfer::op::read_delimited;
use rhdfs_transfer::{Op, Packet, read_op, read_packet, write_delimited, write_op};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};

use super::{DataNodeMetrics, PeerMetricsConfig};
use crate::dataset::Dataset;
use crate::faults::FaultHooks;
use crate::xceiver::tests::{ack, data_packet, dn_info, write_req};
use crate::xceiver::{XceiverConfig, XceiverContext, XceiverServer};

const MAX: usize = 1 << 20;

/// A downstream node that accepts one WRITE_BLOCK and acks every packet at once.
async fn fake_mirror() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = l.local_addr().expect("addr");
    tokio::spawn(async move {
        let (mut s, _) = l.accept().await.expect("accept");
        assert_eq!(read_op(&mut s).await.expect("op"), Some(Op::WriteBlock));
        let req: OpWriteBlockProto = read_delimited(&mut s, MAX).await.expect("req");
        assert!(req.targets.is_empty());
        let ok = BlockOpResponseProto {
            status: Status::Success as i32,
            ..Default::default()
        };
        write_delimited(&mut s, &ok).await.expect("connect ack");
        loop {
            let p = read_packet(&mut s, MAX).await.expect("packet");
            let a = PipelineAckProto {
                seqno: p.header.seqno,
                reply: vec![Status::Success as i32],
                downstream_ack_time_nanos: Some(0),
                flag: vec![0],
            };
            write_delimited(&mut s, &a).await.expect("ack");
            if p.header.last_packet_in_block {
                break;
            }
        }
    });
    addr
}

#[tokio::test]
async fn slow_mirror_is_reported_in_the_next_heartbeat() {
    let clock = Arc::new(ManualClock::new(0));
    let metrics = Arc::new(DataNodeMetrics::new(
        clock.clone(),
        Some(PeerMetricsConfig {
            min_samples: 3,
            min_nodes: 4,
            low_threshold_ms: 5.0,
            max_nodes_to_report: 5,
            window: Duration::from_secs(60),
            num_windows: 4,
        }),
        None,
        Duration::from_secs(600),
        false,
    ));
    let dir = tempfile::tempdir().expect("tmp");
    let ds = Dataset::open(&[dir.path().to_path_buf()], 0).expect("dataset");
    let ctx = XceiverContext {
        dataset: ds,
        notifier: Arc::new(crate::notify::NoopNotifier),
        faults: Arc::new(FaultHooks::default()),
        config: XceiverConfig {
            metrics: Some(metrics.clone()),
            ..XceiverConfig::default()
        },
        active: Default::default(),
        activity: Default::default(),
    };

    let faults = ctx.faults.clone();
    let server = XceiverServer::bind("127.0.0.1:0".parse().expect("addr"), ctx)
        .await
        .expect("server");

    let delays = [1u64, 2, 1, 2, 40];
    let mut mirrors = Vec::new();
    for _ in &delays {
        mirrors.push(fake_mirror().await);
    }
    let by_addr: BTreeMap<String, Duration> = mirrors
        .iter()
        .zip(delays)
        .map(|(a, ms)| (a.to_string(), Duration::from_millis(ms)))
        .collect();
    let hook_clock = clock.clone();
    faults.set_mirror_send_hook(Some(Arc::new(move |mirror: &str| {
        if let Some(d) = by_addr.get(mirror) {
            hook_clock.advance(*d);
        }
    })));
    for (i, mirror) in mirrors.into_iter().enumerate() {
        let mut target = dn_info(mirror);
        target.id.info_port = 50_000 + i as u32;
        let id = (1 << 30) | (i as u64 + 1);
        let mut s = TcpStream::connect(server.local_addr())
            .await
            .expect("connect");
        write_op(
            &mut s,
            Op::WriteBlock,
            &write_req(id, 1001, vec![target], Stage::PipelineSetupCreate),
        )
        .await
        .expect("op");
        let resp: BlockOpResponseProto = read_delimited(&mut s, MAX).await.expect("resp");
        assert_eq!(resp.status, Status::Success as i32);
        let body = vec![7u8; 1024];
        for seq in 0..4i64 {
            let off = seq as u64 * 1024;
            s.write_all(&data_packet(off, seq, &body, false))
                .await
                .expect("packet");
            let a = ack(&mut s).await;
            assert_eq!((a.seqno, a.reply), (seq, vec![0, 0]));
            // SLOW bits are off without dfs.pipeline.slownode.
            assert_eq!(a.flag, vec![0, 0]);
        }
        s.write_all(&Packet::empty(4096, 4, true).to_bytes())
            .await
            .expect("last");
        assert_eq!(ack(&mut s).await.seqno, 4);
    }
    let peers = metrics.peers.as_ref().expect("peer stats on");
    // Nothing is averaged before the window closes.
    assert!(peers.averages(clock_now(&clock)).is_empty());
    clock.advance(Duration::from_secs(60));
    let avg = peers.averages(clock_now(&clock));
    assert_eq!(avg.len(), 5, "{avg:?}");
    assert_eq!(avg["127.0.0.1:50004"], 40.0);
    let r = metrics.heartbeat_reports();
    assert_eq!(r.slow_peers.len(), 1, "{r:?}");
    assert_eq!(
        r.slow_peers[0].data_node_id.as_deref(),
        Some("127.0.0.1:50004")
    );
    assert_eq!(r.slow_peers[0].aggregate_latency, Some(40.0));
    // Not due again within the report interval.
    assert!(metrics.heartbeat_reports().slow_peers.is_empty());
    server.shutdown().await;
}

fn clock_now(c: &ManualClock) -> Duration {
    use rhdfs_conf::clock::Clock;
    c.monotonic()
}
