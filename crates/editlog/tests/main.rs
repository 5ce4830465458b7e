//! Every integration test of this crate, as one test binary: one module per file
//! beside this one (a binary per file made CI link dozens of large executables).
//! Run one file's tests with `cargo test -p <crate> --test integration <file>::`.

mod common;

mod crash;
mod dir_failure;
mod finalized;
mod group_commit;
mod image;
mod log;
mod prop;
mod recovery;
