//! The log's sync thread, which serves [`EditLog::sync_async`].
//!
//! An async caller registers a [`Waiter`] (its txid and a oneshot) under the state lock and
//! awaits the oneshot. The sync thread, started with the first `sync_async`, leads a flush
//! whenever a waiter's txid is not durable yet (taking its turn with blocking callers of
//! `sync`, rolls and closes, which lead their own flushes), then answers every waiter the
//! flush made durable — after releasing the lock — and parks on `syncer_cond` once no waiter
//! is left. So a waiting RPC task holds no thread, a group commit wakes exactly the tasks it
//! made durable (no thread per waiter woken to find its txid synced), and an idle log costs
//! no wakeups. Records appended while a flush runs go to the next one, as for `sync`.
//!
//! One writer at a time (the last flush answered a single waiter and none is left) is the
//! case where those wake-ups are the latency: a lone client's mutation waited for the sync
//! thread to be woken and then for its executor thread to be woken, each costing as much
//! as a loopback round trip on an idle virtual machine. So then the sync thread spins
//! (yielding its CPU) for up to [`SYNCER_SPIN`] for the next waiter before it parks, and a
//! lone waiter polls for its answer between yields for up to [`WAITER_SPIN`] before it
//! sleeps on it. With more writers a flush answers several and neither spins.
//!
//! The thread holds the shared state only; [`Owner`], held by every `EditLog` clone, tells it
//! to end when the last clone is dropped.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use parking_lot::MutexGuard;
use tokio::sync::oneshot;

use super::{EditLog, Inner, State};

/// How long the sync thread spins for a lone writer's next call before it parks.
const SYNCER_SPIN: Duration = Duration::from_micros(300);
/// How long a lone writer's task polls for its answer before it sleeps on it.
const WAITER_SPIN: Duration = Duration::from_micros(500);

/// An async caller waiting for `txid` to be durable. It is sent `None` once it is, or the
/// reason no directory is left.
pub(super) struct Waiter {
    txid: u64,
    durable: oneshot::Sender<Option<String>>,
}

impl Waiter {
    pub(super) fn new(txid: u64) -> (Waiter, oneshot::Receiver<Option<String>>) {
        let (durable, rx) = oneshot::channel();
        (Waiter { txid, durable }, rx)
    }
}

/// Held by every clone of an [`EditLog`]; dropping the last one ends the sync thread.
pub(super) struct Owner {
    inner: Arc<Inner>,
}

impl Owner {
    pub(super) fn new(inner: Arc<Inner>) -> Owner {
        Owner { inner }
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        self.inner.state.lock().syncer_exit = true;
        self.inner.syncer_cond.notify_one();
    }
}

impl Inner {
    /// Whether the sync thread runs, starting it on the first call.
    pub(super) fn syncer_running(self: &Arc<Self>) -> bool {
        *self.syncer.get_or_init(|| {
            let inner = Arc::clone(self);
            match std::thread::Builder::new()
                .name("edit-log-sync".into())
                .spawn(move || inner.run_syncer())
            {
                Ok(_) => true,
                Err(e) => {
                    tracing::warn!("cannot start the edit log's sync thread: {e}");
                    false
                }
            }
        })
    }

    fn run_syncer(&self) {
        let mut ready = Vec::new();
        // The last flush answered one waiter alone: spin for the next before parking.
        let mut spin = false;
        let mut st = self.state.lock();
        loop {
            take_ready(&mut st, &mut ready);
            if !ready.is_empty() {
                self.waiting.store(st.waiters.len(), Ordering::Release);
                st.single_writer = ready.len() == 1 && st.waiters.is_empty();
                spin = st.single_writer;
                let fatal = st.fatal.clone();
                drop(st);
                for w in ready.drain(..) {
                    // A waiter that gave up (its task was dropped) needs no answer.
                    let _ = w.durable.send(fatal.clone());
                }
                st = self.state.lock();
                continue;
            }
            if st.syncer_exit {
                return;
            }
            if st.waiters.is_empty() && std::mem::take(&mut spin) {
                // One writer at a time: its next call comes soon; spin for it rather than
                // sleep, so it finds this thread running instead of waking it.
                MutexGuard::unlocked(&mut st, || self.spin_for_waiter());
                continue;
            }
            if st.waiters.is_empty() {
                st.syncer_parked = true;
                self.syncer_cond.wait(&mut st);
                st.syncer_parked = false;
                continue;
            }
            if st.leader || st.exclusive_waiting > 0 {
                // A blocking caller flushes, or a roll/close goes first; either ends with
                // `cond.notify_all`.
                self.cond.wait(&mut st);
                continue;
            }
            self.lead_flush(&mut st);
        }
    }
}

impl Inner {
    /// Spins until a waiter registers or [`SYNCER_SPIN`] passes.
    fn spin_for_waiter(&self) {
        let start = Instant::now();
        while self.waiting.load(Ordering::Acquire) == 0 && start.elapsed() < SYNCER_SPIN {
            // Lets a thread waiting for this CPU (the writer itself, on a busy machine) run.
            std::thread::yield_now();
        }
    }
}

