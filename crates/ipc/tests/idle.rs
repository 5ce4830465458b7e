//! Idle connections (Hadoop's ConnectionManager rules): kept however long they are idle while
//! fewer than `ipc.client.idlethreshold` are open; above it, closed by the idle scan, at most
//! `ipc.client.kill.max` per scan; never while a request is waiting on them.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::{PROTOCOL, decode, raw_connected, read_response, read_to_eof, req, start};
use prost::Message;
use rhdfs_conf::clock::ManualClock;
use rhdfs_ipc::headers::call_frame;
use rhdfs_ipc::{IdleRules, RpcServer, ServerConfig};
use rhdfs_proto::common::UserInformationProto;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

const HOUR: Duration = Duration::from_secs(3600);

fn client_id() -> Bytes {
    Bytes::from_static(b"fedcba9876543210")
}

fn rules(threshold: usize, kill_max: usize) -> IdleRules {
    IdleRules {
        max_idle: Duration::from_secs(20),
        threshold,
        kill_max,
        // Only the scans a test runs itself.
        scan_interval: HOUR,
    }
}

fn on_clock(clock: &Arc<ManualClock>, idle: IdleRules) -> ServerConfig {
    ServerConfig {
        idle,
        ..ServerConfig::default()
    }
    .with_clock(clock.clone())
}

fn whoami(call_id: i32) -> Bytes {
    call_frame(
        call_id,
        &client_id(),
        "whoami",
        PROTOCOL,
        &req("/").encode_to_vec(),
    )
}

/// A call on a raw connection and its answer.
async fn round_trip(s: &mut TcpStream, call_id: i32) {
    s.write_all(&whoami(call_id)).await.expect("send call");
    let (header, body) = read_response(s).await;
    assert_eq!(header.call_id, call_id as u32);
    let who: UserInformationProto = decode(body);
    assert_eq!(who.effective_user.as_deref(), Some("alice"));
}

/// Waits (polling) until `f` holds; panics after 10 s.
async fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

async fn wait_open(server: &RpcServer, n: usize) {
    wait_until(&format!("{n} open connections"), || {
        server.open_connections() == n
    })
    .await;
}

#[tokio::test]
async fn idle_connections_below_the_threshold_stay_open() {
    let clock = ManualClock::shared(0);
    let (server, _) = start(on_clock(&clock, rules(3, 10))).await;
    let mut a = raw_connected(server.local_addr(), &client_id()).await;
    let mut b = raw_connected(server.local_addr(), &client_id()).await;
    round_trip(&mut a, 0).await;
    round_trip(&mut b, 0).await;
    // Idle for an hour, far beyond twice ipc.client.connection.maxidletime.
    clock.advance(HOUR);
    assert_eq!(server.close_idle_connections(), 0);
    assert_eq!(server.open_connections(), 2);
    round_trip(&mut a, 1).await;
    round_trip(&mut b, 1).await;
    server.shutdown().await;
}

