//! The NameNode's trash emptier (Hadoop's TrashPolicyDefault.Emptier, which a NameNode runs
//! when its `fs.trash.interval` is above 0). Without it nothing but a user's own
//! `-expunge` ever frees the space deleted files hold in `/user/<name>/.Trash`.
//!
//! Every `fs.trash.checkpoint.interval` minutes (at multiples of it, as Hadoop aligns the
//! passes), each `/user/<name>/.Trash`: checkpoints older than `fs.trash.interval` are
//! deleted, then `Current` becomes a checkpoint named for the pass's time. The pass works
//! through the NameNode's own RPC port as the superuser with `rhdfs-client`, so every change
//! is an ordinary, logged and audited namespace operation.

use std::net::SocketAddr;
use std::time::Duration;

use rhdfs_client::FileSystem;
use rhdfs_conf::clock::SharedClock;
use rhdfs_conf::{ConfError, Configuration, keys};
use tokio::task::JoinHandle;

/// When the emptier runs; `None` from [`EmptierConfig::from_conf`] when trash is off.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EmptierConfig {
    /// `fs.trash.interval`: how old (minutes) a checkpoint may get.
    pub interval_minutes: f64,
    /// Between passes.
    pub every: Duration,
}

impl EmptierConfig {
    pub fn from_conf(conf: &Configuration) -> Result<Option<Self>, ConfError> {
        let interval =
            conf.get_f64(keys::FS_TRASH_INTERVAL_KEY, keys::FS_TRASH_INTERVAL_DEFAULT)?;
        // NaN or not above zero: trash is off.
        if interval.is_nan() || interval <= 0.0 {
            return Ok(None);
        }
        let mut every = conf.get_f64(
            keys::FS_TRASH_CHECKPOINT_INTERVAL_KEY,
            keys::FS_TRASH_CHECKPOINT_INTERVAL_DEFAULT,
        )?;
        if every.is_nan() || every <= 0.0 || every > interval {
            every = interval;
        }
        Ok(Some(EmptierConfig {
            interval_minutes: interval,
            every: Duration::from_secs_f64(every * 60.0),
        }))
    }

    /// Time until the next pass: the next multiple of the pass interval after `now_ms`.
    pub fn until_next(&self, now_ms: u64) -> Duration {
        let every = u64::try_from(self.every.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        let next = (now_ms / every).saturating_add(1).saturating_mul(every);
        Duration::from_millis(next - now_ms)
    }
}

/// One pass over every user's trash at `now_ms`; returns the trash roots handled. A root
/// that fails is logged and the others still handled.
pub async fn empty_once(fs: &FileSystem, interval_minutes: f64, now_ms: u64) -> usize {
    let homes = match fs.list_status("/user").await {
        Ok(h) => h,
        Err(e) if e.is_file_not_found() => return 0,
        Err(e) => {
            tracing::warn!(error = %e, "trash emptier: cannot list /user");
            return 0;
        }
    };
    let mut done = 0;
    for home in homes.iter().filter(|h| h.is_dir) {
        let root = format!("{}/.Trash", home.path.trim_end_matches('/'));
        match fs.get_file_info(&root).await {
            Ok(Some(st)) if st.is_dir => {}
            Ok(_) => continue,
            Err(e) => {
                tracing::warn!(%root, error = %e, "trash emptier: cannot stat");
                continue;
            }
        }
        match fs.expunge_trash_root(&root, interval_minutes, now_ms).await {
            Ok(()) => done += 1,
            Err(e) => tracing::warn!(%root, error = %e, "trash emptier: pass failed"),
        }
    }
    done
}

/// Runs the emptier against the NameNode at `rpc` as `superuser` until the handle is
/// aborted.
pub fn start(
    rpc: SocketAddr,
    conf: Configuration,
    cfg: EmptierConfig,
    clock: SharedClock,
    superuser: String,
) -> JoinHandle<()> {
    tracing::info!(
        interval_minutes = cfg.interval_minutes,
        every_secs = cfg.every.as_secs_f64(),
        "trash emptier started"
    );
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(cfg.until_next(clock.now_millis())).await;
            let uri = format!("hdfs://{rpc}");
            match FileSystem::connect_as(&uri, conf.clone(), &superuser).await {
                Ok(fs) => {
                    let n = empty_once(&fs, cfg.interval_minutes, clock.now_millis()).await;
                    tracing::info!(trash_roots = n, "trash emptier pass done");
                    fs.close().await;
                }
                Err(e) => tracing::warn!(error = %e, "trash emptier: cannot connect"),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_as_hadoop_reads_it() -> Result<(), ConfError> {
        let mut conf = Configuration::new();
        assert_eq!(EmptierConfig::from_conf(&conf)?, None);
        conf.set("fs.trash.interval", "60");
        let c =
            EmptierConfig::from_conf(&conf)?.ok_or(ConfError::NoNameNodeAddress(String::new()))?;
        assert_eq!(c.every, Duration::from_secs(3600));
        conf.set("fs.trash.checkpoint.interval", "15");
        let c =
            EmptierConfig::from_conf(&conf)?.ok_or(ConfError::NoNameNodeAddress(String::new()))?;
        assert_eq!(c.every, Duration::from_secs(900));
        conf.set("fs.trash.checkpoint.interval", "90");
        let c =
            EmptierConfig::from_conf(&conf)?.ok_or(ConfError::NoNameNodeAddress(String::new()))?;
        assert_eq!(
            c.every,
            Duration::from_secs(3600),
            "capped at fs.trash.interval"
        );
        // Passes fall on multiples of the pass interval.
        assert_eq!(c.until_next(0), Duration::from_secs(3600));
        assert_eq!(c.until_next(3_599_000), Duration::from_secs(1));
        assert_eq!(c.until_next(3_600_000), Duration::from_secs(3600));
        Ok(())
    }
}
