//! The load of `ha_process`: writers of `hdfs://ns` (the Java FsShell, hdfs-native or
//! rhdfs-client), each running random creates, renames, deletes and mkdirs under its own
//! directory and keeping a model of what the nameservice acknowledged; an operation that
//! fails while a kill happens is unknown until resolved, any other failure is recorded as an
//! error.
//!
//! The kill epoch counts each kill twice: odd from just before the SIGKILL until the killed
//! process is reaped, even after ([`kill_begins`], [`kill_ends`]). An operation overlapped a
//! kill when the epoch moved during it or it began while a kill was under way: one begun
//! after the count was raised but sent before the process died fails from the kill though
//! the epoch does not move again before it fails.

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, ensure};
use rhdfs_client::FileSystem;
use rhdfs_testkit::java::JavaShell;

use super::ha_procs::HaCluster;
use super::procs::{read_file, with_timeout, write_file};

pub const ROOT: &str = "/ha";
/// One operation's bound (a Java FsShell run includes a JVM start).
pub const OP_LIMIT: Duration = Duration::from_secs(120);

/// A small deterministic RNG (xorshift64*), so a failing seed replays.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

#[derive(Debug, Clone)]
pub enum Op {
    Create { path: String, data: Vec<u8> },
    Rename { src: String, dst: String },
    Delete { path: String },
    Mkdir { path: String },
}

/// What one writer knows the nameservice acknowledged.
#[derive(Debug, Default)]
pub struct Model {
    pub files: BTreeMap<String, Vec<u8>>,
    pub dirs: BTreeSet<String>,
    /// Operations that failed: outcome unknown until resolved (a rename or delete with its
    /// file's acknowledged content, taken out of `files`).
    pub unknown: Vec<(Op, Option<Vec<u8>>)>,
    /// Operations that failed with no kill during them (a bug).
    pub errors: Vec<String>,
    pub acked: u64,
    /// hdfs-native writes failed on the connection to a killed active (see `writer`).
    pub stale_connection_failures: u64,
    /// The kill epoch in which the last acknowledged operation began.
    pub last_acked_epoch: Option<u64>,
}

/// One client of `hdfs://ns`.
pub enum Client {
    /// The Java FsShell and a local directory for the files it puts.
    Java(JavaShell, tempfile::TempDir),
    Native(hdfs_native::Client),
    Rhdfs(FileSystem),
}

