//! The namesystem: the namespace behind its lock, joined to the block manager.
//!
//! Rules kept here: the namespace lock is a plain (non-async) mutex held only for short
//! synchronous steps; it is never held across an await or while waiting on the block
//! manager; lock order is namespace, then block manager; blocks of deleted files go to
//! the block manager only after the namespace lock is released.

mod block_mutations;
mod durable;
mod effects;
mod installed_image;
mod located;
mod open_file_leases;
mod orphans;
mod summary;
mod truncate;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use rhdfs_blockmanager::locks::TimedMutex;
use rhdfs_blockmanager::{Block, BlockManager, Location, LockStat};
use rhdfs_conf::clock::SharedClock;

pub use block_mutations::{AddBlockArgs, LocatedAppend};
pub use effects::{Applied, CrashBeforeSync, Effects};
pub use located::{LocatedBlock, LocatedBlocks};
pub use orphans::FutureReplicas;

use crate::fsdir::FileBlock;
use crate::fsdir::permission::Caller;
use crate::namespace::{Namespace, Now};

/// Server-side settings of the namesystem.
#[derive(Debug, Clone)]
pub struct NamesystemSettings {
    /// How long addBlock/complete wait on the server for replicas before answering
    /// NotReplicatedYet / false (the client then retries):
    /// `rhdfs.namenode.replication.wait.ms`.
    pub replication_wait: Duration,
    /// How often the lease monitor looks for leases past the hard limit
    /// (`dfs.namenode.lease-recheck-interval-ms`).
    pub lease_recheck: Duration,
    /// How long a block recovery may go unanswered before another is started: 30 ×
    /// `dfs.heartbeat.interval` (`block_recoveries::block_recovery_timeout`).
    pub block_recovery_timeout: Duration,
    /// Open files one listOpenFiles call answers with
    /// (`dfs.namenode.list.openfiles.num.responses`).
    pub list_open_files_batch: usize,
    /// How long a user's groups are cached (`hadoop.security.groups.cache.secs`).
    pub groups_cache: Duration,
    /// Test hook: abort between an operation's edit and its sync (`effects`).
    pub crash_before_sync: CrashBeforeSync,
}

impl Default for NamesystemSettings {
    fn default() -> Self {
        NamesystemSettings {
            replication_wait: rhdfs_conf::keys::RHDFS_NAMENODE_REPLICATION_WAIT_MS_DEFAULT,
            lease_recheck: rhdfs_conf::keys::DFS_NAMENODE_LEASE_RECHECK_INTERVAL_MS_DEFAULT,
            block_recovery_timeout: crate::block_recoveries::block_recovery_timeout(
                rhdfs_conf::keys::DFS_HEARTBEAT_INTERVAL_DEFAULT,
            ),
            list_open_files_batch:
                rhdfs_conf::keys::DFS_NAMENODE_LIST_OPENFILES_NUM_RESPONSES_DEFAULT as usize,
            groups_cache: rhdfs_conf::keys::HADOOP_SECURITY_GROUPS_CACHE_SECS_DEFAULT,
            crash_before_sync: CrashBeforeSync::default(),
        }
    }
}

/// Looks up a user's groups (the OS group mapping by default).
pub type GroupsLookup = Arc<dyn Fn(&str) -> Vec<String> + Send + Sync>;

/// A user's groups as cached by `Namesystem::caller`.
struct CachedGroups {
    groups: Vec<String>,
    /// The namespace's verdict for the user with these groups (its superuser and
    /// supergroup change only with the namespace: `install_namespace` empties the cache).
    superuser: bool,
    /// Monotonic time of the lookup.
    at: Duration,
}

/// Namespace + block manager.
pub struct Namesystem {
    /// The namespace lock; hold and wait times are recorded per operation kind.
    ns: TimedMutex<Namespace>,
    bm: Arc<BlockManager>,
    clock: SharedClock,
    settings: NamesystemSettings,
    groups: GroupsLookup,
    /// user -> groups, whether that makes a superuser, and when they were looked up.
    groups_cache: Mutex<HashMap<String, CachedGroups>>,
    /// The edit log and image store (absent in tests that run without storage).
    durable: std::sync::OnceLock<Arc<crate::persist::Durable>>,
    /// How the start went (absent in tests that build a namesystem directly).
    startup: std::sync::OnceLock<Arc<crate::startup::StartupProgress>>,
    /// Block recoveries in progress (lease recovery).
    pub(crate) recoveries: crate::block_recoveries::BlockRecoveries,
    /// Active, standby or failed (HA); active without HA.
    role: crate::ha::RoleCell,
    /// With HA: where the active's edits go to be replicated (`Namesystem::sync_edits`
    /// waits on it instead of the local edit log).
    shipper: std::sync::OnceLock<Arc<crate::ha::ship::EditShipper>>,
    /// The ClientProtocol service's retry cache, which committed edits of other NameNodes'
    /// at-most-once calls are recorded in (HA; absent when the cache is off).
    retry_cache: std::sync::OnceLock<Arc<crate::retry_cache::RetryCache>>,
}

