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
//! Start-up: [`StorageDirs::read_version`], [`ImageStore::load_latest_image`], then
//! [`EditLog::open`] with the image's txid, which recovers the log (truncating a torn
//! final record, refusing damage in the middle unless [`RecoveryMode::KeepPrefix`]) and
//! returns the records to replay. Format: [`StorageDirs::format`], then
//! [`ImageStore::save_image`] of the empty namespace at txid 0.
//!
//! Every call here may block on disk I/O except [`EditLog::append`] (a short lock) and
//! [`EditLog::sync_async`]; from async code run the others on `spawn_blocking`.

mod error;
pub mod fs;
mod image;
pub mod layout;
mod log;
pub mod record;
mod recovery;
mod storage;
mod version;

pub use error::{EditLogError, Result};
pub use image::{IMAGE_MAGIC, IMAGE_TRAILER_LEN, ImageStore, decode_image};
pub use log::EditLog;
pub use record::EditRecord;
pub use recovery::{RecoveryMode, read_edits};
pub use storage::StorageDirs;
pub use version::{NAME_NODE_LAYOUT_VERSION, NAME_NODE_STORAGE_TYPE, StorageVersion};
