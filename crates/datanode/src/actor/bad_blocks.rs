//! Replicas the block scanner found corrupt, from the scanner to the NameNode: queued in the
//! actor and sent as DatanodeProtocol reportBadBlocks ahead of the next incremental report.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::{Session, Shared};

/// The actors' end of the block scanner: a corrupt replica is queued for every NameNode and
/// sent with the next incremental report, at once.
pub(super) struct ScannerSink(pub(super) Vec<Arc<Shared>>);

impl crate::block_scanner::BadReplicaSink for ScannerSink {
    fn bad_replica(&self, bpid: &str, storage_id: &str, r: &crate::replica::ReplicaInfo) {
        for a in &self.0 {
            a.bad
                .lock()
                .push((bpid.to_string(), storage_id.to_string(), r.clone()));
            a.kicks.ibr_force.store(true, Ordering::Relaxed);
            a.kicks.ibr_now.notify_one();
        }
    }
}

/// Sends the queued bad replicas with reportBadBlocks; kept for the next try on failure.
pub(super) async fn send(shared: &Shared, sess: &Session) {
    let bad = std::mem::take(&mut *shared.bad.lock());
    if bad.is_empty() {
        return;
    }
    let (mine, other): (Vec<_>, Vec<_>) = bad.into_iter().partition(|(b, _, _)| *b == sess.bpid);
    if !other.is_empty() {
        tracing::warn!(
            n = other.len(),
            "bad replicas of an unknown block pool dropped"
        );
    }
    let blocks = mine
        .iter()
        .map(|(bpid, storage, r)| rhdfs_proto::hdfs::LocatedBlockProto {
            b: rhdfs_proto::hdfs::ExtendedBlockProto {
                pool_id: bpid.clone(),
                block_id: r.id,
                generation_stamp: r.gs,
                num_bytes: Some(r.num_bytes),
            },
            locs: vec![rhdfs_proto::hdfs::DatanodeInfoProto {
                id: sess.reg.datanode_id.clone(),
                ..Default::default()
            }],
            storage_i_ds: vec![storage.clone()],
            ..Default::default()
        })
        .collect();
    let req = rhdfs_proto::datanode::ReportBadBlocksRequestProto { blocks };
    if let Err(e) = sess.nn.report_bad_blocks(req).await {
        tracing::warn!(error = %e, "reportBadBlocks failed; will retry");
        let mut q = shared.bad.lock();
        let mut again = mine;
        again.append(&mut q);
        *q = again;
    }
}
