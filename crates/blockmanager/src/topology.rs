//! Network topology: which rack each DataNode is on, and how far apart two nodes are.
//!
//! Racks are paths ("/default-rack", "/dc1/rack2"); a node's full path is its rack plus
//! its name. The distance between two nodes is the number of edges between them in that
//! tree: 0 for the same node, 2 for two nodes on one rack, 4 for nodes on two racks of a
//! flat topology (6 across data centres of a two-level one).
//!
//! A DataNode's rack comes from a mapping chosen by `net.topology.node.switch.mapping.impl`:
//! the table mapping (`net.topology.table.file.name`, lines "host-or-ip rack"), the script
//! mapping (`net.topology.script.file.name`, run with up to `net.topology.script.number.args`
//! addresses as arguments, one rack per output token), or every node on /default-rack when
//! neither is configured. Answers are cached per address. Resolution is blocking (a script
//! runs as a child process); `RackResolver::resolve` moves off a multi-threaded tokio
//! runtime's worker with `block_in_place`, and callers on other async runtimes should run it
//! with `spawn_blocking`.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use parking_lot::Mutex;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rhdfs_conf::Configuration;
use rhdfs_conf::keys::*;
use thiserror::Error;

/// The rack of every node whose rack is not known.
pub const DEFAULT_RACK: &str = "/default-rack";

/// Class names of the mappings `net.topology.node.switch.mapping.impl` may name.
pub const TABLE_MAPPING_CLASS: &str = "org.apache.hadoop.net.TableMapping";
pub const SCRIPT_MAPPING_CLASS: &str = "org.apache.hadoop.net.ScriptBasedMapping";

/// Topology errors.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum TopologyError {
    /// The mapping gave no rack for a DataNode and
    /// `dfs.namenode.reject-unresolved-dn-topology-mapping` is set (Hadoop's
    /// UnresolvedTopologyException).
    #[error("Unresolved topology mapping for host {0}")]
    Unresolved(String),
    /// `net.topology.node.switch.mapping.impl` names a mapping we do not have.
    #[error("unsupported {NET_TOPOLOGY_NODE_SWITCH_MAPPING_IMPL_KEY}: {0}")]
    UnsupportedMapping(String),
    /// A configuration value could not be read.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// A DataNode's rack path has a depth other than the other nodes' (Hadoop's
    /// InvalidTopologyException from NetworkTopology.add); `0` is the node's full path.
    #[error(
        "Failed to add {0}: You cannot have a rack and a non-rack node at the same level of the network topology."
    )]
    Invalid(String),
}

/// Normalizes a rack path: must start with '/', no trailing '/'. None if it cannot be one.
pub fn normalize_rack(path: &str) -> Option<String> {
    let p = path.trim();
    if !p.starts_with('/') {
        return None;
    }
    let p = p.trim_end_matches('/');
    if p.is_empty() {
        return None;
    }
    Some(p.to_string())
}

fn components(rack: &str) -> impl Iterator<Item = &str> {
    rack.split('/').filter(|c| !c.is_empty())
}

/// Levels of a rack path ("/r1" 1, "/dc1/r1" 2): a node under it is one level deeper.
pub fn depth(rack: &str) -> usize {
    components(rack).count()
}

/// Edges between node `a` on `rack_a` and node `b` on `rack_b` (`same_node` when they are
/// one node): up from each node to the deepest common ancestor of the two racks.
pub fn distance(rack_a: &str, rack_b: &str, same_node: bool) -> u32 {
    if same_node {
        return 0;
    }
    let a: Vec<&str> = components(rack_a).collect();
    let b: Vec<&str> = components(rack_b).collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    ((a.len() - common) + 1 + (b.len() - common) + 1) as u32
}

/// Rack membership of the cluster's nodes (identified by any stable key, e.g. the uuid).
#[derive(Clone, Debug, Default)]
pub struct NetworkTopology {
    racks: BTreeMap<String, BTreeSet<String>>,
    node_rack: HashMap<String, String>,
}

