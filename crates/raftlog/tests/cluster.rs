//! Three openraft members in one process over an in-memory network, each with its log in
//! a `RaftLogStore` and its state in an `AppStateMachine` on a temporary directory: writes
//! through the leader reach every member; after the leader stops, the others elect a new
//! one and go on; the stopped member restarts from its files (log, vote, snapshot) and
//! catches up.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use openraft::error::{
    InstallSnapshotError, NetworkError, RPCError, RaftError, RemoteError, Unreachable,
};
use openraft::network::{RPCOption, RaftNetwork, RaftNetworkFactory};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, InstallSnapshotRequest, InstallSnapshotResponse,
    VoteRequest, VoteResponse,
};
use openraft::{BasicNode, Config, SnapshotPolicy};
use parking_lot::Mutex;
use rhdfs_editlog::fs::LocalFs;
use rhdfs_raftlog::kv::{KvApp, KvCommand, KvConfig};
use rhdfs_raftlog::{AppStateMachine, RaftLogStore};
use tempfile::TempDir;

use rhdfs_raftlog::split_vote::{SplitSeen, SplitVotes, break_split_votes};

use crate::common::{START_APART, options};

type Raft = openraft::Raft<KvConfig>;
type Sm = AppStateMachine<KvConfig, KvApp>;

/// Delivers each RPC straight to the target's `Raft`, or fails as unreachable; notes the
/// split votes of the member it was given to.
#[derive(Clone, Default)]
struct Router {
    nodes: Arc<Mutex<BTreeMap<u64, Raft>>>,
    split: SplitSeen,
}

struct Conn {
    target: u64,
    router: Router,
}

impl Conn {
    fn raft<E: std::error::Error>(&self) -> Result<Raft, Box<RPCError<u64, BasicNode, E>>> {
        self.router
            .nodes
            .lock()
            .get(&self.target)
            .cloned()
            .ok_or_else(|| {
                Box::new(RPCError::Unreachable(Unreachable::new(
                    &std::io::Error::other("member down"),
                )))
            })
    }
}

impl RaftNetworkFactory<KvConfig> for Router {
    type Network = Conn;
    async fn new_client(&mut self, target: u64, _node: &BasicNode) -> Conn {
        Conn {
            target,
            router: self.clone(),
        }
    }
}

impl RaftNetwork<KvConfig> for Conn {
    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<KvConfig>,
        _option: RPCOption,
    ) -> Result<AppendEntriesResponse<u64>, RPCError<u64, BasicNode, RaftError<u64>>> {
        let raft = self.raft().map_err(|e| *e)?;
        raft.append_entries(rpc)
            .await
            .map_err(|e| RPCError::RemoteError(RemoteError::new(self.target, e)))
    }

    async fn install_snapshot(
        &mut self,
        rpc: InstallSnapshotRequest<KvConfig>,
        _option: RPCOption,
    ) -> Result<
        InstallSnapshotResponse<u64>,
        RPCError<u64, BasicNode, RaftError<u64, InstallSnapshotError>>,
    > {
        let raft = self.raft().map_err(|e| *e)?;
        raft.install_snapshot(rpc)
            .await
            .map_err(|e| RPCError::RemoteError(RemoteError::new(self.target, e)))
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<u64>,
        _option: RPCOption,
    ) -> Result<VoteResponse<u64>, RPCError<u64, BasicNode, RaftError<u64>>> {
        let raft = self.raft().map_err(|e| *e)?;
        let resp = raft.vote(rpc.clone()).await.map_err(|e| {
            RPCError::Network(NetworkError::new(&std::io::Error::other(e.to_string())))
        })?;
        self.router.split.note(&rpc, &resp);
        Ok(resp)
    }
}

struct Member {
    raft: Raft,
    sm: Sm,
    split: SplitSeen,
}

