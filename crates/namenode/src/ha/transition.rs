//! Manual transitions of an HA NameNode (HAServiceProtocol's transitionToActive and
//! transitionToStandby, `haadmin -failover`), done through Raft: the active is the Raft
//! leader, so a transition is a leadership change, never a role set by hand (which could
//! leave two actives).
//!
//! openraft's followers refuse to vote while their leader's lease holds (the longest election
//! timeout, 1.5 times the configured one, after they last heard from it), so leadership moves
//! in two steps:
//! 1. the leader **yields**: it stops being active (no more edits shipped), waits until every
//!    follower's log matches its own (at most half the transition's time: a member that is
//!    down does not hold it up longer), then stops its heartbeats, so the followers' leases
//!    run out;
//! 2. the chosen member **campaigns**: it starts an election every few milliseconds
//!    (`trigger().elect()`) until it wins, which it does as soon as the leases ran out —
//!    before any other follower's own election timer (lease + election timeout) fires.
//!
//! The other standbys **hold** their elections meanwhile: their own timers would fire soon
//! after the leases ran out, and one of them could win before a campaigner slowed down by a
//! loaded machine (the chosen member then failed the transition and another was active). A
//! holding member starts no election of its own until a leader of a later term is known or
//! the hand-over's time is up; it still votes, and still campaigns when chosen.
//!
//! A leader that is still leader when the hand-over's time is up takes its heartbeats and the
//! active role back. Requests between members carry `REQUEST_BY_ZKFC` (the nameservice's own
//! failover); an operator's carry `REQUEST_BY_USER`:
//! - transitionToActive by the user, on a standby: asks every other NameNode to stand by
//!   (transitionToStandby by ZKFC: the leader yields, the standbys hold), then campaigns; by
//!   ZKFC (from a yielding leader): campaigns.
//! - transitionToStandby by the user, on the active: asks the standbys to hold, yields, picks
//!   the standby whose log matches its own the furthest (Raft replication progress) and asks it
//!   to become active (transitionToActive by ZKFC); by ZKFC: yields and answers at once, or on
//!   a standby holds, on an observer does nothing.

use std::sync::Arc;
use std::time::Duration;

use rhdfs_ipc::ClientConfig;
use rhdfs_raftlog::net::RaftService;

use crate::ha::Role;
use crate::ha::ask::{ask_each_within, ask_member};
use crate::ha::batch::EditRaft;
use crate::namesystem::Namesystem;

/// How often a campaigning member starts an election.
const CAMPAIGN_EVERY: Duration = Duration::from_millis(50);

/// Moves leadership for one HA NameNode.
pub struct Leadership {
    fs: Arc<Namesystem>,
    raft: Arc<RaftService<EditRaft>>,
    /// This member's Raft id.
    own: u64,
    /// Every NameNode's RPC address by Raft id (JournalNodes cannot become active).
    members: Vec<(u64, String)>,
    ipc: ClientConfig,
    /// How long a transition may take.
    wait: Duration,
    /// How long a standby asked to hold its elections is given to answer (the election
    /// timeout): one that has not answered by then is skipped.
    hold_bound: Duration,
}

impl Leadership {
    pub fn new(
        fs: Arc<Namesystem>,
        raft: Arc<RaftService<EditRaft>>,
        own: u64,
        members: Vec<(u64, String)>,
        ipc: ClientConfig,
        wait: Duration,
        hold_bound: Duration,
    ) -> Self {
        Leadership {
            fs,
            raft,
            own,
            members,
            ipc,
            wait,
            hold_bound,
        }
    }

    fn raft(&self) -> Result<openraft::Raft<EditRaft>, String> {
        self.raft
            .raft()
            .ok_or_else(|| "its Raft member is not running".to_string())
    }

    fn addr_of(&self, id: u64) -> Result<String, String> {
        self.members
            .iter()
            .find(|(m, _)| *m == id)
            .map(|(_, a)| a.clone())
            .ok_or_else(|| format!("member {id} has no address"))
    }

    /// transitionToActive: `by_user` when an operator asked (the leader is asked to yield
    /// first), else a yielding leader asked.
    pub async fn become_active(&self, by_user: bool) -> Result<(), String> {
        match self.fs.ha_role().get() {
            Role::Active => return Ok(()),
            Role::Failed => {
                return Err("its namespace diverged from the replicated edit log".into());
            }
            Role::Observer => return Err(OBSERVER_TO_ACTIVE.into()),
            Role::Standby => {}
        }
        let raft = self.raft()?;
        if by_user {
            // The standbys hold, then the leader yields (a member that does not know the
            // leader asks every other to yield: one that is not active holds).
            let leader = raft
                .metrics()
                .borrow()
                .current_leader
                .filter(|l| *l != self.own);
            self.ask_standbys_to_hold(leader).await;
            if let Some(leader) = leader {
                self.ask(&self.addr_of(leader)?, false).await?;
            }
        }
        let deadline = tokio::time::Instant::now() + self.wait;
        while self.fs.ha_role().get() != Role::Active {
            if tokio::time::Instant::now() >= deadline {
                return Err(format!(
                    "it did not win an election within {:?} (its log may be behind the \
                     majority's, or the leader did not yield)",
                    self.wait
                ));
            }
            raft.trigger()
                .elect()
                .await
                .map_err(|e| format!("starting an election: {e}"))?;
            tokio::time::sleep(CAMPAIGN_EVERY).await;
        }
        Ok(())
    }

