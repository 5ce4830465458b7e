//! The RPC server's configuration (limits, idle rules, clock, metrics) and its shutdown
//! signal: what both the accept loop (`server.rs`) and each connection (`connection.rs`)
//! read, kept apart so neither imports the other for it.

use std::sync::Arc;
use std::time::Duration;

use rhdfs_conf::clock::SharedClock;
use tokio::sync::watch;

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

/// Resolves once shutdown is requested or the server handle is gone.
pub(crate) async fn shutdown_signalled(rx: &mut watch::Receiver<bool>) {
    // Map the guard away at once: it must not be held across an await.
    let _ = rx.wait_for(|stop| *stop).await.map(|_| ());
}
