//! The DataNode's HTTP server on `dfs.datanode.http.address` (9864): `/webhdfs/v1`, the data
//! half of WebHDFS that the NameNode redirects OPEN, CREATE, APPEND and GETFILECHECKSUM to.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rhdfs_conf::Configuration;
use rhdfs_http::{Connection, Request};
use rhdfs_webhdfs::DataNodeWebHdfs;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// How long a client may take for each read of its request head or body.
const READ_TIMEOUT: Duration = Duration::from_secs(60);

struct Endpoints {
    webhdfs: DataNodeWebHdfs,
}

#[async_trait::async_trait]
impl rhdfs_http::Handler for Endpoints {
    async fn handle(&self, req: Request, conn: &mut Connection) -> std::io::Result<()> {
        if req.path == rhdfs_webhdfs::PREFIX || req.path.starts_with("/webhdfs/v1/") {
            return self.webhdfs.handle(&req, conn).await;
        }
        conn.respond(404, "text/plain", &[], b"not found\n").await
    }
}

/// The running server; dropping it stops accepting connections.
#[derive(Debug)]
pub struct HttpServer {
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl HttpServer {
    /// Serves on `bind`; `conf` configures the clients WebHDFS requests act through.
    pub async fn start(conf: &Configuration, bind: SocketAddr) -> std::io::Result<Self> {
        let listener = TcpListener::bind(bind).await?;
        let addr = listener.local_addr()?;
        let web = rhdfs_webhdfs::WebSettings::from_conf(conf).map_err(std::io::Error::other)?;
        let endpoints = Endpoints {
            webhdfs: DataNodeWebHdfs::new(conf, web),
        };
        let task = rhdfs_http::serve(listener, Arc::new(endpoints), READ_TIMEOUT);
        Ok(HttpServer { addr, task })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }
}
