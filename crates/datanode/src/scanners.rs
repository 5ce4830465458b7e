//! The DataNode's periodic disk checks as background tasks: the directory scan every
//! `dfs.datanode.directoryscan.interval` (the scan itself is `Dataset::scan_directories`;
//! the block scanner runs its own tasks, `block_scanner`).

use std::sync::Arc;
use std::time::Duration;

use rhdfs_conf::{ConfError, Configuration, keys};

use crate::dataset::Dataset;

/// Aborts a background task when dropped.
#[derive(Debug)]
pub struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// `dfs.datanode.directoryscan.interval` (seconds unless suffixed); None when negative
/// (Hadoop's way to turn the scanner off) or zero.
pub fn directory_scan_interval(conf: &Configuration) -> Result<Option<Duration>, ConfError> {
    let key = keys::DFS_DATANODE_DIRECTORYSCAN_INTERVAL_KEY;
    if conf.get_trimmed(key).is_some_and(|v| v.starts_with('-')) {
        return Ok(None);
    }
    let every = conf.get_duration(
        key,
        keys::DFS_DATANODE_DIRECTORYSCAN_INTERVAL_DEFAULT,
        keys::DFS_DATANODE_DIRECTORYSCAN_INTERVAL_UNIT,
    )?;
    Ok((!every.is_zero()).then_some(every))
}

/// Scans every block pool of `ds` now, one after another, on a blocking thread.
pub async fn scan_all_pools(ds: &Arc<Dataset>) -> Vec<crate::dataset::ScanSummary> {
    let ds = Arc::clone(ds);
    tokio::task::spawn_blocking(move || {
        ds.pools()
            .iter()
            .map(|bpid| ds.scan_directories(bpid))
            .collect()
    })
    .await
    .unwrap_or_default()
}

/// Runs the directory scan every `every`, the first time at a random point within the
/// first interval (as Hadoop does, so DataNodes started together do not scan together).
pub fn start_directory_scanner(ds: Arc<Dataset>, every: Duration) -> AbortOnDrop {
    use rand::Rng;
    let first = rhdfs_conf::rng::seeded_rng(None).random_range(Duration::ZERO..every);
    AbortOnDrop(tokio::spawn(async move {
        tokio::time::sleep(first).await;
        loop {
            scan_all_pools(&ds).await;
            tokio::time::sleep(every).await;
        }
    }))
}
