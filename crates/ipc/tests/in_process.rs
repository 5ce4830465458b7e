//! In-process connections (`LocalConnector`) and the caller they may name: honoured there,
//! ignored from a network client that sends the same caller context.

use crate::common;

use common::{PROTOCOL, req, start};
use rhdfs_ipc::caller::{Forwarded, scope};
use rhdfs_ipc::{ClientConfig, RpcClient, ServerConfig};
use rhdfs_proto::common::UserInformationProto;

async fn whence(c: &RpcClient) -> (String, String) {
    let r: UserInformationProto = c.call("whence", &req("/")).await.expect("whence");
    (
        r.effective_user.unwrap_or_default(),
        r.real_user.unwrap_or_default(),
    )
}

#[tokio::test]
async fn only_an_in_process_connection_may_name_its_caller() {
    let (server, _) = start(ServerConfig::default()).await;
    let addr = server.local_addr().to_string();
    let web = Forwarded::new("192.0.2.7".parse().expect("literal"), "webhdfs");

    let local = RpcClient::connect_with(
        &addr,
        PROTOCOL,
        "alice",
        ClientConfig {
            in_process: Some(server.local_connector()),
            ..ClientConfig::default()
        },
    )
    .await
    .expect("in-process connect");
    // Without a caller: the server's own address, over rpc.
    assert_eq!(
        whence(&local).await,
        (server.local_addr().ip().to_string(), "rpc".to_string())
    );
    assert_eq!(
        scope(&web, whence(&local)).await,
        ("192.0.2.7".to_string(), "webhdfs".to_string())
    );
    // The same user and calls as over TCP.
    let who: UserInformationProto = local.call("whoami", &req("/")).await.expect("whoami");
    assert_eq!(who.effective_user.as_deref(), Some("alice"));

    // A network client sending the same caller context is still itself.
    let tcp = RpcClient::connect(&addr, PROTOCOL, "mallory")
        .await
        .expect("connect");
    assert_eq!(
        scope(&web, whence(&tcp)).await,
        ("127.0.0.1".to_string(), "rpc".to_string())
    );

    let connector = server.local_connector();
    server.shutdown().await;
    assert!(connector.connect().is_err(), "connect after shutdown");
}
