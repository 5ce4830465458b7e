//! The NameNode's own CPU time in `rhdfs bench nn`, apart from the clients'.
//!
//! In-process, the NameNode runs on a tokio runtime of its own ([`NameNodeRuntime`]): its
//! workers and blocking threads are named [`RUNTIME_THREAD`], so every task the NameNode
//! spawns (the accept loop, each connection and call, the monitors) and every blocking job
//! runs on threads the bench can tell from the clients'. Its CPU time is the sum of the
//! per-thread CPU clocks (`/proc/self/task/<tid>/schedstat`, nanoseconds) of those threads and
//! of the NameNode's own named threads ([`NAMENODE_THREADS`]: the edit log's sync thread, the
//! audit writer), plus the time of such threads that have exited (each runtime thread adds
//! its own clock as it stops). Against `-fs` the NameNode's process id (`-nn-pid`) gives its
//! user + system time from `/proc/<pid>/stat` (clock ticks).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The name of the NameNode runtime's threads (workers and blocking pool).
pub const RUNTIME_THREAD: &str = "nn-rt";

/// Threads the NameNode's code starts by name, besides its runtime's.
pub const NAMENODE_THREADS: [&str; 2] = ["edit-log-sync", "audit-log"];

/// Clock ticks per second of `/proc/<pid>/stat` (USER_HZ, 100 on every Linux ABI).
const TICKS_PER_SECOND: f64 = 100.0;

/// A tokio runtime for an in-process NameNode, counting its threads' CPU time.
pub struct NameNodeRuntime {
    rt: Option<tokio::runtime::Runtime>,
    /// CPU nanoseconds of the runtime's threads that have stopped.
    exited_ns: Arc<AtomicU64>,
}

impl NameNodeRuntime {
    /// A multi-threaded runtime with as many workers as the machine has CPUs (as
    /// `rhdfs namenode` has). Blocking threads are kept a long time once started, so few
    /// stop during a run.
    pub fn new() -> std::io::Result<NameNodeRuntime> {
        let exited_ns = Arc::new(AtomicU64::new(0));
        let on_stop = Arc::clone(&exited_ns);
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name(RUNTIME_THREAD)
            .thread_keep_alive(Duration::from_secs(3600))
            .on_thread_stop(move || {
                if let Some(ns) = own_thread_ns() {
                    on_stop.fetch_add(ns, Ordering::Relaxed);
                }
            })
            .build()?;
        Ok(NameNodeRuntime {
            rt: Some(rt),
            exited_ns,
        })
    }

    /// The runtime's handle, to run the NameNode's start and stop on.
    pub fn handle(&self) -> Option<&tokio::runtime::Handle> {
        self.rt.as_ref().map(|rt| rt.handle())
    }

    /// CPU time the NameNode's threads have used so far.
    pub fn cpu(&self) -> Duration {
        let live =
            named_threads_ns(|name| name == RUNTIME_THREAD || NAMENODE_THREADS.contains(&name));
        Duration::from_nanos(live + self.exited_ns.load(Ordering::Relaxed))
    }
}

