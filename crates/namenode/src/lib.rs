//! The rhdfs NameNode: the namespace (inode tree, permissions, leases) and the
//! ClientProtocol handlers, with the block manager behind them.

pub mod edit;
pub mod error;
pub mod fsdir;
pub mod leases;
pub mod namespace;

pub use error::{FsError, FsResult};
