//! `rhdfs journalnode`: a log-only voter of a nameservice's Raft group, so two NameNodes and
//! one JournalNode make a majority of three (two-machine deployments, with the JournalNode
//! on a third small machine or beside one NameNode's disks).
//!
//! The NameNodes name their JournalNodes with Hadoop's key, `dfs.namenode.shared.edits.dir =
//! qjournal://jn1:8485;.../<journal>`; they are the Raft members after the NameNodes. A
//! JournalNode stores the replicated log (in `dfs.journalnode.edits.dir/<journal>`), votes and
//! acknowledges appends, and holds no namespace: its state machine only notes which txids
//! each entry ends at, and its Raft snapshot is a NameNode's newest image, fetched over HTTP
//! (`journal_snapshots`), so its log is compacted as the NameNodes' are.
//! The leader must be a NameNode (the active one), yet a JournalNode may hold entries a
//! surviving NameNode lacks, which only a leader can send it. So a JournalNode campaigns, but
//! late (its election timeout is twice the NameNodes'), and when it wins it only
//! brings the others' logs up to its own, then yields as an active NameNode hands over
//! (`transition`): its heartbeats stop, the NameNodes' leases run out and one of them, now
//! as complete as the JournalNode, is elected. It never takes part in the initial election
//! (no `initialize`: the NameNodes propose the membership, which reaches it by replication). It finds its own place in the list by
//! `dfs.journalnode.rpc-address` (the entry with its port on a local host).

use std::net::SocketAddr;
use std::sync::Arc;

use rhdfs_conf::{Configuration, keys};
use rhdfs_ipc::{ProtocolRouter, RpcServer, ServerConfig};
use rhdfs_raftlog::net::{Faults, IpcNetwork, RaftService};
use rhdfs_raftlog::split_vote::{SplitSeen, break_split_votes};

use crate::ha::batch::EditRaft;
use crate::ha::journal_snapshots::{self, LogOnly};
use crate::ha::member::{HaError, NnRaft, RaftSettings, split_votes};
use crate::ha::peer_image;
use crate::ha::transition::{followers_caught_up, leads};

/// A running JournalNode.
pub struct JournalNode {
    id: u64,
    raft: NnRaft,
    service: Arc<RaftService<EditRaft>>,
    rpc: RpcServer,
    yielding: tokio::task::JoinHandle<()>,
    compacting: tokio::task::JoinHandle<()>,
    splitting: tokio::task::JoinHandle<()>,
}

