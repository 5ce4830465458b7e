//! The RPC server: listener and accept loop. Its configuration is in `config.rs`,
//! per-connection handling in `connection.rs`.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpSocket};
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};
use tracing::{debug, info, warn};

use crate::config::ServerConfig;
pub(crate) use crate::config::shutdown_signalled;
use crate::connection;
use crate::idle::{Connections, IdleView};
use crate::local::LocalConnector;
use crate::metrics::RpcMetrics;
use crate::service::RpcService;

/// A running RPC server. Dropping it stops it too, without waiting.
#[derive(Debug)]
pub struct RpcServer {
    local_addr: SocketAddr,
    shutdown: watch::Sender<bool>,
    accept_task: Option<JoinHandle<()>>,
    conns: Arc<Connections>,
    metrics: Arc<RpcMetrics>,
    local: LocalConnector,
}

impl RpcServer {
    /// Binds `addr` (port 0 picks a free port) and starts serving `svc`.
    pub async fn bind(
        addr: SocketAddr,
        svc: Arc<dyn RpcService>,
        cfg: ServerConfig,
    ) -> io::Result<Self> {
        let listener = listen(addr, cfg.listen_backlog)?;
        let local_addr = listener.local_addr()?;
        let (shutdown, shutdown_rx) = watch::channel(false);
        let conns = Arc::new(Connections::new(cfg.idle, Arc::clone(&cfg.clock)));
        let metrics = Arc::clone(&cfg.metrics);
        let cfg = Arc::new(cfg);
        let local = LocalConnector::new(
            local_addr,
            Arc::clone(&svc),
            Arc::clone(&cfg),
            Arc::clone(&conns),
            shutdown_rx.clone(),
        );
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
            local,
        })
    }

    /// Opens in-process connections to this server (see `local`): for a gateway in this
    /// process whose calls may name whom they are made for.
    pub fn local_connector(&self) -> LocalConnector {
        self.local.clone()
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

/// A listening socket on `addr` with an accept backlog of `backlog` (address reuse on, as
/// `TcpListener::bind` sets it, so a restarted server binds its port at once).
fn listen(addr: SocketAddr, backlog: u32) -> io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(backlog)
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
                    let open = conns_registry.open();
                    if cfg.max_connections > 0 && open >= cfg.max_connections {
                        // Hadoop's rule: past the cap a new connection is closed unanswered
                        // (the client retries or fails over) and counted as dropped.
                        cfg.metrics.dropped();
                        info!(
                            "IPC connection from {peer} closed: {open} connections open, \
                             ipc.server.max.connections is {}",
                            cfg.max_connections
                        );
                        drop(stream);
                        continue;
                    }
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
