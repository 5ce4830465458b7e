//! Disk checks of data directories (Hadoop's DiskChecker and DatasetVolumeChecker): a
//! directory is healthy when it exists or can be created, is a directory, is readable,
//! writable and searchable, and a small file can be written, synced and removed in it. A
//! volume is healthy when every block pool directory of it (finalized, rbw, tmp) is.
//!
//! [`VolumeChecker`] runs these checks off the async threads, fails a volume whose check
//! takes longer than `dfs.datanode.disk.check.timeout`, and throttles them: a check of all
//! volumes, or of one volume, is skipped when the last one ended less than
//! `dfs.datanode.disk.check.min.gap` ago.

use std::collections::HashMap;
use std::fs;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use rhdfs_conf::clock::SharedClock;

use crate::dataset::Dataset;
use crate::replica::ReplicaState;
use crate::volume::Volume;

/// Attempts at the small write of a directory check (Hadoop's DISK_IO_MAX_ITERATIONS).
const DISK_IO_ATTEMPTS: usize = 3;
/// Bytes written by a directory check (Hadoop's DISK_IO_FILE_SIZE).
const DISK_IO_FILE_SIZE: usize = 64;

/// A data directory's permission bits from `dfs.datanode.data.dir.perm`: octal (`700`,
/// `0750`) or the nine-letter symbolic form (`rwx------`); None when it is neither.
pub fn parse_dir_permission(s: &str) -> Option<u32> {
    let s = s.trim();
    if !s.is_empty() && s.len() <= 4 && s.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
        return u32::from_str_radix(s, 8).ok().filter(|v| *v <= 0o7777);
    }
    let b = s.as_bytes();
    if b.len() != 9 {
        return None;
    }
    let mut mode = 0;
    for (i, want) in b"rwxrwxrwx".iter().enumerate() {
        mode <<= 1;
        match b[i] {
            c if c == *want => mode |= 1,
            b'-' => {}
            _ => return None,
        }
    }
    Some(mode)
}

/// Creates `dir` if needed and gives it the permission bits `mode` when it has others, as
/// Hadoop's DataNode does before it checks its data directories. A failure is returned for
/// the caller to log; the directory check that follows decides whether the volume is usable.
pub fn prepare_dir(dir: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::create_dir_all(dir)?;
    let now = fs::metadata(dir)?.permissions().mode() & 0o7777;
    if now != mode {
        fs::set_permissions(dir, fs::Permissions::from_mode(mode))?;
    }
    Ok(())
}

/// Checks one directory; the error says what is wrong, in DiskChecker's words.
pub fn check_dir(dir: &Path) -> Result<(), String> {
    let shown = dir.display();
    if fs::create_dir_all(dir).is_err() {
        return Err(format!("Cannot create directory: {shown}"));
    }
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        _ => return Err(format!("Not a directory: {shown}")),
    }
    for (mode, what) in [
        (libc::R_OK, "readable"),
        (libc::W_OK, "writable"),
        (libc::X_OK, "executable"),
    ] {
        if !accessible(dir, mode) {
            return Err(format!("Directory is not {what}: {shown}"));
        }
    }
    let mut last = String::new();
    for _ in 0..DISK_IO_ATTEMPTS {
        match disk_io(dir) {
            Ok(()) => return Ok(()),
            Err(e) => last = e.to_string(),
        }
    }
    Err(format!("Error checking directory {shown}: {last}"))
}

fn accessible(dir: &Path, mode: libc::c_int) -> bool {
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a valid NUL-terminated path.
    unsafe { libc::access(c.as_ptr(), mode) == 0 }
}

/// Writes, syncs and removes a small file in `dir`.
fn disk_io(dir: &Path) -> std::io::Result<()> {
    let probe = dir.join(format!("DiskChecker.OK_TO_DELETE_{}", uuid::Uuid::new_v4()));
    let written = (|| {
        let mut f = fs::File::create(&probe)?;
        f.write_all(&[0u8; DISK_IO_FILE_SIZE])?;
        f.sync_all()
    })();
    let removed = fs::remove_file(&probe);
    written.and(removed)
}

/// Checks a volume: the I/O fault hook, then every block pool's directories (the volume's
/// `current` directory when it has no block pool yet).
pub fn check_volume(v: &Volume, pools: &[String]) -> Result<(), String> {
    v.io_fault().map_err(|e| e.to_string())?;
    if pools.is_empty() {
        return check_dir(&v.base.join("current"));
    }
    for bpid in pools {
        for s in [
            ReplicaState::Finalized,
            ReplicaState::Rbw,
            ReplicaState::Temporary,
        ] {
            check_dir(&v.state_dir(bpid, s))?;
        }
    }
    Ok(())
}

/// Runs volume checks with Hadoop's throttle and timeout.
#[derive(Debug)]
pub struct VolumeChecker {
    min_gap: Duration,
    timeout: Duration,
    clock: SharedClock,
    /// Monotonic time the last check of all volumes started.
    last_all: Mutex<Option<Duration>>,
    /// Monotonic time each volume's last check ended.
    last_one: Mutex<HashMap<usize, Duration>>,
}

impl VolumeChecker {
    pub fn new(min_gap: Duration, timeout: Duration, clock: SharedClock) -> Self {
        VolumeChecker {
            min_gap,
            timeout,
            clock,
            last_all: Mutex::new(None),
            last_one: Mutex::new(HashMap::new()),
        }
    }

    /// `dfs.datanode.disk.check.min.gap`.
    pub fn min_gap(&self) -> Duration {
        self.min_gap
    }

