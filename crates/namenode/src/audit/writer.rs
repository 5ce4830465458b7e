//! The audit writer thread and the buffer it drains.
//!
//! An RPC appends its line to one shared byte buffer under a mutex held for the copy, and
//! wakes the writer only when the writer sleeps with nothing to do or the buffer has grown
//! past [`WAKE_AT`]. Otherwise the writer comes back by itself every [`INTERVAL`], swaps the
//! buffer for an empty one and appends it to `hdfs-audit.log` in one write (rolled by size to
//! `.1`, `.2`, ... by `file-rotate`, as log4j's RollingFileAppender does). Busy, that is one
//! thread wake-up and one write per interval instead of one per line (which cost the
//! NameNode more than answering a getBlockLocations); idle, a line reaches the file at once.

use std::io::Write;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use file_rotate::compression::Compression;
use file_rotate::suffix::AppendCount;
use file_rotate::{ContentLimit, FileRotate};

use super::{AUDIT_FILE, AuditSettings, Counters};

/// How long a busy writer lets lines gather before it writes them.
pub(super) const INTERVAL: Duration = Duration::from_millis(10);

/// Buffered bytes at which an appender wakes the writer before its interval is up.
pub(super) const WAKE_AT: usize = 1 << 20;

/// A buffer kept between writes is cut back to this capacity after a burst.
const KEEP_CAPACITY: usize = 4 << 20;

/// Lines not yet written, shared by the appenders and the writer.
#[derive(Debug)]
pub(super) struct Buffer {
    state: Mutex<Pending>,
    wake: Condvar,
    /// Lines buffered at most; a line beyond is dropped and counted.
    limit: usize,
}

#[derive(Debug, Default)]
struct Pending {
    bytes: Vec<u8>,
    lines: usize,
    /// The writer waits without a timeout (nothing was buffered when it last looked).
    idle: bool,
    /// The log was dropped: write what is left and stop.
    closed: bool,
}

/// What `Buffer::append` did with a line.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Appended {
    Queued,
    Dropped,
}

