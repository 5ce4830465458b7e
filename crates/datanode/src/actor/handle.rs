//! The handle of a block pool's running actors (one per NameNode) and the view of them the
//! web port reads: registration, the block pool learnt, refusal and volume failure, the HA
//! view, shutdown.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::{AsyncDeleter, PoolHa, Session, Shared, bad_blocks, first_set};

/// The running actors of one block pool, one per NameNode.
pub struct ActorHandle {
    pub(super) actors: Vec<Arc<Shared>>,
    pub(super) pool: Arc<PoolHa>,
    pub(super) stop: watch::Sender<bool>,
    pub(super) tasks: Vec<JoinHandle<()>>,
    pub(super) deleter: Arc<AsyncDeleter>,
}

impl std::fmt::Debug for ActorHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActorHandle")
            .field("registered", &self.is_registered())
            .field("active", &self.pool.active())
            .finish()
    }
}

/// A cloneable view of the actors' state for the web port.
#[derive(Clone)]
pub struct ActorView {
    actors: Arc<[Arc<Shared>]>,
    pool: Arc<PoolHa>,
}

impl std::fmt::Debug for ActorView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActorView").finish_non_exhaustive()
    }
}

fn any_registered(actors: &[Arc<Shared>]) -> bool {
    actors.iter().any(|a| a.registered.load(Ordering::Relaxed))
}

fn first_session<T>(actors: &[Arc<Shared>], f: impl Fn(&Session) -> T) -> Option<T> {
    actors
        .iter()
        .find_map(|a| a.session.lock().as_ref().map(&f))
}

impl ActorView {
    /// True while registered with a NameNode (any of the block pool's).
    pub fn is_registered(&self) -> bool {
        any_registered(&self.actors)
    }

    /// Block pool ID learnt from the NameNode.
    pub fn block_pool_id(&self) -> Option<String> {
        first_session(&self.actors, |s| s.bpid.clone())
    }

    /// The cluster ID of the NameNode this node registered with.
    pub fn cluster_id(&self) -> Option<String> {
        first_session(&self.actors, |s| s.reg.storage_info.cluster_id.clone())
    }

    /// Replica copies (DNA_TRANSFER) being sent now, the heartbeat's xmitsInProgress.
    pub fn xmits_in_progress(&self) -> u32 {
        self.actors
            .first()
            .map_or(0, |a| a.xmits.load(Ordering::Relaxed))
    }

    /// The block pool's HA view: the NameNode taken as active, commands ignored.
    pub fn ha(&self) -> &Arc<PoolHa> {
        &self.pool
    }
}

impl ActorHandle {
    /// Where the block scanner reports corrupt replicas (sent as reportBadBlocks to every
    /// NameNode).
    pub fn bad_replica_sink(&self) -> Arc<dyn crate::block_scanner::BadReplicaSink> {
        Arc::new(bad_blocks::ScannerSink(self.actors.clone()))
    }

    /// The actors' state, for the web port.
    pub fn view(&self) -> ActorView {
        ActorView {
            actors: self.actors.clone().into(),
            pool: self.pool.clone(),
        }
    }

    /// The block pool's HA view (which NameNode is taken as active).
    pub fn ha(&self) -> &Arc<PoolHa> {
        &self.pool
    }

    /// True once registered with a NameNode (false again while reconnecting to all).
    pub fn is_registered(&self) -> bool {
        any_registered(&self.actors)
    }

    /// Resolves with a NameNode's reason once every NameNode refused this DataNode for good
    /// (a DisallowedDatanodeException or IncorrectVersionException in answer to a heartbeat,
    /// as when `dfsadmin -refreshNodes` dropped it from the include list); the actors have
    /// stopped serving the NameNodes by then, and the DataNode process exits, as Hadoop's
    /// does once its last block pool service stops. A refused registration is retried
    /// instead.
    pub async fn refused(&self) -> String {
        let mut reason = String::new();
        for a in &self.actors {
            reason = first_set(&a.refused).await;
        }
        match self.actors.is_empty() {
            true => std::future::pending().await,
            false => reason,
        }
    }

    /// Block pool ID learnt from the NameNode.
    pub fn block_pool_id(&self) -> Option<String> {
        first_session(&self.actors, |s| s.bpid.clone())
    }

    /// Resolves with the failed volumes once more failed than tolerated: the actors have
    /// stopped serving the NameNodes and the daemon should exit, as Hadoop's DataNode does.
    pub async fn volumes_failed(&self) -> String {
        match self.actors.first() {
            Some(a) => first_set(&a.volumes_failed).await,
            None => std::future::pending().await,
        }
    }

    /// Stops all tasks and the deleter threads.
    pub async fn shutdown(mut self) {
        let _ = self.stop.send(true);
        for t in self.tasks.drain(..) {
            t.abort();
            let _ = t.await;
        }
        let d = self.deleter.clone();
        let _ = tokio::task::spawn_blocking(move || d.shutdown()).await;
    }
}