/// Waits for a lone writer's answer polling between yields for up to [`WAITER_SPIN`] (the
/// executor thread stays running, so the sync thread's answer needs no wake-up), then as
/// usual. None when the sync thread ended without answering.
pub(super) async fn spin_wait(
    mut durable: oneshot::Receiver<Option<String>>,
) -> Option<Option<String>> {
    let start = Instant::now();
    while start.elapsed() < WAITER_SPIN {
        match durable.try_recv() {
            Ok(answer) => return Some(answer),
            Err(oneshot::error::TryRecvError::Closed) => return None,
            Err(oneshot::error::TryRecvError::Empty) => {
                // Lets the sync thread run should it wait for this CPU.
                std::thread::yield_now();
                tokio::task::yield_now().await;
            }
        }
    }
    durable.await.ok()
}

/// Moves the waiters whose txid is durable (every one, once no directory is left) to `out`.
fn take_ready(st: &mut State, out: &mut Vec<Waiter>) {
    let all = st.fatal.is_some();
    let mut i = 0;
    while i < st.waiters.len() {
        if all || st.waiters[i].txid <= st.synced {
            out.push(st.waiters.swap_remove(i));
        } else {
            i += 1;
        }
    }
}

impl EditLog {
    /// Whether the sync thread still holds the log's state (tests: it must let go once the
    /// last clone is dropped).
    #[cfg(test)]
    pub(super) fn shared_state(&self) -> std::sync::Weak<Inner> {
        Arc::downgrade(&self.inner)
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use crate::{EditLog, RecoveryMode, StorageDirs, StorageVersion};

    fn open(dir: &std::path::Path) -> EditLog {
        let dirs = StorageDirs::new(vec![dir.join("name")]).unwrap();
        dirs.format(
            &StorageVersion::new(1, "CID-test", "BP-1-127.0.0.1-1", 0),
            false,
        )
        .unwrap();
        EditLog::open(dirs, 0, RecoveryMode::Strict).unwrap().0
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn async_waiters_are_answered_by_blocking_syncs_too() {
        let t = tempfile::tempdir().unwrap();
        let log = open(t.path());
        let first = log.append(b"a").unwrap();
        log.sync_async(first).await.unwrap();
        assert_eq!(log.synced_txid(), first);
        // Waiters registered while a blocking caller leads get their answer from its flush
        // or the thread's next one; every txid ends durable.
        let mut tasks = Vec::new();
        for i in 0..16u8 {
            let log = log.clone();
            tasks.push(tokio::spawn(async move {
                let txid = log.append(&[i]).unwrap();
                log.sync_async(txid).await.unwrap();
                assert!(log.synced_txid() >= txid);
                txid
            }));
        }
        let blocking = log.clone();
        tokio::task::spawn_blocking(move || blocking.sync_all().unwrap())
            .await
            .unwrap();
        for task in tasks {
            task.await.unwrap();
        }
        assert_eq!(log.synced_txid(), log.last_txid());
    }

    /// One writer at a time takes the spinning paths (the sync thread spinning for the next
    /// waiter, the task polling for its answer); every sync still waits for its txid, on a
    /// single-threaded executor too.
    #[tokio::test]
    async fn a_lone_writer_is_answered_after_each_flush() {
        let t = tempfile::tempdir().unwrap();
        let log = open(t.path());
        for i in 0..50u8 {
            let txid = log.append(&[i]).unwrap();
            log.sync_async(txid).await.unwrap();
            assert_eq!(log.synced_txid(), txid);
        }
        assert!(log.inner.state.lock().single_writer);
        // Two writers at once: both answered, whether by one flush or two.
        let (a, b) = (log.append(b"a").unwrap(), log.append(b"b").unwrap());
        let (ra, rb) = tokio::join!(log.sync_async(a), log.sync_async(b));
        ra.unwrap();
        rb.unwrap();
        assert_eq!(log.synced_txid(), b);
    }

    #[tokio::test]
    async fn sync_of_a_txid_not_appended_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let log = open(t.path());
        let txid = log.append(b"a").unwrap();
        assert!(log.sync_async(txid + 1).await.is_err());
        log.sync_async(txid).await.unwrap();
    }

    #[tokio::test]
    async fn the_sync_thread_lets_go_of_the_log_when_the_last_clone_is_dropped() {
        let t = tempfile::tempdir().unwrap();
        let log = open(t.path());
        let txid = log.append(b"a").unwrap();
        log.sync_async(txid).await.unwrap();
        let state = log.shared_state();
        drop(log);
        // The thread wakes on the drop and ends, dropping its share; wait for that.
        let deadline = Instant::now() + Duration::from_secs(30);
        while state.upgrade().is_some() {
            assert!(Instant::now() < deadline, "the sync thread kept the log");
            std::thread::yield_now();
        }
    }
}
