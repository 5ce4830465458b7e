//! The RPC server: configuration, listener and accept loop. Per-connection handling lives in
//! `connection.rs`.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rhdfs_conf::clock::SharedClock;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};
use tracing::{debug, info, warn};

use crate::connection;
use crate::idle::{Connections, IdleRules, IdleView};
use crate::metrics::RpcMetrics;
use crate::service::RpcService;

/// `ipc.maximum.data.length`: the largest request frame accepted.
pub const MAX_DATA_LENGTH_KEY: &str = "ipc.maximum.data.length";
/// Default of [`MAX_DATA_LENGTH_KEY`] (128 MiB).
pub const MAX_DATA_LENGTH_DEFAULT: u64 = 128 * 1024 * 1024;
/// `ipc.client.connection.maxidletime` (ms); the server may close a connection idle for
/// twice this, and only while `ipc.client.idlethreshold` connections are open.
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
    /// When idle connections are closed (Hadoop's ConnectionManager rules).
    pub idle: IdleRules,
    /// Calls running at once per connection; further frames are not read until one finishes.
    pub max_in_flight_per_connection: usize,
    /// Monotonic time for the idle rules.
    pub clock: SharedClock,
    /// Where the server counts its calls, bytes and connections (share it with whatever
    /// exports them; [`RpcServer::metrics`] returns it).
    pub metrics: Arc<RpcMetrics>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            max_data_length: MAX_DATA_LENGTH_DEFAULT as usize,
            idle: IdleRules::default(),
            max_in_flight_per_connection: MAX_IN_FLIGHT_DEFAULT,
            clock: rhdfs_conf::clock::system_clock(),
            metrics: RpcMetrics::new(),
        }
    }
}

impl ServerConfig {
    /// Reads `ipc.maximum.data.length` and the idle-connection keys
    /// (`ipc.client.connection.maxidletime`, `ipc.client.idlethreshold`,
    /// `ipc.client.kill.max`, `ipc.client.connection.idle-scan-interval.ms`).
    pub fn from_conf(conf: &rhdfs_conf::Configuration) -> Result<Self, rhdfs_conf::ConfError> {
        let max = conf.get_size(MAX_DATA_LENGTH_KEY, MAX_DATA_LENGTH_DEFAULT)?;
        Ok(Self {
            max_data_length: usize::try_from(max).unwrap_or(usize::MAX),
            idle: IdleRules::from_conf(conf)?,
            ..Self::default()
        })
    }

    /// The same configuration on another clock.
    pub fn with_clock(mut self, clock: SharedClock) -> Self {
        self.clock = clock;
        self
    }
}

/// A running RPC server. Dropping it stops it too, without waiting.
#[derive(Debug)]
pub struct RpcServer {
    local_addr: SocketAddr,
    shutdown: watch::Sender<bool>,
    accept_task: Option<JoinHandle<()>>,
    conns: Arc<Connections>,
    metrics: Arc<RpcMetrics>,
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
        let conns = Arc::new(Connections::new(cfg.idle, Arc::clone(&cfg.clock)));
        let metrics = Arc::clone(&cfg.metrics);
        let cfg = Arc::new(cfg);
        info!("IPC server listening on {local_addr}");
        tokio::spawn(tracing::Instrument::in_current_span(idle_scan_loop(
            Arc::clone(&conns),
            shutdown_rx.clone(),
        )));
        let accept_task = tokio::spawn(tracing::Instrument::in_current_span(accept_loop(
            listener,
            svc,
            cfg,
            Arc::clone(&conns),
            shutdown_rx,
        )));
        Ok(Self {
            local_addr,
            shutdown,
            accept_task: Some(accept_task),
            conns,
            metrics,
        })
    }

    /// The address actually bound.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Connections open now (Hadoop's NumOpenConnections).
    pub fn open_connections(&self) -> usize {
        self.conns.open()
    }

    /// The server's call, byte and connection counters.
    pub fn metrics(&self) -> Arc<RpcMetrics> {
        Arc::clone(&self.metrics)
    }

    /// What the idle scan sees of each open connection, in accept order.
    pub fn connection_views(&self) -> Vec<IdleView> {
        self.conns.views()
    }

    /// Runs one idle scan now, as the server does every
    /// `ipc.client.connection.idle-scan-interval.ms`; returns how many connections it asked to
    /// close (each closes unless a request arrived meanwhile).
    pub fn close_idle_connections(&self) -> usize {
        self.conns.scan()
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

/// Scans for idle connections every `ipc.client.connection.idle-scan-interval.ms`.
async fn idle_scan_loop(conns: Arc<Connections>, mut shutdown: watch::Receiver<bool>) {
    let every = conns.rules().scan_interval.max(Duration::from_millis(1));
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = shutdown_signalled(&mut shutdown) => return,
            _ = tick.tick() => {
                let asked = conns.scan();
                if asked > 0 {
                    debug!(asked, open = conns.open(), "IPC idle scan");
                }
            }
        }
    }
}

async fn accept_loop(
    listener: TcpListener,
    svc: Arc<dyn RpcService>,
    cfg: Arc<ServerConfig>,
    conns_registry: Arc<Connections>,
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
                    conns.spawn(tracing::Instrument::in_current_span(connection::serve(
                        stream,
                        peer,
                        Arc::clone(&svc),
                        Arc::clone(&cfg),
                        conns_registry.register(),
                        conn_shutdown.clone(),
                    )));
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
