//! Client settings read from a `Configuration` (Hadoop's client keys and defaults).

use std::time::Duration;

use rhdfs_conf::{Configuration, keys};
use rhdfs_transfer::TransferConfig;

use crate::error::{ClientError, Result};
use crate::retry::Backoff;

/// `dfs.client.block.write.replace-datanode-on-failure.policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplacePolicy {
    Never,
    Default,
    Always,
}

/// Replace-datanode-on-failure settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplaceDatanodeOnFailure {
    pub enable: bool,
    pub policy: ReplacePolicy,
    pub best_effort: bool,
    /// `...min-replication`: when no replacement can be found, keep writing to the remaining
    /// nodes if there are at least this many (0 = fail, unless best-effort).
    pub min_replication: u32,
}

impl ReplaceDatanodeOnFailure {
    /// Whether a write goes on with `live` nodes after no replacement datanode could be added:
    /// best-effort, or at least `min_replication` (when set) nodes left.
    pub fn continues_without_replacement(&self, live: usize) -> bool {
        self.best_effort || (self.min_replication > 0 && live >= self.min_replication as usize)
    }

    /// Whether a pipeline of `live` nodes (after dropping the failed ones) for a block of
    /// replication `replication` should get a new node. `flushed_or_appended`: the stream was
    /// hflushed/hsynced or is an append.
    pub fn should_replace(&self, replication: u32, live: usize, flushed_or_appended: bool) -> bool {
        if !self.enable || live == 0 {
            return false;
        }
        let n = live as u32;
        match self.policy {
            ReplacePolicy::Never => false,
            ReplacePolicy::Always => n < replication,
            ReplacePolicy::Default => {
                replication >= 3 && n < replication && (replication / 2 >= n || flushed_or_appended)
            }
        }
    }

    /// The policy name as configured.
    pub fn policy_name(&self) -> &'static str {
        match self.policy {
            ReplacePolicy::Never => "NEVER",
            ReplacePolicy::Default => "DEFAULT",
            ReplacePolicy::Always => "ALWAYS",
        }
    }
}

impl Default for ReplaceDatanodeOnFailure {
    fn default() -> Self {
        ReplaceDatanodeOnFailure {
            enable: true,
            policy: ReplacePolicy::Default,
            best_effort: false,
            min_replication: 0,
        }
    }
}

/// Everything the client reads from the configuration.
#[derive(Debug, Clone)]
pub struct ClientConf {
    pub block_size: u64,
    pub replication: u16,
    /// fs.permissions.umask-mode.
    pub umask: u16,
    pub transfer: TransferConfig,
    /// dfs.client.block.write.retries: extra addBlock attempts after a failed pipeline setup.
    pub block_write_retries: u32,
    /// complete() / addBlock NotReplicatedYet schedule.
    pub locate_following: Backoff,
    pub replace: ReplaceDatanodeOnFailure,
    /// dfs.client.pipeline.recovery.max-retries.
    pub pipeline_recovery_max_retries: u32,
    /// dfs.client.max.block.acquire.failures.
    pub max_block_acquire_failures: u32,
    /// dfs.client.retry.window.base.
    pub retry_window_base: Duration,
    /// fs.trash.interval in minutes (client side).
    pub trash_interval_minutes: f64,
    /// dfs.client.use.datanode.hostname.
    pub use_datanode_hostname: bool,
    /// dfs.client.write.recover.lease.on.close.exception (`write::lease_recovery`).
    pub recover_lease_on_close_exception: bool,
    /// dfs.client.mark.slownode.as.badnode.threshold: consecutive SLOW acks after which a
    /// pipeline node is treated as bad (0 = never).
    pub mark_slownode_as_badnode_threshold: u32,
    /// dfs.client.socketcache.capacity: idle DataNode connections kept (0: none).
    pub socket_cache_capacity: usize,
    /// dfs.client.socketcache.expiryMsec.
    pub socket_cache_expiry: Duration,
    /// dfs.client.hedged.read.threadpool.size: concurrent hedged requests (0: no hedging).
    pub hedged_read_pool_size: usize,
    /// dfs.client.hedged.read.threshold.millis: a positioned read waits this long for a
    /// replica before also asking the next one.
    pub hedged_read_threshold: Duration,
    /// Short-circuit local reads (dfs.client.read.shortcircuit and its keys).
    pub short_circuit: crate::short_circuit::ShortCircuitConf,
}

