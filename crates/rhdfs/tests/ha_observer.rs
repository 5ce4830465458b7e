//! Observer reads (issue 14's second step): three NameNodes of nameservice `ns` in one
//! process, one made an observer with `haadmin -transitionToObserver`, and the stock Apache
//! Hadoop 3.5 Java FsShell configured with ObserverReadProxyProvider.
//!
//! - The transitions as Hadoop's: the active cannot become an observer, an observer cannot
//!   become active, `-getServiceState` prints `observer`, `-transitionToStandby` makes it a
//!   standby again.
//! - The observer refuses writes (StandbyException, "Operation category WRITE is not
//!   supported in state observer") and coordinated reads without a state id; it answers
//!   getHAServiceState OBSERVER, and msync only on the active.
//! - The Java client writes through the active and reads back what it wrote from the
//!   observer (its read counter moves, and /jmx shows it and the state); with the observer cut off from Raft, another
//!   client's write is acknowledged by the majority, and the Java client's next read (after
//!   its msync to the active) waits on the observer (its wait counter moves) until, healed,
//!   it applied the client's state id, then answers the new bytes.
//! - The observer never becomes active: the active crashes, the standby takes over, the
//!   observer stays an observer.

use std::time::Duration;

use rhdfs_client::FileSystem;
use rhdfs_conf::Configuration;
use rhdfs_ipc::{IpcError, RpcClient};
use rhdfs_minicluster::ha::HaMiniCluster;
use rhdfs_namenode::ha::Role;
use rhdfs_namenode::ha::member::HaMember;
use rhdfs_proto::common::HaServiceStateProto;
use rhdfs_proto::hdfs::{
    FsPermissionProto, GetFileInfoRequestProto, GetFileInfoResponseProto,
    HaServiceStateRequestProto, HaServiceStateResponseProto, MkdirsRequestProto,
    MkdirsResponseProto, MsyncRequestProto, MsyncResponseProto,
};
use rhdfs_proto::protocols::CLIENT_PROTOCOL;
use rhdfs_testkit::cluster::{data, write_file};
use rhdfs_testkit::java::JavaShell;
use rhdfs_testkit::ports::{self, ReservedPort};

use crate::common::haadmin::haadmin;

/// Generous: the test machine is small and busy.
pub(crate) const DEADLINE: Duration = Duration::from_secs(60);

const EXTRA: &[(&str, &str)] = &[
    ("rhdfs.ha.raft.heartbeat.interval.ms", "100"),
    ("rhdfs.ha.raft.election.timeout.ms", "600"),
    ("dfs.replication", "1"),
    ("dfs.namenode.safemode.extension", "0"),
    ("dfs.heartbeat.interval", "1"),
    // How long an observer lets a read wait for its state id.
    ("ipc.client.connection.maxidletime", "30000"),
];

pub(crate) const OBSERVER_PROVIDER: &str =
    "org.apache.hadoop.hdfs.server.namenode.ha.ObserverReadProxyProvider";

pub(crate) async fn start() -> anyhow::Result<(HaMiniCluster, Vec<ReservedPort>)> {
    let reserved = (0..3)
        .map(|_| ports::reserve())
        .collect::<Result<Vec<_>, _>>()?;
    let ports: Vec<u16> = reserved.iter().map(|p| p.port()).collect();
    let mut conf = Configuration::new();
    for (k, v) in EXTRA {
        conf.set(k, v.to_string());
    }
    let c = HaMiniCluster::start(None, &ports, 1, &conf).await?;
    Ok((c, reserved))
}

/// Hadoop's client keys for `ns` with ObserverReadProxyProvider.
fn java_keys(c: &HaMiniCluster) -> Vec<(String, String)> {
    let conf = c.client_conf();
    let mut keys = vec![
        ("dfs.nameservices".to_string(), "ns".to_string()),
        ("dfs.ha.namenodes.ns".to_string(), "nn1,nn2,nn3".to_string()),
        (
            "dfs.client.failover.proxy.provider.ns".to_string(),
            OBSERVER_PROVIDER.to_string(),
        ),
        ("dfs.replication".to_string(), "1".to_string()),
        (
            "dfs.client.failover.sleep.base.millis".to_string(),
            "20".to_string(),
        ),
        (
            "dfs.client.failover.sleep.max.millis".to_string(),
            "200".to_string(),
        ),
    ];
    for i in 1..=3 {
        let k = format!("dfs.namenode.rpc-address.ns.nn{i}");
        if let Some(v) = conf.get(&k) {
            keys.push((k, v.to_string()));
        }
    }
    keys
}

fn rpc_addr(c: &HaMiniCluster, i: usize) -> String {
    c.namenode(i)
        .map(|nn| nn.rpc_addr().to_string())
        .unwrap_or_default()
}

