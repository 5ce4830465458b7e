//! The Raft member of an HA NameNode and the task that makes Raft leadership the active
//! role.
//!
//! Members are the NameNodes of the nameservice, numbered by their place in
//! `dfs.ha.namenodes.<ns>` (1, 2, …), reached at their rpc-address: Raft's calls share the
//! NameNode's RPC port as the protocol `org.apache.rhdfs.raft.RaftProtocol`. A member whose
//! Raft log is empty proposes the configured membership (every member proposes the same one,
//! which openraft accepts). The log lives in `rhdfs.ha.raft.dir` (default: `raft` in the
//! first name directory).
//!
//! [`watch_role`]: a member is active while Raft has it as leader and a majority answered it
//! within the election timeout; it becomes active only after applying every committed edit
//! (`ensure_linearizable`) with its namespace exactly at the committed txid, and stops at
//! once when either condition fails (the fencing of a partitioned or deposed active).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use openraft::{BasicNode, Config, ServerState, SnapshotPolicy};
use rand::Rng;
use rhdfs_conf::ha::Nameservice;
use rhdfs_conf::{Configuration, keys};
use rhdfs_raftlog::net::{Faults, IpcNetwork, RaftService};
use rhdfs_raftlog::split_vote::{SplitSeen, SplitVotes, break_split_votes};
use rhdfs_raftlog::{AppStateMachine, RaftLogStore, StoreOptions};
use tokio::task::JoinHandle;
use tracing::Instrument;

use crate::ha::Role;
use crate::ha::apply::NamespaceApp;
use crate::ha::batch::EditRaft;
use crate::ha::ship::{EditShipper, RaftJournal, StandbyJournal};
use crate::namesystem::Namesystem;

pub type NnRaft = openraft::Raft<EditRaft>;

/// Why the Raft member could not start.
#[derive(Debug, thiserror::Error)]
pub enum HaError {
    #[error("{0}")]
    Conf(#[from] rhdfs_conf::ConfError),
    #[error("Raft log in {dir}: {source}")]
    Log {
        dir: String,
        source: rhdfs_raftlog::RaftLogError,
    },
    #[error("Raft: {0}")]
    Raft(String),
    #[error("the NameNode has no name directory for its Raft log")]
    NoDirectory,
}

/// Raft settings from the configuration.
#[derive(Debug, Clone)]
pub struct RaftSettings {
    pub heartbeat: Duration,
    pub election: Duration,
    pub dir: PathBuf,
    /// The JournalNodes' addresses (`dfs.namenode.shared.edits.dir`): log-only voters.
    pub journals: Vec<String>,
    /// Entries kept behind the newest snapshot (`rhdfs.ha.raft.log.retained.entries`).
    pub retained: u64,
    /// Started with `namenode -observer` (`dfs.namenode.startup=OBSERVER`): joins as an
    /// observer.
    pub observer: bool,
}

impl RaftSettings {
    /// `rhdfs.ha.raft.*`; `name_dir` is the first name directory.
    pub fn from_conf(conf: &Configuration, name_dir: Option<PathBuf>) -> Result<Self, HaError> {
        let heartbeat = conf.get_duration(
            keys::RHDFS_HA_RAFT_HEARTBEAT_INTERVAL_MS_KEY,
            keys::RHDFS_HA_RAFT_HEARTBEAT_INTERVAL_MS_DEFAULT,
            keys::RHDFS_HA_RAFT_HEARTBEAT_INTERVAL_MS_UNIT,
        )?;
        let election = conf.get_duration(
            keys::RHDFS_HA_RAFT_ELECTION_TIMEOUT_MS_KEY,
            keys::RHDFS_HA_RAFT_ELECTION_TIMEOUT_MS_DEFAULT,
            keys::RHDFS_HA_RAFT_ELECTION_TIMEOUT_MS_UNIT,
        )?;
        let dir = match conf.get_trimmed(keys::RHDFS_HA_RAFT_DIR_KEY) {
            Some(d) if !d.is_empty() => PathBuf::from(d.strip_prefix("file://").unwrap_or(d)),
            _ => name_dir.ok_or(HaError::NoDirectory)?.join("raft"),
        };
        let journals = rhdfs_conf::ha::journal_nodes(conf)
            .map_err(|e| HaError::Raft(e.to_string()))?
            .map(|(nodes, _)| {
                nodes
                    .iter()
                    .map(|(h, p)| rhdfs_conf::addr::join_host_port(h, *p))
                    .collect()
            })
            .unwrap_or_default();
        let retained = conf.get_u64(
            keys::RHDFS_HA_RAFT_LOG_RETAINED_ENTRIES_KEY,
            keys::RHDFS_HA_RAFT_LOG_RETAINED_ENTRIES_DEFAULT,
        )?;
        let observer = conf
            .get_trimmed(keys::DFS_NAMENODE_STARTUP_KEY)
            .is_some_and(|o| o.eq_ignore_ascii_case("OBSERVER"));
        Ok(RaftSettings {
            journals,
            retained,
            observer,
            heartbeat: heartbeat.max(Duration::from_millis(10)),
            // Raft needs the election timeout well above the heartbeat.
            election: election.max(heartbeat * 3),
            dir,
        })
    }

