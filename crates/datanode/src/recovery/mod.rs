//! Block recovery on the DataNode (lease recovery of a file whose writer died).
//!
//! - [`sync`]: which replicas take part and the length they agree on (pure).
//! - [`replica`]: InterDatanodeProtocol's two steps against the local dataset
//!   (`initReplicaRecovery`, `updateReplicaUnderRecovery`).
//! - [`service`]: the InterDatanodeProtocol RPC service; [`router`] serves it beside
//!   ClientDatanodeProtocol on the IPC port.
//! - [`primary`]: what the primary DataNode does on DNA_RECOVERBLOCK: ask every replica,
//!   decide, update each, then `commitBlockSynchronization` to the NameNode.

pub mod command;
pub mod primary;
pub mod replica;
pub mod router;
pub mod service;
pub mod sync;

pub use command::{on_recovery_command, set_namenode, set_namenodes};
pub use primary::recover_block;
pub use router::DatanodeIpcRouter;
pub use service::InterDatanodeService;
