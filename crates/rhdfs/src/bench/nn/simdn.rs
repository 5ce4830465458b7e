//! Simulated DataNodes for `rhdfs bench nn`: each registers with the NameNode over
//! DatanodeProtocol, heartbeats, reports the blocks it was given (incremental RECEIVED
//! reports and full reports under a report lease) and obeys invalidation by forgetting the
//! blocks; none stores data. Many of them share one process, so a NameNode can be given far
//! more DataNodes and blocks than the machine could hold (Hadoop's NNThroughputBenchmark
//! does the same with its TinyDatanodes).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use rhdfs_datanode::actor::report::{Identity, registration, report_context, storage_proto};
use rhdfs_datanode::actor::{IpcConnector, NamenodeConnector, NamenodeProtocol};
use rhdfs_proto::datanode::block_command_proto::Action;
use rhdfs_proto::datanode::datanode_command_proto::Type as CommandType;
use rhdfs_proto::datanode::received_deleted_block_info_proto::BlockStatus;
use rhdfs_proto::datanode::{
    BlockCommandProto, BlockReceivedAndDeletedRequestProto, BlockReportRequestProto,
    DatanodeCommandProto, DatanodeRegistrationProto, HeartbeatRequestProto,
    ReceivedDeletedBlockInfoProto, StorageBlockReportProto, StorageReceivedDeletedBlocksProto,
};
use rhdfs_proto::hdfs::{BlockProto, StorageReportProto};
use tokio::sync::Mutex;

/// Capacity each simulated storage reports: large enough that placement never finds one full.
const CAPACITY: u64 = 1 << 50;
/// Simulated DataNode `i` claims transfer port `FIRST_PORT + i` (nothing listens there).
const FIRST_PORT: usize = 10_000;
const RECEIVED: i32 = BlockStatus::Received as i32;
const DELETED: i32 = BlockStatus::Deleted as i32;

/// One simulated DataNode: its registration and the finalized replicas it claims.
pub struct SimDatanode {
    nn: Arc<dyn NamenodeProtocol>,
    reg: DatanodeRegistrationProto,
    bpid: String,
    storage: String,
    /// block id → (generation stamp, length).
    blocks: Mutex<BTreeMap<u64, (u64, u64)>>,
}

impl SimDatanode {
    /// Connects to the NameNode at `addr` and registers as DataNode number `index`.
    pub async fn register(addr: &str, index: usize) -> anyhow::Result<Self> {
        let connector = IpcConnector {
            addr: addr.to_string(),
            user: "rhdfs-bench".to_string(),
        };
        let nn = connector.connect().await.context("connecting")?;
        let ns = nn.version_request().await.context("versionRequest")?;
        // The NameNode takes a DataNode's IP from its connection (127.0.0.1 for all of
        // them), so each needs its own transfer port to be a distinct node.
        let xfer_port = u16::try_from(FIRST_PORT + index)
            .ok()
            .context("too many simulated DataNodes: one port each above 10000")?;
        let id = Identity {
            ip_addr: "127.0.0.1".to_string(),
            host_name: format!("sim-dn-{index}"),
            datanode_uuid: format!("sim-dn-{index}-{}", std::process::id()),
            xfer_port,
            info_port: 0,
            ipc_port: 0,
        };
        let reg = registration(&id, &ns.storage_info, &ns.software_version);
        let reg = nn
            .register_datanode(reg)
            .await
            .context("registerDatanode")?;
        let storage = format!("DS-sim-{index}-{}", std::process::id());
        let dn = SimDatanode {
            nn,
            reg,
            bpid: ns.block_pool_id,
            storage,
            blocks: Mutex::new(BTreeMap::new()),
        };
        // The first heartbeat makes the storage known, so placement can choose it.
        dn.heartbeat(false).await?;
        Ok(dn)
    }

    pub fn uuid(&self) -> &str {
        &self.reg.datanode_id.datanode_uuid
    }

    pub async fn block_count(&self) -> usize {
        self.blocks.lock().await.len()
    }

    /// One heartbeat; obeys invalidations in its answer; returns the full block report lease
    /// granted (0 when none).
    #[allow(deprecated)] // storageUuid is required on the wire
    pub async fn heartbeat(&self, want_lease: bool) -> anyhow::Result<u64> {
        let used = self.blocks.lock().await.values().map(|(_, len)| len).sum();
        let report = StorageReportProto {
            storage_uuid: self.storage.clone(),
            failed: Some(false),
            capacity: Some(CAPACITY),
            dfs_used: Some(used),
            remaining: Some(CAPACITY - used.min(CAPACITY)),
            block_pool_used: Some(used),
            storage: Some(storage_proto(&self.storage)),
            non_dfs_used: Some(0),
            mount: None,
        };
        let resp = self
            .nn
            .send_heartbeat(HeartbeatRequestProto {
                registration: self.reg.clone(),
                reports: vec![report],
                xmits_in_progress: Some(0),
                xceiver_count: Some(1),
                failed_volumes: Some(0),
                cache_capacity: Some(0),
                cache_used: Some(0),
                request_full_block_report_lease: Some(want_lease),
                ..Default::default()
            })
            .await
            .context("sendHeartbeat")?;
        for cmd in &resp.cmds {
            self.obey(cmd).await?;
        }
        Ok(resp.full_block_report_lease_id.unwrap_or(0))
    }