    /// Opens the state machine adapter over `app`, its current snapshot in `<dir>/snapshot`:
    /// the meta alone for a NameNode (`app_durable`: its image and edit log hold its state),
    /// meta and bytes for a JournalNode (it passes on the image it was sent).
    pub(crate) async fn open_state_machine<A: rhdfs_raftlog::StateMachineApp<EditRaft>>(
        &self,
        app: A,
        app_durable: bool,
    ) -> Result<AppStateMachine<EditRaft, A>, HaError> {
        let dir = self.dir.join("snapshot");
        let shown = dir.display().to_string();
        let fs: Arc<dyn rhdfs_editlog::fs::FileSystem> = Arc::new(rhdfs_editlog::fs::LocalFs);
        tokio::task::spawn_blocking(move || {
            if app_durable {
                AppStateMachine::open_app_durable(app, &dir, fs)
            } else {
                AppStateMachine::open(app, &dir, fs)
            }
        })
        .await
        .map_err(|e| HaError::Raft(format!("opening the state machine: {e}")))?
        .map_err(|source| HaError::Log { dir: shown, source })
    }

    /// Opens the member's Raft log (`<dir>/log`).
    pub(crate) async fn open_log(&self) -> Result<RaftLogStore<EditRaft>, HaError> {
        RaftLogStore::open_async(&self.dir.join("log"), StoreOptions::default())
            .await
            .map_err(|source| HaError::Log {
                dir: self.dir.display().to_string(),
                source,
            })
    }

