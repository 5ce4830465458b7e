//! Issue 12's WebHDFS operations: OPEN with an offset at or past the end refused by the
//! NameNode (403, Hadoop's "Offset=... out of the range" IOException), GET_BLOCK_LOCATIONS
//! (LocatedBlocks JSON as Hadoop's JsonUtil writes it) and CHECKACCESS (fsaction).

use crate::common;

use std::time::Duration;

use rhdfs_client::{CreateOptions, FileSystem};
use rhdfs_minicluster::MiniCluster;
use rhdfs_namenode::http::client::{Response, encode_component, request};
use serde_json::Value;

const T: Duration = Duration::from_secs(30);

async fn call(nn: &str, user: &str, path: &str, op: &str, extra: &str) -> anyhow::Result<Response> {
    let target = format!(
        "/webhdfs/v1{}?op={op}&user.name={user}{extra}",
        encode_component(path)
    );
    Ok(request(nn, "GET", &target, None, T).await?)
}

fn remote_exception(r: &Response) -> anyhow::Result<(String, String, String)> {
    let v: Value = serde_json::from_slice(&r.body)?;
    let e = &v["RemoteException"];
    let s = |k: &str| e[k].as_str().unwrap_or_default().to_string();
    Ok((s("exception"), s("javaClassName"), s("message")))
}

