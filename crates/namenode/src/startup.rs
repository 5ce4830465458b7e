//! Start-up progress, as Hadoop's `StartupProgress`: four phases in order — loading the
//! image, loading the edits, saving a checkpoint, start-up safe mode — each with a count, a
//! total, begin and end times on the NameNode's injected clock. The load code reports into
//! it (`persist::load_reporting`: one relaxed counter increment per inode or edit, nothing
//! timed per item), the safe mode monitor reports blocks; `/jmx` (StartupProgress bean) and
//! `/startup.html` read a [`ProgressView`].
//!
//! Hadoop's rules kept here: a phase's percent complete is 1.0 once it ended, else
//! count/total (0 with no total); the overall percent is 1.0 once safe mode ended, else the
//! mean of the phases; the overall elapsed time runs from the image load's begin to safe
//! mode's end (or now); once a phase ended its count and total no longer move.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use rhdfs_conf::clock::SharedClock;

/// A start-up phase, in Hadoop's order and with Hadoop's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    LoadingFsImage,
    LoadingEdits,
    SavingCheckpoint,
    SafeMode,
}

impl Phase {
    pub const ALL: [Phase; 4] = [
        Phase::LoadingFsImage,
        Phase::LoadingEdits,
        Phase::SavingCheckpoint,
        Phase::SafeMode,
    ];

    /// Hadoop's `Phase.getName()`: the prefix of the bean's attribute names.
    pub fn name(self) -> &'static str {
        match self {
            Phase::LoadingFsImage => "LoadingFsImage",
            Phase::LoadingEdits => "LoadingEdits",
            Phase::SavingCheckpoint => "SavingCheckpoint",
            Phase::SafeMode => "SafeMode",
        }
    }

    /// Hadoop's `Phase.getDescription()`, for the web page.
    pub fn description(self) -> &'static str {
        match self {
            Phase::LoadingFsImage => "Loading fsimage",
            Phase::LoadingEdits => "Loading edits",
            Phase::SavingCheckpoint => "Saving checkpoint",
            Phase::SafeMode => "Safe mode",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Where a phase stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Pending,
    Running,
    Complete,
}

impl Status {
    /// Hadoop's `Status` names.
    pub fn name(self) -> &'static str {
        match self {
            Status::Pending => "PENDING",
            Status::Running => "RUNNING",
            Status::Complete => "COMPLETE",
        }
    }
}

#[derive(Debug, Default, Clone, Copy)]
struct Times {
    begin: Option<Duration>,
    end: Option<Duration>,
}

#[derive(Debug, Default)]
struct PhaseState {
    /// Items done; the load loops bump it directly (relaxed: read only for reports).
    count: AtomicU64,
    total: AtomicU64,
    times: Mutex<Times>,
}

/// The NameNode's start-up progress (shared: the loader, the safe mode monitor and the web
/// port hold it).
#[derive(Debug)]
pub struct StartupProgress {
    clock: SharedClock,
    phases: [PhaseState; 4],
}

impl StartupProgress {
    pub fn new(clock: SharedClock) -> Self {
        StartupProgress {
            clock,
            phases: Default::default(),
        }
    }

    fn state(&self, p: Phase) -> &PhaseState {
        &self.phases[p.index()]
    }

    fn is_complete(&self, p: Phase) -> bool {
        self.state(p).times.lock().end.is_some()
    }

    /// Starts `p` (no effect once it began).
    pub fn begin(&self, p: Phase) {
        let now = self.clock.monotonic();
        let mut t = self.state(p).times.lock();
        if t.begin.is_none() {
            t.begin = Some(now);
        }
    }

    /// Ends `p` (beginning it now if it never began, as Hadoop's skipped checkpoint does).
    pub fn end(&self, p: Phase) {
        let now = self.clock.monotonic();
        let mut t = self.state(p).times.lock();
        t.begin.get_or_insert(now);
        t.end.get_or_insert(now);
    }

    /// Sets `p`'s total (ignored once it ended).
    pub fn set_total(&self, p: Phase, total: u64) {
        if !self.is_complete(p) {
            self.state(p).total.store(total, Ordering::Relaxed);
        }
    }

    /// Sets `p`'s count (ignored once it ended).
    pub fn set_count(&self, p: Phase, count: u64) {
        if !self.is_complete(p) {
            self.state(p).count.store(count, Ordering::Relaxed);
        }
    }

    /// The counter a load loop bumps once per item of `p`.
    pub fn counter(&self, p: Phase) -> &AtomicU64 {
        &self.state(p).count
    }

