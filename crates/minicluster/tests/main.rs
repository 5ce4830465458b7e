//! Every integration test of this crate, as one test binary: one module per file
//! beside this one (a binary per file made CI link dozens of large executables).
//! Run one file's tests with `cargo test -p <crate> --test integration <file>::`.

mod common;

mod acls_xattrs;
mod audit_log;
mod bad_input;
mod blocks_on_disk;
mod datanode_overview;
mod decommission_health;
mod delete_under_load;
mod directory_scan;
mod fsck_move;
mod harness_probe;
mod hdfs_native_client;
mod include_list;
mod java_fsshell;
mod java_pipeline_recovery;
mod java_safe_mode;
mod java_webhdfs;
mod metrics_jmx;
mod ops_views;
mod path_through_file;
mod python_clients;
mod quotas;
mod rack_spread;
mod racks;
mod redundancy;
mod report_leases;
mod restart_delete_delay;
mod safe_mode_work;
mod slow_node;
mod startup_progress;
mod trash_emptier;
mod truncate_concat;
mod volume_failure;
mod web_ui;
mod webhdfs;
mod webhdfs_acls;
mod webhdfs_audit;
mod webhdfs_ops;
