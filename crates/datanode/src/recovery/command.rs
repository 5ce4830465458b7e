//! DNA_RECOVERBLOCK: the NameNode names this DataNode primary for some blocks; each is
//! recovered on its own task ([`super::recover_block`]).
//!
//! The primary reports to the NameNode over a connection of its own; the address is the
//! one the DataNode was started with ([`set_namenode`]), shared by every DataNode of the
//! process (a minicluster's DataNodes all serve the same NameNode).

use std::sync::Arc;

use parking_lot::Mutex;
use rhdfs_proto::datanode::BlockRecoveryCommandProto;

use crate::dataset::Dataset;

static NAMENODE: Mutex<Option<(String, String)>> = Mutex::new(None);

/// Where primaries send commitBlockSynchronization: `addr` (host:port) as `user`.
pub fn set_namenode(addr: &str, user: &str) {
    *NAMENODE.lock() = Some((addr.to_string(), user.to_string()));
}

/// Starts the recovery of every block in `cmd` with this DataNode as primary. Returns
/// the number of recoveries started.
pub fn on_recovery_command(ds: &Arc<Dataset>, cmd: Option<BlockRecoveryCommandProto>) -> usize {
    let Some(cmd) = cmd else {
        tracing::warn!("BlockRecoveryCommand without recoveryCmd");
        return 0;
    };
    let Some((nn, user)) = NAMENODE.lock().clone() else {
        tracing::warn!(
            blocks = cmd.blocks.len(),
            "block recovery asked but the NameNode address is unknown; ignored"
        );
        return 0;
    };
    let n = cmd.blocks.len();
    for rb in cmd.blocks {
        let ds = ds.clone();
        let (nn, user) = (nn.clone(), user.clone());
        tokio::spawn(async move {
            let uuid = ds.datanode_uuid().to_string();
            if let Err(e) = super::recover_block(&ds, &uuid, &user, &nn, &rb).await {
                tracing::warn!("{e}");
            }
        });
    }
    n
}
