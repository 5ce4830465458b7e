//! The actors that serve the block pool's NameNodes, one per NameNode (each NameNode of
//! the HA nameservice in `dfs.nameservices`, or the one NameNode): handshake
//! (versionRequest, registerDatanode), heartbeats on schedule, incremental block reports on
//! their own task (RECEIVED at once, RECEIVING/DELETED with the next heartbeat; every block
//! event goes to every NameNode), commands handed to a worker, full reports (the first right
//! after registration, then periodic) each sent under a report lease the NameNode grants in
//! a heartbeat response, and reconnect + re-register when the NameNode goes away.
//!
//! HA, as Hadoop's BPOfferService: each heartbeat answer's `NNHAStatusHeartbeat` (state +
//! txid) updates which NameNode the pool takes as active (`pool`; the rules in `ha_state`:
//! an ACTIVE claim needs a txid above the last acknowledged claim, an active one that reports
//! STANDBY stops being active), and commands run only from that one; from any other only
//! DNA_REGISTER and key updates are taken, the rest logged ("Got a command from standby NN -
//! ignoring command") and counted (`PoolHa::ignored_commands`).

mod bad_blocks;
mod commands;
pub mod deleter;
pub mod ha_state;
mod handle;
pub mod pool;
pub mod report;
pub mod rpc;
mod volumes;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use rhdfs_conf::clock::SharedClock;
use rhdfs_proto::datanode::{
    BlockReceivedAndDeletedRequestProto, BlockReportRequestProto, DatanodeCommandProto,
    DatanodeRegistrationProto, HeartbeatRequestProto,
};
use tokio::sync::{Notify, mpsc, watch};

use crate::dataset::Dataset;
use crate::faults::FaultHooks;
use crate::notify::{BlockEvent, BlockStatus};
use crate::xceiver::XceiverContext;
pub use deleter::{AsyncDeleter, DeleteTask, NO_ACK};
pub use handle::{ActorHandle, ActorView};
pub use pool::PoolHa;
pub use report::Identity;
pub use rpc::{ActorError, IpcConnector, NamenodeConnector, NamenodeProtocol};

/// Schedules of the actor.
#[derive(Debug, Clone)]
pub struct ActorConfig {
    /// dfs.heartbeat.interval
    pub heartbeat_interval: Duration,
    /// dfs.blockreport.intervalMsec
    pub block_report_interval: Duration,
    /// dfs.blockreport.initialDelay: the first report waits a random time up to this.
    pub initial_delay: Duration,
    /// Wait before reconnecting after a failed call.
    pub retry_interval: Duration,
    /// dfs.blockreport.split.threshold: above this many replicas, one RPC per storage.
    pub split_threshold: u64,
    /// dfs.blockreport.incremental.intervalMsec: 0 sends a received block's report at once;
    /// otherwise reports are batched and sent at most once per interval (a heartbeat or a
    /// triggered report sends what is pending at once), as Hadoop's IncrementalBlockReportManager.
    pub ibr_interval: Duration,
    /// dfs.datanode.processcommands.threshold: a NameNode command that takes longer than this
    /// to process is logged.
    pub process_commands_threshold: Duration,
}

impl Default for ActorConfig {
    fn default() -> Self {
        ActorConfig {
            heartbeat_interval: Duration::from_secs(3),
            block_report_interval: Duration::from_secs(6 * 3600),
            initial_delay: Duration::ZERO,
            retry_interval: Duration::from_secs(1),
            split_threshold: 1_000_000,
            ibr_interval: Duration::ZERO,
            process_commands_threshold: Duration::from_secs(2),
        }
    }
}

/// Ways to make the actor report now (triggerBlockReport, tests): to every NameNode's actor.
/// The DataNode's IPC port serves triggerBlockReport before the actors start; a trigger from
/// then is kept and given to each actor as it starts, so it is never lost.
#[derive(Debug, Default)]
pub struct Triggers {
    inner: Mutex<TriggerList>,
}

#[derive(Debug, Default)]
struct TriggerList {
    actors: Vec<Arc<Kicks>>,
    /// Triggers that came before any actor started.
    early_full: bool,
    early_incremental: bool,
}

