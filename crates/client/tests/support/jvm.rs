//! The Java FsShell runner of `crates/minicluster/tests/common/java.rs`, shared with this crate's
//! tests (which compare it with `rhdfs dfs`, compiled here).

use std::path::{Path, PathBuf};

/// Repository root (two levels above this crate's manifest), as java.rs expects of its parent.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
}

#[path = "../../../minicluster/tests/common/java.rs"]
pub mod java;
