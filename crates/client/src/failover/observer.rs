//! Reads from observer NameNodes, as Hadoop's ObserverReadProxyProvider with its
//! ClientGSIContext: the settings, what the proxy knows of each NameNode's state, and the
//! decisions; [`super::proxy::NameNodeProxy`] runs them.
//!
//! With `dfs.client.failover.proxy.provider.<ns>` naming ObserverReadProxyProvider, a client
//! keeps one [`ClientAlignment`] shared by its connections to every NameNode: each request
//! carries the highest state id any response gave it, so an observer serves it only once it
//! applied the client's own writes. A coordinated read
//! (`rhdfs_proto::client_methods::COORDINATED_READS`):
//! - is preceded, on the client's first read, by an `msync` to the active (Hadoop's
//!   initializeMsync), unless a call already reached the active: the client's state id is
//!   then at least the active's when it started reading; later reads msync again as
//!   `dfs.client.failover.observer.auto-msync-period.<ns>` says ([`AutoMsync`]: never by
//!   default, before every read, or once the last msync — or the last call the active
//!   answered — is older than the period), so a client sees other clients' writes;
//! - goes to the current NameNode of a cursor over the nameservice when its last probe
//!   (`getHAServiceState`, asked when the cursor moves onto a NameNode, waited for at most
//!   `dfs.client.failover.namenode.ha-state.probe.timeout` when set) said observer; the
//!   cursor skips the others;
//! - moves to the next observer on StandbyException, RetriableException (the observer did
//!   not apply the client's state in time) or a connection error, and to the active at once
//!   on ObserverRetryOnActiveException; any other answer is the read's;
//! - after a round that found no observer at all, goes to the active for
//!   `dfs.client.failover.observer.probe.retry.period` (10 minutes) before observers are
//!   looked for again.
//!
//! Writes and other calls go to the active through the failover path unchanged.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rhdfs_conf::clock::SharedClock;
use rhdfs_conf::{ConfError, Configuration, keys, parse_duration};
use rhdfs_ipc::alignment::ClientAlignment;
use rhdfs_ipc::{IpcError, exceptions};
use rhdfs_proto::common::HaServiceStateProto;
use rhdfs_proto::hdfs::HaServiceStateResponseProto;

use super::should_fail_over;

/// The settings of reads from observers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObserverSettings {
    /// `dfs.client.failover.observer.probe.retry.period`.
    pub probe_retry_period: Duration,
    /// `dfs.client.failover.observer.auto-msync-period.<ns>`.
    pub auto_msync: AutoMsync,
    /// `dfs.client.failover.namenode.ha-state.probe.timeout`; `None` (0): wait for the answer.
    pub probe_timeout: Option<Duration>,
}

impl Default for ObserverSettings {
    fn default() -> Self {
        ObserverSettings {
            probe_retry_period: keys::DFS_CLIENT_FAILOVER_OBSERVER_PROBE_RETRY_PERIOD_DEFAULT,
            auto_msync: AutoMsync::from_millis(
                keys::DFS_CLIENT_FAILOVER_OBSERVER_AUTO_MSYNC_PERIOD_DEFAULT,
            ),
            probe_timeout: none_if_zero(
                keys::DFS_CLIENT_FAILOVER_NAMENODE_HA_STATE_PROBE_TIMEOUT_DEFAULT,
            ),
        }
    }
}

fn none_if_zero(d: Duration) -> Option<Duration> {
    (!d.is_zero()).then_some(d)
}

/// When reads after the first msync to the active again
/// (`dfs.client.failover.observer.auto-msync-period.<ns>`, Hadoop's autoMsyncPeriodMs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AutoMsync {
    /// A negative period (the default, -1): only the first read msyncs.
    Never,
    /// 0: an msync before every read.
    EveryRead,
    /// An msync before a read when the last one — or the last call the active answered,
    /// which leaves the client as up to date — is older than this.
    After(Duration),
}

impl AutoMsync {
    /// A period in milliseconds, as Hadoop's key holds it.
    pub fn from_millis(ms: i64) -> Self {
        match u64::try_from(ms) {
            Err(_) => AutoMsync::Never,
            Ok(0) => AutoMsync::EveryRead,
            Ok(ms) => AutoMsync::After(Duration::from_millis(ms)),
        }
    }

