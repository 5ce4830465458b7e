//! The edit log writer: txids, buffering, group commit, segment rolls and purging.
//!
//! [`EditLog::append`] frames a record into an in-memory buffer under a short lock and
//! returns its txid. [`EditLog::sync`] blocks until that txid is durable: the first waiter
//! to find no flush in progress becomes the leader, takes the whole buffer, writes and
//! fsyncs it in every directory with the lock released, then wakes everyone; appends made
//! meanwhile go to a fresh buffer for the next leader. So concurrent callers share fsyncs,
//! and no txid is reported durable before its bytes are synced in every working directory.
//!
//! Each in-progress segment reserves its space a megabyte ahead with zeros
//! ([`crate::fs::SEGMENT_PREALLOCATION`]), so a group commit's fdatasync flushes data only;
//! the zeros are cut off before the segment is finalized, and recovery reads a zero tail as
//! the end of the log.
//!
//! Async callers ([`EditLog::sync_async`]) do not take part in that: they register their txid
//! with the log's sync thread (`syncer`), which leads the flushes for them and wakes each
//! waiter once its txid is durable, so an RPC task waits without holding a blocking-pool
//! thread and a group commit wakes only the tasks it made durable.
//!
//! All methods except [`EditLog::sync_async`] block on disk I/O or on other threads' I/O:
//! async callers must use `sync_async` (or `tokio::task::spawn_blocking`) for `sync`,
//! `roll`, `purge_before`, `close` and `open`; `append` only takes a short lock.

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::{Condvar, Mutex, MutexGuard};

use crate::error::{EditLogError, Result};
use crate::fs::{SEGMENT_PREALLOCATION, WritableFile};
use crate::layout::{finalized_name, inprogress_name};
use crate::record::{EditRecord, MAX_PAYLOAD, SEGMENT_MAGIC, encode_record};
use crate::recovery::{RecoveryMode, list_segments, recover};
use crate::storage::StorageDirs;

mod syncer;

use syncer::{Owner, Waiter};

/// How [`EditLog::exclusive_as`] takes the log.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Take {
    /// Appends go on after (roll).
    Keep,
    /// Appends are refused from now on (close).
    Close,
    /// Appends are refused while the log starts over, then numbered from its new start.
    Restart,
}

/// The durable write-ahead log. Cheap to clone; all clones share one log.
#[derive(Clone)]
pub struct EditLog {
    inner: Arc<Inner>,
    /// Ends the sync thread once the last clone is gone (the thread holds `inner` only).
    _owner: Arc<Owner>,
}

struct Inner {
    dirs: StorageDirs,
    state: Mutex<State>,
    cond: Condvar,
    /// Open in-progress segment files; only the current leader touches them.
    streams: Mutex<Vec<Stream>>,
    group_syncs: AtomicU64,
    /// How long each group flush (write + fsync in every directory) took.
    sync_times: rhdfs_metrics::Histogram,
    /// Wakes the sync thread when it is parked with no waiter.
    syncer_cond: Condvar,
    /// Whether the sync thread started (it starts with the first `sync_async`).
    syncer: OnceLock<bool>,
    /// `State::waiters.len()`, for the sync thread to spin on without the lock.
    waiting: std::sync::atomic::AtomicUsize,
}

struct State {
    next_txid: u64,
    buf: Vec<u8>,
    /// The buffer a flush wrote last, emptied: the next flush's buffer, so appends during
    /// a flush do not grow a new one from nothing.
    spare: Vec<u8>,
    synced: u64,
    leader: bool,
    /// Rolls/closes waiting to take leadership: syncs let them go first (they flush all).
    exclusive_waiting: usize,
    segment_first: u64,
    closed: bool,
    fatal: Option<String>,
    /// Async callers waiting for a txid to be durable (the sync thread serves them).
    waiters: Vec<Waiter>,
    /// The sync thread waits on `syncer_cond` for a waiter (so a new one must wake it).
    syncer_parked: bool,
    /// The sync thread's last flush answered one waiter alone: one writer at a time, whose
    /// next call the thread and the caller spin for rather than sleep (`syncer`).
    single_writer: bool,
    /// The last `EditLog` clone is gone: the sync thread ends.
    syncer_exit: bool,
}

#[derive(Debug)]
struct Stream {
    dir: PathBuf,
    file: Box<dyn WritableFile>,
}

impl fmt::Debug for EditLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = self.inner.state.lock();
        f.debug_struct("EditLog")
            .field("segment_first", &st.segment_first)
            .field("last_txid", &(st.next_txid - 1))
            .field("synced_txid", &st.synced)
            .field("dirs", &self.inner.dirs)
            .finish()
    }
}