impl NetworkTopology {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or moves) `node` to `rack`.
    pub fn add(&mut self, node: &str, rack: &str) {
        self.remove(node);
        self.racks
            .entry(rack.to_string())
            .or_default()
            .insert(node.to_string());
        self.node_rack.insert(node.to_string(), rack.to_string());
    }

    /// Removes `node`; a rack left empty disappears. True if it was there.
    pub fn remove(&mut self, node: &str) -> bool {
        let Some(rack) = self.node_rack.remove(node) else {
            return false;
        };
        if let Some(members) = self.racks.get_mut(&rack) {
            members.remove(node);
            if members.is_empty() {
                self.racks.remove(&rack);
            }
        }
        true
    }

    pub fn contains(&self, node: &str) -> bool {
        self.node_rack.contains_key(node)
    }

    pub fn rack_of(&self, node: &str) -> Option<&str> {
        self.node_rack.get(node).map(String::as_str)
    }

    /// Non-empty racks.
    pub fn num_racks(&self) -> usize {
        self.racks.len()
    }

    /// Nodes.
    pub fn num_leaves(&self) -> usize {
        self.node_rack.len()
    }

    pub fn racks(&self) -> impl Iterator<Item = &str> {
        self.racks.keys().map(String::as_str)
    }

    /// The nodes of `rack`, in key order.
    pub fn nodes_in_rack(&self, rack: &str) -> Vec<&str> {
        self.racks
            .get(rack)
            .map(|m| m.iter().map(String::as_str).collect())
            .unwrap_or_default()
    }

    pub fn is_on_same_rack(&self, a: &str, b: &str) -> bool {
        matches!((self.rack_of(a), self.rack_of(b)), (Some(x), Some(y)) if x == y)
    }

    /// Distance between two nodes of the topology; None if either is not in it.
    pub fn distance(&self, a: &str, b: &str) -> Option<u32> {
        let ra = self.rack_of(a)?;
        let rb = self.rack_of(b)?;
        Some(distance(ra, rb, a == b))
    }
}

/// Maps addresses (IPs or host names) to racks, in order. None when the mapping failed
/// as a whole (Hadoop's `null`).
pub trait DnsToSwitchMapping: Send + Sync + std::fmt::Debug {
    fn resolve(&self, names: &[String]) -> Option<Vec<String>>;
}

/// Every address on /default-rack.
#[derive(Clone, Copy, Debug, Default)]
pub struct DefaultRackMapping;

impl DnsToSwitchMapping for DefaultRackMapping {
    fn resolve(&self, names: &[String]) -> Option<Vec<String>> {
        Some(vec![DEFAULT_RACK.to_string(); names.len()])
    }
}

/// A two-column table read once from a file: "host-or-ip rack" per line, '#' starts a
/// comment line, lines without exactly two columns are skipped. Unknown addresses, or all
/// of them when the file cannot be read, are on /default-rack.
#[derive(Clone, Debug, Default)]
pub struct TableMapping {
    table: HashMap<String, String>,
}

impl TableMapping {
    /// Parses the table's text.
    pub fn parse(text: &str) -> Self {
        let mut table = HashMap::new();
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let cols: Vec<&str> = line.split_whitespace().collect();
            match cols.as_slice() {
                [host, rack] => match normalize_rack(rack) {
                    Some(rack) => {
                        table.insert((*host).to_string(), rack);
                    }
                    None => tracing::warn!(line, "topology table: rack is not a path; ignoring"),
                },
                _ => tracing::warn!(line, "Line does not have two columns. Ignoring."),
            }
        }
        TableMapping { table }
    }

    /// Reads `path`; an unreadable file gives an empty table (everything on /default-rack).
    pub fn load(path: &Path) -> Self {
        match std::fs::read_to_string(path) {
            Ok(text) => Self::parse(&text),
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "cannot read topology table; all nodes on {DEFAULT_RACK}");
                Self::default()
            }
        }
    }

    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.table.get(name).map(String::as_str)
    }
}

impl DnsToSwitchMapping for TableMapping {
    fn resolve(&self, names: &[String]) -> Option<Vec<String>> {
        Some(
            names
                .iter()
                .map(|n| self.get(n).unwrap_or(DEFAULT_RACK).to_string())
                .collect(),
        )
    }
}

/// Runs a script with the addresses as arguments, at most `max_args` per run; its output,
/// split on whitespace, is one rack per address. A script that fails, or answers with the
/// wrong number of racks, resolves nothing.
#[derive(Clone, Debug)]
pub struct ScriptMapping {
    script: PathBuf,
    max_args: usize,
}

impl ScriptMapping {
    pub fn new(script: impl Into<PathBuf>, max_args: usize) -> Self {
        ScriptMapping {
            script: script.into(),
            max_args: max_args.max(1),
        }
    }

