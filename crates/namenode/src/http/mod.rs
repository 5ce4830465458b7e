//! The NameNode's HTTP server on `dfs.namenode.http-address`: `/fsck` (Hadoop's fsck
//! servlet: query parameters in, report text out), `/jmx` (FSNamesystem-style beans as
//! JSON, `?qry=` to pick one) and `/metrics` (Prometheus text, lock hold statistics
//! included). A small HTTP/1.1 reader of our own: one request per connection.

pub mod client;
mod metrics;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rhdfs_conf::{Configuration, keys};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use crate::fsck::lost_found::LostFoundTarget;
use crate::fsck::{FsckOptions, FsckRequester, FsckSettings};
use crate::namesystem::Namesystem;

/// Longest request head accepted.
const MAX_HEAD: usize = 16 * 1024;
/// How long a client may take to send its request.
const READ_TIMEOUT: Duration = Duration::from_secs(30);
/// The user of requests that name none (Hadoop's web default user).
const STATIC_USER_KEY: &str = "hadoop.http.staticuser.user";
const STATIC_USER_DEFAULT: &str = "dr.who";

/// Why the HTTP server could not start.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("configuration: {0}")]
    Conf(#[from] rhdfs_conf::ConfError),
    #[error("cannot bind the HTTP server at {addr}: {source}")]
    Bind {
        addr: String,
        source: std::io::Error,
    },
}

struct Shared {
    fs: Arc<Namesystem>,
    fsck: FsckSettings,
    host_name: String,
    static_user: String,
    /// The NameNode's configuration (client settings for fsck -move).
    conf: Configuration,
    /// The RPC address, known once the RPC server is bound (fsck -move writes through it).
    rpc_addr: std::sync::OnceLock<SocketAddr>,
}

