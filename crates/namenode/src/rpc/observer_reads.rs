//! Reads on an observer NameNode (`ha::observer`): which ClientProtocol reads wait for the
//! client's state id, and the wait itself.
//!
//! [`COORDINATED`] (`rhdfs_proto::client_methods::COORDINATED_READS`) are the methods Hadoop marks `@ReadOnly(isCoordinated = true)`: an
//! observer serves them only once it applied the client's state id. Its other reads
//! (`@ReadOnly` without coordination: getFsStats, getDatanodeReport, …) are served at once;
//! the active-only ones (`@ReadOnly(activeOnly = true)`: msync, getQuotaUsage) a client of
//! ObserverReadProxyProvider never sends to an observer (msync refuses there).

use std::sync::Arc;

use rhdfs_ipc::RpcError;
use rhdfs_raftlog::net::RaftService;

use super::ClientProtocolService;
use crate::ha::batch::EditRaft;
use crate::ha::observer::{Admit, ObserverError, ObserverSettings, admit, wait_until_applied};

/// The served ClientProtocol methods Hadoop marks `@ReadOnly(isCoordinated = true)` (one
/// list, shared with the client that sends them to observers).
pub use rhdfs_proto::client_methods::COORDINATED_READS as COORDINATED;

/// Whether an observer waits for the client's state id before serving `method`.
pub fn is_coordinated(method: &str) -> bool {
    rhdfs_proto::client_methods::is_coordinated_read(method)
}

/// What an HA NameNode needs to serve reads as an observer.
pub struct ObserverGate {
    pub settings: ObserverSettings,
    /// The member's Raft service: its metrics change after every applied entry.
    pub raft: Arc<RaftService<EditRaft>>,
}

impl From<ObserverError> for RpcError {
    fn from(e: ObserverError) -> Self {
        RpcError::new(e.class_name(), e.to_string())
    }
}

impl ClientProtocolService {
    /// On an observer, before a coordinated read: returns once the namespace applied the
    /// client's state id (`rhdfs_ipc::alignment::client_state_id`), else Hadoop's refusal.
    pub(super) async fn align_observer_read(&self, method: &str) -> Result<(), RpcError> {
        if !is_coordinated(method) {
            return Ok(());
        }
        let reads = self.fs.ha_role().observer_reads();
        let result = self.wait_for_client_state().await;
        if result.is_err() {
            reads.count_refused();
        }
        result.map_err(RpcError::from)
    }

    async fn wait_for_client_state(&self) -> Result<(), ObserverError> {
        let bm = self.fs.block_manager();
        let settings = self
            .observer
            .as_ref()
            .map_or(ObserverSettings::for_wait(std::time::Duration::ZERO), |g| {
                g.settings
            });
        let client = rhdfs_ipc::alignment::client_state_id();
        let target = match admit(client, bm.last_txid(), settings.max_lag)? {
            Admit::Serve => return Ok(()),
            Admit::WaitFor(t) => t,
        };
        let too_far = || ObserverError::TooFarBehind {
            server: bm.last_txid(),
            client: target,
        };
        let Some(mut changes) = self
            .observer
            .as_ref()
            .and_then(|g| g.raft.raft())
            .map(|r| r.metrics())
        else {
            return Err(too_far());
        };
        self.fs.ha_role().observer_reads().count_waited();
        wait_until_applied(
            target,
            || bm.last_txid(),
            &mut changes,
            &**self.fs.clock(),
            settings.wait,
        )
        .await
        .map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rpc::{MethodKind, SERVED_METHODS, method_kind};

    #[test]
    fn coordinated_methods_are_served_reads() {
        for m in COORDINATED {
            assert!(SERVED_METHODS.contains(m), "{m} is not served");
            assert_eq!(method_kind(m), Some(MethodKind::Read), "{m}");
        }
        assert!(!is_coordinated("getFsStats"));
        assert!(!is_coordinated("msync"));
        assert!(!is_coordinated("getQuotaUsage"));
    }
}
