//! The part of the `rhdfs` command line that is also a library: the FsShell (`dfs`), so the
//! integration tests can run it in-process and compare it with the stock Java FsShell. The
//! binary (`main.rs`) uses it as `rhdfs::dfs`.

pub mod dfs;