/// Creates `edits_inprogress_<first>` with its header in every active directory.
fn start_segment(dirs: &StorageDirs, first: u64) -> Result<Vec<Stream>> {
    let fs = dirs.fs().clone();
    let name = inprogress_name(first);
    let mut streams = Vec::new();
    dirs.for_each_active("start edit segment", |dir| {
        let path = dir.join(&name);
        let mut file = fs
            .create_preallocated(&path, SEGMENT_PREALLOCATION)
            .map_err(|e| EditLogError::io("create", &path, e))?;
        file.write_all(&SEGMENT_MAGIC)
            .map_err(|e| EditLogError::io("write", &path, e))?;
        file.sync()
            .map_err(|e| EditLogError::io("sync", &path, e))?;
        fs.sync_dir(dir)
            .map_err(|e| EditLogError::io("sync directory", dir, e))?;
        streams.push(Stream {
            dir: dir.to_path_buf(),
            file,
        });
        Ok(())
    })?;
    Ok(streams)
}

/// Appends `buf` to every stream and syncs it; with several directories they are
/// written in parallel so a group commit costs one fsync latency, not one per directory.
fn write_and_sync_all(streams: &mut [Stream], buf: &[u8]) -> Vec<io::Result<()>> {
    fn one(s: &mut Stream, buf: &[u8]) -> io::Result<()> {
        s.file.write_all(buf)?;
        s.file.sync()
    }
    if streams.len() <= 1 {
        return streams.iter_mut().map(|s| one(s, buf)).collect();
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = streams
            .iter_mut()
            .map(|s| scope.spawn(move || one(s, buf)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(io::Error::other("edit log writer thread panicked")))
            })
            .collect()
    })
}

impl EditLog {
    /// Recovers the log in `dirs` (see [`RecoveryMode`]) and opens it for writing.
    ///
    /// Returns the records after `after_txid` (the txid of the image just loaded), in
    /// order, for replay. Every surviving segment is finalized and a new in-progress
    /// segment starts at the txid after the last one found (or after `after_txid`).
    /// Blocking.
    pub fn open(
        dirs: StorageDirs,
        after_txid: u64,
        mode: RecoveryMode,
    ) -> Result<(EditLog, Vec<EditRecord>)> {
        let (records, last) = recover(&dirs, after_txid, mode)?;
        let first = last + 1;
        let streams = start_segment(&dirs, first)?;
        dirs.write_seen_txid(first)?;
        tracing::info!(first_txid = first, "edit log open for writing");
        let inner = Arc::new(Inner {
            dirs,
            state: Mutex::new(State {
                next_txid: first,
                buf: Vec::new(),
                spare: Vec::new(),
                synced: last,
                leader: false,
                exclusive_waiting: 0,
                segment_first: first,
                closed: false,
                fatal: None,
                waiters: Vec::new(),
                syncer_parked: false,
                single_writer: false,
                syncer_exit: false,
            }),
            cond: Condvar::new(),
            streams: Mutex::new(streams),
            group_syncs: AtomicU64::new(0),
            sync_times: rhdfs_metrics::Histogram::new(),
            syncer_cond: Condvar::new(),
            syncer: OnceLock::new(),
            waiting: std::sync::atomic::AtomicUsize::new(0),
        });
        let log = EditLog {
            _owner: Arc::new(Owner::new(Arc::clone(&inner))),
            inner,
        };
        Ok((log, records))
    }

    /// The storage directories this log writes to.
    pub fn dirs(&self) -> &StorageDirs {
        &self.inner.dirs
    }

    /// Buffers one record and returns its txid (the next one). Does no I/O; the record is
    /// not durable until [`EditLog::sync`] for this txid returns. Txids are handed out in
    /// call order, so callers that need log order to match their own order append under
    /// their own lock.
    pub fn append(&self, payload: &[u8]) -> Result<u64> {
        if payload.len() > MAX_PAYLOAD {
            return Err(EditLogError::RecordTooLarge {
                len: payload.len(),
                max: MAX_PAYLOAD,
            });
        }
        let mut st = self.inner.state.lock();
        if let Some(detail) = &st.fatal {
            return Err(EditLogError::NoDirectoriesLeft {
                detail: detail.clone(),
            });
        }
        if st.closed {
            return Err(EditLogError::Closed);
        }
        let txid = st.next_txid;
        st.next_txid += 1;
        encode_record(txid, payload, &mut st.buf);
        Ok(txid)
    }

