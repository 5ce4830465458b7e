//! Injectable clocks: the system clock for daemons, a manual clock for tests.

use std::fmt::Debug;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A source of wall-clock and monotonic time.
pub trait Clock: Send + Sync + Debug {
    /// Wall-clock time in milliseconds since the Unix epoch.
    fn now_millis(&self) -> u64;
    /// Monotonic time elapsed since the clock started.
    fn monotonic(&self) -> Duration;
}

/// A clock shared between components.
pub type SharedClock = Arc<dyn Clock>;

/// The real clock: `SystemTime` for wall time, `Instant` for monotonic time.
#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    start: Instant,
}

impl SystemClock {
    /// A system clock whose monotonic time starts now.
    pub fn new() -> Self {
        SystemClock {
            start: Instant::now(),
        }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for SystemClock {
    fn now_millis(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
            .unwrap_or(0)
    }

    fn monotonic(&self) -> Duration {
        self.start.elapsed()
    }
}

/// The process-wide system clock.
pub fn system_clock() -> SharedClock {
    static CLOCK: OnceLock<SharedClock> = OnceLock::new();
    CLOCK.get_or_init(|| Arc::new(SystemClock::new())).clone()
}

/// A clock that moves only when told to. Thread-safe; share it as `Arc<ManualClock>` and hand
/// out clones coerced to [`SharedClock`].
///
/// Wall time and monotonic time advance together with [`ManualClock::advance`];
/// [`ManualClock::set_millis`] moves wall time only (it may go backwards, like a system clock
/// being reset), leaving monotonic time untouched.
#[derive(Debug)]
pub struct ManualClock {
    wall_millis: AtomicU64,
    mono_nanos: AtomicU64,
}

impl ManualClock {
    /// A clock reading `start_millis` (epoch ms) with monotonic time zero.
    pub fn new(start_millis: u64) -> Self {
        ManualClock {
            wall_millis: AtomicU64::new(start_millis),
            mono_nanos: AtomicU64::new(0),
        }
    }

    /// A new manual clock already wrapped in an `Arc`.
    pub fn shared(start_millis: u64) -> Arc<Self> {
        Arc::new(Self::new(start_millis))
    }

    /// Moves both wall and monotonic time forward by `d`.
    pub fn advance(&self, d: Duration) {
        let ms = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        self.wall_millis.fetch_add(ms, Ordering::SeqCst);
        self.mono_nanos.fetch_add(ns, Ordering::SeqCst);
    }

    /// Sets wall time (epoch ms); monotonic time is unchanged.
    pub fn set_millis(&self, millis: u64) {
        self.wall_millis.store(millis, Ordering::SeqCst);
    }
}

impl Default for ManualClock {
    fn default() -> Self {
        Self::new(0)
    }
}

impl Clock for ManualClock {
    fn now_millis(&self) -> u64 {
        self.wall_millis.load(Ordering::SeqCst)
    }

    fn monotonic(&self) -> Duration {
        Duration::from_nanos(self.mono_nanos.load(Ordering::SeqCst))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_told() {
        let c = ManualClock::shared(1_000);
        let shared: SharedClock = c.clone();
        assert_eq!(shared.now_millis(), 1_000);
        assert_eq!(shared.monotonic(), Duration::ZERO);
        c.advance(Duration::from_millis(1_500));
        assert_eq!(shared.now_millis(), 2_500);
        assert_eq!(shared.monotonic(), Duration::from_millis(1_500));
        c.set_millis(10);
        assert_eq!(shared.now_millis(), 10);
        assert_eq!(shared.monotonic(), Duration::from_millis(1_500));
    }

    #[test]
    fn manual_clock_is_thread_safe() {
        let c = ManualClock::shared(0);
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let c = c.clone();
                std::thread::spawn(move || {
                    for _ in 0..1000 {
                        c.advance(Duration::from_millis(1));
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().expect("thread panicked");
        }
        assert_eq!(c.now_millis(), 4000);
        assert_eq!(c.monotonic(), Duration::from_secs(4));
    }

    #[test]
    fn system_clock_is_sane() {
        let c = system_clock();
        assert!(c.now_millis() > 1_600_000_000_000);
        let a = c.monotonic();
        let b = c.monotonic();
        assert!(b >= a);
    }
}
