//! Observer reads (Hadoop's consistent reads from an observer NameNode, HDFS-12943).
//!
//! Every NameNode answers, in each RPC response header's `stateId`, the last transaction id
//! it applied ([`StateIdContext`]: the block manager's last txid — on the active the last
//! committed one once a mutation is answered, on a standby or observer the last one it
//! applied). A client of ObserverReadProxyProvider keeps the highest it saw and sends it
//! with every call; an observer serves a coordinated read (Hadoop's
//! `@ReadOnly(isCoordinated = true)`) only once it applied that far:
//! - a call without a state id is refused with StandbyException (the client is not one of
//!   ObserverReadProxyProvider's and could read stale data: it goes to the active);
//! - a client more than [`ObserverSettings::max_lag`] transactions ahead is answered
//!   RetriableException at once (Hadoop's estimate: 10,000 transactions a second over 80%
//!   of the client's wait time, `ipc.client.connection.maxidletime`);
//! - otherwise the call waits until the observer applied the client's state id, at most
//!   [`ObserverSettings::wait`] (Hadoop's server requeues the call with no bound of its
//!   own), then answers RetriableException with the same message: the client tries
//!   another observer or the active.
//!
//! [`ObserverReads`] counts what observers did with reads (served, waited, refused).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rhdfs_blockmanager::BlockManager;
use rhdfs_conf::clock::Clock;
use rhdfs_conf::{ConfError, Configuration};
use tokio::sync::watch;

/// Hadoop's estimate of the transactions a NameNode applies per second.
const ESTIMATED_TRANSACTIONS_PER_SECOND: u64 = 10_000;
/// Hadoop's share of the client's wait spent on the server, in percent.
const ESTIMATED_SERVER_TIME_PERCENT: u64 = 80;

/// Why an observer does not serve a read; each maps to the Java class Hadoop's observer
/// answers ([`ObserverError::class_name`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ObserverError {
    /// StandbyException: the client sent no state id.
    #[error(
        "Observer Node received request without stateId. This mostly likely is because client \
         is not configured with ObserverReadProxyProvider"
    )]
    NoStateId,
    /// RetriableException: the client's state is too far ahead, or was not reached in time.
    #[error("Observer Node is too far behind: serverStateId = {server} clientStateId = {client}")]
    TooFarBehind { server: u64, client: u64 },
    /// ObserverRetryOnActiveException: a block of the file has no known replica here yet.
    #[error("Zero blocklocations for {0}")]
    ZeroBlockLocations(String),
}

impl ObserverError {
    /// The Java exception class the client receives.
    pub fn class_name(&self) -> &'static str {
        match self {
            ObserverError::NoStateId => rhdfs_ipc::exceptions::STANDBY,
            ObserverError::TooFarBehind { .. } => rhdfs_ipc::exceptions::RETRIABLE,
            ObserverError::ZeroBlockLocations(_) => rhdfs_ipc::exceptions::OBSERVER_RETRY_ON_ACTIVE,
        }
    }
}

/// How long an observer lets a read wait for its state id, and how far ahead a client may
/// be for the read to wait at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObserverSettings {
    pub wait: Duration,
    pub max_lag: u64,
}

impl ObserverSettings {
    /// From the client wait time Hadoop's server assumes: `ipc.client.connection.maxidletime`.
    pub fn from_conf(conf: &Configuration) -> Result<Self, ConfError> {
        let wait = conf.get_duration(
            rhdfs_ipc::CONNECTION_MAX_IDLE_KEY,
            rhdfs_ipc::CONNECTION_MAX_IDLE_DEFAULT,
            rhdfs_conf::keys::IPC_CLIENT_CONNECTION_MAXIDLETIME_UNIT,
        )?;
        Ok(Self::for_wait(wait))
    }

    /// Hadoop's lag estimate for a client waiting `wait` (whole seconds, as Hadoop counts).
    pub fn for_wait(wait: Duration) -> Self {
        ObserverSettings {
            wait,
            max_lag: ESTIMATED_TRANSACTIONS_PER_SECOND
                * wait.as_secs()
                * ESTIMATED_SERVER_TIME_PERCENT
                / 100,
        }
    }
}

/// What an observer does with a coordinated read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// Applied far enough: serve now.
    Serve,
    /// Serve once this txid is applied.
    WaitFor(u64),
}

/// An observer's decision for a coordinated read from a client at `client` (its request's
/// state id) when the observer applied up to `server`.
pub fn admit(client: Option<i64>, server: u64, max_lag: u64) -> Result<Admit, ObserverError> {
    let client = client.ok_or(ObserverError::NoStateId)?;
    // A client that saw no state yet sends Long.MIN_VALUE.
    let Ok(client) = u64::try_from(client) else {
        return Ok(Admit::Serve);
    };
    if client <= server {
        return Ok(Admit::Serve);
    }
    if client - server > max_lag {
        return Err(ObserverError::TooFarBehind { server, client });
    }
    Ok(Admit::WaitFor(client))
}

/// Waits until `applied()` reaches `target`, looking again whenever `changes` changes (the
/// Raft metrics, which change after every applied entry), at most `bound` on `clock`.
pub async fn wait_until_applied<T>(
    target: u64,
    applied: impl Fn() -> u64,
    changes: &mut watch::Receiver<T>,
    clock: &dyn Clock,
    bound: Duration,
) -> Result<u64, ObserverError> {
    let deadline = clock.monotonic() + bound;
    loop {
        changes.borrow_and_update();
        let server = applied();
        if server >= target {
            return Ok(server);
        }
        let now = clock.monotonic();
        let too_late = ObserverError::TooFarBehind {
            server,
            client: target,
        };
        if now >= deadline {
            return Err(too_late);
        }
        tokio::select! {
            r = changes.changed() => if r.is_err() { return Err(too_late) },
            _ = tokio::time::sleep(deadline - now) => {}
        }
    }
}

