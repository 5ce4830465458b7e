//! Starts a NameNode on a socket and talks to it with the IPC client.

use rhdfs_conf::Configuration;
use rhdfs_conf::clock::system_clock;
use rhdfs_ipc::{IpcError, RpcClient};
use rhdfs_namenode::NameNode;
use rhdfs_proto::hdfs::{
    FsPermissionProto, GetFileInfoRequestProto, GetFileInfoResponseProto, MkdirsRequestProto,
    MkdirsResponseProto,
};
use rhdfs_proto::protocols::{CLIENT_DATANODE_PROTOCOL, CLIENT_PROTOCOL};

fn conf(dir: &std::path::Path) -> Configuration {
    let mut c = Configuration::new();
    c.set("dfs.namenode.rpc-address", "127.0.0.1:0");
    c.set("dfs.namenode.http-address", "127.0.0.1:0");
    c.set("dfs.namenode.name.dir", dir.to_string_lossy().to_string());
    c
}

#[tokio::test]
async fn serves_client_protocol_and_keeps_its_identity() {
    let t = tempfile::tempdir().unwrap();
    let nn = NameNode::start(conf(t.path()), system_clock())
        .await
        .unwrap();
    let pool = nn.block_manager().block_pool_id().to_string();
    assert!(pool.starts_with("BP-"));
    let addr = nn.rpc_addr().to_string();
    let user = rhdfs_conf::user::current_user();
    let c = RpcClient::connect(&addr, CLIENT_PROTOCOL, &user)
        .await
        .unwrap();
    let r: GetFileInfoResponseProto = c
        .call("getFileInfo", &GetFileInfoRequestProto { src: "/".into() })
        .await
        .unwrap();
    let st = r.fs.unwrap();
    assert_eq!(st.file_id, Some(16385));
    assert_eq!(st.owner, user);
    let m: MkdirsResponseProto = c
        .call(
            "mkdirs",
            &MkdirsRequestProto {
                src: "/a/b".into(),
                masked: FsPermissionProto { perm: 0o755 },
                create_parent: true,
                unmasked: None,
            },
        )
        .await
        .unwrap();
    assert!(m.result);
    let r: GetFileInfoResponseProto = c
        .call(
            "getFileInfo",
            &GetFileInfoRequestProto {
                src: "/nope".into(),
            },
        )
        .await
        .unwrap();
    assert!(r.fs.is_none());
    // Another protocol on the NameNode port: RpcNoSuchProtocolException, as Hadoop's
    // server answers a protocol it does not serve.
    let other = RpcClient::connect(&addr, CLIENT_DATANODE_PROTOCOL, &user)
        .await
        .unwrap();
    let err = other
        .call::<_, GetFileInfoResponseProto>(
            "getReplicaVisibleLength",
            &GetFileInfoRequestProto::default(),
        )
        .await
        .unwrap_err();
    match err {
        IpcError::Remote {
            class_name,
            message,
            ..
        } => {
            assert_eq!(
                class_name,
                "org.apache.hadoop.ipc.RpcNoSuchProtocolException"
            );
            assert_eq!(
                message,
                "Unknown protocol: org.apache.hadoop.hdfs.protocol.ClientDatanodeProtocol"
            );
        }
        e => panic!("{e:?}"),
    }
    nn.shutdown().await;
    // Restart on the same directory: same block pool.
    let nn = NameNode::start(conf(t.path()), system_clock())
        .await
        .unwrap();
    assert_eq!(nn.block_manager().block_pool_id(), pool);
    nn.shutdown().await;
}

/// A web port already in use stops the start, as Hadoop's NameNode fails with "Port in use":
/// no NameNode runs without its health, fsck, JMX and WebHDFS endpoints. The failed start
/// leaves nothing behind: a second start on the same name directory succeeds.
#[tokio::test]
async fn a_web_port_in_use_fails_the_start_and_releases_the_name_directory() {
    let t = tempfile::tempdir().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let mut c = conf(t.path());
    c.set(
        "dfs.namenode.http-address",
        taken.local_addr().unwrap().to_string(),
    );
    let err = NameNode::start(c, system_clock()).await.unwrap_err();
    assert!(
        matches!(err, rhdfs_namenode::NameNodeError::Http(_)),
        "{err:?}"
    );
    assert!(err.to_string().contains("Address already in use"), "{err}");
    let nn = NameNode::start(conf(t.path()), system_clock())
        .await
        .unwrap();
    assert_ne!(nn.http_addr(), taken.local_addr().unwrap());
    nn.shutdown().await;
}