    pub(crate) fn raft_config(&self, cluster: &str) -> Result<Arc<Config>, HaError> {
        let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        let c = Config {
            cluster_name: cluster.to_string(),
            heartbeat_interval: ms(self.heartbeat),
            // openraft's leader lease is the maximum (a follower refuses votes that long after
            // it last heard its leader, and campaigns only after lease + its own random
            // timeout): a follower of a dead leader campaigns 2.5E–3E after its last heartbeat
            // with E's half as the spread (3E–4E with [E, 2E]). The lease must outlast the
            // active's own fencing (no majority acknowledgement for E: `watch_role`), with
            // room for a few heartbeats. The spread of E/2 does not by itself part two
            // followers' campaigns: openraft checks the timeout only on its ticks (1.5
            // heartbeats), so members whose ticks meet campaign together whenever both draws
            // fall in one tick slot, every term; `split_votes` breaks such a split.
            election_timeout_min: ms(self.election),
            election_timeout_max: ms(self.election).saturating_add(ms(self.election) / 2),
            // Snapshots are taken when the member saves an image (`spawn_snapshots`), not
            // by entry count; the log is purged behind them less `retained` entries, in
            // batches no larger than that.
            snapshot_policy: SnapshotPolicy::Never,
            max_in_snapshot_log_to_keep: self.retained,
            purge_batch_size: self.retained.clamp(1, 256),
            ..Config::default()
        };
        c.validate()
            .map(Arc::new)
            .map_err(|e| HaError::Raft(e.to_string()))
    }
}

/// The Raft id of NameNode `own` of `ns` (its place in `dfs.ha.namenodes.<ns>`, from 1).
fn member_id(ns: &Nameservice, own: &str) -> Result<u64, HaError> {
    ns.namenodes
        .iter()
        .position(|n| n.id == own)
        .map(|i| i as u64 + 1)
        .ok_or_else(|| HaError::Raft(format!("{own} is not a NameNode of {}", ns.id)))
}

/// The members of `ns`: the NameNodes, numbered from 1 by place in `dfs.ha.namenodes.<ns>`,
/// then the JournalNodes after them (`journals`, in `dfs.namenode.shared.edits.dir` order).
pub fn members(ns: &Nameservice, journals: &[String]) -> BTreeMap<u64, BasicNode> {
    ns.namenodes
        .iter()
        .map(|n| n.rpc_addr())
        .chain(journals.iter().cloned())
        .enumerate()
        .map(|(i, addr)| (i as u64 + 1, BasicNode::new(addr)))
        .collect()
}

/// How this member moves Raft leadership on a manual transition (HAServiceProtocol): a
/// transition may take up to ten election timeouts, and at least ten seconds; a standby asked
/// to hold its elections is given one election timeout to answer.
pub fn leadership(
    fs: &Arc<Namesystem>,
    raft: &Arc<RaftService<EditRaft>>,
    ns: &Nameservice,
    own: &str,
    conf: &Configuration,
) -> Result<crate::ha::transition::Leadership, HaError> {
    let members = members(ns, &[]);
    let own_id = member_id(ns, own)?;
    let election = conf.get_duration(
        keys::RHDFS_HA_RAFT_ELECTION_TIMEOUT_MS_KEY,
        keys::RHDFS_HA_RAFT_ELECTION_TIMEOUT_MS_DEFAULT,
        keys::RHDFS_HA_RAFT_ELECTION_TIMEOUT_MS_UNIT,
    )?;
    Ok(crate::ha::transition::Leadership::new(
        fs.clone(),
        raft.clone(),
        own_id,
        members.into_iter().map(|(id, n)| (id, n.addr)).collect(),
        rhdfs_ipc::ClientConfig::from_conf(conf)?,
        (election * 10).max(Duration::from_secs(10)),
        election,
    ))
}

/// A running Raft member.
pub struct HaMember {
    pub id: u64,
    pub raft: NnRaft,
    pub service: Arc<RaftService<EditRaft>>,
    pub faults: Faults,
    tasks: Vec<JoinHandle<()>>,
}

impl HaMember {
    /// The service to route `RAFT_PROTOCOL` to, before the RPC server binds.
    pub fn service(faults: &Faults) -> Arc<RaftService<EditRaft>> {
        Arc::new(RaftService::new(faults.clone()))
    }