impl Drop for NameNodeRuntime {
    fn drop(&mut self) {
        // Dropping a runtime inside another's async context would panic; its threads are
        // left to finish on their own.
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

/// Where the NameNode's CPU time is read from for one run.
pub enum NameNodeCpu {
    /// The in-process NameNode's runtime.
    InProcess(Arc<NameNodeRuntime>),
    /// A NameNode process on this machine (`-nn-pid`).
    Process(u32),
    /// Unknown (`-fs` without `-nn-pid`).
    Unknown,
}

impl NameNodeCpu {
    /// CPU time used so far, None when unknown or unreadable.
    pub fn read(&self) -> Option<Duration> {
        match self {
            NameNodeCpu::InProcess(rt) => Some(rt.cpu()),
            NameNodeCpu::Process(pid) => process_cpu(*pid),
            NameNodeCpu::Unknown => None,
        }
    }
}

/// The first field of a `schedstat` file: nanoseconds the thread ran on a CPU.
fn schedstat_ns(text: &str) -> Option<u64> {
    text.split_whitespace().next()?.parse().ok()
}

/// The calling thread's CPU nanoseconds.
fn own_thread_ns() -> Option<u64> {
    schedstat_ns(&std::fs::read_to_string("/proc/thread-self/schedstat").ok()?)
}

/// CPU nanoseconds of this process's live threads whose name `wanted` accepts.
fn named_threads_ns(wanted: impl Fn(&str) -> bool) -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    let mut total = 0;
    for task in tasks.flatten() {
        let dir = task.path();
        let Ok(comm) = std::fs::read_to_string(dir.join("comm")) else {
            continue;
        };
        if !wanted(comm.trim_end()) {
            continue;
        }
        // A thread that exits between the two reads counts with the exited ones.
        if let Some(ns) = std::fs::read_to_string(dir.join("schedstat"))
            .ok()
            .and_then(|s| schedstat_ns(&s))
        {
            total += ns;
        }
    }
    total
}

/// CPU time of this whole process so far (every thread, clients and NameNode), in
/// nanoseconds from the kernel's process CPU clock: the clock-tick counts of `/proc/self/stat`
/// are too coarse for a row of a few milliseconds, and were seen 10 ms behind the threads'
/// own clocks.
pub fn own_process_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec the call writes into; no other memory is touched.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    if r != 0 {
        return Duration::ZERO;
    }
    let secs = u64::try_from(ts.tv_sec).unwrap_or(0);
    let nanos = u32::try_from(ts.tv_nsec).unwrap_or(0);
    Duration::new(secs, nanos)
}

/// User + system time of process `pid` from `/proc/<pid>/stat`; None when it is gone.
fn process_cpu(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat_cpu(&stat)
}

/// utime + stime (fields 14 and 15) of a `/proc/<pid>/stat` line.
fn stat_cpu(stat: &str) -> Option<Duration> {
    // The command name is parenthesised and may hold spaces; fields count from state (3).
    let (_, rest) = stat.rsplit_once(')')?;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| f.get(n - 3).and_then(|v| v.parse::<u64>().ok());
    let ticks = field(14)? + field(15)?;
    Some(Duration::from_secs_f64(ticks as f64 / TICKS_PER_SECOND))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_utime_and_stime() {
        let line = "42 (rhdfs (x) y) S 1 42 42 0 -1 4194560 100 0 0 0 250 150 0 0 20 0 9 0";
        assert_eq!(stat_cpu(line), Some(Duration::from_secs(4)));
        assert_eq!(stat_cpu("42 (cut"), None);
        assert_eq!(schedstat_ns("123456 789 10\n"), Some(123_456));
        assert_eq!(schedstat_ns(""), None);
    }

    /// Spins until the calling thread has used `cpu` more CPU time (its own clock, not
    /// the wall clock).
    fn spin_for_cpu(cpu: Duration) -> u64 {
        let Some(start) = own_thread_ns() else {
            return 0;
        };
        let mut x = 0u64;
        while own_thread_ns().is_some_and(|now| now - start < cpu.as_nanos() as u64) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        x
    }

    #[test]
    fn counts_the_runtimes_threads_only() -> anyhow::Result<()> {
        let rt = Arc::new(NameNodeRuntime::new()?);
        let handle = rt
            .handle()
            .cloned()
            .ok_or_else(|| anyhow::anyhow!("no runtime"))?;
        let nn = NameNodeCpu::InProcess(Arc::clone(&rt));
        let before = nn.read().unwrap_or_default();
        // Work on the NameNode runtime's blocking pool counts.
        let spun = handle.block_on(async {
            tokio::task::spawn_blocking(|| spin_for_cpu(Duration::from_millis(40))).await
        })?;
        assert!(spun > 0);
        let after = nn.read().unwrap_or_default();
        assert!(
            after - before >= Duration::from_millis(40),
            "{after:?} after, {before:?} before"
        );
        // This thread's work does not (the runtime's idle threads use far less).
        assert!(spin_for_cpu(Duration::from_millis(200)) > 0);
        let later = nn.read().unwrap_or_default();
        assert!(
            later - after < Duration::from_millis(200),
            "{later:?} after {after:?}"
        );
        assert!(NameNodeCpu::Unknown.read().is_none());
        let me = NameNodeCpu::Process(std::process::id());
        assert!(me.read().is_some());
        Ok(())
    }
}
