//! The NameNode's HTTP server on `dfs.namenode.http-address`: `/fsck` (Hadoop's fsck
//! servlet: query parameters in, report text out), `/jmx` (Hadoop's NameNode beans as
//! JMXJsonServlet renders them, `?qry=` and `?get=`), `/metrics` (Prometheus text) and
//! `/webhdfs/v1` (WebHDFS, `rhdfs-webhdfs`; redirects to the DataNodes for data). Built
//! on `rhdfs-http`.

pub use rhdfs_http::client;
mod figures;
pub mod image_transfer;
mod index;
mod jmx;
mod prom;
mod ui;
mod webhdfs;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rhdfs_conf::{Configuration, keys};
use rhdfs_http::{Connection, Request};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::fsck::lost_found::LostFoundTarget;
use crate::fsck::{FsckOptions, FsckRequester, FsckSettings};
use crate::namesystem::Namesystem;

/// How long a client may take to send its request.
const READ_TIMEOUT: Duration = Duration::from_secs(30);

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
    /// The RPC server's counters, known once it is bound.
    rpc_metrics: std::sync::OnceLock<Arc<rhdfs_ipc::RpcMetrics>>,
    started_ms: u64,
    txid_at_start: u64,
    webhdfs: rhdfs_webhdfs::NameNodeWebHdfs,
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
        let web = rhdfs_webhdfs::WebSettings::from_conf(conf)?;
        let static_user = web.static_user.clone();
        let webhdfs = rhdfs_webhdfs::NameNodeWebHdfs::new(
            conf,
            Arc::new(webhdfs::LiveDatanodes::new(fs.clone())),
            web,
        );
        let started_ms = fs.clock().now_millis();
        let txid_at_start = fs.durable().map_or(0, |d| d.log().last_txid());
        let shared = Arc::new(Shared {
            fs,
            rpc_metrics: std::sync::OnceLock::new(),
            started_ms,
            txid_at_start,
            fsck,
            host_name: bind_host,
            static_user,
            conf: conf.clone(),
            rpc_addr: std::sync::OnceLock::new(),
            webhdfs,
        });
        let serve_cfg = rhdfs_http::ServeConfig::from_conf(conf, READ_TIMEOUT)?;
        let task = rhdfs_http::serve_with(listener, shared.clone(), serve_cfg);
        tracing::info!(http = %addr, "NameNode HTTP server started");
        Ok(HttpServer { addr, task, shared })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Tells the server the NameNode's RPC address (fsck -move and WebHDFS act as clients
    /// of it; WebHDFS redirects name it to the DataNodes).
    pub fn set_rpc_addr(&self, addr: SocketAddr) {
        let _ = self.shared.rpc_addr.set(addr);
        self.shared.webhdfs_rpc_addr(addr);
    }

    /// WebHDFS reaches the RPC server through `nn`, in-process, so each call names its HTTP
    /// client (audit `ip=` and `proto=webhdfs`). Set before [`HttpServer::set_rpc`]: WebHDFS
    /// answers nothing until the address is known, so no client connects over TCP first.
    pub fn set_rpc_connector(&self, nn: rhdfs_ipc::LocalConnector) {
        self.shared.webhdfs.set_rpc_connector(nn);
    }

    /// [`HttpServer::set_rpc_addr`], and the RPC server's counters for `/jmx` and `/metrics`.
    pub fn set_rpc(&self, addr: SocketAddr, metrics: Arc<rhdfs_ipc::RpcMetrics>) {
        let _ = self.shared.rpc_metrics.set(metrics);
        self.set_rpc_addr(addr);
    }
}

impl Shared {
    fn webhdfs_rpc_addr(&self, addr: SocketAddr) {
        self.webhdfs
            .set_rpc_addr(webhdfs::advertised_rpc_addr(&self.conf, addr));
    }

    fn facts(&self) -> figures::Facts {
        figures::Facts {
            host: self.host_name.clone(),
            rpc: self
                .rpc_addr
                .get()
                .copied()
                .zip(self.rpc_metrics.get().cloned()),
            started_ms: self.started_ms,
            txid_at_start: self.txid_at_start,
        }
    }
}

