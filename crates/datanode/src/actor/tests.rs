//! The actor against a fake NameNode: registration and full report (under a report lease
//! the heartbeat asked for), RECEIVED at once, DNA_INVALIDATE through the async deleter
//! while heartbeats keep their schedule, re-registration on DNA_REGISTER and after the
//! NameNode comes back.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use parking_lot::Mutex;
use rhdfs_conf::Configuration;
use rhdfs_proto::datanode::datanode_command_proto::Type as CmdType;
use rhdfs_proto::datanode::{
    BlockCommandProto, BlockReceivedAndDeletedRequestProto, BlockReportRequestProto,
    BlockReportResponseProto, DatanodeCommandProto, DatanodeRegistrationProto,
    HeartbeatRequestProto, HeartbeatResponseProto, NamespaceInfoProto, RegisterCommandProto,
    StorageInfoProto,
};
use rhdfs_proto::hdfs::BlockProto;

use super::rpc::{ActorError, NamenodeConnector, NamenodeProtocol};
use crate::datanode::DataNode;

const BP: &str = "BP-42-127.0.0.1-1";

#[derive(Default)]
struct Fake {
    down: AtomicBool,
    registers: Mutex<Vec<DatanodeRegistrationProto>>,
    heartbeats: Mutex<Vec<std::time::Instant>>,
    reports: Mutex<Vec<BlockReportRequestProto>>,
    ibrs: Mutex<Vec<(u64, i32)>>,
    queued_cmds: Mutex<Vec<DatanodeCommandProto>>,
    /// Heartbeats that asked for a full block report lease, and when (heartbeat index).
    lease_requests: Mutex<Vec<usize>>,
    /// Lease requests answered with 0 (all leases taken) before one is granted.
    refuse_leases: AtomicUsize,
    /// Leases granted so far; lease n (from 1) has id 0x5000_0000 + n.
    leases_granted: AtomicU64,
    /// The order full reports began ("report-in") and were answered ("report-out") and
    /// incremental reports arrived ("ibr").
    order: Mutex<Vec<&'static str>>,
    /// When set, a full report is answered only after a permit is added.
    report_gate: Mutex<Option<Arc<tokio::sync::Semaphore>>>,
    /// The last heartbeat's failed volume count and summary.
    volume_failures: Mutex<
        Option<(
            u32,
            Option<rhdfs_proto::datanode::VolumeFailureSummaryProto>,
        )>,
    >,
}

impl Fake {
    fn check(&self) -> Result<(), ActorError> {
        if self.down.load(Ordering::Relaxed) {
            Err(ActorError::Other("NameNode down".into()))
        } else {
            Ok(())
        }
    }
}

struct Conn(Arc<Fake>);

#[async_trait]
impl NamenodeConnector for Conn {
    async fn connect(&self) -> Result<Arc<dyn NamenodeProtocol>, ActorError> {
        self.0.check()?;
        Ok(Arc::new(FakeNn(self.0.clone())))
    }
}

struct FakeNn(Arc<Fake>);

#[async_trait]
impl NamenodeProtocol for FakeNn {
    async fn version_request(&self) -> Result<NamespaceInfoProto, ActorError> {
        self.0.check()?;
        Ok(NamespaceInfoProto {
            build_version: "x".into(),
            unused: 0,
            block_pool_id: BP.into(),
            storage_info: StorageInfoProto {
                layout_version: 0,
                namespce_id: 42,
                cluster_id: "CID-test".into(),
                c_time: 0,
            },
            software_version: "3.5.0".into(),
            capabilities: None,
            state: None,
        })
    }

    async fn register_datanode(
        &self,
        reg: DatanodeRegistrationProto,
    ) -> Result<DatanodeRegistrationProto, ActorError> {
        self.0.check()?;
        self.0.registers.lock().push(reg.clone());
        Ok(reg)
    }

