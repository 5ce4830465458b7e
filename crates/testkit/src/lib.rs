//! What more than one crate's integration tests need, as a dev-dependency (never compiled
//! into a daemon): [`java`] runs the stock Apache Hadoop FsShell, [`seqfile`] writes the
//! inputs of `-text`, [`cluster`] starts a small minicluster and moves file contents through
//! the rhdfs client, [`ports`] reserves ports a restarted daemon can have back.

pub mod cluster;
pub mod java;
pub mod ports;
pub mod seqfile;

use std::path::{Path, PathBuf};

/// The workspace root (two levels above this crate's manifest); the Java client's default
/// cache lives there.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
}
