//! Issue 4, "What must work" item 4, through the Apache Hadoop Java client: a NameNode
//! restarted while a DataNode holding replication-1 blocks is down stays in safe mode, and a
//! mutation from `FsShell` fails with the NameNode's SafeModeException message; once the
//! DataNode is back the NameNode leaves safe mode after the extension and the same command works.

use crate::common;

use std::time::Duration;

use common::java::JavaShell;
use common::{all_block_files, native_client, native_write, poll_until, random_bytes};
use hdfs_native::WriteOptions;
use rhdfs_minicluster::MiniCluster;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn java_mutation_in_safe_mode_gets_safe_mode_exception() -> anyhow::Result<()> {
    let mut c = MiniCluster::builder()
        .datanodes(3)
        .conf("dfs.heartbeat.interval", "1")
        .conf("dfs.namenode.safemode.extension", "2000")
        .build()
        .await?;
    let Some(shell) = JavaShell::new(&c.uri(), "java_safe_mode")? else {
        c.shutdown().await;
        return Ok(());
    };
    let client = native_client(&c.uri())?;
    let opts = WriteOptions::default().replication(1);
    for i in 0..9u64 {
        let path = format!("/r1/f{i}");
        native_write(&client, &path, &random_bytes(700, i), opts.clone(), 700).await?;
    }
    drop(client);
    let victim = (0..c.num_datanodes())
        .find(|&i| !all_block_files(&c.datanode_data_dirs(i)).is_empty())
        .ok_or_else(|| anyhow::anyhow!("no DataNode holds a block"))?;
    c.stop_datanode(victim).await?;
    c.restart_namenode(&[]).await?;

    // The two live DataNodes report; the victim's blocks keep the NameNode in safe mode.
    let out = poll_until("a safe-mode refusal", Duration::from_secs(30), || async {
        let out = shell
            .run(&["-mkdir", "/during"])
            .await
            .map_err(|e| e.to_string())?;
        if out.code == Some(1) {
            Ok(out)
        } else {
            Err(format!("exit {:?}: {}", out.code, out.errors()))
        }
    })
    .await?;
    let err = out.errors();
    assert!(
        err.contains("mkdir: Cannot create directory /during. Name node is in safe mode.")
            && err.contains("The reported blocks")
            && err.contains("needs additional"),
        "unexpected FsShell error: {err}"
    );
    shell.run(&["-test", "-e", "/during"]).await?.code_is(1);

    c.restart_datanode(victim).await?;
    poll_until("leaving safe mode", Duration::from_secs(60), || async {
        let out = shell
            .run(&["-mkdir", "/after"])
            .await
            .map_err(|e| e.to_string())?;
        if out.code == Some(0) {
            Ok(())
        } else {
            Err(format!("exit {:?}: {}", out.code, out.errors()))
        }
    })
    .await?;
    shell.run(&["-test", "-d", "/after"]).await?.ok();
    c.shutdown().await;
    Ok(())
}
