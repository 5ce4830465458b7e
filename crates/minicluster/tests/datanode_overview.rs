//! The DataNode's overview page (`/` on its web port): the block pool with its NameNode
//! connection, every volume (directory, storage type, capacity, used, reserved, state) and
//! the recent transfers, with figures that agree with the same DataNode's `/jmx`.

use crate::common;

use std::time::Duration;

use hdfs_native::WriteOptions;
use rhdfs_minicluster::MiniCluster;
use rhdfs_namenode::http::client::request;
use serde_json::Value;

const T: Duration = Duration::from_secs(60);
const RESERVED: u64 = 1 << 20;

async fn get_text(addr: &str, path: &str) -> Result<String, String> {
    let r = request(addr, "GET", path, None, T)
        .await
        .map_err(|e| e.to_string())?;
    if r.code != 200 {
        return Err(format!("GET {path}: HTTP {}", r.code));
    }
    Ok(r.text())
}

/// The cells of each body row of `<table id="{id}">`, unescaped.
fn table(page: &str, id: &str) -> Result<Vec<Vec<String>>, String> {
    let start = page
        .find(&format!("<table id=\"{id}\""))
        .ok_or_else(|| format!("no table {id} in\n{page}"))?;
    let rest = &page[start..];
    let body = &rest[..rest.find("</table>").ok_or("unclosed table")?];
    Ok(body
        .split("<tr>")
        .skip(1)
        .filter(|r| r.contains("<td>"))
        .map(|r| {
            r.split("<td>")
                .skip(1)
                .map(|c| {
                    c.split("</td>")
                        .next()
                        .unwrap_or_default()
                        .replace("&quot;", "\"")
                        .replace("&lt;", "<")
                        .replace("&gt;", ">")
                        .replace("&amp;", "&")
                })
                .collect()
        })
        .collect())
}

fn bean<'a>(doc: &'a Value, name: &str) -> Result<&'a Value, String> {
    doc["beans"]
        .as_array()
        .and_then(|a| a.iter().find(|b| b["name"] == name))
        .ok_or_else(|| format!("no bean {name} in {doc}"))
}

