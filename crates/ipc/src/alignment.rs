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

use std::fmt::Debug;
use std::future::Future;

/// What a server tells its clients about its state.
pub trait AlignmentContext: Send + Sync + Debug {
    /// The state id written into each response header.
    fn last_seen_state_id(&self) -> i64;
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
