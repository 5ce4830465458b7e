//! A writer whose DataNodes failed it hands its file to lease recovery.
//!
//! Once a write fails on its pipeline (every node bad, no replacement, a block that cannot
//! be closed) the stream is dead, but the file stays open on the NameNode under this
//! client's lease. Hadoop leaves it there until the lease expires, and a client that keeps
//! other files open renews that lease, so the file can stay open — its last block never
//! re-replicated — as long as the process lives. With
//! `dfs.client.write.recover.lease.on.close.exception` (Hadoop's key, default false there,
//! true here) closing such a writer, or dropping it without a close, asks the NameNode to
//! recover the lease: block recovery brings the replicas to a common length and the file
//! closes with it (every acknowledged byte kept).
//!
//! Only failures on the DataNodes qualify. A NameNode that refused the file (the lease is
//! another client's, the file is gone, permission) is left alone: recoverLease is forced and
//! would cut off the writer that now holds the file. A NameNode that could not be reached
//! would not answer recoverLease either, and the close is not made to wait for it.

use tracing::{debug, info, warn};

use super::FileWriter;
use crate::error::ClientError;

/// Whether a write failure came from the pipeline's DataNodes (so only lease recovery can
/// finish the file).
pub(super) fn failed_on_datanodes(e: &ClientError) -> bool {
    matches!(e, ClientError::Transfer(_) | ClientError::Failed(_))
}

impl FileWriter {
    /// Whether the failed file should be (and not yet was) handed to lease recovery; marks
    /// it handed.
    fn take_lease_recovery(&mut self) -> bool {
        let due = self.failed_on_datanodes
            && !self.lease_recovery_asked
            && !self.closed
            && self.fs.inner.conf.recover_lease_on_close_exception;
        self.lease_recovery_asked |= due;
        due
    }

    /// After a close that failed on the DataNodes: asks the NameNode to recover the file's
    /// lease (once). Its own failure is logged, not returned: the close's error stands.
    pub(super) async fn recover_lease_after_failure(&mut self) {
        if !self.take_lease_recovery() {
            return;
        }
        log_outcome(&self.src, self.fs.recover_lease(&self.src).await);
    }
}

fn log_outcome(src: &str, r: crate::error::Result<bool>) {
    match r {
        Ok(closed) => info!(
            path = src,
            closed, "write failed on its DataNodes: lease recovery asked for"
        ),
        // Deleted meanwhile (a shell's temporary copy, say): nothing left to recover.
        Err(e) if e.class_name() == crate::error::class::FILE_NOT_FOUND => {
            debug!(path = src, "write failed; the file is gone: {e}")
        }
        Err(e) => warn!(path = src, "write failed; recoverLease failed too: {e}"),
    }
}

impl Drop for FileWriter {
    /// A failed writer dropped without a close: the same recovery, in the background (when
    /// a Tokio runtime is there to run it). A healthy writer dropped unclosed is left as it
    /// is (its file stays open until the lease expires, as a crashed client's would).
    fn drop(&mut self) {
        if !self.take_lease_recovery() {
            return;
        }
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            warn!(path = %self.src, "failed writer dropped outside a runtime: file left open");
            return;
        };
        let (fs, src) = (self.fs.clone(), self.src.clone());
        rt.spawn(async move {
            let r = fs.recover_lease(&src).await;
            log_outcome(&src, r);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_datanode_failures_call_for_lease_recovery() {
        assert!(failed_on_datanodes(&ClientError::Failed(
            "All datanodes [127.0.0.1:1] are bad. Aborting...".into()
        )));
        assert!(failed_on_datanodes(&ClientError::Transfer(
            rhdfs_transfer::TransferError::Protocol("bad ack".into())
        )));
        for e in [
            ClientError::remote(
                "org.apache.hadoop.hdfs.server.namenode.LeaseExpiredException",
                "Client (=c2) is not the lease owner",
            ),
            ClientError::FileNotFound("/f".into()),
            ClientError::Rpc("connection reset".into()),
            ClientError::Io(std::io::Error::from(std::io::ErrorKind::ConnectionRefused)),
            ClientError::Closed,
        ] {
            assert!(!failed_on_datanodes(&e), "{e:?}");
        }
    }
}
