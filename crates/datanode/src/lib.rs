//! rhdfs-datanode: the DataNode — volumes and replicas on disk, the data transfer server, and the
//! actor that registers with the NameNode, heartbeats and reports blocks.

pub mod actor;
pub mod block_scanner;
pub mod checksum;
pub mod datanode;
pub mod dataset;
pub mod error;
pub mod faults;
pub mod http;
pub mod ipc_service;
pub mod meta;
pub mod metrics;
pub mod notify;
pub mod reader;
pub mod recovery;
pub mod replica;
pub mod scan;
pub mod scanners;
pub mod short_circuit_registry;
pub(crate) mod vectored;
pub mod volume;
pub mod volume_check;
pub mod writer;
pub mod xceiver;

pub use checksum::{ChecksumSpec, ChecksumType};
pub use datanode::{DataNode, DataNodeHandle};
pub use dataset::Dataset;
pub use error::{DataNodeError, StorageError};
pub use faults::{FaultHooks, ReplicaFiles};
pub use replica::{ReplicaInfo, ReplicaState};

#[cfg(test)]
mod storage_tests;

#[cfg(test)]
mod ipc_tests;
