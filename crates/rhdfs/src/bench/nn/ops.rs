//! The operations of `rhdfs bench nn`, as Hadoop's NNThroughputBenchmark names them, and
//! the paths they work on. Thread `t` owns the operations `t, t + T, t + 2T, ...` below the
//! file count, in directories of `-filesPerDir` entries under its own directory.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use rhdfs_client::{CreateOptions, FileSystem};
use rhdfs_proto::hdfs::{
    AddBlockRequestProto, AddBlockResponseProto, BlockProto, CompleteRequestProto,
    CompleteResponseProto, CreateRequestProto, CreateResponseProto, ExtendedBlockProto,
    FsPermissionProto,
};

use super::simdn::SimDatanode;

/// Hadoop's CreateFlagProto.CREATE.
const CREATE_FLAG_CREATE: u32 = 1;
/// The length asked for by `open` (getBlockLocations), Hadoop's benchmark asks for one block.
const OPEN_LENGTH: u64 = 128 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Create,
    Mkdirs,
    Open,
    FileStatus,
    /// GETFILESTATUS through WebHDFS, each thread over one keep-alive HTTP connection:
    /// the same question as `fileStatus`, so the two rows compare the HTTP edge with RPC.
    WebFileStatus,
    Rename,
    Delete,
    AddBlock,
    BlockReport,
}

impl Op {
    /// `-op all`, in Hadoop's order (with `webFileStatus` beside `fileStatus`), then the
    /// two that need simulated DataNodes.
    pub const ALL: [Op; 9] = [
        Op::Create,
        Op::Mkdirs,
        Op::Open,
        Op::FileStatus,
        Op::WebFileStatus,
        Op::Rename,
        Op::Delete,
        Op::AddBlock,
        Op::BlockReport,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Op::Create => "create",
            Op::Mkdirs => "mkdirs",
            Op::Open => "open",
            Op::FileStatus => "fileStatus",
            Op::WebFileStatus => "webFileStatus",
            Op::Rename => "rename",
            Op::Delete => "delete",
            Op::AddBlock => "addBlock",
            Op::BlockReport => "blockReport",
        }
    }

    pub fn parse(s: &str) -> Option<Op> {
        Op::ALL
            .into_iter()
            .find(|o| o.name().eq_ignore_ascii_case(s))
    }

    /// Whether the op needs simulated DataNodes.
    pub fn needs_datanodes(self) -> bool {
        matches!(self, Op::AddBlock | Op::BlockReport)
    }
}

/// Where the files of one run live, and which name they have now.
#[derive(Debug, Clone)]
pub struct Layout {
    pub base: String,
    pub files_per_dir: usize,
}

impl Layout {
    fn dir(&self, t: usize, kind: &str, k: usize) -> String {
        format!("{}/t{t}/{kind}{}", self.base, k / self.files_per_dir)
    }
    /// File `k` of thread `t`, under its first name (`renamed`: after `rename`).
    pub fn file(&self, t: usize, k: usize, renamed: bool) -> String {
        let name = if renamed { "r" } else { "f" };
        format!("{}/{name}{k}", self.dir(t, "d", k))
    }
    pub fn mkdir(&self, t: usize, k: usize) -> String {
        format!("{}/m{k}", self.dir(t, "m", k))
    }
    pub fn block_file(&self, t: usize, k: usize) -> String {
        format!("{}/b{k}", self.dir(t, "b", k))
    }
}

