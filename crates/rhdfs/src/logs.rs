//! Where the `rhdfs` processes log: client tools on stderr at WARN; daemons at INFO on stderr
//! and, with a log directory (`--log-dir DIR`, else `HADOOP_LOG_DIR`, else `hadoop.log.dir`;
//! `rhdfs cluster` defaults to `<dir>/logs`), in `rhdfs-<user>-<daemon>-<host>.log` there,
//! rolled at `hadoop.log.maxfilesize` keeping `hadoop.log.maxbackupindex` files. The
//! directory is put back into the configuration as `hadoop.log.dir`, where the NameNode finds
//! it for `hdfs-audit.log` and `/logs/`. `RUST_LOG` overrides the level.

use std::path::PathBuf;

use anyhow::{Context, Result};
use rhdfs_conf::{Configuration, keys};
use rhdfs_logging::{FileSettings, LogGuard, LogSettings};

/// `RUST_LOG`, or `default`.
fn directives(default: &str) -> String {
    std::env::var("RUST_LOG")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| default.to_string())
}

/// Logging for a client tool: stderr only.
pub fn init_client() -> Option<LogGuard> {
    rhdfs_logging::init(LogSettings {
        directives: directives("warn"),
        file: None,
    })
    .ok()
}

/// The log directory: `--log-dir`, `HADOOP_LOG_DIR`, `hadoop.log.dir`, then `fallback`.
pub fn log_dir(
    flag: Option<PathBuf>,
    conf: &Configuration,
    fallback: Option<PathBuf>,
) -> Option<PathBuf> {
    flag.or_else(|| {
        std::env::var_os("HADOOP_LOG_DIR")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    })
    .or_else(|| {
        conf.get_trimmed(keys::HADOOP_LOG_DIR_KEY)
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
    })
    .or(fallback)
}

/// Logging for daemon `daemon` (`namenode`, `datanode`, `cluster`); records the directory in
/// `conf` as `hadoop.log.dir`.
pub fn init_daemon(
    daemon: &str,
    dir: Option<PathBuf>,
    conf: &mut Configuration,
) -> Result<LogGuard> {
    let file = match dir {
        Some(dir) => {
            conf.set(keys::HADOOP_LOG_DIR_KEY, dir.to_string_lossy().into_owned());
            Some(FileSettings {
                name: format!(
                    "rhdfs-{}-{daemon}-{}.log",
                    rhdfs_conf::user::current_user(),
                    host_name()
                ),
                dir,
                max_file_size: conf.get_size(
                    keys::HADOOP_LOG_MAXFILESIZE_KEY,
                    keys::HADOOP_LOG_MAXFILESIZE_DEFAULT,
                )?,
                max_backups: conf.get_usize(
                    keys::HADOOP_LOG_MAXBACKUPINDEX_KEY,
                    keys::HADOOP_LOG_MAXBACKUPINDEX_DEFAULT as usize,
                )?,
            })
        }
        None => None,
    };
    let shown = file.as_ref().map(|f| f.dir.join(&f.name));
    let guard = rhdfs_logging::init(LogSettings {
        directives: directives("info"),
        file,
    })
    .context("setting up logging")?;
    if let Some(path) = shown {
        tracing::info!(file = %path.display(), "logging to a file");
    }
    Ok(guard)
}

/// This machine's name, for the log file's name.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty() && !h.contains('/'))
        .unwrap_or_else(|| "localhost".to_string())
}
