//! The command worker: NameNode commands from heartbeat and block report responses are
//! processed here, never on the heartbeat path.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use rhdfs_proto::datanode::datanode_command_proto::Type as CmdType;
use rhdfs_proto::datanode::{BlockCommandProto, DatanodeCommandProto, block_command_proto};
use rhdfs_proto::hdfs::op_write_block_proto::BlockConstructionStage as Stage;
use tokio::sync::mpsc;

use super::Shared;
use super::deleter::{AsyncDeleter, DeleteTask};
use crate::xceiver::{SendRequest, XceiverContext, send_replica};

pub(super) async fn worker(
    shared: Arc<Shared>,
    xceiver: Arc<XceiverContext>,
    deleter: Arc<AsyncDeleter>,
    mut rx: mpsc::UnboundedReceiver<(String, DatanodeCommandProto)>,
) {
    while let Some((bpid, cmd)) = rx.recv().await {
        let started = std::time::Instant::now();
        run_command(&shared, &xceiver, &deleter, &bpid, cmd);
        if let Some(msg) =
            slow_commands(started.elapsed(), shared.cfg.process_commands_threshold, 1)
        {
            tracing::info!("{msg}");
        }
    }
}

/// Hadoop's note for commands slower than dfs.datanode.processcommands.threshold.
pub(super) fn slow_commands(
    took: std::time::Duration,
    threshold: std::time::Duration,
    count: usize,
) -> Option<String> {
    (took > threshold).then(|| {
        format!(
            "Took {} ms to process {count} commands from NN",
            took.as_millis()
        )
    })
}

/// One transfer counted in xmitsInProgress while it lives (Hadoop's DataTransfer
/// increments on start and decrements in its finally block).
struct XmitGuard(Arc<std::sync::atomic::AtomicU32>);

impl XmitGuard {
    fn start(counter: &Arc<std::sync::atomic::AtomicU32>) -> Self {
        counter.fetch_add(1, Ordering::Relaxed);
        XmitGuard(counter.clone())
    }
}

impl Drop for XmitGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

fn run_command(
    shared: &Arc<Shared>,
    xceiver: &Arc<XceiverContext>,
    deleter: &Arc<AsyncDeleter>,
    bpid: &str,
    cmd: DatanodeCommandProto,
) {
    let Ok(kind) = CmdType::try_from(cmd.cmd_type) else {
        tracing::warn!(cmd_type = cmd.cmd_type, "unknown NameNode command ignored");
        return;
    };
    match kind {
        CmdType::BlockCommand => match cmd.blk_cmd {
            Some(bc) => block_command(shared, xceiver, deleter, bc),
            None => tracing::warn!("BlockCommand without blkCmd"),
        },
        CmdType::BlockRecoveryCommand => {
            crate::recovery::on_recovery_command(&shared.ds, shared.nn, cmd.recovery_cmd);
        }
        CmdType::RegisterCommand => {
            tracing::info!(%bpid, "NameNode asked us to re-register");
            shared.reregister.store(true, Ordering::Relaxed);
            shared.kicks.wake.notify_one();
        }
        CmdType::NullDatanodeCommand
        | CmdType::KeyUpdateCommand
        | CmdType::FinalizeCommand
        | CmdType::BalancerBandwidthCommand => {
            tracing::debug!(?kind, "NameNode command needs no action");
        }
        other => {
            tracing::warn!(?other, "NameNode command not supported; ignored");
        }
    }
}

fn block_command(
    shared: &Arc<Shared>,
    xceiver: &Arc<XceiverContext>,
    deleter: &Arc<AsyncDeleter>,
    bc: BlockCommandProto,
) {
    let bpid = bc.block_pool_id.clone();
    match block_command_proto::Action::try_from(bc.action) {
        Ok(block_command_proto::Action::Invalidate) => {
            let mut queued = 0usize;
            for b in &bc.blocks {
                match shared.ds.remove_for_delete(&bpid, b.block_id, b.gen_stamp) {
                    Some(d) => {
                        deleter.submit(DeleteTask::for_command(d, b.num_bytes));
                        queued += 1;
                    }
                    // Deleted earlier, never created (a pipeline node the block was abandoned
                    // on), or kept for a newer generation stamp (warned of above): Hadoop
                    // logs a missing replica at INFO too.
                    None => tracing::info!(
                        id = b.block_id,
                        gs = b.gen_stamp,
                        "invalidate: no such replica"
                    ),
                }
            }
            tracing::info!(%bpid, queued, asked = bc.blocks.len(), "replicas queued for deletion");
        }
        Ok(block_command_proto::Action::Transfer) => {
            for (i, b) in bc.blocks.iter().enumerate() {
                let targets = bc
                    .targets
                    .get(i)
                    .map(|t| t.datanodes.clone())
                    .unwrap_or_default();
                if targets.is_empty() {
                    continue;
                }
                let req = SendRequest {
                    bpid: bpid.clone(),
                    block_id: b.block_id,
                    min_gs: b.gen_stamp,
                    target_storage_types: bc
                        .target_storage_types
                        .get(i)
                        .map(|t| t.storage_types.clone())
                        .unwrap_or_default(),
                    target_storage_ids: bc
                        .target_storage_uuids
                        .get(i)
                        .map(|t| t.storage_uuids.clone())
                        .unwrap_or_default(),
                    targets,
                    stage: Stage::PipelineSetupCreate,
                    client_name: String::new(),
                };
                let x = xceiver.clone();
                let xmit = XmitGuard::start(&shared.xmits);
                tokio::spawn(tracing::Instrument::in_current_span(async move {
                    let _xmit = xmit;
                    let id = req.block_id;
                    let started = std::time::Instant::now();
                    let peer = req
                        .targets
                        .iter()
                        .map(crate::xceiver::xfer_addr)
                        .collect::<Vec<_>>()
                        .join(",");
                    match send_replica(&x, req).await {
                        Ok(bytes) => {
                            crate::metrics::Activity::add(&x.activity.blocks_replicated, 1);
                            x.activity.recent.record(
                                crate::metrics::TransferKind::Replicate,
                                peer,
                                id,
                                bytes,
                                started.elapsed(),
                            );
                        }
                        Err(e) => tracing::warn!(id, error = %e, "replication transfer failed"),
                    }
                }));
            }
        }
        Ok(block_command_proto::Action::Shutdown) | Err(_) => {
            tracing::warn!(action = bc.action, "block command not supported; ignored");
        }
    }
}
