//! Issue 15, StartupProgress as Hadoop's: a NameNode restarted over an image and edits after
//! it reports in `/jmx` (Hadoop's StartupProgressMetrics attribute names) the inodes it
//! loaded from the image of the image's count, the edits it replayed of those read, a
//! checkpoint phase that begins and ends at once (none is saved at start-up), and safe mode's
//! safe blocks of the complete blocks; every phase and the whole at 1.0 once safe mode is
//! over. `/startup.html` shows the same counts.

use crate::common;

use std::time::Duration;

use hdfs_native::WriteOptions;
use rhdfs_minicluster::MiniCluster;
use rhdfs_namenode::http::client::request;
use serde_json::Value;

const T: Duration = Duration::from_secs(60);

async fn startup_bean(addr: &str) -> anyhow::Result<Value> {
    let r = request(
        addr,
        "GET",
        "/jmx?qry=Hadoop:service=NameNode,name=StartupProgress",
        None,
        T,
    )
    .await?;
    anyhow::ensure!(r.code == 200, "HTTP {}: {}", r.code, r.text());
    let doc: Value = serde_json::from_slice(&r.body)?;
    doc["beans"]
        .get(0)
        .cloned()
        .ok_or_else(|| anyhow::anyhow!("no StartupProgress bean in {doc}"))
}

fn num(b: &Value, attr: &str) -> anyhow::Result<u64> {
    b[attr]
        .as_u64()
        .ok_or_else(|| anyhow::anyhow!("{attr} is not a whole number in {b}"))
}

fn pct(b: &Value, attr: &str) -> anyhow::Result<f64> {
    b[attr]
        .as_f64()
        .ok_or_else(|| anyhow::anyhow!("{attr} is not a number in {b}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn restarted_namenode_reports_what_it_loaded() -> anyhow::Result<()> {
    let mut cluster = MiniCluster::builder()
        .datanodes(1)
        .conf("dfs.namenode.safemode.extension", "0")
        .conf("dfs.heartbeat.interval", "1s")
        .build()
        .await?;
    let client = common::native_client(&cluster.uri())?;
    let opts = || WriteOptions::default().replication(1);
    // In the image: 3 directories of 4 files each, one block per file.
    for d in 0..3 {
        client.mkdirs(&format!("/img/d{d}"), 0o755, true).await?;
        for f in 0..4 {
            let data = common::random_bytes(1000 + f, (d * 10 + f) as u64);
            common::native_write(&client, &format!("/img/d{d}/f{f}"), &data, opts(), 4096).await?;
        }
    }
    let fs = cluster.namenode().namesystem().clone();
    let image_inodes = fs.with_ns(|ns| ns.total_files_and_dirs()) as u64;
    let image_txid = fs.checkpoint_now().await?;
    // After it, edits only: more files, a rename, a delete.
    client.mkdirs("/edits", 0o755, true).await?;
    for f in 0..5 {
        let data = common::random_bytes(500, 100 + f as u64);
        common::native_write(&client, &format!("/edits/f{f}"), &data, opts(), 4096).await?;
    }
    client.rename("/edits/f0", "/edits/g0", false).await?;
    client.delete("/img/d2/f3", false).await?;
    let last_txid = fs.with_ns(|ns| ns.last_txid());
    // The delete's block leaves the blocks map in the background after the delete is
    // answered (Hadoop's incremental removal): counted once it has.
    let bm = cluster.namenode().block_manager();
    let complete_blocks = common::poll_until("the deleted block's removal", T, || {
        let s = bm.fs_stats();
        async move {
            match s.pending_removal {
                0 => Ok(s.complete_blocks),
                n => Err(format!("{n} blocks still to remove")),
            }
        }
    })
    .await?;
    drop(bm);
    drop(fs);
    anyhow::ensure!(last_txid > image_txid, "no edits after image {image_txid}");

    cluster.restart_namenode(&[]).await?;
    let nn = common::nn_http(&cluster)?;
    let b = common::poll_until("start-up safe mode to end", T, || {
        let nn = nn.clone();
        async move {
            let b = startup_bean(&nn).await.map_err(|e| e.to_string())?;
            match pct(&b, "PercentComplete") {
                Ok(1.0) => Ok(b),
                Ok(p) => Err(format!("PercentComplete {p}: {b}")),
                Err(e) => Err(e.to_string()),
            }
        }
    })
    .await?;

    assert_eq!(num(&b, "LoadingFsImageTotal")?, image_inodes, "{b}");
    assert_eq!(num(&b, "LoadingFsImageCount")?, image_inodes, "{b}");
    let edits = last_txid - image_txid;
    assert_eq!(num(&b, "LoadingEditsTotal")?, edits, "{b}");
    assert_eq!(num(&b, "LoadingEditsCount")?, edits, "{b}");
    assert_eq!(num(&b, "SavingCheckpointCount")?, 0, "{b}");
    assert_eq!(num(&b, "SavingCheckpointTotal")?, 0, "{b}");
    assert_eq!(num(&b, "SafeModeTotal")?, complete_blocks, "{b}");
    assert_eq!(num(&b, "SafeModeCount")?, complete_blocks, "{b}");
    for phase in [
        "LoadingFsImage",
        "LoadingEdits",
        "SavingCheckpoint",
        "SafeMode",
    ] {
        assert_eq!(pct(&b, &format!("{phase}PercentComplete"))?, 1.0, "{b}");
        num(&b, &format!("{phase}ElapsedTime"))?;
    }
    // The whole spans the phases; once safe mode ended it no longer moves.
    let elapsed = num(&b, "ElapsedTime")?;
    assert!(elapsed >= num(&b, "SafeModeElapsedTime")?, "{b}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(num(&startup_bean(&nn).await?, "ElapsedTime")?, elapsed);

    let page = request(&nn, "GET", "/startup.html", None, T).await?;
    let html = page.text();
    assert!(
        html.contains(&format!(
            "<tr data-phase=\"LoadingFsImage\"><td>Loading fsimage</td><td>COMPLETE</td>\
             <td class=\"n\">{image_inodes}</td><td class=\"n\">{image_inodes}</td>"
        )),
        "{html}"
    );
    assert!(
        html.contains(&format!(
            "<tr data-phase=\"LoadingEdits\"><td>Loading edits</td><td>COMPLETE</td>\
             <td class=\"n\">{edits}</td><td class=\"n\">{edits}</td>"
        )),
        "{html}"
    );
    cluster.shutdown().await;
    Ok(())
}
