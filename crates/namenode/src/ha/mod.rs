//! High availability (issue 14): NameNodes of one nameservice replicate the edit log through
//! Raft (`rhdfs-raftlog`, openraft) and the Raft leader is the active NameNode.
//!
//! - [`batch`]: a Raft entry is one group commit's edit records with their txids.
//! - [`ship`]: the active's journal ([`ship::RaftJournal`]) queues each edit as the
//!   namespace applies it; [`ship::EditShipper`] sends the queue to Raft one batch at a time
//!   and a mutation is answered once its batch is committed (durable on a majority).
//! - [`apply`]: every member applies committed batches in log order: a standby replays them
//!   into its namespace and block map; every member appends them to its own edit log, so its
//!   checkpoints and restarts work as without HA. On the active a committed edit was already
//!   applied when it was logged, and it is checked against what the active queued: an edit of
//!   another leader at a txid this NameNode had used means its namespace diverged, and it
//!   stops serving ([`Role::Failed`]) until restarted.
//! - [`member`]: the Raft member on the NameNode's RPC port and the task that turns Raft
//!   leadership into the active role: a leader is active only once it applied every
//!   committed edit, and stops being active as soon as Raft says it is not the leader or no
//!   majority acknowledged it for an election timeout (fencing: a partitioned active cannot
//!   acknowledge a mutation, and refuses new ones).
//!
//! - [`observer`]: a standby made an observer (`haadmin -transitionToObserver`) serves
//!   reads to clients of ObserverReadProxyProvider once it applied their state id; every
//!   response header carries the NameNode's state id. An observer never becomes active: it
//!   does not campaign, and hands Raft leadership away should it win anyway.
//!
//! What a standby refuses, and the words of the refusal, are [`Role::check`]'s.

pub mod apply;
pub(crate) mod ask;
pub mod batch;
pub mod bootstrap;
pub mod journal_node;
pub mod journal_snapshots;
pub mod member;
pub mod observer;
pub mod peer_image;
pub mod ship;
pub mod snapshot;
pub mod transition;

use std::sync::atomic::{AtomicU8, Ordering};

use crate::error::{FsError, FsResult};

/// The HA state of a NameNode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Serves clients: the only NameNode without HA, the Raft leader with HA.
    Active,
    /// Applies the active's edits; refuses client operations.
    Standby,
    /// A standby that serves reads (Hadoop's observer NameNode) to clients of
    /// ObserverReadProxyProvider, honouring their state ids (`observer`); never becomes
    /// active.
    Observer,
    /// Its namespace diverged from the replicated log (edits it applied were not committed);
    /// refuses everything until restarted.
    Failed,
}

/// Hadoop's operation categories (what a standby may serve).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OperationCategory {
    Read,
    Write,
    /// Served in every state (HA state queries).
    Unchecked,
}

impl OperationCategory {
    fn name(self) -> &'static str {
        match self {
            OperationCategory::Read => "READ",
            OperationCategory::Write => "WRITE",
            OperationCategory::Unchecked => "UNCHECKED",
        }
    }
}

impl Role {
    /// The state as Hadoop names it in messages (`HAServiceState`'s names).
    pub fn state_name(self) -> &'static str {
        match self {
            Role::Active => "active",
            Role::Observer => "observer",
            Role::Standby | Role::Failed => "standby",
        }
    }

    /// Whether an operation of `category` may run in this state; a standby's refusal is
    /// Hadoop's StandbyException and message, so stock clients fail over. An observer
    /// serves reads (Hadoop's stale reads, always allowed on an observer).
    pub fn check(self, category: OperationCategory) -> FsResult<()> {
        if self == Role::Active
            || category == OperationCategory::Unchecked
            || (self == Role::Observer && category == OperationCategory::Read)
        {
            return Ok(());
        }
        Err(FsError::Standby(format!(
            "Operation category {} is not supported in state {}. Visit https://s.apache.org/sbnn-error",
            category.name(),
            self.state_name()
        )))
    }
}

/// The role, shared by the RPC services, the namesystem's background tasks and the Raft
/// side. A NameNode without HA is active from the start.
#[derive(Debug)]
pub struct RoleCell {
    role: AtomicU8,
    /// Set while a leader hands the active role over (`transition`): it does not take the
    /// active role even though Raft still makes it leader.
    yielding: std::sync::atomic::AtomicBool,
    /// Set while a standby holds its elections for another member's hand-over
    /// (`transition`).
    holding: std::sync::atomic::AtomicBool,
    /// What this NameNode did with reads as an observer.
    observer_reads: observer::ObserverReads,
}

