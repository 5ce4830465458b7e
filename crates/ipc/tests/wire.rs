//! Raw-socket behaviour of the server: handshake variants, pings, bad input.

use crate::common;

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use common::{
    PROTOCOL, assert_silent, decode, raw_connected, read_response, read_to_eof, req, start,
};
use prost::Message;
use rhdfs_ipc::frame::{AUTH_SASL, encode_frame, preamble};
use rhdfs_ipc::headers::{call_frame, context_frame};
use rhdfs_ipc::{RpcClient, ServerConfig};
use rhdfs_proto::common::{RpcRequestHeaderProto, RpcSaslProto, UserInformationProto};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

fn client_id() -> Bytes {
    Bytes::from_static(b"0123456789abcdef")
}

fn header_only(call_id: i32, rpc_op: i32) -> Bytes {
    let h = RpcRequestHeaderProto {
        rpc_kind: Some(2),
        rpc_op: Some(rpc_op),
        call_id,
        client_id: client_id(),
        retry_count: Some(-1),
        ..Default::default()
    };
    encode_frame(&[&h.encode_to_vec()])
}

/// A healthy client on the same server must keep working after a bad connection.
async fn assert_healthy(addr: std::net::SocketAddr) {
    let c = RpcClient::connect(&addr.to_string(), PROTOCOL, "carol")
        .await
        .unwrap();
    let who: UserInformationProto = c.call("whoami", &req("/")).await.unwrap();
    assert_eq!(who.effective_user.as_deref(), Some("carol"));
}

#[tokio::test]
async fn call_and_response_layout() {
    let (server, _) = start(ServerConfig::default()).await;
    let mut s = raw_connected(server.local_addr(), &client_id()).await;
    let body = req("/").encode_to_vec();
    s.write_all(&call_frame(7, &client_id(), "whoami", PROTOCOL, &body))
        .await
        .unwrap();
    let (h, rest) = read_response(&mut s).await;
    assert_eq!(h.call_id, 7);
    assert_eq!(h.status, 0);
    assert_eq!(h.server_ipc_version_num, Some(9));
    assert_eq!(h.client_id, Some(client_id()));
    assert_eq!(h.retry_count, Some(0));
    let who: UserInformationProto = decode(rest);
    assert_eq!(who.effective_user.as_deref(), Some("alice"));

    // Error responses: header only, with errorDetail.
    s.write_all(&call_frame(8, &client_id(), "nope", PROTOCOL, &body))
        .await
        .unwrap();
    let (h, rest) = read_response(&mut s).await;
    assert_eq!((h.call_id, h.status, h.error_detail), (8, 1, Some(2)));
    assert_eq!(
        h.exception_class_name.as_deref(),
        Some("org.apache.hadoop.ipc.RpcNoSuchMethodException")
    );
    assert!(rest.is_empty());
    s.write_all(&call_frame(9, &client_id(), "fail", PROTOCOL, &body))
        .await
        .unwrap();
    let (h, rest) = read_response(&mut s).await;
    assert_eq!((h.call_id, h.status, h.error_detail), (9, 1, Some(1)));
    assert_eq!(h.error_msg.as_deref(), Some("File does not exist: /"));
    assert!(rest.is_empty());
    server.shutdown().await;
}

#[tokio::test]
async fn ping_gets_no_reply() {
    let (server, _) = start(ServerConfig::default()).await;
    let mut s = raw_connected(server.local_addr(), &client_id()).await;
    s.write_all(&header_only(-4, 0)).await.unwrap();
    assert_silent(&mut s, Duration::from_millis(300)).await;
    let body = req("/").encode_to_vec();
    s.write_all(&header_only(-4, 0)).await.unwrap();
    s.write_all(&call_frame(1, &client_id(), "whoami", PROTOCOL, &body))
        .await
        .unwrap();
    let (h, _) = read_response(&mut s).await;
    assert_eq!((h.call_id, h.status), (1, 0));
    assert_silent(&mut s, Duration::from_millis(300)).await;
    server.shutdown().await;
}

#[tokio::test]
async fn close_connection_op_closes() {
    let (server, _) = start(ServerConfig::default()).await;
    let mut s = raw_connected(server.local_addr(), &client_id()).await;
    s.write_all(&header_only(5, 2)).await.unwrap();
    assert!(read_to_eof(&mut s).await.is_empty());
    server.shutdown().await;
}

