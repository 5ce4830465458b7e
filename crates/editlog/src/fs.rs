//! The small file-system interface the log and image store write through, so tests can
//! inject failures into one directory. [`LocalFs`] is the real thing;
//! [`FaultInjectingFs`] wraps it and fails every mutating call under chosen directories.
//!
//! All calls block; they are only made from the crate's synchronous API.

use std::collections::HashSet;
use std::fmt::Debug;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;

/// A file opened for appending.
pub trait WritableFile: Send + Debug {
    /// Writes all of `buf` after what was written before.
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()>;
    /// Makes everything written so far durable (fdatasync).
    fn sync(&mut self) -> io::Result<()>;
    /// Gives back space reserved beyond what was written and makes the file's length
    /// durable: called before a file is finalized. A file without reserved space has
    /// nothing to do.
    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// How far ahead an edit segment reserves its space (Hadoop's EditLogFileOutputStream
/// preallocates 1 MiB the same way): a group commit then overwrites bytes that already
/// exist, so its fdatasync writes data only, not the file's new length as well.
pub const SEGMENT_PREALLOCATION: u64 = 1 << 20;

/// The file operations the crate needs.
pub trait FileSystem: Send + Sync + Debug {
    /// Creates (or truncates) `path` for writing.
    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>>;
    /// Creates (or truncates) `path` for writing, reserving its space `chunk` bytes at a
    /// time by writing zeros ahead of the data (a scan reads a zero tail as the end of the
    /// log); [`WritableFile::finish`] cuts the file back to what was written.
    fn create_preallocated(&self, path: &Path, chunk: u64) -> io::Result<Box<dyn WritableFile>>;
    /// Opens an existing `path` for appending.
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn WritableFile>>;
    /// Reads the whole file.
    fn read(&self, path: &Path) -> io::Result<Vec<u8>>;
    /// Atomically renames `from` to `to` (same directory).
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Removes a file.
    fn remove_file(&self, path: &Path) -> io::Result<()>;
    /// Cuts `path` to `len` bytes and syncs it.
    fn truncate(&self, path: &Path, len: u64) -> io::Result<()>;
    /// Syncs a directory, making renames and creations in it durable.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
    /// Names of the entries of `dir`.
    fn list_dir(&self, dir: &Path) -> io::Result<Vec<String>>;
    /// Creates `dir` and its parents.
    fn create_dir_all(&self, dir: &Path) -> io::Result<()>;
    /// Whether `path` exists.
    fn exists(&self, path: &Path) -> bool;
    /// Length of a file in bytes.
    fn file_len(&self, path: &Path) -> io::Result<u64> {
        fs::metadata(path).map(|m| m.len())
    }
    /// When a file was last written, in milliseconds since the Unix epoch.
    fn modified_ms(&self, path: &Path) -> io::Result<u64> {
        let at = fs::metadata(path)?.modified()?;
        let since = at
            .duration_since(std::time::UNIX_EPOCH)
            .map_err(|e| io::Error::other(e.to_string()))?;
        Ok(u64::try_from(since.as_millis()).unwrap_or(u64::MAX))
    }
}

/// The local file system.
#[derive(Debug, Default, Clone, Copy)]
pub struct LocalFs;

#[derive(Debug)]
struct LocalFile {
    file: File,
    /// Reservation step in bytes; 0: plain appends.
    chunk: u64,
    /// Bytes of data written (the file's logical length).
    written: u64,
    /// Bytes the file holds, data plus zeros written ahead.
    reserved: u64,
}

/// Zeros written a slice at a time when reserving space.
static ZEROS: [u8; 64 << 10] = [0; 64 << 10];

impl LocalFile {
    fn plain(file: File) -> Self {
        LocalFile {
            file,
            chunk: 0,
            written: 0,
            reserved: 0,
        }
    }

    fn preallocated(file: File, chunk: u64) -> Self {
        LocalFile {
            file,
            chunk,
            written: 0,
            reserved: 0,
        }
    }

    /// Writes zeros from the reserved end up to the next multiple of `chunk` at or past
    /// `upto`. Real zeros, not a hole: a hole would have to be allocated by the later data
    /// write, and its sync would carry that metadata again.
    fn reserve(&mut self, upto: u64) -> io::Result<()> {
        use std::os::unix::fs::FileExt;
        let target = upto.div_ceil(self.chunk).saturating_mul(self.chunk);
        while self.reserved < target {
            let n = (target - self.reserved).min(ZEROS.len() as u64);
            // n <= ZEROS.len(), so the cast and the slice are in range.
            self.file
                .write_all_at(&ZEROS[..n as usize], self.reserved)?;
            self.reserved += n;
        }
        Ok(())
    }
}

impl WritableFile for LocalFile {
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        if self.chunk == 0 {
            return self.file.write_all(buf);
        }
        use std::os::unix::fs::FileExt;
        let end = self.written + buf.len() as u64;
        if end > self.reserved {
            self.reserve(end)?;
        }
        self.file.write_all_at(buf, self.written)?;
        self.written = end;
        Ok(())
    }
    fn sync(&mut self) -> io::Result<()> {
        self.file.sync_data()
    }
    fn finish(&mut self) -> io::Result<()> {
        if self.chunk == 0 || self.reserved == self.written {
            return Ok(());
        }
        self.file.set_len(self.written)?;
        self.reserved = self.written;
        // The length changed: fsync, not fdatasync, so the cut is durable.
        self.file.sync_all()
    }
}

