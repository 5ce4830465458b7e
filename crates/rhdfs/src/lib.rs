//! The part of the `rhdfs` command line that is also a library: the FsShell (`dfs`), so the
//! integration tests can run it in-process and compare it with the stock Java FsShell, and
//! `haadmin`. The binary (`main.rs`) uses them as `rhdfs::dfs` and `rhdfs::haadmin`.

pub mod dfs;
pub mod haadmin;