    /// Blocks until every record up to `txid` is written and fsynced in all working
    /// directories, sharing the fsync with concurrent callers. Errors when no directory is
    /// left (then nothing more will ever be durable).
    pub fn sync(&self, txid: u64) -> Result<()> {
        let inner = &*self.inner;
        let mut st = inner.state.lock();
        if txid >= st.next_txid {
            return Err(EditLogError::NotAppended {
                txid,
                last: st.next_txid - 1,
            });
        }
        loop {
            if st.synced >= txid {
                return Ok(());
            }
            if let Some(detail) = &st.fatal {
                return Err(EditLogError::NoDirectoriesLeft {
                    detail: detail.clone(),
                });
            }
            if st.leader || st.exclusive_waiting > 0 {
                inner.cond.wait(&mut st);
                continue;
            }
            inner.lead_flush(&mut st);
        }
    }

    /// Syncs everything appended so far; returns the last txid.
    pub fn sync_all(&self) -> Result<u64> {
        let last = self.last_txid();
        self.sync(last)?;
        Ok(last)
    }

    /// [`EditLog::sync`] for async callers: returns at once when `txid` is already durable,
    /// otherwise registers with the log's sync thread, which flushes (sharing the fsync
    /// with every other waiter and blocking caller) and wakes this task once `txid` is
    /// durable; no executor or blocking-pool thread waits meanwhile.
    pub async fn sync_async(&self, txid: u64) -> Result<()> {
        if !self.inner.syncer_running() {
            // No sync thread could be started: wait on a blocking-pool thread instead.
            let log = self.clone();
            return tokio::task::spawn_blocking(move || log.sync(txid))
                .await
                .map_err(|e| EditLogError::TaskFailed(e.to_string()))?;
        }
        let durable = {
            let mut st = self.inner.state.lock();
            if st.synced >= txid {
                return Ok(());
            }
            if txid >= st.next_txid {
                return Err(EditLogError::NotAppended {
                    txid,
                    last: st.next_txid - 1,
                });
            }
            if let Some(detail) = &st.fatal {
                return Err(EditLogError::NoDirectoriesLeft {
                    detail: detail.clone(),
                });
            }
            let (waiter, durable) = Waiter::new(txid);
            st.waiters.push(waiter);
            self.inner
                .waiting
                .store(st.waiters.len(), Ordering::Release);
            let spin = st.single_writer && st.waiters.len() == 1;
            let wake = std::mem::take(&mut st.syncer_parked);
            drop(st);
            if wake {
                self.inner.syncer_cond.notify_one();
            }
            (durable, spin)
        };
        let answer = match durable {
            (durable, true) => syncer::spin_wait(durable).await,
            (durable, false) => durable.await.ok(),
        };
        match answer {
            Some(None) => Ok(()),
            Some(Some(detail)) => Err(EditLogError::NoDirectoriesLeft { detail }),
            None => Err(EditLogError::TaskFailed(
                "the edit log's sync thread ended".into(),
            )),
        }
    }
}

impl Inner {
    /// Takes leadership and flushes the buffer (the caller found no flush in progress and
    /// no roll or close waiting), then publishes the result and wakes everyone waiting.
    fn lead_flush(&self, st: &mut MutexGuard<'_, State>) {
        st.leader = true;
        let spare = std::mem::take(&mut st.spare);
        let mut buf = std::mem::replace(&mut st.buf, spare);
        let upto = st.next_txid - 1;
        let res = MutexGuard::unlocked(st, || self.write_out(&buf));
        st.leader = false;
        match res {
            Ok(()) => st.synced = st.synced.max(upto),
            Err(e) => st.fatal = Some(e.to_string()),
        }
        buf.clear();
        st.spare = buf;
        self.cond.notify_all();
    }

    /// Writes and syncs `buf` in every stream whose directory is still in service; a
    /// stream that fails is dropped and its directory taken out of service.
    fn write_out(&self, buf: &[u8]) -> Result<()> {
        let mut streams = self.streams.lock();
        self.write_streams(&mut streams, buf)
    }

    fn write_streams(&self, streams: &mut Vec<Stream>, buf: &[u8]) -> Result<()> {
        let dirs = &self.dirs;
        let active = dirs.active();
        streams.retain(|s| active.contains(&s.dir));
        if !buf.is_empty() {
            let started = std::time::Instant::now();
            let results = write_and_sync_all(streams, buf);
            self.sync_times.observe(started.elapsed());
            let mut i = 0;
            streams.retain(|s| {
                let keep = match &results[i] {
                    Ok(()) => true,
                    Err(e) => {
                        dirs.mark_failed(&s.dir, &format!("writing edit log: {e}"));
                        false
                    }
                };
                i += 1;
                keep
            });
            self.group_syncs.fetch_add(1, Ordering::Relaxed);
        }
        if streams.is_empty() {
            return Err(dirs.none_left());
        }
        Ok(())
    }
}

