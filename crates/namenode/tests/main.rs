//! Every integration test of this crate, as one test binary: one module per file
//! beside this one (a binary per file made CI link dozens of large executables).
//! Run one file's tests with `cargo test -p <crate> --test integration <file>::`.

mod checkpoint;
mod common;
mod datanode_protocol;
mod durability;
mod start;
