//! Support code shared by the integration tests in this directory.
//!
//! - [`java`] (from `rhdfs-testkit`): runs the stock Apache Hadoop 3.5 `FsShell` (jars installed
//!   by `scripts/install-hadoop-client.sh`) against a NameNode URI.
//! - [`rpc`]: a tiny, independent Hadoop IPC client (hand-written framing and its own protobuf
//!   message definitions, so it shares no code with the server it tests) for raw calls such as
//!   getBlockLocations and for malformed-input tests.
//! - [`checksum`]: the client-side `-checksum` (MD5-of-MD5-of-CRC32C) algorithm, computed locally.
//! - disk helpers: find replica files under DataNode data directories.
#![allow(dead_code)]

pub mod checksum;
pub use rhdfs_testkit::{java, repo_root};
pub mod rpc;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};

/// Deterministic pseudo-random bytes (seeded so failures are reproducible).
pub fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut v = vec![0u8; len];
    rng.fill(&mut v[..]);
    v
}

/// Polls `f` until it returns `Some`, or the deadline passes (then returns the last error text).
/// Never asserts on how long it took.
pub async fn poll_until<T, F, Fut>(what: &str, limit: Duration, mut f: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, String>>,
{
    let deadline = Instant::now() + limit;
    loop {
        match f().await {
            Ok(v) => return Ok(v),
            Err(why) => {
                if Instant::now() >= deadline {
                    anyhow::bail!("gave up waiting for {what}: {why}");
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Every regular file below `dir` (recursively).
pub fn walk_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(p),
                Ok(t) if t.is_file() => out.push(p),
                _ => {}
            }
        }
    }
    out
}

/// Replica data files `blk_<id>` (not meta files) for block `id` under any of `dirs`.
pub fn block_files(dirs: &[PathBuf], id: u64) -> Vec<PathBuf> {
    let name = format!("blk_{id}");
    dirs.iter()
        .flat_map(|d| walk_files(d))
        .filter(|p| p.file_name().and_then(|n| n.to_str()) == Some(name.as_str()))
        .collect()
}

/// Meta files `blk_<id>_<gs>.meta` for block `id` under any of `dirs`.
pub fn meta_files(dirs: &[PathBuf], id: u64) -> Vec<PathBuf> {
    let prefix = format!("blk_{id}_");
    dirs.iter()
        .flat_map(|d| walk_files(d))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".meta"))
        })
        .collect()
}

/// True when some component of `p` is `finalized`.
pub fn is_finalized(p: &Path) -> bool {
    p.components().any(|c| c.as_os_str() == "finalized")
}

/// True when some component of `p` is `rbw`.
pub fn is_rbw(p: &Path) -> bool {
    p.components().any(|c| c.as_os_str() == "rbw")
}

/// Every `blk_<digits>` data file (any state) under `dirs`.
pub fn all_block_files(dirs: &[PathBuf]) -> Vec<PathBuf> {
    dirs.iter()
        .flat_map(|d| walk_files(d))
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.strip_prefix("blk_").is_some_and(|rest| {
                    !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit())
                })
            })
        })
        .collect()
}

/// The data directories of every DataNode slot of `cluster`, running or stopped.
pub fn all_data_dirs(cluster: &rhdfs_minicluster::MiniCluster) -> Vec<PathBuf> {
    (0..cluster.num_datanodes())
        .flat_map(|i| cluster.datanode_data_dirs(i))
        .collect()
}

/// Asserts two byte strings are equal without dumping megabytes on failure.
#[track_caller]
pub fn assert_same_bytes(what: &str, got: &[u8], want: &[u8]) {
    if got != want {
        let first_diff = got.iter().zip(want).position(|(a, b)| a != b);
        panic!(
            "{what}: contents differ: got {} bytes, want {} bytes, first differing offset {:?}",
            got.len(),
            want.len(),
            first_diff
        );
    }
}

/// An hdfs-native client for `uri` as the current (super)user.
pub fn native_client(uri: &str) -> anyhow::Result<hdfs_native::Client> {
    Ok(hdfs_native::ClientBuilder::new().with_url(uri).build()?)
}

/// An hdfs-native client for `uri` acting as `user`.
pub fn native_client_as(uri: &str, user: &str) -> anyhow::Result<hdfs_native::Client> {
    Ok(hdfs_native::ClientBuilder::new()
        .with_url(uri)
        .with_user(user)
        .build()?)
}

/// Writes `data` to `path` with hdfs-native in pieces of `piece` bytes and closes the file.
pub async fn native_write(
    client: &hdfs_native::Client,
    path: &str,
    data: &[u8],
    opts: hdfs_native::WriteOptions,
    piece: usize,
) -> anyhow::Result<()> {
    let mut w = client.create(path, opts).await?;
    for chunk in data.chunks(piece.max(1)) {
        w.write_bytes(bytes::Bytes::copy_from_slice(chunk)).await?;
    }
    w.close().await?;
    Ok(())
}

/// Reads the whole file at `path` with hdfs-native.
pub async fn native_read(client: &hdfs_native::Client, path: &str) -> anyhow::Result<Vec<u8>> {
    let r = client.read(path).await?;
    let len = r.file_length();
    Ok(r.read_range(0, len).await?.to_vec())
}

/// The user the tests (and so the NameNode, whose starter is the superuser) run as: what
/// hdfs-native and the Java client send as the effective user when HADOOP_USER_NAME is unset.
pub fn current_user() -> String {
    static USER: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    USER.get_or_init(|| {
        std::process::Command::new("id")
            .arg("-un")
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .filter(|u| !u.is_empty())
            .or_else(|| std::env::var("USER").ok())
            .unwrap_or_else(|| "root".to_owned())
    })
    .clone()
}

/// The NameNode's HTTP address (host:port) of `cluster`.
pub fn nn_http(cluster: &rhdfs_minicluster::MiniCluster) -> anyhow::Result<String> {
    Ok(cluster.namenode().http_addr().to_string())
}
