//! Reading the log back at start: scanning each directory's segments after a txid,
//! deciding what a torn tail or damage means, choosing the directory to trust, and
//! bringing the others in line with it.

use std::path::{Path, PathBuf};

use crate::error::{EditLogError, Result};
use crate::fs::FileSystem;
use crate::layout::{FileKind, finalized_name, parse_name};
use crate::record::{EditRecord, ScanEnd, scan_segment};
use crate::storage::StorageDirs;

/// What to do about damage in the middle of the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RecoveryMode {
    /// Refuse to start: return an error naming the file and offset (a torn final record is
    /// still truncated, as it is what a crash leaves).
    #[default]
    Strict,
    /// `namenode -recover`: keep the valid prefix, truncate the damaged segment, and set
    /// every later segment aside as `<name>.corrupt`.
    KeepPrefix,
}

/// One segment file as named in a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SegmentFile {
    pub first: u64,
    /// `None` for an in-progress segment.
    pub last: Option<u64>,
    pub name: String,
}

/// Edit segments in `dir`, ordered by first txid (finalized before in-progress on a tie).
pub(crate) fn list_segments(fs: &dyn FileSystem, dir: &Path) -> Result<Vec<SegmentFile>> {
    let names = fs
        .list_dir(dir)
        .map_err(|e| EditLogError::io("list", dir, e))?;
    let mut segs: Vec<SegmentFile> = names
        .into_iter()
        .filter_map(|name| match parse_name(&name)? {
            FileKind::Finalized { first, last } => Some(SegmentFile {
                first,
                last: Some(last),
                name,
            }),
            FileKind::InProgress { first } => Some(SegmentFile {
                first,
                last: None,
                name,
            }),
            _ => None,
        })
        .collect();
    segs.sort_by_key(|s| (s.first, s.last.is_none(), s.last));
    Ok(segs)
}

/// A change to make to a directory once its scan is accepted.
#[derive(Debug, Clone)]
enum Fix {
    Truncate { name: String, len: u64 },
    Rename { from: String, to: String },
    Remove { name: String },
}

/// The outcome of scanning one directory.
#[derive(Debug)]
struct DirScan {
    records: Vec<EditRecord>,
    last_txid: u64,
    fixes: Vec<Fix>,
}

/// A directory's scan failure, with the txid at which its log stopped being usable.
struct DirFailure {
    at_txid: u64,
    error: EditLogError,
}

impl DirFailure {
    /// An I/O failure (the directory is unusable) rather than damage in the log.
    fn is_io(&self) -> bool {
        matches!(self.error, EditLogError::Io { .. })
    }
}

fn corrupt(path: PathBuf, offset: u64, reason: String) -> EditLogError {
    EditLogError::Corrupt {
        path,
        offset,
        reason,
    }
}