#[tokio::test]
async fn above_the_threshold_at_most_kill_max_close_per_scan() {
    let clock = ManualClock::shared(0);
    let (server, _) = start(on_clock(&clock, rules(3, 2))).await;
    let mut conns = Vec::new();
    for _ in 0..5 {
        let mut s = raw_connected(server.local_addr(), &client_id()).await;
        round_trip(&mut s, 0).await;
        conns.push(s);
    }
    assert_eq!(server.open_connections(), 5);
    assert_eq!(server.close_idle_connections(), 0, "nobody idle yet");
    clock.advance(HOUR);
    // Five open, threshold three: the two idle longest (equal here: first accepted first).
    assert_eq!(server.close_idle_connections(), 2);
    wait_open(&server, 3).await;
    assert!(read_to_eof(&mut conns[0]).await.is_empty());
    assert!(read_to_eof(&mut conns[1]).await.is_empty());
    // Three open: one more close gets below the threshold, and the scan stops there.
    assert_eq!(server.close_idle_connections(), 1);
    wait_open(&server, 2).await;
    assert!(read_to_eof(&mut conns[2]).await.is_empty());
    assert_eq!(server.close_idle_connections(), 0);
    round_trip(&mut conns[3], 1).await;
    round_trip(&mut conns[4], 1).await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_periodic_scan_closes_idle_connections_above_the_threshold() {
    let mut conf = rhdfs_conf::Configuration::new();
    conf.set("ipc.client.connection.maxidletime", "10ms");
    conf.set("ipc.client.idlethreshold", "2");
    conf.set("ipc.client.kill.max", "1");
    conf.set("ipc.client.connection.idle-scan-interval.ms", "10");
    let (server, _) = start(ServerConfig::from_conf(&conf).unwrap()).await;
    let mut conns = Vec::new();
    for _ in 0..4 {
        conns.push(raw_connected(server.local_addr(), &client_id()).await);
    }
    // One per scan until fewer than two are open.
    wait_open(&server, 1).await;
    let mut open = 0;
    for s in &mut conns {
        // A closed connection answers with EOF; the open one answers the call.
        if s.write_all(&whoami(7)).await.is_ok() {
            let got = tokio::time::timeout(
                Duration::from_secs(10),
                rhdfs_ipc::frame::read_frame(s, 1 << 20),
            )
            .await
            .expect("an answer or EOF in time");
            if let Ok(Some(_)) = got {
                open += 1;
            }
        }
    }
    assert_eq!(open, 1, "exactly one connection left open");
    assert_eq!(server.open_connections(), 1);
    server.shutdown().await;
}

#[tokio::test]
async fn a_partly_received_request_keeps_its_connection() {
    let clock = ManualClock::shared(0);
    let (server, _) = start(on_clock(&clock, rules(1, 10))).await;
    let mut a = raw_connected(server.local_addr(), &client_id()).await;
    round_trip(&mut a, 0).await;
    let mut b = raw_connected(server.local_addr(), &client_id()).await;
    round_trip(&mut b, 0).await;
    let frame = whoami(1);
    let (head, tail) = frame.split_at(frame.len() / 2);
    a.write_all(head).await.unwrap();
    wait_until("the server to read half a request", || {
        server.connection_views()[0].unhandled_bytes == head.len() as u64
    })
    .await;
    clock.advance(HOUR);
    // Only b is idle; a is in the middle of a request.
    assert_eq!(server.close_idle_connections(), 1);
    assert!(read_to_eof(&mut b).await.is_empty());
    wait_open(&server, 1).await;
    a.write_all(tail).await.unwrap();
    let (header, _) = read_response(&mut a).await;
    assert_eq!(header.call_id, 1);
    server.shutdown().await;
}

// Current-thread runtime: between two awaits no server task runs, as if the server were
// stopped while a request arrived.
#[tokio::test]
async fn a_request_unread_in_the_socket_keeps_its_connection() {
    let clock = ManualClock::shared(0);
    let (server, _) = start(on_clock(&clock, rules(1, 10))).await;
    let mut a = raw_connected(server.local_addr(), &client_id()).await;
    round_trip(&mut a, 0).await;
    clock.advance(HOUR);
    let frame = whoami(1);
    assert_eq!(a.try_write(&frame).unwrap(), frame.len());
    // The server has not run since: it sees an idle connection and asks it to close.
    assert_eq!(server.connection_views()[0].unhandled_bytes, 0);
    assert_eq!(server.close_idle_connections(), 1);
    // The connection finds the request waiting and serves it instead.
    let (header, _) = read_response(&mut a).await;
    assert_eq!(header.call_id, 1);
    assert_eq!(server.open_connections(), 1);
    round_trip(&mut a, 2).await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_call_keeps_its_connection() {
    let clock = ManualClock::shared(0);
    let (server, stats) = start(on_clock(&clock, rules(1, 10))).await;
    let c = rhdfs_ipc::RpcClient::connect(&server.local_addr().to_string(), PROTOCOL, "dan")
        .await
        .unwrap();
    let call = {
        let c = c.clone();
        tokio::spawn(async move {
            c.call::<_, UserInformationProto>("sleep", &req("300"))
                .await
                .unwrap()
        })
    };
    wait_until("the call to run", || {
        stats.running.load(std::sync::atomic::Ordering::SeqCst) == 1
    })
    .await;
    clock.advance(HOUR);
    assert_eq!(server.close_idle_connections(), 0);
    assert_eq!(call.await.unwrap().effective_user.as_deref(), Some("300"));
    // Idle once answered (nothing received for an hour of the manual clock): closed.
    assert_eq!(server.close_idle_connections(), 1);
    wait_open(&server, 0).await;
    server.shutdown().await;
}
