//! The Raft log of a highly available NameNode, for openraft 0.9: [`RaftLogStore`]
//! (openraft's `RaftLogStorage`) keeps each Raft entry as one record of rhdfs's edit-log
//! format — the record's txid is the entry's log index, its payload the entry's term and
//! data — in segment files of its own, written through the edit log crate's file layer
//! (preallocated segments, fdatasync per group commit, torn-tail rules). [`AppStateMachine`]
//! is openraft's `RaftStateMachine` over an application ([`StateMachineApp`]) that applies
//! committed entries and builds and restores snapshots; the NameNode will be one, [`kv`]
//! is a small one for tests. [`net`] carries openraft's RPCs over rhdfs's IPC as the
//! protocol `org.apache.rhdfs.raft.RaftProtocol`, on the same port as a NameNode's other
//! protocols. [`split_vote`] starts a lost candidacy's next election at a random moment,
//! so that members whose timers tick together do not split every vote.
//!
//! Durability: an append is reported to openraft (its `LogFlushed` callback) only after the
//! writer thread's fdatasync of the group it joined; a vote, a purge point and a truncation
//! are durable when their call returns. No call blocks an async executor thread: the disk
//! is touched by the writer thread, and by `open` on a blocking thread.

mod codec;
mod dir_lock;
mod error;
pub mod kv;
pub mod net;
mod segments;
mod snapshot_file;
pub mod split_vote;
mod state_machine;
mod store;
mod writer;

pub use codec::{EntryData, Meta, decode_entry, encode_entry};
pub use error::{RaftLogError, Result};
pub use segments::{META_FILE, segment_name};
pub use state_machine::{
    AppSnapshot, AppStateMachine, SnapshotBuilder, SnapshotJob, StateMachineApp,
};
pub use store::{LogReader, LogTypeConfig, RaftLogStore, StoreOptions};
