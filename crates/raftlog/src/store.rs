//! [`RaftLogStore`]: openraft's `RaftLogStorage` over [`crate::segments`].
//!
//! Entries not yet purged are also kept in memory (readers never touch the disk); every
//! change is applied to that copy at once and queued to the writer thread, which makes it
//! durable in the same order. `append` reports through openraft's callback only after the
//! group commit's fdatasync; `truncate`, `save_vote` and `purge` return once durable.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::io::Cursor;
use std::ops::RangeBounds;
use std::path::Path;
use std::sync::Arc;

use openraft::storage::{LogFlushed, LogState, RaftLogStorage};
use openraft::{
    BasicNode, Entry, ErrorSubject, ErrorVerb, LogId, OptionalSend, RaftLogReader, RaftTypeConfig,
    StorageError, Vote,
};
use parking_lot::Mutex;
use rhdfs_editlog::fs::{FileSystem, LocalFs};
use rhdfs_editlog::record::{MAX_PAYLOAD, encode_record};

use crate::codec::{EntryData, Meta, decode_entry, encode_entry};
use crate::error::{RaftLogError, Result};
use crate::segments::SegmentLog;
use crate::writer::{AppendBatch, Writer};

/// What a type configuration must be for this store: u64 node ids, `BasicNode`s, openraft's
/// `Entry`, and application data that encodes into a record.
pub trait LogTypeConfig:
    RaftTypeConfig<NodeId = u64, Node = BasicNode, Entry = Entry<Self>, SnapshotData = Cursor<Vec<u8>>>
where
    Self::D: EntryData + Clone,
{
}

impl<C> LogTypeConfig for C
where
    C: RaftTypeConfig<
            NodeId = u64,
            Node = BasicNode,
            Entry = Entry<C>,
            SnapshotData = Cursor<Vec<u8>>,
        >,
    C::D: EntryData + Clone,
{
}

/// Settings of a store.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// A segment reaching this many bytes is finished and the next append starts a new one.
    pub segment_bytes: u64,
    /// The file system (tests inject failures).
    pub fs: Arc<dyn FileSystem>,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            segment_bytes: 64 << 20,
            fs: Arc::new(LocalFs),
        }
    }
}

struct Cached<C: LogTypeConfig>
where
    C::D: EntryData + Clone,
{
    entries: BTreeMap<u64, Entry<C>>,
    meta: Meta,
}

/// The shared in-memory copy.
struct Shared<C: LogTypeConfig>
where
    C::D: EntryData + Clone,
{
    cached: Mutex<Cached<C>>,
}

/// The Raft log of one NameNode (or log-only voter), in one directory.
pub struct RaftLogStore<C: LogTypeConfig>
where
    C::D: EntryData + Clone,
{
    shared: Arc<Shared<C>>,
    writer: Arc<Writer>,
}

/// A reader of a [`RaftLogStore`] (openraft's replication tasks hold these).
pub struct LogReader<C: LogTypeConfig>
where
    C::D: EntryData + Clone,
{
    shared: Arc<Shared<C>>,
}

impl<C: LogTypeConfig> Clone for LogReader<C>
where
    C::D: EntryData + Clone,
{
    fn clone(&self) -> Self {
        LogReader {
            shared: self.shared.clone(),
        }
    }
}

impl<C: LogTypeConfig> Debug for RaftLogStore<C>
where
    C::D: EntryData + Clone,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let c = self.shared.cached.lock();
        f.debug_struct("RaftLogStore")
            .field("entries", &c.entries.len())
            .field("meta", &c.meta)
            .finish()
    }
}

fn write_err(e: RaftLogError) -> StorageError<u64> {
    e.into_storage(ErrorSubject::Logs, ErrorVerb::Write)
}

impl<C: LogTypeConfig> RaftLogStore<C>
where
    C::D: EntryData + Clone,
{
    /// Recovers the log in `dir` (see [`crate::segments`]) and starts its writer thread.
    /// Blocking: from async code use [`RaftLogStore::open_async`].
    pub fn open(dir: &Path, options: StoreOptions) -> Result<Self> {
        let (log, meta, records) = SegmentLog::open(options.fs, dir, options.segment_bytes)?;
        let mut entries = BTreeMap::new();
        for (index, payload) in records {
            entries.insert(index, decode_entry::<C>(index, &payload)?);
        }
        tracing::info!(
            dir = %dir.display(),
            entries = entries.len(),
            purged = ?meta.purged.map(|p| p.index),
            "raft log open"
        );
        Ok(RaftLogStore {
            shared: Arc::new(Shared {
                cached: Mutex::new(Cached { entries, meta }),
            }),
            writer: Arc::new(Writer::start(log)?),
        })
    }

    /// [`RaftLogStore::open`] on a blocking thread.
    pub async fn open_async(dir: &Path, options: StoreOptions) -> Result<Self> {
        let dir = dir.to_path_buf();
        tokio::task::spawn_blocking(move || Self::open(&dir, options))
            .await
            .map_err(|e| RaftLogError::Failed(format!("open task: {e}")))?
    }

    /// Syncs, gives back the newest segment's reserved space and stops the writer.
    /// Dropping the store without it is what a crash leaves, minus unsynced data.
    pub async fn close(&self) -> Result<()> {
        self.writer.close().await
    }

    /// The vote and last purged log id as the meta file holds them.
    pub fn meta(&self) -> Meta {
        self.shared.cached.lock().meta
    }

    async fn write_meta(&self, meta: Meta, purge: Option<u64>) -> Result<()> {
        self.writer.write_meta(meta, purge).await
    }
}

