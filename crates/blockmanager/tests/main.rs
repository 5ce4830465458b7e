//! Every integration test of this crate, as one test binary: one module per file
//! beside this one (a binary per file made CI link dozens of large executables).
//! Run one file's tests with `cargo test -p <crate> --test integration <file>::`.

mod common;

mod concurrency;
mod delete_path;
mod heartbeat_pause;
mod manager;
mod mis_replicated;
mod orphans;
mod reconstruction;
mod redundancy;
mod report_diff;
mod scheduled;
mod views;
