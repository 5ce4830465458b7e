//! Idle connections, as Hadoop's `Server.ConnectionManager` treats them: the server keeps
//! every connection open however long it is idle, unless at least `ipc.client.idlethreshold`
//! connections are open; then a scan every `ipc.client.connection.idle-scan-interval.ms`
//! closes idle ones (no call running, nothing received for twice
//! `ipc.client.connection.maxidletime`), at most `ipc.client.kill.max` per scan, stopping
//! once fewer than the threshold remain. A connection with bytes received but not yet
//! handled as whole requests (a partial frame, buffered or unread input) is never idle.

use std::collections::HashMap;
use std::io;
use std::mem::MaybeUninit;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use parking_lot::Mutex;
use rhdfs_conf::clock::SharedClock;
use rhdfs_conf::keys;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::net::tcp::OwnedReadHalf;
use tokio::sync::Notify;

/// The idle-connection rules (Hadoop's defaults).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdleRules {
    /// A connection with nothing received for longer than this may be closed: twice
    /// `ipc.client.connection.maxidletime`, so a client retires its own idle connection first.
    pub max_idle: Duration,
    /// `ipc.client.idlethreshold`: no idle connection is closed while fewer are open.
    pub threshold: usize,
    /// `ipc.client.kill.max`: idle connections closed per scan at most.
    pub kill_max: usize,
    /// `ipc.client.connection.idle-scan-interval.ms`: how often the server scans.
    pub scan_interval: Duration,
}

impl Default for IdleRules {
    fn default() -> Self {
        IdleRules {
            max_idle: 2 * keys::IPC_CLIENT_CONNECTION_MAXIDLETIME_DEFAULT,
            threshold: keys::IPC_CLIENT_IDLETHRESHOLD_DEFAULT as usize,
            kill_max: keys::IPC_CLIENT_KILL_MAX_DEFAULT as usize,
            scan_interval: keys::IPC_CLIENT_CONNECTION_IDLESCANINTERVAL_DEFAULT,
        }
    }
}

impl IdleRules {
    /// Reads the four keys (bare numbers of the durations in milliseconds).
    pub fn from_conf(conf: &rhdfs_conf::Configuration) -> Result<Self, rhdfs_conf::ConfError> {
        let max_idle = conf.get_duration(
            keys::IPC_CLIENT_CONNECTION_MAXIDLETIME_KEY,
            keys::IPC_CLIENT_CONNECTION_MAXIDLETIME_DEFAULT,
            keys::IPC_CLIENT_CONNECTION_MAXIDLETIME_UNIT,
        )?;
        let count = |key, default: u64| {
            conf.get_u64(key, default)
                .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
        };
        Ok(IdleRules {
            max_idle: 2 * max_idle,
            threshold: count(
                keys::IPC_CLIENT_IDLETHRESHOLD_KEY,
                keys::IPC_CLIENT_IDLETHRESHOLD_DEFAULT,
            )?,
            kill_max: count(
                keys::IPC_CLIENT_KILL_MAX_KEY,
                keys::IPC_CLIENT_KILL_MAX_DEFAULT,
            )?,
            scan_interval: conf.get_duration(
                keys::IPC_CLIENT_CONNECTION_IDLESCANINTERVAL_KEY,
                keys::IPC_CLIENT_CONNECTION_IDLESCANINTERVAL_DEFAULT,
                keys::IPC_CLIENT_CONNECTION_IDLESCANINTERVAL_UNIT,
            )?,
        })
    }

    /// Whether a connection in this state may be closed as idle at `now`.
    pub fn is_idle(&self, c: &IdleView, now: Duration) -> bool {
        c.calls_in_flight == 0
            && c.unhandled_bytes == 0
            && now.saturating_sub(c.last_contact) > self.max_idle
    }

    /// The connections one scan closes, given all `open` ones: none below the threshold;
    /// else idle ones, longest idle first, at most `kill_max` and no more than it takes to
    /// get below the threshold.
    pub fn choose(&self, conns: &[IdleView], now: Duration) -> Vec<u64> {
        let open = conns.len();
        if open < self.threshold.max(1) {
            return Vec::new();
        }
        let budget = self.kill_max.min(open + 1 - self.threshold.max(1));
        let mut idle: Vec<&IdleView> = conns.iter().filter(|c| self.is_idle(c, now)).collect();
        idle.sort_by_key(|c| (c.last_contact, c.id));
        idle.into_iter().take(budget).map(|c| c.id).collect()
    }
}

/// What the idle scan knows of one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdleView {
    pub id: u64,
    /// Monotonic time of the last bytes received (or of the accept).
    pub last_contact: Duration,
    pub calls_in_flight: usize,
    /// Bytes received but not yet handled as whole frames (a request partly read or buffered).
    pub unhandled_bytes: u64,
}

/// One connection's activity, shared by its task and the idle scan.
#[derive(Debug)]
pub(crate) struct ConnState {
    id: u64,
    last_contact_nanos: AtomicU64,
    received: AtomicU64,
    handled: AtomicU64,
    in_flight: AtomicUsize,
    close_requested: AtomicBool,
    close: Notify,
}