    /// The value of `dfs.client.failover.observer.auto-msync-period.<ns>`: a time duration
    /// (a bare number is milliseconds) that may be negative, as Hadoop's getTimeDuration.
    fn from_conf(conf: &Configuration, ns: &str) -> Result<Self, ConfError> {
        let key = format!(
            "{}.{ns}",
            keys::DFS_CLIENT_FAILOVER_OBSERVER_AUTO_MSYNC_PERIOD_KEY_PREFIX
        );
        let Some(value) = conf.get_trimmed(&key) else {
            return Ok(Self::from_millis(
                keys::DFS_CLIENT_FAILOVER_OBSERVER_AUTO_MSYNC_PERIOD_DEFAULT,
            ));
        };
        let (negative, magnitude) = match value.strip_prefix('-') {
            Some(m) => (true, m),
            None => (false, value),
        };
        let period = parse_duration(
            magnitude,
            keys::DFS_CLIENT_FAILOVER_OBSERVER_AUTO_MSYNC_PERIOD_UNIT,
        )
        .map_err(|reason| ConfError::InvalidValue {
            key: key.clone(),
            value: value.to_string(),
            reason,
        })?;
        Ok(match period {
            p if p.is_zero() => AutoMsync::EveryRead,
            _ if negative => AutoMsync::Never,
            p => AutoMsync::After(p),
        })
    }
}

/// Whether a read msyncs to the active first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum MsyncDue {
    /// Not now.
    No,
    /// Before this read, whatever other reads do (auto-msync period 0).
    EveryRead,
    /// The first msync, or the period ran out: one msync at a time; reads that waited for
    /// another's ask again ([`ObserverReads::msync_turn`]).
    Once,
}

impl ObserverSettings {
    /// The settings for nameservice `ns`, or `None` when its proxy provider
    /// (`dfs.client.failover.proxy.provider.<ns>`) is not ObserverReadProxyProvider.
    pub fn from_conf(conf: &Configuration, ns: &str) -> Result<Option<Self>, ConfError> {
        let provider_key = format!(
            "{}.{ns}",
            keys::DFS_CLIENT_FAILOVER_PROXY_PROVIDER_KEY_PREFIX
        );
        if conf.get_trimmed(&provider_key) != Some(keys::OBSERVER_READ_PROXY_PROVIDER) {
            return Ok(None);
        }
        Ok(Some(ObserverSettings {
            probe_retry_period: conf.get_duration(
                keys::DFS_CLIENT_FAILOVER_OBSERVER_PROBE_RETRY_PERIOD_KEY,
                keys::DFS_CLIENT_FAILOVER_OBSERVER_PROBE_RETRY_PERIOD_DEFAULT,
                keys::DFS_CLIENT_FAILOVER_OBSERVER_PROBE_RETRY_PERIOD_UNIT,
            )?,
            auto_msync: AutoMsync::from_conf(conf, ns)?,
            probe_timeout: none_if_zero(conf.get_duration(
                keys::DFS_CLIENT_FAILOVER_NAMENODE_HA_STATE_PROBE_TIMEOUT_KEY,
                keys::DFS_CLIENT_FAILOVER_NAMENODE_HA_STATE_PROBE_TIMEOUT_DEFAULT,
                keys::DFS_CLIENT_FAILOVER_NAMENODE_HA_STATE_PROBE_TIMEOUT_UNIT,
            )?),
        }))
    }
}

/// A NameNode's HA state as its last probe told it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    Active,
    Standby,
    Observer,
    /// The probe failed (Hadoop's `null` state): skipped until probed again.
    Unreachable,
}

impl Seen {
    /// What a `getHAServiceState` call answered: a StandbyException (Hadoop's answer when a
    /// delegation token cannot be checked there) is a standby, any other failure unreachable.
    pub fn from_probe(answer: Result<HaServiceStateResponseProto, IpcError>) -> Seen {
        match answer {
            Ok(r) => match HaServiceStateProto::try_from(r.state) {
                Ok(HaServiceStateProto::Active) => Seen::Active,
                Ok(HaServiceStateProto::Observer) => Seen::Observer,
                Ok(HaServiceStateProto::Standby | HaServiceStateProto::Initializing) => {
                    Seen::Standby
                }
                Err(_) => Seen::Unreachable,
            },
            Err(e) if e.remote_class() == Some(exceptions::STANDBY) => Seen::Standby,
            Err(_) => Seen::Unreachable,
        }
    }

