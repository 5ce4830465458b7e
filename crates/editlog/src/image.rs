//! The image (checkpoint) store: `fsimage_<txid>` files holding the caller's serialized
//! namespace followed by a trailer `[u32 BE CRC32C of the payload][8-byte magic]`.
//!
//! A save writes `fsimage.ckpt_<txid>` in every active directory, fsyncs it, renames it
//! into place and fsyncs the directory, then keeps only the newest N images. A load takes
//! the newest image whose checksum holds, falling back to older ones with a log line.
//! Both block on disk I/O: async callers use `spawn_blocking`. Saving does not touch the
//! edit log, so the NameNode keeps logging while an image is written.

use rhdfs_conf::Configuration;
use rhdfs_conf::keys;

use crate::error::{EditLogError, Result};
use crate::layout::{FileKind, image_ckpt_name, image_name, parse_name};
use crate::storage::StorageDirs;

/// Last bytes of every image file: name and format version.
pub const IMAGE_MAGIC: [u8; 8] = *b"RHFSIMG1";

/// Bytes the image trailer adds to the payload.
pub const IMAGE_TRAILER_LEN: usize = 4 + IMAGE_MAGIC.len();

/// Checks an image file's trailer and returns its payload.
pub fn decode_image(data: &[u8]) -> std::result::Result<&[u8], String> {
    if data.len() < IMAGE_TRAILER_LEN {
        return Err(format!("file of {} bytes is too short", data.len()));
    }
    let (payload, trailer) = data.split_at(data.len() - IMAGE_TRAILER_LEN);
    if trailer[4..] != IMAGE_MAGIC {
        return Err("missing image trailer".into());
    }
    let mut crc = [0u8; 4];
    crc.copy_from_slice(&trailer[..4]);
    let want = u32::from_be_bytes(crc);
    let got = crc32c::crc32c(payload);
    if got != want {
        return Err(format!(
            "checksum mismatch (stored {want:#010x}, computed {got:#010x})"
        ));
    }
    Ok(payload)
}

/// The trailer an image file ends with after `payload` (its CRC32C and the magic): what a
/// NameNode sending its image appends so the receiver can check it with [`decode_image`].
pub fn image_trailer(payload: &[u8]) -> [u8; IMAGE_TRAILER_LEN] {
    let mut t = [0u8; IMAGE_TRAILER_LEN];
    t[..4].copy_from_slice(&crc32c::crc32c(payload).to_be_bytes());
    t[4..].copy_from_slice(&IMAGE_MAGIC);
    t
}

/// Saves and loads images in the storage directories.
#[derive(Debug, Clone)]
pub struct ImageStore {
    dirs: StorageDirs,
    retained: usize,
}

impl ImageStore {
    /// A store keeping the newest `retained` images (at least 1).
    pub fn new(dirs: StorageDirs, retained: usize) -> Self {
        ImageStore {
            dirs,
            retained: retained.max(1),
        }
    }

    /// A store keeping `dfs.namenode.num.checkpoints.retained` images.
    pub fn from_conf(dirs: StorageDirs, conf: &Configuration) -> Result<Self> {
        let n = conf
            .get_u64(
                keys::DFS_NAMENODE_NUM_CHECKPOINTS_RETAINED_KEY,
                keys::DFS_NAMENODE_NUM_CHECKPOINTS_RETAINED_DEFAULT,
            )
            .map_err(|e| EditLogError::Config(e.to_string()))?;
        Ok(Self::new(dirs, usize::try_from(n).unwrap_or(usize::MAX)))
    }

    /// The storage directories.
    pub fn dirs(&self) -> &StorageDirs {
        &self.dirs
    }

    /// Writes `payload` as the image covering every txid up to `txid` in every active
    /// directory, then removes images beyond the newest `retained`. A directory where the
    /// save fails is taken out of service; errors only when no directory took the image.
    pub fn save_image(&self, txid: u64, payload: &[u8]) -> Result<()> {
        let fs = self.dirs.fs().clone();
        let trailer = image_trailer(payload);
        self.dirs.for_each_active("save image", |dir| {
            let tmp = dir.join(image_ckpt_name(txid));
            let dst = dir.join(image_name(txid));
            let mut f = fs
                .create(&tmp)
                .map_err(|e| EditLogError::io("create", &tmp, e))?;
            f.write_all(payload)
                .and_then(|()| f.write_all(&trailer))
                .map_err(|e| EditLogError::io("write", &tmp, e))?;
            f.sync().map_err(|e| EditLogError::io("sync", &tmp, e))?;
            drop(f);
            fs.rename(&tmp, &dst)
                .map_err(|e| EditLogError::io("rename", &tmp, e))?;
            fs.sync_dir(dir)
                .map_err(|e| EditLogError::io("sync directory", dir, e))?;
            Ok(())
        })?;
        tracing::info!(txid, bytes = payload.len(), "image saved");
        self.purge_old_images();
        Ok(())
    }

