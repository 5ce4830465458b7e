//! rhdfs-transfer: Hadoop DataTransferProtocol codec and block-level client helpers.
//!
//! - [`checksum`]: CRC32/CRC32C chunk checksums and the meta file header.
//! - [`md5crc`]: block MD5-of-CRCs (BLOCK_CHECKSUM) and the client-side file checksum.
//! - [`op`]: op framing and varint-delimited messages.
//! - [`packet`]: data packets (PLEN/HLEN + PacketHeaderProto + checksums + data).
//! - [`ack`]: pipeline acks and BlockOpResponseProto helpers.

pub mod checksum;
pub mod error;
pub mod md5crc;
pub mod op;

pub use checksum::{ChecksumKind, DataChecksum, MetaHeader};
pub use error::{Result, TransferError};
pub use md5crc::FileChecksum;
pub use op::{Op, read_delimited, read_op, write_delimited, write_op};
pub mod packet;
pub use packet::{Packet, PacketHeader, read_packet, read_packet_raw, write_packet};
pub mod ack;
pub use ack::PipelineAck;
pub mod config;
pub mod headers;
pub use config::TransferConfig;
pub mod reader;
pub use reader::{BlockReader, ReadBlockParams, read_block};
pub mod write_params;
pub mod writer;
pub use write_params::WriteBlockParams;
pub use writer::BlockWriter;
pub mod transfer;
pub use transfer::{transfer_replica, transfer_replica_to};
