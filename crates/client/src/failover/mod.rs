//! NameNode failover, as Hadoop's ConfiguredFailoverProxyProvider with its
//! failover-on-network-exception retry policy: a client of an HA nameservice holds one
//! [`rhdfs_ipc::RpcClient`] per NameNode ([`proxy::NameNodeProxy`]) and, when the NameNode it
//! uses cannot be reached or answers `StandbyException`, re-sends the call to the next one.
//!
//! Why a layer over several `RpcClient`s rather than an `RpcClient` with several addresses:
//! an `RpcClient` is one connection to one server with its own call numbering, and the rules
//! here (which NameNode is current, which failures move on, backoff between rounds, which calls
//! may be re-sent) are HDFS's, not the IPC protocol's. The layer numbers the calls itself and
//! sends each through [`rhdfs_ipc::RpcClient::call_raw_as`] with one client id shared by every
//! NameNode's client, so a call re-sent after failover carries the same client id and call id
//! and the NameNode's retry cache answers an at-most-once call at most once.
//!
//! This file holds the settings and the decision; `proxy` the moving parts; `observer` reads
//! from observer NameNodes (ObserverReadProxyProvider).

mod observer;
mod proxy;

use std::time::Duration;

use rhdfs_conf::{ConfError, Configuration, keys};
use rhdfs_ipc::{ConnectRetry, IpcError, exceptions};
use rhdfs_proto::client_methods::retry_class;

pub use observer::{AfterFailure, ObserverSettings, Seen, after_observer_failure};
pub use proxy::{NameNodeProxy, SleepFn, tokio_sleep};

/// How a connect to one NameNode of an HA nameservice is retried before the call moves to
/// the next: `dfs.client.failover.connection.retries` and `...retries.on.timeouts` (0 and 0)
/// in place of `ipc.client.connect.max.retries` and `...on.timeouts`, as Hadoop's failover
/// proxy provider sets them; `ipc.client.connect.retry.interval` between retries.
pub fn connect_retry(conf: &Configuration) -> Result<ConnectRetry, ConfError> {
    ConnectRetry::from_keys(
        conf,
        (
            keys::DFS_CLIENT_FAILOVER_CONNECTION_RETRIES_KEY,
            keys::DFS_CLIENT_FAILOVER_CONNECTION_RETRIES_DEFAULT,
        ),
        (
            keys::DFS_CLIENT_FAILOVER_CONNECTION_RETRIES_ON_TIMEOUTS_KEY,
            keys::DFS_CLIENT_FAILOVER_CONNECTION_RETRIES_ON_TIMEOUTS_DEFAULT,
        ),
    )
}

/// The `dfs.client.failover.*` settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailoverSettings {
    /// `dfs.client.failover.max.attempts`: failovers (moves to another NameNode) for one call
    /// before its last failure is returned — and not before the call has waited as long as
    /// Hadoop's client waits over as many (`hadoop_wait`).
    pub max_attempts: u32,
    /// `dfs.client.failover.sleep.base.millis`: the sleep after the first full round.
    pub sleep_base: Duration,
    /// `dfs.client.failover.sleep.max.millis`: the longest sleep between rounds.
    pub sleep_max: Duration,
    /// `dfs.client.failover.random.order`: NameNodes tried in a shuffled order.
    pub random_order: bool,
}

impl FailoverSettings {
    /// Reads the `dfs.client.failover.*` keys (Hadoop's defaults when unset).
    pub fn from_conf(conf: &Configuration) -> Result<Self, ConfError> {
        let max_attempts = conf.get_u64(
            keys::DFS_CLIENT_FAILOVER_MAX_ATTEMPTS_KEY,
            keys::DFS_CLIENT_FAILOVER_MAX_ATTEMPTS_DEFAULT,
        )?;
        Ok(FailoverSettings {
            max_attempts: u32::try_from(max_attempts).unwrap_or(u32::MAX),
            sleep_base: conf.get_duration(
                keys::DFS_CLIENT_FAILOVER_SLEEPTIME_BASE_KEY,
                keys::DFS_CLIENT_FAILOVER_SLEEPTIME_BASE_DEFAULT,
                keys::DFS_CLIENT_FAILOVER_SLEEPTIME_BASE_UNIT,
            )?,
            sleep_max: conf.get_duration(
                keys::DFS_CLIENT_FAILOVER_SLEEPTIME_MAX_KEY,
                keys::DFS_CLIENT_FAILOVER_SLEEPTIME_MAX_DEFAULT,
                keys::DFS_CLIENT_FAILOVER_SLEEPTIME_MAX_UNIT,
            )?,
            random_order: conf.get_bool(
                keys::DFS_CLIENT_FAILOVER_RANDOM_ORDER_KEY,
                keys::DFS_CLIENT_FAILOVER_RANDOM_ORDER_DEFAULT,
            )?,
        })
    }

    /// How long Hadoop's client sleeps in all over `max_attempts` failovers
    /// (FailoverOnNetworkExceptionRetry: none before the first, then the base doubled per
    /// failover, capped at the maximum; Hadoop scales each by a random factor of mean 1).
    /// rhdfs's client moves through every NameNode without sleeping and sleeps between rounds,
    /// so it would run out of attempts far sooner — with three NameNodes and the defaults,
    /// after 15.5 s of sleep where Hadoop's sleeps 165 s: an election slower than that on a
    /// loaded machine failed calls a Java client rides out. It keeps going until it has waited
    /// this long too.
    pub fn hadoop_wait(&self) -> Duration {
        let mut total = Duration::ZERO;
        for f in 1..self.max_attempts {
            let step = 1u32
                .checked_shl(f)
                .map_or(self.sleep_max, |k| self.sleep_base.saturating_mul(k))
                .min(self.sleep_max);
            if step == self.sleep_max {
                // Every later failover waits the maximum too.
                return total.saturating_add(self.sleep_max.saturating_mul(self.max_attempts - f));
            }
            total = total.saturating_add(step);
        }
        total
    }

