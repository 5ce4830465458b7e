//! An HA nameservice from the client's side (issue 14, step 1): the rhdfs client and
//! `rhdfs dfs` fail over from a dead NameNode and from one answering StandbyException to a
//! live MiniCluster NameNode; an at-most-once call re-sent after failover keeps its client id
//! and call id, so the NameNode's retry cache answers it; `rhdfs haadmin` against a NameNode.

use crate::common::haadmin::haadmin;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use rhdfs_client::{CreateOptions, FileSystem};
use rhdfs_conf::Configuration;
use rhdfs_ipc::{
    CallContext, ClientConfig, RpcClient, RpcError, RpcServer, RpcService, ServerConfig,
};
use rhdfs_proto::protocols::CLIENT_PROTOCOL;
use rhdfs_testkit::cluster::{cluster, data, read_file};
use rhdfs_testkit::ports::{self, ReservedPort};

/// A port nothing listens on (connection refused) for as long as it is held: reserved below
/// the ephemeral range, where no other test's daemon or connection can be handed it.
fn dead_port() -> anyhow::Result<ReservedPort> {
    Ok(ports::reserve()?)
}

/// `ns` with `nn1` and `nn2` at the given addresses, tried in that order.
fn ha_conf(nn1: &str, nn2: &str) -> Vec<(String, String)> {
    [
        ("fs.defaultFS", "hdfs://ns"),
        ("dfs.nameservices", "ns"),
        ("dfs.ha.namenodes.ns", "nn1,nn2"),
        ("dfs.namenode.rpc-address.ns.nn1", nn1),
        ("dfs.namenode.rpc-address.ns.nn2", nn2),
        (
            "dfs.client.failover.proxy.provider.ns",
            "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider",
        ),
        ("dfs.client.failover.random.order", "false"),
        ("dfs.client.failover.sleep.base.millis", "10"),
        ("dfs.client.failover.sleep.max.millis", "50"),
        ("dfs.blocksize", "1048576"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

fn conf_of(pairs: &[(String, String)]) -> Configuration {
    let mut c = Configuration::new();
    for (k, v) in pairs {
        c.set(k, v.clone());
    }
    c
}

async fn round_trip(fs: &FileSystem, path: &str, len: usize) -> anyhow::Result<()> {
    let bytes = data(len, len as u64);
    rhdfs_testkit::cluster::write_file(fs, path, &bytes).await?;
    assert_eq!(read_file(fs, path).await?, bytes);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fails_over_from_a_dead_namenode() -> anyhow::Result<()> {
    let c = cluster(1).await?;
    let live = c.namenode().rpc_addr().to_string();
    let dead = dead_port()?;
    let pairs = ha_conf(&dead.addr(), &live);
    let fs = FileSystem::connect_with(Some("hdfs://ns"), conf_of(&pairs)).await?;
    assert_eq!(fs.uri(), "hdfs://ns");
    round_trip(&fs, "/ha/dead-first", 300_000).await?;
    assert_eq!(fs.qualify("/ha"), "hdfs://ns/ha");
    fs.close().await;

    // The shell, given only the HA keys.
    let mut argv: Vec<String> = Vec::new();
    for (k, v) in &pairs {
        argv.push("-D".into());
        argv.push(format!("{k}={v}"));
    }
    argv.extend(["-ls".to_string(), "hdfs://ns/ha".to_string()]);
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = rhdfs::dfs::run_with(argv, &mut out, &mut err).await?;
    let out = String::from_utf8_lossy(&out);
    assert_eq!(code, 0, "{out}\n{}", String::from_utf8_lossy(&err));
    assert!(out.contains("hdfs://ns/ha/dead-first"), "{out}");
    Ok(())
}

type Answer = Pin<Box<dyn Future<Output = Result<Bytes, RpcError>> + Send + 'static>>;

/// A fake NameNode: every call goes to `answer`; what it was called with is recorded.
struct Fake {
    calls: Mutex<Vec<(String, Bytes, i32, i32)>>,
    answer: Box<dyn Fn(CallContext, Bytes) -> Answer + Send + Sync>,
}

impl RpcService for Fake {
    fn call<'a, 'b>(
        &'a self,
        ctx: CallContext,
        body: Bytes,
    ) -> Pin<Box<dyn Future<Output = Result<Bytes, RpcError>> + Send + 'b>>
    where
        'a: 'b,
        Self: 'b,
    {
        self.calls.lock().unwrap_or_else(|e| e.into_inner()).push((
            ctx.method.clone(),
            ctx.client_id.clone(),
            ctx.call_id,
            ctx.retry_count,
        ));
        (self.answer)(ctx, body)
    }
}

async fn fake(
    answer: impl Fn(CallContext, Bytes) -> Answer + Send + Sync + 'static,
) -> anyhow::Result<(Arc<Fake>, RpcServer)> {
    let svc = Arc::new(Fake {
        calls: Mutex::new(Vec::new()),
        answer: Box::new(answer),
    });
    let server = RpcServer::bind(
        "127.0.0.1:0".parse()?,
        svc.clone(),
        ServerConfig::from_conf(&Configuration::new())?,
    )
    .await?;
    Ok((svc, server))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fails_over_from_a_standby() -> anyhow::Result<()> {
    let c = cluster(1).await?;
    let (standby, server) = fake(|_, _| {
        Box::pin(async {
            Err(RpcError::new(
                rhdfs_ipc::exceptions::STANDBY,
                "Operation category READ is not supported in state standby",
            ))
        })
    })
    .await?;
    let pairs = ha_conf(
        &server.local_addr().to_string(),
        &c.namenode().rpc_addr().to_string(),
    );
    let fs = FileSystem::connect_with(Some("hdfs://ns"), conf_of(&pairs)).await?;
    round_trip(&fs, "/ha/standby-first", 1000).await?;
    let calls = standby
        .calls
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    assert_eq!(
        calls.len(),
        1,
        "only the first call went to the standby: {calls:?}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_create_resent_after_failover_gets_the_first_answer() -> anyhow::Result<()> {
    let c = cluster(1).await?;
    let live = c.namenode().rpc_addr().to_string();
    // The first NameNode runs each call on the live one (as the same caller: client id and
    // call id) and then never answers, as a NameNode that dies after acting would.
    let forwarded = Arc::new(AtomicUsize::new(0));
    let (first, server) = {
        let (live, forwarded) = (live.clone(), forwarded.clone());
        fake(move |ctx, body| {
            let (live, forwarded) = (live.clone(), forwarded.clone());
            Box::pin(async move {
                let to = RpcClient::lazy(
                    &live,
                    CLIENT_PROTOCOL,
                    &ctx.user,
                    ClientConfig::default(),
                    ctx.client_id.clone(),
                );
                let _ = to
                    .call_raw_as(&ctx.method, &body, ctx.call_id, ctx.retry_count)
                    .await;
                forwarded.fetch_add(1, Ordering::AcqRel);
                std::future::pending::<()>().await;
                unreachable!()
            })
        })
        .await?
    };
    let mut pairs = ha_conf(&server.local_addr().to_string(), &live);
    pairs.push(("ipc.client.rpc-timeout.ms".into(), "1000".into()));
    let fs = FileSystem::connect_with(Some("hdfs://ns"), conf_of(&pairs)).await?;
    let opts = CreateOptions {
        overwrite: false,
        ..Default::default()
    };
    // Run by the first NameNode, its answer lost; re-sent to the live one, whose retry cache
    // answers (a second create of the file would fail: it exists, and is being written).
    let mut w = fs.create("/ha/once", opts).await?;
    w.write(b"written once").await?;
    w.close().await?;
    assert_eq!(forwarded.load(Ordering::Acquire), 1);
    let calls = first
        .calls
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!((calls[0].0.as_str(), calls[0].3), ("create", 0));
    assert_eq!(read_file(&fs, "/ha/once").await?, b"written once");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn haadmin_against_a_namenode() -> anyhow::Result<()> {
    let c = cluster(1).await?;
    let live = c.namenode().rpc_addr().to_string();
    let dead_port = dead_port()?;
    let dead = dead_port.addr();
    let conf = conf_of(&ha_conf(&live, &dead));

    let (code, out, err) = haadmin(&conf, &["-getServiceState", "nn1"]).await?;
    assert_eq!((code, out.as_str()), (0, "active\n"), "{err}");

    let (code, out, _) = haadmin(&conf, &["-getAllServiceState"]).await?;
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert_eq!(lines[0], format!("{live:<50} {:<10}", "active"));
    assert!(
        lines[1].starts_with(&format!("{dead:<50} Failed to connect: ")),
        "{out}"
    );

    // Healthy once start-up (with its safe mode) is over.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let (code, _, err) = haadmin(&conf, &["-checkHealth", "nn1"]).await?;
        if code == 0 {
            break;
        }
        assert!(err.starts_with("Health check failed: "), "{err}");
        assert!(
            tokio::time::Instant::now() < deadline,
            "never healthy: {err}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (code, _, err) = haadmin(&conf, &["-checkHealth", "nn2"]).await?;
    assert_eq!(code, 255, "{err}");
    assert!(err.starts_with("Operation failed: "), "{err}");

    let (code, _, err) = haadmin(&conf, &["-transitionToStandby", "nn1"]).await?;
    assert_eq!(code, 255);
    assert!(err.contains("HA is not configured"), "{err}");
    let (code, _, err) = haadmin(&conf, &["-getServiceState", "nn7"]).await?;
    assert_eq!(code, 255);
    assert!(err.contains("nn7"), "{err}");
    let (code, _, _) = haadmin(&Configuration::new(), &["-getAllServiceState"]).await?;
    assert_eq!(code, 255);
    Ok(())
}

/// The stock Java FsShell given only Hadoop's HA keys, its first NameNode dead: -put and -cat
/// through `hdfs://ns`. Skipped without Java unless RHDFS_REQUIRE_JAVA=1.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn java_fsshell_fails_over_through_the_nameservice() -> anyhow::Result<()> {
    let c = cluster(1).await?;
    let dead = dead_port()?;
    let pairs = ha_conf(&dead.addr(), &c.namenode().rpc_addr().to_string());
    let java_keys: Vec<(&str, &str)> = pairs
        .iter()
        .filter(|(k, _)| k != "dfs.blocksize")
        .filter(|(k, _)| !k.starts_with("dfs.client.failover.") || k.ends_with(".ns"))
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let Some(sh) = rhdfs_testkit::java::JavaShell::with_conf(
        "hdfs://ns",
        "java_fsshell_fails_over_through_the_nameservice",
        &java_keys,
    )?
    else {
        return Ok(());
    };
    let dir = tempfile::tempdir()?;
    let local = dir.path().join("in.bin");
    let bytes = data(200_000, 7);
    std::fs::write(&local, &bytes)?;
    let local = local.to_string_lossy().into_owned();
    sh.run(&["-mkdir", "-p", "hdfs://ns/java"]).await?.ok();
    sh.run(&["-put", &local, "hdfs://ns/java/in.bin"])
        .await?
        .ok();
    let out = sh.run(&["-cat", "hdfs://ns/java/in.bin"]).await?.ok();
    assert!(out.stdout == bytes, "-cat gave {} bytes", out.stdout.len());
    // The rhdfs client reads what Java wrote, through the same nameservice.
    let fs = FileSystem::connect_with(Some("hdfs://ns"), conf_of(&pairs)).await?;
    assert_eq!(read_file(&fs, "/java/in.bin").await?, bytes);
    Ok(())
}

/// `rhdfs dfsadmin` and `rhdfs fsck` through `hdfs://ns` whose first NameNode is dead: both
/// find the NameNode that answers (its RPC address, and for fsck its web address from
/// `dfs.namenode.http-address.ns.nn2`), as Hadoop's DFSAdmin and DFSck find the active one.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn dfsadmin_and_fsck_find_the_answering_namenode() -> anyhow::Result<()> {
    let c = cluster(1).await?;
    let live = c.namenode().rpc_addr().to_string();
    let live_http = c.namenode().http_addr().to_string();
    let (dead, dead_http) = (dead_port()?, dead_port()?);
    let mut pairs = ha_conf(&dead.addr(), &live);
    pairs.push(("dfs.namenode.http-address.ns.nn1".into(), dead_http.addr()));
    pairs.push(("dfs.namenode.http-address.ns.nn2".into(), live_http));
    let run = |args: &[&str]| {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_rhdfs"));
        cmd.args(args);
        for (k, v) in &pairs {
            cmd.arg("-D").arg(format!("{k}={v}"));
        }
        cmd.env("RUST_LOG", "warn").output()
    };
    let out = run(&["dfsadmin", "-report"]).await?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("Live datanodes (1):"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(&["fsck", "/"]).await?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("is HEALTHY"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // With no NameNode answering, the error names them.
    let (d1, d2) = (dead_port()?, dead_port()?);
    let mut none = tokio::process::Command::new(env!("CARGO_BIN_EXE_rhdfs"));
    none.args(["dfsadmin", "-report"]);
    for (k, v) in ha_conf(&d1.addr(), &d2.addr()) {
        none.arg("-D").arg(format!("{k}={v}"));
    }
    let out = none.env("RUST_LOG", "warn").output().await?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("no NameNode of nameservice ns answered"),
        "{stderr}"
    );
    Ok(())
}