#[tokio::test]
async fn wrong_version_gets_fatal_response() {
    let (server, _) = start(ServerConfig::default()).await;
    let mut s = TcpStream::connect(server.local_addr()).await.unwrap();
    s.write_all(b"hrpc\x07\x00\x00").await.unwrap();
    let (h, rest) = read_response(&mut s).await;
    assert_eq!(h.call_id, u32::MAX); // -1 as uint32
    assert_eq!(h.status, 2);
    assert_eq!(h.error_detail, Some(14));
    assert_eq!(
        h.exception_class_name.as_deref(),
        Some("org.apache.hadoop.ipc.RPC$VersionMismatch")
    );
    assert_eq!(
        h.error_msg.as_deref(),
        Some("Server IPC version 9 cannot communicate with client version 7")
    );
    assert!(rest.is_empty());
    assert!(read_to_eof(&mut s).await.is_empty());
    assert_healthy(server.local_addr()).await;
    server.shutdown().await;
}

#[tokio::test]
async fn wrong_version_fatal_survives_pipelined_input() {
    // Java writes the context right behind the preamble; the FATAL must still arrive intact.
    let (server, _) = start(ServerConfig::default()).await;
    let mut s = TcpStream::connect(server.local_addr()).await.unwrap();
    let mut bytes = b"hrpc\x0a\x00\x00".to_vec();
    bytes.extend_from_slice(&context_frame(&client_id(), "x", PROTOCOL));
    s.write_all(&bytes).await.unwrap();
    let (h, _) = read_response(&mut s).await;
    assert_eq!((h.status, h.error_detail), (2, Some(14)));
    assert!(h.error_msg.unwrap().ends_with("client version 10"));
    read_to_eof(&mut s).await;
    server.shutdown().await;
}

#[tokio::test]
async fn sasl_negotiate_gets_success_then_calls_work() {
    let (server, _) = start(ServerConfig::default()).await;
    let mut s = TcpStream::connect(server.local_addr()).await.unwrap();
    s.write_all(&preamble(AUTH_SASL)).await.unwrap();
    let h = RpcRequestHeaderProto {
        rpc_kind: Some(2),
        rpc_op: Some(0),
        call_id: -33,
        client_id: client_id(),
        retry_count: Some(-1),
        ..Default::default()
    };
    let negotiate = RpcSaslProto {
        state: 1,
        ..Default::default()
    };
    s.write_all(&encode_frame(&[
        &h.encode_to_vec(),
        &negotiate.encode_to_vec(),
    ]))
    .await
    .unwrap();
    let (h, rest) = read_response(&mut s).await;
    assert_eq!(h.call_id, (-33i32) as u32);
    assert_eq!(h.status, 0);
    let sasl: RpcSaslProto = decode(rest);
    assert_eq!(sasl.state, 0);

    s.write_all(&context_frame(&client_id(), "dave", PROTOCOL))
        .await
        .unwrap();
    let body = req("/").encode_to_vec();
    s.write_all(&call_frame(0, &client_id(), "whoami", PROTOCOL, &body))
        .await
        .unwrap();
    let (h, rest) = read_response(&mut s).await;
    assert_eq!((h.call_id, h.status), (0, 0));
    let who: UserInformationProto = decode(rest);
    assert_eq!(who.effective_user.as_deref(), Some("dave"));
    server.shutdown().await;
}

#[tokio::test]
async fn call_before_context_is_fatal() {
    let (server, _) = start(ServerConfig::default()).await;
    let mut s = TcpStream::connect(server.local_addr()).await.unwrap();
    s.write_all(&preamble(0)).await.unwrap();
    let body = req("/").encode_to_vec();
    s.write_all(&call_frame(0, &client_id(), "whoami", PROTOCOL, &body))
        .await
        .unwrap();
    let (h, _) = read_response(&mut s).await;
    assert_eq!((h.call_id, h.status), (0, 2));
    read_to_eof(&mut s).await;
    server.shutdown().await;
}

