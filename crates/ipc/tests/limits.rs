//! Socket limits from Hadoop's keys: past `ipc.server.max.connections` open connections a
//! new one is closed unanswered and counted as dropped; once one closes, the next is served.

use crate::common;

use std::time::{Duration, Instant};

use bytes::Bytes;
use common::{PROTOCOL, decode, raw_connected, read_response, read_to_eof, req, start};
use prost::Message;
use rhdfs_conf::Configuration;
use rhdfs_ipc::headers::call_frame;
use rhdfs_ipc::{RpcServer, ServerConfig};
use rhdfs_proto::common::UserInformationProto;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

fn client_id() -> Bytes {
    Bytes::from_static(b"0123456789abcdef")
}

async fn round_trip(s: &mut TcpStream, call_id: i32) {
    let frame = call_frame(
        call_id,
        &client_id(),
        "whoami",
        PROTOCOL,
        &req("/").encode_to_vec(),
    );
    s.write_all(&frame).await.expect("send call");
    let (header, body) = read_response(s).await;
    assert_eq!(header.call_id, call_id as u32);
    let who: UserInformationProto = decode(body);
    assert_eq!(who.effective_user.as_deref(), Some("alice"));
}

async fn wait_open(server: &RpcServer, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.open_connections() != n {
        assert!(Instant::now() < deadline, "timed out waiting for {n} open");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test]
async fn connections_past_the_maximum_are_dropped() {
    let mut conf = Configuration::new();
    conf.set("ipc.server.max.connections", "2");
    conf.set("ipc.server.listen.queue.size", "16");
    let cfg = ServerConfig::from_conf(&conf).expect("conf");
    assert_eq!((cfg.max_connections, cfg.listen_backlog), (2, 16));
    let (server, _) = start(cfg).await;
    let mut a = raw_connected(server.local_addr(), &client_id()).await;
    let mut b = raw_connected(server.local_addr(), &client_id()).await;
    round_trip(&mut a, 0).await;
    round_trip(&mut b, 0).await;
    wait_open(&server, 2).await;

    // The third is closed before anything is read from it.
    let mut c = TcpStream::connect(server.local_addr())
        .await
        .expect("connect");
    assert!(read_to_eof(&mut c).await.is_empty());
    assert_eq!(server.metrics().snapshot().dropped_connections, 1);
    assert_eq!(server.open_connections(), 2);
    round_trip(&mut a, 1).await;

    // One closes: the next connection is served.
    drop(b);
    wait_open(&server, 1).await;
    let mut d = raw_connected(server.local_addr(), &client_id()).await;
    round_trip(&mut d, 0).await;
    assert_eq!(server.metrics().snapshot().dropped_connections, 1);
    server.shutdown().await;
}

#[test]
fn socket_keys_default_as_hadoops() {
    let cfg = ServerConfig::from_conf(&Configuration::new()).expect("conf");
    assert_eq!(cfg.max_connections, 0, "no limit");
    assert_eq!(cfg.listen_backlog, 256);
    assert!(cfg.tcp_nodelay);
    let mut conf = Configuration::new();
    conf.set("ipc.server.tcpnodelay", "false");
    conf.set("ipc.server.max.connections", "many");
    assert!(ServerConfig::from_conf(&conf).is_err(), "not a number");
}