    /// Everything now.
    pub fn view(&self) -> ProgressView {
        let now = self.clock.monotonic();
        let phases = Phase::ALL.map(|p| {
            let s = self.state(p);
            let t = *s.times.lock();
            let (count, total) = (
                s.count.load(Ordering::Relaxed),
                s.total.load(Ordering::Relaxed),
            );
            let status = match (t.begin, t.end) {
                (_, Some(_)) => Status::Complete,
                (Some(_), None) => Status::Running,
                (None, None) => Status::Pending,
            };
            let percent_complete = match status {
                Status::Complete => 1.0,
                _ if total > 0 => (count as f64 / total as f64).min(1.0),
                _ => 0.0,
            };
            PhaseView {
                phase: p,
                status,
                count,
                total,
                elapsed_ms: elapsed_ms(t.begin, t.end, now),
                percent_complete,
            }
        });
        let image = *self.state(Phase::LoadingFsImage).times.lock();
        let safe = *self.state(Phase::SafeMode).times.lock();
        let percent_complete = if safe.end.is_some() {
            1.0
        } else {
            phases.iter().map(|v| v.percent_complete).sum::<f64>() / phases.len() as f64
        };
        ProgressView {
            elapsed_ms: elapsed_ms(image.begin, safe.end, now),
            percent_complete,
            phases,
        }
    }
}

fn elapsed_ms(begin: Option<Duration>, end: Option<Duration>, now: Duration) -> u64 {
    match begin {
        Some(b) => end.unwrap_or(now).saturating_sub(b).as_millis() as u64,
        None => 0,
    }
}

/// One phase at the moment of the view.
#[derive(Debug, Clone, Copy)]
pub struct PhaseView {
    pub phase: Phase,
    pub status: Status,
    pub count: u64,
    pub total: u64,
    pub elapsed_ms: u64,
    pub percent_complete: f64,
}

/// The whole start-up at one moment.
#[derive(Debug, Clone, Copy)]
pub struct ProgressView {
    pub elapsed_ms: u64,
    pub percent_complete: f64,
    pub phases: [PhaseView; 4],
}

impl ProgressView {
    pub fn phase(&self, p: Phase) -> &PhaseView {
        &self.phases[p.index()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhdfs_conf::clock::ManualClock;
    use std::sync::Arc;

    #[test]
    fn phases_follow_hadoops_rules() {
        let clock = Arc::new(ManualClock::new(0));
        let p = StartupProgress::new(clock.clone());
        let v = p.view();
        assert_eq!(v.percent_complete, 0.0);
        assert_eq!(v.elapsed_ms, 0);
        p.begin(Phase::LoadingFsImage);
        p.set_total(Phase::LoadingFsImage, 4);
        p.counter(Phase::LoadingFsImage)
            .fetch_add(1, Ordering::Relaxed);
        clock.advance(Duration::from_millis(30));
        let v = p.view();
        let img = v.phase(Phase::LoadingFsImage);
        assert_eq!((img.status, img.count, img.total), (Status::Running, 1, 4));
        assert_eq!(img.percent_complete, 0.25);
        assert_eq!(img.elapsed_ms, 30);
        assert_eq!(v.percent_complete, 0.25 / 4.0);
        p.counter(Phase::LoadingFsImage)
            .fetch_add(3, Ordering::Relaxed);
        p.end(Phase::LoadingFsImage);
        p.set_count(Phase::LoadingFsImage, 99);
        p.end(Phase::SavingCheckpoint);
        clock.advance(Duration::from_millis(20));
        let v = p.view();
        assert_eq!(v.phase(Phase::LoadingFsImage).count, 4);
        assert_eq!(v.phase(Phase::LoadingFsImage).elapsed_ms, 30);
        assert_eq!(v.phase(Phase::SavingCheckpoint).elapsed_ms, 0);
        assert_eq!(v.phase(Phase::SavingCheckpoint).percent_complete, 1.0);
        assert_eq!(v.phase(Phase::LoadingEdits).status, Status::Pending);
        assert_eq!(v.percent_complete, 0.5);
        assert_eq!(v.elapsed_ms, 50);
        p.begin(Phase::SafeMode);
        p.end(Phase::SafeMode);
        clock.advance(Duration::from_millis(20));
        let v = p.view();
        assert_eq!(v.percent_complete, 1.0);
        assert_eq!(v.elapsed_ms, 50);
    }
}
