//! The Raft log on disk: segment files of edit-log records, and the meta file.
//!
//! ```text
//! <dir>/raftlog_<first index, 19 digits>   SEGMENT_MAGIC + records (txid = log index)
//! <dir>/raft_meta                          vote + last purged log id (replaced atomically)
//! <dir>/in_use.lock                        held by the one store using the directory (`dir_lock`)
//! ```
//!
//! The lock is held from `open` until the [`SegmentLog`] is dropped, which for a store is
//! when its writer thread has finished every command queued before the store was dropped.
//! A store reopened in the same process (a member restarted) therefore waits for its
//! predecessor's writes instead of reading, cutting or purging segments under them.
//!
//! The newest segment is written with the edit log's preallocation (zeros a megabyte
//! ahead, so a group commit's fdatasync writes data only) and read back by the edit log's
//! scanner, so its rules hold here too: a torn record at the end of the newest segment
//! (cut short, or followed by nothing but reserved zeros) is what a crash leaves and is cut
//! off; damage anywhere else is an error naming the file and offset.
//!
//! Everything here blocks: only the writer thread and `open` (on a blocking thread) call it.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rhdfs_editlog::fs::{FileSystem, SEGMENT_PREALLOCATION, WritableFile};
use rhdfs_editlog::record::{RECORD_OVERHEAD, SEGMENT_MAGIC, ScanEnd, scan_segment};

use crate::codec::Meta;
use crate::dir_lock::{LOCK_WAIT, lock_dir};
use crate::error::{RaftLogError, Result};

/// Name of the meta file.
pub const META_FILE: &str = "raft_meta";
const META_TMP: &str = "raft_meta.tmp";
const SEGMENT_PREFIX: &str = "raftlog_";

/// `raftlog_<first>`.
pub fn segment_name(first: u64) -> String {
    format!("{SEGMENT_PREFIX}{first:019}")
}

