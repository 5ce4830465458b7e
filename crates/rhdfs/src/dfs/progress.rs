//! A progress line for -put/-get (bytes, rate, ETA), drawn only when stderr is a terminal.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use super::format::human;

pub(crate) struct Progress {
    enabled: bool,
    name: String,
    total: u64,
    done: u64,
    start: Instant,
    last: Option<Instant>,
}

impl Progress {
    pub(crate) fn new(name: &str, total: u64) -> Self {
        Progress {
            enabled: std::io::stderr().is_terminal() && total > 0,
            name: name.to_string(),
            total,
            done: 0,
            start: Instant::now(),
            last: None,
        }
    }

    pub(crate) fn add(&mut self, n: u64) {
        self.done += n;
        if !self.enabled {
            return;
        }
        let now = Instant::now();
        if self
            .last
            .is_some_and(|l| now - l < Duration::from_millis(200))
            && self.done < self.total
        {
            return;
        }
        self.last = Some(now);
        self.draw(now);
    }

    fn draw(&self, now: Instant) {
        let secs = (now - self.start).as_secs_f64().max(1e-3);
        let rate = self.done as f64 / secs;
        let pct = self.done.saturating_mul(100) / self.total.max(1);
        let eta = if rate > 0.0 {
            (self.total.saturating_sub(self.done) as f64 / rate) as u64
        } else {
            0
        };
        let width = 30usize;
        let filled = (pct as usize * width / 100).min(width);
        let bar = format!("{}{}", "#".repeat(filled), "-".repeat(width - filled));
        let mut err = std::io::stderr();
        let _ = write!(
            err,
            "\r{} [{bar}] {pct:>3}% {}/{} {}/s ETA {:02}:{:02}  ",
            self.name,
            human(self.done),
            human(self.total),
            human(rate as u64),
            eta / 60,
            eta % 60
        );
        let _ = err.flush();
    }

    pub(crate) fn finish(&mut self) {
        if self.enabled {
            self.draw(Instant::now());
            let _ = writeln!(std::io::stderr());
        }
    }
}