impl Buffer {
    pub(super) fn new(limit: usize) -> Self {
        Buffer {
            state: Mutex::new(Pending::default()),
            wake: Condvar::new(),
            limit: limit.max(1),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Pending> {
        // A panic while appending bytes leaves them whole enough to write.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds one line; never waits for the disk.
    pub(super) fn append(&self, line: &[u8]) -> Appended {
        let wake = {
            let mut p = self.lock();
            if p.lines >= self.limit || p.closed {
                return Appended::Dropped;
            }
            p.bytes.extend_from_slice(line);
            p.lines += 1;
            let wake = p.idle || p.bytes.len() >= WAKE_AT;
            if wake {
                p.idle = false;
            }
            wake
        };
        if wake {
            self.wake.notify_one();
        }
        Appended::Queued
    }

    /// Asks the writer to write what is buffered and stop.
    pub(super) fn close(&self) {
        self.lock().closed = true;
        self.wake.notify_one();
    }

    /// Waits until lines are due and swaps them into `out` (emptied first): after
    /// [`INTERVAL`] (sooner when [`WAKE_AT`] bytes gathered or the log is closed), or, when
    /// nothing came in that interval, as soon as the next line does. Returns the number of
    /// lines taken, or None once the log is closed and nothing is left.
    fn take(&self, out: &mut Vec<u8>) -> Option<usize> {
        out.clear();
        if out.capacity() > KEEP_CAPACITY {
            out.shrink_to(KEEP_CAPACITY);
        }
        let mut p = self.lock();
        if !p.closed && p.bytes.len() < WAKE_AT {
            // Let lines gather; an appender wakes this wait only at WAKE_AT.
            p = self
                .wake
                .wait_timeout(p, INTERVAL)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        while p.lines == 0 && !p.closed {
            // Nothing came in a whole interval: sleep until the next line.
            p.idle = true;
            p = self.wake.wait(p).unwrap_or_else(|e| e.into_inner());
        }
        p.idle = false;
        if p.lines == 0 {
            return None;
        }
        std::mem::swap(&mut p.bytes, out);
        Some(std::mem::take(&mut p.lines))
    }
}

/// Opens the file and starts the thread that drains `buffer` into it.
pub(super) fn spawn(
    settings: &AuditSettings,
    buffer: Arc<Buffer>,
    counters: Arc<Counters>,
) -> std::io::Result<()> {
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
    std::thread::Builder::new()
        .name("audit-log".into())
        .spawn(move || run(&buffer, file, &counters))?;
    Ok(())
}

fn run(buffer: &Buffer, mut file: impl Write, counters: &Counters) {
    let mut reported_drops = 0;
    let mut batch = Vec::new();
    while let Some(n) = buffer.take(&mut batch) {
        match file.write_all(&batch).and_then(|()| file.flush()) {
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
                "audit lines dropped: the audit buffer was full"
            );
            reported_drops = dropped;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// A file that hands each write to the test.
    struct Sink(mpsc::Sender<Vec<u8>>);

    impl Write for Sink {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            let _ = self.0.send(b.to_vec());
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn start(limit: usize) -> (Arc<Buffer>, Arc<Counters>, mpsc::Receiver<Vec<u8>>) {
        let buffer = Arc::new(Buffer::new(limit));
        let counters = Arc::new(Counters::default());
        let (tx, rx) = mpsc::channel();
        let (b, c) = (buffer.clone(), counters.clone());
        std::thread::spawn(move || run(&b, Sink(tx), &c));
        (buffer, counters, rx)
    }

    fn wait_written(counters: &Counters, n: u64) {
        while counters.written.load(Ordering::Relaxed) < n {
            std::thread::yield_now();
        }
    }

    #[test]
    fn lines_reach_the_file_in_order_and_all_by_close() {
        let (buffer, counters, rx) = start(1000);
        for i in 0..500 {
            assert_eq!(buffer.append(format!("{i}\n").as_bytes()), Appended::Queued);
        }
        buffer.close();
        wait_written(&counters, 500);
        let text: Vec<u8> = rx.try_iter().flatten().collect();
        let expected: String = (0..500).map(|i| format!("{i}\n")).collect();
        assert_eq!(String::from_utf8(text).unwrap(), expected);
        assert_eq!(counters.dropped.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn an_idle_writer_is_woken_by_the_next_line() {
        let (buffer, counters, rx) = start(10);
        // Wait until the writer sleeps with nothing to do.
        while !buffer.lock().idle {
            std::thread::yield_now();
        }
        buffer.append(b"one\n");
        assert_eq!(rx.recv().unwrap(), b"one\n");
        wait_written(&counters, 1);
        // The writer now lets lines gather for an interval; these come without a wake-up.
        buffer.append(b"two\n");
        buffer.append(b"three\n");
        let mut got = Vec::new();
        while got.len() < b"two\nthree\n".len() {
            got.extend(rx.recv().unwrap());
        }
        assert_eq!(got, b"two\nthree\n");
        wait_written(&counters, 3);
        buffer.close();
    }

    #[test]
    fn a_full_buffer_drops_and_counts() {
        // No writer: nothing drains.
        let buffer = Buffer::new(2);
        assert_eq!(buffer.append(b"a\n"), Appended::Queued);
        assert_eq!(buffer.append(b"b\n"), Appended::Queued);
        assert_eq!(buffer.append(b"c\n"), Appended::Dropped);
        let mut out = vec![b'x'];
        assert_eq!(buffer.take(&mut out), Some(2));
        assert_eq!(out, b"a\nb\n");
        assert_eq!(buffer.append(b"d\n"), Appended::Queued);
        buffer.close();
        assert_eq!(buffer.append(b"e\n"), Appended::Dropped);
        assert_eq!(buffer.take(&mut out), Some(1));
        assert_eq!(out, b"d\n");
        assert_eq!(buffer.take(&mut out), None);
    }
}
