//! Operations of the [`BlockManager`](crate::manager::BlockManager) (and of the locked
//! state it guards) that belong to one concern, kept apart from that concern's plain types
//! and queues so those never import the manager: types and queues at the bottom, the locked
//! state above them, these operations on top.

mod decommission;
mod deletion;
mod failover;
mod postponed;
mod racks;
pub(crate) mod reload;
mod repl_queues;
mod report_leases;
pub(crate) mod reports;
mod slow_nodes;
mod topology;
mod volume_failures;
