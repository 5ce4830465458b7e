//! The volume monitor (Hadoop's DataNode.checkDiskError / checkDiskErrorAsync and
//! handleVolumeFailures): checks every volume at the start and then every
//! `dfs.datanode.disk.check.min.gap` (rhdfs: Hadoop checks all volumes at block pool start
//! and after some errors only), and a volume at once after an I/O on it failed. A volume that
//! fails its check is taken out of service; the NameNode hears of it in an errorReport
//! (DISK_ERROR) and from the next heartbeat (failed volume count and summary) and full block
//! report, which is sent at once. When more volumes failed than
//! `dfs.datanode.failed.volumes.tolerated` allows, the error report says FATAL_DISK_ERROR and
//! the DataNode stops serving the NameNode (the `rhdfs datanode` process exits).

use std::sync::Arc;
use std::time::Duration;

use rhdfs_proto::datanode::ErrorReportRequestProto;
use rhdfs_proto::datanode::error_report_request_proto::ErrorCode;
use tokio::sync::watch;

use super::Shared;
use crate::volume_check::VolumeChecker;

pub(super) async fn monitor(
    actors: Vec<Arc<Shared>>,
    checker: Arc<VolumeChecker>,
    mut stop: watch::Receiver<bool>,
) {
    let Some(shared) = actors.first().cloned() else {
        return;
    };
    let period = checker.min_gap().max(Duration::from_secs(1));
    let mut next_all = tokio::time::Instant::now();
    loop {
        let failed: Vec<(usize, String)> = tokio::select! {
            _ = stop.changed() => return,
            _ = shared.ds.suspected() => {
                let mut out = Vec::new();
                for i in shared.ds.take_suspects() {
                    if let Some(Err(reason)) = checker.check_one(&shared.ds, i).await {
                        out.push((i, reason));
                    }
                }
                out
            }
            _ = tokio::time::sleep_until(next_all) => {
                next_all = tokio::time::Instant::now() + period;
                checker.check_all(&shared.ds).await.unwrap_or_default()
            }
        };
        if !failed.is_empty() && handle_failures(&actors, failed).await {
            return;
        }
    }
}

/// Takes the failed volumes out of service and tells the NameNode; true when the DataNode
/// must stop.
async fn handle_failures(actors: &[Arc<Shared>], failed: Vec<(usize, String)>) -> bool {
    let Some(shared) = actors.first() else {
        return false;
    };
    for (i, reason) in &failed {
        if let Some(v) = shared.ds.volume(*i) {
            tracing::warn!(
                "Volume {} detected as being unhealthy: {reason}",
                v.base.display()
            );
        }
    }
    let indexes: Vec<usize> = failed.iter().map(|f| f.0).collect();
    let (ds, now) = (shared.ds.clone(), shared.clock.now_millis());
    let locations = match tokio::task::spawn_blocking(move || ds.fail_volumes(&indexes, now)).await
    {
        Ok(l) => l,
        Err(e) => {
            tracing::error!("taking failed volumes out of service failed: {e}");
            return false;
        }
    };
    if locations.is_empty() {
        return false;
    }
    let mut desc = String::from("DataNode failed volumes:");
    for l in &locations {
        desc.push_str(l);
        desc.push(';');
    }
    crate::metrics::Activity::add(&shared.activity.volume_failures, locations.len() as u64);
    let enough = shared.ds.has_enough_resource();
    tracing::warn!("DataNode.handleDiskError on: [{desc}] Keep Running: {enough}");
    let code = if enough {
        ErrorCode::DiskError
    } else {
        ErrorCode::FatalDiskError
    };
    // Every NameNode hears of it (Hadoop's BPOfferService.trySendErrorReport).
    for a in actors {
        let sess = a.session.lock().clone();
        if let Some(sess) = sess {
            let req = ErrorReportRequestProto {
                registartion: sess.reg.clone(),
                error_code: code as u32,
                msg: desc.clone(),
            };
            if let Err(e) = sess.nn.error_report(req).await {
                tracing::warn!(error = %e, "errorReport to the NameNode failed");
            }
        }
    }
    if enough {
        for a in actors {
            a.kicks.full_report();
        }
        return false;
    }
    tracing::warn!("DataNode is shutting down due to failed volumes: [{desc}]");
    // No more reports to the NameNodes; the main loops stop on the signal below.
    for a in actors {
        a.registered
            .store(false, std::sync::atomic::Ordering::Relaxed);
        *a.session.lock() = None;
    }
    shared.volumes_failed.send_replace(Some(desc));
    true
}