    async fn send_heartbeat(
        &self,
        req: HeartbeatRequestProto,
    ) -> Result<HeartbeatResponseProto, ActorError> {
        self.0.check()?;
        assert_eq!(req.reports.len(), 1);
        *self.0.volume_failures.lock() = Some((
            req.failed_volumes.unwrap_or(0),
            req.volume_failure_summary.clone(),
        ));
        let index = {
            let mut hb = self.0.heartbeats.lock();
            hb.push(std::time::Instant::now());
            hb.len() - 1
        };
        let mut lease = 0;
        if req.request_full_block_report_lease == Some(true) {
            self.0.lease_requests.lock().push(index);
            let refuse = self
                .0
                .refuse_leases
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                .is_ok();
            if !refuse {
                lease = 0x5000_0000 + self.0.leases_granted.fetch_add(1, Ordering::Relaxed) + 1;
            }
        }
        Ok(HeartbeatResponseProto {
            cmds: std::mem::take(&mut *self.0.queued_cmds.lock()),
            full_block_report_lease_id: Some(lease),
            ..Default::default()
        })
    }

    async fn report_bad_blocks(
        &self,
        _req: rhdfs_proto::datanode::ReportBadBlocksRequestProto,
    ) -> Result<(), ActorError> {
        Ok(())
    }

    async fn block_report(
        &self,
        req: BlockReportRequestProto,
    ) -> Result<BlockReportResponseProto, ActorError> {
        self.0.check()?;
        self.0.order.lock().push("report-in");
        let gate = self.0.report_gate.lock().clone();
        if let Some(gate) = gate {
            gate.acquire().await.expect("gate open").forget();
        }
        self.0.reports.lock().push(req);
        self.0.order.lock().push("report-out");
        Ok(BlockReportResponseProto { cmd: None })
    }

    async fn block_received_and_deleted(
        &self,
        req: BlockReceivedAndDeletedRequestProto,
    ) -> Result<(), ActorError> {
        self.0.check()?;
        assert_eq!(req.block_pool_id, BP);
        self.0.order.lock().push("ibr");
        for s in req.blocks {
            for b in s.blocks {
                self.0.ibrs.lock().push((b.block.block_id, b.status));
            }
        }
        Ok(())
    }
}

/// A DataNode on `dir` with every port picked by the OS, heartbeating every `heartbeat`.
pub(super) fn dn_conf(dir: &std::path::Path, heartbeat: &str) -> Configuration {
    let mut conf = Configuration::new();
    conf.set("dfs.datanode.data.dir", dir.display().to_string());
    conf.set("dfs.datanode.address", "127.0.0.1:0");
    conf.set("dfs.datanode.ipc.address", "127.0.0.1:0");
    conf.set("dfs.datanode.http.address", "127.0.0.1:0");
    conf.set("dfs.heartbeat.interval", heartbeat);
    conf
}

async fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    for _ in 0..200 {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn actor_lifecycle_against_fake_namenode() {
    let dir = tempfile::tempdir().unwrap();
    // a replica on disk before start: reported in the first full report
    {
        let ds = crate::Dataset::open(&[dir.path().to_path_buf()], 0).unwrap();
        let mut w = ds
            .create_rbw(BP, 77, 1001, crate::ChecksumSpec::default(), 0)
            .unwrap();
        w.write_at(0, b"hello").unwrap();
        w.finalize().unwrap();
    }
    let mut conf = Configuration::new();
    conf.set(
        "dfs.datanode.data.dir",
        format!("file://{}", dir.path().display()),
    );
    conf.set("dfs.datanode.address", "127.0.0.1:0");
    conf.set("dfs.datanode.ipc.address", "127.0.0.1:0");
    conf.set("dfs.datanode.http.address", "127.0.0.1:0");
    conf.set("dfs.heartbeat.interval", "100ms");
    let fake = Arc::new(Fake::default());
    let dn = DataNode::start_with(
        conf,
        rhdfs_conf::clock::system_clock(),
        Arc::new(Conn(fake.clone())),
    )
    .await
    .unwrap();
    wait_for("registration", || dn.is_registered()).await;
    assert_eq!(dn.block_pool_id().as_deref(), Some(BP));
    {
        let regs = fake.registers.lock();
        let id = &regs[0].datanode_id;
        assert_eq!(id.datanode_uuid, dn.uuid());
        assert_eq!(id.ip_addr, "127.0.0.1");
        assert_eq!(id.xfer_port, u32::from(dn.xfer_addr().port()));
        assert_eq!(id.ipc_port, u32::from(dn.ipc_addr().port()));
    }
    wait_for("full report", || !fake.reports.lock().is_empty()).await;
    {
        let r = &fake.reports.lock()[0];
        assert_eq!(r.reports[0].storage.storage_uuid, dn.storage_ids()[0]);
        let m = u64::MAX;
        assert_eq!(r.reports[0].blocks, vec![1, 0, 77, 5, 1001, m, m, m]);
    }
    wait_for("heartbeats", || fake.heartbeats.lock().len() >= 3).await;

    // DNA_INVALIDATE with slow deletes: heartbeats keep their schedule.
    dn.faults().set_delete_delay(Duration::from_millis(800));
    let files = dn.faults().replica_files(77).unwrap();
    assert!(files.block_file.exists());
    fake.queued_cmds.lock().push(DatanodeCommandProto {
        cmd_type: CmdType::BlockCommand as i32,
        blk_cmd: Some(BlockCommandProto {
            action: 2,
            block_pool_id: BP.into(),
            blocks: vec![BlockProto {
                block_id: 77,
                gen_stamp: 1001,
                num_bytes: Some(5),
            }],
            ..Default::default()
        }),
        ..Default::default()
    });
    let before = fake.heartbeats.lock().len();
    wait_for("DELETED_BLOCK", || fake.ibrs.lock().contains(&(77, 3))).await;
    assert!(!files.block_file.exists() && !files.meta_file.exists());
    let during = fake.heartbeats.lock().len() - before;
    assert!(during >= 3, "only {during} heartbeats while deleting");
    assert!(dn.dataset().get(BP, 77).is_none());

    // DNA_REGISTER → register again and send a full report.
    let regs = fake.registers.lock().len();
    let reports = fake.reports.lock().len();
    fake.queued_cmds.lock().push(DatanodeCommandProto {
        cmd_type: CmdType::RegisterCommand as i32,
        register_cmd: Some(RegisterCommandProto {}),
        ..Default::default()
    });
    wait_for("re-registration", || fake.registers.lock().len() > regs).await;
    wait_for("report after re-registration", || {
        fake.reports.lock().len() > reports
    })
    .await;

    // NameNode down, then back: reconnect and register again.
    fake.down.store(true, Ordering::Relaxed);
    wait_for("disconnect", || !dn.is_registered()).await;
    let regs = fake.registers.lock().len();
    fake.down.store(false, Ordering::Relaxed);
    wait_for("register after NameNode restart", || {
        fake.registers.lock().len() > regs && dn.is_registered()
    })
    .await;

    dn.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn received_block_is_reported_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dn_conf(dir.path(), "30s");
    let fake = Arc::new(Fake::default());
    let dn = DataNode::start_with(
        conf,
        rhdfs_conf::clock::system_clock(),
        Arc::new(Conn(fake.clone())),
    )
    .await
    .unwrap();
    wait_for("registration", || {
        dn.is_registered() && !fake.heartbeats.lock().is_empty()
    })
    .await;
    let hb = fake.heartbeats.lock().len();
    write_small_block(&dn, 88).await;
    let t = std::time::Instant::now();
    wait_for("RECEIVED_BLOCK", || fake.ibrs.lock().contains(&(88, 2))).await;
    assert!(t.elapsed() < Duration::from_secs(2));
    assert_eq!(
        fake.heartbeats.lock().len(),
        hb,
        "sent without waiting for a heartbeat"
    );
    dn.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_full_report_waits_for_a_lease() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dn_conf(dir.path(), "50ms");
    let fake = Arc::new(Fake::default());
    // The NameNode's leases are all taken for the first two requests.
    fake.refuse_leases.store(2, Ordering::Relaxed);
    let dn = DataNode::start_with(
        conf,
        rhdfs_conf::clock::system_clock(),
        Arc::new(Conn(fake.clone())),
    )
    .await
    .unwrap();
    wait_for("full report", || !fake.reports.lock().is_empty()).await;
    {
        let requests = fake.lease_requests.lock().clone();
        // The first heartbeat after registration asks; refused twice, granted the third time.
        assert_eq!(requests, vec![0, 1, 2], "{requests:?}");
        let reports = fake.reports.lock();
        assert_eq!(reports.len(), 1, "no report without a lease");
        let ctx = reports[0].context.as_ref().expect("report context");
        assert_eq!(
            ctx.lease_id,
            Some(0x5000_0001),
            "sent under the granted lease"
        );
    }
    // Reported: no further lease requests until the next report is due (hours away).
    let hb = fake.heartbeats.lock().len();
    wait_for("more heartbeats", || fake.heartbeats.lock().len() >= hb + 3).await;
    assert_eq!(fake.lease_requests.lock().len(), 3);
    assert_eq!(fake.reports.lock().len(), 1);

    // DNA_REGISTER: after registering again the first report again waits for a lease.
    let regs = fake.registers.lock().len();
    fake.refuse_leases.store(1, Ordering::Relaxed);
    fake.queued_cmds.lock().push(DatanodeCommandProto {
        cmd_type: CmdType::RegisterCommand as i32,
        register_cmd: Some(RegisterCommandProto {}),
        ..Default::default()
    });
    wait_for("re-registration", || fake.registers.lock().len() > regs).await;
    wait_for("second report", || fake.reports.lock().len() > 1).await;
    assert_eq!(
        fake.lease_requests.lock().len(),
        5,
        "refused once, then granted"
    );
    let ctx = fake.reports.lock()[1].context.expect("context");
    assert_eq!(ctx.lease_id, Some(0x5000_0002));
    dn.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_ack_invalidation_deletes_without_reporting() {
    let dir = tempfile::tempdir().unwrap();
    {
        let ds = crate::Dataset::open(&[dir.path().to_path_buf()], 0).unwrap();
        for id in [77, 78] {
            let mut w = ds
                .create_rbw(BP, id, 1001, crate::ChecksumSpec::default(), 0)
                .unwrap();
            w.write_at(0, b"hello").unwrap();
            w.finalize().unwrap();
        }
    }
    let mut conf = dn_conf(dir.path(), "50ms");
    // One deleter thread: 77 is deleted (and would be reported) before 78.
    conf.set(
        "dfs.datanode.fsdatasetasyncdisk.max.threads.per.volume",
        "1",
    );
    let fake = Arc::new(Fake::default());
    let dn = DataNode::start_with(
        conf,
        rhdfs_conf::clock::system_clock(),
        Arc::new(Conn(fake.clone())),
    )
    .await
    .unwrap();
    wait_for("full report", || !fake.reports.lock().is_empty()).await;
    let gone = dn.faults().replica_files(77).unwrap();
    let acked = dn.faults().replica_files(78).unwrap();
    let block = |id, len| BlockProto {
        block_id: id,
        gen_stamp: 1001,
        num_bytes: Some(len),
    };
    // 77 was already removed from the NameNode's blocks map (NO_ACK); 78 was not.
    fake.queued_cmds.lock().push(DatanodeCommandProto {
        cmd_type: CmdType::BlockCommand as i32,
        blk_cmd: Some(BlockCommandProto {
            action: 2,
            block_pool_id: BP.into(),
            blocks: vec![block(77, super::NO_ACK), block(78, 5)],
            ..Default::default()
        }),
        ..Default::default()
    });
    wait_for("DELETED_BLOCK of 78", || {
        fake.ibrs.lock().contains(&(78, 3))
    })
    .await;
    for f in [
        &gone.block_file,
        &gone.meta_file,
        &acked.block_file,
        &acked.meta_file,
    ] {
        assert!(!f.exists(), "{} left on disk", f.display());
    }
    assert!(dn.dataset().get(BP, 77).is_none());
    let ibrs = fake.ibrs.lock().clone();
    assert!(
        ibrs.iter().all(|&(id, _)| id != 77),
        "NO_ACK deletion reported: {ibrs:?}"
    );
    dn.shutdown().await;
}

/// Writes a 3-byte block `id` through the DataNode's transfer port (one-node pipeline).
async fn write_small_block(dn: &crate::DataNodeHandle, id: u64) {
    use crate::xceiver::tests::{ack, data_packet, write_req};
    use rhdfs_proto::hdfs::BlockOpResponseProto;
    use rhdfs_proto::hdfs::op_write_block_proto::BlockConstructionStage as Stage;
    use rhdfs_transfer::{Op, Packet, write_op};
    use tokio::io::AsyncWriteExt;

    let mut req = write_req(id, 1001, vec![], Stage::PipelineSetupCreate);
    req.header.base_header.block.pool_id = BP.into();
    let mut s = tokio::net::TcpStream::connect(dn.xfer_addr())
        .await
        .unwrap();
    write_op(&mut s, Op::WriteBlock, &req).await.unwrap();
    let r: BlockOpResponseProto = rhdfs_transfer::op::read_delimited(&mut s, 1 << 20)
        .await
        .unwrap();
    assert_eq!(r.status, 0);
    s.write_all(&data_packet(0, 0, b"abc", false))
        .await
        .unwrap();
    ack(&mut s).await;
    s.write_all(&Packet::empty(3, 1, true).to_bytes())
        .await
        .unwrap();
    ack(&mut s).await;
}

/// A block received while a full report is out goes in an incremental report only once the
/// NameNode has answered the full one (`Shared::report_order`): processed first, its
/// RECEIVED would be undone by a report listed without it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_block_received_during_a_full_report_is_reported_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dn_conf(dir.path(), "50ms");
    let fake = Arc::new(Fake::default());
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    *fake.report_gate.lock() = Some(gate.clone());
    let dn = DataNode::start_with(
        conf,
        rhdfs_conf::clock::system_clock(),
        Arc::new(Conn(fake.clone())),
    )
    .await
    .unwrap();
    wait_for("the first full report", || {
        fake.order.lock().contains(&"report-in")
    })
    .await;
    write_small_block(&dn, 77).await;
    // The block is finalized and its event queued; an incremental report sent at once
    // (interval 0) would reach the NameNode within this window, while the full report is
    // still unanswered. Without the ordering it did, every run.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        fake.ibrs.lock().is_empty(),
        "an incremental report went while a full report was out: {:?}",
        fake.order.lock()
    );
    gate.add_permits(1);
    wait_for("RECEIVED_BLOCK", || fake.ibrs.lock().contains(&(77, 2))).await;
    let order = fake.order.lock().clone();
    let out = order.iter().position(|s| *s == "report-out");
    let ibr = order.iter().position(|s| *s == "ibr");
    assert!(out.is_some() && out < ibr, "{order:?}");
    *fake.report_gate.lock() = None;
    gate.add_permits(16);
    dn.shutdown().await;
}

