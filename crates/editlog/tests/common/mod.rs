//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use rhdfs_editlog::{EditLog, EditRecord, RecoveryMode, StorageDirs, StorageVersion};

/// `n` formatted storage roots under `base`.
pub fn formatted_roots(base: &Path, n: usize) -> Vec<PathBuf> {
    let roots: Vec<PathBuf> = (0..n).map(|i| base.join(format!("name{i}"))).collect();
    let dirs = StorageDirs::new(roots.clone()).unwrap();
    dirs.format(
        &StorageVersion::new(1, "CID-test", "BP-1-127.0.0.1-1", 0),
        false,
    )
    .unwrap();
    roots
}

pub fn open(roots: &[PathBuf], after: u64) -> (EditLog, Vec<EditRecord>) {
    let dirs = StorageDirs::new(roots.to_vec()).unwrap();
    EditLog::open(dirs, after, RecoveryMode::Strict).unwrap()
}

pub fn payload(i: u64) -> Vec<u8> {
    format!("op-{i}-{}", "x".repeat((i % 37) as usize)).into_bytes()
}

/// Names of the files in `root/current` starting with `prefix`, sorted.
pub fn files(root: &Path, prefix: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(root.join("current"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(prefix))
        .collect();
    v.sort();
    v
}

pub fn txids(records: &[EditRecord]) -> Vec<u64> {
    records.iter().map(|r| r.txid).collect()
}
