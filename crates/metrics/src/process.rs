//! Figures of the running process read from Linux's `/proc` (zero elsewhere): CPU time,
//! resident and virtual memory, open and allowed file descriptors, threads, start time.

use std::time::{SystemTime, UNIX_EPOCH};

/// Clock ticks per second of `/proc/<pid>/stat` times (USER_HZ, 100 on every Linux ABI).
const TICKS_PER_SECOND: f64 = 100.0;

/// One reading of the process figures.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ProcessStats {
    /// User + system CPU time, seconds.
    pub cpu_seconds: f64,
    pub resident_bytes: u64,
    pub virtual_bytes: u64,
    pub open_fds: u64,
    pub max_fds: u64,
    pub threads: u64,
    /// Start time, seconds since the Unix epoch.
    pub start_time_seconds: f64,
}

/// Reads the figures of this process now (blocking: a few small `/proc` reads).
pub fn read() -> ProcessStats {
    let mut s = ProcessStats::default();
    if let Ok(stat) = std::fs::read_to_string("/proc/self/stat") {
        // Fields after the parenthesised command name, which may contain spaces.
        if let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) {
            let f: Vec<&str> = rest.split_whitespace().collect();
            // rest starts at field 3 (state): utime = 14, stime = 15, starttime = 22.
            let field = |n: usize| f.get(n - 3).and_then(|v| v.parse::<f64>().ok());
            s.cpu_seconds =
                (field(14).unwrap_or(0.0) + field(15).unwrap_or(0.0)) / TICKS_PER_SECOND;
            if let (Some(start), Some(btime)) = (field(22), boot_time()) {
                s.start_time_seconds = btime + start / TICKS_PER_SECOND;
            }
        }
    }
    if let Ok(status) = std::fs::read_to_string("/proc/self/status") {
        for line in status.lines() {
            let kb = |l: &str| {
                l.split_whitespace()
                    .nth(1)
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(0)
            };
            if line.starts_with("VmRSS:") {
                s.resident_bytes = kb(line) * 1024;
            } else if line.starts_with("VmSize:") {
                s.virtual_bytes = kb(line) * 1024;
            } else if line.starts_with("Threads:") {
                s.threads = kb(line);
            }
        }
    }
    if let Ok(dir) = std::fs::read_dir("/proc/self/fd") {
        s.open_fds = dir.count() as u64;
    }
    if let Ok(limits) = std::fs::read_to_string("/proc/self/limits") {
        s.max_fds = limits
            .lines()
            .find(|l| l.starts_with("Max open files"))
            .and_then(|l| l.split_whitespace().nth(3))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
    }
    if s.start_time_seconds == 0.0 {
        s.start_time_seconds = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
    }
    s
}

fn boot_time() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    stat.lines()
        .find_map(|l| l.strip_prefix("btime "))
        .and_then(|v| v.trim().parse().ok())
}

/// Writes the standard `process_*` families.
pub fn expose(e: &mut crate::Exposition, s: &ProcessStats) {
    e.counter(
        "process_cpu_seconds_total",
        "Total user and system CPU time spent in seconds.",
        s.cpu_seconds,
    );
    e.gauge(
        "process_resident_memory_bytes",
        "Resident memory size in bytes.",
        s.resident_bytes as f64,
    );
    e.gauge(
        "process_virtual_memory_bytes",
        "Virtual memory size in bytes.",
        s.virtual_bytes as f64,
    );
    e.gauge(
        "process_open_fds",
        "Number of open file descriptors.",
        s.open_fds as f64,
    );
    e.gauge(
        "process_max_fds",
        "Maximum number of open file descriptors.",
        s.max_fds as f64,
    );
    e.gauge(
        "process_threads",
        "Number of OS threads in the process.",
        s.threads as f64,
    );
    e.gauge(
        "process_start_time_seconds",
        "Start time of the process since unix epoch in seconds.",
        s.start_time_seconds,
    );
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_this_process() {
        let s = super::read();
        if cfg!(target_os = "linux") {
            assert!(s.resident_bytes > 0);
            assert!(s.open_fds > 0);
            assert!(s.threads >= 1);
            assert!(s.start_time_seconds > 1.0e9);
        }
    }
}
