//! Decommissioning (Hadoop's DatanodeAdminManager): nodes named in `dfs.hosts.exclude`
//! go Normal → Decommission In Progress → Decommissioned once every block they hold has
//! enough replicas on in-service nodes. A node being decommissioned is never a write or
//! reconstruction target, its replicas do not count as live (so its blocks are copied
//! elsewhere), but it may still serve reads and act as a copy source.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rhdfs_conf::Configuration;
use rhdfs_conf::keys::*;

use crate::block::{BlockInfo, BlockUcState};
use crate::datanode_id::DatanodeId;
use crate::error::BlockManagerError;
use crate::redundancy::low_redundancy::NumberReplicas;

/// Settings of decommissioning and of the replication streams' hard limit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdminConfig {
    /// `dfs.hosts`: nodes allowed to register (empty file or unset: all).
    pub hosts_include: Option<PathBuf>,
    /// `dfs.hosts.exclude`: nodes to decommission.
    pub hosts_exclude: Option<PathBuf>,
    /// `dfs.namenode.decommission.interval`: how often decommissioning nodes are checked.
    pub decommission_interval: Duration,
    /// `dfs.namenode.replication.max-streams-hard-limit`: copies a source may be given for
    /// highest-priority blocks.
    pub max_streams_hard_limit: usize,
}

impl Default for AdminConfig {
    fn default() -> Self {
        AdminConfig {
            hosts_include: None,
            hosts_exclude: None,
            decommission_interval: DFS_NAMENODE_DECOMMISSION_INTERVAL_DEFAULT,
            max_streams_hard_limit: DFS_NAMENODE_REPLICATION_STREAMS_HARD_LIMIT_DEFAULT as usize,
        }
    }
}

impl AdminConfig {
    pub fn from_conf(conf: &Configuration) -> Result<Self, BlockManagerError> {
        fn conf_err(e: impl std::fmt::Display) -> BlockManagerError {
            BlockManagerError::Config(e.to_string())
        }
        let path = |k: &str| {
            conf.get(k)
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Ok(AdminConfig {
            hosts_include: path(DFS_HOSTS_KEY),
            hosts_exclude: path(DFS_HOSTS_EXCLUDE_KEY),
            decommission_interval: conf
                .get_duration(
                    DFS_NAMENODE_DECOMMISSION_INTERVAL_KEY,
                    DFS_NAMENODE_DECOMMISSION_INTERVAL_DEFAULT,
                    DFS_NAMENODE_DECOMMISSION_INTERVAL_UNIT,
                )
                .map_err(conf_err)?,
            max_streams_hard_limit: conf
                .get_u64(
                    DFS_NAMENODE_REPLICATION_STREAMS_HARD_LIMIT_KEY,
                    DFS_NAMENODE_REPLICATION_STREAMS_HARD_LIMIT_DEFAULT,
                )
                .map_err(conf_err)? as usize,
        })
    }
}

/// A DataNode's administrative state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum AdminState {
    #[default]
    Normal,
    DecommissionInProgress,
    Decommissioned,
}

impl AdminState {
    /// Not a write target, replicas not counted as live.
    pub fn is_out_of_service(self) -> bool {
        self != AdminState::Normal
    }

    pub fn is_decommission_in_progress(self) -> bool {
        self == AdminState::DecommissionInProgress
    }

    /// Hadoop's name for the state (AdminStates' text in the web UI and JMX).
    pub fn hadoop_name(self) -> &'static str {
        match self {
            AdminState::Normal => "In Service",
            AdminState::DecommissionInProgress => "Decommission In Progress",
            AdminState::Decommissioned => "Decommissioned",
        }
    }
}

/// The include and exclude host lists.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostLists {
    pub include: HashSet<String>,
    pub exclude: HashSet<String>,
}

impl HostLists {
    /// Entries of a hosts file: whitespace-separated host names, IPs or host:port, with
    /// `#` starting a comment.
    pub fn parse(text: &str) -> HashSet<String> {
        text.lines()
            .map(|l| l.split('#').next().unwrap_or(""))
            .flat_map(str::split_whitespace)
            .map(str::to_string)
            .collect()
    }

    /// Reads both files named by the configuration (a file that is named but missing is an
    /// error, as in Hadoop's refreshNodes).
    pub fn load(cfg: &AdminConfig) -> Result<Self, BlockManagerError> {
        let read = |p: &Option<PathBuf>| -> Result<HashSet<String>, BlockManagerError> {
            match p {
                None => Ok(HashSet::new()),
                Some(p) => std::fs::read_to_string(p)
                    .map(|t| Self::parse(&t))
                    .map_err(|e| BlockManagerError::InvalidState(format!("{} ({e})", p.display()))),
            }
        };
        Ok(HostLists {
            include: read(&cfg.hosts_include)?,
            exclude: read(&cfg.hosts_exclude)?,
        })
    }

    fn listed(set: &HashSet<String>, id: &DatanodeId) -> bool {
        [&id.ip_addr, &id.host_name]
            .into_iter()
            .filter(|h| !h.is_empty())
            .any(|h| set.contains(h.as_str()) || set.contains(&format!("{h}:{}", id.xfer_port)))
    }

    pub fn is_excluded(&self, id: &DatanodeId) -> bool {
        Self::listed(&self.exclude, id)
    }

