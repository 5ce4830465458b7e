//! [`ProtocolRouter`]: one port serving several protocols (the NameNode's ClientProtocol and
//! DatanodeProtocol), each call routed by the protocol its connection context names.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;

use crate::error::RpcError;
use crate::service::{CallContext, RpcService};

/// Routes calls to a service by `CallContext.protocol`; a protocol without a route fails
/// with `RpcNoSuchProtocolException` ("Unknown protocol: P"), as Hadoop's server answers.
#[derive(Default, Clone)]
pub struct ProtocolRouter {
    routes: HashMap<String, Arc<dyn RpcService>>,
}

impl ProtocolRouter {
    /// A router with no routes.
    pub fn new() -> Self {
        Self::default()
    }

    /// Serves `protocol` (a Java interface name) with `service`.
    pub fn route(mut self, protocol: &str, service: Arc<dyn RpcService>) -> Self {
        self.routes.insert(protocol.to_owned(), service);
        self
    }
}

impl std::fmt::Debug for ProtocolRouter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut protocols: Vec<&str> = self.routes.keys().map(String::as_str).collect();
        protocols.sort_unstable();
        f.debug_struct("ProtocolRouter")
            .field("protocols", &protocols)
            .finish()
    }
}

#[async_trait]
impl RpcService for ProtocolRouter {
    async fn call(&self, ctx: CallContext, body: Bytes) -> Result<Bytes, RpcError> {
        match self.routes.get(&ctx.protocol) {
            Some(service) => service.call(ctx, body).await,
            None => Err(RpcError::no_such_protocol(&ctx.protocol)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(protocol: &str) -> CallContext {
        CallContext {
            user: "u".into(),
            protocol: protocol.into(),
            method: "m".into(),
            client_id: Bytes::from_static(&[0; 16]),
            call_id: 0,
            retry_count: 0,
            peer: "127.0.0.1:1".parse().expect("literal address"),
            forwarded: None,
        }
    }

    /// Answers with the protocol name it was called for.
    struct Named;

    #[async_trait]
    impl RpcService for Named {
        async fn call(&self, ctx: CallContext, _body: Bytes) -> Result<Bytes, RpcError> {
            Ok(Bytes::from(ctx.protocol))
        }
    }

    #[tokio::test]
    async fn router_routes_by_protocol() {
        let router = ProtocolRouter::new()
            .route("A", Arc::new(Named))
            .route("B", Arc::new(Named));
        for p in ["A", "B"] {
            let out = router.call(ctx(p), Bytes::new()).await;
            assert_eq!(out, Ok(Bytes::from(p)));
        }
        let err = router.call(ctx("C"), Bytes::new()).await.unwrap_err();
        assert_eq!(
            err.class_name,
            "org.apache.hadoop.ipc.RpcNoSuchProtocolException"
        );
        assert_eq!(err.message, "Unknown protocol: C");
        assert_eq!(err.error_detail(), crate::frame::ERROR_NO_SUCH_PROTOCOL);
    }
}
