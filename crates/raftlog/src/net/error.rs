//! [`NetError`]: why a Raft RPC over IPC failed, and how openraft is told.

use std::time::Duration;

use openraft::BasicNode;
use openraft::error::{NetworkError, RPCError, Timeout, Unreachable};
use openraft::network::RPCTypes;
use rhdfs_ipc::IpcError;
use rhdfs_ipc::exceptions::NO_SUCH_PROTOCOL;

/// The exception class a [`crate::net::RaftService`] answers with when it cannot serve a
/// call: no `Raft` attached yet, the `Raft` stopped, or the caller's traffic is cut.
pub const NOT_SERVING: &str = "org.apache.rhdfs.raft.RaftNotServingException";

/// A failed Raft RPC, as the calling side sees it.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// No connection to the peer (refused, reset, closed, connect timed out).
    #[error("raft peer {target} at {addr} unreachable: {source}")]
    Unreachable {
        target: u64,
        addr: String,
        #[source]
        source: IpcError,
    },
    /// No answer within the call's time limit.
    #[error("raft {method} to peer {target} timed out after {after:?}")]
    Timeout {
        target: u64,
        method: &'static str,
        after: Duration,
    },
    /// The fault hook cuts traffic with this peer.
    #[error("raft traffic with peer {peer} is cut")]
    Cut { peer: u64 },
    /// The peer answered but its Raft does not serve (not started, stopped, or the peer
    /// does not speak the protocol).
    #[error("raft peer {target} is not serving: {class}: {message}")]
    NotServing {
        target: u64,
        class: String,
        message: String,
    },
    /// The peer failed the call with another exception.
    #[error("raft peer {target} failed {method}: {class}: {message}")]
    Remote {
        target: u64,
        method: &'static str,
        class: String,
        message: String,
    },
    /// A message does not decode, or breaks the protocol's rules.
    #[error("malformed raft {what}: {reason}")]
    Malformed { what: &'static str, reason: String },
}

impl NetError {
    /// The error of a call to `target` at `addr` that the IPC client returned.
    pub(crate) fn from_ipc(target: u64, addr: &str, method: &'static str, e: IpcError) -> Self {
        match e {
            IpcError::Remote {
                class_name,
                message,
            } => {
                if class_name == NOT_SERVING || class_name == NO_SUCH_PROTOCOL {
                    NetError::NotServing {
                        target,
                        class: class_name,
                        message,
                    }
                } else {
                    NetError::Remote {
                        target,
                        method,
                        class: class_name,
                        message,
                    }
                }
            }
            IpcError::Protocol(reason) => NetError::Malformed {
                what: "response",
                reason,
            },
            source @ (IpcError::Io(_) | IpcError::Closed) => NetError::Unreachable {
                target,
                addr: addr.to_owned(),
                source,
            },
        }
    }

    /// As openraft's error for an RPC of kind `action` from `me` to `target`: a peer that is
    /// down, not serving or cut off is `Unreachable` (openraft backs off before trying it
    /// again); a call that got no answer in time is a `Timeout`; anything else (a bad answer,
    /// a remote failure) is a `NetworkError`.
    pub(crate) fn into_rpc<E: std::error::Error>(
        self,
        me: u64,
        target: u64,
        action: RPCTypes,
    ) -> RPCError<u64, BasicNode, E> {
        match self {
            NetError::Timeout { after, .. } => RPCError::Timeout(Timeout {
                action,
                id: me,
                target,
                timeout: after,
            }),
            NetError::Unreachable { .. } | NetError::Cut { .. } | NetError::NotServing { .. } => {
                RPCError::Unreachable(Unreachable::new(&self))
            }
            NetError::Remote { .. } | NetError::Malformed { .. } => {
                RPCError::Network(NetworkError::new(&self))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io;

    use openraft::error::RaftError;

    use super::*;

    type Rpc = RPCError<u64, BasicNode, RaftError<u64>>;

    fn map(e: IpcError) -> Rpc {
        NetError::from_ipc(2, "h:1", "appendEntries", e).into_rpc(1, 2, RPCTypes::AppendEntries)
    }

    #[test]
    fn dead_peers_are_unreachable_and_bad_answers_network_errors() {
        let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
        assert!(matches!(map(IpcError::Io(refused)), Rpc::Unreachable(_)));
        assert!(matches!(map(IpcError::Closed), Rpc::Unreachable(_)));
        let remote = |class: &str| IpcError::Remote {
            class_name: class.into(),
            message: "m".into(),
        };
        assert!(matches!(map(remote(NOT_SERVING)), Rpc::Unreachable(_)));
        assert!(matches!(map(remote(NO_SUCH_PROTOCOL)), Rpc::Unreachable(_)));
        assert!(matches!(
            map(remote("java.io.IOException")),
            Rpc::Network(_)
        ));
        assert!(matches!(
            map(IpcError::Protocol("bad frame".into())),
            Rpc::Network(_)
        ));
        let cut: Rpc = NetError::Cut { peer: 2 }.into_rpc(1, 2, RPCTypes::Vote);
        assert!(matches!(cut, Rpc::Unreachable(_)));
        let slow: Rpc = NetError::Timeout {
            target: 2,
            method: "requestVote",
            after: Duration::from_millis(5),
        }
        .into_rpc(1, 2, RPCTypes::Vote);
        match slow {
            Rpc::Timeout(t) => assert_eq!((t.id, t.target), (1, 2)),
            other => panic!("not a timeout: {other}"),
        }
    }
}