/// dfs.blockreport.incremental.intervalMsec: the first received block is reported at once,
/// the next one only once the interval since that report has passed (no heartbeat between).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn incremental_reports_are_batched_by_the_interval() {
    let dir = tempfile::tempdir().unwrap();
    let mut conf = dn_conf(dir.path(), "300s");
    conf.set("dfs.blockreport.incremental.intervalMsec", "1500");
    let fake = Arc::new(Fake::default());
    let dn = DataNode::start_with(
        conf,
        rhdfs_conf::clock::system_clock(),
        Arc::new(Conn(fake.clone())),
    )
    .await
    .unwrap();
    wait_for("registration", || {
        dn.is_registered() && !fake.heartbeats.lock().is_empty()
    })
    .await;
    let hb = fake.heartbeats.lock().len();
    write_small_block(&dn, 91).await;
    wait_for("RECEIVED_BLOCK 91", || fake.ibrs.lock().contains(&(91, 2))).await;
    let first = std::time::Instant::now();
    write_small_block(&dn, 92).await;
    wait_for("RECEIVED_BLOCK 92", || fake.ibrs.lock().contains(&(92, 2))).await;
    assert!(
        first.elapsed() >= Duration::from_millis(1400),
        "the second report came {:?} after the first",
        first.elapsed()
    );
    assert_eq!(fake.heartbeats.lock().len(), hb, "no heartbeat carried it");
    dn.shutdown().await;
}