fn config() -> Arc<Config> {
    let c = Config {
        heartbeat_interval: 50,
        election_timeout_min: 300,
        election_timeout_max: 600,
        // Snapshots and purges happen during the test.
        snapshot_policy: SnapshotPolicy::LogsSinceLast(20),
        max_in_snapshot_log_to_keep: 5,
        purge_batch_size: 1,
        ..Config::default()
    };
    Arc::new(c.validate().expect("valid config"))
}

fn member_dir(root: &Path, id: u64) -> PathBuf {
    root.join(format!("nn{id}"))
}

async fn start(root: &Path, id: u64, router: &Router) -> Member {
    start_with(root, id, router, config(), None).await
}

/// Starts member `id`; with `together`, its Raft (and so its tick timer) is created only
/// once every member waiting on the barrier has opened its files.
async fn start_with(
    root: &Path,
    id: u64,
    router: &Router,
    config: Arc<Config>,
    together: Option<&tokio::sync::Barrier>,
) -> Member {
    let dir = member_dir(root, id);
    let store = RaftLogStore::open_async(&dir.join("log"), options())
        .await
        .expect("open log");
    let sm_dir = dir.join("sm");
    let sm =
        tokio::task::spawn_blocking(move || Sm::open(KvApp::default(), &sm_dir, Arc::new(LocalFs)))
            .await
            .expect("task")
            .expect("open state machine");
    if let Some(b) = together {
        b.wait().await;
    }
    let network = Router {
        nodes: router.nodes.clone(),
        split: SplitSeen::default(),
    };
    let split = network.split.clone();
    let raft = Raft::new(id, config, network, store, sm.clone())
        .await
        .expect("raft");
    router.nodes.lock().insert(id, raft.clone());
    Member { raft, sm, split }
}

const WAIT: Option<Duration> = Some(Duration::from_secs(20));

/// Member 1 proposes the membership of members 1 to 3.
async fn initialize(members: &BTreeMap<u64, Member>) {
    let nodes: BTreeMap<u64, BasicNode> = (1..=3)
        .map(|id| (id, BasicNode::new(format!("nn{id}:8020"))))
        .collect();
    members[&1]
        .raft
        .initialize(nodes)
        .await
        .expect("initialize");
}

async fn leader_of(members: &BTreeMap<u64, Member>) -> u64 {
    let any = members.values().next().expect("a member");
    let m = any
        .raft
        .wait(WAIT)
        .metrics(
            |m| m.current_leader.is_some_and(|l| members.contains_key(&l)),
            "a live leader",
        )
        .await
        .expect("leader elected");
    m.current_leader.expect("leader")
}

async fn write(members: &BTreeMap<u64, Member>, range: std::ops::Range<u64>) -> u64 {
    let mut last = 0;
    for i in range {
        let leader = leader_of(members).await;
        let resp = members[&leader]
            .raft
            .client_write(KvCommand {
                key: format!("file{}", i % 10),
                value: format!("edit {i}"),
            })
            .await
            .expect("write through the leader");
        last = resp.log_id.index;
    }
    last
}

async fn all_applied(members: &BTreeMap<u64, Member>, index: u64) {
    for (id, m) in members {
        m.raft
            .wait(WAIT)
            .applied_index_at_least(Some(index), "applied")
            .await
            .unwrap_or_else(|e| panic!("member {id} did not apply {index}: {e}"));
    }
}