fn create_file(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
}

impl FileSystem for LocalFs {
    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        Ok(Box::new(LocalFile::plain(create_file(path)?)))
    }
    fn create_preallocated(&self, path: &Path, chunk: u64) -> io::Result<Box<dyn WritableFile>> {
        Ok(Box::new(LocalFile::preallocated(create_file(path)?, chunk)))
    }
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        let f = OpenOptions::new().append(true).open(path)?;
        Ok(Box::new(LocalFile::plain(f)))
    }
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        fs::read(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(path)
    }
    fn truncate(&self, path: &Path, len: u64) -> io::Result<()> {
        let f = OpenOptions::new().write(true).open(path)?;
        f.set_len(len)?;
        f.sync_all()
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        File::open(dir)?.sync_all()
    }
    fn list_dir(&self, dir: &Path) -> io::Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in fs::read_dir(dir)? {
            names.push(entry?.file_name().to_string_lossy().into_owned());
        }
        Ok(names)
    }
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        fs::create_dir_all(dir)
    }
    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }
}

/// Wraps [`LocalFs`] and fails every write, sync, create, rename, truncate and removal under
/// the directories passed to [`FaultInjectingFs::fail_dir`], including through files opened
/// before the fault was switched on. Reads keep working. Counts file syncs.
#[derive(Debug, Default, Clone)]
pub struct FaultInjectingFs {
    inner: Arc<FaultState>,
}

#[derive(Debug, Default)]
struct FaultState {
    failing: Mutex<HashSet<PathBuf>>,
    file_syncs: AtomicU64,
}

impl FaultState {
    fn check(&self, path: &Path) -> io::Result<()> {
        let failing = self.failing.lock();
        if failing.iter().any(|d| path.starts_with(d)) {
            return Err(io::Error::other(format!(
                "injected fault for {}",
                path.display()
            )));
        }
        Ok(())
    }
}

impl FaultInjectingFs {
    /// A wrapper with no faults yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes every mutating call under `dir` fail from now on.
    pub fn fail_dir(&self, dir: impl Into<PathBuf>) {
        self.inner.failing.lock().insert(dir.into());
    }

    /// Lifts all faults.
    pub fn heal_all(&self) {
        self.inner.failing.lock().clear();
    }

    /// Number of successful file syncs so far.
    pub fn file_syncs(&self) -> u64 {
        self.inner.file_syncs.load(Ordering::SeqCst)
    }
}

#[derive(Debug)]
struct FaultFile {
    path: PathBuf,
    file: LocalFile,
    state: Arc<FaultState>,
}

impl WritableFile for FaultFile {
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.state.check(&self.path)?;
        self.file.write_all(buf)
    }
    fn sync(&mut self) -> io::Result<()> {
        self.state.check(&self.path)?;
        self.file.sync()?;
        self.state.file_syncs.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
    fn finish(&mut self) -> io::Result<()> {
        self.state.check(&self.path)?;
        self.file.finish()
    }
}

impl FaultInjectingFs {
    fn wrap(&self, path: &Path, file: LocalFile) -> Box<dyn WritableFile> {
        Box::new(FaultFile {
            path: path.to_path_buf(),
            file,
            state: self.inner.clone(),
        })
    }
}

impl FileSystem for FaultInjectingFs {
    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        self.inner.check(path)?;
        Ok(self.wrap(path, LocalFile::plain(create_file(path)?)))
    }
    fn create_preallocated(&self, path: &Path, chunk: u64) -> io::Result<Box<dyn WritableFile>> {
        self.inner.check(path)?;
        Ok(self.wrap(path, LocalFile::preallocated(create_file(path)?, chunk)))
    }
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        self.inner.check(path)?;
        let f = OpenOptions::new().append(true).open(path)?;
        Ok(self.wrap(path, LocalFile::plain(f)))
    }
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        LocalFs.read(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.inner.check(from)?;
        self.inner.check(to)?;
        LocalFs.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.inner.check(path)?;
        LocalFs.remove_file(path)
    }
    fn truncate(&self, path: &Path, len: u64) -> io::Result<()> {
        self.inner.check(path)?;
        LocalFs.truncate(path, len)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        self.inner.check(dir)?;
        LocalFs.sync_dir(dir)
    }
    fn list_dir(&self, dir: &Path) -> io::Result<Vec<String>> {
        LocalFs.list_dir(dir)
    }
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        self.inner.check(dir)?;
        LocalFs.create_dir_all(dir)
    }
    fn exists(&self, path: &Path) -> bool {
        LocalFs.exists(path)
    }
}