    fn code(self) -> u8 {
        match self {
            Seen::Active => 1,
            Seen::Standby => 2,
            Seen::Observer => 3,
            Seen::Unreachable => 4,
        }
    }

    fn from_code(code: u8) -> Option<Seen> {
        Some(match code {
            1 => Seen::Active,
            2 => Seen::Standby,
            3 => Seen::Observer,
            4 => Seen::Unreachable,
            _ => return None,
        })
    }
}

/// What a read does after an observer failed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterFailure {
    /// Try the next observer (then the active).
    NextObserver,
    /// Go to the active now (ObserverRetryOnActiveException).
    Active,
    /// The failure is the read's answer.
    Fail,
}

/// Hadoop's rules for a read an observer failed (its `failoverOnNetworkException` policy,
/// plus ObserverRetryOnActiveException). `sent`: the request may have reached the observer.
pub fn after_observer_failure(err: &IpcError, sent: bool, method: &str) -> AfterFailure {
    match err.remote_class() {
        Some(exceptions::OBSERVER_RETRY_ON_ACTIVE) => AfterFailure::Active,
        Some(exceptions::RETRIABLE) => AfterFailure::NextObserver,
        _ if should_fail_over(err, sent, method) => AfterFailure::NextObserver,
        _ => AfterFailure::Fail,
    }
}

/// A proxy's state for reads from observers. Shared by the proxy's clones.
pub(super) struct ObserverReads {
    settings: ObserverSettings,
    clock: SharedClock,
    /// The client's state id, shared by the `RpcClient` of every NameNode.
    alignment: Arc<ClientAlignment>,
    /// When the client's state was last made the active's, on the clock's monotonic time:
    /// an msync or any other call the active answered (Hadoop's lastMsyncTimeMs); None
    /// before the first.
    last_msync: Mutex<Option<Duration>>,
    /// Held while an msync due once runs, so reads arriving together send one (Hadoop's
    /// synchronized initializeMsync and auto-msync).
    msync_turn: tokio::sync::Mutex<()>,
    /// The NameNode reads try first; `probed`: its state was asked since the cursor came to it.
    cursor: Mutex<Cursor>,
    /// Each NameNode's state at its last probe (0: never probed).
    seen: Vec<AtomicU8>,
    /// When a round last found no observer (Hadoop's lastObserverProbeTime, on the clock's
    /// monotonic time); None once one answered.
    no_observer_since: Mutex<Option<Duration>>,
}

/// A short lock, never held across an await; a panic while it was held left a valid value.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[derive(Debug, Clone, Copy)]
struct Cursor {
    index: usize,
    probed: bool,
}

impl ObserverReads {
    /// For a nameservice of `namenodes` NameNodes; `alignment` must be the one every
    /// NameNode's `RpcClient` was given.
    pub(super) fn new(
        settings: ObserverSettings,
        clock: SharedClock,
        alignment: Arc<ClientAlignment>,
        namenodes: usize,
    ) -> Self {
        ObserverReads {
            settings,
            clock,
            alignment,
            last_msync: Mutex::new(None),
            msync_turn: tokio::sync::Mutex::new(()),
            cursor: Mutex::new(Cursor {
                index: 0,
                probed: false,
            }),
            seen: (0..namenodes).map(|_| AtomicU8::new(0)).collect(),
            no_observer_since: Mutex::new(None),
        }
    }

    pub(super) fn alignment(&self) -> &Arc<ClientAlignment> {
        &self.alignment
    }

    /// How long a probe may take (`None`: no limit).
    pub(super) fn probe_timeout(&self) -> Option<Duration> {
        self.settings.probe_timeout
    }

    /// Whether a read msyncs to the active before going to an observer: the first read
    /// does unless a call reached the active already; later ones as the auto-msync period
    /// says (Hadoop msyncs when more than the period passed).
    pub(super) fn msync_due(&self) -> MsyncDue {
        let Some(at) = *lock(&self.last_msync) else {
            return MsyncDue::Once;
        };
        match self.settings.auto_msync {
            AutoMsync::Never => MsyncDue::No,
            AutoMsync::EveryRead => MsyncDue::EveryRead,
            AutoMsync::After(period) if self.clock.monotonic().saturating_sub(at) > period => {
                MsyncDue::Once
            }
            AutoMsync::After(_) => MsyncDue::No,
        }
    }

