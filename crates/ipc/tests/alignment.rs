//! State alignment on the wire (`rhdfs_ipc::alignment`): the request header's stateId (8)
//! reaches the handler, and every response header — success or error — carries the
//! server's stateId (9) when the server has an alignment context, and none without.

use crate::common;

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use common::{PROTOCOL, decode, raw_connected, read_response};
use prost::Message;
use rhdfs_ipc::alignment::{AlignmentContext, client_state_id};
use rhdfs_ipc::frame::encode_frame;
use rhdfs_ipc::{CallContext, RpcError, RpcServer, RpcService, ServerConfig, encode_response};
use rhdfs_proto::common::{RequestHeaderProto, RpcRequestHeaderProto, UserInformationProto};
use tokio::io::AsyncWriteExt;

#[derive(Debug)]
struct Fixed(i64);

impl AlignmentContext for Fixed {
    fn last_seen_state_id(&self) -> i64 {
        self.0
    }
}

/// Answers the client's state id as the effective user; "fail" fails.
struct Echo;

#[async_trait]
impl RpcService for Echo {
    async fn call(&self, ctx: CallContext, _body: Bytes) -> Result<Bytes, RpcError> {
        if ctx.method == "fail" {
            return Err(RpcError::io("failed on purpose"));
        }
        Ok(encode_response(&UserInformationProto {
            effective_user: Some(format!("{:?}", client_state_id())),
            real_user: None,
        }))
    }
}

fn client_id() -> Bytes {
    Bytes::from_static(b"0123456789abcdef")
}

fn call(call_id: i32, method: &str, state_id: Option<i64>) -> Bytes {
    let header = RpcRequestHeaderProto {
        rpc_kind: Some(2),
        rpc_op: Some(0),
        call_id,
        client_id: client_id(),
        retry_count: Some(0),
        state_id,
        ..Default::default()
    };
    let request = RequestHeaderProto {
        method_name: method.to_owned(),
        declaring_class_protocol_name: PROTOCOL.to_owned(),
        client_protocol_version: 1,
    };
    encode_frame(&[
        &header.encode_to_vec(),
        &request.encode_to_vec(),
        &UserInformationProto::default().encode_to_vec(),
    ])
}

async fn server(cfg: ServerConfig) -> RpcServer {
    RpcServer::bind("127.0.0.1:0".parse().expect("address"), Arc::new(Echo), cfg)
        .await
        .expect("bind")
}

#[tokio::test]
async fn state_ids_travel_in_both_headers() {
    let server = server(ServerConfig::default().with_alignment(Arc::new(Fixed(42)))).await;
    let mut s = raw_connected(server.local_addr(), &client_id()).await;

    s.write_all(&call(1, "echo", Some(7))).await.expect("write");
    let (h, rest) = read_response(&mut s).await;
    assert_eq!(h.state_id, Some(42));
    let who: UserInformationProto = decode(rest);
    assert_eq!(who.effective_user.as_deref(), Some("Some(7)"));

    s.write_all(&call(2, "echo", None)).await.expect("write");
    let (h, rest) = read_response(&mut s).await;
    assert_eq!(h.state_id, Some(42));
    let who: UserInformationProto = decode(rest);
    assert_eq!(who.effective_user.as_deref(), Some("None"));

    s.write_all(&call(3, "fail", Some(7))).await.expect("write");
    let (h, _) = read_response(&mut s).await;
    assert_eq!((h.status, h.state_id), (1, Some(42)));
    server.shutdown().await;
}

#[tokio::test]
async fn no_state_id_without_an_alignment_context() {
    let server = server(ServerConfig::default()).await;
    let mut s = raw_connected(server.local_addr(), &client_id()).await;
    s.write_all(&call(1, "echo", Some(7))).await.expect("write");
    let (h, _) = read_response(&mut s).await;
    assert_eq!((h.status, h.state_id), (0, None));
    server.shutdown().await;
}
