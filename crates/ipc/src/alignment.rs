//! State alignment between a server and its clients (Hadoop's `AlignmentContext`): the
//! state id a client sends in `RpcRequestHeaderProto.stateId` (8) and the one a server
//! answers in `RpcResponseHeaderProto.stateId` (9).
//!
//! A server given an [`AlignmentContext`] (`ServerConfig::alignment`) writes its
//! [`AlignmentContext::last_seen_state_id`] into the header of every response it sends, as
//! Hadoop's server does; a NameNode answers the last transaction id it applied, so a client
//! of ObserverReadProxyProvider knows how far a read of its must have been applied.
//! The state id of the request a handler is running for is [`client_state_id`] (a
//! task-local set around each call, as `caller` carries the caller context).
//!
//! Client side, [`ClientAlignment`] (Hadoop's `ClientGSIContext`): the highest state id a
//! client saw in any successful response, sent in every request header. One is shared by the
//! connections of a client to every NameNode of a nameservice (`ClientConfig::alignment`),
//! so a read sent to an observer carries the state of the client's own writes on the active.

use std::fmt::Debug;
use std::future::Future;
use std::sync::atomic::{AtomicI64, Ordering};

/// What a server tells its clients about its state.
pub trait AlignmentContext: Send + Sync + Debug {
    /// The state id written into each response header.
    fn last_seen_state_id(&self) -> i64;
}

/// A client's view of the server state (Hadoop's `ClientGSIContext`): the highest state id
/// seen in a response, [`i64::MIN`] before the first (what Hadoop's client sends then; an
/// observer serves such a client at once). Shared (`Arc`) by every connection of one client.
#[derive(Debug)]
pub struct ClientAlignment {
    last_seen: AtomicI64,
}

impl Default for ClientAlignment {
    fn default() -> Self {
        Self::new()
    }
}

impl ClientAlignment {
    /// A client that has seen no response yet.
    pub fn new() -> Self {
        ClientAlignment {
            last_seen: AtomicI64::new(i64::MIN),
        }
    }

    /// The state id the next request carries.
    pub fn last_seen_state_id(&self) -> i64 {
        self.last_seen.load(Ordering::Acquire)
    }

    /// Takes in the state id of a successful response: kept when it is the highest seen.
    pub fn receive_response_state(&self, state_id: i64) {
        self.last_seen.fetch_max(state_id, Ordering::AcqRel);
    }
}

tokio::task_local! {
    static CLIENT_STATE_ID: Option<i64>;
}

/// The state id the client sent with the call this task runs for; None when the client
/// sent none (a client without an alignment context) or outside a call.
pub fn client_state_id() -> Option<i64> {
    CLIENT_STATE_ID.try_with(|s| *s).ok().flatten()
}

/// Runs `f` as a call whose request carried `state_id`.
pub async fn with_client_state_id<F: Future>(state_id: Option<i64>, f: F) -> F::Output {
    CLIENT_STATE_ID.scope(state_id, f).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_keeps_the_highest_state_id_it_saw() {
        let a = ClientAlignment::new();
        assert_eq!(a.last_seen_state_id(), i64::MIN);
        a.receive_response_state(7);
        assert_eq!(a.last_seen_state_id(), 7);
        // An observer behind the active answers an older state: the client keeps its own.
        a.receive_response_state(3);
        assert_eq!(a.last_seen_state_id(), 7);
        a.receive_response_state(12);
        assert_eq!(a.last_seen_state_id(), 12);
    }

    #[tokio::test]
    async fn the_state_id_is_the_calls_only_inside_it() {
        assert_eq!(client_state_id(), None);
        assert_eq!(
            with_client_state_id(Some(42), async { client_state_id() }).await,
            Some(42)
        );
        assert_eq!(
            with_client_state_id(None, async { client_state_id() }).await,
            None
        );
        assert_eq!(client_state_id(), None);
    }
}