impl Triggers {
    /// Sends the pending incremental report now.
    pub fn incremental_report(&self) {
        let mut l = self.inner.lock();
        l.early_incremental |= l.actors.is_empty();
        for k in &l.actors {
            k.incremental_report();
        }
    }

    /// Sends a full block report now (without waiting for the next heartbeat).
    pub fn full_report(&self) {
        let mut l = self.inner.lock();
        l.early_full |= l.actors.is_empty();
        for k in &l.actors {
            k.full_report();
        }
    }

    /// A starting actor's wake-ups, given what was triggered before any actor ran.
    fn attach(&self, kicks: Arc<Kicks>) {
        let mut l = self.inner.lock();
        if l.early_full {
            kicks.full_report();
        }
        if l.early_incremental {
            kicks.incremental_report();
        }
        l.actors.push(kicks);
    }
}

/// One NameNode actor's wake-ups.
#[derive(Debug, Default)]
pub(crate) struct Kicks {
    full_report: AtomicBool,
    ibr_now: Notify,
    /// The next incremental report goes without waiting for the batching interval.
    ibr_force: AtomicBool,
    wake: Notify,
}

impl Kicks {
    fn incremental_report(&self) {
        self.ibr_force.store(true, Ordering::Relaxed);
        self.ibr_now.notify_one();
    }

    fn full_report(&self) {
        self.full_report.store(true, Ordering::Relaxed);
        self.wake.notify_one();
    }
}

#[derive(Clone)]
struct Session {
    nn: Arc<dyn NamenodeProtocol>,
    reg: DatanodeRegistrationProto,
    bpid: String,
}

struct Shared {
    ds: Arc<Dataset>,
    activity: Arc<crate::metrics::Activity>,
    active: Arc<std::sync::atomic::AtomicUsize>,
    faults: Arc<FaultHooks>,
    identity: Identity,
    clock: SharedClock,
    cfg: ActorConfig,
    session: Mutex<Option<Session>>,
    pending: Mutex<Vec<BlockEvent>>,
    /// Taken by a full report from before its replicas are listed until the NameNode has
    /// answered its last RPC, and by each incremental report: the NameNode sees a block
    /// event after a full report listed without it, never before. Otherwise a replica
    /// finalized after the listing, its RECEIVED processed first, is taken by the NameNode
    /// as one the report says is gone (it was recorded before the report began) and its
    /// location dropped until the next full report — for all of a block's replicas at once,
    /// since a pipeline finalizes them together (seen in `ha_process`: a restarted NameNode
    /// became active with no location for a closed file's block). Hadoop's BPServiceActor
    /// sends both from one thread, in that order. An ordering token held across the RPCs on
    /// purpose; nothing else waits on it.
    report_order: tokio::sync::Mutex<()>,
    /// Replicas the block scanner found corrupt, for the next reportBadBlocks:
    /// (pool, storage id, replica).
    bad: Mutex<Vec<(String, String, crate::replica::ReplicaInfo)>>,
    kicks: Arc<Kicks>,
    /// This NameNode's index among the block pool's NameNodes (`pool`).
    nn: usize,
    /// The block pool's HA view, shared by the actors of all its NameNodes.
    pool: Arc<PoolHa>,
    reregister: AtomicBool,
    registered: AtomicBool,
    /// Set when the NameNode refused a registered DataNode for good; the actor stops.
    refused: watch::Sender<Option<String>>,
    /// Set when more volumes failed than tolerated; every actor stops (`volumes`). Shared.
    volumes_failed: Arc<watch::Sender<Option<String>>>,
    cmd_tx: mpsc::UnboundedSender<(String, DatanodeCommandProto)>,
    /// Slow peer / slow disk statistics reported in heartbeats.
    metrics: Option<Arc<crate::metrics::DataNodeMetrics>>,
    /// Replica copies (DNA_TRANSFER) this node is sending now: the heartbeat's
    /// xmitsInProgress, which the NameNode weighs against its replication stream limits.
    xmits: Arc<std::sync::atomic::AtomicU32>,
}