async fn call<Req: prost::Message, Resp: prost::Message + Default>(
    addr: &str,
    method: &str,
    req: &Req,
) -> Result<Resp, IpcError> {
    let c = RpcClient::connect(addr, CLIENT_PROTOCOL, "hdfs").await?;
    let r = c.call::<_, Resp>(method, req).await;
    c.close().await;
    r
}

fn refused(r: Result<impl std::fmt::Debug, IpcError>, class: &str, words: &str) {
    match r {
        Err(e) => {
            assert_eq!(e.remote_class(), Some(class), "{e}");
            assert!(e.to_string().contains(words), "{e}");
        }
        Ok(v) => panic!("answered {v:?}, expected {class}"),
    }
}

/// Waits until `f()` holds, at most [`DEADLINE`].
async fn wait_for(what: &str, f: impl Fn() -> bool) -> anyhow::Result<()> {
    let deadline = tokio::time::Instant::now() + DEADLINE;
    while !f() {
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "{what}: not within {DEADLINE:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

/// The NameNode `i`'s last applied txid (its state id).
/// Waits until observer `obs` applied what `active` has, then cuts its Raft traffic with
/// every other member; returns its member (to heal).
pub(crate) async fn cut_off_observer(
    c: &HaMiniCluster,
    obs: usize,
    active: usize,
) -> anyhow::Result<&HaMember> {
    wait_for("the observer caught up", || {
        state_id(c, obs) >= state_id(c, active)
    })
    .await?;
    let member = c
        .namenode(obs)
        .and_then(|nn| nn.ha_member())
        .ok_or_else(|| anyhow::anyhow!("the observer has no Raft member"))?;
    let peers: Vec<u64> = (1..=3).filter(|p| *p != member.id).collect();
    member.faults.cut_all(peers.iter().copied());
    Ok(member)
}

pub(crate) fn state_id(c: &HaMiniCluster, i: usize) -> u64 {
    c.namenode(i).map_or(0, |nn| nn.block_manager().last_txid())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_observer_serves_consistent_reads_to_the_java_client() -> anyhow::Result<()> {
    let (mut c, _ports) = start().await?;
    let active = c.wait_active(DEADLINE).await?;
    let obs = (0..3).find(|i| *i != active).unwrap_or_default();
    let obs_id = format!("nn{}", obs + 1);
    let active_id = format!("nn{}", active + 1);
    let conf = c.client_conf().clone();

    // Transitions, as Hadoop's.
    let (code, _, err) = haadmin(&conf, &["-transitionToObserver", &active_id]).await?;
    assert_eq!(code, 255, "{err}");
    assert!(
        err.contains("Cannot transition from 'active' to 'observer'"),
        "{err}"
    );
    let (code, _, err) = haadmin(&conf, &["-transitionToObserver", &obs_id]).await?;
    assert_eq!(code, 0, "{err}");
    let (code, out, _) = haadmin(&conf, &["-getServiceState", &obs_id]).await?;
    assert_eq!((code, out.as_str()), (0, "observer\n"));
    let observer = c.namenode(obs).map(|nn| nn.namesystem().clone());
    let observer = observer.ok_or_else(|| anyhow::anyhow!("no observer"))?;
    assert_eq!(observer.ha_role().get(), Role::Observer);
    let (code, _, err) = haadmin(&conf, &["-transitionToActive", &obs_id]).await?;
    assert_eq!(code, 255, "{err}");
    assert!(
        err.contains("Cannot transition from 'observer' to 'active'"),
        "{err}"
    );

    // What the observer refuses and answers.
    let obs_addr = rpc_addr(&c, obs);
    let mkdir = MkdirsRequestProto {
        src: "/no".into(),
        masked: FsPermissionProto { perm: 0o755 },
        create_parent: true,
        unmasked: None,
    };
    refused(
        call::<_, MkdirsResponseProto>(&obs_addr, "mkdirs", &mkdir).await,
        "org.apache.hadoop.ipc.StandbyException",
        "Operation category WRITE is not supported in state observer",
    );
    refused(
        call::<_, GetFileInfoResponseProto>(
            &obs_addr,
            "getFileInfo",
            &GetFileInfoRequestProto { src: "/".into() },
        )
        .await,
        "org.apache.hadoop.ipc.StandbyException",
        "Observer Node received request without stateId",
    );
    refused(
        call::<_, MsyncResponseProto>(&obs_addr, "msync", &MsyncRequestProto {}).await,
        "org.apache.hadoop.ipc.StandbyException",
        "Operation category WRITE is not supported in state observer",
    );
    let state: HaServiceStateResponseProto = call(
        &obs_addr,
        "getHAServiceState",
        &HaServiceStateRequestProto {},
    )
    .await?;
    assert_eq!(state.state, HaServiceStateProto::Observer as i32);
    let state: HaServiceStateResponseProto = call(
        &rpc_addr(&c, active),
        "getHAServiceState",
        &HaServiceStateRequestProto {},
    )
    .await?;
    assert_eq!(state.state, HaServiceStateProto::Active as i32);
    call::<_, MsyncResponseProto>(&rpc_addr(&c, active), "msync", &MsyncRequestProto {}).await?;

    let keys = java_keys(&c);
    let keys: Vec<(&str, &str)> = keys.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let Some(sh) = JavaShell::with_conf(
        "hdfs://ns",
        "an_observer_serves_consistent_reads_to_the_java_client",
        &keys,
    )?
    else {
        return Ok(());
    };
    let dir = tempfile::tempdir()?;
    let put = |name: &str, bytes: &[u8]| -> anyhow::Result<String> {
        let local = dir.path().join(name);
        std::fs::write(&local, bytes)?;
        Ok(local.to_string_lossy().into_owned())
    };

    // Written through the active, read back from the observer.
    let reads = observer.ha_role().observer_reads();
    let first = data(300_000, 1);
    sh.run(&["-mkdir", "-p", "hdfs://ns/obs"]).await?.ok();
    sh.run(&["-put", &put("a", &first)?, "hdfs://ns/obs/a"])
        .await?
        .ok();
    let served = reads.served();
    let out = sh.run(&["-cat", "hdfs://ns/obs/a"]).await?.ok();
    assert!(out.stdout == first, "-cat gave {} bytes", out.stdout.len());
    assert!(
        reads.served() > served,
        "the observer served none of -cat's reads"
    );

    // The web port says so too.
    let http = c
        .namenode(obs)
        .map(|nn| nn.http_addr().to_string())
        .unwrap_or_default();
    let (code, page) = rhdfs_http::client::get(
        &http,
        "/jmx?qry=rhdfs:service=NameNode,name=ObserverReads",
        DEADLINE,
    )
    .await?;
    assert_eq!(code, 200, "{page}");
    let served_jmx = format!("\"Served\" : {}", reads.served());
    assert!(
        page.contains(&served_jmx) || page.contains(&served_jmx.replace(" : ", ":")),
        "{page}"
    );
    let (_, page) = rhdfs_http::client::get(
        &http,
        "/jmx?get=Hadoop:service=NameNode,name=NameNodeStatus::State",
        DEADLINE,
    )
    .await?;
    assert!(page.contains("observer"), "{page}");

    // A lagging observer: reads wait for the client's state id.
    let member = cut_off_observer(&c, obs, active).await?;
    // Another client (rhdfs's, through the active) writes; the Java client's msync then
    // gives it the active's state id. (A Java -put here would work too, but each of its
    // reads after the create would wait out the bound before going to the active.)
    let second = data(200_000, 2);
    let fs = FileSystem::connect_with(Some("hdfs://ns"), c.client_conf().clone()).await?;
    write_file(&fs, "/obs/b", &second).await?;
    assert!(
        state_id(&c, obs) < state_id(&c, active),
        "the cut-off observer applied the new edits"
    );
    let waited = reads.waited();
    let cat = {
        let sh = &sh;
        async move { sh.run(&["-cat", "hdfs://ns/obs/b"]).await }
    };
    let heal = async {
        wait_for("a read waiting on the observer", || reads.waited() > waited).await?;
        member.faults.heal_all();
        anyhow::Ok(())
    };
    let (out, healed) = tokio::join!(cat, heal);
    healed?;
    let out = out?.ok();
    assert!(out.stdout == second, "-cat gave {} bytes", out.stdout.len());

    // The observer never becomes active.
    c.crash_namenode(active).await;
    let next = c.wait_active(DEADLINE).await?;
    assert_ne!(next, obs, "the observer became active");
    assert_eq!(observer.ha_role().get(), Role::Observer);
    let out = sh.run(&["-cat", "hdfs://ns/obs/a"]).await?.ok();
    assert!(out.stdout == first, "-cat gave {} bytes", out.stdout.len());

    // Back to a standby.
    let (code, _, err) = haadmin(&conf, &["-transitionToStandby", &obs_id]).await?;
    assert_eq!(code, 0, "{err}");
    assert_eq!(observer.ha_role().get(), Role::Standby);

    // Started with `namenode -observer` (Hadoop's start-up option in its configuration),
    // it joins as an observer and tells DataNodes so.
    c.namenode_conf_mut(obs)
        .ok_or_else(|| anyhow::anyhow!("no configuration"))?
        .set("dfs.namenode.startup", "OBSERVER");
    c.restart_namenode(obs).await?;
    let (code, out, _) = haadmin(&conf, &["-getServiceState", &obs_id]).await?;
    assert_eq!((code, out.as_str()), (0, "observer\n"));
    let restarted = c.namenode(obs).map(|nn| nn.namesystem().clone());
    let restarted = restarted.ok_or_else(|| anyhow::anyhow!("not running"))?;
    assert_eq!(restarted.ha_role().get(), Role::Observer);
    let out = sh.run(&["-cat", "hdfs://ns/obs/b"]).await?.ok();
    assert!(out.stdout == second, "-cat gave {} bytes", out.stdout.len());
    c.shutdown().await;
    Ok(())
}