impl std::fmt::Debug for Namesystem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Namesystem").finish_non_exhaustive()
    }
}

pub(crate) fn to_block(b: &FileBlock) -> Block {
    Block::new(b.id, b.gs, b.num_bytes)
}

impl Namesystem {
    pub fn new(
        ns: Namespace,
        bm: Arc<BlockManager>,
        clock: SharedClock,
        settings: NamesystemSettings,
        groups: GroupsLookup,
    ) -> Arc<Self> {
        Arc::new(Namesystem {
            ns: TimedMutex::new("namesystem", ns),
            bm,
            clock,
            settings,
            groups,
            groups_cache: Mutex::new(HashMap::new()),
            durable: std::sync::OnceLock::new(),
            startup: std::sync::OnceLock::new(),
            recoveries: Default::default(),
            role: Default::default(),
            shipper: std::sync::OnceLock::new(),
            retry_cache: std::sync::OnceLock::new(),
        })
    }

    /// The HA role (always active without HA).
    pub fn ha_role(&self) -> &crate::ha::RoleCell {
        &self.role
    }

    /// Whether this NameNode replicates its edits through Raft (an HA nameservice).
    pub fn is_ha(&self) -> bool {
        self.shipper.get().is_some()
    }

    /// Makes this a NameNode of an HA nameservice: edits are replicated through `shipper`
    /// (once, at start).
    pub fn attach_shipper(&self, shipper: Arc<crate::ha::ship::EditShipper>) {
        if self.shipper.set(shipper).is_err() {
            tracing::warn!("edit shipper attached twice; keeping the first");
        }
    }

    /// Shares the ClientProtocol service's retry cache (once, at start), so calls committed
    /// by another NameNode are remembered in it (`ha::apply`).
    pub fn attach_retry_cache(&self, cache: Arc<crate::retry_cache::RetryCache>) {
        if self.retry_cache.set(cache).is_err() {
            tracing::warn!("retry cache attached twice; keeping the first");
        }
    }

    /// The retry cache, when attached.
    pub fn retry_cache(&self) -> Option<&Arc<crate::retry_cache::RetryCache>> {
        self.retry_cache.get()
    }

    pub fn block_manager(&self) -> &Arc<BlockManager> {
        &self.bm
    }

    pub fn block_pool_id(&self) -> &str {
        self.bm.block_pool_id()
    }

    /// The settings this namesystem was built with.
    pub fn settings(&self) -> &NamesystemSettings {
        &self.settings
    }

    pub fn now(&self) -> Now {
        Now {
            wall_ms: self.clock.now_millis(),
            mono: self.clock.monotonic(),
        }
    }

    /// Runs `f` under the namespace lock (synchronous: nothing may await inside).
    pub fn with_ns<R>(&self, f: impl FnOnce(&mut Namespace) -> R) -> R {
        self.with_ns_op("namespace", f)
    }

    /// `with_ns` with the hold recorded under operation kind `op` in `ns_lock_stats`.
    pub fn with_ns_op<R>(&self, op: &'static str, f: impl FnOnce(&mut Namespace) -> R) -> R {
        let mut ns = self.ns.lock(op);
        let r = f(&mut ns);
        // The block manager holds unknown replicas newer than these (`orphans`).
        self.bm.set_namespace_marks(
            ns.last_generation_stamp(),
            ns.orphan_floor().unwrap_or(u64::MAX),
        );
        r
    }

    /// Longest/total hold and longest wait of the namespace lock, per operation kind.
    pub fn ns_lock_stats(&self) -> Vec<LockStat> {
        self.ns.stats()
    }

    pub fn reset_ns_lock_stats(&self) {
        self.ns.reset_stats();
    }

    /// The caller `user` from `machine`, with groups (cached; looked up off the async
    /// threads since the lookup may run a process). A cached caller is made without the
    /// namespace lock: whether it is a superuser was decided with its groups.
    pub async fn caller(&self, user: &str, machine: &str) -> Caller {
        let now = self.clock.monotonic();
        let cached = self
            .groups_cache
            .lock()
            .get(user)
            .filter(|c| now.saturating_sub(c.at) < self.settings.groups_cache)
            .map(|c| Caller::new(user, c.groups.clone(), c.superuser));
        let mut c = match cached {
            Some(c) => c,
            None => {
                let lookup = self.groups.clone();
                let u = user.to_string();
                let groups = tokio::task::spawn_blocking(move || lookup(&u))
                    .await
                    .unwrap_or_default();
                let c = self.ns.lock("caller").caller(user, groups);
                self.groups_cache.lock().insert(
                    user.to_string(),
                    CachedGroups {
                        groups: c.groups.clone(),
                        superuser: c.superuser,
                        at: now,
                    },
                );
                c
            }
        };
        c.machine = machine.to_string();
        c
    }

    /// Forgets every cached caller (the namespace deciding who is a superuser changed).
    pub(crate) fn forget_cached_callers(&self) {
        self.groups_cache.lock().clear();
    }

    /// Live locations of a block, in pipeline/read order.
    pub(crate) fn locations(&self, id: u64) -> Vec<Location> {
        self.bm.locations(id)
    }
}
