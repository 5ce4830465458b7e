//! Hadoop IPC (RPC) over TCP: the server that stock Hadoop clients talk to, and a client.
//!
//! Wire format (see `shared/design/PROTOCOL.md` §1): a 7-byte preamble, then frames of a
//! 4-byte big-endian length followed by varint-delimited protobuf messages.

mod client;
mod connection;
mod dispatch;
mod error;
pub mod frame;
pub mod headers;
mod server;
mod service;

pub use client::{CONNECT_TIMEOUT_DEFAULT, ClientConfig, MAX_RESPONSE_LENGTH_DEFAULT, RpcClient};
pub use dispatch::{Dispatcher, ProtocolRouter};
pub use error::{
    IO_EXCEPTION, IPC_EXCEPTION, IpcError, NO_SUCH_METHOD_EXCEPTION, NO_SUCH_PROTOCOL_EXCEPTION,
    RpcError, VERSION_MISMATCH_EXCEPTION,
};
pub use server::{
    CONNECTION_MAX_IDLE_DEFAULT, CONNECTION_MAX_IDLE_KEY, MAX_DATA_LENGTH_DEFAULT,
    MAX_DATA_LENGTH_KEY, MAX_IN_FLIGHT_DEFAULT, RpcServer, ServerConfig,
};
pub use service::{CallContext, RpcService, decode_request, encode_response};