#[test]
fn slow_command_processing_is_noted() {
    use super::commands::slow_commands;
    let t = Duration::from_millis(2000);
    assert_eq!(slow_commands(Duration::from_millis(1999), t, 1), None);
    assert_eq!(
        slow_commands(Duration::from_millis(2500), t, 1).as_deref(),
        Some("Took 2500 ms to process 1 commands from NN")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_volumes_at_start_refuse_or_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let (good, bad) = (dir.path().join("good"), dir.path().join("bad"));
    std::fs::write(&bad, b"not a directory").unwrap();
    let mut conf = Configuration::new();
    conf.set(
        "dfs.datanode.data.dir",
        format!("{},file://{}", good.display(), bad.display()),
    );
    conf.set("dfs.datanode.address", "127.0.0.1:0");
    conf.set("dfs.datanode.ipc.address", "127.0.0.1:0");
    conf.set("dfs.datanode.http.address", "127.0.0.1:0");
    conf.set("dfs.heartbeat.interval", "100ms");
    let fake = Arc::new(Fake::default());
    let clock = rhdfs_conf::clock::system_clock();
    let err = DataNode::start_with(conf.clone(), clock.clone(), Arc::new(Conn(fake.clone())))
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "Too many failed volumes - current valid volumes: 1, volumes configured: 2, volumes \
         failed: 1, volume failures tolerated: 0"
    );
    conf.set("dfs.datanode.failed.volumes.tolerated", "1");
    let dn = DataNode::start_with(conf, clock, Arc::new(Conn(fake.clone())))
        .await
        .unwrap();
    wait_for("a heartbeat", || fake.volume_failures.lock().is_some()).await;
    let (n, summary) = fake.volume_failures.lock().clone().unwrap();
    assert_eq!(n, 1);
    let summary = summary.unwrap();
    assert_eq!(
        summary.failed_storage_locations,
        vec![bad.display().to_string()]
    );
    assert_eq!(summary.estimated_capacity_lost_total, 0);
    assert!(summary.last_volume_failure_date > 0);
    dn.shutdown().await;
}

/// triggerBlockReport can arrive on the IPC port before the actors start: each actor that
/// starts afterwards is given it; one that starts before a trigger gets it once, at once.
#[test]
fn a_trigger_before_the_actors_start_is_kept_for_each() {
    let t = super::Triggers::default();
    t.full_report();
    let (a, b) = (
        Arc::new(super::Kicks::default()),
        Arc::new(super::Kicks::default()),
    );
    t.attach(a.clone());
    t.attach(b.clone());
    for k in [&a, &b] {
        assert!(k.full_report.swap(false, Ordering::Relaxed));
        assert!(!k.ibr_force.load(Ordering::Relaxed));
    }
    t.incremental_report();
    for k in [&a, &b] {
        assert!(k.ibr_force.swap(false, Ordering::Relaxed));
        assert!(!k.full_report.load(Ordering::Relaxed));
    }
}
