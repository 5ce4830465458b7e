//! [`Faults`]: a fault hook for tests that cuts one member's Raft traffic by peer.

use std::collections::BTreeSet;
use std::sync::Arc;

use parking_lot::RwLock;

use crate::net::error::NetError;

/// The peers a member's Raft traffic is cut from. Given to the member's [`crate::net::IpcNetwork`]
/// (calls to a cut peer fail as unreachable, before anything is sent) and to its
/// [`crate::net::RaftService`] (calls from a cut peer are refused), so one member's `Faults`
/// cuts both directions. Clones share the set; an empty set (the default) cuts nothing.
#[derive(Debug, Clone, Default)]
pub struct Faults {
    cut: Arc<RwLock<BTreeSet<u64>>>,
}

impl Faults {
    /// Cuts nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// Cuts traffic with `peer`, both ways.
    pub fn cut(&self, peer: u64) {
        self.cut.write().insert(peer);
    }

    /// Cuts traffic with each of `peers`.
    pub fn cut_all(&self, peers: impl IntoIterator<Item = u64>) {
        self.cut.write().extend(peers);
    }

    /// Restores traffic with `peer`.
    pub fn heal(&self, peer: u64) {
        self.cut.write().remove(&peer);
    }

    /// Restores traffic with every peer.
    pub fn heal_all(&self) {
        self.cut.write().clear();
    }

    /// Whether traffic with `peer` is cut.
    pub fn is_cut(&self, peer: u64) -> bool {
        self.cut.read().contains(&peer)
    }

    /// `Err(Cut)` when traffic with `peer` is cut.
    pub(crate) fn check(&self, peer: u64) -> Result<(), NetError> {
        if self.is_cut(peer) {
            Err(NetError::Cut { peer })
        } else {
            Ok(())
        }
    }
}