/// What the actors are started with.
pub struct ActorDeps {
    /// One per NameNode of the block pool (one without HA; each of the nameservice's with).
    pub connectors: Vec<Arc<dyn NamenodeConnector>>,
    /// Dataset, faults and config of the transfer server (also used for DNA_TRANSFER).
    pub xceiver: Arc<XceiverContext>,
    pub identity: Identity,
    pub clock: SharedClock,
    pub cfg: ActorConfig,
    /// Block events of the transfer server and the deleter (reported to every NameNode).
    pub events: mpsc::UnboundedReceiver<BlockEvent>,
    /// Removes invalidated replicas.
    pub deleter: AsyncDeleter,
    pub triggers: Arc<Triggers>,
    /// Checks the volumes (`volumes`).
    pub volume_checker: Arc<crate::volume_check::VolumeChecker>,
}

/// Starts an actor per NameNode, a shared block event feed and the volume monitor.
pub fn start(deps: ActorDeps) -> ActorHandle {
    let ActorDeps {
        connectors,
        xceiver,
        identity,
        clock,
        cfg,
        events,
        deleter,
        triggers,
        volume_checker,
    } = deps;
    let (stop, stop_rx) = watch::channel(false);
    let pool = Arc::new(PoolHa::new(
        connectors.iter().map(|c| c.describe()).collect(),
    ));
    let xmits: Arc<std::sync::atomic::AtomicU32> = Arc::default();
    let volumes_failed = Arc::new(watch::Sender::new(None));
    let deleter = Arc::new(deleter);
    let mut actors = Vec::new();
    let mut tasks = Vec::new();
    for (nn, connector) in connectors.into_iter().enumerate() {
        let (cmd_tx, cmd_rx) = mpsc::unbounded_channel();
        let kicks = Arc::new(Kicks::default());
        triggers.attach(kicks.clone());
        let shared = Arc::new(Shared {
            ds: xceiver.dataset.clone(),
            activity: xceiver.activity.clone(),
            active: xceiver.active.clone(),
            faults: xceiver.faults.clone(),
            metrics: xceiver.config.metrics.clone(),
            xmits: xmits.clone(),
            identity: identity.clone(),
            clock: clock.clone(),
            cfg: cfg.clone(),
            session: Mutex::new(None),
            pending: Mutex::new(Vec::new()),
            report_order: tokio::sync::Mutex::new(()),
            bad: Mutex::new(Vec::new()),
            kicks,
            nn,
            pool: pool.clone(),
            reregister: AtomicBool::new(false),
            registered: AtomicBool::new(false),
            refused: watch::Sender::new(None),
            volumes_failed: volumes_failed.clone(),
            cmd_tx,
        });
        tasks.push(tokio::spawn(tracing::Instrument::in_current_span(
            ibr_loop(shared.clone(), stop_rx.clone()),
        )));
        tasks.push(tokio::spawn(tracing::Instrument::in_current_span(
            main_loop(shared.clone(), connector, stop_rx.clone()),
        )));
        tasks.push(tokio::spawn(tracing::Instrument::in_current_span(
            commands::worker(shared.clone(), xceiver.clone(), deleter.clone(), cmd_rx),
        )));
        actors.push(shared);
    }
    tasks.push(tokio::spawn(tracing::Instrument::in_current_span(
        collect_events(actors.clone(), events),
    )));
    tasks.push(tokio::spawn(tracing::Instrument::in_current_span(
        volumes::monitor(actors.clone(), volume_checker, stop_rx.clone()),
    )));
    ActorHandle {
        actors,
        pool,
        stop,
        tasks,
        deleter,
    }
}

/// Every block event goes to every NameNode's next incremental report (Hadoop's
/// BPOfferService.notifyNamenode*Block).
async fn collect_events(actors: Vec<Arc<Shared>>, mut events: mpsc::UnboundedReceiver<BlockEvent>) {
    while let Some(ev) = events.recv().await {
        let now = ev.status == BlockStatus::Received;
        for shared in &actors {
            shared.pending.lock().push(ev.clone());
            if now {
                shared.kicks.ibr_now.notify_one();
            }
        }
    }
}