    /// Opens the Raft log, starts the member as a standby and the tasks that ship edits and
    /// follow leadership. `fs` must have its storage attached.
    pub async fn start(
        fs: Arc<Namesystem>,
        ns: &Nameservice,
        own: &str,
        settings: RaftSettings,
        service: Arc<RaftService<EditRaft>>,
        faults: Faults,
        stop: Arc<AtomicBool>,
    ) -> Result<HaMember, HaError> {
        let members = members(ns, &settings.journals);
        let id = member_id(ns, own)?;
        let log = fs
            .durable()
            .map(|d| d.log().clone())
            .ok_or(HaError::NoDirectory)?;
        let shipper = EditShipper::new();
        enter_standby(&fs);
        fs.attach_shipper(shipper.clone());
        let store = settings.open_log().await?;
        let sm = settings
            .open_state_machine(NamespaceApp::new(fs.clone(), log, shipper.clone()), true)
            .await?;
        let split = SplitSeen::default();
        let network = IpcNetwork::new(id)
            .with_faults(faults.clone())
            .with_split_seen(split.clone());
        let raft = NnRaft::new(id, settings.raft_config(&ns.id)?, network, store, sm)
            .await
            .map_err(|e| HaError::Raft(e.to_string()))?;
        if settings.observer {
            // Before its first election timeout: an observer never campaigns.
            crate::ha::transition::enter_observer(&raft, fs.ha_role());
        }
        service.attach(raft.clone());
        let initialized = raft
            .is_initialized()
            .await
            .map_err(|e| HaError::Raft(e.to_string()))?;
        if !initialized {
            // Every member proposes the same membership; openraft takes it once.
            if let Err(e) = raft.initialize(members.clone()).await {
                tracing::info!("Raft membership already proposed: {e}");
            }
        }
        tracing::info!(
            member = id,
            nameservice = %ns.id,
            members = ?members.keys().collect::<BTreeSet<_>>(),
            dir = %settings.dir.display(),
            state = fs.ha_role().get().state_name(),
            "NameNode joined the nameservice's Raft group"
        );
        let images = fs
            .durable()
            .map(|d| d.images_saved())
            .ok_or(HaError::NoDirectory)?;
        let tasks = vec![
            tokio::spawn(snapshot_at_each_image(raft.clone(), images).in_current_span()),
            tokio::spawn(shipper.clone().run(raft.clone()).in_current_span()),
            tokio::spawn(
                break_split_votes(raft.clone(), split_votes(id, &settings), split, {
                    let fs = fs.clone();
                    move || may_campaign(fs.ha_role())
                })
                .in_current_span(),
            ),
            tokio::spawn(
                watch_role(fs, raft.clone(), shipper, id, settings.clone(), stop).in_current_span(),
            ),
        ];
        Ok(HaMember {
            id,
            raft,
            service,
            faults,
            tasks,
        })
    }