async fn write(fs: &FileSystem, path: &str, data: &[u8]) -> anyhow::Result<()> {
    let mut w = fs
        .create(
            path,
            CreateOptions {
                replication: Some(2),
                block_size: Some(1024),
                ..Default::default()
            },
        )
        .await?;
    w.write(data).await?;
    w.close().await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn open_offset_block_locations_and_check_access() -> anyhow::Result<()> {
    let c = MiniCluster::builder()
        .datanodes(2)
        .conf("dfs.namenode.fs-limits.min-block-size", "0")
        .conf("dfs.blocksize", "1024")
        .build()
        .await?;
    let nn = common::nn_http(&c)?;
    let me = common::current_user();
    let fs = FileSystem::connect(&c.uri()).await?;
    let data = common::random_bytes(2500, 3);
    write(&fs, "/o/f", &data).await?;
    write(&fs, "/o/empty", b"").await?;

    // OPEN: an offset inside the file is redirected; at or past the end it is the NameNode's
    // IOException (403); an empty file is redirected at offset 0 (Hadoop checks len > 0).
    for off in [0, 2499] {
        let r = call(&nn, &me, "/o/f", "OPEN", &format!("&offset={off}")).await?;
        assert_eq!(r.code, 307, "offset {off}: {}", r.text());
    }
    for off in [2500u64, 2501, 1 << 40] {
        let r = call(&nn, &me, "/o/f", "OPEN", &format!("&offset={off}")).await?;
        assert_eq!(r.code, 403, "offset {off}: {}", r.text());
        let (simple, class, msg) = remote_exception(&r)?;
        assert_eq!(
            (simple.as_str(), class.as_str()),
            ("IOException", "java.io.IOException")
        );
        assert_eq!(
            msg,
            format!("Offset={off} out of the range [0, 2500); OPEN, path=/o/f")
        );
    }
    let r = call(&nn, &me, "/o/empty", "OPEN", "").await?;
    assert_eq!(r.code, 307, "{}", r.text());
    let r = call(&nn, &me, "/o/none", "OPEN", "").await?;
    assert_eq!(r.code, 404, "{}", r.text());
    assert_eq!(remote_exception(&r)?.2, "File /o/none not found.");

    // GET_BLOCK_LOCATIONS: the RPC answer, as JSON.
    let r = call(
        &nn,
        &me,
        "/o/f",
        "GET_BLOCK_LOCATIONS",
        "&offset=1000&length=100",
    )
    .await?;
    assert_eq!(r.code, 200, "{}", r.text());
    let v: Value = serde_json::from_slice(&r.body)?;
    let lbs = &v["LocatedBlocks"];
    assert_eq!(lbs["fileLength"], 2500);
    assert_eq!(lbs["isUnderConstruction"], false);
    assert_eq!(lbs["isLastBlockComplete"], true);
    let rpc = fs.located_blocks("/o/f", 1000, 100).await?;
    let blocks = lbs["locatedBlocks"].as_array().cloned().unwrap_or_default();
    assert_eq!(blocks.len(), rpc.blocks.len());
    assert!(!blocks.is_empty(), "{lbs}");
    let (b, want) = (&blocks[0], &rpc.blocks[0]);
    assert_eq!(b["startOffset"], 0);
    assert_eq!(b["isCorrupt"], false);
    assert_eq!(b["block"]["blockId"], want.b.block_id);
    assert_eq!(b["block"]["blockPoolId"], want.b.pool_id.as_str());
    assert_eq!(b["block"]["generationStamp"], want.b.generation_stamp);
    assert_eq!(b["block"]["numBytes"], 1024);
    assert_eq!(b["blockToken"]["urlString"], "AAAAAA");
    assert_eq!(b["cachedLocations"], serde_json::json!([]));
    assert_eq!(b["storageTypes"], serde_json::json!(["DISK", "DISK"]));
    let locs = b["locations"].as_array().cloned().unwrap_or_default();
    assert_eq!(locs.len(), 2);
    // Replicas at the same distance come in a random order on each call: matched by id.
    for l in &locs {
        let d = want
            .locs
            .iter()
            .find(|d| l["storageID"] == d.id.datanode_uuid.as_str())
            .expect("a location of the RPC answer");
        assert_eq!(l["ipAddr"], d.id.ip_addr.as_str());
        assert_eq!(l["xferPort"], d.id.xfer_port);
        assert_eq!(l["name"], format!("{}:{}", d.id.ip_addr, d.id.xfer_port));
        assert_eq!(l["storageID"], d.id.datanode_uuid.as_str());
        assert_eq!(l["adminState"], "NORMAL");
        assert_eq!(l["networkLocation"], "/default-rack");
        for k in [
            "capacity",
            "dfsUsed",
            "remaining",
            "lastUpdate",
            "infoPort",
            "ipcPort",
        ] {
            assert!(l[k].is_u64(), "{k} in {l}");
        }
    }
    assert_eq!(lbs["lastLocatedBlock"]["startOffset"], 2048);
    assert_eq!(lbs["lastLocatedBlock"]["block"]["numBytes"], 452);
    let r = call(&nn, &me, "/o/none", "GET_BLOCK_LOCATIONS", "").await?;
    assert_eq!(r.code, 404, "{}", r.text());

    // CHECKACCESS: the owner may do anything; another user may read a 644 file but not write
    // it; a missing path is "Path not found"; fsaction is required and checked.
    let r = call(&nn, &me, "/o/f", "CHECKACCESS", "&fsaction=rwx").await?;
    assert_eq!((r.code, r.body.len()), (200, 0), "{}", r.text());
    let r = call(&nn, "mallory", "/o/f", "CHECKACCESS", "&fsaction=r--").await?;
    assert_eq!(r.code, 200, "{}", r.text());
    let r = call(&nn, "mallory", "/o/f", "CHECKACCESS", "&fsaction=-w-").await?;
    assert_eq!(r.code, 403, "{}", r.text());
    let (_, class, msg) = remote_exception(&r)?;
    assert_eq!(class, "org.apache.hadoop.security.AccessControlException");
    assert!(
        msg.starts_with("Permission denied: user=mallory, access=WRITE, inode=\"/o/f\""),
        "{msg}"
    );
    let r = call(&nn, &me, "/o/none", "CHECKACCESS", "&fsaction=r--").await?;
    assert_eq!(r.code, 404, "{}", r.text());
    assert_eq!(remote_exception(&r)?.2, "Path not found");
    let r = call(&nn, &me, "/o/f", "CHECKACCESS", "").await?;
    assert_eq!(r.code, 400, "{}", r.text());
    assert_eq!(
        remote_exception(&r)?.2,
        "Required param fsaction for op: CHECKACCESS is null or empty"
    );
    let r = call(&nn, &me, "/o/f", "CHECKACCESS", "&fsaction=rwxr").await?;
    assert_eq!(r.code, 400, "{}", r.text());
    c.shutdown().await;
    Ok(())
}