    /// Forgets invalidated blocks and says so in an incremental report; other commands
    /// (transfers, recoveries) need data this DataNode does not have and are ignored.
    async fn obey(&self, cmd: &DatanodeCommandProto) -> anyhow::Result<()> {
        let Some(BlockCommandProto { action, blocks, .. }) = cmd.blk_cmd.as_ref() else {
            return Ok(());
        };
        if cmd.cmd_type != CommandType::BlockCommand as i32 || *action != Action::Invalidate as i32
        {
            return Ok(());
        }
        let mut gone = Vec::new();
        {
            let mut mine = self.blocks.lock().await;
            for b in blocks {
                if mine.remove(&b.block_id).is_some() {
                    gone.push(*b);
                }
            }
        }
        self.incremental(gone, DELETED).await
    }

    /// Takes finalized replicas and reports them received at once.
    pub async fn received(&self, blocks: Vec<BlockProto>) -> anyhow::Result<()> {
        {
            let mut mine = self.blocks.lock().await;
            for b in &blocks {
                mine.insert(b.block_id, (b.gen_stamp, b.num_bytes.unwrap_or(0)));
            }
        }
        self.incremental(blocks, RECEIVED).await
    }

    #[allow(deprecated)] // storageUuid is required on the wire
    async fn incremental(&self, blocks: Vec<BlockProto>, status: i32) -> anyhow::Result<()> {
        if blocks.is_empty() {
            return Ok(());
        }
        let blocks = blocks
            .into_iter()
            .map(|block| ReceivedDeletedBlockInfoProto {
                block,
                delete_hint: None,
                status,
            })
            .collect();
        self.nn
            .block_received_and_deleted(BlockReceivedAndDeletedRequestProto {
                registration: self.reg.clone(),
                block_pool_id: self.bpid.clone(),
                blocks: vec![StorageReceivedDeletedBlocksProto {
                    storage_uuid: self.storage.clone(),
                    blocks,
                    storage: Some(storage_proto(&self.storage)),
                }],
            })
            .await
            .context("blockReceivedAndDeleted")?;
        Ok(())
    }

    /// Heartbeats until the NameNode grants a full block report lease (it grants a bounded
    /// number at once), then returns it.
    pub async fn report_lease(&self) -> anyhow::Result<u64> {
        for _ in 0..600 {
            let lease = self.heartbeat(true).await?;
            if lease != 0 {
                return Ok(lease);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        bail!(
            "{}: no block report lease after 600 heartbeats",
            self.uuid()
        )
    }

    /// The full block report the NameNode would get from a real DataNode with these
    /// replicas, in the long-list encoding; returns the number of replicas reported.
    pub fn full_report(&self, lease: u64, blocks: &BTreeMap<u64, (u64, u64)>) -> FullReport {
        self.full_report_of(lease, blocks.iter().map(|(id, (gs, len))| (*id, *gs, *len)))
    }

    /// `full_report` of replicas given as (id, gs, len), in increasing id order.
    pub fn full_report_of(
        &self,
        lease: u64,
        blocks: impl ExactSizeIterator<Item = (u64, u64, u64)>,
    ) -> FullReport {
        let n = blocks.len();
        let mut list = Vec::with_capacity(5 + 3 * n);
        list.push(n as u64);
        list.push(0);
        for (id, gs, len) in blocks {
            list.extend_from_slice(&[id, len, gs]);
        }
        list.extend_from_slice(&[u64::MAX; 3]);
        FullReport {
            replicas: n as u64,
            req: BlockReportRequestProto {
                registration: self.reg.clone(),
                block_pool_id: self.bpid.clone(),
                reports: vec![StorageBlockReportProto {
                    storage: storage_proto(&self.storage),
                    blocks: list,
                    number_of_blocks: Some(n as u64),
                    blocks_buffers: Vec::new(),
                }],
                context: Some(report_context(rand_id(), lease)),
            },
        }
    }

    pub async fn snapshot(&self) -> BTreeMap<u64, (u64, u64)> {
        self.blocks.lock().await.clone()
    }

    /// Sends a report built by `full_report`.
    pub async fn send_report(&self, report: FullReport) -> anyhow::Result<()> {
        let resp = self
            .nn
            .block_report(report.req)
            .await
            .context("blockReport")?;
        if let Some(cmd) = resp.cmd {
            self.obey(&cmd).await?;
        }
        Ok(())
    }
}

/// A full block report ready to send (building it is not part of what is timed).
pub struct FullReport {
    pub replicas: u64,
    req: BlockReportRequestProto,
}

fn rand_id() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as i64)
}

/// Registers `n` simulated DataNodes, `parallel` at a time.
pub async fn start(addr: &str, n: usize, parallel: usize) -> anyhow::Result<Vec<Arc<SimDatanode>>> {
    let mut out = Vec::with_capacity(n);
    let mut next = 0;
    while next < n {
        let batch: Vec<_> = (next..n.min(next + parallel.max(1)))
            .map(|i| {
                let addr = addr.to_string();
                tokio::spawn(async move { SimDatanode::register(&addr, i).await })
            })
            .collect();
        next += batch.len();
        for t in batch {
            out.push(Arc::new(t.await.context("register task")??));
        }
    }
    Ok(out)
}

/// Keeps the simulated DataNodes alive (one heartbeat each per `interval`) until dropped.
pub struct Heartbeats(tokio::task::JoinHandle<()>);

impl Heartbeats {
    pub fn start(dns: Vec<Arc<SimDatanode>>, interval: Duration) -> Self {
        Heartbeats(tokio::spawn(async move {
            loop {
                tokio::time::sleep(interval).await;
                for dn in &dns {
                    if let Err(e) = dn.heartbeat(false).await {
                        tracing::warn!(dn = dn.uuid(), "simulated heartbeat failed: {e:#}");
                    }
                }
            }
        }))
    }
}

impl Drop for Heartbeats {
    fn drop(&mut self) {
        self.0.abort();
    }
}