/// Scans `dir` for the records after `after_txid`, without changing anything.
fn scan_dir(
    fs: &dyn FileSystem,
    dir: &Path,
    after_txid: u64,
    mode: RecoveryMode,
) -> std::result::Result<DirScan, DirFailure> {
    let fail = |at_txid, error| DirFailure { at_txid, error };
    let segs = list_segments(fs, dir).map_err(|e| fail(after_txid + 1, e))?;
    let mut expected = after_txid + 1;
    let mut records = Vec::new();
    let mut fixes = Vec::new();
    let n = segs.len();
    let mut set_aside_from = None;
    for (i, seg) in segs.iter().enumerate() {
        let is_last = i + 1 == n;
        if seg.last.is_some_and(|l| l < expected) {
            continue;
        }
        let path = dir.join(&seg.name);
        if seg.first > expected {
            let error = EditLogError::Gap {
                dir: dir.to_path_buf(),
                expected,
                found: seg.first,
            };
            if mode == RecoveryMode::KeepPrefix {
                tracing::warn!(
                    "recovery: {error}; keeping the log up to txid {}",
                    expected - 1
                );
                set_aside_from = Some(i);
                break;
            }
            return Err(fail(expected, error));
        }
        let data = fs
            .read(&path)
            .map_err(|e| fail(expected, EditLogError::io("read", &path, e)))?;
        let scan = scan_segment(&data, seg.first);
        let seg_last = match scan.records.len() as u64 {
            0 => None,
            n => Some(seg.first + n - 1),
        };
        for r in scan.records {
            if r.txid >= expected {
                records.push(r);
            }
        }
        if let Some(l) = seg_last {
            expected = expected.max(l + 1);
        }
        // Decide what the end of this segment means.
        let damage = match (&scan.end, seg.last) {
            (ScanEnd::Clean, Some(named_last)) => {
                if seg_last != Some(named_last) {
                    Some((
                        data.len() as u64,
                        format!(
                            "finalized segment ends at txid {} but its name says {named_last}",
                            seg_last.map_or("none".to_string(), |l| l.to_string())
                        ),
                    ))
                } else {
                    None
                }
            }
            (ScanEnd::Clean, None) => None,
            (ScanEnd::Torn { offset, reason }, None)
            | (ScanEnd::BadLastRecord { offset, reason }, None)
                if is_last =>
            {
                let cut = data.len() as u64 - offset;
                let reserved_only = usize::try_from(*offset)
                    .ok()
                    .and_then(|o| data.get(o..))
                    .is_some_and(|tail| tail.iter().all(|b| *b == 0));
                if reserved_only {
                    // The segment's preallocated zeros: what every unclean stop leaves.
                    tracing::info!(
                        file = %path.display(),
                        offset,
                        "in-progress segment ends at its reserved space; cutting {cut} bytes"
                    );
                } else {
                    tracing::warn!(
                        file = %path.display(),
                        offset,
                        "torn final record ({reason}); truncating {cut} bytes"
                    );
                }
                fixes.push(Fix::Truncate {
                    name: seg.name.clone(),
                    len: *offset,
                });
                None
            }
            (
                ScanEnd::Torn { offset, reason }
                | ScanEnd::BadLastRecord { offset, reason }
                | ScanEnd::Corrupt { offset, reason },
                _,
            ) => Some((*offset, reason.clone())),
        };
        if let Some((offset, reason)) = damage {
            let error = corrupt(path.clone(), offset, reason);
            if mode == RecoveryMode::Strict {
                return Err(fail(expected, error));
            }
            tracing::warn!(
                "recovery: {error}; keeping the valid prefix up to txid {}",
                expected - 1
            );
            fixes.push(Fix::Truncate {
                name: seg.name.clone(),
                len: scan.valid_len,
            });
        }
        // Finalize what this segment holds (an empty one is removed).
        let target = seg_last.map(|l| finalized_name(seg.first, l));
        match target {
            Some(t) if t != seg.name => fixes.push(Fix::Rename {
                from: seg.name.clone(),
                to: t,
            }),
            Some(_) => {}
            None => fixes.push(Fix::Remove {
                name: seg.name.clone(),
            }),
        }
        if damage_stops(&scan.end, seg.last, is_last) && mode == RecoveryMode::KeepPrefix {
            set_aside_from = Some(i + 1);
            break;
        }
    }
    if let Some(from) = set_aside_from {
        for seg in &segs[from..] {
            tracing::warn!(
                "recovery: setting aside {} as {}.corrupt",
                dir.join(&seg.name).display(),
                seg.name
            );
            fixes.push(Fix::Rename {
                from: seg.name.clone(),
                to: format!("{}.corrupt", seg.name),
            });
        }
    }
    Ok(DirScan {
        records,
        last_txid: expected - 1,
        fixes,
    })
}

/// Whether a segment's end makes every later segment unusable.
fn damage_stops(end: &ScanEnd, named_last: Option<u64>, is_last: bool) -> bool {
    match end {
        ScanEnd::Clean => false,
        ScanEnd::Torn { .. } | ScanEnd::BadLastRecord { .. } => !(named_last.is_none() && is_last),
        ScanEnd::Corrupt { .. } => true,
    }
}

fn apply_fixes(fs: &dyn FileSystem, dir: &Path, fixes: &[Fix]) -> Result<()> {
    for fix in fixes {
        match fix {
            Fix::Truncate { name, len } => {
                let p = dir.join(name);
                fs.truncate(&p, *len)
                    .map_err(|e| EditLogError::io("truncate", &p, e))?;
            }
            Fix::Rename { from, to } => {
                let (a, b) = (dir.join(from), dir.join(to));
                fs.rename(&a, &b)
                    .map_err(|e| EditLogError::io("rename", &a, e))?;
            }
            Fix::Remove { name } => {
                let p = dir.join(name);
                fs.remove_file(&p)
                    .map_err(|e| EditLogError::io("remove", &p, e))?;
            }
        }
    }
    if !fixes.is_empty() {
        fs.sync_dir(dir)
            .map_err(|e| EditLogError::io("sync directory", dir, e))?;
    }
    Ok(())
}

/// Makes `dst`'s segment files identical to `src`'s (copying, replacing, removing).
fn copy_segments(fs: &dyn FileSystem, src: &Path, dst: &Path) -> Result<bool> {
    let want = list_segments(fs, src)?;
    let have = list_segments(fs, dst)?;
    let mut changed = false;
    for seg in &have {
        if !want.iter().any(|w| w.name == seg.name) {
            let p = dst.join(&seg.name);
            fs.remove_file(&p)
                .map_err(|e| EditLogError::io("remove", &p, e))?;
            changed = true;
        }
    }
    for seg in &want {
        let sp = src.join(&seg.name);
        let dp = dst.join(&seg.name);
        let data = fs.read(&sp).map_err(|e| EditLogError::io("read", &sp, e))?;
        if fs.exists(&dp) && fs.read(&dp).is_ok_and(|d| d == data) {
            continue;
        }
        let mut f = fs
            .create(&dp)
            .map_err(|e| EditLogError::io("create", &dp, e))?;
        f.write_all(&data)
            .map_err(|e| EditLogError::io("write", &dp, e))?;
        f.sync().map_err(|e| EditLogError::io("sync", &dp, e))?;
        changed = true;
    }
    if changed {
        fs.sync_dir(dst)
            .map_err(|e| EditLogError::io("sync directory", dst, e))?;
    }
    Ok(changed)
}

