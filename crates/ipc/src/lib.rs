//! Hadoop IPC (RPC) over TCP: the server that stock Hadoop clients talk to, and a client.
//!
//! Wire format (see `shared/design/PROTOCOL.md` §1): a 7-byte preamble, then frames of a
//! 4-byte big-endian length followed by varint-delimited protobuf messages.
//!
//! Server side: implement [`RpcService`] (one per protocol, combined on one port by a
//! [`ProtocolRouter`]), then [`RpcServer::bind`]. Each call's handler
//! is polled at once by its connection's task, and one that has to wait goes on as its own
//! task, so the calls of one connection run concurrently; a handler returns the encoded response or an [`RpcError`] naming the Java
//! exception class the client will see.
//!
//! Client side: [`RpcClient::connect`] then [`RpcClient::call`] from any number of tasks.
//! A connection that dies fails its pending calls; the next call reconnects.
//!
//! [`frame`] and [`headers`] expose the byte-level pieces for tests and tools.

pub mod alignment;
pub mod caller;
mod client;
mod config;
mod connection;
mod error;
pub mod exceptions;
pub mod frame;
pub mod headers;
mod idle;
mod local;
pub mod metrics;
mod outbox;
mod router;
mod server;
mod service;

pub use client::{
    CLIENT_MAX_IDLE_DEFAULT, CONNECT_TIMEOUT_DEFAULT, CONNECT_TIMEOUT_KEY, ClientConfig,
    ConnectRetry, MAX_RESPONSE_LENGTH_DEFAULT, MAX_RESPONSE_LENGTH_KEY, RPC_TIMEOUT_DEFAULT,
    RPC_TIMEOUT_KEY, RpcClient, decode_response,
};
pub use config::{
    CONNECTION_MAX_IDLE_DEFAULT, CONNECTION_MAX_IDLE_KEY, MAX_DATA_LENGTH_DEFAULT,
    MAX_DATA_LENGTH_KEY, MAX_IN_FLIGHT_DEFAULT, ServerConfig,
};
pub use error::{
    IO_EXCEPTION, IPC_EXCEPTION, IpcError, NO_SUCH_METHOD_EXCEPTION, NO_SUCH_PROTOCOL_EXCEPTION,
    RpcError, VERSION_MISMATCH_EXCEPTION,
};
pub use idle::{IdleRules, IdleView};
pub use local::LocalConnector;
pub use metrics::{MethodSnapshot, RpcMetrics, RpcSnapshot};
pub use router::ProtocolRouter;
pub use server::RpcServer;
pub use service::{CallContext, RpcService, decode_request, encode_response};