    /// transitionToStandby: `by_user` when an operator asked (a successor is chosen and
    /// asked to campaign, and the call returns once this member is a standby), else a member
    /// that campaigns asked (yield and answer at once).
    pub async fn become_standby(&self, by_user: bool) -> Result<(), String> {
        if self.fs.ha_role().get() == Role::Observer {
            // An operator takes an observer back; another member's hand-over leaves it be.
            return if by_user {
                self.leave_observer()
            } else {
                Ok(())
            };
        }
        if self.fs.ha_role().get() != Role::Active && !self.fs.ha_role().yielding() {
            if !by_user {
                self.hold_elections()?;
            }
            return Ok(());
        }
        let raft = self.raft()?;
        if by_user {
            self.ask_standbys_to_hold(Some(self.own)).await;
        }
        yield_leadership(&self.fs, &raft, self.own, self.wait).await;
        if !by_user {
            return Ok(());
        }
        // The standbys by how far their log matches this one's; an observer refuses to
        // become active, and the next one is asked.
        let progress = raft.metrics().borrow().replication.clone();
        let mut candidates: Vec<_> = progress
            .into_iter()
            .flatten()
            .filter(|(id, _)| *id != self.own && self.members.iter().any(|(m, _)| m == id))
            .collect();
        candidates.sort_by_key(|(_, matched)| std::cmp::Reverse(matched.map(|l| l.index)));
        if candidates.is_empty() {
            return Err("no other member to hand the active role to".into());
        }
        let mut refusals = Vec::new();
        for (id, _) in candidates {
            match self.ask(&self.addr_of(id)?, true).await {
                Ok(()) => {
                    return if left_leadership(&raft, self.own, self.wait).await {
                        Ok(())
                    } else {
                        Err(format!("still the leader after {:?}", self.wait))
                    };
                }
                Err(e) => refusals.push(e),
            }
        }
        Err(refusals.join("; "))
    }

    /// transitionToObserver: a standby serves reads and never becomes active. It stops
    /// campaigning (openraft's elections off), so it leads only should it win an election it
    /// had started before; the role watch then hands leadership away.
    pub fn become_observer(&self) -> Result<(), String> {
        let raft = self.raft()?;
        let role = self.fs.ha_role();
        match role.get() {
            Role::Observer => return Ok(()),
            Role::Active => return Err(ACTIVE_TO_OBSERVER.into()),
            Role::Failed => {
                return Err("its namespace diverged from the replicated edit log".into());
            }
            Role::Standby if role.yielding() => {
                return Err("it is handing the active role over".into());
            }
            Role::Standby => {}
        }
        if !enter_observer(&raft, role) {
            return Err(format!(
                "its state changed to {} meanwhile",
                role.get().state_name()
            ));
        }
        tracing::info!("this NameNode is an observer now: it serves reads, never campaigns");
        Ok(())
    }

    /// An observer back to a standby: it campaigns again.
    fn leave_observer(&self) -> Result<(), String> {
        let raft = self.raft()?;
        if self.fs.ha_role().replace(Role::Observer, Role::Standby) {
            raft.runtime_config().elect(true);
            tracing::info!("this NameNode is a standby now (no longer an observer)");
        }
        Ok(())
    }

    /// Asks every NameNode but this one and `leader` to hold its elections for a hand-over
    /// (transitionToStandby by ZKFC); with no leader known, every other one, a leader among
    /// them then yielding. The asks go out at once, each given `hold_bound`: a member that
    /// has not answered by then (its machine down, or too slow to matter) is skipped and
    /// logged, as is one that refused — it is down, or it will hear the new leader.
    async fn ask_standbys_to_hold(&self, leader: Option<u64>) {
        let asks = self
            .members
            .iter()
            .filter(|(id, _)| *id != self.own && Some(*id) != leader)
            .map(|(id, addr)| {
                let (addr, ipc) = (addr.clone(), self.ipc.clone());
                (*id, async move { ask_member(&addr, ipc, false).await })
            })
            .collect();
        for (id, e) in ask_each_within(asks, self.hold_bound).await {
            tracing::info!(member = id, "asking a member to stand by: {e}");
        }
    }