    /// Stops the member (the NameNode is stopping or crashing).
    pub async fn shutdown(self) {
        self.service.detach();
        for t in &self.tasks {
            t.abort();
        }
        if let Err(e) = self.raft.shutdown().await {
            tracing::warn!("Raft shutdown: {e}");
        }
    }
}

/// The split-vote breaker of member `id` (`rhdfs_raftlog::split_vote`), NameNode or
/// JournalNode: a candidacy still undecided a heartbeat after it began, refused by another
/// candidate of its term, has split; the member campaigns again within the next half of its
/// election timeout E, before its tick-based timer (E to 1.5E after its vote; a JournalNode's
/// E is twice the NameNodes'). Each member's seed mixes its id into the process's seed, so
/// members of one process draw apart even with `RHDFS_SEED` set.
pub(crate) fn split_votes(id: u64, settings: &RaftSettings) -> SplitVotes {
    let seed =
        rhdfs_conf::rng::seeded_rng(None).random::<u64>() ^ id.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    tracing::debug!(member = id, seed, "split-vote breaker seeded");
    SplitVotes::new(seed, settings.heartbeat, settings.election / 2)
}

/// Whether this member may start an election of its own: as a standby (not an observer, nor
/// one whose namespace diverged), and not while it holds its elections for another member's
/// hand-over or hands its own role over.
fn may_campaign(role: &crate::ha::RoleCell) -> bool {
    role.get() == Role::Standby && !role.holding() && !role.yielding()
}

/// Takes a Raft snapshot each time the member saves an image (`ha::snapshot`), so its Raft
/// log is compacted at the pace of its checkpoints.
async fn snapshot_at_each_image(raft: NnRaft, mut images: tokio::sync::watch::Receiver<u64>) {
    while images.changed().await.is_ok() {
        let txid = *images.borrow_and_update();
        tracing::debug!(txid, "image saved: taking a Raft snapshot");
        if let Err(e) = raft.trigger().snapshot().await {
            tracing::info!("Raft snapshot not taken: {e}");
            return;
        }
    }
}

/// Makes the NameNode a standby: nothing but committed edits changes its namespace, it
/// serves no client operation and its block manager computes no work.
pub fn enter_standby(fs: &Namesystem) {
    fs.with_ns(|n| {
        fs.ha_role().set(Role::Standby);
        n.set_journal(Box::new(StandbyJournal));
    });
    fs.publish_safe_mode();
}

/// Follows Raft leadership: see the module docs.
async fn watch_role(
    fs: Arc<Namesystem>,
    raft: NnRaft,
    shipper: Arc<EditShipper>,
    me: u64,
    settings: RaftSettings,
    stop: Arc<AtomicBool>,
) {
    let mut metrics = raft.metrics();
    let election_ms = u64::try_from(settings.election.as_millis()).unwrap_or(u64::MAX);
    while !stop.load(Ordering::Relaxed) {
        let (leading, raft_leader, term, state, quorum_ack) = {
            let m = metrics.borrow_and_update();
            let raft_leader = m.state == ServerState::Leader && m.current_leader == Some(me);
            let leading = raft_leader
                && m.millis_since_quorum_ack.is_some_and(|ms| ms < election_ms)
                && !fs.ha_role().yielding();
            (
                leading,
                raft_leader,
                m.current_term,
                m.state,
                m.millis_since_quorum_ack,
            )
        };
        match (fs.ha_role().get(), leading) {
            // An observer never becomes active: elected all the same (it campaigns no
            // more, but an election it had started may end after), it hands leadership to
            // another member as a transitionToStandby would.
            (Role::Observer, _) if raft_leader && !fs.ha_role().yielding() => {
                tracing::warn!(
                    term,
                    "an observer won a Raft election: handing leadership away"
                );
                let (fs, raft) = (fs.clone(), raft.clone());
                let wait = (settings.election * 10).max(Duration::from_secs(10));
                tokio::spawn(async move {
                    crate::ha::transition::yield_leadership(&fs, &raft, me, wait).await;
                });
            }
            (Role::Standby, true) => activate(&fs, &raft, &shipper, term, &settings).await,
            (Role::Active, false) => {
                deactivate(&fs, &shipper);
                tracing::warn!(
                    term,
                    ?state,
                    millis_since_quorum_ack = ?quorum_ack,
                    "no longer the Raft leader acknowledged by a majority: this NameNode is a \
                     standby now"
                );
            }
            _ => {}
        }
        // Metrics change with every Raft event; the quorum's silence does not change them,
        // so look again after a heartbeat interval as well.
        tokio::select! {
            r = metrics.changed() => if r.is_err() { break },
            _ = tokio::time::sleep(settings.heartbeat) => {}
        }
    }
}

async fn activate(
    fs: &Arc<Namesystem>,
    raft: &NnRaft,
    shipper: &Arc<EditShipper>,
    term: u64,
    settings: &RaftSettings,
) {
    // Every edit committed before this term applied (the leader's first entry of its term
    // is committed and applied).
    match tokio::time::timeout(settings.election, raft.ensure_linearizable()).await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => {
            tracing::info!(term, "not becoming active: {e}");
            return;
        }
        Err(_) => {
            tracing::info!(
                term,
                "not becoming active: the committed edits were not applied in time"
            );
            return;
        }
    }
    let local = fs.durable().map_or(0, |d| d.log().last_txid());
    let became = fs.with_ns(|ns| {
        // Made an observer meanwhile: it never becomes active.
        if !fs.ha_role().replace(Role::Standby, Role::Active) {
            return Ok(false);
        }
        if !shipper.activate(local, ns.last_txid()) {
            return Err(ns.last_txid());
        }
        ns.set_journal(Box::new(RaftJournal::new(shipper.clone())));
        Ok(true)
    });
    match became {
        Ok(false) => tracing::info!(term, "not becoming active: this NameNode is an observer"),
        Ok(true) => {
            let bm = fs.block_manager();
            bm.set_last_txid(local);
            let dropped = bm.become_active();
            fs.publish_safe_mode();
            tracing::info!(
                term,
                txid = local,
                dropped_deletions = dropped.dropped_deletions,
                "this NameNode is active now; every storage is stale until its next full report"
            );
        }
        Err(ns_txid) => {
            tracing::error!(
                term,
                ns_txid,
                committed = local,
                "cannot become active: the namespace holds edits that were never committed and \
                 are not this NameNode's own; restart it to reload the namespace"
            );
            fs.ha_role().set(Role::Failed);
        }
    }
}

fn deactivate(fs: &Namesystem, shipper: &EditShipper) {
    enter_standby(fs);
    shipper.deactivate();
}