async fn ibr_loop(shared: Arc<Shared>, mut stop: watch::Receiver<bool>) {
    let interval = shared.cfg.ibr_interval;
    let mut last_sent: Option<tokio::time::Instant> = None;
    loop {
        tokio::select! {
            _ = stop.changed() => return,
            _ = shared.kicks.ibr_now.notified() => {}
        }
        // Batching: a received block waits until `interval` after the previous report,
        // unless a heartbeat or a trigger forces the report out.
        while !interval.is_zero() && !shared.kicks.ibr_force.swap(false, Ordering::Relaxed) {
            let Some(due) = last_sent.map(|t| t + interval) else {
                break;
            };
            if tokio::time::Instant::now() >= due {
                break;
            }
            tokio::select! {
                _ = stop.changed() => return,
                _ = tokio::time::sleep_until(due) => break,
                _ = shared.kicks.ibr_now.notified() => {}
            }
        }
        let delay = shared.faults.ibr_delay();
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        send_ibrs(&shared).await;
        last_sent = Some(tokio::time::Instant::now());
    }
}

async fn send_ibrs(shared: &Shared) {
    let Some(sess) = shared.session.lock().clone() else {
        return;
    };
    bad_blocks::send(shared, &sess).await;
    // Events taken only once no full report is in flight (`report_order`).
    let _order = shared.report_order.lock().await;
    let events = std::mem::take(&mut *shared.pending.lock());
    if events.is_empty() {
        return;
    }
    let mut failed = Vec::new();
    for (bpid, blocks) in report::group_events(events.clone()) {
        if bpid != sess.bpid {
            tracing::warn!(%bpid, "block events for an unknown block pool dropped");
            continue;
        }
        let req = BlockReceivedAndDeletedRequestProto {
            registration: sess.reg.clone(),
            block_pool_id: bpid.clone(),
            blocks,
        };
        let sent = std::time::Instant::now();
        let res = sess.nn.block_received_and_deleted(req).await;
        if res.is_ok() {
            shared
                .activity
                .incremental_block_reports
                .observe(sent.elapsed());
        }
        if let Err(e) = res {
            tracing::warn!(error = %e, "incremental block report failed; will retry");
            failed.extend(events.iter().filter(|ev| ev.bpid == bpid).cloned());
        }
    }
    if !failed.is_empty() {
        let mut p = shared.pending.lock();
        failed.append(&mut p);
        *p = failed;
    }
}

async fn main_loop(
    shared: Arc<Shared>,
    connector: Arc<dyn NamenodeConnector>,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        if *stop.borrow() {
            return;
        }
        let res = tokio::select! {
            _ = stop.changed() => return,
            _ = first_set(&shared.volumes_failed) => {
                // Too many failed volumes: this DataNode stops serving the NameNode.
                shared.registered.store(false, Ordering::Relaxed);
                *shared.session.lock() = None;
                return;
            }
            r = run_session(&shared, connector.as_ref()) => r,
        };
        let was_registered = shared.registered.swap(false, Ordering::Relaxed);
        if let Err(e) = res {
            if was_registered && refuses_for_good(&e) {
                tracing::error!(
                    error = %e,
                    uuid = %shared.identity.datanode_uuid,
                    "the NameNode refused this DataNode; the block pool service is shutting down"
                );
                // No more incremental reports to a NameNode that refused us.
                *shared.session.lock() = None;
                shared.pool.forget(shared.nn);
                shared.refused.send_replace(Some(e.to_string()));
                return;
            }
            tracing::warn!(error = %e, "NameNode session ended; reconnecting");
        }
        tokio::select! {
            _ = stop.changed() => return,
            _ = tokio::time::sleep(shared.cfg.retry_interval) => {}
        }
    }
}

/// Resolves with the first value `tx` is set to. The caller holds `tx`, so it cannot be
/// dropped while this waits.
pub(crate) async fn first_set<T: Clone>(tx: &watch::Sender<Option<T>>) -> T {
    let mut rx = tx.subscribe();
    let set = rx
        .wait_for(Option::is_some)
        .await
        .ok()
        .and_then(|v| v.clone());
    match set {
        Some(v) => v,
        None => std::future::pending().await,
    }
}

/// Exceptions after which a registered DataNode stops serving the NameNode (Hadoop's
/// BPServiceActor.offerService gives up on these instead of retrying).
const REFUSALS: [&str; 2] = [
    rhdfs_ipc::exceptions::DISALLOWED_DATANODE,
    rhdfs_ipc::exceptions::INCORRECT_VERSION,
];

fn refuses_for_good(e: &ActorError) -> bool {
    match e {
        ActorError::Ipc(e) => e.remote_class().is_some_and(|c| REFUSALS.contains(&c)),
        _ => false,
    }
}

