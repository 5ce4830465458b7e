//! Every integration test of this crate, as one test binary: one module per file
//! beside this one (a binary per file made CI link dozens of large executables).
//! Run one file's tests with `cargo test -p <crate> --test integration <file>::`.

/// The minicluster and file helpers of `rhdfs-testkit`.
mod common {
    pub use rhdfs_testkit::cluster::*;
}

mod cluster_io;
mod lease_recovery;
mod namenode_restart;
mod read_paths;
mod safe_mode;
mod short_circuit;
mod short_circuit_shm;