impl ConnState {
    fn view(&self) -> IdleView {
        let received = self.received.load(Ordering::Acquire);
        let handled = self.handled.load(Ordering::Acquire);
        IdleView {
            id: self.id,
            last_contact: Duration::from_nanos(self.last_contact_nanos.load(Ordering::Acquire)),
            calls_in_flight: self.in_flight.load(Ordering::Acquire),
            unhandled_bytes: received.saturating_sub(handled),
        }
    }

    fn touch(&self, now: Duration) {
        let nanos = u64::try_from(now.as_nanos()).unwrap_or(u64::MAX);
        self.last_contact_nanos.fetch_max(nanos, Ordering::AcqRel);
    }

    /// `n` more bytes were consumed as part of whole frames (or the preamble).
    pub(crate) fn handled(&self, n: u64) {
        self.handled.fetch_add(n, Ordering::AcqRel);
    }

    /// Counts a call as running until the guard drops.
    pub(crate) fn call_started(self: &Arc<Self>) -> CallGuard {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        CallGuard(Arc::clone(self))
    }

    /// Resolves when the idle scan has asked this connection to close.
    pub(crate) async fn close_requested(&self) {
        loop {
            let notified = self.close.notified();
            if self.close_requested.swap(false, Ordering::AcqRel) {
                return;
            }
            notified.await;
        }
    }

    fn request_close(&self) {
        self.close_requested.store(true, Ordering::Release);
        self.close.notify_one();
    }

    /// Whether the connection may close as idle now (the scan's view may be stale).
    pub(crate) fn still_idle(&self, rules: &IdleRules, now: Duration) -> bool {
        rules.is_idle(&self.view(), now)
    }
}

/// A call running on a connection; dropping it ends the call.
#[derive(Debug)]
pub(crate) struct CallGuard(Arc<ConnState>);