    /// The turn to send an msync due [`MsyncDue::Once`]; ask [`ObserverReads::msync_due`]
    /// again once it is held.
    pub(super) async fn msync_turn(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.msync_turn.lock().await
    }

    /// A call was answered by the active (an msync or any other): the client's state is at
    /// least the active's as of now.
    pub(super) fn reached_active(&self) {
        *lock(&self.last_msync) = Some(self.clock.monotonic());
    }

    /// Whether reads look for an observer now (not within the probe retry period after a
    /// round found none).
    pub(super) fn should_find_observer(&self) -> bool {
        match *lock(&self.no_observer_since) {
            None => true,
            Some(since) => {
                self.clock.monotonic().saturating_sub(since) >= self.settings.probe_retry_period
            }
        }
    }

    /// The NameNode reads try now, and its state if it was probed since the cursor came to
    /// it (`None`: probe it, then [`ObserverReads::probed`]).
    pub(super) fn current(&self) -> (usize, Option<Seen>) {
        let c = *lock(&self.cursor);
        let seen = c.probed.then(|| self.seen(c.index)).flatten();
        (c.index, seen)
    }

    /// Records a probe of NameNode `index`.
    pub(super) fn probed(&self, index: usize, seen: Seen) {
        if let Some(slot) = self.seen.get(index) {
            slot.store(seen.code(), Ordering::Release);
        }
        let mut c = lock(&self.cursor);
        if c.index == index {
            c.probed = true;
        }
    }

    /// NameNode `index`'s state at its last probe.
    pub(super) fn seen(&self, index: usize) -> Option<Seen> {
        Seen::from_code(self.seen.get(index)?.load(Ordering::Acquire))
    }

    /// Moves the cursor past NameNode `from` (to be probed when reached); a no-op when another
    /// read moved it already (Hadoop's changeProxy).
    pub(super) fn advance(&self, from: usize) {
        let n = self.seen.len().max(1);
        let mut c = lock(&self.cursor);
        if c.index == from {
            *c = Cursor {
                index: (from + 1) % n,
                probed: false,
            };
        }
    }

