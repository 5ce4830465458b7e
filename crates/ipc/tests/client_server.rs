//! Client ↔ server behaviour through `RpcClient`.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use common::{PROTOCOL, req, start};
use rhdfs_ipc::{ClientConfig, IdleRules, IpcError, RpcClient, ServerConfig};
use rhdfs_proto::common::UserInformationProto;
use rhdfs_proto::hdfs::GetFileInfoResponseProto;

async fn client(server: &rhdfs_ipc::RpcServer) -> RpcClient {
    RpcClient::connect(&server.local_addr().to_string(), PROTOCOL, "alice")
        .await
        .expect("connect")
}

#[tokio::test]
async fn round_trip_and_context() {
    let (server, _) = start(ServerConfig::default()).await;
    let c = client(&server).await;
    assert_eq!(c.client_id().len(), 16);

    let who: UserInformationProto = c.call("whoami", &req("/")).await.unwrap();
    assert_eq!(who.effective_user.as_deref(), Some("alice"));
    // First call id is 0, retry count 0, the protocol comes from the request header.
    assert_eq!(
        who.real_user.as_deref(),
        Some(&*format!("{PROTOCOL}|whoami|0|16|0"))
    );

    let found: GetFileInfoResponseProto = c.call("getFileInfo", &req("/")).await.unwrap();
    let fs = found.fs.expect("status for /");
    assert_eq!(fs.file_id, Some(16385));
    assert!(fs.path.is_empty());
    let missing: GetFileInfoResponseProto = c.call("getFileInfo", &req("/nope")).await.unwrap();
    assert!(missing.fs.is_none());

    let who: UserInformationProto = c.call("whoami", &req("/")).await.unwrap();
    assert!(who.real_user.unwrap().contains("|whoami|3|"));
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_complete_out_of_order() {
    let (server, stats) = start(ServerConfig::default()).await;
    let c = client(&server).await;
    let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel();
    let mut tasks = Vec::new();
    for millis in [900u64, 600, 300, 10] {
        let c = c.clone();
        let done_tx = done_tx.clone();
        tasks.push(tokio::spawn(async move {
            let r: UserInformationProto = c.call("sleep", &req(&millis.to_string())).await.unwrap();
            assert_eq!(r.effective_user, Some(millis.to_string()));
            done_tx.send(millis).unwrap();
        }));
        // Make the issue order deterministic.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let started = Instant::now();
    for t in tasks {
        t.await.unwrap();
    }
    drop(done_tx);
    let mut order = Vec::new();
    while let Some(m) = done_rx.recv().await {
        order.push(m);
    }
    assert_eq!(order, vec![10, 300, 600, 900]);
    // They ran side by side, not one after another (which would take 1.8 s).
    assert!(started.elapsed() < Duration::from_millis(1500));
    assert_eq!(stats.max_running.load(Ordering::SeqCst), 4);
    server.shutdown().await;
}

#[tokio::test]
async fn many_tasks_share_one_client() {
    let (server, _) = start(ServerConfig::default()).await;
    let c = Arc::new(client(&server).await);
    let mut tasks = Vec::new();
    for i in 0..64 {
        let c = Arc::clone(&c);
        tasks.push(tokio::spawn(async move {
            let r: UserInformationProto = c.call("sleep", &req(&(i % 7).to_string())).await?;
            assert_eq!(r.effective_user, Some((i % 7).to_string()));
            Ok::<_, IpcError>(())
        }));
    }
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    server.shutdown().await;
}

#[tokio::test]
async fn remote_errors_are_mapped() {
    let (server, _) = start(ServerConfig::default()).await;
    let c = client(&server).await;

    let err = c
        .call::<_, UserInformationProto>("fail", &req("/x"))
        .await
        .unwrap_err();
    match err {
        IpcError::Remote {
            class_name,
            message,
        } => {
            assert_eq!(class_name, "java.io.FileNotFoundException");
            assert_eq!(message, "File does not exist: /x");
        }
        other => panic!("unexpected {other:?}"),
    }

    let err = c
        .call::<_, UserInformationProto>("renameTo", &req("/x"))
        .await
        .unwrap_err();
    match err {
        IpcError::Remote {
            class_name,
            message,
        } => {
            assert_eq!(class_name, "org.apache.hadoop.ipc.RpcNoSuchMethodException");
            assert_eq!(
                message,
                format!("Unknown method renameTo called on {PROTOCOL} protocol.")
            );
        }
        other => panic!("unexpected {other:?}"),
    }

    let err = c
        .call::<_, UserInformationProto>("panic", &req("/"))
        .await
        .unwrap_err();
    assert_eq!(err.remote_class(), Some("java.io.IOException"));

    // ERROR responses leave the connection usable.
    let who: UserInformationProto = c.call("whoami", &req("/")).await.unwrap();
    assert_eq!(who.effective_user.as_deref(), Some("alice"));
    server.shutdown().await;
}

#[tokio::test]
async fn dead_connection_fails_pending_calls() {
    let (server, _) = start(ServerConfig::default()).await;
    let c = client(&server).await;
    let pending = {
        let c = c.clone();
        tokio::spawn(async move {
            c.call::<_, UserInformationProto>("sleep", &req("30000"))
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = Instant::now();
    server.shutdown().await;
    let err = tokio::time::timeout(Duration::from_secs(5), pending)
        .await
        .expect("pending call fails promptly")
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(err, IpcError::Closed | IpcError::Io(_)),
        "unexpected {err:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    // The server is gone: a new call cannot reconnect.
    let err = c
        .call::<_, UserInformationProto>("whoami", &req("/"))
        .await
        .unwrap_err();
    assert!(matches!(err, IpcError::Io(_) | IpcError::Closed), "{err:?}");
}

#[tokio::test]
async fn client_reconnects_after_idle_close() {
    let clock = rhdfs_conf::clock::ManualClock::shared(0);
    let cfg = ServerConfig {
        idle: IdleRules {
            threshold: 1,
            ..IdleRules::default()
        },
        ..ServerConfig::default()
    }
    .with_clock(clock.clone());
    let (server, _) = start(cfg).await;
    let c = client(&server).await;
    let who: UserInformationProto = c.call("whoami", &req("/")).await.unwrap();
    assert!(who.real_user.unwrap().contains("|whoami|0|"));
    clock.advance(Duration::from_secs(3600));
    assert_eq!(server.close_idle_connections(), 1);
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.open_connections() > 0 {
        assert!(Instant::now() < deadline, "idle connection not closed");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // The server dropped the idle connection; the next call opens a new one and the call ids
    // keep counting, like the Java client. (A call racing the client's discovery of the
    // close fails cleanly; the one after it reconnects.)
    let who: UserInformationProto = match c.call("whoami", &req("/")).await {
        Ok(who) => who,
        Err(IpcError::Closed | IpcError::Io(_)) => c.call("whoami", &req("/")).await.unwrap(),
        Err(e) => panic!("unexpected {e:?}"),
    };
    let real = who.real_user.unwrap();
    assert!(
        real.contains("|whoami|1|") || real.contains("|whoami|2|"),
        "{real}"
    );
    assert_eq!(server.open_connections(), 1);
    server.shutdown().await;
}

#[tokio::test]
async fn in_flight_calls_are_bounded_per_connection() {
    let cfg = ServerConfig {
        max_in_flight_per_connection: 2,
        ..ServerConfig::default()
    };
    let (server, stats) = start(cfg).await;
    let c = client(&server).await;
    let r = req("100");
    let calls = (0..6).map(|_| c.call::<_, UserInformationProto>("sleep", &r));
    for r in futures::future::join_all(calls).await {
        r.unwrap();
    }
    assert_eq!(stats.completed.load(Ordering::SeqCst), 6);
    assert_eq!(stats.max_running.load(Ordering::SeqCst), 2);
    server.shutdown().await;
}

#[tokio::test]
async fn call_timeout() {
    let (server, _) = start(ServerConfig::default()).await;
    let cfg = ClientConfig {
        call_timeout: Some(Duration::from_millis(100)),
        ..ClientConfig::default()
    };
    let c = RpcClient::connect_with(&server.local_addr().to_string(), PROTOCOL, "bob", cfg)
        .await
        .unwrap();
    let err = c
        .call::<_, UserInformationProto>("sleep", &req("1000"))
        .await
        .unwrap_err();
    match err {
        IpcError::Io(e) => assert_eq!(e.kind(), std::io::ErrorKind::TimedOut),
        other => panic!("unexpected {other:?}"),
    }
    // The late response is dropped quietly; the connection still works.
    let who: UserInformationProto = c.call("whoami", &req("/")).await.unwrap();
    assert_eq!(who.effective_user.as_deref(), Some("bob"));
    server.shutdown().await;
}

#[tokio::test]
async fn close_fails_later_calls() {
    let (server, _) = start(ServerConfig::default()).await;
    let c = client(&server).await;
    c.close().await;
    let err = c
        .call::<_, UserInformationProto>("whoami", &req("/"))
        .await
        .unwrap_err();
    assert!(matches!(err, IpcError::Closed));
    server.shutdown().await;
}

#[tokio::test]
async fn connect_refused_is_io() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let err = RpcClient::connect(&addr.to_string(), PROTOCOL, "x")
        .await
        .unwrap_err();
    assert!(matches!(err, IpcError::Io(_)), "{err:?}");
}

#[tokio::test]
async fn client_retires_idle_connection_and_reconnects() {
    let (server, _) = start(ServerConfig::default()).await;
    let cfg = ClientConfig {
        max_idle: Duration::from_millis(100),
        ..ClientConfig::default()
    };
    let c = RpcClient::connect_with(&server.local_addr().to_string(), PROTOCOL, "fay", cfg)
        .await
        .unwrap();
    // A call longer than the client's idle time is not cut off.
    let r: UserInformationProto = c.call("sleep", &req("300")).await.unwrap();
    assert_eq!(r.effective_user.as_deref(), Some("300"));
    tokio::time::sleep(Duration::from_millis(400)).await;
    let who: UserInformationProto = c.call("whoami", &req("/")).await.unwrap();
    assert!(who.real_user.unwrap().contains("|whoami|1|"));
    server.shutdown().await;
}

#[test]
fn configs_from_conf() {
    let mut conf = rhdfs_conf::Configuration::new();
    let s = ServerConfig::from_conf(&conf).unwrap();
    assert_eq!(s.max_data_length, 134_217_728);
    assert_eq!(s.idle.max_idle, Duration::from_secs(20));
    assert_eq!((s.idle.threshold, s.idle.kill_max), (4000, 10));
    let c = ClientConfig::from_conf(&conf).unwrap();
    assert_eq!(c.call_timeout, Some(Duration::from_secs(120)));
    assert_eq!(c.max_idle, Duration::from_secs(10));

    conf.set("ipc.maximum.data.length", "1048576");
    conf.set("ipc.client.connection.maxidletime", "2500");
    conf.set("ipc.client.rpc-timeout.ms", "0");
    let s = ServerConfig::from_conf(&conf).unwrap();
    assert_eq!(s.max_data_length, 1_048_576);
    assert_eq!(s.idle.max_idle, Duration::from_secs(5));
    let c = ClientConfig::from_conf(&conf).unwrap();
    assert_eq!(c.call_timeout, None);
    assert_eq!(c.max_idle, Duration::from_millis(2500));

    conf.set("ipc.maximum.data.length", "lots");
    assert!(ServerConfig::from_conf(&conf).is_err());
}

#[tokio::test]
async fn large_request_round_trip() {
    let (server, _) = start(ServerConfig::default()).await;
    let c = client(&server).await;
    let big = "x".repeat(5 << 20);
    let r: GetFileInfoResponseProto = c.call("getFileInfo", &req(&big)).await.unwrap();
    assert!(r.fs.is_none());
    server.shutdown().await;
}