    fn run(&self, names: &[String]) -> Option<Vec<String>> {
        let out = Command::new(&self.script)
            .args(names)
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .output();
        match out {
            Ok(o) if o.status.success() => Some(
                String::from_utf8_lossy(&o.stdout)
                    .split_whitespace()
                    .map(str::to_string)
                    .collect(),
            ),
            Ok(o) => {
                tracing::warn!(
                    script = %self.script.display(),
                    status = %o.status,
                    stderr = %String::from_utf8_lossy(&o.stderr).trim(),
                    "Exception running topology script"
                );
                None
            }
            Err(e) => {
                tracing::warn!(script = %self.script.display(), error = %e, "Exception running topology script");
                None
            }
        }
    }
}

impl DnsToSwitchMapping for ScriptMapping {
    fn resolve(&self, names: &[String]) -> Option<Vec<String>> {
        let mut racks = Vec::with_capacity(names.len());
        for chunk in names.chunks(self.max_args) {
            racks.extend(run_blocking(|| self.run(chunk))?);
        }
        if racks.len() != names.len() {
            tracing::error!(
                "Script {} returned {} values when {} were expected.",
                self.script.display(),
                racks.len(),
                names.len()
            );
            return None;
        }
        Some(racks)
    }
}

/// Runs blocking work off a multi-threaded tokio runtime's worker thread when called on
/// one; otherwise runs it in place.
fn run_blocking<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}

/// Where racks come from, as configured.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum MappingSource {
    /// Every node on /default-rack.
    #[default]
    Default,
    Table(PathBuf),
    Script {
        path: PathBuf,
        max_args: usize,
    },
}

/// The topology settings of a Configuration.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TopologyConfig {
    pub source: MappingSource,
    /// `dfs.namenode.reject-unresolved-dn-topology-mapping`.
    pub reject_unresolved: bool,
}

impl TopologyConfig {
    /// `net.topology.node.switch.mapping.impl` picks the mapping: TableMapping reads
    /// `net.topology.table.file.name`; ScriptBasedMapping (the default) runs
    /// `net.topology.script.file.name`, or, when no script is set but a table file is,
    /// reads the table; with neither every node is on /default-rack.
    pub fn from_conf(conf: &Configuration) -> Result<Self, TopologyError> {
        let cfg = |e: rhdfs_conf::ConfError| TopologyError::Config(e.to_string());
        let class = conf
            .get_trimmed(NET_TOPOLOGY_NODE_SWITCH_MAPPING_IMPL_KEY)
            .unwrap_or(NET_TOPOLOGY_NODE_SWITCH_MAPPING_IMPL_DEFAULT);
        let table = conf
            .get_trimmed(NET_TOPOLOGY_TABLE_FILE_NAME_KEY)
            .map(PathBuf::from);
        let script = conf
            .get_trimmed(NET_TOPOLOGY_SCRIPT_FILE_NAME_KEY)
            .map(PathBuf::from);
        let max_args = conf
            .get_u64(
                NET_TOPOLOGY_SCRIPT_NUMBER_ARGS_KEY,
                NET_TOPOLOGY_SCRIPT_NUMBER_ARGS_DEFAULT,
            )
            .map_err(cfg)? as usize;
        let short = class.rsplit('.').next().unwrap_or(class);
        let source = match short {
            "TableMapping" => table.map_or(MappingSource::Default, MappingSource::Table),
            "ScriptBasedMapping" => match (script, table) {
                (Some(path), _) => MappingSource::Script { path, max_args },
                (None, Some(t)) => MappingSource::Table(t),
                (None, None) => MappingSource::Default,
            },
            _ => return Err(TopologyError::UnsupportedMapping(class.to_string())),
        };
        Ok(TopologyConfig {
            source,
            reject_unresolved: conf
                .get_bool(
                    DFS_REJECT_UNRESOLVED_DN_TOPOLOGY_MAPPING_KEY,
                    DFS_REJECT_UNRESOLVED_DN_TOPOLOGY_MAPPING_DEFAULT,
                )
                .map_err(cfg)?,
        })
    }
}

/// A mapping with a per-address cache of successful answers (Hadoop's
/// CachedDNSToSwitchMapping) and the unresolved-node rule.
#[derive(Debug)]
pub struct RackResolver {
    mapping: Box<dyn DnsToSwitchMapping>,
    cache: Mutex<HashMap<String, String>>,
    /// Addresses the mapping could not resolve: not asked again until `reload_cached`
    /// (placement resolves racks under a lock, and a broken script must not run each time).
    failed: Mutex<HashSet<String>>,
    reject_unresolved: bool,
    /// True when every node is on /default-rack without asking anything.
    trivial: bool,
}

