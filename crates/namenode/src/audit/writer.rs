//! The audit writer thread: takes lines off the queue, appends them in batches to
//! `hdfs-audit.log` (rolled by size to `.1`, `.2`, ... by `file-rotate`, as log4j's
//! RollingFileAppender does) and says when lines were dropped.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use file_rotate::compression::Compression;
use file_rotate::suffix::AppendCount;
use file_rotate::{ContentLimit, FileRotate};

use super::{AUDIT_FILE, AuditSettings, Counters};

/// Lines written in one batch at most (one write call).
const BATCH: usize = 256;

/// Opens the file and starts the thread; the sender feeds it.
pub(super) fn spawn(
    settings: &AuditSettings,
    counters: Arc<Counters>,
) -> std::io::Result<SyncSender<String>> {
    std::fs::create_dir_all(&settings.dir)?;
    let path = settings.dir.join(AUDIT_FILE);
    // Open once here so that an unwritable directory is reported at start.
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)?;
    let file = FileRotate::new(
        path,
        AppendCount::new(settings.max_backups.max(1)),
        ContentLimit::BytesSurpassed(usize::try_from(settings.max_file_size).unwrap_or(usize::MAX)),
        Compression::None,
        None,
    );
    let (tx, rx) = sync_channel(settings.queue);
    std::thread::Builder::new()
        .name("audit-log".into())
        .spawn(move || run(rx, file, &counters))?;
    Ok(tx)
}

fn run(rx: Receiver<String>, mut file: FileRotate<AppendCount>, counters: &Counters) {
    let mut reported_drops = 0;
    let mut batch = String::new();
    while let Ok(first) = rx.recv() {
        batch.clear();
        batch.push_str(&first);
        let mut n = 1;
        while n < BATCH {
            match rx.try_recv() {
                Ok(line) => {
                    batch.push_str(&line);
                    n += 1;
                }
                Err(_) => break,
            }
        }
        match file.write_all(batch.as_bytes()).and_then(|()| file.flush()) {
            Ok(()) => {
                counters.written.fetch_add(n as u64, Ordering::Relaxed);
            }
            Err(e) => {
                counters.dropped.fetch_add(n as u64, Ordering::Relaxed);
                tracing::warn!("audit log: cannot write {AUDIT_FILE}: {e}");
            }
        }
        let dropped = counters.dropped.load(Ordering::Relaxed);
        if dropped > reported_drops {
            tracing::warn!(
                dropped = dropped - reported_drops,
                total = dropped,
                "audit lines dropped: the audit queue was full"
            );
            reported_drops = dropped;
        }
    }
}
