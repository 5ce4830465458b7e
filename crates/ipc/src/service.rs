//! The server-side service interface (`RpcService`, `CallContext`) and message helpers.

use std::net::{IpAddr, SocketAddr};

use async_trait::async_trait;
use bytes::Bytes;

use crate::caller::Forwarded;
use crate::error::RpcError;

/// Everything known about one incoming call besides its request message.
#[derive(Debug, Clone)]
pub struct CallContext {
    /// Effective user from the connection context (trusted under SIMPLE auth).
    pub user: String,
    /// `RequestHeaderProto.declaringClassProtocolName`, or the connection context's protocol.
    pub protocol: String,
    /// `RequestHeaderProto.methodName`, e.g. `getFileInfo`.
    pub method: String,
    /// The caller's 16-byte client id.
    pub client_id: Bytes,
    /// The call id (unique per client id, not per connection).
    pub call_id: i32,
    /// Retry count from the request header (-1 when absent).
    pub retry_count: i32,
    /// Remote address of the connection.
    pub peer: SocketAddr,
    /// Whom the call is made for, from the caller context of a call on an in-process
    /// connection (never from a network peer): see `caller`.
    pub forwarded: Option<Forwarded>,
}

impl CallContext {
    /// The caller's address: the forwarded client's, else the connection's peer.
    pub fn client_ip(&self) -> IpAddr {
        self.forwarded.as_ref().map_or(self.peer.ip(), |f| f.ip)
    }

    /// How the caller reached the server: the forwarded protocol, else `rpc`.
    pub fn via(&self) -> &str {
        self.forwarded.as_ref().map_or("rpc", |f| f.proto.as_str())
    }
}

/// A protocol implementation served by an [`crate::RpcServer`].
#[async_trait]
pub trait RpcService: Send + Sync + 'static {
    /// Handles one call. `body` is the request message (no length prefix); `Ok` is the encoded
    /// response message, `Err` becomes an ERROR response carrying the Java exception class.
    async fn call(&self, ctx: CallContext, body: Bytes) -> Result<Bytes, RpcError>;
}

/// Decodes a request message, mapping failure to a `java.io.IOException`.
pub fn decode_request<M: prost::Message + Default>(body: &Bytes) -> Result<M, RpcError> {
    M::decode(body.clone()).map_err(|e| {
        RpcError::io(format!(
            "Failed to parse request of type {}: {e}",
            short_type_name::<M>()
        ))
    })
}

/// Encodes a response message.
pub fn encode_response<M: prost::Message>(m: &M) -> Bytes {
    Bytes::from(m.encode_to_vec())
}

fn short_type_name<M>() -> &'static str {
    let full = std::any::type_name::<M>();
    full.rsplit("::").next().unwrap_or(full)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhdfs_proto::common::UserInformationProto;

    #[test]
    fn decode_and_encode() {
        let m = UserInformationProto {
            effective_user: Some("alice".into()),
            real_user: None,
        };
        let bytes = encode_response(&m);
        let back: UserInformationProto = decode_request(&bytes).unwrap();
        assert_eq!(back, m);
        let err =
            decode_request::<UserInformationProto>(&Bytes::from_static(&[0x0a, 0x05])).unwrap_err();
        assert_eq!(err.class_name, "java.io.IOException");
        assert!(
            err.message.contains("UserInformationProto"),
            "{}",
            err.message
        );
    }
}