impl JournalNode {
    /// Opens the journal's log and serves Raft on `dfs.journalnode.rpc-address`.
    pub async fn start(conf: &Configuration) -> Result<JournalNode, HaError> {
        let conf_err = |e: &dyn std::fmt::Display| HaError::Raft(e.to_string());
        let ns = rhdfs_conf::ha::single_nameservice(conf)
            .map_err(|e| conf_err(&e))?
            .ok_or_else(|| HaError::Raft("no HA nameservice is configured".into()))?;
        let (journals, journal_id) = rhdfs_conf::ha::journal_nodes(conf)
            .map_err(|e| conf_err(&e))?
            .ok_or_else(|| {
                HaError::Raft(format!(
                    "{} names no JournalNode (qjournal://host:port;.../<journal>)",
                    keys::DFS_NAMENODE_SHARED_EDITS_DIR_KEY
                ))
            })?;
        let listen = conf
            .get_trimmed(keys::DFS_JOURNALNODE_RPC_ADDRESS_KEY)
            .unwrap_or(keys::DFS_JOURNALNODE_RPC_ADDRESS_DEFAULT)
            .to_string();
        let (listen_host, listen_port) =
            rhdfs_conf::addr::parse_host_port(&listen, 8485).map_err(|e| conf_err(&e))?;
        let place = journals
            .iter()
            .position(|(h, p)| *p == listen_port && rhdfs_conf::ha::is_local_host(h))
            .ok_or_else(|| {
                HaError::Raft(format!(
                    "none of the JournalNodes of {} is this one ({}={listen})",
                    keys::DFS_NAMENODE_SHARED_EDITS_DIR_KEY,
                    keys::DFS_JOURNALNODE_RPC_ADDRESS_KEY
                ))
            })?;
        let id = (ns.namenodes.len() + place) as u64 + 1;
        let edits = conf
            .get_trimmed(keys::DFS_JOURNALNODE_EDITS_DIR_KEY)
            .unwrap_or(keys::DFS_JOURNALNODE_EDITS_DIR_DEFAULT);
        let dir = std::path::PathBuf::from(edits.strip_prefix("file://").unwrap_or(edits))
            .join(&journal_id);
        let mut settings = RaftSettings::from_conf(conf, Some(dir.clone()))?;
        settings.dir = dir;
        let lead_for = settings.election * 10;
        // Campaign only once no NameNode could, yet more often than a NameNode whose log is
        // behind. With a NameNode's election timeout E (openraft: a random timeout in
        // [E, 1.5E], a leader's lease 1.5E, and 3E more once a candidate saw a longer log), a
        // NameNode following a dead leader campaigns 2.5E–3E after its last heartbeat and the
        // JournalNode 5E–6E; but a NameNode that came back behind campaigns every 4E–4.5E and
        // the JournalNode, once it learnt that candidate's term, every 2E–3E. In standard Raft a
        // candidate refused for its short log keeps its term, so the JournalNode wins only with
        // a term the NameNode has not reached yet: it must campaign the more often (at three
        // timeouts it lost that race for a minute at a time).
        settings.election *= 2;
        let check = conf.get_duration(
            keys::DFS_NAMENODE_CHECKPOINT_CHECK_PERIOD_KEY,
            keys::DFS_NAMENODE_CHECKPOINT_CHECK_PERIOD_DEFAULT,
            keys::DFS_NAMENODE_CHECKPOINT_CHECK_PERIOD_UNIT,
        )?;
        let peers: journal_snapshots::Peers = ns
            .namenodes
            .iter()
            .map(|nn| (nn.id.clone(), peer_image::http_address(nn)))
            .collect();
        let store = settings.open_log().await?;
        let (log_only, journal_state) = LogOnly::new();
        let split = SplitSeen::default();
        let raft = NnRaft::new(
            id,
            settings.raft_config(&ns.id)?,
            IpcNetwork::new(id).with_split_seen(split.clone()),
            store,
            settings.open_state_machine(log_only, false).await?,
        )
        .await
        .map_err(|e| HaError::Raft(e.to_string()))?;
        let service = Arc::new(RaftService::new(Faults::new()));
        service.attach(raft.clone());
        let router =
            ProtocolRouter::new().route(rhdfs_raftlog::net::RAFT_PROTOCOL, service.clone());
        let addr: SocketAddr = tokio::net::lookup_host((listen_host.as_str(), listen_port))
            .await
            .ok()
            .and_then(|mut a| a.next())
            .ok_or_else(|| HaError::Raft(format!("cannot resolve {listen}")))?;
        let server_conf = ServerConfig::from_conf(conf)?;
        let rpc = RpcServer::bind(addr, Arc::new(router), server_conf)
            .await
            .map_err(|e| HaError::Raft(format!("binding {addr}: {e}")))?;
        let yielding = tokio::spawn(yield_leadership(raft.clone(), id, lead_for));
        // JournalNodes whose ticks meet split their votes as NameNodes' do (when no NameNode
        // can win: both down, or behind the JournalNodes' logs). The breaker re-campaigns
        // within half the JournalNode's own (doubled) timeout, that is within E, where a
        // NameNode's breaker draws within E/2, so after a split with a NameNode the NameNode
        // most often campaigns first; a refusal by a member whose log is ahead is not a split
        // and leaves the late timer alone.
        let splitting = tokio::spawn(break_split_votes(
            raft.clone(),
            split_votes(id, &settings),
            split,
            || true,
        ));
        let compacting = tokio::spawn(journal_snapshots::compact(
            raft.clone(),
            journal_state,
            peers,
            check,
            settings.retained,
        ));
        tracing::info!(
            member = id,
            nameservice = %ns.id,
            journal = %journal_id,
            dir = %settings.dir.display(),
            addr = %rpc.local_addr(),
            "JournalNode serving the nameservice's Raft log"
        );
        Ok(JournalNode {
            id,
            raft,
            service,
            rpc,
            yielding,
            compacting,
            splitting,
        })
    }

    /// Its Raft member id (after the NameNodes').
    pub fn id(&self) -> u64 {
        self.id
    }

    pub fn rpc_addr(&self) -> SocketAddr {
        self.rpc.local_addr()
    }

    /// The index of the last entry its log holds.
    pub fn last_log_index(&self) -> Option<u64> {
        self.raft.metrics().borrow().last_log_index
    }

    /// Its Raft metrics now (log, snapshot and purge points, leader).
    pub fn metrics(&self) -> openraft::RaftMetrics<u64, openraft::BasicNode> {
        self.raft.metrics().borrow().clone()
    }

    /// Stops serving and closes the log.
    pub async fn shutdown(self) {
        self.yielding.abort();
        self.compacting.abort();
        self.splitting.abort();
        self.service.detach();
        self.rpc.shutdown().await;
        if let Err(e) = self.raft.shutdown().await {
            tracing::warn!("Raft shutdown: {e}");
        }
    }
}

/// Whenever this JournalNode leads: waits (at most `lead_for`) until every follower's log
/// matches its own, then stops its heartbeats until another member leads.
async fn yield_leadership(raft: NnRaft, own: u64, lead_for: std::time::Duration) {
    let mut metrics = raft.metrics();
    loop {
        if metrics.wait_for(|m| leads(m, own)).await.is_err() {
            return;
        }
        tracing::info!("the JournalNode leads: bringing the NameNodes' logs up to its own");
        followers_caught_up(&raft, own, lead_for).await;
        raft.runtime_config().heartbeat(false);
        tracing::info!("the JournalNode yields: heartbeats stop until a NameNode leads");
        let handed = metrics.wait_for(|m| !leads(m, own)).await.is_ok();
        raft.runtime_config().heartbeat(true);
        if !handed {
            return;
        }
    }
}