impl ClientConf {
    pub fn from_conf(conf: &Configuration) -> Result<Self> {
        let transfer = TransferConfig::from_conf(conf)?;
        let umask_s = conf.get_str(
            keys::FS_PERMISSIONS_UMASK_MODE_KEY,
            keys::FS_PERMISSIONS_UMASK_MODE_DEFAULT,
        );
        let umask = parse_umask(&umask_s).ok_or_else(|| {
            ClientError::Failed(format!(
                "bad {}: {umask_s}",
                keys::FS_PERMISSIONS_UMASK_MODE_KEY
            ))
        })?;
        let policy_s = conf.get_str(
            keys::DFS_CLIENT_WRITE_REPLACE_DATANODE_ON_FAILURE_POLICY_KEY,
            keys::DFS_CLIENT_WRITE_REPLACE_DATANODE_ON_FAILURE_POLICY_DEFAULT,
        );
        let policy = match policy_s.trim().to_ascii_uppercase().as_str() {
            "NEVER" => ReplacePolicy::Never,
            "ALWAYS" => ReplacePolicy::Always,
            "DEFAULT" => ReplacePolicy::Default,
            other => {
                return Err(ClientError::Failed(format!(
                    "Illegal configuration value for {}: {other}",
                    keys::DFS_CLIENT_WRITE_REPLACE_DATANODE_ON_FAILURE_POLICY_KEY
                )));
            }
        };
        let replication = conf.get_u64(keys::DFS_REPLICATION_KEY, keys::DFS_REPLICATION_DEFAULT)?;
        Ok(ClientConf {
            block_size: conf.get_size(keys::DFS_BLOCKSIZE_KEY, keys::DFS_BLOCKSIZE_DEFAULT)?,
            replication: u16::try_from(replication).unwrap_or(u16::MAX).max(1),
            umask,
            transfer,
            block_write_retries: conf.get_u32(
                keys::DFS_CLIENT_BLOCK_WRITE_RETRIES_KEY,
                keys::DFS_CLIENT_BLOCK_WRITE_RETRIES_DEFAULT as u32,
            )?,
            locate_following: Backoff {
                retries: conf.get_u32(
                    keys::DFS_CLIENT_BLOCK_WRITE_LOCATEFOLLOWINGBLOCK_RETRIES_KEY,
                    keys::DFS_CLIENT_BLOCK_WRITE_LOCATEFOLLOWINGBLOCK_RETRIES_DEFAULT as u32,
                )?,
                initial: conf.get_duration(
                    keys::DFS_CLIENT_BLOCK_WRITE_LOCATEFOLLOWINGBLOCK_INITIAL_DELAY_MS_KEY,
                    keys::DFS_CLIENT_BLOCK_WRITE_LOCATEFOLLOWINGBLOCK_INITIAL_DELAY_MS_DEFAULT,
                    keys::DFS_CLIENT_BLOCK_WRITE_LOCATEFOLLOWINGBLOCK_INITIAL_DELAY_MS_UNIT,
                )?,
                max: conf.get_duration(
                    keys::DFS_CLIENT_BLOCK_WRITE_LOCATEFOLLOWINGBLOCK_MAX_DELAY_MS_KEY,
                    keys::DFS_CLIENT_BLOCK_WRITE_LOCATEFOLLOWINGBLOCK_MAX_DELAY_MS_DEFAULT,
                    keys::DFS_CLIENT_BLOCK_WRITE_LOCATEFOLLOWINGBLOCK_MAX_DELAY_MS_UNIT,
                )?,
            },
            replace: ReplaceDatanodeOnFailure {
                enable: conf.get_bool(
                    keys::DFS_CLIENT_WRITE_REPLACE_DATANODE_ON_FAILURE_ENABLE_KEY,
                    keys::DFS_CLIENT_WRITE_REPLACE_DATANODE_ON_FAILURE_ENABLE_DEFAULT,
                )?,
                policy,
                best_effort: conf.get_bool(
                    keys::DFS_CLIENT_WRITE_REPLACE_DATANODE_ON_FAILURE_BEST_EFFORT_KEY,
                    keys::DFS_CLIENT_WRITE_REPLACE_DATANODE_ON_FAILURE_BEST_EFFORT_DEFAULT,
                )?,
                min_replication: conf.get_u32(
                    keys::DFS_CLIENT_WRITE_REPLACE_DATANODE_ON_FAILURE_MIN_REPLICATION_KEY,
                    keys::DFS_CLIENT_WRITE_REPLACE_DATANODE_ON_FAILURE_MIN_REPLICATION_DEFAULT
                        as u32,
                )?,
            },
            pipeline_recovery_max_retries: conf.get_u32(
                keys::DFS_CLIENT_PIPELINE_RECOVERY_MAX_RETRIES_KEY,
                keys::DFS_CLIENT_PIPELINE_RECOVERY_MAX_RETRIES_DEFAULT as u32,
            )?,
            max_block_acquire_failures: conf.get_u32(
                keys::DFS_CLIENT_MAX_BLOCK_ACQUIRE_FAILURES_KEY,
                keys::DFS_CLIENT_MAX_BLOCK_ACQUIRE_FAILURES_DEFAULT as u32,
            )?,
            retry_window_base: conf.get_duration(
                keys::DFS_CLIENT_RETRY_WINDOW_BASE_KEY,
                keys::DFS_CLIENT_RETRY_WINDOW_BASE_DEFAULT,
                keys::DFS_CLIENT_RETRY_WINDOW_BASE_UNIT,
            )?,
            trash_interval_minutes: conf
                .get_f64(keys::FS_TRASH_INTERVAL_KEY, keys::FS_TRASH_INTERVAL_DEFAULT)?,
            use_datanode_hostname: conf.get_bool(
                keys::DFS_CLIENT_USE_DN_HOSTNAME_KEY,
                keys::DFS_CLIENT_USE_DN_HOSTNAME_DEFAULT,
            )?,
            recover_lease_on_close_exception: conf.get_bool(
                keys::DFS_CLIENT_WRITE_RECOVER_LEASE_ON_CLOSE_EXCEPTION_KEY,
                keys::DFS_CLIENT_WRITE_RECOVER_LEASE_ON_CLOSE_EXCEPTION_DEFAULT,
            )?,
            mark_slownode_as_badnode_threshold: conf.get_u32(
                keys::DFS_CLIENT_MARK_SLOWNODE_AS_BADNODE_THRESHOLD_KEY,
                keys::DFS_CLIENT_MARK_SLOWNODE_AS_BADNODE_THRESHOLD_DEFAULT as u32,
            )?,
            socket_cache_capacity: usize::try_from(conf.get_u64(
                keys::DFS_CLIENT_SOCKET_CACHE_CAPACITY_KEY,
                keys::DFS_CLIENT_SOCKET_CACHE_CAPACITY_DEFAULT,
            )?)
            .unwrap_or(usize::MAX),
            socket_cache_expiry: conf.get_duration(
                keys::DFS_CLIENT_SOCKET_CACHE_EXPIRY_MSEC_KEY,
                keys::DFS_CLIENT_SOCKET_CACHE_EXPIRY_MSEC_DEFAULT,
                keys::DFS_CLIENT_SOCKET_CACHE_EXPIRY_MSEC_UNIT,
            )?,
            hedged_read_pool_size: usize::try_from(conf.get_u64(
                keys::DFS_CLIENT_HEDGED_READ_THREADPOOL_SIZE_KEY,
                keys::DFS_CLIENT_HEDGED_READ_THREADPOOL_SIZE_DEFAULT,
            )?)
            .unwrap_or(usize::MAX),
            hedged_read_threshold: conf.get_duration(
                keys::DFS_CLIENT_HEDGED_READ_THRESHOLD_MILLIS_KEY,
                keys::DFS_CLIENT_HEDGED_READ_THRESHOLD_MILLIS_DEFAULT,
                keys::DFS_CLIENT_HEDGED_READ_THRESHOLD_MILLIS_UNIT,
            )?,
            short_circuit: crate::short_circuit::ShortCircuitConf::from_conf(conf)?,
        })
    }
}