impl Client {
    pub fn kind(&self) -> &'static str {
        match self {
            Client::Java(..) => "java",
            Client::Native(_) => "hdfs-native",
            Client::Rhdfs(_) => "rhdfs-client",
        }
    }

    pub async fn java(sh: &JavaShell, args: &[&str]) -> anyhow::Result<Vec<u8>> {
        let out = sh.run(args).await?;
        ensure!(
            out.code == Some(0),
            "FsShell {args:?}: exit {:?}: {}",
            out.code,
            out.errors()
        );
        Ok(out.stdout)
    }

    pub async fn create(&self, path: &str, data: &[u8]) -> anyhow::Result<()> {
        match self {
            Client::Java(sh, tmp) => {
                let local = tmp.path().join(path.replace('/', "_"));
                std::fs::write(&local, data)?;
                let res = Self::java(sh, &["-put", &local.to_string_lossy(), path]).await;
                let _ = std::fs::remove_file(&local);
                res.map(drop)
            }
            Client::Native(c) => {
                let mut w = c.create(path, hdfs_native::WriteOptions::default()).await?;
                for piece in data.chunks(100_000) {
                    w.write_bytes(bytes::Bytes::copy_from_slice(piece)).await?;
                }
                Ok(w.close().await?)
            }
            Client::Rhdfs(fs) => write_file(fs, path, data).await,
        }
    }

    pub async fn rename(&self, src: &str, dst: &str) -> anyhow::Result<()> {
        match self {
            Client::Java(sh, _) => Self::java(sh, &["-mv", src, dst]).await.map(drop),
            Client::Native(c) => Ok(c.rename(src, dst, false).await?),
            Client::Rhdfs(fs) => {
                ensure!(
                    with_timeout("rename", fs.rename(src, dst)).await?,
                    "rename returned false"
                );
                Ok(())
            }
        }
    }

    pub async fn mkdir(&self, path: &str) -> anyhow::Result<()> {
        match self {
            Client::Java(sh, _) => Self::java(sh, &["-mkdir", "-p", path]).await.map(drop),
            Client::Native(c) => Ok(c.mkdirs(path, 0o755, true).await?),
            Client::Rhdfs(fs) => with_timeout("mkdirs", fs.mkdirs(path, None))
                .await
                .map(drop),
        }
    }

    pub async fn delete(&self, path: &str) -> anyhow::Result<()> {
        let deleted = match self {
            Client::Java(sh, _) => {
                return Self::java(sh, &["-rm", "-skipTrash", path]).await.map(drop);
            }
            Client::Native(c) => c.delete(path, false).await?,
            Client::Rhdfs(fs) => with_timeout("delete", fs.delete(path, false)).await?,
        };
        ensure!(deleted, "delete returned false");
        Ok(())
    }

    pub async fn read(&self, path: &str) -> anyhow::Result<Vec<u8>> {
        match self {
            Client::Java(sh, _) => Self::java(sh, &["-cat", path]).await,
            Client::Native(c) => {
                let r = c.read(path).await?;
                Ok(r.read_range(0, r.file_length()).await?.to_vec())
            }
            Client::Rhdfs(fs) => read_file(fs, path).await,
        }
    }

    pub async fn run(&self, op: &Op) -> anyhow::Result<()> {
        match op {
            Op::Create { path, data } => self.create(path, data).await,
            Op::Rename { src, dst } => self.rename(src, dst).await,
            Op::Delete { path } => self.delete(path).await,
            Op::Mkdir { path } => self.mkdir(path).await,
        }
    }
}

/// Marks a kill as under way (the epoch turns odd); call just before the SIGKILL.
pub fn kill_begins(epoch: &AtomicU64) {
    let was = epoch.fetch_add(1, Ordering::SeqCst);
    debug_assert!(was.is_multiple_of(2), "a kill began during another");
}

/// Marks the kill as over (the epoch turns even); call once the killed process is reaped.
pub fn kill_ends(epoch: &AtomicU64) {
    let was = epoch.fetch_add(1, Ordering::SeqCst);
    debug_assert!(!was.is_multiple_of(2), "a kill ended that had not begun");
}

/// Whether an operation that began at epoch `began` and failed at `now` overlapped a kill.
fn overlapped_a_kill(began: u64, now: u64) -> bool {
    now != began || !began.is_multiple_of(2)
}

