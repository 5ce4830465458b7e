//! `<dir>/in_use.lock`: one holder of a directory at a time, in this process or another.
//!
//! A Raft log directory and a snapshot directory each have one. The lock is an `flock` on
//! the file, released when the holder's `File` is closed — for a log, when its writer thread
//! has finished what was queued; for a snapshot directory, when the last task that may
//! still save into it (a snapshot being built or installed) has dropped the state machine.
//! A member restarted in the same process therefore waits for its predecessor's writes
//! instead of reading, cutting or replacing files under them.

use std::fs::File;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::error::{RaftLogError, Result};

/// Name of the lock file.
pub const LOCK_FILE: &str = "in_use.lock";
/// How long an open waits for an earlier holder (a dropped store's writer finishing its
/// queue takes milliseconds; a live holder elsewhere never lets go).
pub const LOCK_WAIT: Duration = Duration::from_secs(30);
/// How often a waiting open tries the lock again.
const LOCK_RETRY: Duration = Duration::from_millis(5);

/// Takes the exclusive lock on `dir`'s lock file, trying again until `wait` has passed.
pub(crate) fn lock_dir(dir: &Path, wait: Duration) -> Result<File> {
    let path = dir.join(LOCK_FILE);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| RaftLogError::io("open", &path, e))?;
    let deadline = Instant::now() + wait;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(std::fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(LOCK_RETRY);
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(RaftLogError::Locked(dir.to_path_buf()));
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(RaftLogError::io("lock", &path, e));
            }
        }
    }
}
