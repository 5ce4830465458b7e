//! Issue 2, "What must work" item 4: a DataNode dies in the middle of a Java client's write; the
//! client recovers the pipeline and the file reads back byte-identical.
//!
//! The test feeds 10 MiB to `FsShell -put - <dst>` (8 MiB blocks) through its stdin and waits
//! until the victim DataNode has finalized block 1 and holds part of block 2 (an `rbw/blk_*` file
//! shorter than a block): the pipeline is parked mid-block, waiting for input. It stops that
//! DataNode, feeds the rest and closes stdin. The partial replica left on the dead node's disk
//! names the block that was in flight; that block must end up longer, on the survivors only.

use crate::common;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::Context;
use common::checksum::{file_checksum, parse_checksum_line};
use common::java::JavaShell;
use common::rpc::{CLIENT_PROTOCOL, RawRpc};
use rhdfs_minicluster::MiniCluster;
use tokio::io::AsyncWriteExt;

const MIB: usize = 1024 * 1024;

/// `rbw` replicas under `dirs` holding part of a block (more than nothing, less than `block`):
/// (block id, bytes on disk).
fn partial_rbw(dirs: &[PathBuf], block: u64) -> Vec<(u64, u64)> {
    common::all_block_files(dirs)
        .into_iter()
        .filter(|p| common::is_rbw(p))
        .filter_map(|p| {
            let len = std::fs::metadata(&p).ok()?.len();
            let id = p
                .file_name()?
                .to_str()?
                .strip_prefix("blk_")?
                .parse()
                .ok()?;
            (len > 0 && len < block).then_some((id, len))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn datanode_killed_during_java_put() -> anyhow::Result<()> {
    let mut cluster = MiniCluster::builder().datanodes(3).build().await?;
    let uri = cluster.uri();
    let Some(sh) = JavaShell::new(&uri, "datanode_killed_during_java_put")? else {
        return Ok(());
    };
    let native = common::native_client(&uri)?;
    native.mkdirs("/recover", 0o755, true).await?;

    let block = 8 * MIB;
    let data = common::random_bytes(24 * MIB + 12345, 4);
    let victim = 1;
    let victim_dirs = cluster.datanode_data_dirs(victim);

    let mut put = sh.spawn_with_stdin(&[
        "-D",
        &format!("dfs.blocksize={block}"),
        "-put",
        "-",
        "/recover/f",
    ])?;
    let mut stdin = put.stdin.take().context("stdin not piped")?;

    // First part: a bit more than one block, so the write is well under way.
    let first = 10 * MIB;
    for chunk in data[..first].chunks(64 * 1024) {
        stdin.write_all(chunk).await?;
    }
    stdin.flush().await?;

    // Wait until the victim has finalized the first block and holds part of the second: the
    // pipeline is parked mid-block, waiting for more input from us.
    let parked = common::poll_until(
        "the victim DataNode to finish block 1 and hold part of block 2",
        Duration::from_secs(120),
        || {
            let dirs = victim_dirs.clone();
            async move {
                let finalized = common::all_block_files(&dirs)
                    .iter()
                    .filter(|p| common::is_finalized(p))
                    .count();
                let partial = partial_rbw(&dirs, block as u64);
                if finalized >= 1 && !partial.is_empty() {
                    Ok(partial)
                } else {
                    Err(format!("{finalized} finalized, partial rbw {partial:?}"))
                }
            }
        },
    )
    .await?;
    eprintln!("victim DataNode {victim} is writing {parked:?}; stopping it");

    // Keep feeding (slowly) while the DataNode stops, in case stopping waits for its open
    // connections; once it is down, feed the rest at full speed, then EOF.
    let stopped = Arc::new(AtomicBool::new(false));
    let fed = Arc::new(AtomicUsize::new(first));
    let feeder = {
        let stopped = stopped.clone();
        let fed = fed.clone();
        let rest = data[first..].to_vec();
        tokio::spawn(async move {
            for chunk in rest.chunks(64 * 1024) {
                stdin.write_all(chunk).await?;
                fed.fetch_add(chunk.len(), Ordering::SeqCst);
                if !stopped.load(Ordering::SeqCst) {
                    tokio::time::sleep(Duration::from_millis(25)).await;
                }
            }
            stdin.flush().await?;
            drop(stdin);
            anyhow::Ok(())
        })
    };
    let victim_uuid = cluster.stop_datanode(victim).await?;
    stopped.store(true, Ordering::SeqCst);
    eprintln!(
        "DataNode {victim} ({victim_uuid}) stopped after {} of {} bytes were fed to -put",
        fed.load(Ordering::SeqCst),
        data.len()
    );
    // What the dead DataNode holds on disk now is what was in flight when it died.
    let inflight = partial_rbw(&victim_dirs, block as u64);
    eprintln!("partial replicas left on the stopped DataNode: {inflight:?}");
    let fed_ok = feeder.await?;
    let out = put.finish(common::java::DEFAULT_TIMEOUT).await?.ok();
    fed_ok.context("feeding -put's stdin")?;
    eprintln!("-put - finished; stderr:\n{}", out.errors());

    // The file is complete, has the right length, and reads back byte-identical, through both clients.
    let out = sh.run(&["-stat", "%b %o", "/recover/f"]).await?.ok();
    assert_eq!(out.lines()[0], format!("{} {block}", data.len()));
    sh.run(&["-test", "-e", "/recover/f._COPYING_"])
        .await?
        .code_is(1);
    let out = sh.run(&["-cat", "/recover/f"]).await?.ok();
    common::assert_same_bytes("-cat after pipeline recovery", &out.stdout, &data);
    let got = common::native_read(&native, "/recover/f").await?;
    common::assert_same_bytes("hdfs-native read after pipeline recovery", &got, &data);

    // Replicas on the surviving DataNodes carry correct checksums: -checksum matches.
    let out = sh.run(&["-checksum", "/recover/f"]).await?.ok();
    let (_, algo, value) = parse_checksum_line(&out.lines()[0]).context("-checksum output")?;
    assert_eq!((algo, value), file_checksum(&data, block));

    // Every block still has at least one live location, and the block list covers the file.
    let mut rpc = RawRpc::connect(&uri, CLIENT_PROTOCOL, &common::current_user()).await?;
    let lb = rpc.get_block_locations("/recover/f").await?;
    assert_eq!(lb.file_length, Some(data.len() as u64));
    assert_eq!(lb.blocks.len(), data.len().div_ceil(block));
    let total: u64 = lb
        .blocks
        .iter()
        .map(|b| b.b.as_ref().and_then(|e| e.num_bytes).unwrap_or(0))
        .sum();
    assert_eq!(total, data.len() as u64);
    for (i, b) in lb.blocks.iter().enumerate() {
        let live = b
            .locs
            .iter()
            .filter(|l| {
                l.id.as_ref().and_then(|id| id.datanode_uuid.as_deref())
                    != Some(victim_uuid.as_str())
            })
            .count();
        assert!(
            live >= 1,
            "block {i} has no location on a live DataNode: {b:?}"
        );
    }
    // The block that was being written when the DataNode died was recovered onto the survivors:
    // it is complete, longer than what the victim got, and the victim is not among its locations.
    assert!(
        !inflight.is_empty(),
        "the stopped DataNode holds no partial replica: it did not die mid-block"
    );
    for &(inflight_id, inflight_len) in &inflight {
        let recovered = lb
            .blocks
            .iter()
            .find(|b| b.b.as_ref().and_then(|e| e.block_id) == Some(inflight_id))
            .with_context(|| {
                format!("blk_{inflight_id} (in flight at the kill) is not in the file")
            })?;
        let len = recovered.b.as_ref().and_then(|e| e.num_bytes).unwrap_or(0);
        assert!(
            len > inflight_len,
            "blk_{inflight_id}: final length {len}, the victim had {inflight_len}"
        );
        let locs: Vec<String> = recovered
            .locs
            .iter()
            .filter_map(|l| l.id.as_ref()?.datanode_uuid.clone())
            .collect();
        assert!(
            !locs.is_empty() && !locs.contains(&victim_uuid),
            "blk_{inflight_id} locations after recovery: {locs:?} (victim {victim_uuid})"
        );
    }

    // A new write after the failure works too (the NameNode must not insist on the dead node).
    let small = common::random_bytes(3 * MIB, 5);
    let local = tempfile::tempdir()?;
    std::fs::write(local.path().join("small"), &small)?;
    sh.run(&[
        "-D",
        "dfs.blocksize=1048576",
        "-put",
        local.path().join("small").to_str().unwrap(),
        "/recover/after",
    ])
    .await?
    .ok();
    let out = sh.run(&["-cat", "/recover/after"]).await?.ok();
    common::assert_same_bytes("write after the DataNode died", &out.stdout, &small);

    cluster.shutdown().await;
    Ok(())
}
