//! CPU time spent during a benchmark pass: the whole machine's busy time (`/proc/stat`: every
//! process and the kernel's softirq work, other work on the machine included), this process's
//! own (`/proc/self/stat`) and that of the local DataNode processes (found by their listening
//! transfer ports). All count in clock ticks (10 ms), so short passes read coarsely; the
//! per-GiB figures of the client and DataNodes are steadier than wall time on a machine other
//! work shares.

use std::collections::HashSet;

/// Clock ticks per second of `/proc/stat` (USER_HZ, 100 on every Linux ABI).
const TICKS_PER_SECOND: f64 = 100.0;

/// CPU counters at the start of a pass.
#[derive(Debug, Clone)]
pub(super) struct CpuMark {
    machine_busy: f64,
    process: f64,
    datanodes: f64,
    pids: Vec<u32>,
}

/// CPU seconds used since a [`CpuMark`].
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct CpuUsed {
    /// Busy time of all CPUs (not idle, not waiting for I/O).
    pub machine: f64,
    /// This process's user + system time.
    pub process: f64,
    /// The local DataNode processes' user + system time (0 when they run in this process).
    pub datanodes: f64,
}

impl CpuMark {
    /// Counters now; `pids` are the DataNode processes to count.
    pub(super) fn now(pids: &[u32]) -> CpuMark {
        CpuMark {
            machine_busy: machine_busy_seconds(),
            process: rhdfs_metrics::process::read().cpu_seconds,
            datanodes: processes_seconds(pids),
            pids: pids.to_vec(),
        }
    }

    pub(super) fn used(&self) -> CpuUsed {
        let datanodes = processes_seconds(&self.pids);
        CpuUsed {
            machine: (machine_busy_seconds() - self.machine_busy).max(0.0),
            process: (rhdfs_metrics::process::read().cpu_seconds - self.process).max(0.0),
            datanodes: (datanodes - self.datanodes).max(0.0),
        }
    }
}

/// User + system seconds of the processes `pids` together (0 for one that is gone).
pub(super) fn processes_seconds(pids: &[u32]) -> f64 {
    pids.iter().map(|p| process_seconds(*p)).sum()
}

/// User + system seconds of process `pid` (0 when it is gone).
fn process_seconds(pid: u32) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return 0.0;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| f.get(n - 3).and_then(|v| v.parse::<f64>().ok());
    (field(14).unwrap_or(0.0) + field(15).unwrap_or(0.0)) / TICKS_PER_SECOND
}

/// Other local processes listening on one of the TCP `ports` (the DataNodes' transfer ports):
/// the inodes of listening sockets from `/proc/net/tcp{,6}`, then the processes holding them.
pub(super) fn listeners(ports: &HashSet<u16>) -> Vec<u32> {
    let mut inodes = HashSet::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
            let f: Vec<&str> = line.split_whitespace().collect();
            let (Some(local), Some(st), Some(inode)) = (f.get(1), f.get(3), f.get(9)) else {
                continue;
            };
            let port = local
                .rsplit_once(':')
                .and_then(|(_, p)| u16::from_str_radix(p, 16).ok());
            if *st == "0A" && port.is_some_and(|p| ports.contains(&p)) {
                inodes.insert(format!("socket:[{inode}]"));
            }
        }
    }
    let me = std::process::id();
    let mut pids = Vec::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return pids;
    };
    for p in procs.flatten() {
        let Some(pid) = p.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(p.path().join("fd")) else {
            continue;
        };
        let holds = fds.flatten().any(|fd| {
            std::fs::read_link(fd.path())
                .is_ok_and(|l| l.to_str().is_some_and(|l| inodes.contains(l)))
        });
        if holds {
            pids.push(pid);
        }
    }
    pids
}

/// Seconds all CPUs spent busy since boot: the `cpu` line of `/proc/stat` without idle and
/// iowait (0 where there is no such file).
fn machine_busy_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/stat") else {
        return 0.0;
    };
    let Some(line) = stat.lines().find(|l| l.starts_with("cpu ")) else {
        return 0.0;
    };
    // user nice system idle iowait irq softirq steal (guest time is already in user).
    let f: Vec<f64> = line
        .split_whitespace()
        .skip(1)
        .take(8)
        .map(|v| v.parse().unwrap_or(0.0))
        .collect();
    let busy: f64 = f
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 3 && *i != 4)
        .map(|(_, v)| v)
        .sum();
    busy / TICKS_PER_SECOND
}