/// Reads the records after `after_txid` from the storage directories and leaves every
/// active directory holding only finalized segments, identical across directories.
///
/// Each directory is scanned; the one whose log reaches furthest is trusted. A directory
/// whose scan failed is repaired from the trusted one when that one reaches past the
/// point of failure; otherwise (in [`RecoveryMode::Strict`]) the failure is returned.
/// Returns the records and the last txid (at least `after_txid`).
pub(crate) fn recover(
    dirs: &StorageDirs,
    after_txid: u64,
    mode: RecoveryMode,
) -> Result<(Vec<EditRecord>, u64)> {
    let fs = dirs.fs().clone();
    let active = dirs.active_or_err()?;
    // Directories that scanned cleanly: (dir, last txid, fixes); records kept for the best only.
    let mut good: Vec<(PathBuf, u64, Vec<Fix>)> = Vec::new();
    let mut best: Option<(usize, Vec<EditRecord>)> = None;
    let mut failures: Vec<(PathBuf, DirFailure)> = Vec::new();
    for dir in &active {
        match scan_dir(fs.as_ref(), dir, after_txid, mode) {
            Ok(scan) => {
                let better = best
                    .as_ref()
                    .is_none_or(|(i, _)| scan.last_txid > good[*i].1);
                if better {
                    best = Some((good.len(), scan.records));
                }
                good.push((dir.clone(), scan.last_txid, scan.fixes));
            }
            Err(f) if f.is_io() => dirs.mark_failed(dir, &f.error.to_string()),
            Err(f) => failures.push((dir.clone(), f)),
        }
    }
    let Some((best_idx, records)) = best else {
        // Every directory failed: report the first failure.
        return match failures.into_iter().next() {
            Some((_, f)) => Err(f.error),
            None => Err(dirs.none_left()),
        };
    };
    let (best_dir, last_txid) = (good[best_idx].0.clone(), good[best_idx].1);
    for (dir, f) in &failures {
        if last_txid < f.at_txid {
            return Err(match failures.into_iter().next() {
                Some((_, f)) => f.error,
                None => dirs.none_left(),
            });
        }
        tracing::error!(
            dir = %dir.display(),
            "edit log unusable ({}); repairing it from {}",
            f.error,
            best_dir.display()
        );
    }
    apply_fixes(fs.as_ref(), &best_dir, &good[best_idx].2)?;
    let seen = dirs.read_seen_txid();
    if last_txid + 1 < seen {
        let error = EditLogError::MissingEdits {
            dir: best_dir.clone(),
            last: last_txid,
            seen,
        };
        if mode == RecoveryMode::Strict {
            return Err(error);
        }
        tracing::warn!("recovery: {error}; continuing from txid {last_txid}");
    }
    // Other good directories get their own fixes; any directory whose segments then differ
    // from the best one's (by name and size) is rewritten from it.
    for (i, (dir, _, fixes)) in good.iter().enumerate() {
        if i != best_idx
            && let Err(e) = apply_fixes(fs.as_ref(), dir, fixes)
        {
            tracing::warn!(dir = %dir.display(), "recovery fixes failed ({e}); rewriting the log");
        }
    }
    let want = segment_sizes(fs.as_ref(), &best_dir)?;
    for dir in &dirs.active() {
        if *dir == best_dir {
            continue;
        }
        let scanned_ok = good.iter().any(|(d, _, _)| d == dir);
        if scanned_ok && segment_sizes(fs.as_ref(), dir).is_ok_and(|have| have == want) {
            continue;
        }
        match copy_segments(fs.as_ref(), &best_dir, dir) {
            Ok(true) => tracing::warn!(
                dir = %dir.display(),
                "edit log brought in line with {}",
                best_dir.display()
            ),
            Ok(false) => {}
            Err(e) => dirs.mark_failed(dir, &format!("repairing edit log: {e}")),
        }
    }
    tracing::info!(
        dir = %best_dir.display(),
        after_txid,
        last_txid,
        records = records.len(),
        "edit log recovered"
    );
    Ok((records, last_txid))
}

/// `(name, size)` of every segment file in `dir`, sorted.
fn segment_sizes(fs: &dyn FileSystem, dir: &Path) -> Result<Vec<(String, u64)>> {
    list_segments(fs, dir)?
        .into_iter()
        .map(|s| {
            let p = dir.join(&s.name);
            let len = fs
                .file_len(&p)
                .map_err(|e| EditLogError::io("stat", &p, e))?;
            Ok((s.name, len))
        })
        .collect()
}

/// Reads the records after `after_txid` from one `current/` directory without changing
/// anything (a torn tail of the last in-progress segment is ignored, damage is an error).
pub fn read_edits(
    fs: &dyn FileSystem,
    current_dir: &Path,
    after_txid: u64,
) -> Result<Vec<EditRecord>> {
    scan_dir(fs, current_dir, after_txid, RecoveryMode::Strict)
        .map(|s| s.records)
        .map_err(|f| f.error)
}
