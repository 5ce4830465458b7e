//! Conveniences for writing services: a method table ([`Dispatcher`]) and a per-protocol
//! router ([`ProtocolRouter`]). Both implement [`RpcService`].

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use futures::future::BoxFuture;

use crate::error::RpcError;
use crate::service::{CallContext, RpcService, decode_request, encode_response};

type Handler =
    dyn Fn(CallContext, Bytes) -> BoxFuture<'static, Result<Bytes, RpcError>> + Send + Sync;

/// Maps method names to typed async handlers. Unknown methods fail with
/// `RpcNoSuchMethodException` ("Unknown method X called on P protocol.").
#[derive(Default)]
pub struct Dispatcher {
    handlers: HashMap<String, Box<Handler>>,
}

impl Dispatcher {
    /// An empty method table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `handler` for `method`: the request is decoded as `Req` (a decode failure is a
    /// `java.io.IOException`) and the `Resp` it returns is encoded as the response.
    /// A later registration of the same method replaces the earlier one.
    pub fn register<Req, Resp, F, Fut>(&mut self, method: &str, handler: F) -> &mut Self
    where
        Req: prost::Message + Default + 'static,
        Resp: prost::Message + 'static,
        F: Fn(CallContext, Req) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Resp, RpcError>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        let erased =
            move |ctx: CallContext, body: Bytes| -> BoxFuture<'static, Result<Bytes, RpcError>> {
                let handler = Arc::clone(&handler);
                Box::pin(async move {
                    let req: Req = decode_request(&body)?;
                    let resp = handler(ctx, req).await?;
                    Ok(encode_response(&resp))
                })
            };
        self.handlers.insert(method.to_owned(), Box::new(erased));
        self
    }

    /// Whether a handler is registered for `method`.
    pub fn has_method(&self, method: &str) -> bool {
        self.handlers.contains_key(method)
    }

    /// The registered method names, in no particular order.
    pub fn methods(&self) -> impl Iterator<Item = &str> {
        self.handlers.keys().map(String::as_str)
    }

    /// Runs the handler for `ctx.method`.
    pub async fn dispatch(&self, ctx: CallContext, body: Bytes) -> Result<Bytes, RpcError> {
        match self.handlers.get(&ctx.method) {
            Some(handler) => handler(ctx, body).await,
            None => Err(RpcError::no_such_method_on(&ctx.method, &ctx.protocol)),
        }
    }
}

impl std::fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut methods: Vec<&str> = self.methods().collect();
        methods.sort_unstable();
        f.debug_struct("Dispatcher")
            .field("methods", &methods)
            .finish()
    }
}

#[async_trait]
impl RpcService for Dispatcher {
    async fn call(&self, ctx: CallContext, body: Bytes) -> Result<Bytes, RpcError> {
        self.dispatch(ctx, body).await
    }
}

/// Routes calls to a service by `CallContext.protocol`; unrouted protocols go to the fallback
/// service if one is set, else fail with `RpcNoSuchProtocolException`.
#[derive(Default, Clone)]
pub struct ProtocolRouter {
    routes: HashMap<String, Arc<dyn RpcService>>,
    fallback: Option<Arc<dyn RpcService>>,
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

    /// Serves every protocol without a route with `service`.
    pub fn fallback(mut self, service: Arc<dyn RpcService>) -> Self {
        self.fallback = Some(service);
        self
    }
}

impl std::fmt::Debug for ProtocolRouter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut protocols: Vec<&str> = self.routes.keys().map(String::as_str).collect();
        protocols.sort_unstable();
        f.debug_struct("ProtocolRouter")
            .field("protocols", &protocols)
            .field("fallback", &self.fallback.is_some())
            .finish()
    }
}

#[async_trait]
impl RpcService for ProtocolRouter {
    async fn call(&self, ctx: CallContext, body: Bytes) -> Result<Bytes, RpcError> {
        match self.routes.get(&ctx.protocol).or(self.fallback.as_ref()) {
            Some(service) => service.call(ctx, body).await,
            None => Err(RpcError::no_such_protocol(&ctx.protocol)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhdfs_proto::common::UserInformationProto;

    fn ctx(protocol: &str, method: &str) -> CallContext {
        CallContext {
            user: "u".into(),
            protocol: protocol.into(),
            method: method.into(),
            client_id: Bytes::from_static(&[0; 16]),
            call_id: 0,
            retry_count: 0,
            peer: "127.0.0.1:1".parse().expect("literal address"),
        }
    }

    fn echo() -> Dispatcher {
        let mut d = Dispatcher::new();
        d.register(
            "echo",
            |ctx: CallContext, mut req: UserInformationProto| async move {
                req.real_user = Some(ctx.protocol);
                Ok::<_, RpcError>(req)
            },
        );
        d
    }

    #[tokio::test]
    async fn dispatcher_routes_by_method() {
        let d = echo();
        assert!(d.has_method("echo"));
        let req = UserInformationProto {
            effective_user: Some("x".into()),
            real_user: None,
        };
        let out = d
            .dispatch(ctx("P", "echo"), encode_response(&req))
            .await
            .unwrap();
        let out: UserInformationProto = decode_request(&out).unwrap();
        assert_eq!(out.real_user.as_deref(), Some("P"));
        let err = d
            .dispatch(ctx("P", "other"), Bytes::new())
            .await
            .unwrap_err();
        assert_eq!(err, RpcError::no_such_method_on("other", "P"));
        assert_eq!(err.message, "Unknown method other called on P protocol.");
        let err = d
            .dispatch(ctx("P", "echo"), Bytes::from_static(&[0x0a, 0x09]))
            .await
            .unwrap_err();
        assert_eq!(err.class_name, "java.io.IOException");
    }

    #[tokio::test]
    async fn router_routes_by_protocol() {
        let router = ProtocolRouter::new().route("A", Arc::new(echo()));
        let body = encode_response(&UserInformationProto::default());
        assert!(router.call(ctx("A", "echo"), body.clone()).await.is_ok());
        let err = router
            .call(ctx("B", "echo"), body.clone())
            .await
            .unwrap_err();
        assert_eq!(
            err.class_name,
            "org.apache.hadoop.ipc.RpcNoSuchProtocolException"
        );
        assert_eq!(err.error_detail(), crate::frame::ERROR_NO_SUCH_PROTOCOL);
        let router = router.fallback(Arc::new(echo()));
        assert!(router.call(ctx("B", "echo"), body).await.is_ok());
    }
}