/// The running HTTP server; dropping it stops accepting connections.
pub struct HttpServer {
    addr: SocketAddr,
    task: JoinHandle<()>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServer")
            .field("addr", &self.addr)
            .finish()
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl HttpServer {
    /// Binds `dfs.namenode.http-address` and serves until dropped.
    pub async fn start(conf: &Configuration, fs: Arc<Namesystem>) -> Result<Self, HttpError> {
        let (host, port) = rhdfs_conf::addr::namenode_http_address(conf)?;
        let bind_host = conf
            .get_trimmed("dfs.namenode.http-bind-host")
            .map(str::to_string)
            .unwrap_or(host);
        let to_u16 = |v: u64| u16::try_from(v).unwrap_or(u16::MAX);
        let fsck = FsckSettings {
            default_replication: to_u16(
                conf.get_u64(keys::DFS_REPLICATION_KEY, keys::DFS_REPLICATION_DEFAULT)?,
            ),
            min_replication: to_u16(conf.get_u64(
                keys::DFS_NAMENODE_REPLICATION_MIN_KEY,
                keys::DFS_NAMENODE_REPLICATION_MIN_DEFAULT,
            )?)
            .max(1),
        };
        let listener = TcpListener::bind((bind_host.as_str(), port))
            .await
            .map_err(|source| HttpError::Bind {
                addr: format!("{bind_host}:{port}"),
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| HttpError::Bind {
            addr: format!("{bind_host}:{port}"),
            source,
        })?;
        let shared = Arc::new(Shared {
            fs,
            fsck,
            host_name: bind_host,
            static_user: conf.get_str(STATIC_USER_KEY, STATIC_USER_DEFAULT),
            conf: conf.clone(),
            rpc_addr: std::sync::OnceLock::new(),
        });
        let task = tokio::spawn(accept_loop(listener, shared.clone()));
        tracing::info!(http = %addr, "NameNode HTTP server started");
        Ok(HttpServer { addr, task, shared })
    }

    /// Starts the server, or logs why it could not and returns None (the NameNode runs
    /// without its HTTP endpoints rather than not at all).
    pub async fn start_or_warn(conf: &Configuration, fs: Arc<Namesystem>) -> Option<Self> {
        match Self::start(conf, fs).await {
            Ok(s) => Some(s),
            Err(e) => {
                tracing::warn!("NameNode HTTP server not started: {e}");
                None
            }
        }
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Tells the server the NameNode's RPC address (fsck -move acts as a client of it).
    pub fn set_rpc_addr(&self, addr: SocketAddr) {
        let _ = self.shared.rpc_addr.set(addr);
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => {
                let shared = shared.clone();
                tokio::spawn(async move {
                    if let Err(e) = serve(stream, peer, shared).await {
                        tracing::debug!(%peer, "HTTP connection: {e}");
                    }
                });
            }
            Err(e) => {
                tracing::warn!("HTTP accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// A parsed request line.
#[derive(Debug, PartialEq, Eq)]
struct Request {
    method: String,
    path: String,
    params: Vec<(String, String)>,
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// Decodes `%XX` escapes and `+` (form encoding, as Java's servlet parameters are).
pub fn decode_component(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => match (hex(b[i + 1]), hex(b[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push(h * 16 + l);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn parse_request(head: &str) -> Option<Request> {
    let line = head.lines().next()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let target = parts.next()?;
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let params = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode_component(k), decode_component(v))
        })
        .collect();
    Some(Request {
        method,
        path: decode_component(path),
        params,
    })
}

async fn read_head(stream: &mut TcpStream) -> std::io::Result<String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "connection closed before the request head ended",
            ));
        }
        buf.extend_from_slice(&chunk[..n]);
        if buf.windows(4).any(|w| w == b"\r\n\r\n") || buf.windows(2).any(|w| w == b"\n\n") {
            return Ok(String::from_utf8_lossy(&buf).into_owned());
        }
        if buf.len() > MAX_HEAD {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "request head too large",
            ));
        }
    }
}

async fn respond(
    stream: &mut TcpStream,
    code: u16,
    reason: &str,
    content_type: &str,
    body: &str,
) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.shutdown().await
}

async fn serve(
    mut stream: TcpStream,
    peer: SocketAddr,
    shared: Arc<Shared>,
) -> std::io::Result<()> {
    let head = tokio::time::timeout(READ_TIMEOUT, read_head(&mut stream))
        .await
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "request timed out"))??;
    let Some(req) = parse_request(&head) else {
        return respond(
            &mut stream,
            400,
            "Bad Request",
            "text/plain",
            "bad request\n",
        )
        .await;
    };
    if req.method != "GET" {
        return respond(
            &mut stream,
            405,
            "Method Not Allowed",
            "text/plain",
            "only GET is supported\n",
        )
        .await;
    }
    let params = || req.params.iter().map(|(k, v)| (k.as_str(), v.as_str()));
    match req.path.as_str() {
        "/fsck" => {
            let opts = FsckOptions::from_params(params());
            let user = opts
                .user
                .clone()
                .unwrap_or_else(|| shared.static_user.clone());
            let ip = peer.ip().to_string();
            let who = FsckRequester {
                caller: shared.fs.caller(&user, &ip).await,
                remote_ip: ip,
            };
            let lost_found = shared.rpc_addr.get().map(|a| LostFoundTarget {
                rpc_addr: *a,
                conf: shared.conf.clone(),
            });
            let body =
                crate::fsck::run(shared.fs.clone(), opts, shared.fsck, who, lost_found).await;
            respond(&mut stream, 200, "OK", "text/plain; charset=utf-8", &body).await
        }
        "/jmx" => {
            let qry = params()
                .find(|(k, _)| *k == "qry")
                .map(|(_, v)| v.to_string());
            let fs = shared.fs.clone();
            let host = shared.host_name.clone();
            let body =
                tokio::task::spawn_blocking(move || metrics::jmx(&fs, &host, qry.as_deref()))
                    .await
                    .map_err(|e| std::io::Error::other(format!("jmx task failed: {e}")))?;
            respond(
                &mut stream,
                200,
                "OK",
                "application/json; charset=utf-8",
                &body,
            )
            .await
        }
        "/metrics" | "/prom" => {
            let fs = shared.fs.clone();
            let body = tokio::task::spawn_blocking(move || metrics::prometheus(&fs))
                .await
                .map_err(|e| std::io::Error::other(format!("metrics task failed: {e}")))?;
            respond(
                &mut stream,
                200,
                "OK",
                "text/plain; version=0.0.4; charset=utf-8",
                &body,
            )
            .await
        }
        _ => respond(&mut stream, 404, "Not Found", "text/plain", "not found\n").await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_lines() {
        let r = parse_request("GET /fsck?ugi=bob&path=%2Fa+b&files=1 HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(
            r,
            Some(Request {
                method: "GET".into(),
                path: "/fsck".into(),
                params: vec![
                    ("ugi".into(), "bob".into()),
                    ("path".into(), "/a b".into()),
                    ("files".into(), "1".into()),
                ],
            })
        );
        assert_eq!(decode_component("100%"), "100%");
        assert_eq!(decode_component("%zz"), "%zz");
        assert!(parse_request("").is_none());
    }
}