impl Drop for CallGuard {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Every open connection of one server (Hadoop's ConnectionManager).
#[derive(Debug)]
pub(crate) struct Connections {
    rules: IdleRules,
    clock: SharedClock,
    next_id: AtomicU64,
    open: AtomicUsize,
    table: Mutex<HashMap<u64, Arc<ConnState>>>,
}

impl Connections {
    pub(crate) fn new(rules: IdleRules, clock: SharedClock) -> Self {
        Connections {
            rules,
            clock,
            next_id: AtomicU64::new(1),
            open: AtomicUsize::new(0),
            table: Mutex::new(HashMap::new()),
        }
    }

    /// Adds an accepted connection; it leaves the table when the registration drops.
    pub(crate) fn register(self: &Arc<Self>) -> Registration {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let state = Arc::new(ConnState {
            id,
            last_contact_nanos: AtomicU64::new(0),
            received: AtomicU64::new(0),
            handled: AtomicU64::new(0),
            in_flight: AtomicUsize::new(0),
            close_requested: AtomicBool::new(false),
            close: Notify::new(),
        });
        state.touch(self.clock.monotonic());
        self.table.lock().insert(id, Arc::clone(&state));
        self.open.fetch_add(1, Ordering::AcqRel);
        Registration {
            conns: Arc::clone(self),
            state,
        }
    }

    pub(crate) fn open(&self) -> usize {
        self.open.load(Ordering::Acquire)
    }

    pub(crate) fn rules(&self) -> &IdleRules {
        &self.rules
    }

    pub(crate) fn now(&self) -> Duration {
        self.clock.monotonic()
    }

    /// Every open connection's state, in accept order.
    pub(crate) fn views(&self) -> Vec<IdleView> {
        let mut v: Vec<IdleView> = self.table.lock().values().map(|s| s.view()).collect();
        v.sort_by_key(|c| c.id);
        v
    }

    /// One idle scan: asks the connections chosen by [`IdleRules::choose`] to close (each
    /// checks again that it is idle); returns how many were asked.
    pub(crate) fn scan(&self) -> usize {
        if self.open() < self.rules.threshold.max(1) {
            return 0;
        }
        let states: Vec<Arc<ConnState>> = self.table.lock().values().cloned().collect();
        let views: Vec<IdleView> = states.iter().map(|s| s.view()).collect();
        let chosen = self.rules.choose(&views, self.now());
        for s in states.iter().filter(|s| chosen.contains(&s.id)) {
            tracing::debug!(
                conn = s.id,
                open = self.open(),
                "IPC: closing idle connection"
            );
            s.request_close();
        }
        chosen.len()
    }
}

/// A connection's place in [`Connections`].
#[derive(Debug)]
pub(crate) struct Registration {
    conns: Arc<Connections>,
    state: Arc<ConnState>,
}

impl Registration {
    pub(crate) fn state(&self) -> &Arc<ConnState> {
        &self.state
    }

    pub(crate) fn connections(&self) -> &Arc<Connections> {
        &self.conns
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        if self.conns.table.lock().remove(&self.state.id).is_some() {
            self.conns.open.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// Where a connection's bytes come from.
#[derive(Debug)]
pub(crate) enum ReadSide {
    Tcp(OwnedReadHalf),
    /// An in-process connection (`local`): its buffer cannot be peeked, so it counts as
    /// holding unread input and is never closed as idle (its client closes it when idle).
    InProcess(tokio::io::ReadHalf<tokio::io::DuplexStream>),
}

/// The connection's read half, counting the bytes received and when the last arrived.
#[derive(Debug)]
pub(crate) struct Counted {
    inner: ReadSide,
    state: Arc<ConnState>,
    clock: SharedClock,
}

impl Counted {
    pub(crate) fn new(inner: ReadSide, reg: &Registration) -> Self {
        Counted {
            inner,
            state: Arc::clone(reg.state()),
            clock: Arc::clone(&reg.connections().clock),
        }
    }

    /// True if the kernel holds received bytes nobody has read yet. Asks the socket itself
    /// (a non-blocking MSG_PEEK), not the runtime's readiness cache, which may lag behind
    /// right after the process was stopped and resumed.
    pub(crate) fn has_unread_input(&self) -> bool {
        match &self.inner {
            ReadSide::Tcp(half) => has_unread_input(half),
            ReadSide::InProcess(_) => true,
        }
    }
}

pub(crate) fn has_unread_input(half: &OwnedReadHalf) -> bool {
    let stream: &tokio::net::TcpStream = half.as_ref();
    let mut byte = [MaybeUninit::<u8>::uninit(); 1];
    match socket2::SockRef::from(stream).peek(&mut byte) {
        Ok(n) => n > 0,
        // Nothing waiting (WouldBlock), or a failed socket: closing it loses nothing.
        Err(_) => false,
    }
}

impl AsyncRead for Counted {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let res = match &mut self.inner {
            ReadSide::Tcp(half) => Pin::new(half).poll_read(cx, buf),
            ReadSide::InProcess(half) => Pin::new(half).poll_read(cx, buf),
        };
        let n = buf.filled().len().saturating_sub(before);
        if n > 0 {
            self.state.received.fetch_add(n as u64, Ordering::AcqRel);
            self.state.touch(self.clock.monotonic());
        }
        res
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn rules(threshold: usize, kill_max: usize) -> IdleRules {
        IdleRules {
            max_idle: ms(20_000),
            threshold,
            kill_max,
            scan_interval: ms(10_000),
        }
    }

    fn idle(id: u64, last_contact: u64) -> IdleView {
        IdleView {
            id,
            last_contact: ms(last_contact),
            calls_in_flight: 0,
            unhandled_bytes: 0,
        }
    }

    #[test]
    fn defaults_are_hadoops() {
        let r = IdleRules::from_conf(&rhdfs_conf::Configuration::new()).unwrap();
        assert_eq!(r, IdleRules::default());
        assert_eq!(r.max_idle, ms(20_000));
        assert_eq!((r.threshold, r.kill_max), (4000, 10));
        assert_eq!(r.scan_interval, ms(10_000));
        let mut conf = rhdfs_conf::Configuration::new();
        conf.set("ipc.client.connection.maxidletime", "1s");
        conf.set("ipc.client.idlethreshold", "3");
        conf.set("ipc.client.kill.max", "2");
        conf.set("ipc.client.connection.idle-scan-interval.ms", "250");
        let r = IdleRules::from_conf(&conf).unwrap();
        assert_eq!(
            r,
            IdleRules {
                max_idle: ms(2000),
                threshold: 3,
                kill_max: 2,
                scan_interval: ms(250)
            }
        );
        conf.set("ipc.client.kill.max", "many");
        assert!(IdleRules::from_conf(&conf).is_err());
    }

    #[test]
    fn below_the_threshold_nothing_is_idle_enough() {
        let conns: Vec<IdleView> = (0..3).map(|i| idle(i, 0)).collect();
        assert!(rules(4, 10).choose(&conns, ms(3_600_000)).is_empty());
    }

    #[test]
    fn at_most_kill_max_per_scan_longest_idle_first() {
        let conns: Vec<IdleView> = (0..8).map(|i| idle(i, 1000 - i * 100)).collect();
        assert_eq!(rules(2, 3).choose(&conns, ms(60_000)), vec![7, 6, 5]);
    }

    #[test]
    fn a_scan_stops_below_the_threshold() {
        let conns: Vec<IdleView> = (0..5).map(|i| idle(i, 0)).collect();
        // 5 open, threshold 4: closing two leaves 3, below it.
        assert_eq!(rules(4, 10).choose(&conns, ms(60_000)), vec![0, 1]);
    }

    #[test]
    fn busy_or_recent_connections_are_not_idle() {
        let now = ms(60_000);
        let conns = vec![
            IdleView {
                calls_in_flight: 1,
                ..idle(1, 0)
            },
            IdleView {
                unhandled_bytes: 3,
                ..idle(2, 0)
            },
            // Heard from 20 s ago exactly: not longer than the limit.
            idle(3, 40_000),
            idle(4, 39_999),
        ];
        assert_eq!(rules(1, 10).choose(&conns, now), vec![4]);
    }
}