/// A writer: random operations under `base` until `stop`; an operation that fails having
/// overlapped a kill is unknown, any other failure an error.
pub async fn writer(
    client: Arc<Client>,
    base: String,
    model: Arc<Mutex<Model>>,
    mut rng: Rng,
    epoch: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
) {
    let mut n = 0u64;
    let big = !matches!(*client, Client::Java(..));
    while !stop.load(Ordering::SeqCst) {
        n += 1;
        let op = {
            let m = model.lock().expect("model lock");
            let files: Vec<&String> = m.files.keys().collect();
            // The first operation creates a file (round 1 reads one of each writer's).
            match if n == 1 { 0 } else { rng.below(10) } {
                7 | 8 if !files.is_empty() => {
                    let src = files[rng.below(files.len() as u64) as usize].clone();
                    let parent = src.rsplit_once('/').map_or(base.as_str(), |p| p.0);
                    Op::Rename {
                        dst: format!("{parent}/r{n}"),
                        src,
                    }
                }
                5 | 6 if !files.is_empty() => Op::Delete {
                    path: files[rng.below(files.len() as u64) as usize].clone(),
                },
                9 => Op::Mkdir {
                    path: format!("{base}/d{n}"),
                },
                _ => {
                    let mut parents: Vec<&String> = m.dirs.iter().collect();
                    parents.push(&base);
                    let parent = parents[rng.below(parents.len() as u64) as usize];
                    let len = if big && rng.below(10) == 0 {
                        1 + rng.below(1_500_000)
                    } else {
                        1 + rng.below(64 * 1024)
                    };
                    Op::Create {
                        path: format!("{parent}/f{n}"),
                        data: rng.bytes(len as usize),
                    }
                }
            }
        };
        let began = epoch.load(Ordering::SeqCst);
        let res = match tokio::time::timeout(OP_LIMIT, client.run(&op)).await {
            Ok(r) => r,
            Err(_) => Err(anyhow::anyhow!("no answer within {OP_LIMIT:?}")),
        };
        let mut m = model.lock().expect("model lock");
        match res {
            Ok(()) => {
                m.acked += 1;
                m.last_acked_epoch = Some(began);
                match op {
                    Op::Create { path, data } => {
                        m.files.insert(path, data);
                    }
                    Op::Rename { src, dst } => {
                        if let Some(d) = m.files.remove(&src) {
                            m.files.insert(dst, d);
                        }
                    }
                    Op::Delete { path } => {
                        m.files.remove(&path);
                    }
                    Op::Mkdir { path } => {
                        m.dirs.insert(path);
                    }
                }
            }
            Err(e) => {
                // hdfs-native 0.14.8 sends a write on its idle connection to the killed
                // active and, finding its listener gone ("RPC listener disconnected"), fails
                // the call instead of failing over (it retries only reads then): excused for
                // a writer's first operation after a kill, outcome resolved as any other.
                let stale = matches!(*client, Client::Native(_))
                    && format!("{e:#}").contains("RPC listener disconnected")
                    && m.last_acked_epoch < Some(began);
                if stale {
                    m.stale_connection_failures += 1;
                } else if !overlapped_a_kill(began, epoch.load(Ordering::SeqCst)) {
                    let kind = client.kind();
                    m.errors.push(format!(
                        "{kind} {op:?} failed with no kill during it: {e:#}"
                    ));
                }
                let data = match &op {
                    Op::Rename { src: path, .. } | Op::Delete { path } => m.files.remove(path),
                    _ => None,
                };
                m.unknown.push((op, data));
            }
        }
    }
}

pub struct Writer {
    pub client: Arc<Client>,
    pub model: Arc<Mutex<Model>>,
    pub stop: Arc<AtomicBool>,
    pub task: tokio::task::JoinHandle<()>,
}

impl Writer {
    pub fn start(
        client: Client,
        base: String,
        model: Arc<Mutex<Model>>,
        rng: Rng,
        epoch: &Arc<AtomicU64>,
    ) -> Writer {
        let client = Arc::new(client);
        let stop = Arc::new(AtomicBool::new(false));
        let task = tokio::spawn(writer(
            Arc::clone(&client),
            base,
            Arc::clone(&model),
            rng,
            Arc::clone(epoch),
            Arc::clone(&stop),
        ));
        Writer {
            client,
            model,
            stop,
            task,
        }
    }

    /// Lets the current operation finish, then ends the writer.
    pub async fn stop(self) -> anyhow::Result<()> {
        self.stop.store(true, Ordering::SeqCst);
        self.task.await.context("writer task")
    }

    pub fn errors(&self) -> Vec<String> {
        self.model.lock().expect("model lock").errors.clone()
    }
}

pub fn native(cluster: &HaCluster) -> anyhow::Result<Client> {
    Ok(Client::Native(
        hdfs_native::ClientBuilder::new()
            .with_url("hdfs://ns")
            .with_config(cluster.client_keys())
            .build()?,
    ))
}

/// Starts a writer of `client` under its own directory `ROOT/w<k>`.
pub fn start_writer(
    models: &mut Vec<(String, Arc<Mutex<Model>>)>,
    writers: &mut Vec<Writer>,
    client: Client,
    rng: &mut Rng,
    epoch: &Arc<AtomicU64>,
) {
    let base = format!("{ROOT}/w{}", models.len());
    let model = Arc::new(Mutex::new(Model::default()));
    models.push((base.clone(), Arc::clone(&model)));
    writers.push(Writer::start(
        client,
        base,
        model,
        Rng::new(rng.next()),
        epoch,
    ));
}
