//! Issue 2, "What must work" item 6: bad input gets the right Hadoop exception, and the servers
//! keep working: a missing path, create over an existing file without overwrite, mkdir under a
//! file, non-recursive delete of a non-empty directory, permission denied, a garbage RPC frame,
//! an unknown method, a garbage or truncated DataTransfer op (only that connection closes).

use crate::common;

use std::time::Duration;

use anyhow::Context;
use bytes::Bytes;
use common::rpc::{
    CLIENT_PROTOCOL, CallError, CreateRequestProto, FsPermissionProto, GetFileInfoRequestProto,
    PREAMBLE, RawRpc, frame, read_until_closed, request_header,
};
use hdfs_native::{HdfsError, WriteOptions};
use rhdfs_minicluster::MiniCluster;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

const CLOSE_LIMIT: Duration = Duration::from_secs(60);

/// The Java exception class behind an hdfs-native error, when it carries one.
fn class_of(e: &HdfsError) -> Option<&str> {
    match e {
        HdfsError::RPCError(class, _) | HdfsError::FatalRPCError(class, _) => Some(class),
        _ => None,
    }
}

#[track_caller]
fn assert_class<T: std::fmt::Debug>(what: &str, r: Result<T, HdfsError>, class: &str) {
    match r {
        Err(e) if class_of(&e) == Some(class) => {}
        other => panic!("{what}: expected {class}, got {other:?}"),
    }
}