#[tokio::test]
async fn garbage_preamble_closes_only_that_connection() {
    let (server, _) = start(ServerConfig::default()).await;
    let c = RpcClient::connect(&server.local_addr().to_string(), PROTOCOL, "erin")
        .await
        .unwrap();
    let mut s = TcpStream::connect(server.local_addr()).await.unwrap();
    s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    assert!(read_to_eof(&mut s).await.is_empty());
    let who: UserInformationProto = c.call("whoami", &req("/")).await.unwrap();
    assert_eq!(who.effective_user.as_deref(), Some("erin"));
    assert_healthy(server.local_addr()).await;
    server.shutdown().await;
}

#[tokio::test]
async fn garbage_frames_close_only_that_connection() {
    let (server, _) = start(ServerConfig::default()).await;
    let c = RpcClient::connect(&server.local_addr().to_string(), PROTOCOL, "erin")
        .await
        .unwrap();
    // A frame whose RpcRequestHeaderProto does not parse.
    let mut s = raw_connected(server.local_addr(), &client_id()).await;
    s.write_all(&[0, 0, 0, 6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])
        .await
        .unwrap();
    read_to_eof(&mut s).await;
    // A good RpcRequestHeaderProto followed by a truncated RequestHeaderProto.
    let mut s = raw_connected(server.local_addr(), &client_id()).await;
    let h = RpcRequestHeaderProto {
        rpc_kind: Some(2),
        rpc_op: Some(0),
        call_id: 3,
        client_id: client_id(),
        retry_count: Some(0),
        ..Default::default()
    };
    s.write_all(&encode_frame(&[&h.encode_to_vec(), &[0x0a, 0x20, b'x']]))
        .await
        .unwrap();
    let (h, _) = read_response(&mut s).await;
    assert_eq!((h.call_id, h.status), (3, 2));
    read_to_eof(&mut s).await;
    // The healthy client was not disturbed.
    let who: UserInformationProto = c.call("whoami", &req("/")).await.unwrap();
    assert_eq!(who.effective_user.as_deref(), Some("erin"));
    server.shutdown().await;
}

/// Collects log output so the warning line can be checked.
#[derive(Clone, Default)]
struct LogSink(Arc<Mutex<Vec<u8>>>);

impl Write for LogSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

// Current-thread runtime: every task logs through the subscriber set below.
#[tokio::test]
async fn oversized_frame_closes_with_a_warning() {
    let sink = LogSink::default();
    let writer = sink.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::WARN)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let cfg = ServerConfig {
        max_data_length: 1024,
        ..ServerConfig::default()
    };
    let (server, _) = start(cfg).await;
    let c = RpcClient::connect(&server.local_addr().to_string(), PROTOCOL, "erin")
        .await
        .unwrap();
    let mut s = raw_connected(server.local_addr(), &client_id()).await;
    let peer = s.local_addr().unwrap();
    let mut frame = BytesMut::new();
    frame.put_u32(1025);
    frame.put_slice(&[0u8; 64]);
    s.write_all(&frame).await.unwrap();
    read_to_eof(&mut s).await;
    // A length far beyond the default limit is refused without reading the body.
    let mut s2 = raw_connected(server.local_addr(), &client_id()).await;
    s2.write_all(&[0x7f, 0xff, 0xff, 0xff]).await.unwrap();
    read_to_eof(&mut s2).await;

    let who: UserInformationProto = c.call("whoami", &req("/")).await.unwrap();
    assert_eq!(who.effective_user.as_deref(), Some("erin"));
    server.shutdown().await;

    let logs = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
    let line = logs
        .lines()
        .find(|l| l.contains(&peer.to_string()))
        .unwrap_or_else(|| panic!("no warning naming {peer} in:\n{logs}"));
    assert!(line.contains("WARN"), "{line}");
    assert!(line.contains("1025") && line.contains("1024"), "{line}");
}

