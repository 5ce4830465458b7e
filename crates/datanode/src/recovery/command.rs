//! DNA_RECOVERBLOCK: the NameNode names this DataNode primary for some blocks; each is
//! recovered on its own task ([`super::recover_block`]).
//!
//! The primary reports to the NameNode over a connection of its own: the NameNode that sent
//! the command — with HA the active one, as only its commands run — by its address among
//! those the DataNode was started with ([`set_namenodes`]), kept per DataNode uuid (several
//! clusters may run in one test process).

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use rhdfs_proto::datanode::BlockRecoveryCommandProto;

use crate::dataset::Dataset;

/// Per DataNode uuid: its NameNodes' addresses (by actor index) and the user to call as.
type Targets = HashMap<String, (Vec<String>, String)>;

static NAMENODE: Mutex<Option<Targets>> = Mutex::new(None);

/// Where DataNode `uuid` sends commitBlockSynchronization: its one NameNode at `addr`
/// (host:port), as `user`.
pub fn set_namenode(uuid: &str, addr: &str, user: &str) {
    set_namenodes(uuid, &[addr.to_string()], user);
}

/// Where DataNode `uuid` sends commitBlockSynchronization: to the NameNode at `addrs[i]`
/// (host:port) for a command from the actor of NameNode `i`, as `user`.
pub fn set_namenodes(uuid: &str, addrs: &[String], user: &str) {
    NAMENODE
        .lock()
        .get_or_insert_with(HashMap::new)
        .insert(uuid.to_string(), (addrs.to_vec(), user.to_string()));
}

/// Starts the recovery of every block in `cmd`, sent by NameNode `from` (its actor index),
/// with this DataNode as primary. Returns the number of recoveries started.
pub fn on_recovery_command(
    ds: &Arc<Dataset>,
    from: usize,
    cmd: Option<BlockRecoveryCommandProto>,
) -> usize {
    let Some(cmd) = cmd else {
        tracing::warn!("BlockRecoveryCommand without recoveryCmd");
        return 0;
    };
    let uuid = ds.datanode_uuid().to_string();
    let target = NAMENODE.lock().as_ref().and_then(|m| {
        m.get(&uuid)
            .and_then(|(addrs, user)| Some((addrs.get(from)?.clone(), user.clone())))
    });
    let Some((nn, user)) = target else {
        tracing::warn!(
            blocks = cmd.blocks.len(),
            "block recovery asked but the NameNode address is unknown; ignored"
        );
        return 0;
    };
    let n = cmd.blocks.len();
    for rb in cmd.blocks {
        let ds = ds.clone();
        let (nn, user, uuid) = (nn.clone(), user.clone(), uuid.clone());
        tokio::spawn(tracing::Instrument::in_current_span(async move {
            if let Err(e) = super::recover_block(&ds, &uuid, &user, &nn, &rb).await {
                tracing::warn!("{e}");
            }
        }));
    }
    n
}