impl EditLog {
    /// Takes leadership (waiting for a flush in progress), runs `io` on the buffered bytes
    /// and the segment's first and last txids, and publishes the result.
    /// With `close`, appends are refused from the moment leadership is taken.
    fn exclusive<T>(
        &self,
        close: bool,
        io: impl FnOnce(&[u8], u64, u64) -> Result<(T, u64)>,
    ) -> Result<T> {
        self.exclusive_as(if close { Take::Close } else { Take::Keep }, io)
    }

    /// [`EditLog::exclusive`]; with [`Take::Restart`] appends are refused while `io` runs
    /// and numbering continues from the new segment's first txid.
    fn exclusive_as<T>(
        &self,
        take: Take,
        io: impl FnOnce(&[u8], u64, u64) -> Result<(T, u64)>,
    ) -> Result<T> {
        let inner = &*self.inner;
        let mut st = inner.state.lock();
        st.exclusive_waiting += 1;
        while st.leader {
            inner.cond.wait(&mut st);
        }
        st.exclusive_waiting -= 1;
        let refused = if let Some(detail) = &st.fatal {
            Some(EditLogError::NoDirectoriesLeft {
                detail: detail.clone(),
            })
        } else if st.closed {
            Some(EditLogError::Closed)
        } else {
            None
        };
        if let Some(e) = refused {
            // Syncs held back for this call must look again.
            inner.cond.notify_all();
            return Err(e);
        }
        st.leader = true;
        st.closed = take != Take::Keep;
        let buf = std::mem::take(&mut st.buf);
        let last = st.next_txid - 1;
        let first = st.segment_first;
        let res = MutexGuard::unlocked(&mut st, || io(&buf, first, last));
        st.leader = false;
        let out = match res {
            Ok((v, new_first)) => {
                st.synced = st.synced.max(last);
                st.segment_first = new_first;
                if take == Take::Restart {
                    st.next_txid = new_first;
                    st.synced = new_first - 1;
                    st.closed = false;
                }
                Ok(v)
            }
            Err(e) => {
                // The buffered records may be lost and the segment half rolled: nothing
                // after this may claim durability. (Every error here means no directory
                // is left anyway.)
                st.fatal = Some(e.to_string());
                Err(e)
            }
        };
        inner.cond.notify_all();
        out
    }

    /// Flushes the buffer and renames the in-progress segment of every stream to
    /// `edits_<first>-<last>` (or removes it when empty).
    fn finalize_streams(
        &self,
        streams: &mut Vec<Stream>,
        buf: &[u8],
        first: u64,
        last: u64,
    ) -> Result<()> {
        self.inner.write_streams(streams, buf)?;
        let dirs = &self.inner.dirs;
        let fs = dirs.fs();
        let from = inprogress_name(first);
        for s in std::mem::take(streams) {
            let Stream { dir, mut file } = s;
            let src = dir.join(&from);
            // The reserved zeros go before the name says the segment is complete.
            let finished = file
                .finish()
                .map_err(|e| EditLogError::io("cut preallocated space", &src, e));
            drop(file);
            let res = finished
                .and_then(|()| {
                    if last >= first {
                        let dst = dir.join(finalized_name(first, last));
                        fs.rename(&src, &dst)
                            .map_err(|e| EditLogError::io("rename", &src, e))
                    } else {
                        fs.remove_file(&src)
                            .map_err(|e| EditLogError::io("remove", &src, e))
                    }
                })
                .and_then(|()| {
                    fs.sync_dir(&dir)
                        .map_err(|e| EditLogError::io("sync directory", &dir, e))
                });
            if let Err(e) = res {
                dirs.mark_failed(&dir, &format!("finalizing edit segment: {e}"));
            }
        }
        dirs.active_or_err().map(|_| ())
    }

