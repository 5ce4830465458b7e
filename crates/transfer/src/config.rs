//! Timeouts and sizes of the block-level helpers.

use std::future::Future;
use std::time::Duration;

use rhdfs_conf::{ConfError, Configuration, keys};

use crate::checksum::{ChecksumKind, DataChecksum};
use crate::error::{Result, TransferError};
use crate::packet::{DEFAULT_WRITE_PACKET_SIZE, MAX_PACKET_SIZE};

/// Settings for [`crate::BlockReader`], [`crate::BlockWriter`] and [`crate::transfer_replica`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransferConfig {
    /// Connect timeout for the helpers that open their own TCP connection.
    pub connect_timeout: Duration,
    /// Read timeout for every response, packet and ack (`dfs.client.socket-timeout`, 60 s).
    pub socket_timeout: Duration,
    /// Timeout for one write to the socket (`dfs.datanode.socket.write.timeout`, 480 s).
    pub write_timeout: Duration,
    /// Interval of heartbeat packets on an idle write pipeline (default: socket_timeout / 2).
    pub heartbeat_interval: Duration,
    /// Packet size used to size write packets (`dfs.client-write-packet-size`, 64 KiB).
    pub write_packet_size: usize,
    /// Largest packet accepted from the network (PLEN + HLEN, 16 MiB).
    pub max_packet_size: usize,
    /// Unacknowledged packets allowed in flight (`dfs.client.write.max-packets-in-flight`, 80).
    pub max_packets_in_flight: usize,
    /// Checksum requested for new blocks (`dfs.checksum.type`, `dfs.bytes-per-checksum`).
    pub checksum: DataChecksum,
}

const DEFAULT_SOCKET_TIMEOUT: Duration = Duration::from_secs(60);

impl Default for TransferConfig {
    fn default() -> Self {
        TransferConfig {
            connect_timeout: DEFAULT_SOCKET_TIMEOUT,
            socket_timeout: DEFAULT_SOCKET_TIMEOUT,
            write_timeout: Duration::from_secs(480),
            heartbeat_interval: DEFAULT_SOCKET_TIMEOUT / 2,
            write_packet_size: DEFAULT_WRITE_PACKET_SIZE,
            max_packet_size: MAX_PACKET_SIZE,
            max_packets_in_flight: 80,
            checksum: DataChecksum::default(),
        }
    }
}

impl TransferConfig {
    /// Reads the keys named on the fields from `conf`.
    pub fn from_conf(conf: &Configuration) -> Result<Self, ConfError> {
        let socket_timeout = conf.get_duration(
            keys::DFS_CLIENT_SOCKET_TIMEOUT_KEY,
            keys::DFS_CLIENT_SOCKET_TIMEOUT_DEFAULT,
            keys::DFS_CLIENT_SOCKET_TIMEOUT_UNIT,
        )?;
        let write_timeout = conf.get_duration(
            keys::DFS_DATANODE_SOCKET_WRITE_TIMEOUT_KEY,
            keys::DFS_DATANODE_SOCKET_WRITE_TIMEOUT_DEFAULT,
            keys::DFS_DATANODE_SOCKET_WRITE_TIMEOUT_UNIT,
        )?;
        let write_packet_size = conf.get_size(
            keys::DFS_CLIENT_WRITE_PACKET_SIZE_KEY,
            keys::DFS_CLIENT_WRITE_PACKET_SIZE_DEFAULT,
        )?;
        let in_flight = conf.get_u64(
            keys::DFS_CLIENT_WRITE_MAX_PACKETS_IN_FLIGHT_KEY,
            keys::DFS_CLIENT_WRITE_MAX_PACKETS_IN_FLIGHT_DEFAULT,
        )?;
        let bpc = conf.get_u64(
            keys::DFS_BYTES_PER_CHECKSUM_KEY,
            keys::DFS_BYTES_PER_CHECKSUM_DEFAULT,
        )?;
        let kind_name = conf.get_str(keys::DFS_CHECKSUM_TYPE_KEY, keys::DFS_CHECKSUM_TYPE_DEFAULT);
        let kind = match kind_name.to_ascii_uppercase().as_str() {
            "NULL" => ChecksumKind::Null,
            "CRC32" => ChecksumKind::Crc32,
            _ => ChecksumKind::Crc32c,
        };
        let bpc = u32::try_from(bpc).unwrap_or(512).max(1);
        Ok(TransferConfig {
            connect_timeout: socket_timeout,
            socket_timeout,
            write_timeout,
            heartbeat_interval: socket_timeout / 2,
            write_packet_size: usize::try_from(write_packet_size)
                .unwrap_or(DEFAULT_WRITE_PACKET_SIZE)
                .clamp(1, MAX_PACKET_SIZE),
            max_packet_size: MAX_PACKET_SIZE,
            max_packets_in_flight: usize::try_from(in_flight).unwrap_or(80).max(1),
            checksum: DataChecksum::new(kind, bpc),
        })
    }
}

/// Runs `fut` with a deadline; a zero duration means no deadline.
pub(crate) async fn with_timeout<T, F>(d: Duration, what: &str, fut: F) -> Result<T>
where
    F: Future<Output = Result<T>>,
{
    if d.is_zero() {
        return fut.await;
    }
    match tokio::time::timeout(d, fut).await {
        Ok(r) => r,
        Err(_) => Err(TransferError::Timeout(format!("{what} after {d:?}"))),
    }
}