impl Default for RackResolver {
    fn default() -> Self {
        Self::with_mapping(Box::new(DefaultRackMapping), false)
    }
}

impl RackResolver {
    pub fn with_mapping(mapping: Box<dyn DnsToSwitchMapping>, reject_unresolved: bool) -> Self {
        RackResolver {
            mapping,
            cache: Mutex::new(HashMap::new()),
            failed: Mutex::new(HashSet::new()),
            reject_unresolved,
            trivial: false,
        }
    }

    /// The resolver `cfg` describes (a table file is read now).
    pub fn from_config(cfg: &TopologyConfig) -> Self {
        let mut r = match &cfg.source {
            MappingSource::Default => {
                let mut r = Self::with_mapping(Box::new(DefaultRackMapping), false);
                r.trivial = true;
                r
            }
            MappingSource::Table(p) => Self::with_mapping(Box::new(TableMapping::load(p)), false),
            MappingSource::Script { path, max_args } => {
                Self::with_mapping(Box::new(ScriptMapping::new(path, *max_args)), false)
            }
        };
        r.reject_unresolved = cfg.reject_unresolved;
        r
    }

    /// True when no mapping is configured (every node on /default-rack).
    pub fn is_trivial(&self) -> bool {
        self.trivial
    }

    /// Racks of `names`, in order, from the cache or one call to the mapping for the
    /// addresses not asked yet. A failed or invalid answer is /default-rack (remembered
    /// as failed until `reload_cached`), or `Unresolved` when unresolved nodes are rejected.
    pub fn resolve(&self, names: &[String]) -> Result<Vec<String>, TopologyError> {
        let missing: Vec<String> = {
            let cache = self.cache.lock();
            let failed = self.failed.lock();
            let mut m: Vec<String> = names
                .iter()
                .filter(|n| !cache.contains_key(*n) && !failed.contains(*n))
                .cloned()
                .collect();
            m.sort();
            m.dedup();
            m
        };
        let mut fresh: HashMap<String, Option<String>> = HashMap::new();
        if !missing.is_empty() {
            let answer = self.mapping.resolve(&missing);
            for (i, name) in missing.iter().enumerate() {
                let rack = answer
                    .as_ref()
                    .and_then(|a| a.get(i))
                    .and_then(|r| normalize_rack(r));
                fresh.insert(name.clone(), rack);
            }
            let mut cache = self.cache.lock();
            let mut failed = self.failed.lock();
            for (name, rack) in &fresh {
                match rack {
                    Some(rack) => {
                        cache.insert(name.clone(), rack.clone());
                    }
                    None => {
                        if !self.reject_unresolved {
                            tracing::warn!(host = %name, "Unresolved topology mapping; using {DEFAULT_RACK}");
                        }
                        failed.insert(name.clone());
                    }
                }
            }
        }
        let cache = self.cache.lock();
        names
            .iter()
            .map(|n| match cache.get(n) {
                Some(r) => Ok(r.clone()),
                None if self.reject_unresolved => Err(TopologyError::Unresolved(n.clone())),
                None => Ok(DEFAULT_RACK.to_string()),
            })
            .collect()
    }

    /// The rack of one DataNode, by its IP address (as Hadoop resolves it); a table that
    /// knows the host name but not the IP is asked for the host name too.
    pub fn rack_of_node(&self, ip: &str, host: &str) -> Result<String, TopologyError> {
        let rack = self.resolve(&[ip.to_string()])?.remove(0);
        if rack == DEFAULT_RACK && !host.is_empty() && host != ip && !self.trivial {
            let by_host = self.resolve(&[host.to_string()])?.remove(0);
            return Ok(by_host);
        }
        Ok(rack)
    }

    /// Cached answer only (no mapping call).
    pub fn cached(&self, name: &str) -> Option<String> {
        self.cache.lock().get(name).cloned()
    }

    /// Forgets cached answers and failures (e.g. after the script changed).
    pub fn reload_cached(&self) {
        self.cache.lock().clear();
        self.failed.lock().clear();
    }

    /// Forgets the cached answers and failures for `names` only (Hadoop's
    /// reloadCachedMappings(names), after a node's rack was refused).
    pub fn forget(&self, names: &[&str]) {
        let mut cache = self.cache.lock();
        let mut failed = self.failed.lock();
        for n in names {
            cache.remove(*n);
            failed.remove(*n);
        }
    }
}