    /// An empty include list allows every node.
    pub fn is_included(&self, id: &DatanodeId) -> bool {
        self.include.is_empty() || Self::listed(&self.include, id)
    }
}

/// Admin states as the blocks lock sees them (mirrors `DatanodeDescriptor.admin`), the
/// host lists, and when decommissioning nodes were last checked.
#[derive(Debug, Default)]
pub struct AdminTracker {
    states: HashMap<Arc<str>, AdminState>,
    pub hosts: HostLists,
    pub hosts_loaded: bool,
    /// Registered nodes a refresh found missing from a non-empty include list: their
    /// heartbeats are refused until they are included again.
    pub disallowed: HashSet<Arc<str>>,
    last_check: Option<Duration>,
    /// Why a decommissioning node is not finishing (`decommission_health`).
    pub notes: HashMap<Arc<str>, String>,
}

impl AdminTracker {
    pub fn state(&self, uuid: &str) -> AdminState {
        self.states.get(uuid).copied().unwrap_or_default()
    }

    /// True when some node is decommissioned (its replicas are not safe-mode replicas).
    pub fn any_decommissioned(&self) -> bool {
        self.states
            .values()
            .any(|s| *s == AdminState::Decommissioned)
    }

    pub fn set(&mut self, uuid: Arc<str>, state: AdminState) {
        if state != AdminState::DecommissionInProgress {
            self.notes.remove(&uuid);
        }
        if state == AdminState::Normal {
            self.states.remove(&uuid);
        } else {
            self.states.insert(uuid, state);
        }
    }

    /// Nodes in a given state, sorted.
    pub fn nodes_in(&self, state: AdminState) -> Vec<Arc<str>> {
        let mut v: Vec<Arc<str>> = self
            .states
            .iter()
            .filter(|(_, s)| **s == state)
            .map(|(u, _)| u.clone())
            .collect();
        v.sort();
        v
    }

    /// True (and the check time recorded) when `interval` has passed since the last check.
    pub fn check_due(&mut self, now: Duration, interval: Duration) -> bool {
        match self.last_check {
            Some(t) if now.saturating_sub(t) < interval => false,
            _ => {
                self.last_check = Some(now);
                true
            }
        }
    }
}

/// Whether a block has enough replicas elsewhere for a decommissioning node holding one
/// to leave. COMPLETE blocks need their full replication on in-service nodes; blocks of
/// files still being written need `min_replication` replicas (any state) in service.
pub fn is_sufficient(
    info: &BlockInfo,
    n: NumberReplicas,
    in_service_any_state: usize,
    min_replication: usize,
) -> bool {
    match info.state {
        BlockUcState::Complete => n.live >= usize::from(info.replication).max(1),
        BlockUcState::Committed => n.live >= min_replication,
        BlockUcState::UnderConstruction | BlockUcState::UnderRecovery => {
            in_service_any_state >= min_replication
        }
    }
}

/// Hadoop's refusal of a node the include list does not name.
pub fn disallowed_error(id: &DatanodeId) -> crate::error::BlockManagerError {
    crate::error::BlockManagerError::DisallowedDatanode(format!(
        "Datanode denied communication with namenode because the host is not in the include-list: DatanodeRegistration({}, datanodeUuid={}, infoPort={}, infoSecurePort={}, ipcPort={})",
        id.xfer_addr(),
        id.uuid,
        id.info_port,
        id.info_secure_port,
        id.ipc_port
    ))
}

/// What `refresh_nodes` changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RefreshOutcome {
    pub started: Vec<String>,
    pub stopped: Vec<String>,
    /// Registered nodes no longer in a non-empty include list.
    pub not_included: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(ip: &str, host: &str) -> DatanodeId {
        DatanodeId {
            uuid: "u".into(),
            ip_addr: ip.into(),
            host_name: host.into(),
            xfer_port: 9866,
            ..DatanodeId::default()
        }
    }

    #[test]
    fn hosts_files_match_ip_host_and_port() {
        let set = HostLists::parse("# comment\n10.0.0.1  dn2.example\n10.0.0.3:9866 # x\n\n");
        assert_eq!(set.len(), 3);
        let lists = HostLists {
            include: HashSet::new(),
            exclude: set,
        };
        assert!(lists.is_excluded(&id("10.0.0.1", "a")));
        assert!(lists.is_excluded(&id("10.0.0.9", "dn2.example")));
        assert!(lists.is_excluded(&id("10.0.0.3", "c")));
        assert!(!lists.is_excluded(&id("10.0.0.4", "d")));
        assert!(lists.is_included(&id("10.0.0.4", "d")));
    }

    #[test]
    fn tracker_states_and_interval() {
        let mut t = AdminTracker::default();
        t.set(Arc::from("b"), AdminState::DecommissionInProgress);
        t.set(Arc::from("a"), AdminState::DecommissionInProgress);
        t.set(Arc::from("c"), AdminState::Decommissioned);
        assert_eq!(
            t.nodes_in(AdminState::DecommissionInProgress),
            vec![Arc::<str>::from("a"), Arc::from("b")]
        );
        t.set(Arc::from("a"), AdminState::Normal);
        assert_eq!(t.state("a"), AdminState::Normal);
        assert!(t.check_due(Duration::from_secs(1), Duration::from_secs(30)));
        assert!(!t.check_due(Duration::from_secs(20), Duration::from_secs(30)));
        assert!(t.check_due(Duration::from_secs(31), Duration::from_secs(30)));
    }
}