    /// Ends a read's round over the NameNodes: `found` when an observer answered it or
    /// failed it (Hadoop resets its probe time then), else no observer was there and reads
    /// go to the active for the probe retry period.
    pub(super) fn round_ended(&self, found: bool) {
        *lock(&self.no_observer_since) = (!found).then(|| self.clock.monotonic());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhdfs_conf::clock::ManualClock;

    fn remote(class: &str) -> IpcError {
        IpcError::Remote {
            class_name: class.into(),
            message: "m".into(),
        }
    }

    #[test]
    fn settings_only_with_the_observer_provider() {
        let mut c = Configuration::new();
        assert_eq!(ObserverSettings::from_conf(&c, "ns").unwrap(), None);
        c.set(
            "dfs.client.failover.proxy.provider.ns",
            keys::CONFIGURED_FAILOVER_PROXY_PROVIDER,
        );
        assert_eq!(ObserverSettings::from_conf(&c, "ns").unwrap(), None);
        c.set(
            "dfs.client.failover.proxy.provider.ns",
            keys::OBSERVER_READ_PROXY_PROVIDER,
        );
        assert_eq!(
            ObserverSettings::from_conf(&c, "ns").unwrap(),
            Some(ObserverSettings::default())
        );
        assert_eq!(ObserverSettings::from_conf(&c, "other").unwrap(), None);
        c.set("dfs.client.failover.observer.probe.retry.period", "250");
        c.set("dfs.client.failover.observer.auto-msync-period.ns", "2s");
        c.set(
            "dfs.client.failover.namenode.ha-state.probe.timeout",
            "1500",
        );
        let s = ObserverSettings::from_conf(&c, "ns").unwrap().unwrap();
        assert_eq!(s.probe_retry_period, Duration::from_millis(250));
        assert_eq!(s.auto_msync, AutoMsync::After(Duration::from_secs(2)));
        assert_eq!(s.probe_timeout, Some(Duration::from_millis(1500)));
        // Hadoop's defaults: 10 minutes, never auto-msync, no probe timeout.
        let d = ObserverSettings::default();
        assert_eq!(d.probe_retry_period, Duration::from_secs(600));
        assert_eq!(d.auto_msync, AutoMsync::Never);
        assert_eq!(d.probe_timeout, None);
    }

    /// The auto-msync period is per nameservice, may be negative (never), 0 (every read) or
    /// a duration; anything else is a configuration error naming the key.
    #[test]
    fn auto_msync_period_values() {
        let period = |v: &str| {
            let mut c = Configuration::new();
            c.set(
                "dfs.client.failover.proxy.provider.ns",
                keys::OBSERVER_READ_PROXY_PROVIDER,
            );
            c.set("dfs.client.failover.observer.auto-msync-period.ns", v);
            ObserverSettings::from_conf(&c, "ns").map(|s| s.map(|s| s.auto_msync))
        };
        assert_eq!(period("-1").unwrap(), Some(AutoMsync::Never));
        assert_eq!(period("-5s").unwrap(), Some(AutoMsync::Never));
        assert_eq!(period("0").unwrap(), Some(AutoMsync::EveryRead));
        assert_eq!(period("0s").unwrap(), Some(AutoMsync::EveryRead));
        assert_eq!(
            period("300").unwrap(),
            Some(AutoMsync::After(Duration::from_millis(300)))
        );
        assert_eq!(
            period("1m").unwrap(),
            Some(AutoMsync::After(Duration::from_secs(60)))
        );
        let err = period("soon").unwrap_err().to_string();
        assert!(
            err.contains("dfs.client.failover.observer.auto-msync-period.ns"),
            "{err}"
        );
        assert!(period("-x").is_err());
        // Another nameservice's period is not this one's.
        let mut c = Configuration::new();
        c.set(
            "dfs.client.failover.proxy.provider.ns",
            keys::OBSERVER_READ_PROXY_PROVIDER,
        );
        c.set("dfs.client.failover.observer.auto-msync-period.other", "0");
        let s = ObserverSettings::from_conf(&c, "ns").unwrap().unwrap();
        assert_eq!(s.auto_msync, AutoMsync::Never);
        assert_eq!(AutoMsync::from_millis(-1), AutoMsync::Never);
        assert_eq!(AutoMsync::from_millis(0), AutoMsync::EveryRead);
    }

    fn reads_with(auto_msync: AutoMsync, clock: SharedClock) -> ObserverReads {
        let settings = ObserverSettings {
            auto_msync,
            ..ObserverSettings::default()
        };
        ObserverReads::new(settings, clock, Arc::new(ClientAlignment::new()), 2)
    }

    /// The first read msyncs unless the active answered a call already; after that the
    /// period decides, on the injected clock.
    #[test]
    fn msync_before_reads_follows_the_period() {
        let clock = ManualClock::shared(0);
        // Never (the default): only before the first read.
        let reads = reads_with(AutoMsync::Never, clock.clone());
        assert_eq!(reads.msync_due(), MsyncDue::Once);
        reads.reached_active();
        assert_eq!(reads.msync_due(), MsyncDue::No);
        clock.advance(Duration::from_secs(3600));
        assert_eq!(reads.msync_due(), MsyncDue::No);

        // 0: every read, the first included (which takes the one-at-a-time turn).
        let reads = reads_with(AutoMsync::EveryRead, clock.clone());
        assert_eq!(reads.msync_due(), MsyncDue::Once);
        reads.reached_active();
        assert_eq!(reads.msync_due(), MsyncDue::EveryRead);

        // A period: due once more than the period passed since the active last answered.
        let reads = reads_with(AutoMsync::After(Duration::from_secs(5)), clock.clone());
        assert_eq!(reads.msync_due(), MsyncDue::Once);
        reads.reached_active();
        clock.advance(Duration::from_secs(5));
        assert_eq!(
            reads.msync_due(),
            MsyncDue::No,
            "exactly the period is not more"
        );
        clock.advance(Duration::from_millis(1));
        assert_eq!(reads.msync_due(), MsyncDue::Once);
        // Any call the active answers (a write, a read that fell back) counts as an msync.
        reads.reached_active();
        assert_eq!(reads.msync_due(), MsyncDue::No);
        clock.advance(Duration::from_secs(6));
        assert_eq!(reads.msync_due(), MsyncDue::Once);
    }

    #[test]
    fn probe_answers() {
        let state = |s: HaServiceStateProto| {
            Seen::from_probe(Ok(HaServiceStateResponseProto { state: s as i32 }))
        };
        assert_eq!(state(HaServiceStateProto::Observer), Seen::Observer);
        assert_eq!(state(HaServiceStateProto::Active), Seen::Active);
        assert_eq!(state(HaServiceStateProto::Standby), Seen::Standby);
        assert_eq!(state(HaServiceStateProto::Initializing), Seen::Standby);
        assert_eq!(
            Seen::from_probe(Ok(HaServiceStateResponseProto { state: 42 })),
            Seen::Unreachable
        );
        assert_eq!(
            Seen::from_probe(Err(remote(exceptions::STANDBY))),
            Seen::Standby
        );
        assert_eq!(
            Seen::from_probe(Err(IpcError::Io(
                std::io::ErrorKind::ConnectionRefused.into()
            ))),
            Seen::Unreachable
        );
    }

    #[test]
    fn which_observer_failures_move_on() {
        use AfterFailure::*;
        let m = "getFileInfo";
        assert_eq!(
            after_observer_failure(&remote(exceptions::STANDBY), true, m),
            NextObserver
        );
        assert_eq!(
            after_observer_failure(&remote(exceptions::RETRIABLE), true, m),
            NextObserver
        );
        assert_eq!(
            after_observer_failure(&remote(exceptions::OBSERVER_RETRY_ON_ACTIVE), true, m),
            Active
        );
        assert_eq!(
            after_observer_failure(&remote(exceptions::FILE_NOT_FOUND), true, m),
            Fail
        );
        let reset = IpcError::Io(std::io::ErrorKind::ConnectionReset.into());
        assert_eq!(after_observer_failure(&reset, true, m), NextObserver);
        assert_eq!(
            after_observer_failure(&IpcError::Closed, false, m),
            NextObserver
        );
        assert_eq!(
            after_observer_failure(&IpcError::Protocol("x".into()), true, m),
            Fail
        );
    }

    /// The cursor as Hadoop's changeProxy: a NameNode is probed when the cursor comes to it,
    /// a move from a NameNode the cursor already left is ignored, and it wraps around.
    #[test]
    fn the_cursor_probes_each_namenode_it_comes_to() {
        let clock = ManualClock::shared(0);
        let reads = ObserverReads::new(
            ObserverSettings::default(),
            clock,
            Arc::new(ClientAlignment::new()),
            3,
        );
        assert_eq!(reads.current(), (0, None));
        reads.probed(0, Seen::Active);
        assert_eq!(reads.current(), (0, Some(Seen::Active)));
        reads.advance(0);
        // Another read's late move from 0 is ignored.
        reads.advance(0);
        assert_eq!(reads.current(), (1, None));
        reads.probed(1, Seen::Observer);
        assert_eq!(reads.current(), (1, Some(Seen::Observer)));
        assert_eq!(reads.seen(0), Some(Seen::Active));
        reads.advance(1);
        reads.advance(2);
        // Back at 0: its old state is kept for the failover path, but it is probed again.
        assert_eq!(reads.current(), (0, None));
        assert_eq!(reads.seen(0), Some(Seen::Active));
        assert_eq!(reads.seen(2), None);
    }

    #[test]
    fn no_observer_found_means_the_active_for_the_probe_period() {
        let clock = ManualClock::shared(0);
        let settings = ObserverSettings {
            probe_retry_period: Duration::from_secs(10),
            ..ObserverSettings::default()
        };
        let reads =
            ObserverReads::new(settings, clock.clone(), Arc::new(ClientAlignment::new()), 2);
        assert!(reads.should_find_observer());
        reads.round_ended(false);
        assert!(!reads.should_find_observer());
        clock.advance(Duration::from_secs(9));
        assert!(!reads.should_find_observer());
        clock.advance(Duration::from_secs(1));
        assert!(reads.should_find_observer());
        reads.round_ended(false);
        assert!(!reads.should_find_observer());
        reads.round_ended(true);
        assert!(reads.should_find_observer());
    }
}
