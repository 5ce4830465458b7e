//! Issue 4, "What must work" item 4: a NameNode restarted while one of three DataNodes is
//! down (replication-1 files on it) stays in safe mode, says how many blocks it waits for,
//! refuses mutations with SafeModeException, and leaves after the extension once the
//! DataNode is back.

use crate::common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{data, fs, write_file};
use rhdfs_client::ClientError;

fn has_blocks(dir: &Path) -> bool {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return false;
    };
    rd.flatten().any(|e| {
        let p = e.path();
        if p.is_dir() {
            has_blocks(&p)
        } else {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("blk_") && !n.ends_with(".meta"))
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn restart_with_a_datanode_missing_stays_in_safe_mode() -> anyhow::Result<()> {
    let mut c = rhdfs_minicluster::MiniCluster::builder()
        .datanodes(3)
        .conf("dfs.namenode.fs-limits.min-block-size", "0")
        .conf("dfs.replication", "1")
        .conf("dfs.heartbeat.interval", "1")
        .conf("dfs.namenode.safemode.extension", "2000")
        .wait_ready(Duration::from_secs(60))
        .build()
        .await?;
    let client = fs(&c, &[("dfs.replication", "1")]).await?;
    for i in 0..12 {
        write_file(&client, &format!("/f{i}"), &data(1000, i)).await?;
    }
    drop(client);
    let victim = (0..3)
        .find(|&i| {
            c.datanode(i)
                .is_some_and(|dn| dn.data_dirs().iter().any(|d| has_blocks(d)))
        })
        .expect("some DataNode holds blocks");
    c.stop_datanode(victim).await?;
    c.restart_namenode(&[]).await?;

    let client = fs(&c, &[]).await?;
    // The two live DataNodes report; the victim's blocks stay missing.
    tokio::time::sleep(Duration::from_secs(3)).await;
    match client.mkdirs("/x", None).await {
        Err(ClientError::Remote {
            class_name,
            message,
        }) => {
            assert_eq!(
                class_name,
                "org.apache.hadoop.hdfs.server.namenode.SafeModeException"
            );
            assert!(
                message.contains("Name node is in safe mode. The reported blocks")
                    && message.contains("needs additional"),
                "{message}"
            );
        }
        other => panic!("mkdirs in safe mode: {other:?}"),
    }
    c.restart_datanode(victim).await?;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match client.mkdirs("/x", None).await {
            Ok(true) => break,
            Ok(false) => panic!("mkdirs returned false"),
            Err(ClientError::Remote { class_name, .. })
                if class_name.ends_with("SafeModeException") =>
            {
                assert!(Instant::now() < deadline, "never left safe mode");
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            Err(e) => panic!("{e}"),
        }
    }
    c.shutdown().await;
    Ok(())
}
