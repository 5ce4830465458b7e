//! The audit log: one line per namespace operation in Hadoop's `hdfs-audit.log` format
//! (`FSNamesystem.audit`), written by a thread of its own. The RPC edge (`rpc::audit`) formats
//! a line and appends it to a bounded buffer (`writer`); an RPC never waits for the disk: when
//! the buffer is full the line is dropped and counted (a WARN says how many, once the writer
//! catches up).
//!
//! Keys: `rhdfs.namenode.audit.log.enabled` (true), `hadoop.log.dir` (no directory: no audit
//! log), `hdfs.audit.log.maxfilesize` / `hdfs.audit.log.maxbackupindex` (size rotation, as
//! Hadoop's RFAAUDIT appender), `rhdfs.namenode.audit.log.queue.size`,
//! `dfs.namenode.audit.log.debug.cmdlist` (commands left out).

mod line;
mod writer;

pub use line::{AuditEvent, escape_java, timestamp};

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rhdfs_conf::clock::SharedClock;
use rhdfs_conf::{ConfError, Configuration, keys};

/// The audit file's name under the log directory (Hadoop's RFAAUDIT appender).
pub const AUDIT_FILE: &str = "hdfs-audit.log";

/// Where and how the audit log is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditSettings {
    pub dir: PathBuf,
    pub max_file_size: u64,
    pub max_backups: usize,
    pub queue: usize,
    /// `cmd=` values not written.
    pub skip: HashSet<String>,
}

impl AuditSettings {
    /// The settings, or None when the audit log is off or there is no log directory.
    pub fn from_conf(conf: &Configuration) -> Result<Option<Self>, ConfError> {
        if !conf.get_bool(
            keys::RHDFS_NAMENODE_AUDIT_LOG_ENABLED_KEY,
            keys::RHDFS_NAMENODE_AUDIT_LOG_ENABLED_DEFAULT,
        )? {
            return Ok(None);
        }
        let Some(dir) = conf
            .get_trimmed(keys::HADOOP_LOG_DIR_KEY)
            .filter(|d| !d.is_empty())
        else {
            return Ok(None);
        };
        Ok(Some(AuditSettings {
            dir: PathBuf::from(dir),
            max_file_size: conf
                .get_size(
                    keys::HDFS_AUDIT_LOG_MAXFILESIZE_KEY,
                    keys::HDFS_AUDIT_LOG_MAXFILESIZE_DEFAULT,
                )?
                .max(1),
            max_backups: conf.get_usize(
                keys::HDFS_AUDIT_LOG_MAXBACKUPINDEX_KEY,
                keys::HDFS_AUDIT_LOG_MAXBACKUPINDEX_DEFAULT as usize,
            )?,
            queue: conf
                .get_usize(
                    keys::RHDFS_NAMENODE_AUDIT_LOG_QUEUE_SIZE_KEY,
                    keys::RHDFS_NAMENODE_AUDIT_LOG_QUEUE_SIZE_DEFAULT as usize,
                )?
                .max(1),
            skip: conf
                .get_trimmed(keys::DFS_NAMENODE_AUDIT_LOG_DEBUG_CMDLIST_KEY)
                .unwrap_or("")
                .split(',')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_string)
                .collect(),
        }))
    }
}

/// The running audit log. Dropping it lets the writer thread write what is buffered and
/// exit.
pub struct AuditLog {
    buffer: Arc<writer::Buffer>,
    skip: HashSet<String>,
    clock: SharedClock,
    counters: Arc<Counters>,
}

/// Lines written and dropped, shared with the writer thread.
#[derive(Debug, Default)]
pub struct Counters {
    pub written: AtomicU64,
    pub dropped: AtomicU64,
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditLog")
            .field("counters", &self.counters)
            .finish_non_exhaustive()
    }
}

impl AuditLog {
    /// Creates the log directory and starts the writer thread.
    pub fn start(settings: AuditSettings, clock: SharedClock) -> std::io::Result<Arc<Self>> {
        let counters = Arc::new(Counters::default());
        let buffer = Arc::new(writer::Buffer::new(settings.queue));
        writer::spawn(&settings, buffer.clone(), counters.clone())?;
        Ok(Arc::new(AuditLog {
            buffer,
            skip: settings.skip,
            clock,
            counters,
        }))
    }

    /// The audit log the configuration asks for, or None (off, no directory, or it could not
    /// be opened: then a WARN says why and the NameNode runs without one).
    pub fn from_conf(conf: &Configuration, clock: SharedClock) -> Option<Arc<Self>> {
        let settings = match AuditSettings::from_conf(conf) {
            Ok(Some(s)) => s,
            Ok(None) => return None,
            Err(e) => {
                tracing::warn!("audit log off: {e}");
                return None;
            }
        };
        let dir = settings.dir.clone();
        match Self::start(settings, clock) {
            Ok(log) => {
                tracing::info!(file = %dir.join(AUDIT_FILE).display(), "audit log started");
                Some(log)
            }
            Err(e) => {
                tracing::warn!("audit log off: cannot open {}: {e}", dir.display());
                None
            }
        }
    }

    /// Queues one event; never blocks.
    pub fn log(&self, event: &AuditEvent<'_>) {
        if self.skip.contains(event.cmd.as_ref()) {
            return;
        }
        thread_local! {
            // One line's text, reused by every call on this thread.
            static LINE: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
        }
        let appended = LINE.with_borrow_mut(|line| {
            line.clear();
            event.write_line(self.clock.now_millis(), line);
            self.buffer.append(line.as_bytes())
        });
        if appended == writer::Appended::Dropped {
            self.counters.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Lines written to the file so far.
    pub fn written(&self) -> u64 {
        self.counters.written.load(Ordering::Relaxed)
    }

    /// Lines dropped because the buffer was full.
    pub fn dropped(&self) -> u64 {
        self.counters.dropped.load(Ordering::Relaxed)
    }
}

impl Drop for AuditLog {
    fn drop(&mut self) {
        self.buffer.close();
    }
}