#[async_trait::async_trait]
impl rhdfs_http::Handler for Shared {
    async fn handle(&self, req: Request, conn: &mut Connection) -> std::io::Result<()> {
        if req.path == rhdfs_webhdfs::PREFIX || req.path.starts_with("/webhdfs/v1/") {
            return self.webhdfs.handle(&req, conn).await;
        }
        if req.method != "GET" {
            return conn
                .respond(405, "text/plain", &[], b"only GET is supported\n")
                .await;
        }
        self.get(req, conn).await
    }
}

impl Shared {
    async fn get(&self, req: Request, conn: &mut Connection) -> std::io::Result<()> {
        let peer = conn.peer();
        let params = || req.params.iter().map(|(k, v)| (k.as_str(), v.as_str()));
        match req.path.as_str() {
            "/fsck" => {
                let opts = FsckOptions::from_params(params());
                let user = opts
                    .user
                    .clone()
                    .unwrap_or_else(|| self.static_user.clone());
                let ip = peer.ip().to_string();
                let who = FsckRequester {
                    caller: self.fs.caller(&user, &ip).await,
                    remote_ip: ip,
                };
                let lost_found = self.rpc_addr.get().map(|a| LostFoundTarget {
                    rpc_addr: *a,
                    conf: self.conf.clone(),
                });
                let body =
                    crate::fsck::run(self.fs.clone(), opts, self.fsck, who, lost_found).await;
                conn.respond(200, "text/plain; charset=utf-8", &[], body.as_bytes())
                    .await
            }
            "/jmx" => {
                let (qry, get) = (
                    req.param("qry").map(str::to_string),
                    req.param("get").map(str::to_string),
                );
                let (fs, facts) = (self.fs.clone(), self.facts());
                let a = tokio::task::spawn_blocking(move || {
                    let f = figures::Figures::gather(&fs, &facts);
                    rhdfs_metrics::jmx::answer(&jmx::beans(&f), qry.as_deref(), get.as_deref())
                })
                .await
                .map_err(|e| std::io::Error::other(format!("jmx task failed: {e}")))?;
                conn.respond(
                    a.status,
                    rhdfs_metrics::jmx::CONTENT_TYPE,
                    &rhdfs_metrics::jmx::HEADERS,
                    a.body.as_bytes(),
                )
                .await
            }
            "/" | "/index.html" => {
                let fs = self.fs.clone();
                let host = self.host_name.clone();
                let body = tokio::task::spawn_blocking(move || index::page(&fs, &host))
                    .await
                    .map_err(|e| std::io::Error::other(format!("index task failed: {e}")))?;
                conn.respond(200, "text/html; charset=utf-8", &[], body.as_bytes())
                    .await
            }
            "/metrics" | "/prom" => {
                let (fs, facts) = (self.fs.clone(), self.facts());
                let body = tokio::task::spawn_blocking(move || {
                    prom::exposition(&figures::Figures::gather(&fs, &facts))
                })
                .await
                .map_err(|e| std::io::Error::other(format!("metrics task failed: {e}")))?;
                conn.respond(
                    200,
                    "text/plain; version=0.0.4; charset=utf-8",
                    &[],
                    body.as_bytes(),
                )
                .await
            }
            "/imagetransfer" => image_transfer::serve(&self.fs, &req, conn).await,
            "/logLevel" => ui::log_level::serve(&req, conn).await,
            p if ui::PAGES.contains(&p) => {
                let page = ui::Ui {
                    fs: &self.fs,
                    host: &self.host_name,
                    conf: &self.conf,
                    static_user: &self.static_user,
                };
                ui::serve(page, &req, conn).await
            }
            p if p == "/logs" || p.starts_with("/logs/") => {
                let dir = self
                    .conf
                    .get_trimmed(keys::HADOOP_LOG_DIR_KEY)
                    .filter(|d| !d.is_empty())
                    .map(std::path::PathBuf::from);
                rhdfs_http::logs::serve(dir, p, conn).await
            }
            _ => conn.respond(404, "text/plain", &[], b"not found\n").await,
        }
    }
}
