//! The client's state id (`ClientConfig::alignment`): sent in every request header, moved by
//! every successful response's state id, shared by the clients of one configuration.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use async_trait::async_trait;
use bytes::Bytes;
use rhdfs_proto::common::UserInformationProto;

use crate::alignment::{AlignmentContext, ClientAlignment, client_state_id};
use crate::{
    CallContext, ClientConfig, IpcError, RpcError, RpcServer, RpcService, ServerConfig,
    encode_response,
};

const PROTOCOL: &str = "org.apache.hadoop.hdfs.protocol.ClientProtocol";

/// A server whose state id the test sets.
#[derive(Debug, Default)]
struct ServerState(AtomicI64);

impl AlignmentContext for ServerState {
    fn last_seen_state_id(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// `seen`: answers the state id the request carried (`None` as "-"); `fail`: an error.
struct Echo;

#[async_trait]
impl RpcService for Echo {
    async fn call(&self, ctx: CallContext, _body: Bytes) -> Result<Bytes, RpcError> {
        match ctx.method.as_str() {
            "seen" => Ok(encode_response(&UserInformationProto {
                effective_user: Some(client_state_id().map_or("-".into(), |s| s.to_string())),
                real_user: None,
            })),
            _ => Err(RpcError::io("refused")),
        }
    }
}

async fn server(state: &Arc<ServerState>) -> RpcServer {
    let addr: SocketAddr = "127.0.0.1:0".parse().expect("literal");
    let cfg =
        ServerConfig::default().with_alignment(Arc::clone(state) as Arc<dyn AlignmentContext>);
    RpcServer::bind(addr, Arc::new(Echo), cfg)
        .await
        .expect("bind")
}

async fn seen(c: &crate::RpcClient) -> String {
    let r: UserInformationProto = c
        .call("seen", &UserInformationProto::default())
        .await
        .expect("seen");
    r.effective_user.unwrap_or_default()
}

#[tokio::test]
async fn requests_carry_the_highest_state_id_any_response_gave() {
    let (state_a, state_b) = (
        Arc::new(ServerState::default()),
        Arc::new(ServerState::default()),
    );
    let (a, b) = (server(&state_a).await, server(&state_b).await);
    let alignment = Arc::new(ClientAlignment::new());
    let cfg = ClientConfig {
        alignment: Some(Arc::clone(&alignment)),
        ..ClientConfig::default()
    };
    let id = crate::RpcClient::new_client_id();
    let to_a = crate::RpcClient::lazy(
        &a.local_addr().to_string(),
        PROTOCOL,
        "u",
        cfg.clone(),
        id.clone(),
    );
    let to_b = crate::RpcClient::lazy(&b.local_addr().to_string(), PROTOCOL, "u", cfg, id);

    // Nothing seen yet: Hadoop's Long.MIN_VALUE.
    state_a.0.store(5, Ordering::SeqCst);
    assert_eq!(seen(&to_a).await, i64::MIN.to_string());
    assert_eq!(alignment.last_seen_state_id(), 5);
    state_a.0.store(9, Ordering::SeqCst);
    assert_eq!(seen(&to_a).await, "5");
    assert_eq!(alignment.last_seen_state_id(), 9);

    // The other server's client carries what the first answered; a server behind does not
    // move the client back.
    state_b.0.store(3, Ordering::SeqCst);
    assert_eq!(seen(&to_b).await, "9");
    assert_eq!(alignment.last_seen_state_id(), 9);

    // An error response leaves the state as it was (as Hadoop's client).
    state_a.0.store(20, Ordering::SeqCst);
    let err = to_a
        .call::<_, UserInformationProto>("fail", &UserInformationProto::default())
        .await
        .unwrap_err();
    assert!(matches!(err, IpcError::Remote { .. }), "{err:?}");
    assert_eq!(alignment.last_seen_state_id(), 9);

    // A client without an alignment sends no state id.
    let plain = crate::RpcClient::connect(&a.local_addr().to_string(), PROTOCOL, "u")
        .await
        .expect("connect");
    assert_eq!(seen(&plain).await, "-");
    assert_eq!(alignment.last_seen_state_id(), 9);

    for c in [to_a, to_b, plain] {
        c.close().await;
    }
    a.shutdown().await;
    b.shutdown().await;
}