/// One timed metadata operation on file `k` of thread `t`; `renamed` says which name the
/// files have when it runs.
pub async fn metadata_op(
    fs: &FileSystem,
    op: Op,
    layout: &Layout,
    t: usize,
    k: usize,
    renamed: bool,
) -> anyhow::Result<Duration> {
    let start = Instant::now();
    match op {
        Op::Create => {
            let mut w = fs
                .create(&layout.file(t, k, false), CreateOptions::default())
                .await?;
            w.close().await?;
        }
        Op::Mkdirs => {
            fs.mkdirs(&layout.mkdir(t, k), None).await?;
        }
        Op::Open => {
            fs.located_blocks(&layout.file(t, k, renamed), 0, OPEN_LENGTH)
                .await?;
        }
        Op::FileStatus => {
            let p = layout.file(t, k, renamed);
            if fs.get_file_info(&p).await?.is_none() {
                bail!("getFileInfo {p}: no such file");
            }
        }
        Op::Rename => {
            let (src, dst) = (layout.file(t, k, false), layout.file(t, k, true));
            if !fs.rename(&src, &dst).await? {
                bail!("rename {src} {dst} returned false");
            }
        }
        Op::Delete => {
            let p = layout.file(t, k, renamed);
            if !fs.delete(&p, false).await? {
                bail!("delete {p} returned false");
            }
        }
        Op::WebFileStatus | Op::AddBlock | Op::BlockReport => {
            bail!("{} is not an RPC metadata operation", op.name())
        }
    }
    Ok(start.elapsed())
}

/// One file with one block on simulated DataNodes: create (untimed), addBlock (timed; the
/// NameNode chooses targets among the live DataNodes), the targets report the block
/// received and the file is completed (untimed). Returns addBlock's latency.
pub async fn file_with_block(
    fs: &FileSystem,
    path: &str,
    dns: &[Arc<SimDatanode>],
) -> anyhow::Result<Duration> {
    let created: CreateResponseProto = fs
        .call(
            "create",
            &CreateRequestProto {
                src: path.to_string(),
                masked: FsPermissionProto { perm: 0o644 },
                client_name: fs.client_name().to_string(),
                create_flag: CREATE_FLAG_CREATE,
                create_parent: true,
                replication: u32::from(fs.client_conf().replication),
                block_size: fs.client_conf().block_size,
                crypto_protocol_version: vec![2],
                unmasked: None,
                ec_policy_name: None,
                storage_policy: None,
            },
        )
        .await?;
    let file_id = created.fs.and_then(|s| s.file_id);
    let start = Instant::now();
    let added: AddBlockResponseProto = fs
        .call(
            "addBlock",
            &AddBlockRequestProto {
                src: path.to_string(),
                client_name: fs.client_name().to_string(),
                previous: None,
                exclude_nodes: Vec::new(),
                file_id,
                favored_nodes: Vec::new(),
                flags: Vec::new(),
            },
        )
        .await?;
    let latency = start.elapsed();
    let b = added.block.b;
    let block = BlockProto {
        block_id: b.block_id,
        gen_stamp: b.generation_stamp,
        num_bytes: Some(0),
    };
    for loc in &added.block.locs {
        let uuid = &loc.id.datanode_uuid;
        let dn = dns
            .iter()
            .find(|d| d.uuid() == uuid)
            .with_context(|| format!("addBlock chose {uuid}, not a simulated DataNode"))?;
        dn.received(vec![block]).await?;
    }
    let last = ExtendedBlockProto {
        num_bytes: Some(0),
        ..b
    };
    for _ in 0..200 {
        let done: CompleteResponseProto = fs
            .call(
                "complete",
                &CompleteRequestProto {
                    src: path.to_string(),
                    client_name: fs.client_name().to_string(),
                    last: Some(last.clone()),
                    file_id,
                },
            )
            .await?;
        if done.result {
            return Ok(latency);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    bail!("complete {path}: still false after 200 attempts")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back() {
        for op in Op::ALL {
            assert_eq!(Op::parse(op.name()), Some(op));
        }
        assert_eq!(Op::parse("FILESTATUS"), Some(Op::FileStatus));
        assert_eq!(Op::parse("replication"), None);
    }

    #[test]
    fn paths_group_files_per_directory() {
        let l = Layout {
            base: "/b".into(),
            files_per_dir: 4,
        };
        assert_eq!(l.file(1, 3, false), "/b/t1/d0/f3");
        assert_eq!(l.file(1, 4, true), "/b/t1/d1/r4");
        assert_eq!(l.mkdir(0, 9), "/b/t0/m2/m9");
        assert_eq!(l.block_file(2, 0), "/b/t2/b0/b0");
    }
}