impl Default for RoleCell {
    fn default() -> Self {
        RoleCell {
            role: AtomicU8::new(0),
            yielding: std::sync::atomic::AtomicBool::new(false),
            holding: std::sync::atomic::AtomicBool::new(false),
            observer_reads: observer::ObserverReads::default(),
        }
    }
}

impl RoleCell {
    pub fn get(&self) -> Role {
        match self.role.load(Ordering::Acquire) {
            0 => Role::Active,
            1 => Role::Standby,
            3 => Role::Observer,
            _ => Role::Failed,
        }
    }

    fn code(role: Role) -> u8 {
        match role {
            Role::Active => 0,
            Role::Standby => 1,
            Role::Failed => 2,
            Role::Observer => 3,
        }
    }

    /// Sets the role; `Failed` is final.
    pub fn set(&self, role: Role) {
        let v = Self::code(role);
        let _ = self
            .role
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |old| {
                (old != 2).then_some(v)
            });
    }

    /// Sets the role to `to` only if it is `from`; whether it did.
    pub fn replace(&self, from: Role, to: Role) -> bool {
        from != Role::Failed
            && self
                .role
                .compare_exchange(
                    Self::code(from),
                    Self::code(to),
                    Ordering::AcqRel,
                    Ordering::Acquire,
                )
                .is_ok()
    }

    /// Reads served, waited for and refused as an observer.
    pub fn observer_reads(&self) -> &observer::ObserverReads {
        &self.observer_reads
    }

    /// Whether the member is handing the active role over.
    pub fn yielding(&self) -> bool {
        self.yielding.load(Ordering::Acquire)
    }

    /// Starts (true) or ends a hand-over; returns whether one was already going on.
    pub fn set_yielding(&self, on: bool) -> bool {
        self.yielding.swap(on, Ordering::AcqRel)
    }

    /// Whether the member holds its elections while another hands the active role over.
    pub fn holding(&self) -> bool {
        self.holding.load(Ordering::Acquire)
    }

    /// Starts (true) or ends a hold; returns whether one was already going on.
    pub fn set_holding(&self, on: bool) -> bool {
        self.holding.swap(on, Ordering::AcqRel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_standby_refuses_reads_and_writes_with_hadoops_message() {
        let e = Role::Standby.check(OperationCategory::Read).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Operation category READ is not supported in state standby. Visit https://s.apache.org/sbnn-error"
        );
        assert!(matches!(
            Role::Standby.check(OperationCategory::Write),
            Err(FsError::Standby(m)) if m.contains("category WRITE")
        ));
        assert!(Role::Standby.check(OperationCategory::Unchecked).is_ok());
        assert!(Role::Active.check(OperationCategory::Write).is_ok());
        assert!(Role::Failed.check(OperationCategory::Read).is_err());
    }

    #[test]
    fn an_observer_serves_reads_and_refuses_writes_with_hadoops_message() {
        assert!(Role::Observer.check(OperationCategory::Read).is_ok());
        assert!(Role::Observer.check(OperationCategory::Unchecked).is_ok());
        let e = Role::Observer.check(OperationCategory::Write).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Operation category WRITE is not supported in state observer. Visit https://s.apache.org/sbnn-error"
        );
    }

    #[test]
    fn replace_moves_only_from_the_given_role() {
        let r = RoleCell::default();
        r.set(Role::Standby);
        assert!(!r.replace(Role::Active, Role::Observer));
        assert!(r.replace(Role::Standby, Role::Observer));
        assert_eq!(r.get(), Role::Observer);
        r.set(Role::Failed);
        assert!(!r.replace(Role::Failed, Role::Standby));
        assert_eq!(r.get(), Role::Failed);
    }

    #[test]
    fn failed_is_final() {
        let r = RoleCell::default();
        assert_eq!(r.get(), Role::Active);
        r.set(Role::Standby);
        assert_eq!(r.get(), Role::Standby);
        r.set(Role::Failed);
        r.set(Role::Active);
        assert_eq!(r.get(), Role::Failed);
    }
}
