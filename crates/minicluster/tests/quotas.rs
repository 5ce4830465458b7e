//! Issue 12, "What must work" item 3: quotas. Exceeding a namespace or space quota fails
//! with Hadoop's exception class and leaves nothing behind; usage stays right across
//! rename between quota directories, delete, append, setrep and NameNode restarts (edit
//! replay, then image load); the Java FsShell 3.5 prints the same `-count -q -h` figures
//! as `rhdfs dfs` (whose lines `crates/rhdfs/tests/quota_cli.rs` checks).

use crate::common;

use common::java::JavaShell;
use common::rpc::authority;
use hdfs_native::{HdfsError, WriteOptions};
use rhdfs_ipc::exceptions::{DS_QUOTA_EXCEEDED, NS_QUOTA_EXCEEDED};
use rhdfs_minicluster::MiniCluster;
use rhdfs_namenode::namespace::{QUOTA_DONT_SET, QUOTA_RESET};
use rhdfs_namenode::rpc::quota::call as set_quota;
use rhdfs_namenode::safemode::{SafeModeAction, save_namespace, set_safe_mode};

use std::time::Duration;

const MIB: u64 = 1024 * 1024;

fn class(e: &HdfsError) -> String {
    match e {
        HdfsError::RPCError(c, _) | HdfsError::FatalRPCError(c, _) => c.clone(),
        other => format!("{other:?}"),
    }
}

/// (namespace items, space consumed) of `path`.
async fn usage(client: &hdfs_native::Client, path: &str) -> anyhow::Result<(u64, u64)> {
    let cs = client.get_content_summary(path).await?;
    Ok((cs.file_count + cs.directory_count, cs.space_consumed))
}