impl<C: LogTypeConfig> Shared<C>
where
    C::D: EntryData + Clone,
{
    fn range<RB: RangeBounds<u64>>(&self, range: RB) -> Vec<Entry<C>> {
        let c = self.cached.lock();
        c.entries.range(range).map(|(_, e)| e.clone()).collect()
    }
}

impl<C: LogTypeConfig> RaftLogReader<C> for LogReader<C>
where
    C::D: EntryData + Clone,
{
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + OptionalSend>(
        &mut self,
        range: RB,
    ) -> Result<Vec<Entry<C>>, StorageError<u64>> {
        Ok(self.shared.range(range))
    }
}

impl<C: LogTypeConfig> RaftLogReader<C> for RaftLogStore<C>
where
    C::D: EntryData + Clone,
{
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + OptionalSend>(
        &mut self,
        range: RB,
    ) -> Result<Vec<Entry<C>>, StorageError<u64>> {
        Ok(self.shared.range(range))
    }
}

impl<C: LogTypeConfig> RaftLogStorage<C> for RaftLogStore<C>
where
    C::D: EntryData + Clone,
{
    type LogReader = LogReader<C>;

    async fn get_log_state(&mut self) -> Result<LogState<C>, StorageError<u64>> {
        let c = self.shared.cached.lock();
        let last_purged_log_id = c.meta.purged;
        let last_log_id = c
            .entries
            .last_key_value()
            .map(|(_, e)| e.log_id)
            .or(last_purged_log_id);
        Ok(LogState {
            last_purged_log_id,
            last_log_id,
        })
    }

    async fn get_log_reader(&mut self) -> Self::LogReader {
        LogReader {
            shared: self.shared.clone(),
        }
    }

    async fn save_vote(&mut self, vote: &Vote<u64>) -> Result<(), StorageError<u64>> {
        let meta = {
            let mut c = self.shared.cached.lock();
            c.meta.vote = Some(*vote);
            c.meta
        };
        self.write_meta(meta, None)
            .await
            .map_err(|e| e.into_storage(ErrorSubject::Vote, ErrorVerb::Write))
    }

    async fn read_vote(&mut self) -> Result<Option<Vote<u64>>, StorageError<u64>> {
        Ok(self.shared.cached.lock().meta.vote)
    }

    async fn append<I>(
        &mut self,
        entries: I,
        callback: LogFlushed<C>,
    ) -> Result<(), StorageError<u64>>
    where
        I: IntoIterator<Item = Entry<C>> + OptionalSend,
        I::IntoIter: OptionalSend,
    {
        let mut batch = AppendBatch {
            first: 0,
            bytes: Vec::new(),
            offsets: Vec::new(),
        };
        let mut payload = Vec::new();
        let mut added = Vec::new();
        for entry in entries {
            let index = entry.log_id.index;
            if added.is_empty() {
                batch.first = index;
            } else if index != batch.first + added.len() as u64 {
                return Err(write_err(RaftLogError::Decode {
                    what: "append",
                    reason: format!("entries not contiguous at index {index}"),
                }));
            }
            payload.clear();
            encode_entry(&entry, &mut payload);
            if payload.len() > MAX_PAYLOAD {
                return Err(write_err(RaftLogError::TooLarge {
                    index,
                    len: payload.len(),
                    max: MAX_PAYLOAD,
                }));
            }
            batch.offsets.push(batch.bytes.len() as u64);
            encode_record(index, &payload, &mut batch.bytes);
            added.push(entry);
        }
        if added.is_empty() {
            callback.log_io_completed(Ok(()));
            return Ok(());
        }
        {
            let mut c = self.shared.cached.lock();
            for e in added {
                c.entries.insert(e.log_id.index, e);
            }
        }
        self.writer
            .append(batch, Box::new(move |res| callback.log_io_completed(res)));
        Ok(())
    }

    async fn truncate(&mut self, log_id: LogId<u64>) -> Result<(), StorageError<u64>> {
        {
            let mut c = self.shared.cached.lock();
            c.entries.split_off(&log_id.index);
        }
        self.writer.truncate(log_id.index).await.map_err(write_err)
    }

    async fn purge(&mut self, log_id: LogId<u64>) -> Result<(), StorageError<u64>> {
        let meta = {
            let mut c = self.shared.cached.lock();
            if c.meta.purged.is_some_and(|p| p.index >= log_id.index) {
                return Ok(());
            }
            c.meta.purged = Some(log_id);
            let kept = c.entries.split_off(&(log_id.index + 1));
            c.entries = kept;
            c.meta
        };
        self.write_meta(meta, Some(log_id.index))
            .await
            .map_err(write_err)
    }
}
