//! Raft's network over rhdfs's own IPC: openraft's RPCs (append entries, vote, snapshot
//! chunks) are calls of the Hadoop-RPC protocol `org.apache.rhdfs.raft.RaftProtocol`
//! (methods `appendEntries`, `requestVote`, `installSnapshot`; messages in
//! `rhdfs_proto::raft`, a log entry carried as its Raft log record's payload), so Raft
//! shares a NameNode's RPC port with its other protocols.
//!
//! - [`IpcNetwork`] (openraft's `RaftNetworkFactory`) keeps one lazily connected
//!   `RpcClient` per peer, reconnecting after a failure; each call is bounded by openraft's
//!   `RPCOption` time limit. A peer that cannot be reached, or whose Raft is not serving, is
//!   `Unreachable` to openraft (it backs off); an answer that does not decode is a
//!   `NetworkError`; no answer in time is a `Timeout`.
//! - [`RaftService`] is the server side, an `RpcService` for a `ProtocolRouter` route
//!   ([`RAFT_PROTOCOL`]); its `Raft` is attached once built (a server is bound first, to learn
//!   its port).
//! - [`Faults`], a fault hook for tests, given to both: it cuts the member's Raft traffic
//!   with chosen peers in both directions.

mod client;
mod error;
mod fault;
mod service;
mod wire;

pub use client::{IpcConnection, IpcNetwork};
pub use error::{NOT_SERVING, NetError};
pub use fault::Faults;
pub use rhdfs_proto::protocols::RAFT_PROTOCOL;
pub use service::RaftService;
pub use wire::{APPEND_ENTRIES, INSTALL_SNAPSHOT, REQUEST_VOTE};
