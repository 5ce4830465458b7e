//! Whether a pass of the heartbeat checker may declare DataNodes dead (Hadoop's HDFS-9107).
//!
//! A pass that starts much later than scheduled means the checker, or the whole NameNode, was
//! held up (a long stall, SIGSTOP, a suspended VM). The DataNodes' heartbeats sent meanwhile
//! are still queued, unprocessed, so every node looks silent: that pass expires nobody, and
//! neither do the passes of the next recheck interval, while the queued heartbeats land. A pass
//! whose own scan took longer than the recheck interval is not applied either: what it read
//! is stale. The decisions are pure functions of monotonic instants from the injected clock.

use std::time::Duration;

/// What the heartbeat checker does on one pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanVerdict {
    /// Declare dead the nodes whose last heartbeat is older than the dead interval.
    Scan,
    /// This pass came `gap` after the previous one: the checker was held up; skip it.
    SkipPause { gap: Duration },
    /// Within one recheck interval after a pause or an overrun: skip, heartbeats catch up.
    Settling,
}

/// The heartbeat checker's memory of its previous pass.
#[derive(Clone, Debug)]
pub struct HeartbeatScanGate {
    recheck: Duration,
    period: Duration,
    last_pass: Option<Duration>,
    settle_until: Option<Duration>,
}

impl HeartbeatScanGate {
    /// `recheck` = `dfs.namenode.heartbeat.recheck-interval`; `period` = how often the checker
    /// is scheduled to run. A gap between two passes above `period + recheck` is a pause.
    pub fn new(recheck: Duration, period: Duration) -> Self {
        HeartbeatScanGate {
            recheck,
            period,
            last_pass: None,
            settle_until: None,
        }
    }

    /// The longest gap between two passes that is not a pause.
    pub fn pause_threshold(&self) -> Duration {
        self.period + self.recheck
    }

    /// Called at the start of every pass with the monotonic time.
    pub fn begin_pass(&mut self, now: Duration) -> ScanVerdict {
        if let Some(prev) = self.last_pass.replace(now) {
            let gap = now.saturating_sub(prev);
            if gap > self.pause_threshold() {
                self.settle_until = Some(now + self.recheck);
                return ScanVerdict::SkipPause { gap };
            }
        }
        match self.settle_until {
            Some(until) if now < until => ScanVerdict::Settling,
            _ => {
                self.settle_until = None;
                ScanVerdict::Scan
            }
        }
    }

    /// Called before a scan that began at `started` applies its findings, at `now`: true
    /// (and the next recheck interval settles) if the scan took longer than the recheck
    /// interval, so its view of the heartbeats is stale.
    pub fn overran(&mut self, started: Duration, now: Duration) -> bool {
        if now.saturating_sub(started) > self.recheck {
            self.settle_until = Some(now + self.recheck);
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn gate() -> HeartbeatScanGate {
        // recheck 2 s, checked every second (heartbeat interval 1 s).
        HeartbeatScanGate::new(ms(2000), ms(1000))
    }

    #[test]
    fn regular_passes_scan() {
        let mut g = gate();
        assert_eq!(g.begin_pass(ms(0)), ScanVerdict::Scan);
        for t in (1..10).map(|s| ms(s * 1000)) {
            assert_eq!(g.begin_pass(t), ScanVerdict::Scan);
        }
        // A late pass within the margin (scheduling jitter, a slow previous scan) still scans.
        assert_eq!(g.begin_pass(ms(9000 + 3000)), ScanVerdict::Scan);
    }

    #[test]
    fn a_pause_skips_the_pass_and_settles_for_one_recheck_interval() {
        let mut g = gate();
        assert_eq!(g.begin_pass(ms(1000)), ScanVerdict::Scan);
        // Stopped for 25 s.
        assert_eq!(
            g.begin_pass(ms(27_000)),
            ScanVerdict::SkipPause { gap: ms(26_000) }
        );
        assert_eq!(g.begin_pass(ms(28_000)), ScanVerdict::Settling);
        assert_eq!(g.begin_pass(ms(28_999)), ScanVerdict::Settling);
        assert_eq!(g.begin_pass(ms(29_000)), ScanVerdict::Scan);
        assert_eq!(g.begin_pass(ms(30_000)), ScanVerdict::Scan);
    }

    #[test]
    fn just_over_the_threshold_is_a_pause() {
        let mut g = gate();
        assert_eq!(g.pause_threshold(), ms(3000));
        g.begin_pass(ms(0));
        assert_eq!(g.begin_pass(ms(3000)), ScanVerdict::Scan);
        assert_eq!(
            g.begin_pass(ms(6001)),
            ScanVerdict::SkipPause { gap: ms(3001) }
        );
    }

    #[test]
    fn a_second_pause_while_settling_extends_it() {
        let mut g = gate();
        g.begin_pass(ms(0));
        assert!(matches!(
            g.begin_pass(ms(10_000)),
            ScanVerdict::SkipPause { .. }
        ));
        assert!(matches!(
            g.begin_pass(ms(20_000)),
            ScanVerdict::SkipPause { .. }
        ));
        assert_eq!(g.begin_pass(ms(21_000)), ScanVerdict::Settling);
        assert_eq!(g.begin_pass(ms(22_000)), ScanVerdict::Scan);
    }

    #[test]
    fn an_overrunning_scan_is_not_applied_and_settles() {
        let mut g = gate();
        assert_eq!(g.begin_pass(ms(0)), ScanVerdict::Scan);
        assert!(!g.overran(ms(0), ms(2000)));
        assert!(g.overran(ms(0), ms(2001)));
        // The next pass comes right after the long one: no pause, but still settling.
        assert_eq!(g.begin_pass(ms(2500)), ScanVerdict::Settling);
        assert_eq!(g.begin_pass(ms(4001)), ScanVerdict::Scan);
    }

    #[test]
    fn the_clock_going_nowhere_is_not_a_pause() {
        let mut g = gate();
        assert_eq!(g.begin_pass(ms(5000)), ScanVerdict::Scan);
        assert_eq!(g.begin_pass(ms(5000)), ScanVerdict::Scan);
        assert!(!g.overran(ms(5000), ms(4000)));
    }
}