/// One DataNode's page checked against its /jmx; Err says what does not agree yet.
async fn check_node(
    addr: &str,
    data_dirs: &[std::path::PathBuf],
    bpid: &str,
    nn_rpc: &str,
    file_len: u64,
) -> Result<Vec<Vec<String>>, String> {
    let page = get_text(addr, "/").await?;
    let doc: Value =
        serde_json::from_str(&get_text(addr, "/jmx").await?).map_err(|e| format!("jmx: {e}"))?;
    let info = bean(&doc, "Hadoop:service=DataNode,name=DataNodeInfo")?;
    let fsd = bean(&doc, "Hadoop:service=DataNode,name=FSDatasetState")?;

    // Block pool and NameNode connection, as BPServiceActorInfo says.
    let pools = table(&page, "block-pools")?;
    let [pool] = &pools[..] else {
        return Err(format!("one block pool expected: {pools:?}"));
    };
    let actors: Value = serde_json::from_str(info["BPServiceActorInfo"].as_str().unwrap_or(""))
        .map_err(|e| format!("BPServiceActorInfo: {e}"))?;
    let actor = &actors[0];
    if pool[0] != bpid || actor["BlockPoolID"] != bpid {
        return Err(format!("block pool {pool:?} / {actor} is not {bpid}"));
    }
    if pool[1] != nn_rpc || actor["NamenodeAddress"] != nn_rpc {
        return Err(format!("NameNode {pool:?} / {actor} is not {nn_rpc}"));
    }
    if pool[2] != "RUNNING" || actor["ActorState"] != "RUNNING" {
        return Err(format!("not running: {pool:?} / {actor}"));
    }
    for (cell, attr) in [(&pool[3], "LastHeartbeat"), (&pool[4], "LastBlockReport")] {
        let secs: i64 = actor[attr]
            .as_str()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("{attr} in {actor}"))?;
        if secs < 0 || !cell.ends_with(" s ago") {
            return Err(format!("{attr}: page {cell:?}, jmx {secs}"));
        }
    }

    // Volumes: one row per data dir, figures as VolumeInfo and FSDatasetState give them.
    let vols = table(&page, "volumes")?;
    if vols.len() != data_dirs.len() {
        return Err(format!("{} data dirs, page rows {vols:?}", data_dirs.len()));
    }
    let vinfo: Value = serde_json::from_str(info["VolumeInfo"].as_str().unwrap_or(""))
        .map_err(|e| format!("VolumeInfo: {e}"))?;
    let mut capacity = 0u64;
    for dir in data_dirs {
        let d = dir.display().to_string();
        let row = vols
            .iter()
            .find(|r| r[0] == d)
            .ok_or_else(|| format!("no row for {d} in {vols:?}"))?;
        let v = &vinfo[format!("{d}/current")];
        let n = |i: usize| row[i].parse::<u64>().map_err(|e| format!("{row:?}: {e}"));
        let same = [
            (row[2].as_str() == "DISK", v["storageType"] == "DISK"),
            (n(4)? == v["usedSpace"].as_u64().unwrap_or(u64::MAX), true),
            (n(5)? == RESERVED, v["reservedSpace"] == RESERVED),
            (n(7)? == v["numBlocks"].as_u64().unwrap_or(u64::MAX), true),
            (row[8] == "in service", true),
        ];
        if let Some(i) = same.iter().position(|(a, b)| !(a & b)) {
            return Err(format!("volume {d}, check {i}: page {row:?}, jmx {v}"));
        }
        capacity += n(3)?;
    }
    if fsd["Capacity"].as_u64() != Some(capacity) {
        return Err(format!("capacity: page {capacity}, jmx {fsd}"));
    }
    if !table(&page, "failed-volumes")?.is_empty() {
        return Err("a volume failed".into());
    }

    // The file's replica came in here.
    let transfers = table(&page, "transfers")?;
    let wrote = transfers
        .iter()
        .any(|t| t[1] == "write" && t[4] == file_len.to_string() && t[3].starts_with("blk_"));
    if !wrote {
        return Err(format!("no write of {file_len} bytes in {transfers:?}"));
    }
    Ok(transfers)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn overview_shows_block_pool_volumes_and_transfers_as_jmx_does() -> anyhow::Result<()> {
    let logs = tempfile::tempdir()?;
    std::fs::write(logs.path().join("dn-test.log"), "a <logged> line\n")?;
    let cluster = MiniCluster::builder()
        .conf("hadoop.log.dir", logs.path().display().to_string())
        .datanodes(2)
        .volumes_per_datanode(2)
        .conf("dfs.heartbeat.interval", "1")
        .conf("dfs.replication", "2")
        .conf("dfs.datanode.du.reserved", RESERVED.to_string())
        .build()
        .await?;
    cluster.wait_live_datanodes(2, T).await?;
    let client = common::native_client(&cluster.uri())?;
    let data = common::random_bytes(300_000, 11);
    common::native_write(
        &client,
        "/o",
        &data,
        WriteOptions::default().replication(2),
        data.len(),
    )
    .await?;
    let back = common::native_read(&client, "/o").await?;
    common::assert_same_bytes("/o", &back, &data);

    let nn = common::nn_http(&cluster)?;
    let nn_doc: Value = serde_json::from_str(
        &get_text(&nn, "/jmx?qry=Hadoop:service=NameNode,name=NameNodeInfo")
            .await
            .map_err(anyhow::Error::msg)?,
    )?;
    let bpid = bean(&nn_doc, "Hadoop:service=NameNode,name=NameNodeInfo")
        .map_err(anyhow::Error::msg)?["BlockPoolId"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let nn_rpc = cluster.namenode().rpc_addr().to_string();
    let file_len = data.len() as u64;
    let mut written = Vec::new();
    let mut reads = Vec::new();
    for (_, dn) in cluster.running_datanodes() {
        let addr = dn.http_addr().to_string();
        let dirs = dn.data_dirs().to_vec();
        let transfers = common::poll_until("the overview to agree with /jmx", T, || {
            let (addr, dirs, bpid, nn_rpc) =
                (addr.clone(), dirs.clone(), bpid.clone(), nn_rpc.clone());
            async move { check_node(&addr, &dirs, &bpid, &nn_rpc, file_len).await }
        })
        .await?;
        for t in transfers {
            match t[1].as_str() {
                "write" => written.push(t[3].clone()),
                "read" => reads.push(t),
                _ => {}
            }
        }
    }
    // /logs/ lists hadoop.log.dir and serves its plain files, nothing outside it.
    let (_, dn) = cluster.running_datanodes().next().expect("a DataNode");
    let addr = dn.http_addr().to_string();
    let listing = get_text(&addr, "/logs/")
        .await
        .map_err(anyhow::Error::msg)?;
    assert!(listing.contains(">dn-test.log</a>"), "{listing}");
    let served = get_text(&addr, "/logs/dn-test.log")
        .await
        .map_err(anyhow::Error::msg)?;
    assert_eq!(served, "a <logged> line\n");
    assert!(get_text(&addr, "/logs/..%2Fetc%2Fpasswd").await.is_err());
    let page = get_text(&addr, "/").await.map_err(anyhow::Error::msg)?;
    assert!(page.contains("href=\"/logs/\""), "{page}");
    // Both replicas of the one block, and the client's read of it.
    assert_eq!(written.len(), 2, "{written:?}");
    assert_eq!(written[0], written[1]);
    let read: u64 = reads
        .iter()
        .filter(|t| t[3] == written[0] && !t[2].is_empty())
        .filter_map(|t| t[4].parse::<u64>().ok())
        .sum();
    assert!(read >= data.len() as u64, "{reads:?}");
    cluster.shutdown().await;
    Ok(())
}
