//! Latency figures for `rhdfs bench nn`: percentiles of recorded call times, the loopback
//! TCP round trip measured in the same run, which every latency is compared with (an RPC
//! can never beat one round trip; what it costs above that is the NameNode's), and the
//! cost of one fdatasync in the name directory's file system, which a mutation pays once
//! (a single client's mutation cannot beat one round trip plus one fdatasync).

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The `p`-th percentile (0–100) of `sorted` by the nearest-rank rule; zero when empty.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// p50 and p99 of `samples` (sorted in place).
pub fn p50_p99(samples: &mut [Duration]) -> (Duration, Duration) {
    samples.sort_unstable();
    (percentile(samples, 50.0), percentile(samples, 99.0))
}

/// The median round trip of a one-byte ping-pong over a loopback TCP connection (Nagle off,
/// as Hadoop IPC sets TCP_NODELAY), `pings` times after a short warm-up. The echoing end is
/// a thread of its own blocked in `read`, as a server in another process is: each round trip
/// wakes it and then the caller, the two wake-ups every RPC pays. (An echo task on the
/// caller's own runtime could run on the caller's thread with no wake-up at all, and which
/// way it went changed the figure between runs by up to 3×.)
pub async fn loopback_round_trip(pings: usize) -> anyhow::Result<Duration> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let echo = std::thread::Builder::new()
        .name("bench-echo".into())
        .spawn(move || -> std::io::Result<()> {
            use std::io::{Read, Write};
            let (mut s, _) = listener.accept()?;
            s.set_nodelay(true)?;
            let mut b = [0u8; 1];
            loop {
                if s.read(&mut b)? == 0 {
                    return Ok(());
                }
                s.write_all(&b)?;
            }
        })?;
    let mut c = TcpStream::connect(addr).await?;
    c.set_nodelay(true)?;
    let mut b = [0u8; 1];
    let mut samples = Vec::with_capacity(pings);
    for i in 0..pings + pings / 10 {
        let t = Instant::now();
        c.write_all(&[1]).await?;
        c.read_exact(&mut b).await?;
        if i >= pings / 10 {
            samples.push(t.elapsed());
        }
    }
    drop(c);
    tokio::task::spawn_blocking(move || echo.join())
        .await
        .context("echo join")?
        .map_err(|_| anyhow::anyhow!("echo thread panicked"))?
        .context("echo thread")?;
    Ok(p50_p99(&mut samples).0)
}

/// The median cost of one small write plus fdatasync in `dir`, `syncs` times after a short
/// warm-up, as the edit log pays it: a record of `record` bytes appended into space reserved
/// with zeros beforehand (so the sync writes data only). The file is removed afterwards.
/// Blocking.
pub fn fdatasync_cost(dir: &Path, syncs: usize, record: usize) -> anyhow::Result<Duration> {
    use std::os::unix::fs::FileExt;
    let path = dir.join(format!(".bench-fdatasync-{}", std::process::id()));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .read(true)
        .write(true)
        .open(&path)
        .with_context(|| format!("creating {}", path.display()))?;
    let result = (|| {
        let rounds = syncs + syncs / 10;
        let span = (rounds * record) as u64;
        file.write_all_at(&vec![0u8; span as usize], 0)?;
        file.sync_all()?;
        let data = vec![0x5au8; record];
        let mut samples = Vec::with_capacity(syncs);
        for i in 0..rounds {
            let t = Instant::now();
            file.write_all_at(&data, (i * record) as u64)?;
            file.sync_data()?;
            if i >= syncs / 10 {
                samples.push(t.elapsed());
            }
        }
        Ok::<_, std::io::Error>(p50_p99(&mut samples).0)
    })();
    drop(file);
    let _ = std::fs::remove_file(&path);
    result.with_context(|| format!("timing fdatasync in {}", dir.display()))
}

/// `d` as a multiple of the round trip, for the table.
pub fn times(d: Duration, rtt: Duration) -> f64 {
    if rtt.is_zero() {
        return f64::INFINITY;
    }
    d.as_secs_f64() / rtt.as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: &[u64]) -> Vec<Duration> {
        v.iter().map(|m| Duration::from_millis(*m)).collect()
    }

    #[test]
    fn nearest_rank_percentiles() {
        let mut v = ms(&[5, 1, 4, 2, 3, 6, 7, 8, 9, 10]);
        let (p50, p99) = p50_p99(&mut v);
        assert_eq!(p50, Duration::from_millis(5));
        assert_eq!(p99, Duration::from_millis(10));
        assert_eq!(percentile(&[], 50.0), Duration::ZERO);
        assert_eq!(percentile(&ms(&[7]), 0.0), Duration::from_millis(7));
        assert_eq!(percentile(&ms(&[7]), 100.0), Duration::from_millis(7));
    }

    #[test]
    fn multiples_of_the_round_trip() {
        let rtt = Duration::from_micros(50);
        assert!((times(Duration::from_micros(125), rtt) - 2.5).abs() < 1e-9);
        assert!(times(Duration::from_micros(1), Duration::ZERO).is_infinite());
    }

    #[test]
    fn fdatasync_cost_is_measured() -> anyhow::Result<()> {
        let dir = tempfile::tempdir()?;
        let cost = fdatasync_cost(dir.path(), 20, 100)?;
        assert!(cost > Duration::ZERO);
        // The probe file is gone.
        assert_eq!(std::fs::read_dir(dir.path())?.count(), 0);
        Ok(())
    }

    #[tokio::test]
    async fn loopback_round_trip_is_measured() -> anyhow::Result<()> {
        let rtt = loopback_round_trip(50).await?;
        assert!(rtt > Duration::ZERO);
        Ok(())
    }
}
