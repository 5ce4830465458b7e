//! Integration tests of rhdfs-raftlog, one binary.

mod cluster;
mod common;
mod conformance;
mod crash;
mod state_machine;
mod tcp_cluster;
