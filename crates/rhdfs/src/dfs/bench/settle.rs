//! Before a timed write pass: the files of the pass before are deleted, untimed, and the
//! pass waits until the DataNodes have removed their replicas. Without this the pass's
//! `create` with overwrite deleted them, and the DataNodes unlinked 2–3 GiB of replica files
//! (freeing their page-cache pages and extents) while they received the new ones: on a
//! 2-core machine that doubled their CPU per GiB written in every round after the first.
//! The plain pass removes its old files untimed the same way (`plain::remove`).
//!
//! Done is when the NameNode has handed every invalidated replica out (`getFsStats`'s
//! pending deletion blocks is 0) and then the local DataNode processes are quiet: their CPU
//! use stays under [`QUIET_SHARE`] of a core for [`QUIET_WINDOWS`] windows in a row (the
//! deletions of a replica whose file is gone are not reported back, so the processes' work is
//! what shows them done). Remote DataNodes (no local pids) are waited for at the NameNode only.

use std::time::{Duration, Instant};

use rhdfs_client::FileSystem;

use super::DIR;
use super::cpu::processes_seconds;

/// One window of the DataNodes' CPU use.
const WINDOW: Duration = Duration::from_millis(200);
/// CPU share of one core under which a window counts as quiet.
const QUIET_SHARE: f64 = 0.05;
/// Quiet windows in a row that end the wait.
const QUIET_WINDOWS: u32 = 3;
/// How long the wait may take before the pass goes on anyway (and says so).
const LIMIT: Duration = Duration::from_secs(60);

/// Consecutive quiet windows, from the CPU seconds each used.
#[derive(Debug, Default)]
struct Quiet {
    run: u32,
}

impl Quiet {
    /// Takes one window's CPU seconds; true once the last [`QUIET_WINDOWS`] were quiet.
    fn observe(&mut self, cpu_secs: f64, window: Duration) -> bool {
        if cpu_secs < QUIET_SHARE * window.as_secs_f64() {
            self.run += 1;
        } else {
            self.run = 0;
        }
        self.run >= QUIET_WINDOWS
    }
}

/// Deletes the files `test_io_0..files` that exist and waits until their replicas are gone
/// (see the module's comment); `pids` are the local DataNode processes.
pub(super) async fn remove_previous(
    fs: &FileSystem,
    files: usize,
    pids: &[u32],
) -> anyhow::Result<()> {
    let mut deleted = false;
    for i in 0..files {
        deleted |= fs.delete(&format!("{DIR}/test_io_{i}"), false).await?;
    }
    if !deleted {
        return Ok(());
    }
    let deadline = Instant::now() + LIMIT;
    loop {
        let pending = fs.fs_stats().await?.pending_deletion_blocks;
        if pending == 0 {
            break;
        }
        if Instant::now() > deadline {
            println!(
                "   (the NameNode still had {pending} replicas to delete after {LIMIT:?}; the pass starts anyway)"
            );
            return Ok(());
        }
        tokio::time::sleep(WINDOW).await;
    }
    if pids.is_empty() {
        return Ok(());
    }
    let mut quiet = Quiet::default();
    let mut before = processes_seconds(pids);
    loop {
        tokio::time::sleep(WINDOW).await;
        let now = processes_seconds(pids);
        if quiet.observe(now - before, WINDOW) {
            return Ok(());
        }
        before = now;
        if Instant::now() > deadline {
            println!(
                "   (the DataNodes were still busy {LIMIT:?} after the old files' deletion; the pass starts anyway)"
            );
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quiet_after_enough_quiet_windows_in_a_row() {
        let w = Duration::from_millis(200);
        let mut q = Quiet::default();
        // 10 ms of CPU in 200 ms is the limit (5 % of a core).
        assert!(!q.observe(0.0, w));
        assert!(!q.observe(0.0, w));
        assert!(!q.observe(0.011, w), "a busy window breaks the run");
        assert!(!q.observe(0.0, w));
        assert!(!q.observe(0.009, w));
        assert!(q.observe(0.0, w), "three quiet windows in a row");
        assert!(q.observe(0.0, w), "and stays quiet");
    }
}
