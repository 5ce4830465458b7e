//! The RPC server: configuration, listener and accept loop. Per-connection handling lives in
//! `connection.rs`.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};
use tracing::{debug, info, warn};

use crate::connection;
use crate::service::RpcService;

/// `ipc.maximum.data.length`: the largest request frame accepted.
pub const MAX_DATA_LENGTH_KEY: &str = "ipc.maximum.data.length";
/// Default of [`MAX_DATA_LENGTH_KEY`] (128 MiB).
pub const MAX_DATA_LENGTH_DEFAULT: u64 = 128 * 1024 * 1024;
/// `ipc.client.connection.maxidletime` (ms); like Hadoop, the server allows twice this.
pub const CONNECTION_MAX_IDLE_KEY: &str = "ipc.client.connection.maxidletime";
/// Default of [`CONNECTION_MAX_IDLE_KEY`] (10 s).
pub const CONNECTION_MAX_IDLE_DEFAULT: Duration = Duration::from_secs(10);
/// Default cap on concurrently running calls per connection.
pub const MAX_IN_FLIGHT_DEFAULT: usize = 256;

/// Server limits and timeouts.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Frames longer than this close the connection (`ipc.maximum.data.length`).
    pub max_data_length: usize,
    /// A connection with no incoming data and no call in flight for this long is closed.
    pub idle_timeout: Duration,
    /// Calls running at once per connection; further frames are not read until one finishes.
    pub max_in_flight_per_connection: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            max_data_length: MAX_DATA_LENGTH_DEFAULT as usize,
            idle_timeout: 2 * CONNECTION_MAX_IDLE_DEFAULT,
            max_in_flight_per_connection: MAX_IN_FLIGHT_DEFAULT,
        }
    }
}

impl ServerConfig {
    /// Reads `ipc.maximum.data.length` and `ipc.client.connection.maxidletime` (the server's
    /// idle timeout is twice the client's, as in Hadoop).
    pub fn from_conf(conf: &rhdfs_conf::Configuration) -> Result<Self, rhdfs_conf::ConfError> {
        let max = conf.get_size(MAX_DATA_LENGTH_KEY, MAX_DATA_LENGTH_DEFAULT)?;
        let idle = conf.get_duration(
            CONNECTION_MAX_IDLE_KEY,
            CONNECTION_MAX_IDLE_DEFAULT,
            rhdfs_conf::TimeUnit::Milliseconds,
        )?;
        Ok(Self {
            max_data_length: usize::try_from(max).unwrap_or(usize::MAX),
            idle_timeout: 2 * idle,
            ..Self::default()
        })
    }
}

/// A running RPC server. Dropping it stops it too, without waiting.
#[derive(Debug)]
pub struct RpcServer {
    local_addr: SocketAddr,
    shutdown: watch::Sender<bool>,
    accept_task: Option<JoinHandle<()>>,
}

impl RpcServer {
    /// Binds `addr` (port 0 picks a free port) and starts serving `svc`.
    pub async fn bind(
        addr: SocketAddr,
        svc: Arc<dyn RpcService>,
        cfg: ServerConfig,
    ) -> io::Result<Self> {
        let listener = TcpListener::bind(addr).await?;
        let local_addr = listener.local_addr()?;
        let (shutdown, shutdown_rx) = watch::channel(false);
        let cfg = Arc::new(cfg);
        info!("IPC server listening on {local_addr}");
        let accept_task = tokio::spawn(accept_loop(listener, svc, cfg, shutdown_rx));
        Ok(Self {
            local_addr,
            shutdown,
            accept_task: Some(accept_task),
        })
    }

    /// The address actually bound.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Stops accepting, closes every connection (abandoning calls still running) and waits
    /// for the connection tasks to end.
    pub async fn shutdown(mut self) {
        let _ = self.shutdown.send(true);
        if let Some(task) = self.accept_task.take()
            && let Err(e) = task.await
        {
            warn!("IPC server on {}: accept task failed: {e}", self.local_addr);
        }
        info!("IPC server on {} stopped", self.local_addr);
    }
}

impl Drop for RpcServer {
    fn drop(&mut self) {
        let _ = self.shutdown.send(true);
    }
}

async fn accept_loop(
    listener: TcpListener,
    svc: Arc<dyn RpcService>,
    cfg: Arc<ServerConfig>,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut conns = JoinSet::new();
    let conn_shutdown = shutdown.clone();
    loop {
        tokio::select! {
            () = shutdown_signalled(&mut shutdown) => break,
            res = listener.accept() => match res {
                Ok((stream, peer)) => {
                    debug!("IPC connection from {peer}");
                    conns.spawn(connection::serve(
                        stream,
                        peer,
                        Arc::clone(&svc),
                        Arc::clone(&cfg),
                        conn_shutdown.clone(),
                    ));
                }
                Err(e) => {
                    // Typically out of file descriptors: back off instead of spinning.
                    warn!("IPC server {:?}: accept failed: {e}", listener.local_addr().ok());
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            },
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
    drop(listener);
    // Every connection task watches the same signal and ends promptly.
    while conns.join_next().await.is_some() {}
}

/// Resolves once shutdown is requested or the server handle is gone.
pub(crate) async fn shutdown_signalled(rx: &mut watch::Receiver<bool>) {
    // Map the guard away at once: it must not be held across an await.
    let _ = rx.wait_for(|stop| *stop).await.map(|_| ());
}