fn parse_segment_name(name: &str) -> Option<u64> {
    let digits = name.strip_prefix(SEGMENT_PREFIX)?;
    if digits.len() != 19 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// One segment file: the byte offset of each of its records, record `i` holding index
/// `first + i`.
#[derive(Debug)]
struct Segment {
    first: u64,
    path: PathBuf,
    offsets: Vec<u64>,
    len: u64,
}

impl Segment {
    fn next(&self) -> u64 {
        self.first + self.offsets.len() as u64
    }
}

/// A record read back at open: its index and payload.
pub type StoredRecord = (u64, Vec<u8>);

/// The segment files of one directory, the newest open for appending.
#[derive(Debug)]
pub struct SegmentLog {
    fs: Arc<dyn FileSystem>,
    dir: PathBuf,
    segments: Vec<Segment>,
    /// The newest segment's file, while it is being appended to.
    current: Option<Box<dyn WritableFile>>,
    roll_bytes: u64,
    /// The directory's lock, released with the log.
    _lock: File,
}

impl SegmentLog {
    /// Takes the directory's lock (waiting up to [`LOCK_WAIT`] for an earlier holder), then
    /// reads the meta file and every segment in `dir` (created if missing), cuts a torn
    /// tail, finishes an interrupted purge, and returns the records after the last purged
    /// index, checked to be contiguous.
    pub fn open(
        fs: Arc<dyn FileSystem>,
        dir: &Path,
        roll_bytes: u64,
    ) -> Result<(SegmentLog, Meta, Vec<StoredRecord>)> {
        fs.create_dir_all(dir)
            .map_err(|e| RaftLogError::io("create directory", dir, e))?;
        let lock = lock_dir(dir, LOCK_WAIT)?;
        let meta_path = dir.join(META_FILE);
        let meta = if fs.exists(&meta_path) {
            let bytes = fs
                .read(&meta_path)
                .map_err(|e| RaftLogError::io("read", &meta_path, e))?;
            Meta::decode(&bytes)?
        } else {
            Meta::default()
        };
        let names = fs
            .list_dir(dir)
            .map_err(|e| RaftLogError::io("list", dir, e))?;
        let mut firsts: Vec<u64> = names.iter().filter_map(|n| parse_segment_name(n)).collect();
        firsts.sort_unstable();
        let purged = meta.purged.map(|p| p.index);
        let mut log = SegmentLog {
            fs,
            dir: dir.to_path_buf(),
            segments: Vec::new(),
            current: None,
            roll_bytes,
            _lock: lock,
        };
        let mut records = Vec::new();
        let n = firsts.len();
        for (i, first) in firsts.into_iter().enumerate() {
            let (seg, recs) = log.read_segment(first, i + 1 == n)?;
            let all_purged = match (seg.offsets.is_empty(), purged) {
                (true, _) => true,
                (false, Some(p)) => seg.next() - 1 <= p,
                (false, None) => false,
            };
            if all_purged {
                log.remove(&seg.path)?;
                continue;
            }
            records.extend(
                recs.into_iter()
                    .filter(|(idx, _)| purged.is_none_or(|p| *idx > p)),
            );
            log.segments.push(seg);
        }
        let mut expected = purged.map(|p| p + 1);
        for (idx, _) in &records {
            if expected.is_some_and(|e| e != *idx) {
                return Err(RaftLogError::Corrupt {
                    path: log.dir.clone(),
                    offset: 0,
                    reason: format!(
                        "raft log index {idx} where {} was expected",
                        expected.unwrap_or_default()
                    ),
                });
            }
            expected = Some(idx + 1);
        }
        Ok((log, meta, records))
    }

    /// Scans one segment; a torn tail of the newest one is cut off on disk.
    fn read_segment(&self, first: u64, newest: bool) -> Result<(Segment, Vec<StoredRecord>)> {
        let path = self.dir.join(segment_name(first));
        let data = self
            .fs
            .read(&path)
            .map_err(|e| RaftLogError::io("read", &path, e))?;
        let scan = scan_segment(&data, first);
        let zeros_only = |offset: u64| {
            usize::try_from(offset)
                .ok()
                .and_then(|o| data.get(o..))
                .is_some_and(|t| t.iter().all(|b| *b == 0))
        };
        match &scan.end {
            ScanEnd::Clean => {}
            ScanEnd::Torn { offset, reason } | ScanEnd::BadLastRecord { offset, reason }
                if newest || zeros_only(*offset) =>
            {
                if !zeros_only(*offset) {
                    tracing::warn!(file = %path.display(), offset, "torn final raft log record ({reason}); cutting it off");
                }
                self.fs
                    .truncate(&path, *offset)
                    .map_err(|e| RaftLogError::io("truncate", &path, e))?;
            }
            ScanEnd::Torn { offset, reason }
            | ScanEnd::BadLastRecord { offset, reason }
            | ScanEnd::Corrupt { offset, reason } => {
                return Err(RaftLogError::Corrupt {
                    path,
                    offset: *offset,
                    reason: reason.clone(),
                });
            }
        }
        let mut offsets = Vec::with_capacity(scan.records.len());
        let mut at = SEGMENT_MAGIC.len() as u64;
        let mut records = Vec::with_capacity(scan.records.len());
        for r in scan.records {
            offsets.push(at);
            at += (RECORD_OVERHEAD + r.payload.len()) as u64;
            records.push((r.txid, r.payload));
        }
        let seg = Segment {
            first,
            path,
            offsets,
            len: at,
        };
        Ok((seg, records))
    }

    fn remove(&self, path: &Path) -> Result<()> {
        self.fs
            .remove_file(path)
            .map_err(|e| RaftLogError::io("remove", path, e))
    }

    fn sync_dir(&self) -> Result<()> {
        self.fs
            .sync_dir(&self.dir)
            .map_err(|e| RaftLogError::io("sync directory", &self.dir, e))
    }

    /// Syncs the newest segment and gives back its reserved space.
    fn finish_current(&mut self) -> Result<()> {
        if let (Some(mut file), Some(seg)) = (self.current.take(), self.segments.last()) {
            file.sync()
                .and_then(|()| file.finish())
                .map_err(|e| RaftLogError::io("finish segment", &seg.path, e))?;
        }
        Ok(())
    }

    /// Starts `raftlog_<first>` durably (header synced, directory synced).
    fn start_segment(&mut self, first: u64) -> Result<()> {
        self.finish_current()?;
        if self.segments.last().is_some_and(|s| s.offsets.is_empty())
            && let Some(empty) = self.segments.pop()
        {
            self.remove(&empty.path)?;
        }
        let path = self.dir.join(segment_name(first));
        let mut file = self
            .fs
            .create_preallocated(&path, SEGMENT_PREALLOCATION)
            .map_err(|e| RaftLogError::io("create", &path, e))?;
        file.write_all(&SEGMENT_MAGIC)
            .and_then(|()| file.sync())
            .map_err(|e| RaftLogError::io("write", &path, e))?;
        self.sync_dir()?;
        self.segments.push(Segment {
            first,
            path,
            offsets: Vec::new(),
            len: SEGMENT_MAGIC.len() as u64,
        });
        self.current = Some(file);
        Ok(())
    }

    /// Writes framed records (the first with index `first`, each starting at
    /// `rel_offsets[i]` in `bytes`) after the newest; durable only after [`Self::sync`].
    pub fn write(&mut self, first: u64, bytes: &[u8], rel_offsets: &[u64]) -> Result<()> {
        let start_new = match (self.segments.last(), &self.current) {
            (Some(seg), Some(_)) => seg.next() != first || seg.len >= self.roll_bytes,
            _ => true,
        };
        if start_new {
            self.start_segment(first)?;
        }
        let (Some(seg), Some(file)) = (self.segments.last_mut(), self.current.as_mut()) else {
            return Err(RaftLogError::Closed);
        };
        file.write_all(bytes)
            .map_err(|e| RaftLogError::io("write", &seg.path, e))?;
        seg.offsets.extend(rel_offsets.iter().map(|o| seg.len + o));
        seg.len += bytes.len() as u64;
        Ok(())
    }

    /// Makes everything written durable (fdatasync of the newest segment; older ones were
    /// synced when they were finished).
    pub fn sync(&mut self) -> Result<()> {
        if let (Some(seg), Some(file)) = (self.segments.last(), self.current.as_mut()) {
            file.sync()
                .map_err(|e| RaftLogError::io("sync", &seg.path, e))?;
        }
        Ok(())
    }

    /// Removes every record at `index` and after, durably.
    pub fn truncate(&mut self, index: u64) -> Result<()> {
        // The file is cut below; its reserved zeros go with it.
        self.current = None;
        while let Some(seg) = self.segments.last_mut() {
            if seg.first >= index {
                let path = seg.path.clone();
                self.segments.pop();
                self.remove(&path)?;
                continue;
            }
            if seg.next() > index {
                let keep = usize::try_from(index - seg.first).unwrap_or(usize::MAX);
                let len = seg.offsets.get(keep).copied().unwrap_or(seg.len);
                self.fs
                    .truncate(&seg.path, len)
                    .map_err(|e| RaftLogError::io("truncate", &seg.path, e))?;
                seg.offsets.truncate(keep);
                seg.len = len;
            }
            break;
        }
        self.sync_dir()
    }

    /// Removes the segments holding only records up to `index` (after the meta file that
    /// says they are purged is durable).
    pub fn purge(&mut self, index: u64) -> Result<()> {
        while let Some(seg) = self.segments.first() {
            if seg.offsets.is_empty() || seg.next() - 1 > index {
                break;
            }
            if self.segments.len() == 1 {
                self.current = None;
            }
            let path = seg.path.clone();
            self.segments.remove(0);
            self.remove(&path)?;
        }
        Ok(())
    }

    /// Replaces the meta file atomically and durably.
    pub fn write_meta(&self, meta: &Meta) -> Result<()> {
        let tmp = self.dir.join(META_TMP);
        let dst = self.dir.join(META_FILE);
        let mut file = self
            .fs
            .create(&tmp)
            .map_err(|e| RaftLogError::io("create", &tmp, e))?;
        file.write_all(&meta.encode())
            .and_then(|()| file.sync())
            .map_err(|e| RaftLogError::io("write", &tmp, e))?;
        drop(file);
        self.fs
            .rename(&tmp, &dst)
            .map_err(|e| RaftLogError::io("rename", &tmp, e))?;
        self.sync_dir()
    }

    /// Syncs and gives back the reserved space of the newest segment (a clean stop).
    pub fn close(&mut self) -> Result<()> {
        self.finish_current()
    }
}