/// Handshake, then heartbeats until a call fails or re-registration is requested.
async fn run_session(
    shared: &Arc<Shared>,
    connector: &dyn NamenodeConnector,
) -> Result<(), ActorError> {
    let nn = connector.connect().await?;
    let ns = nn.version_request().await?;
    shared.pool.on_handshake(shared.nn, ns.state);
    let bpid = ns.block_pool_id.clone();
    let ds = shared.ds.clone();
    let (b, cid) = (bpid.clone(), ns.storage_info.cluster_id.clone());
    tokio::task::spawn_blocking(move || -> Result<(), crate::error::StorageError> {
        ds.add_block_pool(&b)?;
        for v in ds.volumes() {
            v.set_cluster_id(&cid)?;
        }
        Ok(())
    })
    .await
    .map_err(|e| ActorError::Other(format!("task failed: {e}")))??;
    let reg = report::registration(&shared.identity, &ns.storage_info, &ns.software_version);
    let reg = nn.register_datanode(reg).await?;
    tracing::info!(%bpid, uuid = %shared.identity.datanode_uuid, "registered with the NameNode");
    let sess = Session { nn, reg, bpid };
    *shared.session.lock() = Some(sess.clone());
    shared.registered.store(true, Ordering::Relaxed);
    shared.reregister.store(false, Ordering::Relaxed);

    let cfg = &shared.cfg;
    // The first full report is due at once (or after a random part of
    // dfs.blockreport.initialDelay); like every periodic one it goes only under a lease the
    // NameNode grants in a heartbeat response, so at most
    // dfs.namenode.max.full.block.report.leases DataNodes report at the same time.
    let mut next_report = shared.clock.monotonic() + random_delay(cfg.initial_delay);
    let mut lease: u64 = 0;
    // Anything that happened while disconnected goes now.
    shared.kicks.ibr_now.notify_one();
    let mut next_hb = tokio::time::Instant::now();
    loop {
        tokio::select! {
            _ = tokio::time::sleep_until(next_hb) => {}
            _ = shared.kicks.wake.notified() => {}
        }
        if shared.reregister.swap(false, Ordering::Relaxed) {
            return Err(ActorError::Other(
                "the NameNode asked for re-registration".into(),
            ));
        }
        if shared.kicks.full_report.swap(false, Ordering::Relaxed) {
            // A forced report (triggerBlockReport) does not wait: it uses the lease held,
            // if any, else none (id 0), as Hadoop's DataNode does.
            full_report(shared, &sess, std::mem::take(&mut lease)).await?;
            next_report = shared.clock.monotonic() + cfg.block_report_interval;
        }
        if tokio::time::Instant::now() < next_hb {
            continue;
        }
        next_hb += cfg.heartbeat_interval;
        let want_lease = lease == 0 && shared.clock.monotonic() >= next_report;
        let req = heartbeat_request(shared, &sess, want_lease).await?;
        let sent = std::time::Instant::now();
        let resp = sess.nn.send_heartbeat(req).await?;
        shared.activity.heartbeats.observe(sent.elapsed());
        let now_ms = shared.clock.now_millis();
        crate::metrics::Activity::set(&shared.activity.last_heartbeat_ms, now_ms);
        if let Some(m) = shared.metrics.as_ref() {
            m.set_slow_node(resp.is_slownode.unwrap_or(false));
        }
        // The HA status first: commands run only from the NameNode taken as active.
        for cmd in shared
            .pool
            .on_heartbeat(shared.nn, &resp.ha_status, resp.cmds)
        {
            let _ = shared.cmd_tx.send((sess.bpid.clone(), cmd));
        }
        // Pending incremental reports go with every heartbeat, batched or not.
        shared.kicks.ibr_force.store(true, Ordering::Relaxed);
        shared.kicks.ibr_now.notify_one();
        let granted = resp.full_block_report_lease_id.unwrap_or(0);
        if granted != 0 {
            if lease != 0 && lease != granted {
                tracing::warn!(
                    old = format!("0x{lease:x}"),
                    new = format!("0x{granted:x}"),
                    "the NameNode sent a full block report lease while one is held; using the new one"
                );
            }
            lease = granted;
        }
        // Without a lease (all taken), the heartbeats keep asking for one.
        if lease != 0 {
            full_report(shared, &sess, std::mem::take(&mut lease)).await?;
            next_report = shared.clock.monotonic() + cfg.block_report_interval;
        }
        let now = tokio::time::Instant::now();
        if next_hb < now {
            next_hb = now;
        }
    }
}

