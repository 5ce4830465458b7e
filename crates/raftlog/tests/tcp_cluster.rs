//! Three openraft members whose Raft traffic goes over rhdfs's IPC: each member is an
//! `RpcServer` on 127.0.0.1 routing `org.apache.rhdfs.raft.RaftProtocol` to its
//! `RaftService` (through a `ProtocolRouter`, as a NameNode's port), its network an
//! `IpcNetwork`, its log a `RaftLogStore` and its state an `AppStateMachine` (kv app) in a
//! temporary directory. Writes through the leader reach every member; a stopped leader is
//! replaced and, restarted on its port, catches up (by snapshot over the wire); a leader cut
//! off by the fault hook acknowledges nothing while the others elect a leader and commit,
//! and converges with them once healed. The Raft port answers malformed calls with an
//! IOException and serves nothing without an attached `Raft`.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use openraft::error::{ClientWriteError, RaftError};
use openraft::{BasicNode, Config, ServerState, SnapshotPolicy};
use rhdfs_editlog::fs::LocalFs;
use rhdfs_ipc::{
    CallContext, ProtocolRouter, RpcClient, RpcError, RpcServer, RpcService, ServerConfig,
};
use rhdfs_proto::raft::VoteRequestProto;
use rhdfs_raftlog::kv::{KvApp, KvCommand, KvConfig};
use rhdfs_raftlog::net::{Faults, IpcNetwork, NOT_SERVING, RAFT_PROTOCOL, RaftService};
use rhdfs_raftlog::{AppStateMachine, RaftLogStore};
use tempfile::TempDir;

use crate::common::{START_APART, options};

type Raft = openraft::Raft<KvConfig>;
type Sm = AppStateMachine<KvConfig, KvApp>;

/// Generous: the test machine is small and busy.
const DEADLINE: Duration = Duration::from_secs(20);
const WAIT: Option<Duration> = Some(DEADLINE);

struct Member {
    id: u64,
    addr: SocketAddr,
    raft: Raft,
    sm: Sm,
    service: Arc<RaftService<KvConfig>>,
    server: RpcServer,
    faults: Faults,
}

/// Short timeouts; a snapshot every `snapshot_every` entries, the log purged right behind
/// it (so a member that was down catches up by snapshot).
/// Another protocol on the members' ports, as a NameNode's ClientProtocol beside Raft.
const OTHER_PROTOCOL: &str = "org.apache.rhdfs.test.EchoProtocol";

struct Echo;

#[async_trait::async_trait]
impl RpcService for Echo {
    async fn call(&self, _ctx: CallContext, body: Bytes) -> Result<Bytes, RpcError> {
        Ok(body)
    }
}

fn config(snapshot_every: u64) -> Arc<Config> {
    let c = Config {
        heartbeat_interval: 100,
        election_timeout_min: 500,
        election_timeout_max: 1000,
        snapshot_policy: SnapshotPolicy::LogsSinceLast(snapshot_every),
        max_in_snapshot_log_to_keep: 0,
        purge_batch_size: 1,
        ..Config::default()
    };
    Arc::new(c.validate().expect("valid config"))
}

