//! Operations of the [`BlockManager`](crate::manager::BlockManager) (and of the locked
//! state it guards) that belong to one concern, kept apart from that concern's plain types
//! and queues so those never import the manager: types and queues at the bottom, the locked
//! state above them, these operations on top.

mod decommission;
mod postponed;
mod racks;
mod report_leases;
mod volume_failures;
