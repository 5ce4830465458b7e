//! The rhdfs NameNode: the namespace (inode tree, permissions, leases), the
//! ClientProtocol handlers, and the process that joins them to the block manager.
//!
//! - [`fsdir`]: the inode tree, paths, permission checks, content summaries.
//! - [`namespace`]: the namespace state and its operations; every mutation is an
//!   [`edit::EditOp`] applied in one place (`Namespace::log_and_apply`).
//! - [`namesystem`]: the namespace behind its lock plus the block manager.
//! - [`rpc`]: ClientProtocol handlers; [`rpc::errors`] maps errors to Java exceptions.
//! - [`server`]: `NameNode::start` and the handle; [`storage`]: the name directories.

pub mod audit;
pub mod block_recoveries;
mod codec;
pub mod edit;
pub mod edit_codec;
pub mod error;
pub mod fsck;
pub mod fsdir;
pub mod ha;
pub mod http;
pub mod lease_recovery;
pub mod leases;
pub mod namespace;
pub mod namesystem;
pub mod persist;
pub mod retry_cache;
pub mod rpc;
pub mod safemode;
pub mod server;
pub mod startup;
pub mod storage;
pub mod trash_emptier;

pub use error::{FsError, FsResult};
pub use server::{NameNode, NameNodeError, NameNodeHandle, format};
