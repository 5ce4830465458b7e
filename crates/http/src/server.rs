//! The accept loop: one task per connection, requests served one after another on it while
//! it persists (HTTP/1.1 keep-alive), at most `max_connections` connections at once (more
//! wait in the listen backlog), an idle connection closed after `idle_timeout`; after a
//! burst of connections ends, the freed memory is given back (`trim`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

use crate::conn::Connection;
use crate::request::Request;
use crate::trim::{Bursts, release_free_memory};

/// `hadoop.http.idle_timeout.ms`: how long a persistent connection may wait for its next
/// request.
pub const IDLE_TIMEOUT_KEY: &str = "hadoop.http.idle_timeout.ms";
/// Default of [`IDLE_TIMEOUT_KEY`] (Hadoop's 60 s).
pub const IDLE_TIMEOUT_DEFAULT: Duration = Duration::from_secs(60);
/// `rhdfs.http.max.connections` (rhdfs only): connections served at once per web port.
pub const MAX_CONNECTIONS_KEY: &str = "rhdfs.http.max.connections";
/// Default of [`MAX_CONNECTIONS_KEY`].
pub const MAX_CONNECTIONS_DEFAULT: usize = 8192;

/// How long, and how much, a connection closing with a request body unread still reads.
const LINGER: Duration = Duration::from_secs(1);
const LINGER_BYTES: u64 = 256 * 1024;

/// What serves the requests of one endpoint.
#[async_trait]
pub trait Handler: Send + Sync + 'static {
    /// Answers `req` on `conn` (the body, if any, is read from `conn`). An error ends the
    /// connection; it is logged at debug level.
    async fn handle(&self, req: Request, conn: &mut Connection) -> std::io::Result<()>;
}

/// Limits of a web port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServeConfig {
    /// Bounds each read of a request head or body.
    pub read_timeout: Duration,
    /// How long a persistent connection waits for its next request.
    pub idle_timeout: Duration,
    /// Connections served at once.
    pub max_connections: usize,
}

impl ServeConfig {
    /// `read_timeout` with the idle timeout and the connection cap from `conf`.
    pub fn from_conf(
        conf: &rhdfs_conf::Configuration,
        read_timeout: Duration,
    ) -> Result<Self, rhdfs_conf::ConfError> {
        Ok(ServeConfig {
            read_timeout,
            idle_timeout: conf.get_duration(
                IDLE_TIMEOUT_KEY,
                IDLE_TIMEOUT_DEFAULT,
                rhdfs_conf::TimeUnit::Milliseconds,
            )?,
            max_connections: usize::try_from(
                conf.get_u64(MAX_CONNECTIONS_KEY, MAX_CONNECTIONS_DEFAULT as u64)?,
            )
            .unwrap_or(usize::MAX)
            .max(1),
        })
    }
}

/// Accepts connections on `listener` until the returned task is aborted (defaults for the
/// idle timeout and the connection cap).
pub fn serve(
    listener: TcpListener,
    handler: Arc<dyn Handler>,
    read_timeout: Duration,
) -> JoinHandle<()> {
    serve_with(
        listener,
        handler,
        ServeConfig {
            read_timeout,
            idle_timeout: IDLE_TIMEOUT_DEFAULT,
            max_connections: MAX_CONNECTIONS_DEFAULT,
        },
    )
}

