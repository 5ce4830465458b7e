//! Opening the client's TCP connection with Hadoop's connect retries, so that a client of a
//! NameNode that is restarting waits for it rather than failing at once: a connect refused
//! (or failing otherwise at the network) is tried again up to `retries` times, `interval`
//! apart (`ipc.client.connect.max.retries`, `ipc.client.connect.retry.interval`); a connect
//! that timed out, up to `retries_on_timeouts` times with no sleep, the timeout having been
//! the wait (`ipc.client.connect.max.retries.on.timeouts`). The two are counted apart, as
//! Hadoop's client counts them. A name that does not resolve is not retried. Each retry is
//! logged at WARN, so a command that waits says why. Only the TCP connect is retried: what
//! fails after it (the preamble, a call) is the caller's to handle.

use std::io;
use std::time::Duration;

use rhdfs_conf::{ConfError, Configuration, keys};
use tokio::net::TcpStream;
use tracing::warn;

/// How often a failed TCP connect is tried again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectRetry {
    /// Retries after a failure other than a timeout.
    pub retries: u32,
    /// Sleep before each of those.
    pub interval: Duration,
    /// Retries after a connect that timed out.
    pub retries_on_timeouts: u32,
}

impl ConnectRetry {
    /// One attempt, no retry: what a caller with its own retry loop wants (a DataNode's
    /// actor, a failover layer, an admin tool probing each NameNode).
    pub const NONE: ConnectRetry = ConnectRetry {
        retries: 0,
        interval: Duration::ZERO,
        retries_on_timeouts: 0,
    };

    /// `ipc.client.connect.max.retries` (10), `ipc.client.connect.retry.interval` (1 s) and
    /// `ipc.client.connect.max.retries.on.timeouts` (45).
    pub fn from_conf(conf: &Configuration) -> Result<Self, ConfError> {
        Self::from_keys(
            conf,
            (
                keys::IPC_CLIENT_CONNECT_MAX_RETRIES_KEY,
                keys::IPC_CLIENT_CONNECT_MAX_RETRIES_DEFAULT,
            ),
            (
                keys::IPC_CLIENT_CONNECT_MAX_RETRIES_ON_TIMEOUTS_KEY,
                keys::IPC_CLIENT_CONNECT_MAX_RETRIES_ON_TIMEOUTS_DEFAULT,
            ),
        )
    }

    /// The retry counts from the keys (and defaults) given — a caller with keys of its own
    /// for them, as a failover layer has — and the interval from
    /// `ipc.client.connect.retry.interval`. A count above `u32::MAX` is `u32::MAX`.
    pub fn from_keys(
        conf: &Configuration,
        retries: (&str, u64),
        retries_on_timeouts: (&str, u64),
    ) -> Result<Self, ConfError> {
        let count = |(key, default): (&str, u64)| -> Result<u32, ConfError> {
            Ok(u32::try_from(conf.get_u64(key, default)?).unwrap_or(u32::MAX))
        };
        Ok(ConnectRetry {
            retries: count(retries)?,
            interval: conf.get_duration(
                keys::IPC_CLIENT_CONNECT_RETRY_INTERVAL_KEY,
                keys::IPC_CLIENT_CONNECT_RETRY_INTERVAL_DEFAULT,
                keys::IPC_CLIENT_CONNECT_RETRY_INTERVAL_UNIT,
            )?,
            retries_on_timeouts: count(retries_on_timeouts)?,
        })
    }
}

/// Whether a failed connect may succeed if tried again: the server is not listening yet, or
/// the network is briefly in the way. Anything else (a name that does not resolve, a bad
/// address) fails the same way every time.
fn retriable(e: &io::Error) -> bool {
    use io::ErrorKind::*;
    matches!(
        e.kind(),
        ConnectionRefused
            | ConnectionReset
            | ConnectionAborted
            | HostUnreachable
            | NetworkUnreachable
            | AddrNotAvailable
            | TimedOut
            | Interrupted
    )
}