    /// The sleep after `rounds` full rounds over every NameNode have failed (1 = the first):
    /// the base, doubling each round, capped at the maximum.
    pub fn sleep_after_round(&self, rounds: u32) -> Duration {
        if rounds == 0 {
            return Duration::ZERO;
        }
        let factor = 1u32.checked_shl(rounds - 1).unwrap_or(u32::MAX);
        self.sleep_base.saturating_mul(factor).min(self.sleep_max)
    }
}

impl Default for FailoverSettings {
    fn default() -> Self {
        FailoverSettings {
            max_attempts: keys::DFS_CLIENT_FAILOVER_MAX_ATTEMPTS_DEFAULT as u32,
            sleep_base: keys::DFS_CLIENT_FAILOVER_SLEEPTIME_BASE_DEFAULT,
            sleep_max: keys::DFS_CLIENT_FAILOVER_SLEEPTIME_MAX_DEFAULT,
            random_order: keys::DFS_CLIENT_FAILOVER_RANDOM_ORDER_DEFAULT,
        }
    }
}

/// Whether a call of `method` that failed with `err` goes to the next NameNode. `sent`: the
/// request may have reached the NameNode (the connection was up when it was sent).
///
/// A StandbyException means the NameNode did not run the call, and a connection that could
/// not be made carried nothing: both move on for any call. A connection lost (reset, closed,
/// timed out) after sending may have run it, so only a call declared idempotent or at-most-once
/// (`rhdfs_proto::client_methods`) is re-sent. Any other remote exception is the answer.
pub fn should_fail_over(err: &IpcError, sent: bool, method: &str) -> bool {
    match err {
        IpcError::Remote { class_name, .. } => class_name == exceptions::STANDBY,
        IpcError::Io(_) | IpcError::Closed => !sent || retry_class(method).is_some(),
        IpcError::Protocol(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connects_to_one_namenode_of_a_nameservice_are_not_retried_by_default() {
        let mut c = Configuration::new();
        let r = connect_retry(&c).unwrap();
        assert_eq!((r.retries, r.retries_on_timeouts), (0, 0));
        // The IPC keys do not apply to a nameservice's NameNodes; the failover ones do.
        c.set("ipc.client.connect.max.retries", "7");
        c.set("ipc.client.connect.retry.interval", "20");
        c.set("dfs.client.failover.connection.retries", "2");
        c.set("dfs.client.failover.connection.retries.on.timeouts", "1");
        assert_eq!(
            connect_retry(&c).unwrap(),
            ConnectRetry {
                retries: 2,
                interval: Duration::from_millis(20),
                retries_on_timeouts: 1,
            }
        );
    }

    #[test]
    fn settings_from_conf() {
        let mut c = Configuration::new();
        assert_eq!(
            FailoverSettings::from_conf(&c).unwrap(),
            FailoverSettings::default()
        );
        c.set("dfs.client.failover.max.attempts", "3");
        c.set("dfs.client.failover.sleep.base.millis", "10");
        c.set("dfs.client.failover.sleep.max.millis", "35");
        c.set("dfs.client.failover.random.order", "false");
        let s = FailoverSettings::from_conf(&c).unwrap();
        assert_eq!(s.max_attempts, 3);
        assert!(!s.random_order);
        let ms: Vec<u128> = (0..5).map(|r| s.sleep_after_round(r).as_millis()).collect();
        assert_eq!(ms, [0, 10, 20, 35, 35]);
        let d = FailoverSettings::default();
        assert_eq!(d.sleep_after_round(1), Duration::from_millis(500));
        assert_eq!(d.sleep_after_round(6), Duration::from_millis(15_000));
        assert_eq!(d.sleep_after_round(200), Duration::from_millis(15_000));
        // Hadoop's defaults: 1 + 2 + 4 + 8 s, then 15 s for each of the other ten failovers.
        assert_eq!(d.hadoop_wait(), Duration::from_secs(165));
        let none = FailoverSettings {
            max_attempts: 1,
            ..d.clone()
        };
        assert_eq!(none.hadoop_wait(), Duration::ZERO);
        let huge = FailoverSettings {
            max_attempts: u32::MAX,
            ..d
        };
        assert!(huge.hadoop_wait() > Duration::from_secs(1 << 35));
    }

    #[test]
    fn which_failures_fail_over() {
        let standby = IpcError::Remote {
            class_name: exceptions::STANDBY.into(),
            message: "Operation category READ is not supported in state standby".into(),
        };
        let other = IpcError::Remote {
            class_name: exceptions::FILE_NOT_FOUND.into(),
            message: "x".into(),
        };
        let reset = || IpcError::Io(std::io::ErrorKind::ConnectionReset.into());
        assert!(should_fail_over(&standby, true, "releaseOrphans"));
        assert!(!should_fail_over(&other, true, "getFileInfo"));
        assert!(should_fail_over(&reset(), false, "releaseOrphans"));
        assert!(!should_fail_over(&reset(), true, "releaseOrphans"));
        assert!(should_fail_over(&reset(), true, "create"));
        assert!(should_fail_over(&reset(), true, "getFileInfo"));
        assert!(should_fail_over(&IpcError::Closed, true, "mkdirs"));
        assert!(!should_fail_over(
            &IpcError::Protocol("x".into()),
            true,
            "mkdirs"
        ));
    }
}