    /// Removes images beyond the newest `retained` and leftover `fsimage.ckpt_*` files.
    fn purge_old_images(&self) {
        let fs = self.dirs.fs().clone();
        for dir in self.dirs.active() {
            let Ok(names) = fs.list_dir(&dir) else {
                continue;
            };
            let mut images: Vec<u64> = Vec::new();
            for name in &names {
                match parse_name(name) {
                    Some(FileKind::Image { txid }) => images.push(txid),
                    Some(FileKind::ImageCkpt { .. }) => {
                        if let Err(e) = fs.remove_file(&dir.join(name)) {
                            tracing::warn!(dir = %dir.display(), "removing {name}: {e}");
                        }
                    }
                    _ => {}
                }
            }
            images.sort_unstable_by(|a, b| b.cmp(a));
            for txid in images.into_iter().skip(self.retained) {
                let p = dir.join(image_name(txid));
                match fs.remove_file(&p) {
                    Ok(()) => tracing::info!(file = %p.display(), "old image removed"),
                    Err(e) => tracing::warn!(file = %p.display(), "removing old image: {e}"),
                }
            }
        }
    }

    /// Txids of the images present in any active directory, newest first.
    pub fn image_txids(&self) -> Vec<u64> {
        let fs = self.dirs.fs().clone();
        let mut txids: Vec<u64> = self
            .dirs
            .active()
            .iter()
            .filter_map(|dir| fs.list_dir(dir).ok())
            .flatten()
            .filter_map(|name| match parse_name(&name) {
                Some(FileKind::Image { txid }) => Some(txid),
                _ => None,
            })
            .collect();
        txids.sort_unstable_by(|a, b| b.cmp(a));
        txids.dedup();
        txids
    }

    /// The newest image's txid and when its file was written (ms since the Unix epoch, from
    /// the first active directory holding it): what saveNamespace's time window looks at.
    pub fn newest_image_written(&self) -> Option<(u64, u64)> {
        let txid = self.image_txids().into_iter().next()?;
        let fs = self.dirs.fs().clone();
        self.dirs
            .active()
            .iter()
            .find_map(|dir| fs.modified_ms(&dir.join(image_name(txid))).ok())
            .map(|ms| (txid, ms))
    }

    /// The oldest image kept: edits after it must stay, so that a fallback to it can replay
    /// them (`log.purge_before(oldest + 1)`).
    pub fn oldest_retained_txid(&self) -> Option<u64> {
        self.image_txids().last().copied()
    }

    /// The newest image whose checksum holds, from any active directory, as
    /// `(txid, payload)`. A damaged image is skipped with an error log line and the next
    /// copy or older image is tried. `Ok(None)` when there is no image at all; an error when
    /// images exist but none is intact.
    pub fn load_latest_image(&self) -> Result<Option<(u64, Vec<u8>)>> {
        let fs = self.dirs.fs().clone();
        let txids = self.image_txids();
        if txids.is_empty() {
            return Ok(None);
        }
        let mut problems = Vec::new();
        for txid in txids {
            for dir in self.dirs.active() {
                let path = dir.join(image_name(txid));
                if !fs.exists(&path) {
                    continue;
                }
                let res = fs
                    .read(&path)
                    .map_err(|e| e.to_string())
                    .and_then(|data| decode_image(&data).map(<[u8]>::to_vec));
                match res {
                    Ok(payload) => {
                        tracing::info!(file = %path.display(), txid, "image loaded");
                        return Ok(Some((txid, payload)));
                    }
                    Err(why) => {
                        tracing::error!(
                            file = %path.display(),
                            "image unusable ({why}); trying another copy or an older image"
                        );
                        problems.push(format!("{}: {why}", path.display()));
                    }
                }
            }
        }
        Err(EditLogError::NoValidImage {
            detail: problems.join("; "),
        })
    }
}
