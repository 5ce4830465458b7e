//! WebHDFS through plain HTTP: the NameNode's metadata operations, its 307 redirects to a
//! DataNode for OPEN / CREATE / APPEND / GETFILECHECKSUM, the DataNode's data path, and
//! errors as RemoteException JSON with Hadoop's status codes.

use crate::common;

use std::time::Duration;

use rhdfs_minicluster::MiniCluster;
use rhdfs_namenode::http::client::{Response, encode_component, request};
use serde_json::Value;

const MIB: usize = 1024 * 1024;
const T: Duration = Duration::from_secs(30);

/// host:port and path-and-query of an `http://` URL.
fn split_url(url: &str) -> anyhow::Result<(String, String)> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| anyhow::anyhow!("not an http URL: {url}"))?;
    let slash = rest.find('/').unwrap_or(rest.len());
    Ok((rest[..slash].to_string(), rest[slash..].to_string()))
}

struct Web {
    nn: String,
    user: String,
}

impl Web {
    fn target(&self, path: &str, op: &str, extra: &str) -> String {
        format!(
            "/webhdfs/v1{}?op={op}&user.name={}{extra}",
            encode_component(path),
            self.user
        )
    }

    async fn call(
        &self,
        method: &str,
        path: &str,
        op: &str,
        extra: &str,
    ) -> anyhow::Result<Response> {
        Ok(request(&self.nn, method, &self.target(path, op, extra), None, T).await?)
    }

    async fn json(&self, method: &str, path: &str, op: &str, extra: &str) -> anyhow::Result<Value> {
        let r = self.call(method, path, op, extra).await?;
        anyhow::ensure!(
            r.code == 200,
            "{method} {op} {path}: HTTP {} {}",
            r.code,
            r.text()
        );
        Ok(serde_json::from_slice(&r.body)?)
    }

    /// The NameNode's redirect for a data op, then the request to the DataNode.
    async fn data(
        &self,
        method: &str,
        path: &str,
        op: &str,
        extra: &str,
        body: Option<&[u8]>,
    ) -> anyhow::Result<Response> {
        let r = self.call(method, path, op, extra).await?;
        anyhow::ensure!(
            r.code == 307,
            "{op} {path}: expected a redirect, HTTP {} {}",
            r.code,
            r.text()
        );
        let loc = r
            .header("Location")
            .ok_or_else(|| anyhow::anyhow!("307 without Location"))?;
        anyhow::ensure!(loc.contains("namenoderpcaddress="), "{loc}");
        let (dn, target) = split_url(loc)?;
        Ok(request(&dn, method, &target, body, T).await?)
    }
}

