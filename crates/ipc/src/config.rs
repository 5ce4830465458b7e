//! The RPC server's configuration (limits, idle rules, clock, metrics) and its shutdown
//! signal: what both the accept loop (`server.rs`) and each connection (`connection.rs`)
//! read, kept apart so neither imports the other for it.

use std::sync::Arc;
use std::time::Duration;

use rhdfs_conf::clock::SharedClock;
use rhdfs_conf::keys;
use tokio::sync::watch;

use crate::alignment::AlignmentContext;
use crate::idle::IdleRules;
use crate::metrics::RpcMetrics;

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
    /// exports them; [`crate::RpcServer::metrics`] returns it).
    pub metrics: Arc<RpcMetrics>,
    /// Accept backlog of the listening socket (`ipc.server.listen.queue.size`).
    pub listen_backlog: u32,
    /// Connections open at once; a connection accepted beyond it is closed at once and
    /// counted as dropped (`ipc.server.max.connections`, 0 = no limit).
    pub max_connections: usize,
    /// TCP_NODELAY on accepted connections (`ipc.server.tcpnodelay`).
    pub tcp_nodelay: bool,
    /// The state id every response header carries (`crate::alignment`); None: no state id.
    pub alignment: Option<Arc<dyn AlignmentContext>>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            max_data_length: MAX_DATA_LENGTH_DEFAULT as usize,
            idle: IdleRules::default(),
            max_in_flight_per_connection: MAX_IN_FLIGHT_DEFAULT,
            clock: rhdfs_conf::clock::system_clock(),
            metrics: RpcMetrics::new(),
            listen_backlog: keys::IPC_SERVER_LISTEN_QUEUE_SIZE_DEFAULT as u32,
            max_connections: keys::IPC_SERVER_MAX_CONNECTIONS_DEFAULT as usize,
            tcp_nodelay: keys::IPC_SERVER_TCPNODELAY_DEFAULT,
            alignment: None,
        }
    }
}

impl ServerConfig {
    /// Reads `ipc.maximum.data.length`, the idle-connection keys
    /// (`ipc.client.connection.maxidletime`, `ipc.client.idlethreshold`,
    /// `ipc.client.kill.max`, `ipc.client.connection.idle-scan-interval.ms`) and the socket
    /// keys (`ipc.server.listen.queue.size`, `ipc.server.max.connections`,
    /// `ipc.server.tcpnodelay`).
    pub fn from_conf(conf: &rhdfs_conf::Configuration) -> Result<Self, rhdfs_conf::ConfError> {
        let max = conf.get_size(MAX_DATA_LENGTH_KEY, MAX_DATA_LENGTH_DEFAULT)?;
        let backlog = conf.get_u64(
            keys::IPC_SERVER_LISTEN_QUEUE_SIZE_KEY,
            keys::IPC_SERVER_LISTEN_QUEUE_SIZE_DEFAULT,
        )?;
        let max_connections = conf.get_u64(
            keys::IPC_SERVER_MAX_CONNECTIONS_KEY,
            keys::IPC_SERVER_MAX_CONNECTIONS_DEFAULT,
        )?;
        Ok(Self {
            max_data_length: usize::try_from(max).unwrap_or(usize::MAX),
            idle: IdleRules::from_conf(conf)?,
            // The kernel caps the backlog at net.core.somaxconn anyway.
            listen_backlog: u32::try_from(backlog.max(1)).unwrap_or(u32::MAX),
            max_connections: usize::try_from(max_connections).unwrap_or(usize::MAX),
            tcp_nodelay: conf.get_bool(
                keys::IPC_SERVER_TCPNODELAY_KEY,
                keys::IPC_SERVER_TCPNODELAY_DEFAULT,
            )?,
            ..Self::default()
        })
    }

    /// The same configuration, its responses carrying `alignment`'s state id.
    pub fn with_alignment(mut self, alignment: Arc<dyn AlignmentContext>) -> Self {
        self.alignment = Some(alignment);
        self
    }

    /// The same configuration on another clock.
    pub fn with_clock(mut self, clock: SharedClock) -> Self {
        self.clock = clock;
        self
    }
}

/// Resolves once shutdown is requested or the server handle is gone.
pub(crate) async fn shutdown_signalled(rx: &mut watch::Receiver<bool>) {
    // Map the guard away at once: it must not be held across an await.
    let _ = rx.wait_for(|stop| *stop).await.map(|_| ());
}