/// Accepts connections on `listener` until the returned task is aborted.
pub fn serve_with(
    listener: TcpListener,
    handler: Arc<dyn Handler>,
    cfg: ServeConfig,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let slots = Arc::new(Semaphore::new(cfg.max_connections.max(1)));
        let bursts = Arc::new(Bursts::default());
        loop {
            let Ok(slot) = slots.clone().acquire_owned().await else {
                return;
            };
            match listener.accept().await {
                Ok((stream, peer)) => {
                    let handler = handler.clone();
                    let bursts = bursts.clone();
                    bursts.opened();
                    tokio::spawn(async move {
                        if let Err(e) = one(stream, peer, handler, cfg).await {
                            tracing::debug!(%peer, "HTTP connection: {e}");
                        }
                        drop(slot);
                        if bursts.closed() {
                            tokio::task::spawn_blocking(release_free_memory);
                        }
                    });
                }
                Err(e) => {
                    tracing::warn!("HTTP accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    })
}

async fn one(
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    handler: Arc<dyn Handler>,
    cfg: ServeConfig,
) -> std::io::Result<()> {
    let _ = stream.set_nodelay(true);
    let mut conn = Connection::new(stream, peer, cfg.read_timeout);
    loop {
        match conn.read_request().await? {
            Some(req) => handler.handle(req, &mut conn).await?,
            None => return conn.respond(400, "text/plain", &[], b"bad request\n").await,
        }
        if !conn.reusable() {
            // A body left unread would turn the close into a reset that can destroy the
            // response on its way: read (and drop) a bounded amount first.
            let _ = tokio::time::timeout(LINGER, conn.drain_for_close(LINGER_BYTES)).await;
            return Ok(());
        }
        if !conn.wait_next(cfg.idle_timeout).await {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// Answers every request with its path; counts requests.
    struct Echo(AtomicUsize);

    #[async_trait]
    impl Handler for Echo {
        async fn handle(&self, req: Request, conn: &mut Connection) -> std::io::Result<()> {
            self.0.fetch_add(1, Ordering::SeqCst);
            if req.path == "/ignore-body" {
                return conn.respond(200, "text/plain", &[], b"ignored").await;
            }
            conn.discard_body(1 << 20).await?;
            conn.respond(200, "text/plain", &[], req.path.as_bytes())
                .await
        }
    }

    async fn start(cfg: ServeConfig) -> (String, Arc<Echo>, JoinHandle<()>) {
        let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = l.local_addr().expect("addr").to_string();
        let h = Arc::new(Echo(AtomicUsize::new(0)));
        let task = serve_with(l, h.clone(), cfg);
        (addr, h, task)
    }

    fn cfg() -> ServeConfig {
        ServeConfig {
            read_timeout: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(60),
            max_connections: 100,
        }
    }

    #[tokio::test]
    async fn many_requests_share_one_connection() -> std::io::Result<()> {
        let (addr, h, _t) = start(cfg()).await;
        let mut c = crate::client::Persistent::connect(&addr, Duration::from_secs(60)).await?;
        for i in 0..50 {
            let body = (i % 2 == 0).then_some(&b"payload"[..]);
            let r = c.request("PUT", &format!("/r{i}"), body).await?;
            assert_eq!(r.code, 200);
            assert_eq!(r.text(), format!("/r{i}"));
            assert_eq!(r.header("connection"), Some("keep-alive"));
        }
        assert_eq!(h.0.load(Ordering::SeqCst), 50);
        Ok(())
    }

    async fn read_until_closed(s: &mut tokio::net::TcpStream) -> std::io::Result<String> {
        let mut out = Vec::new();
        tokio::time::timeout(Duration::from_secs(60), s.read_to_end(&mut out))
            .await
            .map_err(|_| std::io::Error::other("connection not closed"))??;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    #[tokio::test]
    async fn close_http10_and_unread_bodies_end_the_connection() -> std::io::Result<()> {
        let (addr, _h, _t) = start(cfg()).await;
        for raw in [
            "GET /a HTTP/1.1\r\nConnection: close\r\n\r\n",
            "GET /a HTTP/1.0\r\n\r\n",
            "PUT /ignore-body HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc",
        ] {
            let mut s = tokio::net::TcpStream::connect(&addr).await?;
            s.write_all(raw.as_bytes()).await?;
            let got = read_until_closed(&mut s).await?;
            assert!(got.starts_with("HTTP/1.1 200 OK\r\n"), "{got}");
            assert!(got.contains("Connection: close\r\n"), "{got}");
        }
        // HTTP/1.0 asking for keep-alive gets it.
        let mut s = tokio::net::TcpStream::connect(&addr).await?;
        s.write_all(b"GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /b HTTP/1.0\r\n\r\n")
            .await?;
        let got = read_until_closed(&mut s).await?;
        assert_eq!(got.matches("HTTP/1.1 200 OK").count(), 2, "{got}");
        Ok(())
    }

    #[tokio::test]
    async fn idle_connections_are_closed() -> std::io::Result<()> {
        let (addr, _h, _t) = start(ServeConfig {
            idle_timeout: Duration::from_millis(100),
            ..cfg()
        })
        .await;
        let mut s = tokio::net::TcpStream::connect(&addr).await?;
        s.write_all(b"GET /a HTTP/1.1\r\n\r\n").await?;
        let got = read_until_closed(&mut s).await?;
        assert!(got.contains("Connection: keep-alive\r\n"), "{got}");
        Ok(())
    }

    #[tokio::test]
    async fn connections_beyond_the_cap_wait_for_a_slot() -> std::io::Result<()> {
        let (addr, h, _t) = start(ServeConfig {
            max_connections: 1,
            ..cfg()
        })
        .await;
        let mut first = crate::client::Persistent::connect(&addr, Duration::from_secs(60)).await?;
        assert_eq!(first.request("GET", "/one", None).await?.code, 200);
        let waiting = tokio::spawn({
            let addr = addr.clone();
            async move {
                crate::client::request(&addr, "GET", "/two", None, Duration::from_secs(60)).await
            }
        });
        // Not served while the first connection holds the only slot.
        let early = tokio::time::timeout(Duration::from_millis(200), async {
            while h.0.load(Ordering::SeqCst) < 2 {
                tokio::task::yield_now().await;
            }
        })
        .await;
        assert!(early.is_err(), "second connection served beyond the cap");
        drop(first);
        let r = waiting.await.map_err(std::io::Error::other)??;
        assert_eq!(r.code, 200);
        assert_eq!(r.text(), "/two");
        Ok(())
    }
}