    /// Finalizes the current segment and starts `edits_inprogress_<last+1>`; returns the new
    /// segment's first txid. Everything appended before the roll is synced by it. A roll of
    /// an empty segment changes nothing and returns its first txid. Blocking.
    pub fn roll(&self) -> Result<u64> {
        self.exclusive(false, |buf, first, last| {
            let mut streams = self.inner.streams.lock();
            if last < first {
                self.inner.write_streams(&mut streams, buf)?;
                return Ok((first, first));
            }
            self.finalize_streams(&mut streams, buf, first, last)?;
            let next = last + 1;
            *streams = start_segment(&self.inner.dirs, next)?;
            self.inner.dirs.write_seen_txid(next)?;
            tracing::info!(first, last, "edit log segment rolled");
            Ok((next, next))
        })
    }

    /// Starts the log over after `txid`, the txid of an image just saved that holds every
    /// edit this log has (a member of an HA nameservice installing another member's image):
    /// the current segment is finalized, every segment is removed and
    /// `edits_inprogress_<txid+1>` started; the next append gets `txid + 1`. Refuses when the
    /// log holds edits past `txid`. Blocking.
    pub fn restart_after(&self, txid: u64) -> Result<()> {
        // Only the caller appends to a log being started over, so this holds below too
        // (an error inside `exclusive_as` would leave the log failed).
        let last = self.last_txid();
        if last > txid {
            return Err(EditLogError::AheadOfImage { txid, last });
        }
        self.exclusive_as(Take::Restart, |buf, first, last| {
            let mut streams = self.inner.streams.lock();
            self.finalize_streams(&mut streams, buf, first, last)?;
            let dirs = &self.inner.dirs;
            let fs = dirs.fs().clone();
            dirs.for_each_active("remove edit segments", |dir| {
                for seg in list_segments(fs.as_ref(), dir)? {
                    let p = dir.join(&seg.name);
                    fs.remove_file(&p)
                        .map_err(|e| EditLogError::io("remove", &p, e))?;
                }
                fs.sync_dir(dir)
                    .map_err(|e| EditLogError::io("sync directory", dir, e))
            })?;
            let next = txid + 1;
            *streams = start_segment(dirs, next)?;
            dirs.write_seen_txid(next)?;
            tracing::info!(
                after_txid = txid,
                "edit log started over after an installed image"
            );
            Ok(((), next))
        })
    }

    /// Syncs everything, finalizes the current segment and refuses further appends.
    /// Blocking.
    pub fn close(&self) -> Result<()> {
        let res = self.exclusive(true, |buf, first, last| {
            let mut streams = self.inner.streams.lock();
            self.finalize_streams(&mut streams, buf, first, last)?;
            Ok(((), first))
        });
        match res {
            Err(EditLogError::Closed) => Ok(()),
            other => other,
        }
    }

    /// Removes every finalized segment whose last txid is below `txid` from every active
    /// directory (pass the txid after the oldest image that must stay loadable). Returns the
    /// number of files removed. In-progress segments are never removed. Blocking.
    pub fn purge_before(&self, txid: u64) -> Result<usize> {
        let dirs = &self.inner.dirs;
        let fs = dirs.fs().clone();
        let mut removed = 0;
        dirs.for_each_active("purge edit segments", |dir| {
            for seg in list_segments(fs.as_ref(), dir)? {
                if seg.last.is_some_and(|l| l < txid) {
                    let p = dir.join(&seg.name);
                    fs.remove_file(&p)
                        .map_err(|e| EditLogError::io("remove", &p, e))?;
                    removed += 1;
                }
            }
            Ok(())
        })?;
        if removed > 0 {
            tracing::info!(before_txid = txid, files = removed, "purged edit segments");
        }
        Ok(removed)
    }

    /// The last txid handed out by [`EditLog::append`].
    pub fn last_txid(&self) -> u64 {
        self.inner.state.lock().next_txid - 1
    }

    /// The last txid known durable.
    pub fn synced_txid(&self) -> u64 {
        self.inner.state.lock().synced
    }

    /// First txid of the in-progress segment.
    pub fn segment_first_txid(&self) -> u64 {
        self.inner.state.lock().segment_first
    }

    /// Number of transactions in the in-progress segment (for `dfs.namenode.checkpoint.txns`).
    pub fn segment_txns(&self) -> u64 {
        let st = self.inner.state.lock();
        st.next_txid - st.segment_first
    }

    /// Number of group flushes so far: each wrote the buffered records to every directory
    /// and fsynced each once. Far below the record count under concurrent load.
    pub fn fsync_count(&self) -> u64 {
        self.inner.group_syncs.load(Ordering::Relaxed)
    }

    /// Durations of the group flushes so far (Hadoop's Syncs metric).
    pub fn sync_times(&self) -> rhdfs_metrics::HistogramSnapshot {
        self.inner.sync_times.snapshot()
    }
}