/// Connects to `addr`, each attempt limited to `timeout`, retried as `retry` says.
pub(super) async fn connect_tcp(
    addr: &str,
    timeout: Duration,
    retry: &ConnectRetry,
) -> io::Result<TcpStream> {
    let (mut failures, mut timeouts) = (0u32, 0u32);
    loop {
        match tokio::time::timeout(timeout, TcpStream::connect(addr)).await {
            Ok(Ok(stream)) => return Ok(stream),
            Ok(Err(e)) => {
                if !retriable(&e) || failures >= retry.retries {
                    return Err(e);
                }
                warn!(
                    "Retrying connect to server: {addr}. Already tried {failures} time(s); retry \
                     policy is RetryUpToMaximumCountWithFixedSleep(maxRetries={}, sleepTime={} \
                     MILLISECONDS) ({e})",
                    retry.retries,
                    retry.interval.as_millis()
                );
                failures += 1;
                tokio::time::sleep(retry.interval).await;
            }
            Err(_) => {
                if timeouts >= retry.retries_on_timeouts {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("connect to {addr} timed out after {timeout:?}"),
                    ));
                }
                warn!(
                    "Retrying connect to server: {addr}. Already tried {timeouts} time(s); \
                     maxRetries={} (connect timed out after {timeout:?})",
                    retry.retries_on_timeouts
                );
                timeouts += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tracing::Subscriber;
    use tracing_subscriber::layer::{Context, SubscriberExt};
    use tracing_subscriber::{Layer, Registry};

    use super::*;

    /// Counts the retry warnings logged.
    struct Retries(Arc<AtomicUsize>);

    impl<S: Subscriber> Layer<S> for Retries {
        fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
            if *event.metadata().level() == tracing::Level::WARN {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
    }

    /// An address nothing listens on (a port the OS handed out, then closed).
    fn closed_port() -> String {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = l.local_addr().expect("addr").to_string();
        drop(l);
        addr
    }

    fn counting() -> (Arc<AtomicUsize>, tracing::subscriber::DefaultGuard) {
        let n = Arc::new(AtomicUsize::new(0));
        let sub = Registry::default().with(Retries(Arc::clone(&n)));
        (n, tracing::subscriber::set_default(sub))
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_refused_connect_is_retried_as_often_as_configured() {
        let (retries, _guard) = counting();
        let addr = closed_port();
        let retry = ConnectRetry {
            retries: 3,
            interval: Duration::from_millis(1),
            retries_on_timeouts: 0,
        };
        let e = connect_tcp(&addr, Duration::from_secs(5), &retry)
            .await
            .expect_err("nothing listens");
        assert_eq!(e.kind(), io::ErrorKind::ConnectionRefused);
        assert_eq!(retries.load(Ordering::SeqCst), 3);
        // No retry configured: one attempt, nothing logged.
        let e = connect_tcp(&addr, Duration::from_secs(5), &ConnectRetry::NONE)
            .await
            .expect_err("nothing listens");
        assert_eq!(e.kind(), io::ErrorKind::ConnectionRefused);
        assert_eq!(retries.load(Ordering::SeqCst), 3);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_server_that_starts_listening_during_the_retries_is_reached() {
        let (retries, _guard) = counting();
        let addr = closed_port();
        let retry = ConnectRetry {
            retries: 10_000,
            interval: Duration::from_millis(2),
            retries_on_timeouts: 0,
        };
        let connecting = {
            let addr = addr.clone();
            tokio::spawn(async move { connect_tcp(&addr, Duration::from_secs(5), &retry).await })
        };
        // The client has been refused at least once before the server listens.
        while retries.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let listener = tokio::net::TcpListener::bind(&addr).await.expect("bind");
        let stream = connecting.await.expect("task").expect("connected");
        let (_accepted, peer) = listener.accept().await.expect("accept");
        assert_eq!(stream.local_addr().expect("local"), peer);
        assert!(retries.load(Ordering::SeqCst) >= 1);
    }

    #[test]
    fn hadoop_keys_and_defaults() {
        let mut conf = Configuration::new();
        assert_eq!(
            ConnectRetry::from_conf(&conf).unwrap(),
            ConnectRetry {
                retries: 10,
                interval: Duration::from_secs(1),
                retries_on_timeouts: 45,
            }
        );
        conf.set("ipc.client.connect.max.retries", "2");
        conf.set("ipc.client.connect.retry.interval", "250");
        conf.set("ipc.client.connect.max.retries.on.timeouts", "0");
        assert_eq!(
            ConnectRetry::from_conf(&conf).unwrap(),
            ConnectRetry {
                retries: 2,
                interval: Duration::from_millis(250),
                retries_on_timeouts: 0,
            }
        );
    }
}