fn maps(members: &BTreeMap<u64, Member>) -> Vec<BTreeMap<String, String>> {
    members
        .values()
        .map(|m| m.sm.with_app(|a| a.map.clone()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_members_replicate_fail_over_and_catch_up() {
    let tmp = TempDir::new().expect("tempdir");
    let root = tmp.path();
    let router = Router::default();
    let mut members = BTreeMap::new();
    for id in 1..=3 {
        if id > 1 {
            tokio::time::sleep(START_APART).await;
        }
        members.insert(id, start(root, id, &router).await);
    }
    initialize(&members).await;

    let last = write(&members, 0..60).await;
    all_applied(&members, last).await;
    let m = maps(&members);
    assert_eq!(m[0].len(), 10);
    assert!(m.iter().all(|x| *x == m[0]), "members differ");

    // The leader stops; the two others elect a new one and go on writing.
    let old = leader_of(&members).await;
    let stopped = members.remove(&old).expect("leader");
    router.nodes.lock().remove(&old);
    stopped.raft.shutdown().await.expect("shutdown");
    drop(stopped);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let last = write(&members, 60..120).await;
    all_applied(&members, last).await;

    // It restarts from its own files and catches up (by log, or by snapshot where the
    // others purged what it lacks).
    members.insert(old, start(root, old, &router).await);
    all_applied(&members, last).await;
    let m = maps(&members);
    assert!(
        m.iter().all(|x| *x == m[0]),
        "members differ after catch-up"
    );
    assert_eq!(m[0]["file9"], "edit 119");
    // Each member built snapshots and purged its log behind them.
    for (id, m) in &members {
        m.raft
            .wait(WAIT)
            .metrics(
                |x| x.snapshot.is_some() && x.purged.is_some(),
                "snapshot and purge",
            )
            .await
            .expect("snapshot and purge");
        assert!(member_dir(root, *id).join("sm/raft_snapshot").exists());
    }
    for m in members.values() {
        m.raft.shutdown().await.expect("shutdown");
    }
}

/// Every member draws the same election timeout and their tick timers start together, so
/// members campaign on the same tick and their votes split, term after term (see
/// `rhdfs_raftlog::split_vote`); with the split-vote breaker on each member, a lost candidacy
/// is followed by one at a random moment, and a leader is elected at the start and again
/// after each stop of the leader.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn members_whose_timers_coincide_still_elect_a_leader() {
    let tmp = TempDir::new().expect("tempdir");
    let root = tmp.path();
    let router = Router::default();
    let config = {
        let c = Config {
            heartbeat_interval: 50,
            election_timeout_min: 300,
            election_timeout_max: 301,
            ..Config::default()
        };
        Arc::new(c.validate().expect("valid config"))
    };
    let together = tokio::sync::Barrier::new(3);
    let (m1, m2, m3) = tokio::join!(
        start_with(root, 1, &router, config.clone(), Some(&together)),
        start_with(root, 2, &router, config.clone(), Some(&together)),
        start_with(root, 3, &router, config.clone(), Some(&together)),
    );
    let mut members = BTreeMap::from([(1, m1), (2, m2), (3, m3)]);
    let breaker = |m: &Member, seed: u64| {
        let votes = SplitVotes::new(seed, Duration::from_millis(50), Duration::from_millis(150));
        tokio::spawn(break_split_votes(
            m.raft.clone(),
            votes,
            m.split.clone(),
            || true,
        ))
    };
    for (id, m) in &members {
        breaker(m, *id);
    }
    initialize(&members).await;
    write(&members, 0..5).await;
    for round in 0..3u64 {
        let old = leader_of(&members).await;
        let stopped = members.remove(&old).expect("leader");
        let stopped_term = stopped.raft.metrics().borrow().current_term;
        router.nodes.lock().remove(&old);
        stopped.raft.shutdown().await.expect("shutdown");
        drop(stopped);
        // The two left campaign together: only the breaker parts them, within a few terms
        // (without it, splits went on for up to 35 terms in trials).
        let new = leader_of(&members).await;
        let term = members[&new].raft.metrics().borrow().current_term;
        assert!(
            term <= stopped_term + 8,
            "round {round}: leader {new} elected in term {term}, {} terms after {stopped_term}",
            term - stopped_term
        );
        let last = write(&members, 5 * round + 5..5 * round + 10).await;
        let restarted = start_with(root, old, &router, config.clone(), None).await;
        breaker(&restarted, old + 10 * (round + 1));
        members.insert(old, restarted);
        all_applied(&members, last).await;
    }
    for m in members.values() {
        m.raft.shutdown().await.expect("shutdown");
    }
}