fn opts() -> WriteOptions {
    WriteOptions::default().block_size(MIB).replication(2)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn quotas_enforced_and_usage_kept() -> anyhow::Result<()> {
    let mut cluster = MiniCluster::builder().datanodes(2).build().await?;
    let uri = cluster.uri();
    let addr = authority(&uri);
    let user = common::current_user();
    let client = common::native_client(&uri)?;
    client.mkdirs("/qa/sub", 0o755, true).await?;
    client.mkdirs("/qb", 0o755, true).await?;
    set_quota(&addr, &user, "/qa", 4, QUOTA_DONT_SET, None).await?;
    set_quota(&addr, &user, "/qb", QUOTA_DONT_SET, 2 * MIB as i64, None).await?;

    // Namespace: /qa, /qa/sub, two files = 4; a third file fails and is not there.
    common::native_write(&client, "/qa/f1", &[1u8; 1000], opts(), 1000).await?;
    common::native_write(&client, "/qa/sub/f2", &[2u8; 3000], opts(), 3000).await?;
    let e = client
        .create("/qa/f3", opts())
        .await
        .err()
        .expect("over quota");
    assert_eq!(class(&e), NS_QUOTA_EXCEEDED, "{e:?}");
    assert!(client.get_file_info("/qa/f3").await.is_err());
    let e = client.mkdirs("/qa/sub/d", 0o755, true).await.unwrap_err();
    assert_eq!(class(&e), NS_QUOTA_EXCEEDED, "{e:?}");
    assert_eq!(usage(&client, "/qa").await?, (4, 8000));

    // Space: a 1 MiB block × 2 replicas fits in 2 MiB once; a second open block does not.
    common::native_write(&client, "/qb/g1", &[3u8; 3000], opts(), 3000).await?;
    assert_eq!(usage(&client, "/qb").await?, (2, 6000));
    let mut w = client.create("/qb/g2", opts()).await?;
    let r = w.write_bytes(bytes::Bytes::from(vec![4u8; 100])).await;
    let r = match r {
        Ok(_) => w.close().await,
        Err(e) => Err(e),
    };
    let e = r.expect_err("over the space quota");
    assert!(format!("{e:?}").contains(DS_QUOTA_EXCEEDED), "{e:?}");
    // The failed block left nothing: g2 holds no block and consumes nothing.
    assert_eq!(usage(&client, "/qb").await?, (3, 6000));
    assert!(client.delete("/qb/g2", false).await?);
    assert_eq!(usage(&client, "/qb").await?, (2, 6000));
    set_quota(&addr, &user, "/qb", QUOTA_DONT_SET, 3 * MIB as i64, None).await?;

    // Rename between quota directories moves the usage; into a full one it fails.
    client.rename("/qa/sub/f2", "/qb/f2", false).await?;
    assert_eq!(usage(&client, "/qa").await?, (3, 2000));
    assert_eq!(usage(&client, "/qb").await?, (3, 12000));
    client.mkdirs("/qa/x", 0o755, true).await?;
    let e = client.rename("/qb/f2", "/qa/f2", false).await.unwrap_err();
    assert_eq!(class(&e), NS_QUOTA_EXCEEDED, "{e:?}");
    assert!(client.get_file_info("/qb/f2").await.is_ok());

    // Append (counted at the block size while open, the real length after close).
    let mut w = client.append("/qb/g1").await?;
    w.write_bytes(bytes::Bytes::from(vec![5u8; 500])).await?;
    w.close().await?;
    assert_eq!(usage(&client, "/qb").await?, (3, 13000));
    // setrep and delete.
    client.set_replication("/qb/f2", 1).await?;
    assert_eq!(usage(&client, "/qb").await?, (3, 10000));
    assert!(client.delete("/qa/x", false).await?);
    assert_eq!(usage(&client, "/qa").await?, (3, 2000));

    let want = format!(
        "{:>12} {:>15} {:>15} {:>15} {:>12} {:>12} {:>18} /qa\n{:>12} {:>15} {:>15} {:>15} {:>12} {:>12} {:>18} /qb\n",
        "4", "1", "none", "inf", 2, 1, "1000", "none", "inf", "3 M", "3.0 M", 1, 2, "6.3 K"
    );
    if let Some(sh) = JavaShell::new(&uri, "quotas_enforced_and_usage_kept")? {
        let out = sh.run(&["-count", "-q", "-h", "/qa", "/qb"]).await?.ok();
        assert_eq!(out.stdout_str(), want);
    }

    // NameNode restart: edit replay, then the image.
    for save in [false, true] {
        if save {
            set_safe_mode(&addr, &user, SafeModeAction::Enter).await?;
            save_namespace(&addr, &user, 0, 0).await?;
            set_safe_mode(&addr, &user, SafeModeAction::Leave).await?;
        }
        cluster.restart_namenode(&[]).await?;
        common::poll_until("start-up safe mode off", Duration::from_secs(60), || {
            let (addr, user) = (addr.clone(), user.clone());
            async move {
                match set_safe_mode(&addr, &user, SafeModeAction::Get).await {
                    Ok(false) => Ok(()),
                    other => Err(format!("{other:?}")),
                }
            }
        })
        .await?;
        let client = common::native_client(&uri)?;
        assert_eq!(usage(&client, "/qa").await?, (3, 2000));
        assert_eq!(usage(&client, "/qb").await?, (3, 10000));
        let cs = client.get_content_summary("/qb").await?;
        assert_eq!((cs.quota as i64, cs.space_quota), (-1, 3 * MIB));
        client.mkdirs("/qa/y", 0o755, true).await?;
        let e = client.mkdirs("/qa/z", 0o755, true).await.unwrap_err();
        assert_eq!(class(&e), NS_QUOTA_EXCEEDED, "{e:?}");
        assert!(client.delete("/qa/y", false).await?);
    }
    set_quota(&addr, &user, "/qa", QUOTA_RESET, QUOTA_RESET, None).await?;
    let client = common::native_client(&uri)?;
    client.mkdirs("/qa/z", 0o755, true).await?;
    Ok(())
}
