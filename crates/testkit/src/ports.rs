//! TCP ports for test daemons that must come back on the same port after a restart, and
//! for addresses where nothing may listen.
//!
//! A port taken from `bind(127.0.0.1:0)` lies in the kernel's ephemeral range. While the
//! daemon that owned it is down, any socket on the machine can be handed the same port —
//! another test's DataNode binding port 0, an outgoing connection's source port — and the
//! restarted daemon then cannot bind, or a client reaches some other server. The ports here
//! come from just below the ephemeral range, which neither `bind(0)` nor `connect()` hands
//! out, and each is held by an exclusive lock on a file under the temporary directory for as
//! long as its [`ReservedPort`] lives, so two test processes never take the same one. The
//! lock is the kernel's (flock), so a test process that dies releases its ports with it.

use std::fs::File;
use std::net::TcpListener;
use std::path::PathBuf;

use rand::Rng;

/// How many ports below the ephemeral range are used.
const SPAN: u16 = 12_000;

/// One port, ours until dropped. Nothing listens on it unless the test starts a daemon there.
#[derive(Debug)]
pub struct ReservedPort {
    port: u16,
    _lock: File,
}

impl ReservedPort {
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `127.0.0.1:<port>`.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

/// The first port of the kernel's ephemeral range (Linux's default when it cannot be read).
fn ephemeral_low() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(32_768)
}

fn lock_dir() -> std::io::Result<PathBuf> {
    let dir = std::env::temp_dir().join("rhdfs-test-ports");
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// A free port below the ephemeral range, locked against every other test process and
/// checked bindable on 127.0.0.1.
pub fn reserve() -> std::io::Result<ReservedPort> {
    let high = ephemeral_low();
    let low = high.saturating_sub(SPAN).max(1_024);
    if low >= high {
        return Err(std::io::Error::other(format!(
            "no ports below the ephemeral range (starts at {high})"
        )));
    }
    let span = high - low;
    let dir = lock_dir()?;
    let start = rand::rng().random_range(0..span);
    for i in 0..span {
        let port = low + (start + i) % span;
        let lock = File::create(dir.join(port.to_string()))?;
        if lock.try_lock().is_err() {
            continue; // another test process holds it
        }
        // Something outside the tests may listen there; then try the next one.
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return Ok(ReservedPort { port, _lock: lock });
        }
    }
    Err(std::io::Error::other(format!(
        "every port in {low}..{high} is taken"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_ports_differ_lie_below_the_ephemeral_range_and_bind() {
        let a = reserve().unwrap();
        let b = reserve().unwrap();
        assert_ne!(a.port(), b.port());
        assert!(a.port() < ephemeral_low() && b.port() < ephemeral_low());
        // Reserved, not bound: a daemon can listen there.
        let l = TcpListener::bind(a.addr()).unwrap();
        assert_eq!(l.local_addr().unwrap().port(), a.port());
    }

    #[test]
    fn a_held_port_is_not_handed_out_again() {
        let held: Vec<ReservedPort> = (0..50).map(|_| reserve().unwrap()).collect();
        let mut ports: Vec<u16> = held.iter().map(ReservedPort::port).collect();
        ports.sort_unstable();
        ports.dedup();
        assert_eq!(ports.len(), held.len());
    }
}