/// The state id a NameNode answers in every response header: the last txid its block
/// manager was told (committed on the active, applied on the others).
#[derive(Debug)]
pub struct StateIdContext {
    bm: Arc<BlockManager>,
}

impl StateIdContext {
    pub fn new(bm: Arc<BlockManager>) -> Self {
        StateIdContext { bm }
    }
}

impl rhdfs_ipc::alignment::AlignmentContext for StateIdContext {
    fn last_seen_state_id(&self) -> i64 {
        i64::try_from(self.bm.last_txid()).unwrap_or(i64::MAX)
    }
}

/// What an observer did with client reads.
#[derive(Debug, Default)]
pub struct ObserverReads {
    served: AtomicU64,
    waited: AtomicU64,
    refused: AtomicU64,
}

impl ObserverReads {
    /// Reads this NameNode answered as an observer.
    pub fn served(&self) -> u64 {
        self.served.load(Ordering::Relaxed)
    }

    /// Reads that waited for the observer to apply the client's state id.
    pub fn waited(&self) -> u64 {
        self.waited.load(Ordering::Relaxed)
    }

    /// Reads refused (no state id, too far behind, no replica known yet).
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    pub fn count_served(&self) {
        self.served.fetch_add(1, Ordering::Relaxed);
    }

    pub fn count_waited(&self) {
        self.waited.fetch_add(1, Ordering::Relaxed);
    }

    pub fn count_refused(&self) {
        self.refused.fetch_add(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicU64;

    use rhdfs_conf::clock::ManualClock;

    use super::*;

    #[test]
    fn hadoops_lag_estimate_from_the_client_wait() {
        assert_eq!(
            ObserverSettings::for_wait(Duration::from_secs(10)).max_lag,
            80_000
        );
        // Under a second Hadoop's estimate is zero: any lag is too far.
        assert_eq!(
            ObserverSettings::for_wait(Duration::from_millis(900)).max_lag,
            0
        );
    }

    #[test]
    fn admit_follows_the_client_state_id() {
        assert_eq!(admit(None, 5, 100), Err(ObserverError::NoStateId));
        assert_eq!(admit(Some(i64::MIN), 5, 100), Ok(Admit::Serve));
        assert_eq!(admit(Some(5), 5, 100), Ok(Admit::Serve));
        assert_eq!(admit(Some(3), 5, 100), Ok(Admit::Serve));
        assert_eq!(admit(Some(105), 5, 100), Ok(Admit::WaitFor(105)));
        let far = admit(Some(106), 5, 100).unwrap_err();
        assert_eq!(
            far,
            ObserverError::TooFarBehind {
                server: 5,
                client: 106
            }
        );
        assert_eq!(
            far.to_string(),
            "Observer Node is too far behind: serverStateId = 5 clientStateId = 106"
        );
        assert_eq!(far.class_name(), "org.apache.hadoop.ipc.RetriableException");
        assert_eq!(
            ObserverError::NoStateId.class_name(),
            "org.apache.hadoop.ipc.StandbyException"
        );
    }

    /// The waiter on a manual clock: it returns once the applied txid reaches the target,
    /// and gives up when the clock passed the bound; nothing sleeps, each step is driven by
    /// a change sent on the watch.
    #[tokio::test]
    async fn a_read_waits_for_the_state_id_until_the_bound_on_the_injected_clock() {
        let clock = ManualClock::shared(1_000);
        let applied = Arc::new(AtomicU64::new(10));
        let (tx, rx) = watch::channel(0u64);
        let bound = Duration::from_secs(5);

        // Caught up: served.
        let waiter = {
            let (clock, applied, mut rx) = (clock.clone(), applied.clone(), rx.clone());
            tokio::spawn(async move {
                wait_until_applied(
                    12,
                    || applied.load(Ordering::SeqCst),
                    &mut rx,
                    &*clock,
                    bound,
                )
                .await
            })
        };
        applied.store(11, Ordering::SeqCst);
        tx.send_modify(|v| *v += 1);
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished(), "11 is not 12 yet");
        applied.store(12, Ordering::SeqCst);
        tx.send_modify(|v| *v += 1);
        assert_eq!(waiter.await.unwrap(), Ok(12));

        // Not caught up by the bound: RetriableException's message.
        let waiter = {
            let (clock, applied, mut rx) = (clock.clone(), applied.clone(), rx.clone());
            tokio::spawn(async move {
                wait_until_applied(
                    20,
                    || applied.load(Ordering::SeqCst),
                    &mut rx,
                    &*clock,
                    bound,
                )
                .await
            })
        };
        // Let it start (and read the clock) before the clock moves: the test's runtime has
        // one thread, so the waiter runs while this task yields.
        tokio::task::yield_now().await;
        clock.advance(Duration::from_secs(4));
        tx.send_modify(|v| *v += 1);
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished(), "4 s is within the bound");
        clock.advance(Duration::from_secs(1));
        tx.send_modify(|v| *v += 1);
        assert_eq!(
            waiter.await.unwrap(),
            Err(ObserverError::TooFarBehind {
                server: 12,
                client: 20
            })
        );
    }
}
