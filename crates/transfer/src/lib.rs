//! rhdfs-transfer: Hadoop DataTransferProtocol codec and block-level client helpers.
//!
//! Codec:
//! - [`checksum`]: CRC32/CRC32C chunk checksums and the 7-byte meta file header.
//! - [`md5crc`]: block MD5-of-CRCs (BLOCK_CHECKSUM) and the client-side file checksum.
//! - [`op`]: op framing (version 28 + op byte + delimited proto) and delimited messages.
//! - [`packet`]: data packets (PLEN/HLEN + PacketHeaderProto + checksums + data).
//! - [`ack`]: pipeline acks and `BlockOpResponseProto` / `ClientReadStatusProto` helpers.
//! - [`headers`], [`block_ops`]: request builders and the smaller ops.
//!
//! Block-level helpers (all timeouts from [`TransferConfig`]):
//! - [`BlockReader`]: client side of READ_BLOCK.
//! - [`BlockWriter`]: client side of WRITE_BLOCK as a pipeline head.
//! - [`transfer_replica`]: DataNode-to-DataNode WRITE_BLOCK (TRANSFER_RBW / TRANSFER_FINALIZED).
//! - [`short_circuit`]: REQUEST_SHORT_CIRCUIT_FDS and descriptor passing over a domain socket.

pub mod ack;
pub mod block_ops;
pub mod checksum;
pub mod config;
mod crc32c_lanes;
pub mod error;
pub mod headers;
pub mod md5crc;
pub mod op;
pub mod packet;
mod packet_rx;
pub use packet_rx::{PIPELINE_READ_SIZE, PacketRx};
pub mod reader;
pub mod shm;
pub mod short_circuit;
pub mod slabs;
pub mod transfer;
pub mod write_params;
pub mod writer;
mod writer_tasks;

pub use ack::PipelineAck;
pub use block_ops::BlockChecksum;
pub use checksum::{ChecksumKind, DataChecksum, MetaHeader};
pub use config::TransferConfig;
pub use error::{Result, TransferError};
pub use md5crc::FileChecksum;
pub use op::{Op, read_delimited, read_op, write_delimited, write_op};
pub use packet::{
    Packet, PacketHeader, read_packet, read_packet_into, read_packet_raw, write_packet,
};
pub use reader::{BlockReader, ReadBlockParams, read_block};
pub use transfer::{transfer_replica, transfer_replica_to};
pub use write_params::WriteBlockParams;
pub use writer::BlockWriter;