fn remote_exception(r: &Response) -> anyhow::Result<(String, String)> {
    let v: Value = serde_json::from_slice(&r.body)?;
    let e = &v["RemoteException"];
    Ok((
        e["javaClassName"].as_str().unwrap_or_default().to_string(),
        e["message"].as_str().unwrap_or_default().to_string(),
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn webhdfs_metadata_and_data_through_redirects() -> anyhow::Result<()> {
    let c = MiniCluster::builder()
        .datanodes(3)
        .conf("dfs.blocksize", MIB.to_string())
        .build()
        .await?;
    let nn = common::nn_http(&c)?;
    let web = Web {
        nn,
        user: common::current_user(),
    };

    // MKDIRS with a permission, GETFILESTATUS of the directory.
    let v = web.json("PUT", "/w/d", "MKDIRS", "&permission=750").await?;
    assert_eq!(v["boolean"], true);
    let st = &web.json("GET", "/w/d", "GETFILESTATUS", "").await?["FileStatus"];
    assert_eq!(st["type"], "DIRECTORY");
    assert_eq!(st["permission"], "750");
    assert_eq!(st["pathSuffix"], "");
    assert_eq!(st["owner"], web.user.as_str());

    // CREATE: redirect, then the body to the DataNode, 201 with an hdfs:// Location.
    let data = common::random_bytes(2 * MIB + 12_345, 7);
    let r = web
        .data(
            "PUT",
            "/w/d/f one",
            "CREATE",
            "&replication=2&permission=600",
            Some(&data),
        )
        .await?;
    assert_eq!(r.code, 201, "{}", r.text());
    let loc = r.header("Location").unwrap_or_default();
    assert!(
        loc.starts_with("hdfs://") && loc.ends_with("/w/d/f%20one"),
        "{loc}"
    );
    let st = &web.json("GET", "/w/d/f one", "GETFILESTATUS", "").await?["FileStatus"];
    assert_eq!(st["type"], "FILE");
    assert_eq!(st["length"], data.len() as u64);
    assert_eq!(st["replication"], 2);
    assert_eq!(st["permission"], "600");
    assert_eq!(st["blockSize"], MIB as u64);

    // OPEN: whole file, then a range crossing a block boundary.
    let r = web.data("GET", "/w/d/f one", "OPEN", "", None).await?;
    assert_eq!(r.code, 200);
    common::assert_same_bytes("OPEN", &r.body, &data);
    let off = MIB - 100;
    let r = web
        .data(
            "GET",
            "/w/d/f one",
            "OPEN",
            &format!("&offset={off}&length=300"),
            None,
        )
        .await?;
    common::assert_same_bytes("OPEN range", &r.body, &data[off..off + 300]);
    let r = web
        .data(
            "GET",
            "/w/d/f one",
            "OPEN",
            &format!("&offset={}", data.len() - 5),
            None,
        )
        .await?;
    assert_eq!(r.body, &data[data.len() - 5..]);

    // GETFILEBLOCKLOCATIONS (what getFileBlockLocations, and so input splits, ask for).
    let v = web
        .json("GET", "/w/d/f one", "GETFILEBLOCKLOCATIONS", "")
        .await?;
    let blocks = v["BlockLocations"]["BlockLocation"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let offsets: Vec<u64> = blocks.iter().filter_map(|b| b["offset"].as_u64()).collect();
    assert_eq!(offsets, [0, MIB as u64, 2 * MIB as u64], "{v}");
    assert_eq!(blocks[2]["length"], 12_345);
    for b in &blocks {
        assert_eq!(b["names"].as_array().map(Vec::len), Some(2), "{b}");
        assert_eq!(b["corrupt"], false);
        let paths = b["topologyPaths"].as_array().cloned().unwrap_or_default();
        assert!(
            paths
                .iter()
                .all(|p| p.as_str().unwrap_or_default().starts_with("/default-rack/")),
            "{b}"
        );
    }
    let v = web
        .json(
            "GET",
            "/w/d/f one",
            "GETFILEBLOCKLOCATIONS",
            &format!("&offset={}&length=10", MIB + 5),
        )
        .await?;
    assert_eq!(
        v["BlockLocations"]["BlockLocation"][0]["offset"], MIB as u64,
        "{v}"
    );
    assert_eq!(
        v["BlockLocations"]["BlockLocation"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );

    // APPEND through POST, read back whole.
    let more = common::random_bytes(70_000, 8);
    let r = web
        .data("POST", "/w/d/f one", "APPEND", "", Some(&more))
        .await?;
    assert_eq!(r.code, 200, "{}", r.text());
    let r = web.data("GET", "/w/d/f one", "OPEN", "", None).await?;
    let mut all = data.clone();
    all.extend_from_slice(&more);
    common::assert_same_bytes("after APPEND", &r.body, &all);

    // GETFILECHECKSUM on a DataNode equals the one the client library computes.
    let r = web
        .data("GET", "/w/d/f one", "GETFILECHECKSUM", "", None)
        .await?;
    assert_eq!(r.code, 200, "{}", r.text());
    let v: Value = serde_json::from_slice(&r.body)?;
    let fs = rhdfs_client::FileSystem::connect(&c.uri()).await?;
    let want = fs.file_checksum("/w/d/f one").await?;
    assert_eq!(
        v["FileChecksum"]["algorithm"],
        want.algorithm_name().as_str()
    );
    assert_eq!(v["FileChecksum"]["bytes"], want.hex().as_str());
    assert_eq!(v["FileChecksum"]["length"], 28);

    // LISTSTATUS, LISTSTATUS_BATCH, GETCONTENTSUMMARY.
    web.data("PUT", "/w/d/g", "CREATE", "", Some(b"small"))
        .await?;
    let v = web.json("GET", "/w/d", "LISTSTATUS", "").await?;
    let names: Vec<&str> = v["FileStatuses"]["FileStatus"]
        .as_array()
        .map(|a| a.iter().filter_map(|e| e["pathSuffix"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(names, ["f one", "g"]);
    let v = web.json("GET", "/w/d/g", "LISTSTATUS", "").await?;
    assert_eq!(v["FileStatuses"]["FileStatus"][0]["pathSuffix"], "");
    let v = web
        .json("GET", "/w/d", "LISTSTATUS_BATCH", "&startAfter=f%20one")
        .await?;
    let page = &v["DirectoryListing"];
    assert_eq!(page["remainingEntries"], 0);
    assert_eq!(
        page["partialListing"]["FileStatuses"]["FileStatus"][0]["pathSuffix"],
        "g"
    );
    let v = web.json("GET", "/w", "GETCONTENTSUMMARY", "").await?;
    let cs = &v["ContentSummary"];
    assert_eq!(cs["fileCount"], 2);
    assert_eq!(cs["directoryCount"], 2);
    assert_eq!(cs["length"], (all.len() + 5) as u64);
    assert_eq!(cs["quota"], -1);
    let v = web.json("GET", "/w", "GETQUOTAUSAGE", "").await?;
    let q = &v["QuotaUsage"];
    assert_eq!(q["fileAndDirectoryCount"], 4);
    assert_eq!(
        (q["quota"].as_i64(), q["spaceQuota"].as_i64()),
        (Some(-1), Some(-1))
    );
    let v = web.json("GET", "/", "GETSTATUS", "").await?;
    let stats = fs.fs_stats().await?;
    assert_eq!(v["FsStatus"]["capacity"], stats.capacity);
    assert!(v["FsStatus"]["remaining"].as_u64().unwrap_or(0) > 0, "{v}");

    // Attribute changes.
    let r = web
        .call("PUT", "/w/d/g", "SETPERMISSION", "&permission=640")
        .await?;
    assert_eq!(r.code, 200, "{}", r.text());
    let r = web
        .call("PUT", "/w/d/g", "SETOWNER", "&group=staff")
        .await?;
    assert_eq!(r.code, 200, "{}", r.text());
    let r = web
        .call(
            "PUT",
            "/w/d/g",
            "SETTIMES",
            "&modificationtime=1000000&accesstime=2000000",
        )
        .await?;
    assert_eq!(r.code, 200, "{}", r.text());
    let v = web
        .json("PUT", "/w/d/g", "SETREPLICATION", "&replication=1")
        .await?;
    assert_eq!(v["boolean"], true);
    let st = &web.json("GET", "/w/d/g", "GETFILESTATUS", "").await?["FileStatus"];
    assert_eq!(st["permission"], "640");
    assert_eq!(st["group"], "staff");
    assert_eq!(st["modificationTime"], 1_000_000);
    assert_eq!(st["accessTime"], 2_000_000);
    assert_eq!(st["replication"], 1);

    // RENAME (boolean form and OVERWRITE form), DELETE.
    let v = web
        .json("PUT", "/w/d/g", "RENAME", "&destination=%2Fw%2Fg2")
        .await?;
    assert_eq!(v["boolean"], true);
    web.data("PUT", "/w/h", "CREATE", "", Some(b"h")).await?;
    let r = web
        .call(
            "PUT",
            "/w/h",
            "RENAME",
            "&destination=%2Fw%2Fg2&renameoptions=OVERWRITE",
        )
        .await?;
    assert_eq!(r.code, 200, "{}", r.text());
    let r = web.data("GET", "/w/g2", "OPEN", "", None).await?;
    assert_eq!(r.body, b"h");
    let v = web.json("DELETE", "/w/g2", "DELETE", "").await?;
    assert_eq!(v["boolean"], true);
    let v = web.json("DELETE", "/w/g2", "DELETE", "").await?;
    assert_eq!(v["boolean"], false);

    // Small answers.
    let v = web.json("GET", "/", "GETHOMEDIRECTORY", "").await?;
    assert_eq!(v["Path"], format!("/user/{}", web.user).as_str());
    let v = web.json("GET", "/", "GETSERVERDEFAULTS", "").await?;
    assert_eq!(v["FsServerDefaults"]["blockSize"], MIB as u64);
    let r = web
        .call("GET", "/w/d/f one", "OPEN", "&noredirect=true")
        .await?;
    assert_eq!(r.code, 200);
    let v: Value = serde_json::from_slice(&r.body)?;
    assert!(
        v["Location"]
            .as_str()
            .unwrap_or_default()
            .contains("op=OPEN"),
        "{v}"
    );

    // Errors: class, message and status as Hadoop's WebHDFS reports them.
    let r = web.call("GET", "/nope", "GETFILESTATUS", "").await?;
    assert_eq!(r.code, 404);
    let (class, msg) = remote_exception(&r)?;
    assert_eq!(class, "java.io.FileNotFoundException");
    assert!(msg.contains("/nope"), "{msg}");
    let r = web.call("GET", "/w", "BOGUS", "").await?;
    assert_eq!(r.code, 400);
    assert_eq!(
        remote_exception(&r)?.0,
        "java.lang.IllegalArgumentException"
    );
    let r = web.call("POST", "/w", "UNSETSTORAGEPOLICY", "").await?;
    assert_eq!(r.code, 400);
    assert_eq!(
        remote_exception(&r)?.0,
        "java.lang.UnsupportedOperationException"
    );
    let r = web.call("POST", "/w", "CONCAT", "").await?;
    assert_eq!(r.code, 400);
    assert_eq!(
        remote_exception(&r)?,
        (
            "java.lang.IllegalArgumentException".to_string(),
            "Required param sources for op: CONCAT is null or empty".to_string()
        )
    );
    let r = web
        .call("DELETE", "/w", "DELETE", "&recursive=false")
        .await?;
    assert_eq!(r.code, 403);
    assert_eq!(
        remote_exception(&r)?.0,
        "org.apache.hadoop.fs.PathIsNotEmptyDirectoryException"
    );
    let r = web
        .data("PUT", "/w/d/f one", "CREATE", "", Some(b"again"))
        .await?;
    assert_eq!(r.code, 403, "{}", r.text());
    assert_eq!(
        remote_exception(&r)?.0,
        "org.apache.hadoop.fs.FileAlreadyExistsException"
    );
    // An offset past the end: the NameNode refuses it (webhdfs_ops.rs has the details).
    let r = web
        .call(
            "GET",
            "/w/d/f one",
            "OPEN",
            &format!("&offset={}", all.len() + 1),
        )
        .await?;
    assert_eq!(r.code, 403, "{}", r.text());
    // Another user cannot write into a 750 directory it does not own.
    let other = Web {
        nn: web.nn.clone(),
        user: "mallory".into(),
    };
    let r = other.call("PUT", "/w/d/x", "MKDIRS", "").await?;
    assert_eq!(r.code, 403, "{}", r.text());
    let (class, msg) = remote_exception(&r)?;
    assert_eq!(class, "org.apache.hadoop.security.AccessControlException");
    assert!(msg.contains("Permission denied: user=mallory"), "{msg}");
    let r = other
        .data("PUT", "/w/d/y", "CREATE", "", Some(b"no"))
        .await?;
    assert_eq!(r.code, 403, "{}", r.text());
    assert_eq!(
        remote_exception(&r)?.0,
        "org.apache.hadoop.security.AccessControlException"
    );
    let r = request(
        &web.nn,
        "GET",
        &format!(
            "{}&doas=not-{}",
            web.target("/", "GETFILESTATUS", ""),
            web.user
        ),
        None,
        T,
    )
    .await?;
    assert_eq!(r.code, 403);

    // What WebHDFS wrote, the RPC path reads the same.
    let mut reader = fs.open("/w/d/f one").await?;
    common::assert_same_bytes("RPC read", &reader.read_to_end().await?, &all);
    c.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn webhdfs_settings_disable_it_or_refuse_anonymous_requests() -> anyhow::Result<()> {
    // dfs.webhdfs.enabled=false: neither daemon serves /webhdfs/v1; the rest of the web port
    // still works.
    let c = MiniCluster::builder()
        .datanodes(1)
        .conf("dfs.webhdfs.enabled", "false")
        .build()
        .await?;
    let nn = common::nn_http(&c)?;
    let dn = c
        .datanode(0)
        .ok_or_else(|| anyhow::anyhow!("no DataNode"))?
        .http_addr()
        .to_string();
    let user = common::current_user();
    let r = request(
        &nn,
        "GET",
        &format!("/webhdfs/v1/?op=GETFILESTATUS&user.name={user}"),
        None,
        T,
    )
    .await?;
    assert_eq!(r.code, 404, "{}", r.text());
    let r = request(
        &dn,
        "GET",
        "/webhdfs/v1/x?op=OPEN&namenoderpcaddress=x:1",
        None,
        T,
    )
    .await?;
    assert_eq!(r.code, 404, "{}", r.text());
    let r = request(&nn, "GET", "/jmx", None, T).await?;
    assert_eq!(r.code, 200);
    // The overview page.
    let r = request(&nn, "GET", "/", None, T).await?;
    assert_eq!(r.code, 200);
    let page = r.text();
    assert!(
        page.contains("<th align=\"left\">Live DataNodes</th><td>1</td>")
            && page.contains("<th align=\"left\">Safe mode</th><td>OFF</td>"),
        "{page}"
    );
    c.shutdown().await;

    // Anonymous requests refused: 401 without user.name, served with it.
    let c = MiniCluster::builder()
        .datanodes(1)
        .conf(
            "hadoop.http.authentication.simple.anonymous.allowed",
            "false",
        )
        .build()
        .await?;
    let nn = common::nn_http(&c)?;
    let r = request(&nn, "GET", "/webhdfs/v1/?op=GETFILESTATUS", None, T).await?;
    assert_eq!(r.code, 401, "{}", r.text());
    assert_eq!(remote_exception(&r)?.0, "java.lang.SecurityException");
    let r = request(
        &nn,
        "GET",
        &format!("/webhdfs/v1/?op=GETFILESTATUS&user.name={user}"),
        None,
        T,
    )
    .await?;
    assert_eq!(r.code, 200, "{}", r.text());
    c.shutdown().await;
    Ok(())
}
