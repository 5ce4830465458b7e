//! Every integration test of this crate, as one test binary: one module per file
//! beside this one (a binary per file made CI link dozens of large executables).
//! Run one file's tests with `cargo test -p <crate> --test integration <file>::`.

mod common;

mod acl_shell;
mod admin_cli;
mod bench_nn;
mod daemon_logs;
mod datanode_chaos;
mod datanode_volume_failure;
mod debug_cli;
mod dfs_shell;
mod dfs_stdout;
mod fsshell_vs_java;
mod ha_failover;
mod ha_journal;
mod ha_observer;
mod ha_observer_client;
mod ha_process;
mod ha_raft;
mod http_connections;
mod interop;
mod namenode_crash_before_sync;
mod namenode_crash_loop;
mod namenode_pause;
mod namenode_rollback;
mod quota_cli;