/// A fresh hdfs-native client still gets answers, and a write + read through the DataNode works.
async fn still_serving(uri: &str, tag: &str) -> anyhow::Result<()> {
    let client = common::native_client(uri)?;
    let root = client
        .get_file_info("/")
        .await
        .with_context(|| format!("NameNode after {tag}"))?;
    assert!(root.isdir);
    let path = format!("/alive/{tag}");
    let data = common::random_bytes(70_000, 9);
    common::native_write(
        &client,
        &path,
        &data,
        WriteOptions::default().overwrite(true),
        10_000,
    )
    .await
    .with_context(|| format!("write after {tag}"))?;
    let got = common::native_read(&client, &path)
        .await
        .with_context(|| format!("read after {tag}"))?;
    common::assert_same_bytes(&format!("read after {tag}"), &got, &data);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn namespace_errors_have_hadoop_exceptions() -> anyhow::Result<()> {
    let cluster = MiniCluster::builder().datanodes(1).build().await?;
    let uri = cluster.uri();
    let client = common::native_client(&uri)?;
    client.mkdirs("/bad/dir/child", 0o755, true).await?;
    common::native_write(&client, "/bad/file", b"content", WriteOptions::default(), 7).await?;

    // ---- missing path --------------------------------------------------------------------
    assert!(matches!(
        client.get_file_info("/bad/missing").await,
        Err(HdfsError::FileNotFound(_))
    ));
    match client.read("/bad/missing").await.map(|_| ()) {
        Err(HdfsError::FileNotFound(_)) => {}
        Err(e) if class_of(&e) == Some("java.io.FileNotFoundException") => {}
        other => panic!("read of a missing file: {other:?}"),
    }
    assert!(
        client.list_status("/bad/missing", false).await.is_err(),
        "listing a missing directory"
    );
    assert_class(
        "content summary of a missing path",
        client.get_content_summary("/bad/missing").await,
        "java.io.FileNotFoundException",
    );
    assert_class(
        "set_permission of a missing path",
        client.set_permission("/bad/missing", 0o700).await,
        "java.io.FileNotFoundException",
    );
    assert_class(
        "append to a missing file",
        client.append("/bad/missing").await.map(|_| ()),
        "java.io.FileNotFoundException",
    );
    assert_class(
        "rename of a missing path",
        client.rename("/bad/missing", "/bad/other", false).await,
        "java.io.FileNotFoundException",
    );
    assert_class(
        "create without createParent under a missing directory",
        client
            .create("/bad/nodir/f", WriteOptions::default().create_parent(false))
            .await
            .map(|_| ()),
        "java.io.FileNotFoundException",
    );

    // ---- create over an existing file without overwrite ----------------------------------
    match client.create("/bad/file", WriteOptions::default()).await {
        Err(HdfsError::AlreadyExists(_)) => {}
        other => panic!("create over an existing file: {:?}", other.map(|_| ())),
    }
    // hdfs-native folds two Java classes into AlreadyExists; check the exact one on the wire.
    let mut rpc = RawRpc::connect(&uri, CLIENT_PROTOCOL, &common::current_user()).await?;
    let create = |src: &str, flag: u32| CreateRequestProto {
        src: Some(src.to_owned()),
        masked: Some(FsPermissionProto { perm: Some(0o644) }),
        client_name: Some("rhdfs-test-client".to_owned()),
        create_flag: Some(flag),
        create_parent: Some(true),
        replication: Some(1),
        block_size: Some(1 << 20),
    };
    match rpc
        .call::<_, common::rpc::Ignored>("create", &create("/bad/file", 1))
        .await
    {
        Err(CallError::Remote { class, .. }) => {
            assert_eq!(class, "org.apache.hadoop.fs.FileAlreadyExistsException")
        }
        other => panic!("raw create over an existing file: {other:?}"),
    }
    match rpc
        .call::<_, common::rpc::Ignored>("create", &create("/bad/dir", 3))
        .await
    {
        Err(CallError::Remote { class, .. }) => {
            assert_eq!(class, "org.apache.hadoop.fs.FileAlreadyExistsException")
        }
        other => panic!("raw create (overwrite) onto a directory: {other:?}"),
    }
    assert_eq!(
        common::native_read(&client, "/bad/file").await?,
        b"content",
        "the file is unchanged"
    );

    // ---- mkdir under a file ----------------------------------------------------------------
    assert_class(
        "mkdirs under a file",
        client.mkdirs("/bad/file/sub", 0o755, true).await,
        "org.apache.hadoop.fs.ParentNotDirectoryException",
    );
    assert_class(
        "create under a file",
        client
            .create("/bad/file/f", WriteOptions::default())
            .await
            .map(|_| ()),
        "org.apache.hadoop.fs.ParentNotDirectoryException",
    );

    // ---- non-recursive delete of a non-empty directory -------------------------------------
    assert_class(
        "non-recursive delete of a non-empty directory",
        client.delete("/bad/dir", false).await,
        "org.apache.hadoop.fs.PathIsNotEmptyDirectoryException",
    );
    assert!(
        client.get_file_info("/bad/dir/child").await?.isdir,
        "nothing was deleted"
    );
    assert!(
        client.delete("/bad/dir/child", false).await?,
        "an empty directory goes without recursive"
    );

    // ---- permission denied -----------------------------------------------------------------
    client.mkdirs("/private", 0o700, true).await?;
    client.set_permission("/private", 0o700).await?;
    common::native_write(
        &client,
        "/private/secret",
        b"secret",
        WriteOptions::default(),
        6,
    )
    .await?;
    client.mkdirs("/public", 0o777, true).await?;
    client.set_permission("/public", 0o777).await?;
    let other = common::native_client_as(&uri, "someoneelse")?;
    let denied = "org.apache.hadoop.security.AccessControlException";
    assert_class(
        "stat inside a 0700 directory",
        other.get_file_info("/private/secret").await,
        denied,
    );
    assert_class(
        "list a 0700 directory",
        other.list_status("/private", false).await,
        denied,
    );
    assert_class(
        "read inside a 0700 directory",
        other.read("/private/secret").await.map(|_| ()),
        denied,
    );
    assert_class(
        "create inside a 0700 directory",
        other
            .create("/private/x", WriteOptions::default())
            .await
            .map(|_| ()),
        denied,
    );
    assert_class(
        "mkdir in / (0755, owned by the superuser)",
        other.mkdirs("/not-mine", 0o755, true).await,
        denied,
    );
    assert_class(
        "chmod of someone else's file",
        other.set_permission("/bad/file", 0o777).await,
        denied,
    );
    assert_class(
        "delete inside a 0700 directory",
        other.delete("/private/secret", false).await,
        denied,
    );
    // ... while what the user may do still works, and the effective user owns what it creates.
    common::native_write(&other, "/public/mine", b"mine", WriteOptions::default(), 4).await?;
    let st = client.get_file_info("/public/mine").await?;
    assert_eq!(st.owner, "someoneelse");
    assert_eq!(common::native_read(&other, "/public/mine").await?, b"mine");
    assert_eq!(
        common::native_read(&client, "/private/secret").await?,
        b"secret",
        "the owner still reads it"
    );

    // ---- the same through the Java client ----------------------------------------------------
    if let Some(sh) =
        common::java::JavaShell::new(&uri, "namespace_errors_have_hadoop_exceptions (Java part)")?
    {
        let out = sh.run(&["-ls", "/bad/missing"]).await?.code_is(1);
        assert!(
            out.errors().contains("No such file or directory"),
            "{}",
            out.errors()
        );
        let out = sh.run(&["-cat", "/bad/missing"]).await?.code_is(1);
        assert!(
            out.errors().contains("No such file or directory"),
            "{}",
            out.errors()
        );
        let out = sh.run(&["-mkdir", "-p", "/bad/file/sub"]).await?.code_is(1);
        assert!(out.errors().contains("mkdir:"), "{}", out.errors());
        let other_env = [("HADOOP_USER_NAME", "someoneelse")];
        let out = sh
            .run_env(&["-ls", "/private"], &other_env)
            .await?
            .code_is(1);
        assert!(
            out.errors().contains("Permission denied"),
            "{}",
            out.errors()
        );
        let out = sh
            .run_env(&["-cat", "/private/secret"], &other_env)
            .await?
            .code_is(1);
        assert!(
            out.errors().contains("Permission denied"),
            "{}",
            out.errors()
        );
        let out = sh
            .run_env(&["-mkdir", "/private/y"], &other_env)
            .await?
            .code_is(1);
        assert!(
            out.errors().contains("Permission denied"),
            "{}",
            out.errors()
        );
        let out = sh
            .run_env(&["-touchz", "/public/java-mine"], &other_env)
            .await?
            .ok();
        assert!(out.stdout.is_empty());
        let out = sh.run(&["-stat", "%u", "/public/java-mine"]).await?.ok();
        assert_eq!(out.lines()[0], "someoneelse");
        let out = sh.run(&["-cat", "/private/secret"]).await?.ok();
        assert_eq!(out.stdout, b"secret");
    }

    still_serving(&uri, "namespace-errors").await?;
    cluster.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn garbage_rpc_and_unknown_method() -> anyhow::Result<()> {
    let cluster = MiniCluster::builder().datanodes(1).build().await?;
    let uri = cluster.uri();
    let addr = common::rpc::authority(&uri);

    // A healthy connection opened before the garbage, used again after it.
    let mut healthy = RawRpc::connect(&uri, CLIENT_PROTOCOL, &common::current_user()).await?;
    assert!(healthy.get_file_info_exists("/").await?);

    // ---- an unknown method: an ERROR response naming RpcNoSuchMethodException; connection stays --
    let resp = healthy
        .call_raw(
            "thisMethodDoesNotExist",
            &GetFileInfoRequestProto {
                src: Some("/".into()),
            },
        )
        .await?;
    assert!(!resp.is_success(), "unknown method succeeded: {resp:?}");
    assert_eq!(
        resp.exception(),
        "org.apache.hadoop.ipc.RpcNoSuchMethodException",
        "{resp:?}"
    );
    assert_eq!(
        resp.header.status,
        Some(1),
        "status ERROR (the connection stays usable): {resp:?}"
    );
    assert_eq!(
        resp.header.error_detail,
        Some(2),
        "errorDetail ERROR_NO_SUCH_METHOD: {resp:?}"
    );
    assert!(
        healthy.get_file_info_exists("/").await?,
        "same connection after an unknown method"
    );

    // ---- malformed connections: each must be closed by the server ----------------------------
    let client_id = [7u8; 16];
    let ctx = common::rpc::IpcConnectionContextProto {
        user_info: Some(common::rpc::UserInformationProto {
            effective_user: Some(common::current_user()),
            real_user: None,
        }),
        protocol: Some(CLIENT_PROTOCOL.into()),
    };
    // A valid preamble and connection context, after which the bad frame follows.
    let hello = [
        PREAMBLE.to_vec(),
        frame(&[&request_header(-3, &client_id), &ctx]),
    ]
    .concat();
    let garbage = common::random_bytes(64, 77);
    let cases: Vec<(&str, Vec<u8>, bool)> = vec![
        (
            "an HTTP request",
            b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".to_vec(),
            false,
        ),
        (
            "a wrong IPC version",
            [
                &[b'h', b'r', b'p', b'c', 4, 0, 0][..],
                &[0, 0, 0, 4, 1, 2, 3, 4],
            ]
            .concat(),
            false,
        ),
        (
            "a garbage connection context",
            [&PREAMBLE[..], &[0, 0, 0, 8], &[0xff; 8]].concat(),
            false,
        ),
        (
            "a frame of garbage",
            [&hello[..], &(garbage.len() as u32).to_be_bytes(), &garbage].concat(),
            false,
        ),
        (
            // the header's varint length says 127 bytes, the frame holds 2
            "a frame whose header overruns it",
            [&hello[..], &[0, 0, 0, 3, 0x7f, 0x08, 0x02]].concat(),
            false,
        ),
        (
            "an oversized frame (> ipc.maximum.data.length)",
            [&hello[..], &0x7fff_fff0u32.to_be_bytes(), &[0u8; 1024]].concat(),
            false,
        ),
        (
            "a negative frame length",
            [&hello[..], &[0xff, 0xff, 0xff, 0xf0], &[0u8; 16]].concat(),
            false,
        ),
        (
            "a frame cut short by EOF",
            [&hello[..], &[0, 0, 1, 0, 1, 2, 3]].concat(),
            true,
        ),
    ];
    for (what, bytes, half_close) in cases {
        let mut s = TcpStream::connect(&addr).await?;
        // One write into a fresh socket; the server may close as soon as it has seen enough.
        s.write_all(&bytes).await?;
        if half_close {
            let _ = s.shutdown().await;
        }
        read_until_closed(&mut s, CLOSE_LIMIT)
            .await
            .with_context(|| format!("RPC port: {what}"))?;
        // Only that connection closed: the healthy one still works.
        assert!(
            healthy.get_file_info_exists("/").await?,
            "the healthy connection after {what}"
        );
    }

    // Only those connections closed: the healthy one still works, and so does everyone else.
    assert!(
        healthy.get_file_info_exists("/").await?,
        "the healthy connection after the garbage"
    );
    let resp = healthy
        .call_raw(
            "anotherUnknownMethod",
            &GetFileInfoRequestProto {
                src: Some("/".into()),
            },
        )
        .await?;
    assert_eq!(
        resp.exception(),
        "org.apache.hadoop.ipc.RpcNoSuchMethodException"
    );
    still_serving(&uri, "garbage-rpc").await?;

    cluster.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn garbage_data_transfer_ops() -> anyhow::Result<()> {
    let cluster = MiniCluster::builder().datanodes(1).build().await?;
    let uri = cluster.uri();
    let client = common::native_client(&uri)?;
    let data = common::random_bytes(300_000, 5);
    common::native_write(
        &client,
        "/dt/before",
        &data,
        WriteOptions::default(),
        65_536,
    )
    .await?;
    let xfer = cluster
        .datanode(0)
        .context("DataNode 0 not running")?
        .xfer_addr()
        .to_string();

    let cases: Vec<(&str, Vec<u8>, bool)> = vec![
        ("random bytes", common::random_bytes(1024, 6), false),
        (
            "wrong version",
            [&[0u8, 27, 81][..], &[3, 1, 2, 3]].concat(),
            false,
        ),
        (
            "unknown op",
            [&[0u8, 28, 99][..], &[3, 1, 2, 3]].concat(),
            false,
        ),
        (
            "garbage protobuf",
            [&[0u8, 28, 81][..], &[5, 0xff, 0xff, 0xff, 0xff, 0xff]].concat(),
            false,
        ),
        (
            "op proto longer than sent, then EOF",
            [&[0u8, 28, 81][..], &[100, 0x0a, 0x05, 1, 2]].concat(),
            true,
        ),
        ("only the version, then EOF", vec![0u8, 28], true),
        (
            "WRITE_BLOCK with a garbage header, then EOF",
            [&[0u8, 28, 80][..], &[4, 0x0a, 0x02, 0x0a, 0x00]].concat(),
            true,
        ),
        (
            "absurd op length",
            [&[0u8, 28, 81][..], &[0xff, 0xff, 0xff, 0xff, 0x0f]].concat(),
            false,
        ),
    ];
    for (what, bytes, half_close) in cases {
        let mut s = TcpStream::connect(&xfer).await?;
        s.write_all(&bytes).await?;
        if half_close {
            let _ = s.shutdown().await;
        }
        read_until_closed(&mut s, CLOSE_LIMIT)
            .await
            .with_context(|| format!("DataTransfer: {what}"))?;
        // The DataNode keeps serving after each bad connection.
        let got = common::native_read(&client, "/dt/before")
            .await
            .with_context(|| format!("read after {what}"))?;
        common::assert_same_bytes(&format!("read after {what}"), &got, &data);
    }

    // Writes still work too (the only DataNode is the whole pipeline).
    still_serving(&uri, "garbage-data-transfer").await?;
    let mut w = client.create("/dt/after", WriteOptions::default()).await?;
    w.write_bytes(Bytes::from_static(b"after the garbage"))
        .await?;
    w.close().await?;
    assert_eq!(
        common::native_read(&client, "/dt/after").await?,
        b"after the garbage"
    );

    cluster.shutdown().await;
    Ok(())
}
