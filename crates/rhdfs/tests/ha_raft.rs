//! NameNode HA on the Raft-replicated edit log (issue 14): three NameNodes of one
//! nameservice in one process (`rhdfs_minicluster::ha`), DataNodes reporting to all of them,
//! clients given only Hadoop's HA keys.
//!
//! - Edits written through the active reach every member (namespace images identical);
//!   standbys refuse client calls with Hadoop's StandbyException; a crashed active is
//!   replaced and the client goes on reading what it wrote and writing more; the crashed
//!   member restarts, catches up from the log and joins the identical namespace.
//! - At-most-once calls (create, append, delete, rename) answered by the active, re-sent
//!   with the same client id and call id to the new active after failover, get the first
//!   answer again (the retry cache across failover), where running them again would fail
//!   or answer false.
//! - A partitioned active (its Raft traffic cut by the fault hook) stops being active within
//!   the election timeout and acknowledges no mutation; the majority elects another active
//!   the client fails over to; healed, the old active follows as a standby.
//! - `haadmin -failover` and `-transitionToStandby` move the active role through a Raft
//!   election; a failover to the active is refused; the client follows. The standby not
//!   chosen holds its elections through the hand-over, so a chosen member slow to campaign
//!   (its Raft traffic cut for longer than the other's election deadline) still wins.
//! - A member down while the others compacted their Raft logs (a snapshot at each image,
//!   the log purged behind it) catches up from the active's image installed as a Raft
//!   snapshot: identical namespace, a block map that knows the blocks written and deleted
//!   while it was down with their replicas, so it serves the files once made active.
//! - A member whose directories are lost is bootstrapped from another member's image
//!   (`namenode -bootstrapStandby`; refused while its directories hold a namespace), restarts
//!   with an empty Raft log and catches up to the identical namespace.

use crate::common::haadmin::haadmin;
use crate::common::procs::wait_for;
use std::time::Duration;

use bytes::Bytes;
use prost::Message;
use rhdfs_client::FileSystem;
use rhdfs_conf::Configuration;
use rhdfs_ipc::ClientConfig;
use rhdfs_ipc::{IpcError, RpcClient};
use rhdfs_minicluster::ha::HaMiniCluster;
use rhdfs_namenode::ha::Role;
use rhdfs_proto::hdfs::{
    AppendRequestProto, AppendResponseProto, CreateRequestProto, CreateResponseProto,
    DeleteRequestProto, DeleteResponseProto, FsPermissionProto, GetFileInfoRequestProto,
    GetFileInfoResponseProto, RenameRequestProto, RenameResponseProto,
};
use rhdfs_proto::protocols::CLIENT_PROTOCOL;
use rhdfs_testkit::cluster::{data, read_file, write_file};
use rhdfs_testkit::ports::{self, ReservedPort};

/// Generous: the test machine is small and busy.
pub(crate) const DEADLINE: Duration = Duration::from_secs(60);

pub(crate) const EXTRA: &[(&str, &str)] = &[
    ("rhdfs.ha.raft.heartbeat.interval.ms", "100"),
    ("rhdfs.ha.raft.election.timeout.ms", "600"),
    ("dfs.blocksize", "1048576"),
    ("dfs.namenode.fs-limits.min-block-size", "0"),
    ("dfs.namenode.accesstime.precision", "0"),
    ("dfs.namenode.safemode.extension", "0"),
    ("dfs.client.failover.sleep.base.millis", "20"),
    ("dfs.client.failover.sleep.max.millis", "200"),
    ("dfs.client.failover.max.attempts", "40"),
    ("dfs.heartbeat.interval", "1"),
];

async fn start(datanodes: usize) -> anyhow::Result<(HaMiniCluster, Vec<ReservedPort>)> {
    start_with(datanodes, &[]).await
}