/// Binds `addr`; a restarted member takes its old port again (retried while the old
/// listener's close is still settling).
async fn bind(addr: SocketAddr, router: ProtocolRouter) -> RpcServer {
    let started = Instant::now();
    let svc = Arc::new(router);
    loop {
        match RpcServer::bind(addr, svc.clone(), ServerConfig::default()).await {
            Ok(s) => return s,
            Err(e) if started.elapsed() < DEADLINE => {
                eprintln!("bind {addr}: {e}; retrying");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("bind {addr}: {e}"),
        }
    }
}

async fn start(root: &Path, id: u64, addr: SocketAddr, snapshot_every: u64) -> Member {
    let faults = Faults::new();
    let service = Arc::new(RaftService::<KvConfig>::new(faults.clone()));
    let router = ProtocolRouter::new()
        .route(RAFT_PROTOCOL, service.clone())
        .route(OTHER_PROTOCOL, Arc::new(Echo));
    let server = bind(addr, router).await;
    let dir = root.join(format!("nn{id}"));
    let store = RaftLogStore::open_async(&dir.join("log"), options())
        .await
        .expect("open log");
    let sm_dir = dir.join("sm");
    let sm =
        tokio::task::spawn_blocking(move || Sm::open(KvApp::default(), &sm_dir, Arc::new(LocalFs)))
            .await
            .expect("task")
            .expect("open state machine");
    let network = IpcNetwork::new(id)
        .with_faults(faults.clone())
        .with_backoff(Duration::from_millis(100));
    let raft = Raft::new(id, config(snapshot_every), network, store, sm.clone())
        .await
        .expect("raft");
    service.attach(raft.clone());
    Member {
        id,
        addr: server.local_addr(),
        raft,
        sm,
        service,
        server,
        faults,
    }
}

async fn stop(m: Member) {
    m.service.detach();
    m.raft.shutdown().await.expect("shutdown");
    m.server.shutdown().await;
}

/// Three members on fresh ports, initialised with each other's addresses.
async fn cluster(root: &Path, snapshot_every: u64) -> BTreeMap<u64, Member> {
    let any: SocketAddr = "127.0.0.1:0".parse().expect("address");
    let mut members = BTreeMap::new();
    for id in 1..=3 {
        if id > 1 {
            tokio::time::sleep(START_APART).await;
        }
        members.insert(id, start(root, id, any, snapshot_every).await);
    }
    let nodes: BTreeMap<u64, BasicNode> = members
        .values()
        .map(|m| (m.id, BasicNode::new(m.addr.to_string())))
        .collect();
    members[&1]
        .raft
        .initialize(nodes)
        .await
        .expect("initialize");
    members
}

/// The member of `among` that is leader in the eyes of itself (of two, a deposed one that
/// has not heard yet and the new one, the one of the higher term), polled until there is one.
async fn leader_among(members: &BTreeMap<u64, Member>, among: &[u64]) -> u64 {
    let started = Instant::now();
    loop {
        let leader = among
            .iter()
            .map(|id| (*id, members[id].raft.metrics().borrow().clone()))
            .filter(|(id, m)| m.state == ServerState::Leader && m.current_leader == Some(*id))
            .max_by_key(|(_, m)| m.current_term);
        if let Some((id, _)) = leader {
            return id;
        }
        assert!(
            started.elapsed() < DEADLINE,
            "no leader among {among:?} after {DEADLINE:?}: {}",
            states(members)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Each member's Raft state, term, vote, last log index and leader, for a failure message.
fn states(members: &BTreeMap<u64, Member>) -> String {
    members
        .iter()
        .map(|(id, m)| {
            let x = m.raft.metrics().borrow().clone();
            format!(
                "{id}: {:?} term {} vote {} last log {:?} leader {:?}",
                x.state, x.current_term, x.vote, x.last_log_index, x.current_leader
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Writes `key = value` through the leader among `among`, again if leadership moved
/// meanwhile (the kv write is idempotent); the log index it was committed at.
async fn write(members: &BTreeMap<u64, Member>, among: &[u64], key: &str, value: &str) -> u64 {
    let started = Instant::now();
    loop {
        let leader = leader_among(members, among).await;
        let cmd = KvCommand {
            key: key.to_owned(),
            value: value.to_owned(),
        };
        let outcome = tokio::time::timeout(
            Duration::from_secs(5),
            members[&leader].raft.client_write(cmd),
        )
        .await;
        match outcome {
            Ok(Ok(resp)) => return resp.log_id.index,
            other => {
                assert!(
                    started.elapsed() < DEADLINE,
                    "write {key} through {leader} failed: {other:?}"
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
}

async fn write_range(
    members: &BTreeMap<u64, Member>,
    among: &[u64],
    range: std::ops::Range<u64>,
) -> u64 {
    let mut last = 0;
    for i in range {
        last = write(
            members,
            among,
            &format!("file{}", i % 10),
            &format!("edit {i}"),
        )
        .await;
    }
    last
}

async fn applied(members: &BTreeMap<u64, Member>, among: &[u64], index: u64) {
    for id in among {
        members[id]
            .raft
            .wait(WAIT)
            .applied_index_at_least(Some(index), "applied")
            .await
            .unwrap_or_else(|e| panic!("member {id} did not apply {index}: {e}"));
    }
}

fn map(m: &Member) -> BTreeMap<String, String> {
    m.sm.with_app(|a| a.map.clone())
}

fn assert_same(members: &BTreeMap<u64, Member>) {
    let maps: Vec<_> = members.values().map(map).collect();
    assert!(
        maps.iter().all(|x| *x == maps[0]),
        "members differ: {maps:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ipc_members_replicate_fail_over_and_catch_up_by_snapshot() {
    let tmp = TempDir::new().expect("tempdir");
    let mut members = cluster(tmp.path(), 20).await;
    let all = [1, 2, 3];
    let last = write_range(&members, &all, 0..30).await;
    applied(&members, &all, last).await;
    assert_same(&members);
    assert_eq!(map(&members[&1]).len(), 10);
    // The port serves its other protocol beside Raft.
    let other = RpcClient::connect(&members[&1].addr.to_string(), OTHER_PROTOCOL, "u")
        .await
        .expect("connect");
    let echo = other.call_raw("echo", b"beside raft").await.expect("echo");
    assert_eq!(&echo[..], b"beside raft");

    // The leader stops, server and all; the two others elect a new one and go on.
    let old = leader_among(&members, &all).await;
    let down_at = members[&old]
        .raft
        .metrics()
        .borrow()
        .last_applied
        .map_or(0, |l| l.index);
    let addr = members[&old].addr;
    stop(members.remove(&old).expect("leader")).await;
    let rest: Vec<u64> = members.keys().copied().collect();
    let last = write_range(&members, &rest, 30..60).await;
    applied(&members, &rest, last).await;

    // It restarts on its port and catches up; what it lacks was purged behind the others'
    // snapshots, so it comes as an installSnapshot.
    members.insert(old, start(tmp.path(), old, addr, 20).await);
    applied(&members, &all, last).await;
    assert_same(&members);
    assert_eq!(map(&members[&old])["file9"], "edit 59");
    let replayed = members[&old].sm.with_app(|a| a.applied.clone());
    assert!(
        !replayed.contains(&(down_at + 1)),
        "member {old} applied entry {} one by one, no snapshot came: {replayed:?}",
        down_at + 1
    );

    // And it takes part again: writes reach all three.
    let last = write_range(&members, &all, 60..70).await;
    applied(&members, &all, last).await;
    assert_same(&members);
    for m in members.into_values() {
        stop(m).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partitioned_leader_acknowledges_nothing_and_converges_when_healed() {
    let tmp = TempDir::new().expect("tempdir");
    // No snapshot here: the cut-off leader catches up by log, its own entries replaced.
    let members = cluster(tmp.path(), 1000).await;
    let all = [1, 2, 3];
    let last = write_range(&members, &all, 0..10).await;
    applied(&members, &all, last).await;

    // The leader's Raft traffic is cut, both ways; it still takes itself for the leader.
    let old = leader_among(&members, &all).await;
    let rest: Vec<u64> = all.iter().copied().filter(|id| *id != old).collect();
    members[&old].faults.cut_all(rest.iter().copied());
    let cut_off = members[&old].raft.clone();
    let pending = tokio::spawn(async move {
        cut_off
            .client_write(KvCommand {
                key: "partitioned".into(),
                value: "before the election".into(),
            })
            .await
    });

    // The majority elects another leader and commits.
    let new = leader_among(&members, &rest).await;
    assert_ne!(new, old);
    let last = write_range(&members, &rest, 10..20).await;
    applied(&members, &rest, last).await;

    // Nothing the cut-off leader was asked to write is acknowledged: not what it got before
    // the election, not what it gets after.
    let after = tokio::time::timeout(
        Duration::from_secs(1),
        members[&old].raft.client_write(KvCommand {
            key: "partitioned".into(),
            value: "after the election".into(),
        }),
    )
    .await;
    assert!(
        !matches!(after, Ok(Ok(_))),
        "a cut-off leader acknowledged a write: {after:?}"
    );
    let pending = if pending.is_finished() {
        let r = pending.await.expect("task");
        assert!(r.is_err(), "a cut-off leader acknowledged a write: {r:?}");
        None
    } else {
        Some(pending)
    };
    assert!(!map(&members[&old]).contains_key("partitioned"));
    // The serving side refuses a cut-off peer's calls too.
    let client = RpcClient::connect(&members[&old].addr.to_string(), RAFT_PROTOCOL, "raft")
        .await
        .expect("connect");
    let mut probe = VoteRequestProto::default();
    probe.vote.node_id = new;
    let refused = client
        .call::<_, rhdfs_proto::raft::VoteResponseProto>("requestVote", &probe)
        .await
        .expect_err("a call from a cut-off peer is refused");
    assert_eq!(refused.remote_class(), Some(NOT_SERVING));

    // Healed, it learns of the new term, drops what it alone had and catches up.
    members[&old].faults.heal_all();
    let last = write_range(&members, &all, 20..25).await;
    applied(&members, &all, last).await;
    assert_same(&members);
    let m = map(&members[&old]);
    assert!(!m.contains_key("partitioned"), "uncommitted write applied");
    assert_eq!(m["file4"], "edit 24");
    // The write it held when cut off fails once its entry is replaced: the writer is sent
    // to the new leader.
    if let Some(pending) = pending {
        let r = tokio::time::timeout(DEADLINE, pending)
            .await
            .expect("the cut-off leader's write is answered")
            .expect("task");
        match r {
            Err(RaftError::APIError(ClientWriteError::ForwardToLeader(f))) => {
                assert!(f.leader_id.is_some_and(|l| l != old), "{f:?}")
            }
            other => panic!("a cut-off leader answered a write with {other:?}"),
        }
    }
    for m in members.into_values() {
        stop(m).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raft_port_refuses_malformed_and_unattached_calls() {
    use prost::Message;
    use rhdfs_proto::raft::{AppendEntriesRequestProto, RaftEntryProto, RaftLogIdProto};

    let tmp = TempDir::new().expect("tempdir");
    let any: SocketAddr = "127.0.0.1:0".parse().expect("address");
    let m = start(tmp.path(), 1, any, 1000).await;
    let client = RpcClient::connect(&m.addr.to_string(), RAFT_PROTOCOL, "raft")
        .await
        .expect("connect");
    let class = |r: Result<Bytes, rhdfs_ipc::IpcError>| {
        r.expect_err("refused")
            .remote_class()
            .map(str::to_owned)
            .expect("a remote exception")
    };
    // Bytes that are no message, entries that do not follow the previous log id, an entry
    // payload cut short: each an IOException, and the member serves on.
    let garbage = client.call_raw("appendEntries", &[0xff; 7]).await;
    assert_eq!(class(garbage), "java.io.IOException");
    let entry = |index: u64, payload: &'static [u8]| RaftEntryProto {
        index,
        payload: Bytes::from_static(payload),
    };
    let mut req = AppendEntriesRequestProto {
        prev_log_id: Some(RaftLogIdProto {
            term: 1,
            node_id: 2,
            index: 4,
        }),
        entries: vec![entry(6, &[0; 17])],
        ..Default::default()
    };
    req.vote.node_id = 2;
    let gap = client.call_raw("appendEntries", &req.encode_to_vec()).await;
    assert_eq!(class(gap), "java.io.IOException");
    req.entries = vec![entry(5, &[0; 9])];
    let short = client.call_raw("appendEntries", &req.encode_to_vec()).await;
    assert_eq!(class(short), "java.io.IOException");
    let unknown = client.call_raw("transferLeader", &[]).await;
    assert_eq!(class(unknown), rhdfs_ipc::exceptions::NO_SUCH_METHOD);
    // A well-formed request is answered.
    let vote = client
        .call_raw("requestVote", &VoteRequestProto::default().encode_to_vec())
        .await
        .expect("answered");
    rhdfs_proto::raft::VoteResponseProto::decode(vote).expect("decodes");
    // Detached (the member stopping), it serves nothing.
    m.service.detach();
    let detached = client
        .call_raw("requestVote", &VoteRequestProto::default().encode_to_vec())
        .await;
    assert_eq!(class(detached), NOT_SERVING);
    m.raft.shutdown().await.expect("shutdown");
    m.server.shutdown().await;
}