async fn heartbeat_request(
    shared: &Shared,
    sess: &Session,
    want_lease: bool,
) -> Result<HeartbeatRequestProto, ActorError> {
    // Counted before the storages are listed: a volume failing in between is then left out
    // of the list before it is counted, so the NameNode always sees the count grow with
    // the failed storage missing (and drops its replicas).
    let failed_volumes = shared.ds.num_failed_volumes() as u32;
    let summary = report::volume_failure_summary(&shared.ds);
    let ds = shared.ds.clone();
    let stats = tokio::task::spawn_blocking(move || ds.storage_stats())
        .await
        .map_err(|e| ActorError::Other(format!("task failed: {e}")))?;
    let outliers = shared
        .metrics
        .as_ref()
        .map(|m| m.heartbeat_reports())
        .unwrap_or_default();
    if let Some(m) = &shared.metrics {
        // Refreshed with each heartbeat (Hadoop: by its disk outlier detector).
        shared.ds.set_slow_volumes(m.volumes_to_exclude());
    }
    Ok(HeartbeatRequestProto {
        registration: sess.reg.clone(),
        reports: report::storage_reports(&stats),
        xmits_in_progress: Some(shared.xmits.load(Ordering::Relaxed)),
        // Like Hadoop, the transfer server's own accept thread counts as one xceiver, so an
        // idle DataNode reports 1 and the NameNode's load average is never zero.
        xceiver_count: Some(shared.active.load(Ordering::Relaxed) as u32 + 1),
        failed_volumes: Some(failed_volumes),
        volume_failure_summary: summary,
        cache_capacity: Some(0),
        cache_used: Some(0),
        request_full_block_report_lease: Some(want_lease),
        slow_peers: outliers.slow_peers,
        slow_disks: outliers.slow_disks,
        ..Default::default()
    })
}

async fn full_report(shared: &Shared, sess: &Session, lease: u64) -> Result<(), ActorError> {
    // No incremental report goes while this one is listed and sent (`report_order`).
    let _order = shared.report_order.lock().await;
    let (ds, bpid) = (shared.ds.clone(), sess.bpid.clone());
    let reports = tokio::task::spawn_blocking(move || report::storage_block_reports(&ds, &bpid))
        .await
        .map_err(|e| ActorError::Other(format!("task failed: {e}")))?;
    let n: u64 = reports
        .iter()
        .map(|r| r.number_of_blocks.unwrap_or(0))
        .sum();
    // One RPC for everything, or one per storage when the report is large.
    let batches: Vec<Vec<_>> = if n > shared.cfg.split_threshold {
        reports.into_iter().map(|r| vec![r]).collect()
    } else {
        vec![reports]
    };
    let id = rand::random::<i64>();
    let total = batches.len() as i32;
    for (i, batch) in batches.into_iter().enumerate() {
        let mut context = report::report_context(id, lease);
        context.total_rpcs = total;
        context.cur_rpc = i as i32;
        let req = BlockReportRequestProto {
            registration: sess.reg.clone(),
            block_pool_id: sess.bpid.clone(),
            reports: batch,
            context: Some(context),
        };
        let sent = std::time::Instant::now();
        let resp = sess.nn.block_report(req).await?;
        shared.activity.block_reports.observe(sent.elapsed());
        let now_ms = shared.clock.now_millis();
        crate::metrics::Activity::set(&shared.activity.last_block_report_ms, now_ms);
        for cmd in shared
            .pool
            .on_commands(shared.nn, resp.cmd.into_iter().collect())
        {
            let _ = shared.cmd_tx.send((sess.bpid.clone(), cmd));
        }
    }
    tracing::info!(replicas = n, "full block report sent");
    Ok(())
}

fn random_delay(max: Duration) -> Duration {
    if max.is_zero() {
        return Duration::ZERO;
    }
    Duration::from_millis(rand::random_range(0..max.as_millis().max(1) as u64))
}

#[cfg(test)]
mod ha_tests;
#[cfg(test)]
mod tests;
