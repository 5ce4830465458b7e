//! Every integration test of this crate, as one test binary: one module per file
//! beside this one (a binary per file made CI link dozens of large executables).
//! Run one file's tests with `cargo test -p <crate> --test integration <file>::`.

mod common;
#[allow(dead_code)]
#[path = "../../rhdfs/src/dfs/mod.rs"]
mod dfs;
#[allow(dead_code)]
#[path = "support/jvm.rs"]
mod jvm;
#[allow(dead_code)]
#[path = "support/seqfile.rs"]
mod seqfile;

mod cluster_io;
mod dfs_shell;
mod fsshell_vs_java;
mod interop;
mod lease_recovery;
mod read_paths;
mod safe_mode;
