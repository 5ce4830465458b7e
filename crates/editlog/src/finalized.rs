//! Reading finalized segments back while the log is being written: what a checkpoint
//! built off the live namespace replays.
//!
//! After [`EditLog::roll`] returned `n`, every txid up to `n - 1` lives in finalized
//! segments (`edits_<first>-<last>`), which no append touches again; appends go to the
//! new in-progress segment and later rolls only add finalized files. So reading the
//! finalized files covering `(after, upto]` needs no lock on the writer: only purging
//! removes finalized files, and the caller serializes its purges with its reads.

use std::path::{Path, PathBuf};

use crate::error::{EditLogError, Result};
use crate::log::EditLog;
use crate::record::{EditRecord, RECORD_OVERHEAD, SEGMENT_MAGIC, ScanEnd, scan_segment};
use crate::recovery::{SegmentFile, list_segments};

/// Where a record was read from: the segment file and the byte offset of its header.
#[derive(Debug, Clone, Copy)]
pub struct RecordLocation<'a> {
    pub path: &'a Path,
    pub offset: u64,
}

/// Reads one finalized segment whole and checks it: a clean end exactly at the txid its
/// name says. Returns the records with their byte offsets.
fn read_checked(
    log: &EditLog,
    path: &Path,
    first: u64,
    last: u64,
) -> Result<Vec<(u64, EditRecord)>> {
    let data = log
        .dirs()
        .fs()
        .read(path)
        .map_err(|e| EditLogError::io("read", path, e))?;
    let scan = scan_segment(&data, first);
    let corrupt = |offset, reason: String| EditLogError::Corrupt {
        path: path.to_path_buf(),
        offset,
        reason,
    };
    match scan.end {
        ScanEnd::Clean => {}
        ScanEnd::Torn { offset, reason }
        | ScanEnd::BadLastRecord { offset, reason }
        | ScanEnd::Corrupt { offset, reason } => return Err(corrupt(offset, reason)),
    }
    let got_last = first + scan.records.len() as u64;
    if scan.records.is_empty() || got_last - 1 != last {
        return Err(corrupt(
            scan.valid_len,
            format!(
                "finalized segment ends at txid {} but its name says {last}",
                got_last.saturating_sub(1)
            ),
        ));
    }
    let mut offset = SEGMENT_MAGIC.len() as u64;
    Ok(scan
        .records
        .into_iter()
        .map(|r| {
            let at = offset;
            offset += (RECORD_OVERHEAD + r.payload.len()) as u64;
            (at, r)
        })
        .collect())
}

impl EditLog {
    /// Hands every record with a txid in `(after_txid, upto_txid]` to `each`, in txid
    /// order, reading only finalized segments, one segment in memory at a time. Call it
    /// after a [`EditLog::roll`] that finalized `upto_txid`; appends and rolls may go on
    /// meanwhile, purges must not. Blocking.
    ///
    /// Each segment is read and checked whole (record checksums, txid sequence, a clean
    /// end at the txid its name says) before any of its records is handed out. A damaged
    /// copy is skipped with an error log line when another directory holds a good copy of
    /// the same segment; otherwise the error names the file and byte offset
    /// ([`EditLogError::Corrupt`]). A txid no finalized segment holds is
    /// [`EditLogError::NotFinalized`]. An error from `each` stops the read and is
    /// returned. Returns the number of records handed out.
    pub fn read_finalized<E: From<EditLogError>>(
        &self,
        after_txid: u64,
        upto_txid: u64,
        mut each: impl FnMut(RecordLocation<'_>, EditRecord) -> std::result::Result<(), E>,
    ) -> std::result::Result<u64, E> {
        let dirs = self.dirs();
        let active = dirs.active_or_err()?;
        let mut listings: Vec<(PathBuf, Vec<SegmentFile>)> = Vec::new();
        let mut list_err = None;
        for dir in active {
            match list_segments(dirs.fs().as_ref(), &dir) {
                Ok(segs) => listings.push((dir, segs)),
                Err(e) => {
                    tracing::error!(dir = %dir.display(), "cannot list edit segments: {e}");
                    list_err.get_or_insert(e);
                }
            }
        }
        if listings.is_empty() {
            return Err(list_err.unwrap_or_else(|| dirs.none_left()).into());
        }
        let mut next = after_txid + 1;
        let mut count = 0u64;
        while next <= upto_txid {
            // Copies of the finalized segment holding `next`, one per directory.
            let copies: Vec<(PathBuf, u64, u64)> = listings
                .iter()
                .filter_map(|(dir, segs)| {
                    segs.iter().find_map(|s| match s.last {
                        Some(last) if s.first <= next && next <= last => {
                            Some((dir.join(&s.name), s.first, last))
                        }
                        _ => None,
                    })
                })
                .collect();
            if copies.is_empty() {
                return Err(EditLogError::NotFinalized {
                    dir: listings[0].0.clone(),
                    txid: next,
                }
                .into());
            }
            let mut read = None;
            let mut first_err = None;
            for (path, first, last) in &copies {
                match read_checked(self, path, *first, *last) {
                    Ok(records) => {
                        read = Some((path.clone(), *last, records));
                        break;
                    }
                    Err(e) => {
                        tracing::error!("edit segment unusable for replay: {e}");
                        first_err.get_or_insert(e);
                    }
                }
            }
            let Some((path, last, records)) = read else {
                return Err(first_err
                    .unwrap_or(EditLogError::NotFinalized {
                        dir: listings[0].0.clone(),
                        txid: next,
                    })
                    .into());
            };
            for (offset, rec) in records {
                if rec.txid < next || rec.txid > upto_txid {
                    continue;
                }
                each(
                    RecordLocation {
                        path: &path,
                        offset,
                    },
                    rec,
                )?;
                count += 1;
            }
            next = last.min(upto_txid) + 1;
        }
        Ok(count)
    }
}
