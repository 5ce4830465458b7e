//! Issue 12: a path that runs through a file (`/g/a/file/x`). getFileInfo answers "not found"
//! to the superuser and AccessControlException "(is not a directory)" to anyone else, as
//! Hadoop's FSDirStatAndListingOp.getFileInfo does; getListing throws to everyone. A glob
//! through a file (`/g/*/file/x`) therefore matches nothing for the superuser.

use crate::common;

use hdfs_native::HdfsError;
use rhdfs_client::{CreateOptions, FileSystem};
use rhdfs_conf::Configuration;
use rhdfs_minicluster::MiniCluster;

const ACE: &str = "org.apache.hadoop.security.AccessControlException";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn glob_through_a_file() -> anyhow::Result<()> {
    let cluster = MiniCluster::builder().datanodes(1).build().await?;
    // The process's user started the NameNode: the superuser.
    let root = FileSystem::connect(&cluster.uri()).await?;
    root.mkdirs("/g/a", None).await?;
    root.mkdirs("/g/b/file", None).await?;
    root.set_permission("/g", 0o777).await?;
    let mut w = root.create("/g/a/file", CreateOptions::default()).await?;
    w.write(b"x").await?;
    w.close().await?;
    root.mkdirs("/g/b/file/x", None).await?;

    // hdfs-native (as the superuser): not found, and the glob's expansion finds only /g/b.
    let native = common::native_client(&cluster.uri())?;
    match native.get_file_info("/g/a/file/x").await {
        Err(HdfsError::FileNotFound(_)) => {}
        other => panic!("getFileInfo through a file: {other:?}"),
    }
    let mut found = Vec::new();
    for e in native.list_status("/g", false).await? {
        let cand = format!("/g/{}/file/x", e.path.rsplit('/').next().unwrap_or(""));
        if native.get_file_info(&cand).await.is_ok() {
            found.push(cand);
        }
    }
    assert_eq!(found, vec!["/g/b/file/x".to_string()]);
    // getListing through a file throws to the superuser too.
    let e = native
        .list_status("/g/a/file/x", false)
        .await
        .expect_err("listing through a file");
    assert!(format!("{e:?}").contains("is not a directory"), "{e:?}");

    // The rhdfs client's Globber (as Hadoop's): the file is skipped, nothing thrown.
    let paths: Vec<String> = root
        .glob_status("/g/*/file/x")
        .await?
        .into_iter()
        .map(|s| s.path)
        .collect();
    assert_eq!(paths, vec!["/g/b/file/x"]);
    assert!(root.glob_status("/g/a/file/x").await?.is_empty());
    assert!(root.get_file_info("/g/a/file/x").await?.is_none());

    // Anyone else: AccessControlException naming the file, from getFileInfo and the glob.
    let alice = FileSystem::connect_as(&cluster.uri(), Configuration::new(), "alice").await?;
    let e = alice
        .get_file_info("/g/a/file/x")
        .await
        .expect_err("non-superuser");
    assert_eq!(e.class_name(), ACE, "{e:?}");
    assert!(
        e.to_string().contains("/g/a/file (is not a directory)"),
        "{e}"
    );
    let native_alice = common::native_client_as(&cluster.uri(), "alice")?;
    let e = native_alice
        .get_file_info("/g/a/file/x")
        .await
        .expect_err("non-superuser through hdfs-native");
    assert!(format!("{e:?}").contains("AccessControlException"), "{e:?}");
    let e = alice
        .glob_status("/g/*/file/x")
        .await
        .expect_err("glob as non-superuser");
    assert_eq!(e.class_name(), ACE, "{e:?}");
    cluster.shutdown().await;
    Ok(())
}