/// What read ordering needs to know of one replica holder.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadNode<'a> {
    /// The node's identity (datanode uuid), compared with the reader's node.
    pub uuid: &'a str,
    pub rack: &'a str,
    pub stale: bool,
    /// Decommission in progress: read after the in-service nodes.
    pub decommissioning: bool,
    /// Decommissioned: read last.
    pub decommissioned: bool,
    pub slow: bool,
    /// Active transfer threads (the heartbeat's xceiverCount), for `consider_load`.
    pub xceiver_count: u32,
    /// StorageTypeProto value of the replica's storage, for `consider_storage_type`.
    pub storage_type: i32,
}

/// The reader: the DataNode it runs on (uuid), when it runs on one, and its rack (that
/// node's, or the mapping's answer for the reader's address); None when unknown.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reader<'a> {
    pub node: Option<&'a str>,
    pub rack: Option<&'a str>,
}

/// Read ordering flags (`dfs.namenode.avoid.read.stale.datanode`,
/// `dfs.namenode.avoid.read.slow.datanode`, `dfs.namenode.read.considerLoad`,
/// `dfs.namenode.read.considerStorageType`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadSortFlags {
    pub avoid_stale: bool,
    pub avoid_slow: bool,
    /// Nodes at the same distance: least busy first (instead of random order).
    pub consider_load: bool,
    /// Nodes at the same distance: fastest storage type first (ignored with
    /// `consider_load`, as in Hadoop).
    pub consider_storage_type: bool,
}

/// Rank of a StorageTypeProto value in Hadoop's StorageType order (RAM_DISK, NVDIMM, SSD,
/// DISK, ARCHIVE, PROVIDED): faster storage first.
pub fn storage_type_rank(storage_type: i32) -> u8 {
    match storage_type {
        4 => 0, // RAM_DISK
        6 => 1, // NVDIMM
        2 => 2, // SSD
        1 => 3, // DISK
        3 => 4, // ARCHIVE
        5 => 5, // PROVIDED
        _ => 3,
    }
}

/// The order in which a reader should try `nodes` (indices into `nodes`), as Hadoop's
/// DatanodeManager.sortLocatedBlock: first the nodes are ordered by service state (in
/// service, decommissioning, decommissioned; within each, stale nodes after the others
/// when stale nodes are avoided, and slow ones after the others when slow nodes are
/// avoided), keeping their given order within a state; then the leading active nodes (in
/// service, neither avoided-stale nor avoided-slow) are ordered by network distance from
/// the reader (its own node 0, its rack 2, another rack 4, ...; all equal when the
/// reader's place is unknown), nodes at the same distance shuffled with `rng` and then,
/// per `flags`, ordered by load or storage type.
pub fn sort_by_distance(
    reader: Option<&Reader<'_>>,
    nodes: &[ReadNode<'_>],
    flags: ReadSortFlags,
    rng: &mut StdRng,
) -> Vec<usize> {
    let state = |n: &ReadNode<'_>| -> (u8, bool, bool) {
        let service = if n.decommissioned {
            2
        } else if n.decommissioning {
            1
        } else {
            0
        };
        (
            service,
            flags.avoid_stale && n.stale,
            flags.avoid_slow && n.slow,
        )
    };
    let weight = |n: &ReadNode<'_>| -> u32 {
        let Some(r) = reader else {
            return u32::MAX;
        };
        if r.node.is_some_and(|u| !u.is_empty() && u == n.uuid) {
            return 0;
        }
        match r.rack {
            Some(rack) => distance(rack, n.rack, false),
            None => u32::MAX,
        }
    };
    let mut order: Vec<usize> = (0..nodes.len()).collect();
    // Stable: nodes in the same service state keep their order.
    order.sort_by_key(|&i| state(&nodes[i]));
    let active = order
        .iter()
        .take_while(|&&i| state(&nodes[i]) == (0, false, false))
        .count();
    let mut by_weight: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for &i in &order[..active] {
        by_weight.entry(weight(&nodes[i])).or_default().push(i);
    }
    let mut out = Vec::with_capacity(nodes.len());
    for (_, mut group) in by_weight {
        group.shuffle(rng);
        if flags.consider_load {
            group.sort_by_key(|&i| nodes[i].xceiver_count);
        } else if flags.consider_storage_type {
            group.sort_by_key(|&i| storage_type_rank(nodes[i].storage_type));
        }
        out.extend(group);
    }
    out.extend_from_slice(&order[active..]);
    out
}

#[cfg(test)]
#[path = "topology_tests.rs"]
mod tests;