    /// A standby holds its elections while another member hands the active role over (see
    /// the module docs): until a leader of a later term than now is known, or the hand-over's
    /// time is up. An observer's stay off.
    fn hold_elections(&self) -> Result<(), String> {
        let raft = self.raft()?;
        if self.fs.ha_role().set_holding(true) {
            return Ok(());
        }
        raft.runtime_config().elect(false);
        let term = raft.metrics().borrow().current_term;
        tracing::info!(
            term,
            "another member hands the active role over: elections held"
        );
        let (fs, wait) = (self.fs.clone(), self.wait);
        tokio::spawn(async move {
            let mut metrics = raft.metrics();
            let led = metrics.wait_for(|m| m.current_term > term && m.current_leader.is_some());
            let seen = tokio::time::timeout(wait, led)
                .await
                .is_ok_and(|r| r.is_ok());
            if fs.ha_role().get() != Role::Observer {
                raft.runtime_config().elect(true);
            }
            fs.ha_role().set_holding(false);
            tracing::info!(
                new_leader = seen,
                "elections resumed after another member's hand-over"
            );
        });
        Ok(())
    }

    /// Asks the member at `addr` to become active (`to_active`) or to yield, as ZKFC.
    async fn ask(&self, addr: &str, to_active: bool) -> Result<(), String> {
        ask_member(addr, self.ipc.clone(), to_active).await
    }
}

/// A standby becomes an observer: elections off first (it must not campaign once it serves
/// as one), then the role; false, elections back on, when the role was no longer a standby.
pub(crate) fn enter_observer(raft: &openraft::Raft<EditRaft>, role: &crate::ha::RoleCell) -> bool {
    raft.runtime_config().elect(false);
    let entered = role.replace(Role::Standby, Role::Observer);
    if !entered {
        raft.runtime_config().elect(true);
    }
    entered
}

/// Hadoop's refusal of transitionToActive on an observer.
pub const OBSERVER_TO_ACTIVE: &str = "Cannot transition from 'observer' to 'active'";
/// Hadoop's refusal of transitionToObserver on the active.
pub const ACTIVE_TO_OBSERVER: &str = "Cannot transition from 'active' to 'observer'";

/// The leader yields (see the module docs): it stops being active, waits for its followers'
/// logs (at most half of `wait`), stops its heartbeats, and takes them back once another
/// member leads or `wait` is over. Nothing happens while a yield is already going on.
pub(crate) async fn yield_leadership(
    fs: &Arc<Namesystem>,
    raft: &openraft::Raft<EditRaft>,
    own: u64,
    wait: Duration,
) {
    if fs.ha_role().set_yielding(true) {
        return;
    }
    tracing::info!("handing the active role over: edits stop");
    if !followers_caught_up(raft, own, wait / 2).await {
        tracing::warn!("not every follower caught up before the hand-over");
    }
    raft.runtime_config().heartbeat(false);
    tracing::info!("handing the active role over: heartbeats stop");
    tokio::spawn(end_yield(fs.clone(), raft.clone(), own, wait));
}

/// Waits until every follower's log matches the leader's last entry, at most `wait`.
pub(crate) async fn followers_caught_up(
    raft: &openraft::Raft<EditRaft>,
    own: u64,
    wait: Duration,
) -> bool {
    let mut metrics = raft.metrics();
    let check = metrics.wait_for(|m| {
        let last = m.last_log_index;
        m.replication.as_ref().is_some_and(|r| {
            r.iter()
                .all(|(id, matched)| *id == own || matched.map(|l| l.index) == last)
        })
    });
    tokio::time::timeout(wait, check)
        .await
        .is_ok_and(|r| r.is_ok())
}

/// Whether `own` is the Raft leader by these metrics.
pub(crate) fn leads(m: &openraft::RaftMetrics<u64, openraft::BasicNode>, own: u64) -> bool {
    m.state == openraft::ServerState::Leader && m.current_leader == Some(own)
}

/// Waits until `own` is no longer the Raft leader, at most `wait`.
async fn left_leadership(raft: &openraft::Raft<EditRaft>, own: u64, wait: Duration) -> bool {
    let mut metrics = raft.metrics();
    let check = metrics.wait_for(|m| !leads(m, own));
    tokio::time::timeout(wait, check)
        .await
        .is_ok_and(|r| r.is_ok())
}

/// Ends a hand-over: once another member leads, or when its time is up (this member then
/// takes its heartbeats and, through the role watch, the active role back).
async fn end_yield(fs: Arc<Namesystem>, raft: openraft::Raft<EditRaft>, own: u64, wait: Duration) {
    let handed = left_leadership(&raft, own, wait).await;
    raft.runtime_config().heartbeat(true);
    fs.ha_role().set_yielding(false);
    if handed {
        tracing::info!("handed the active role over");
    } else {
        tracing::warn!(
            ?wait,
            "no other member took the active role; this NameNode keeps it"
        );
    }
}
