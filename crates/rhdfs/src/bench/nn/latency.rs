//! Latency figures for `rhdfs bench nn`: percentiles of recorded call times, and the
//! loopback TCP round trip measured in the same run, which every latency is compared with
//! (an RPC can never beat one round trip; what it costs above that is the NameNode's).

use std::time::{Duration, Instant};

use anyhow::Context;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

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
/// as Hadoop IPC sets TCP_NODELAY), `pings` times after a short warm-up.
pub async fn loopback_round_trip(pings: usize) -> anyhow::Result<Duration> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let echo = tokio::spawn(async move {
        let (mut s, _) = listener.accept().await?;
        s.set_nodelay(true)?;
        let mut b = [0u8; 1];
        loop {
            if s.read(&mut b).await? == 0 {
                return Ok::<_, std::io::Error>(());
            }
            s.write_all(&b).await?;
        }
    });
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
    echo.await.context("echo task")??;
    Ok(p50_p99(&mut samples).0)
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

    #[tokio::test]
    async fn loopback_round_trip_is_measured() -> anyhow::Result<()> {
        let rtt = loopback_round_trip(50).await?;
        assert!(rtt > Duration::ZERO);
        Ok(())
    }
}