#[tokio::test]
async fn idle_connections_are_closed_above_the_threshold() {
    let clock = rhdfs_conf::clock::ManualClock::shared(0);
    let cfg = ServerConfig {
        idle: rhdfs_ipc::IdleRules {
            threshold: 1,
            ..rhdfs_ipc::IdleRules::default()
        },
        ..ServerConfig::default()
    }
    .with_clock(clock.clone());
    let (server, _) = start(cfg).await;
    let mut s = raw_connected(server.local_addr(), &client_id()).await;
    let body = req("/").encode_to_vec();
    s.write_all(&call_frame(0, &client_id(), "whoami", PROTOCOL, &body))
        .await
        .unwrap();
    let (header, _) = read_response(&mut s).await;
    assert_eq!(header.call_id, 0);
    clock.advance(Duration::from_secs(3600));
    assert_eq!(server.close_idle_connections(), 1);
    assert!(read_to_eof(&mut s).await.is_empty());
    server.shutdown().await;
}

#[tokio::test]
async fn shutdown_closes_connections_and_stops_accepting() {
    let (server, _) = start(ServerConfig::default()).await;
    let addr = server.local_addr();
    let mut s = raw_connected(addr, &client_id()).await;
    server.shutdown().await;
    read_to_eof(&mut s).await;
    assert!(TcpStream::connect(addr).await.is_err());
}

#[tokio::test]
async fn violation_closes_even_with_a_call_in_flight() {
    let (server, _) = start(ServerConfig::default()).await;
    let mut s = raw_connected(server.local_addr(), &client_id()).await;
    let body = req("30000").encode_to_vec();
    s.write_all(&call_frame(0, &client_id(), "sleep", PROTOCOL, &body))
        .await
        .unwrap();
    s.write_all(&[0, 0, 0, 3, 0xff, 0xff, 0xff]).await.unwrap();
    let started = std::time::Instant::now();
    read_to_eof(&mut s).await;
    assert!(started.elapsed() < Duration::from_secs(3));
    server.shutdown().await;
}

/// Calls answered on their handler's first poll and a call that has to wait share one
/// connection: the waiting call holds up neither the reading nor the answers of the calls
/// after it, those are answered in the order they came, and the waiting one is answered once
/// it can go on.
#[tokio::test]
async fn ready_calls_are_answered_while_one_waits() {
    let (server, stats) = start(ServerConfig::default()).await;
    let mut s = raw_connected(server.local_addr(), &client_id()).await;
    let mut calls =
        call_frame(1, &client_id(), "gate", PROTOCOL, &req("g").encode_to_vec()).to_vec();
    for id in 2..=5 {
        let body = req("/").encode_to_vec();
        calls.extend_from_slice(&call_frame(id, &client_id(), "whoami", PROTOCOL, &body));
    }
    s.write_all(&calls).await.unwrap();
    for id in 2..=5 {
        let (h, rest) = read_response(&mut s).await;
        assert_eq!((h.call_id, h.status), (id, 0));
        let who: UserInformationProto = decode(rest);
        assert_eq!(who.effective_user.as_deref(), Some("alice"));
    }
    stats.gate.notify_one();
    let (h, rest) = read_response(&mut s).await;
    assert_eq!((h.call_id, h.status), (1, 0));
    let gated: UserInformationProto = decode(rest);
    assert_eq!(gated.effective_user.as_deref(), Some("g"));
    // The connection goes on serving both kinds.
    let body = req("/").encode_to_vec();
    s.write_all(&call_frame(6, &client_id(), "whoami", PROTOCOL, &body))
        .await
        .unwrap();
    assert_eq!(read_response(&mut s).await.0.call_id, 6);
    server.shutdown().await;
}

/// A connection whose client ends (EOF) with a call still waiting answers it before the
/// connection closes.
#[tokio::test]
async fn a_waiting_call_is_answered_after_the_client_stops_sending() {
    let (server, stats) = start(ServerConfig::default()).await;
    let mut s = raw_connected(server.local_addr(), &client_id()).await;
    let body = req("late").encode_to_vec();
    s.write_all(&call_frame(3, &client_id(), "gate", PROTOCOL, &body))
        .await
        .unwrap();
    s.shutdown().await.unwrap();
    stats.gate.notify_one();
    let (h, rest) = read_response(&mut s).await;
    assert_eq!((h.call_id, h.status), (3, 0));
    let gated: UserInformationProto = decode(rest);
    assert_eq!(gated.effective_user.as_deref(), Some("late"));
    assert!(read_to_eof(&mut s).await.is_empty());
    server.shutdown().await;
}