/// Octal (`022`) or symbolic-free umask; `None` if unparsable.
fn parse_umask(s: &str) -> Option<u16> {
    let v = u16::from_str_radix(s.trim(), 8).ok()?;
    (v <= 0o777).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(p: ReplacePolicy) -> ReplaceDatanodeOnFailure {
        ReplaceDatanodeOnFailure {
            enable: true,
            policy: p,
            best_effort: false,
            min_replication: 0,
        }
    }

    #[test]
    fn min_replication_keeps_a_short_pipeline() {
        let mut p = policy(ReplacePolicy::Default);
        assert!(!p.continues_without_replacement(2));
        p.min_replication = 2;
        assert!(p.continues_without_replacement(2));
        assert!(!p.continues_without_replacement(1));
        p.best_effort = true;
        assert!(p.continues_without_replacement(1));
        let conf = {
            let mut c = Configuration::new();
            c.set(
                "dfs.client.block.write.replace-datanode-on-failure.min-replication",
                "2",
            );
            c
        };
        assert_eq!(
            ClientConf::from_conf(&conf)
                .map(|c| c.replace.min_replication)
                .ok(),
            Some(2)
        );
    }

    #[test]
    fn default_policy() {
        let d = policy(ReplacePolicy::Default);
        // r = 3: one node lost (2 left) -> no replacement unless hflushed/appended.
        assert!(!d.should_replace(3, 2, false));
        assert!(d.should_replace(3, 2, true));
        // two lost (1 left): floor(3/2) = 1 >= 1 -> replace.
        assert!(d.should_replace(3, 1, false));
        // r < 3 never.
        assert!(!d.should_replace(2, 1, true));
        // full pipeline: nothing to do.
        assert!(!d.should_replace(3, 3, true));
        // r = 5, 2 left: floor(5/2) = 2 >= 2.
        assert!(d.should_replace(5, 2, false));
        assert!(!d.should_replace(5, 3, false));
    }

    #[test]
    fn always_never_disabled() {
        assert!(policy(ReplacePolicy::Always).should_replace(2, 1, false));
        assert!(!policy(ReplacePolicy::Always).should_replace(2, 2, false));
        assert!(!policy(ReplacePolicy::Never).should_replace(3, 1, true));
        let mut off = policy(ReplacePolicy::Always);
        off.enable = false;
        assert!(!off.should_replace(3, 1, true));
    }

    #[test]
    fn reads_keys() {
        let mut c = Configuration::new();
        let cc = ClientConf::from_conf(&c).expect("defaults");
        assert_eq!(cc.block_size, 134_217_728);
        assert_eq!(cc.replication, 3);
        assert_eq!(cc.umask, 0o022);
        assert_eq!(cc.locate_following, Backoff::default());
        assert_eq!(cc.replace, ReplaceDatanodeOnFailure::default());
        c.set(
            keys::DFS_CLIENT_WRITE_REPLACE_DATANODE_ON_FAILURE_POLICY_KEY,
            "always",
        );
        c.set(keys::DFS_BLOCKSIZE_KEY, "1m");
        c.set(
            keys::DFS_CLIENT_WRITE_REPLACE_DATANODE_ON_FAILURE_BEST_EFFORT_KEY,
            "true",
        );
        let cc = ClientConf::from_conf(&c).expect("set");
        assert_eq!(cc.replace.policy, ReplacePolicy::Always);
        assert!(cc.replace.best_effort);
        assert_eq!(cc.block_size, 1 << 20);
        c.set(
            keys::DFS_CLIENT_WRITE_REPLACE_DATANODE_ON_FAILURE_POLICY_KEY,
            "sometimes",
        );
        assert!(ClientConf::from_conf(&c).is_err());
    }
}
