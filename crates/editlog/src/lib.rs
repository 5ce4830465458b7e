//! Durable storage for the NameNode: a write-ahead edit log with group commit, an image
//! (checkpoint) store, and the storage directories (`dfs.namenode.name.dir`) they live in.
//!
//! The crate knows nothing of what records mean: the NameNode encodes each namespace
//! operation to bytes, [`EditLog::append`]s it (getting its txid), and acknowledges the
//! client only after [`EditLog::sync`] (or [`EditLog::sync_async`]) for that txid returned.
//!
//! Layout of each storage directory (Hadoop's names):
//!
//! ```text
//! <dir>/current/VERSION                      key=value lines (StorageVersion)
//! <dir>/current/seen_txid                    first txid of the newest segment started
//! <dir>/current/edits_<first>-<last>         finalized segments (19-digit txids)
//! <dir>/current/edits_inprogress_<first>     the segment being written
//! <dir>/current/fsimage_<txid>               images: payload + CRC32C trailer
//! ```
//!
//! Start-up: [`StorageDirs::from_conf`], [`StorageDirs::lock`],
//! [`StorageDirs::read_version`], [`ImageStore::load_latest_image`], then
//! [`EditLog::open`] with the image's txid, which recovers the log and returns the records
//! to replay. Format: [`StorageDirs::format`], then [`ImageStore::save_image`] of the
//! empty namespace at txid 0. Checkpoint: serialize the namespace as of txid `t` (all of
//! it synced), [`ImageStore::save_image`], [`EditLog::roll`], then
//! [`EditLog::purge_before`]`(oldest retained image + 1)` so a fallback to the older
//! image can still replay. A checkpoint built off the live namespace instead rolls first
//! (everything up to `roll() - 1` is then finalized) and replays
//! [`EditLog::read_finalized`] onto the newest image, while appends go on.
//!
//! Recovery rules: an incomplete final record at the end of the last in-progress segment
//! (including a zero-filled tail, or a complete final record whose checksum fails, which a
//! crash can leave when the file grew before its data reached the disk) is truncated with
//! a warning (at INFO when all that is cut is the segment's preallocated zeros, which every
//! unclean stop leaves: in-progress segments reserve their space a megabyte ahead so a group
//! commit's fdatasync writes data only). Any other damage — a checksum mismatch followed by more data, a txid out of
//! sequence, a gap between segments, a finalized segment shorter than its name — is an
//! [`EditLogError::Corrupt`] / [`EditLogError::Gap`] naming the file and byte offset,
//! unless [`RecoveryMode::KeepPrefix`] (`namenode -recover`) keeps the valid prefix. With
//! several directories, a damaged or lagging one is repaired from the one whose log
//! reaches furthest, provided that one covers the damaged point.
//!
//! Failures: a directory whose write or fsync fails is taken out of service with an error
//! log line and the log continues in the others. When none is left every `append`/`sync`
//! returns [`EditLogError::NoDirectoriesLeft`] for good: the NameNode must stop.
//!
//! Every call here may block on disk I/O except [`EditLog::append`] (a short lock) and
//! [`EditLog::sync_async`]; from async code run the others on `spawn_blocking`.

mod error;
mod finalized;
pub mod fs;
mod image;
pub mod layout;
mod log;
pub mod record;
mod recovery;
mod storage;
mod version;

pub use error::{EditLogError, Result};
pub use finalized::RecordLocation;
pub use image::{IMAGE_MAGIC, IMAGE_TRAILER_LEN, ImageStore, decode_image, image_trailer};
pub use log::EditLog;
pub use record::EditRecord;
pub use recovery::{RecoveryMode, read_edits};
pub use storage::{LOCK_FILE, StorageDirs, StorageLock};
pub use version::{NAME_NODE_LAYOUT_VERSION, NAME_NODE_STORAGE_TYPE, StorageVersion};
