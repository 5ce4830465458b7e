//! Shared set-up: the crate's `testing` module (also used by the NameNode's tests).

pub use rhdfs_blockmanager::testing::*;
