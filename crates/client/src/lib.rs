//! rhdfs-client: an HDFS client speaking Hadoop's ClientProtocol and DataTransferProtocol.
//!
//! - [`FileSystem`]: connect (`hdfs://host:port`, `hdfs://<nameservice>`, `fs.defaultFS`),
//!   metadata calls, globbing, trash, file checksums; [`failover`]: NameNode failover in an HA
//!   nameservice.
//! - [`FileReader`] (from [`FileSystem::open`]): sequential, positioned and range reads with
//!   replica failover and bad-block reporting; short-circuit reads of local replicas
//!   (`short_circuit`) with a TCP fallback.
//! - [`FileWriter`] (from [`FileSystem::create`] / [`FileSystem::append`]): packets with chunk
//!   checksums, a bounded queue of unacknowledged packets, hflush/hsync, pipeline recovery,
//!   complete() with Hadoop's retries.

pub mod acl;
mod checksum;
pub mod config;
mod datanode;
pub mod error;
pub mod failover;
mod filesystem;
pub mod glob;
mod globber;
mod hedge_stats;
mod lease;
pub mod path;
mod peer_cache;
pub mod quota;
mod read;
pub mod retry;
mod short_circuit;
/// UTC calendar formatting (moved to `rhdfs_conf`, where the servers' web pages reach it).
pub use rhdfs_conf::time;
mod trash;
mod truncate;
pub mod types;
mod write;

pub use config::{ClientConf, ReplaceDatanodeOnFailure, ReplacePolicy};
pub use error::{ClientError, Result};
pub use filesystem::{CreateOptions, FileSystem};
pub use read::FileReader;
pub use rhdfs_transfer::FileChecksum;
pub use short_circuit::ShortCircuitConf;
pub use types::{
    BlockLocation, ContentSummary, FileStatus, FsStats, STORAGE_TYPE_NAMES, ServerDefaults,
    TypeUsage, permission_string,
};
pub use write::FileWriter;
