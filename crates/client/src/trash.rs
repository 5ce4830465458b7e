//! The HDFS trash, client side like Hadoop's TrashPolicyDefault: deleted paths move to
//! `/user/<user>/.Trash/Current/<path>`; `expunge` checkpoints Current and removes old
//! checkpoints.

use tracing::debug;

use crate::error::{ClientError, Result};
use crate::filesystem::FileSystem;
use crate::path;
use crate::time::format_checkpoint;

impl FileSystem {
    /// Trash interval in minutes: the server's if set, else `fs.trash.interval`.
    pub async fn trash_interval(&self) -> Result<f64> {
        let server = self
            .server_defaults()
            .await
            .map(|d| d.trash_interval)
            .unwrap_or(0);
        Ok(if server > 0 {
            server as f64
        } else {
            self.inner.conf.trash_interval_minutes
        })
    }

    /// `/user/<user>/.Trash`.
    pub fn trash_root(&self) -> String {
        format!("/user/{}/.Trash", self.user())
    }

    /// Moves `p` to the trash. Returns the path it now has, or `None` if trash is disabled
    /// (the caller then deletes). Paths already in the trash are not moved.
    pub async fn move_to_trash(&self, p: &str) -> Result<Option<String>> {
        if self.trash_interval().await? <= 0.0 {
            return Ok(None);
        }
        let src = self.resolve(p)?;
        let root = self.trash_root();
        if src == root || src.starts_with(&format!("{root}/")) {
            return Err(ClientError::Failed(format!(
                "Cannot move \"{src}\" to the trash, as it contains the trash"
            )));
        }
        if root.starts_with(&format!("{src}/")) || src == "/" {
            return Err(ClientError::Failed(format!(
                "Cannot move \"{src}\" to the trash, as it contains the trash"
            )));
        }
        let current = format!("{root}/Current");
        let mut dst = format!("{current}{src}");
        let parent = path::parent(&dst).unwrap_or("/").to_string();
        self.mkdirs(&parent, Some(0o700)).await?;
        if self.exists(&dst).await? {
            dst = format!("{dst}{}", self.inner.clock.now_millis());
        }
        self.rename2(&src, &dst, false).await?;
        debug!(%src, %dst, "moved to trash");
        Ok(Some(dst))
    }

    /// Checkpoints `.Trash/Current` and deletes checkpoints older than the interval.
    pub async fn expunge(&self) -> Result<()> {
        let interval = self.trash_interval().await?;
        let now = self.inner.clock.now_millis();
        self.expunge_trash_root(&self.trash_root(), interval, now)
            .await
    }

    /// What [`FileSystem::expunge`] does to any trash root (the NameNode's trash emptier
    /// runs it on every user's): checkpoints older than `interval_minutes` at `now_ms` are
    /// deleted (every one when the interval is 0), then `Current` becomes the checkpoint
    /// named for `now_ms`.
    pub async fn expunge_trash_root(&self, root: &str, interval: f64, now: u64) -> Result<()> {
        let entries = match self.list_status(root).await {
            Ok(e) => e,
            Err(e) if e.is_file_not_found() => return Ok(()),
            Err(e) => return Err(e),
        };
        for e in &entries {
            if !e.is_dir || e.name() == "Current" {
                continue;
            }
            let Some(t) = crate::time::parse_checkpoint(e.name()) else {
                continue;
            };
            if interval <= 0.0 || now.saturating_sub(t) as f64 >= interval * 60_000.0 {
                self.delete(&e.path, true).await?;
            }
        }
        let current = format!("{root}/Current");
        if self.exists(&current).await? {
            let ckpt = format!("{root}/{}", format_checkpoint(now));
            self.rename2(&current, &ckpt, false).await?;
        }
        Ok(())
    }
}