    /// Checks every volume still in service; None when the last such check started less
    /// than the minimum gap ago. Returns the failed volumes with the reason.
    pub async fn check_all(&self, ds: &Arc<Dataset>) -> Option<Vec<(usize, String)>> {
        let now = self.clock.monotonic();
        {
            let mut last = self.last_all.lock();
            if last.is_some_and(|t| now.saturating_sub(t) < self.min_gap) {
                return None;
            }
            *last = Some(now);
        }
        let mut failed = Vec::new();
        for v in ds.volumes().iter().filter(|v| !v.is_failed()) {
            if let Err(reason) = self.run(ds, v.index).await {
                failed.push((v.index, reason));
            }
        }
        Some(failed)
    }

    /// Checks one volume; None when it is out of service or its last check ended less than
    /// the minimum gap ago.
    pub async fn check_one(&self, ds: &Arc<Dataset>, index: usize) -> Option<Result<(), String>> {
        if ds.volume(index).is_none_or(|v| v.is_failed()) {
            return None;
        }
        let now = self.clock.monotonic();
        if self
            .last_one
            .lock()
            .get(&index)
            .is_some_and(|t| now.saturating_sub(*t) < self.min_gap)
        {
            return None;
        }
        Some(self.run(ds, index).await)
    }

    async fn run(&self, ds: &Arc<Dataset>, index: usize) -> Result<(), String> {
        let d = ds.clone();
        let check = tokio::task::spawn_blocking(move || {
            let pools = d.pools();
            match d.volume(index) {
                Some(v) => check_volume(v, &pools),
                None => Ok(()),
            }
        });
        let res = match tokio::time::timeout(self.timeout, check).await {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => Err(format!("disk check failed to run: {e}")),
            Err(_) => Err(format!(
                "disk check did not finish within {} ms",
                self.timeout.as_millis()
            )),
        };
        self.last_one.lock().insert(index, self.clock.monotonic());
        res
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_dir_permission_as_hadoop_parses_it() {
        assert_eq!(parse_dir_permission("700"), Some(0o700));
        assert_eq!(parse_dir_permission(" 0750 "), Some(0o750));
        assert_eq!(parse_dir_permission("rwxr-x---"), Some(0o750));
        assert_eq!(parse_dir_permission("rwx------"), Some(0o700));
        for bad in ["", "800", "rwxrwx", "rwzr-x---", "77777", "seven"] {
            assert_eq!(parse_dir_permission(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn prepare_dir_creates_and_corrects_the_mode() -> std::io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir()?;
        let dir = tmp.path().join("a/data");
        prepare_dir(&dir, 0o700)?;
        assert_eq!(fs::metadata(&dir)?.permissions().mode() & 0o7777, 0o700);
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o777))?;
        prepare_dir(&dir, 0o750)?;
        assert_eq!(fs::metadata(&dir)?.permissions().mode() & 0o7777, 0o750);
        Ok(())
    }

    #[test]
    fn healthy_directory_passes_and_leaves_nothing() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("a/b");
        check_dir(&dir).unwrap();
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 0);
    }

    #[test]
    fn a_file_in_place_of_the_directory_fails() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("vol");
        fs::write(&dir, b"not a dir").unwrap();
        let e = check_dir(&dir).unwrap_err();
        assert!(e.starts_with("Cannot create directory: "), "{e}");
        let e = check_dir(&dir.join("current")).unwrap_err();
        assert!(e.starts_with("Cannot create directory: "), "{e}");
    }

    #[test]
    fn volume_check_sees_the_fault_hook_and_the_pool_dirs() {
        let d = tempfile::tempdir().unwrap();
        let (v, _) = Volume::open(0, d.path(), 0, "u").unwrap();
        let pools = vec!["BP-1".to_string()];
        check_volume(&v, &pools).unwrap();
        v.set_io_fault(true);
        assert!(check_volume(&v, &pools).unwrap_err().contains("injected"));
        v.set_io_fault(false);
        let rbw = v.state_dir("BP-1", ReplicaState::Rbw);
        fs::remove_dir_all(&rbw).unwrap();
        fs::write(&rbw, b"x").unwrap();
        let e = check_volume(&v, &pools).unwrap_err();
        assert!(e.contains("rbw"), "{e}");
    }

    #[tokio::test]
    async fn checks_are_throttled_by_the_min_gap_and_find_a_failed_volume() {
        let d = tempfile::tempdir().unwrap();
        let dirs = vec![d.path().join("a"), d.path().join("b")];
        let ds = Dataset::open(&dirs, 0).unwrap();
        let clock = Arc::new(rhdfs_conf::clock::ManualClock::new(0));
        let checker = VolumeChecker::new(
            Duration::from_secs(60),
            Duration::from_secs(30),
            clock.clone(),
        );
        assert_eq!(checker.check_all(&ds).await, Some(Vec::new()));
        // Within the gap: skipped, for all volumes and for one.
        ds.volume(1).unwrap().set_io_fault(true);
        assert_eq!(checker.check_all(&ds).await, None);
        assert_eq!(checker.check_one(&ds, 1).await, None);
        clock.advance(Duration::from_secs(61));
        let r = checker.check_one(&ds, 1).await.unwrap();
        assert!(r.unwrap_err().contains("injected"));
        let failed = checker.check_all(&ds).await.unwrap();
        assert_eq!(failed.iter().map(|f| f.0).collect::<Vec<_>>(), vec![1]);
        // A volume out of service is not checked again.
        ds.fail_volumes(&[1], 0);
        clock.advance(Duration::from_secs(61));
        assert_eq!(checker.check_one(&ds, 1).await, None);
        assert_eq!(checker.check_all(&ds).await, Some(Vec::new()));
    }
}