/// [`start`] with `more` keys beside [`EXTRA`].
async fn start_with(
    datanodes: usize,
    more: &[(&str, &str)],
) -> anyhow::Result<(HaMiniCluster, Vec<ReservedPort>)> {
    let reserved = (0..3)
        .map(|_| ports::reserve())
        .collect::<Result<Vec<_>, _>>()?;
    let ports: Vec<u16> = reserved.iter().map(|p| p.port()).collect();
    let mut conf = Configuration::new();
    for (k, v) in EXTRA.iter().chain(more) {
        conf.set(k, v.to_string());
    }
    let c = HaMiniCluster::start(None, &ports, datanodes, &conf).await?;
    Ok((c, reserved))
}

pub(crate) fn client_conf(c: &HaMiniCluster) -> Configuration {
    c.client_conf().clone()
}

/// Each running NameNode's last txid and namespace image.
fn images(c: &HaMiniCluster) -> Vec<(usize, u64, Vec<u8>)> {
    (0..c.num_namenodes())
        .filter_map(|i| {
            let nn = c.namenode(i)?;
            let (txid, image) = nn
                .namesystem()
                .with_ns(|ns| (ns.last_txid(), ns.encode_image().1));
            Some((i, txid, image))
        })
        .collect()
}

/// Waits until every running NameNode holds the same namespace at the same txid, at
/// least `min_txid`; returns that txid.
pub(crate) async fn wait_identical(c: &HaMiniCluster, min_txid: u64) -> anyhow::Result<u64> {
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        let all = images(c);
        let same = all.windows(2).all(|w| w[0].1 == w[1].1 && w[0].2 == w[1].2);
        if same && all.first().is_some_and(|(_, t, _)| *t >= min_txid) {
            return Ok(all[0].1);
        }
        if tokio::time::Instant::now() >= deadline {
            let txids: Vec<_> = all.iter().map(|(i, t, img)| (*i, *t, img.len())).collect();
            anyhow::bail!(
                "namespaces differ after {DEADLINE:?}: (member, txid, image bytes) {txids:?}"
            );
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn file_info_at(addr: &str) -> Result<GetFileInfoResponseProto, IpcError> {
    let c = RpcClient::connect(addr, CLIENT_PROTOCOL, "hdfs").await?;
    c.call::<_, GetFileInfoResponseProto>(
        "getFileInfo",
        &GetFileInfoRequestProto { src: "/".into() },
    )
    .await
}

/// One client's at-most-once calls, numbered by the test: what a failover client re-sends.
struct Retrier {
    client_id: Bytes,
    user: String,
}

/// A call: method, encoded request, call id.
type Call = (&'static str, Vec<u8>, i32);

impl Retrier {
    /// Sends `call` to the NameNode at `addr` as attempt `attempt`.
    async fn send(&self, addr: &str, call: &Call, attempt: i32) -> Result<Bytes, IpcError> {
        let c = RpcClient::lazy(
            addr,
            CLIENT_PROTOCOL,
            &self.user,
            ClientConfig::default(),
            self.client_id.clone(),
        );
        c.call_raw_as(call.0, &call.1, call.2, attempt).await
    }
}

/// create, append, delete and rename, as calls 1 to 4 of client "retrier" (`/ha/app`,
/// `/ha/victim` and `/ha/r1` must exist).
fn at_most_once_calls() -> Vec<Call> {
    vec![
        (
            "create",
            CreateRequestProto {
                src: "/ha/retried/new".into(),
                masked: FsPermissionProto { perm: 0o644 },
                client_name: "retrier".into(),
                create_flag: 1,
                create_parent: true,
                replication: 3,
                block_size: 1 << 20,
                ..Default::default()
            }
            .encode_to_vec(),
            1,
        ),
        (
            "append",
            AppendRequestProto {
                src: "/ha/app".into(),
                client_name: "retrier".into(),
                flag: None,
            }
            .encode_to_vec(),
            2,
        ),
        (
            "delete",
            DeleteRequestProto {
                src: "/ha/victim".into(),
                recursive: true,
            }
            .encode_to_vec(),
            3,
        ),
        (
            "rename",
            RenameRequestProto {
                src: "/ha/r1".into(),
                dst: "/ha/r2".into(),
            }
            .encode_to_vec(),
            4,
        ),
    ]
}

/// Waits for an active NameNode other than `not`.
/// Once NameNode `to` is healthy (out of start-up safe mode): `haadmin -failover from to`,
/// then waits until `to` is the active one.
async fn fail_over(c: &HaMiniCluster, from: usize, to: usize) -> anyhow::Result<()> {
    let conf = client_conf(c);
    let nn = |i: usize| format!("nn{}", i + 1);
    wait_for(&format!("{} healthy", nn(to)), DEADLINE, || async {
        Ok(haadmin(&conf, &["-checkHealth", &nn(to)]).await?.0 == 0)
    })
    .await?;
    let (code, _, err) = haadmin(&conf, &["-failover", &nn(from), &nn(to)]).await?;
    anyhow::ensure!(code == 0, "-failover {} {}: {err}", nn(from), nn(to));
    let now = wait_other_active(c, from).await?;
    anyhow::ensure!(now == to, "{} is active instead of {}", nn(now), nn(to));
    Ok(())
}

pub(crate) async fn wait_other_active(c: &HaMiniCluster, not: usize) -> anyhow::Result<usize> {
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        if let Some(i) = c.active().filter(|&i| i != not) {
            return Ok(i);
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "no other NameNode became active within {DEADLINE:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn edits_replicate_and_a_crashed_active_is_replaced() -> anyhow::Result<()> {
    let (mut c, reserved) = start(3).await?;
    let first = c.wait_active(DEADLINE).await?;
    for (i, p) in reserved.iter().enumerate() {
        let nn = c.namenode(i).expect("running");
        assert_eq!(
            nn.rpc_addr().port(),
            p.port(),
            "nn{} serves its own address",
            i + 1
        );
    }
    let fs = FileSystem::connect_with(Some("hdfs://ns"), client_conf(&c)).await?;
    let one = data(1_500_000, 1);
    write_file(&fs, "/ha/one", &one).await?;
    fs.mkdirs("/ha/dir", None).await?;
    fs.rename("/ha/one", "/ha/dir/one").await?;
    let txid = wait_identical(&c, 1).await?;
    assert!(
        txid >= 5,
        "create, blocks, close, mkdir, rename: txid {txid}"
    );

    // The client configuration `rhdfs cluster --namenodes 3` writes is all a shell needs.
    let conf_dir = c.base_dir().join("client-conf");
    c.write_client_conf(&conf_dir)?;
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_rhdfs"))
        .args(["dfs", "-ls", "/ha/dir"])
        .env("HADOOP_CONF_DIR", &conf_dir)
        .env("RUST_LOG", "warn")
        .output()
        .await?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("/ha/dir/one"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Standbys answer StandbyException with Hadoop's message.
    for i in (0..3).filter(|&i| i != first) {
        let addr = c.namenode(i).expect("running").rpc_addr().to_string();
        match file_info_at(&addr).await {
            Err(IpcError::Remote {
                class_name,
                message,
            }) => {
                assert_eq!(class_name, rhdfs_ipc::exceptions::STANDBY);
                assert!(
                    message
                        .starts_with("Operation category READ is not supported in state standby"),
                    "{message}"
                );
            }
            other => panic!("nn{} answered {other:?}", i + 1),
        }
        assert_eq!(
            c.namenode(i).expect("running").namesystem().ha_role().get(),
            Role::Standby
        );
    }

    // At-most-once calls answered by the active before it dies.
    write_file(&fs, "/ha/app", &data(100_000, 3)).await?;
    fs.mkdirs("/ha/victim", None).await?;
    fs.mkdirs("/ha/r1", None).await?;
    let retrier = Retrier {
        client_id: RpcClient::new_client_id(),
        user: fs.user().to_string(),
    };
    let calls = at_most_once_calls();
    let first_addr = c.namenode(first).expect("running").rpc_addr().to_string();
    let mut answers = Vec::new();
    for call in &calls {
        answers.push(retrier.send(&first_addr, call, 0).await?);
    }

    // Its own edit log has the calls' records (synced), so after its restart they are
    // skipped, not replayed: their calls must be remembered all the same (below).
    let log = c
        .namenode(first)
        .expect("running")
        .namesystem()
        .durable()
        .expect("storage")
        .log()
        .clone();
    let want = c
        .namenode(first)
        .expect("running")
        .namesystem()
        .with_ns(|ns| ns.last_txid());
    wait_for("the calls' edits in its own log", DEADLINE, || async {
        Ok(log.last_txid() >= want)
    })
    .await?;
    tokio::task::spawn_blocking(move || log.sync_all()).await??;

    // The active dies; another takes over and the client goes on.
    c.crash_namenode(first).await;
    let second = wait_other_active(&c, first).await?;

    // The retries reach the new active: each gets the first answer.
    let second_addr = c.namenode(second).expect("running").rpc_addr().to_string();
    let created = CreateResponseProto::decode(&answers[0][..])?.fs;
    let retried = retrier.send(&second_addr, &calls[0], 1).await?;
    assert_eq!(
        CreateResponseProto::decode(&retried[..])?.fs,
        created,
        "create's retry gets the created file's status"
    );
    let appended = AppendResponseProto::decode(&answers[1][..])?;
    let retried =
        AppendResponseProto::decode(&retrier.send(&second_addr, &calls[1], 1).await?[..])?;
    assert_eq!(
        retried.stat, appended.stat,
        "append's retry: the same status"
    );
    assert_eq!(
        retried.block.map(|b| b.b),
        appended.block.map(|b| b.b),
        "append's retry: the same last block to continue"
    );
    for (i, what) in [(2, "delete"), (3, "rename")] {
        assert!(
            DeleteResponseProto::decode(&answers[i][..])?.result,
            "{what} ran"
        );
        let retried = retrier.send(&second_addr, &calls[i], 1).await?;
        assert!(
            RenameResponseProto::decode(&retried[..])?.result,
            "{what}'s retry answers true, as the first run did"
        );
    }
    // Run again as a new call, the delete finds nothing: the retry above was answered.
    let again = (calls[2].0, calls[2].1.clone(), 5);
    let fresh = retrier.send(&second_addr, &again, 0).await?;
    assert!(!DeleteResponseProto::decode(&fresh[..])?.result);
    assert_eq!(
        read_file(&fs, "/ha/dir/one").await?,
        one,
        "read after failover"
    );
    let two = data(700_000, 2);
    write_file(&fs, "/ha/two", &two).await?;
    assert_eq!(read_file(&fs, "/ha/two").await?, two);
    let after = wait_identical(&c, txid + 1).await?;

    // The crashed member restarts as a standby and catches up from the Raft log.
    c.restart_namenode(first).await?;
    wait_identical(&c, after).await?;
    assert_eq!(c.active(), Some(second));
    assert_eq!(
        c.namenode(first)
            .expect("restarted")
            .namesystem()
            .ha_role()
            .get(),
        Role::Standby
    );
    // The restarted member applied the Raft log again and remembered its calls: made
    // active, it answers the delete's retry with the first answer, not a second run.
    fail_over(&c, second, first).await?;
    let first_addr = c.namenode(first).expect("running").rpc_addr().to_string();
    let retried = retrier.send(&first_addr, &calls[2], 2).await?;
    assert!(
        DeleteResponseProto::decode(&retried[..])?.result,
        "a restarted member rebuilds the retry cache from the Raft log"
    );
    fs.close().await;
    c.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_partitioned_active_stops_acknowledging() -> anyhow::Result<()> {
    let (c, _reserved) = start(1).await?;
    let old = c.wait_active(DEADLINE).await?;
    let fs = FileSystem::connect_with(Some("hdfs://ns"), client_conf(&c)).await?;
    fs.mkdirs("/before", None).await?;
    let before = wait_identical(&c, 1).await?;

    // Cut the active's Raft traffic with every other member.
    let member = c.namenode(old).expect("running").ha_member().expect("HA");
    let peers: Vec<u64> = (1..=3).filter(|&id| id != member.id).collect();
    member.faults.cut_all(peers.iter().copied());

    // The majority elects another active; the old one stops being active.
    let new = wait_other_active(&c, old).await?;
    let deadline = tokio::time::Instant::now() + DEADLINE;
    while c
        .namenode(old)
        .expect("running")
        .namesystem()
        .ha_role()
        .get()
        == Role::Active
    {
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "the partitioned active never stepped down"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // A mutation sent straight to the old active is refused, not acknowledged.
    let old_addr = c.namenode(old).expect("running").rpc_addr().to_string();
    let direct =
        FileSystem::connect_with(Some(&format!("hdfs://{old_addr}")), Configuration::new()).await?;
    let refused = direct.mkdirs("/on-the-old-active", None).await;
    assert!(
        refused.is_err(),
        "the partitioned NameNode acknowledged a mkdir"
    );
    // Through the nameservice the client reaches the new active.
    fs.mkdirs("/after", None).await?;
    assert!(fs.exists("/after").await?);
    assert!(!fs.exists("/on-the-old-active").await?);

    // Healed, the old active follows as a standby and holds the same namespace.
    member.faults.heal_all();
    let txid = wait_identical(&c, before + 1).await?;
    assert!(txid > before);
    assert_eq!(c.active(), Some(new));
    direct.close().await;
    fs.close().await;
    c.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_lost_member_is_bootstrapped_from_another() -> anyhow::Result<()> {
    use rhdfs_namenode::ha::bootstrap::bootstrap_standby;
    let (mut c, _reserved) = start(1).await?;
    let active = c.wait_active(DEADLINE).await?;
    let fs = FileSystem::connect_with(Some("hdfs://ns"), client_conf(&c)).await?;
    fs.mkdirs("/boot/a", None).await?;
    write_file(&fs, "/boot/one", &data(10_000, 1)).await?;
    let before = wait_identical(&c, 1).await?;
    // Every member checkpoints, so the image a new member takes holds edits of its own.
    for i in 0..3 {
        let nn = c.namenode(i).expect("running");
        let durable = nn.namesystem().durable().expect("storage").clone();
        durable.checkpoint().await?;
    }
    // Each image is a Raft snapshot; the victim's is written before it crashes (an
    // in-process crash does not stop a blocking thread writing into its directories).
    for i in 0..3 {
        wait_raft(&c, i, "a snapshot", |m| m.snapshot.is_some()).await?;
    }
    let victim = (active + 1) % 3;
    let mut conf = c.namenode_conf(victim).expect("configured").clone();
    for i in (0..3).filter(|&i| i != victim) {
        let http = c.namenode(i).expect("running").http_addr().to_string();
        conf.set(&format!("dfs.namenode.http-address.ns.nn{}", i + 1), http);
    }
    c.crash_namenode(victim).await;
    let refused = bootstrap_standby(&conf, false).await;
    assert_eq!(
        refused.as_ref().err().map(|e| e.exit_code()),
        Some(5),
        "a member's directories are not re-formatted without -force: {refused:?}"
    );
    let name_dir = conf
        .get("dfs.namenode.name.dir")
        .expect("name dir")
        .to_string();
    std::fs::remove_dir_all(&name_dir)?;
    let b = bootstrap_standby(&conf, false).await?;
    assert!(
        b.image_txid >= before,
        "the newest image ({}) holds the edits so far ({before})",
        b.image_txid
    );
    assert_eq!(b.own, format!("nn{}", victim + 1));
    // Edits while it is down come to it through the Raft log.
    fs.mkdirs("/boot/b", None).await?;
    write_file(&fs, "/boot/two", &data(5_000, 2)).await?;
    let after = c
        .namenode(active)
        .expect("running")
        .namesystem()
        .with_ns(|ns| ns.last_txid());
    c.restart_namenode(victim).await?;
    wait_identical(&c, after).await?;
    fs.close().await;
    c.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn haadmin_moves_the_active_role() -> anyhow::Result<()> {
    let (c, _reserved) = start(1).await?;
    let conf = client_conf(&c);
    let first = c.wait_active(DEADLINE).await?;
    let fs = FileSystem::connect_with(Some("hdfs://ns"), conf.clone()).await?;
    fs.mkdirs("/manual/a", None).await?;
    let nn = |i: usize| format!("nn{}", i + 1);

    let (code, _, err) = haadmin(&conf, &["-failover", &nn((first + 1) % 3), &nn(first)]).await?;
    assert_eq!(code, 255, "a failover to the active is refused");
    assert!(err.contains("Can't failover to an active service"), "{err}");

    let target = (first + 1) % 3;
    let (code, out, err) = haadmin(&conf, &["-failover", &nn(first), &nn(target)]).await?;
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        format!("Failover from {} to {} successful\n", nn(first), nn(target))
    );
    assert_eq!(wait_other_active(&c, first).await?, target);
    let (code, out, _) = haadmin(&conf, &["-getServiceState", &nn(target)]).await?;
    assert_eq!((code, out.as_str()), (0, "active\n"));
    fs.mkdirs("/manual/b", None).await?;

    // The active steps down for the most caught-up standby.
    let (code, _, err) = haadmin(&conf, &["-transitionToStandby", &nn(target)]).await?;
    assert_eq!(code, 0, "{err}");
    let next = wait_other_active(&c, target).await?;
    let (code, out, _) = haadmin(&conf, &["-getServiceState", &nn(target)]).await?;
    assert_eq!((code, out.as_str()), (0, "standby\n"));
    fs.mkdirs("/manual/c", None).await?;
    let txid = c
        .namenode(next)
        .expect("running")
        .namesystem()
        .with_ns(|ns| ns.last_txid());
    wait_identical(&c, txid).await?;
    for d in ["/manual/a", "/manual/b", "/manual/c"] {
        assert!(fs.get_file_info(d).await?.is_some(), "{d}");
    }
    fs.close().await;
    c.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_standby_not_chosen_holds_its_elections_through_a_hand_over() -> anyhow::Result<()> {
    let (c, _reserved) = start(1).await?;
    let conf = client_conf(&c);
    let first = c.wait_active(DEADLINE).await?;
    let fs = FileSystem::connect_with(Some("hdfs://ns"), conf.clone()).await?;
    fs.mkdirs("/handover/a", None).await?;
    let txid = c
        .namenode(first)
        .expect("running")
        .namesystem()
        .with_ns(|ns| ns.last_txid());
    wait_identical(&c, txid).await?;
    let (target, third) = ((first + 1) % 3, (first + 2) % 3);
    let nn = |i: usize| format!("nn{}", i + 1);
    let member = |i: usize| {
        c.namenode(i)
            .and_then(|nn| nn.ha_member())
            .ok_or_else(|| anyhow::anyhow!("nn{} has no Raft member", i + 1))
    };
    let role = |i: usize| c.namenode(i).expect("running").namesystem().ha_role();
    // Whether the standby that is not chosen ever leads.
    let mut metrics = member(third)?.raft.metrics();
    let third_led = tokio::spawn(async move {
        metrics
            .wait_for(|m| m.state == openraft::ServerState::Leader)
            .await
            .is_ok()
    });
    // The chosen member is slow to campaign: its Raft traffic is cut.
    let chosen = member(target)?;
    let peers: Vec<u64> = (1..=3).filter(|p| *p != chosen.id).collect();
    chosen.faults.cut_all(peers.iter().copied());
    let failover = {
        let (conf, from, to) = (conf.clone(), nn(first), nn(target));
        tokio::spawn(async move { haadmin(&conf, &["-failover", &from, &to]).await })
    };
    wait_for(
        "the leader yielding and the other standby holding",
        DEADLINE,
        || async { Ok(role(first).yielding() && role(third).holding()) },
    )
    .await?;
    // Past the other standby's own election deadline once the heartbeats stopped (leader
    // lease + longest election timeout: 2 × 0.9 s with EXTRA's 600 ms): without the hold it
    // campaigns and, the leader having yielded, wins.
    tokio::time::sleep(Duration::from_secs(3)).await;
    chosen.faults.heal_all();
    let (code, out, err) = failover.await??;
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        format!("Failover from {} to {} successful\n", nn(first), nn(target))
    );
    assert_eq!(wait_other_active(&c, first).await?, target);
    assert!(
        !third_led.is_finished(),
        "the standby that was not chosen led during the hand-over"
    );
    third_led.abort();
    wait_for(
        "the other standby's elections resumed",
        DEADLINE,
        || async { Ok(!role(third).holding()) },
    )
    .await?;
    fs.mkdirs("/handover/b", None).await?;
    fs.close().await;
    c.shutdown().await;
    Ok(())
}

/// Waits until `f` holds on member `i`'s Raft metrics.
pub(crate) async fn wait_raft(
    c: &HaMiniCluster,
    i: usize,
    what: &str,
    f: impl Fn(&openraft::RaftMetrics<u64, openraft::BasicNode>) -> bool,
) -> anyhow::Result<openraft::RaftMetrics<u64, openraft::BasicNode>> {
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        let m = c
            .namenode(i)
            .and_then(|nn| nn.ha_member())
            .map(|m| m.raft.metrics().borrow().clone())
            .ok_or_else(|| anyhow::anyhow!("nn{} is not running", i + 1))?;
        if f(&m) {
            return Ok(m);
        }
        if tokio::time::Instant::now() >= deadline {
            anyhow::bail!("nn{}: {what} not reached in {DEADLINE:?}: {m:?}", i + 1);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_member_behind_the_compacted_log_catches_up_from_a_snapshot() -> anyhow::Result<()> {
    let (mut c, _reserved) = start_with(3, &[("rhdfs.ha.raft.log.retained.entries", "4")]).await?;
    let active = c.wait_active(DEADLINE).await?;
    let fs = FileSystem::connect_with(Some("hdfs://ns"), client_conf(&c)).await?;
    let keep = data(1_500_000, 1);
    write_file(&fs, "/snap/keep", &keep).await?;
    write_file(&fs, "/snap/gone", &data(300_000, 2)).await?;
    let before = wait_identical(&c, 1).await?;
    let victim = (active + 1) % 3;
    let victim_last = wait_raft(&c, victim, "applied", |m| m.last_applied.is_some())
        .await?
        .last_log_index
        .unwrap_or(0);
    c.crash_namenode(victim).await;

    // While it is down: a delete, a new file, and enough entries to purge past it.
    assert!(fs.delete("/snap/gone", false).await?);
    let fresh = data(1_200_000, 3);
    write_file(&fs, "/snap/new", &fresh).await?;
    for i in 0..40 {
        fs.mkdirs(&format!("/snap/d{i}"), None).await?;
    }
    // The running members checkpoint; each image saved is a Raft snapshot, and the log is
    // purged behind it.
    for i in (0..3).filter(|&i| i != victim) {
        let durable = c
            .namenode(i)
            .expect("running")
            .namesystem()
            .durable()
            .expect("storage")
            .clone();
        durable.checkpoint().await?;
    }
    let purged = wait_raft(&c, active, "a snapshot and a purge past the victim", |m| {
        m.snapshot.is_some_and(|s| s.index > victim_last)
            && m.purged.is_some_and(|p| p.index > victim_last)
    })
    .await?;
    let snap_index = purged.snapshot.map_or(0, |s| s.index);

    // Back, it gets the active's image (its log no longer has what the victim lacks).
    c.restart_namenode(victim).await?;
    let txid = c
        .namenode(active)
        .expect("running")
        .namesystem()
        .with_ns(|ns| ns.last_txid());
    assert!(txid > before);
    wait_identical(&c, txid).await?;
    let m = wait_raft(&c, victim, "the snapshot installed", |m| {
        m.snapshot.is_some_and(|s| s.index >= snap_index)
    })
    .await?;
    assert!(
        m.purged
            .is_some_and(|p| p.index >= snap_index.saturating_sub(4)),
        "the victim's own log starts after the snapshot: {m:?}"
    );
    // Its block map follows the installed namespace: the deleted file's blocks are gone,
    // and every block of the namespace gets its replicas.
    let victim_fs = c.namenode(victim).expect("running").namesystem().clone();
    let ids: Vec<u64> =
        victim_fs.with_ns(|ns| ns.loaded_blocks().iter().map(|b| b.block.id).collect());
    assert!(
        ids.len() >= 3,
        "blocks of /snap/keep and /snap/new: {ids:?}"
    );
    let bm = victim_fs.block_manager().clone();
    wait_for("replicas in the victim's block map", DEADLINE, || async {
        Ok(ids.iter().all(|&id| !bm.locations(id).is_empty()))
    })
    .await?;
    assert_eq!(
        bm.fs_stats().complete_blocks as usize,
        ids.len(),
        "no block of the deleted file is left"
    );

    // Made active (once out of start-up safe mode), it serves what was written while it
    // was down.
    fail_over(&c, active, victim).await?;
    assert_eq!(read_file(&fs, "/snap/keep").await?, keep);
    assert_eq!(read_file(&fs, "/snap/new").await?, fresh);
    assert!(fs.get_file_info("/snap/gone").await?.is_none());
    fs.mkdirs("/snap/after", None).await?;
    fs.close().await;
    c.shutdown().await;
    Ok(())
}

/// The block map of member `i`: the state of the last block of the namespace's only file
/// with blocks, once `want` holds for it.
async fn wait_last_block(
    c: &HaMiniCluster,
    i: usize,
    what: &str,
    want: impl Fn(&rhdfs_blockmanager::Block, rhdfs_blockmanager::BlockUcState) -> bool,
) -> anyhow::Result<()> {
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        let fs = c.namenode(i).expect("running").namesystem().clone();
        let last = fs.with_ns(|ns| ns.loaded_blocks().iter().map(|b| b.block.id).max());
        let state = last.and_then(|id| fs.block_manager().get_block(id));
        if state.is_some_and(|(b, s)| want(&b, s)) {
            return Ok(());
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "nn{}: the last block is not {what}: {state:?}",
            i + 1
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn standbys_follow_an_append_and_a_new_active_finishes_it() -> anyhow::Result<()> {
    use rhdfs_blockmanager::BlockUcState;
    let (mut c, _reserved) = start(3).await?;
    let first = c.wait_active(DEADLINE).await?;
    let fs = FileSystem::connect_with(Some("hdfs://ns"), client_conf(&c)).await?;
    let head = data(300_000, 1);
    write_file(&fs, "/append/f", &head).await?;
    let standbys: Vec<usize> = (0..3).filter(|&i| i != first).collect();
    for &i in &standbys {
        wait_last_block(&c, i, "complete", |_, s| s == BlockUcState::Complete).await?;
    }

    // The append re-opens the partial last block at a new stamp: each standby's block map
    // has it under construction again, at the stamp the pipeline update logged.
    let mut w = fs.append("/append/f").await?;
    let more = data(200_000, 2);
    w.write(&more).await?;
    w.hflush().await?;
    let gs = {
        let nn = c.namenode(first).expect("running").namesystem().clone();
        let id = nn
            .with_ns(|ns| ns.loaded_blocks().iter().map(|b| b.block.id).max())
            .expect("a block");
        nn.block_manager().get_block(id).expect("known").0.gs
    };
    for &i in &standbys {
        wait_last_block(&c, i, "re-opened at the new stamp", |b, s| {
            s == BlockUcState::UnderConstruction && b.gs == gs
        })
        .await?;
    }

    // The active dies mid-append; the writer finishes through the new active.
    c.crash_namenode(first).await;
    let second = wait_other_active(&c, first).await?;
    let tail = data(100_000, 3);
    w.write(&tail).await?;
    w.close().await?;
    wait_last_block(&c, second, "complete", |_, s| s == BlockUcState::Complete).await?;
    let whole: Vec<u8> = [&head[..], &more[..], &tail[..]].concat();
    assert_eq!(read_file(&fs, "/append/f").await?, whole);
    fs.close().await;
    c.shutdown().await;
    Ok(())
}
