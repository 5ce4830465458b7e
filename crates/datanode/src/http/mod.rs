//! The DataNode's HTTP server on `dfs.datanode.http.address` (9864): `/webhdfs/v1` (the data
//! half of WebHDFS the NameNode redirects OPEN, CREATE, APPEND and GETFILECHECKSUM to), `/`
//! (an overview: volumes, block pool, NameNode connection, transfers), `/jmx` (Hadoop's
//! DataNode beans, `qry`/`get`), `/metrics` (Prometheus), `/conf` (the configuration,
//! secrets redacted) and `/logs/` (the log directory, `rhdfs_http::logs`).

mod beans;
mod conf;
mod page;
mod volume_beans;

use std::net::SocketAddr;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rhdfs_conf::Configuration;
use rhdfs_http::{Connection, Request};
use rhdfs_ipc::RpcMetrics;
use rhdfs_webhdfs::DataNodeWebHdfs;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::actor::{ActorView, Identity};
use crate::dataset::Dataset;
use crate::metrics::{Activity, DataNodeMetrics};

/// The domain and service of the DataNode's Hadoop beans.
const SERVICE: &str = "Hadoop:service=DataNode";

/// How long a client may take for each read of its request head or body.
const READ_TIMEOUT: Duration = Duration::from_secs(60);

/// What the status endpoints report, known once the DataNode has started.
#[derive(Debug, Clone)]
pub struct Status {
    pub identity: Identity,
    pub dataset: Arc<Dataset>,
    pub activity: Arc<Activity>,
    /// Data transfer connections being served.
    pub xceivers: Arc<AtomicUsize>,
    pub rpc: Arc<RpcMetrics>,
    pub actor: ActorView,
    /// The NameNode's RPC address (host:port).
    pub namenode: String,
    /// Wall-clock start, ms since the epoch.
    pub started_ms: u64,
    pub slow: Option<Arc<DataNodeMetrics>>,
}

impl Status {
    /// The NameNode actor's state as Hadoop's BPServiceActorInfo names it.
    pub(crate) fn actor_state(&self) -> &'static str {
        if self.actor.is_registered() {
            "RUNNING"
        } else {
            "CONNECTING"
        }
    }
}

/// Wall-clock ms now.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Whole seconds from `at_ms` to `now_ms`, as BPServiceActorInfo's `LastHeartbeat` and
/// `LastBlockReport` give them; -1 when it never happened (`at_ms` 0).
pub(crate) fn secs_since(at_ms: u64, now_ms: u64) -> i64 {
    if at_ms == 0 {
        -1
    } else {
        (now_ms.saturating_sub(at_ms) / 1000) as i64
    }
}

struct Endpoints {
    webhdfs: DataNodeWebHdfs,
    conf: Configuration,
    status: OnceLock<Status>,
}

#[async_trait::async_trait]
impl rhdfs_http::Handler for Endpoints {
    async fn handle(&self, req: Request, conn: &mut Connection) -> std::io::Result<()> {
        if req.path == rhdfs_webhdfs::PREFIX || req.path.starts_with("/webhdfs/v1/") {
            return self.webhdfs.handle(&req, conn).await;
        }
        if req.method != "GET" {
            conn.skip_body(64 * 1024).await?;
            return conn
                .respond(405, "text/plain", &[], b"only GET is supported\n")
                .await;
        }
        match req.path.as_str() {
            "/conf" => {
                let (ct, body) = conf::render(&self.conf, req.param("format"));
                conn.respond(200, ct, &[], body.as_bytes()).await
            }
            "/" | "/index.html" | "/jmx" | "/metrics" | "/prom" => {
                let Some(st) = self.status.get().cloned() else {
                    return conn
                        .respond(503, "text/plain", &[], b"the DataNode is starting\n")
                        .await;
                };
                let path = req.path.clone();
                let (qry, get) = (
                    req.param("qry").map(str::to_string),
                    req.param("get").map(str::to_string),
                );
                let (code, ct, hdrs, body) =
                    tokio::task::spawn_blocking(move || match path.as_str() {
                        "/jmx" => {
                            let a = rhdfs_metrics::jmx::answer(
                                &beans::beans(&st),
                                qry.as_deref(),
                                get.as_deref(),
                            );
                            (a.status, rhdfs_metrics::jmx::CONTENT_TYPE, true, a.body)
                        }
                        "/metrics" | "/prom" => (
                            200,
                            "text/plain; version=0.0.4; charset=utf-8",
                            false,
                            beans::prometheus(&st),
                        ),
                        _ => (200, "text/html; charset=utf-8", false, page::overview(&st)),
                    })
                    .await
                    .map_err(|e| std::io::Error::other(format!("status task failed: {e}")))?;
                let headers: &[(&str, &str)] = if hdrs {
                    &rhdfs_metrics::jmx::HEADERS
                } else {
                    &[]
                };
                conn.respond(code, ct, headers, body.as_bytes()).await
            }
            p if p == "/logs" || p.starts_with("/logs/") => {
                let dir = self
                    .conf
                    .get_trimmed(rhdfs_conf::keys::HADOOP_LOG_DIR_KEY)
                    .filter(|d| !d.is_empty())
                    .map(std::path::PathBuf::from);
                rhdfs_http::logs::serve(dir, p, conn).await
            }
            _ => conn.respond(404, "text/plain", &[], b"not found\n").await,
        }
    }
}

/// The running server; dropping it stops accepting connections.
pub struct HttpServer {
    addr: SocketAddr,
    task: JoinHandle<()>,
    endpoints: Arc<Endpoints>,
}

impl std::fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl HttpServer {
    /// Serves on `bind`; `conf` configures the clients WebHDFS requests act through and is
    /// what `/conf` shows.
    pub async fn start(conf: &Configuration, bind: SocketAddr) -> std::io::Result<Self> {
        let listener = TcpListener::bind(bind).await?;
        let addr = listener.local_addr()?;
        let web = rhdfs_webhdfs::WebSettings::from_conf(conf).map_err(std::io::Error::other)?;
        let endpoints = Arc::new(Endpoints {
            webhdfs: DataNodeWebHdfs::new(conf, web),
            conf: conf.clone(),
            status: OnceLock::new(),
        });
        let serve_cfg = rhdfs_http::ServeConfig::from_conf(conf, READ_TIMEOUT)
            .map_err(std::io::Error::other)?;
        let task = rhdfs_http::serve_with(listener, endpoints.clone(), serve_cfg);
        Ok(HttpServer {
            addr,
            task,
            endpoints,
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Hands the status endpoints what they report (once, when the DataNode has started;
    /// until then they answer 503).
    pub fn set_status(&self, status: Status) {
        let _ = self.endpoints.status.set(status);
    }
}
