//! NameNode high availability as Hadoop configures it: a logical nameservice
//! (`dfs.nameservices`) whose NameNodes are listed by id (`dfs.ha.namenodes.<ns>`), each with
//! its own addresses (`dfs.namenode.rpc-address.<ns>.<nn>`, `dfs.namenode.http-address.<ns>.<nn>`),
//! the class clients fail over with (`dfs.client.failover.proxy.provider.<ns>`), and how a
//! NameNode finds which of them it is (`dfs.ha.namenode.id`, else the one local rpc-address).
//!
//! A nameservice is *HA* when `dfs.ha.namenodes.<ns>` lists NameNodes; one named only in
//! `dfs.nameservices` (or through `dfs.namenode.rpc-address.<ns>`) is not, and
//! [`nameservice`] answers `None` for it.

use std::net::{IpAddr, ToSocketAddrs, UdpSocket};

pub use crate::addr::join_host_port;
use crate::addr::{DEFAULT_NAMENODE_RPC_PORT, parse_host_port};
use crate::configuration::Configuration;
use crate::keys;

/// What is wrong with a nameservice's HA configuration.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum HaConfError {
    /// A NameNode listed in `dfs.ha.namenodes.<ns>` has no rpc-address.
    #[error("NameNode {nn} of nameservice {ns} has no RPC address: {key} is not set")]
    MissingAddress { ns: String, nn: String, key: String },
    /// An address key does not hold `host:port`.
    #[error("invalid value {value:?} for configuration key {key}: {reason}")]
    BadAddress {
        key: String,
        value: String,
        reason: String,
    },
    /// `dfs.ha.namenodes.<ns>` names the same id twice.
    #[error("{key} names NameNode {nn} more than once")]
    DuplicateNameNode { key: String, nn: String },
    /// A failover proxy provider is configured for a nameservice that lists no NameNodes.
    #[error(
        "{provider_key} is set, so {ns} is an HA nameservice, but {namenodes_key} lists no NameNode"
    )]
    NoNameNodes {
        ns: String,
        provider_key: String,
        namenodes_key: String,
    },
    /// A failover proxy provider rhdfs does not implement.
    #[error("{key} is {class}; rhdfs fails over only with {supported} (or {observer})", supported = keys::CONFIGURED_FAILOVER_PROXY_PROVIDER, observer = keys::OBSERVER_READ_PROXY_PROVIDER)]
    UnsupportedProxyProvider { key: String, class: String },
    /// `dfs.ha.namenode.id` names a NameNode the nameservice does not list.
    #[error("{key} is {nn}, which is not one of the NameNodes of {ns} ({listed})", key = keys::DFS_HA_NAMENODE_ID_KEY)]
    UnknownNameNodeId {
        ns: String,
        nn: String,
        listed: String,
    },
    /// No NameNode of the nameservice has a local rpc-address.
    #[error(
        "cannot tell which NameNode of {ns} this is: none of their RPC addresses ({listed}) is an \
         address of this host; set {key}",
        key = keys::DFS_HA_NAMENODE_ID_KEY
    )]
    NoLocalNameNode { ns: String, listed: String },
    /// Several NameNodes of the nameservice have a local rpc-address.
    #[error(
        "cannot tell which NameNode of {ns} this is: {matching} all have an RPC address of this \
         host; set {key}",
        key = keys::DFS_HA_NAMENODE_ID_KEY
    )]
    AmbiguousLocalNameNode { ns: String, matching: String },
    /// More than one HA nameservice (federation), so a NameNode cannot tell which is its own.
    #[error(
        "{key} lists several HA nameservices ({listed}); rhdfs serves one namespace",
        key = keys::DFS_NAMESERVICES_KEY
    )]
    SeveralNameservices { listed: String },
    /// A NameNode id was asked for that the nameservice does not list.
    #[error("NameNode id {nn} is not one of the NameNodes of {ns} ({listed})")]
    NoSuchNameNode {
        ns: String,
        nn: String,
        listed: String,
    },
}

/// One NameNode of an HA nameservice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameNodeAddrs {
    /// Its id in `dfs.ha.namenodes.<ns>` (`nn1`).
    pub id: String,
    /// `dfs.namenode.rpc-address.<ns>.<nn>` (port 8020 when absent).
    pub rpc: (String, u16),
    /// `dfs.namenode.http-address.<ns>.<nn>`, when set.
    pub http: Option<(String, u16)>,
}

impl NameNodeAddrs {
    /// The rpc address as `host:port` (`[v6]:port` for an IPv6 host), ready to connect to.
    pub fn rpc_addr(&self) -> String {
        join_host_port(&self.rpc.0, self.rpc.1)
    }
}

/// A logical nameservice with its NameNodes, in the order `dfs.ha.namenodes.<ns>` lists them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nameservice {
    /// The nameservice id (`mycluster` in `hdfs://mycluster`).
    pub id: String,
    pub namenodes: Vec<NameNodeAddrs>,
}

impl Nameservice {
    /// The NameNode with id `nn`.
    pub fn namenode(&self, nn: &str) -> Result<&NameNodeAddrs, HaConfError> {
        self.namenodes
            .iter()
            .find(|n| n.id == nn)
            .ok_or_else(|| HaConfError::NoSuchNameNode {
                ns: self.id.clone(),
                nn: nn.to_string(),
                listed: self.ids(),
            })
    }

    fn ids(&self) -> String {
        let ids: Vec<&str> = self.namenodes.iter().map(|n| n.id.as_str()).collect();
        ids.join(", ")
    }
}

/// The HA nameservice `ns`, or `None` when `dfs.ha.namenodes.<ns>` lists no NameNode (and no
/// failover proxy provider claims it is one).
pub fn nameservice(conf: &Configuration, ns: &str) -> Result<Option<Nameservice>, HaConfError> {
    let namenodes_key = format!("{}.{ns}", keys::DFS_HA_NAMENODES_KEY_PREFIX);
    let provider_key = format!(
        "{}.{ns}",
        keys::DFS_CLIENT_FAILOVER_PROXY_PROVIDER_KEY_PREFIX
    );
    let provider = conf.get_trimmed(&provider_key);
    if let Some(class) = provider
        && class != keys::CONFIGURED_FAILOVER_PROXY_PROVIDER
        && class != keys::OBSERVER_READ_PROXY_PROVIDER
    {
        return Err(HaConfError::UnsupportedProxyProvider {
            key: provider_key,
            class: class.to_string(),
        });
    }
    let ids = conf.get_list(&namenodes_key);
    if ids.is_empty() {
        return match provider {
            Some(_) => Err(HaConfError::NoNameNodes {
                ns: ns.to_string(),
                provider_key,
                namenodes_key,
            }),
            None => Ok(None),
        };
    }
    let mut namenodes: Vec<NameNodeAddrs> = Vec::with_capacity(ids.len());
    for nn in ids {
        if namenodes.iter().any(|n| n.id == nn) {
            return Err(HaConfError::DuplicateNameNode {
                key: namenodes_key,
                nn,
            });
        }
        let rpc_key = format!("{}.{ns}.{nn}", keys::DFS_NAMENODE_RPC_ADDRESS_KEY);
        let rpc = match address(conf, &rpc_key, DEFAULT_NAMENODE_RPC_PORT)? {
            Some(a) => a,
            None => {
                return Err(HaConfError::MissingAddress {
                    ns: ns.to_string(),
                    nn,
                    key: rpc_key,
                });
            }
        };
        let http_key = format!("{}.{ns}.{nn}", keys::DFS_NAMENODE_HTTP_ADDRESS_KEY);
        let http = address(conf, &http_key, 0)?;
        namenodes.push(NameNodeAddrs { id: nn, rpc, http });
    }
    Ok(Some(Nameservice {
        id: ns.to_string(),
        namenodes,
    }))
}

fn address(
    conf: &Configuration,
    key: &str,
    default_port: u16,
) -> Result<Option<(String, u16)>, HaConfError> {
    let Some(v) = conf.get_trimmed(key) else {
        return Ok(None);
    };
    parse_host_port(v, default_port)
        .map(Some)
        .map_err(|e| HaConfError::BadAddress {
            key: key.to_string(),
            value: v.to_string(),
            reason: match e {
                crate::ConfError::InvalidAddress { reason, .. } => reason,
                other => other.to_string(),
            },
        })
}

/// The HA nameservice an `hdfs://` authority names: an authority without a port that is the
/// id of an HA nameservice; `None` for a `host[:port]`.
pub fn logical_nameservice(
    conf: &Configuration,
    authority: &str,
) -> Result<Option<Nameservice>, HaConfError> {
    if authority.is_empty() || authority.contains(':') || authority.contains('[') {
        return Ok(None);
    }
    nameservice(conf, authority)
}

/// The HA nameservices `dfs.nameservices` lists (those with NameNodes listed).
pub fn nameservices(conf: &Configuration) -> Result<Vec<Nameservice>, HaConfError> {
    let mut out = Vec::new();
    for ns in conf.get_list(keys::DFS_NAMESERVICES_KEY) {
        if let Some(n) = nameservice(conf, &ns)? {
            out.push(n);
        }
    }
    Ok(out)
}

/// The one HA nameservice of this configuration, if any (several are an error: rhdfs serves one
/// namespace).
pub fn single_nameservice(conf: &Configuration) -> Result<Option<Nameservice>, HaConfError> {
    let mut all = nameservices(conf)?;
    if all.len() > 1 {
        let ids: Vec<&str> = all.iter().map(|n| n.id.as_str()).collect();
        return Err(HaConfError::SeveralNameservices {
            listed: ids.join(", "),
        });
    }
    Ok(all.pop())
}

/// The JournalNodes' `(host, port)`s and the journal id.
pub type JournalNodes = (Vec<(String, u16)>, String);

/// The JournalNodes `dfs.namenode.shared.edits.dir` names
/// (`qjournal://host1:8485;host2:8485/journalId`), in order, with the journal id; `None` when
/// the key is unset or not a qjournal URI.
pub fn journal_nodes(conf: &Configuration) -> Result<Option<JournalNodes>, HaConfError> {
    let key = keys::DFS_NAMENODE_SHARED_EDITS_DIR_KEY;
    let Some(uri) = conf.get_trimmed(key).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    let Some(rest) = uri.strip_prefix("qjournal://") else {
        return Ok(None);
    };
    let bad = |reason: &str| HaConfError::BadAddress {
        key: key.to_string(),
        value: uri.to_string(),
        reason: reason.to_string(),
    };
    let (hosts, journal) = rest
        .split_once('/')
        .ok_or_else(|| bad("no journal id after the hosts (qjournal://h1:8485;h2:8485/<id>)"))?;
    let journal = journal.trim_end_matches('/');
    if journal.is_empty() || journal.contains('/') {
        return Err(bad("the journal id must be one path segment"));
    }
    let mut nodes = Vec::new();
    for h in hosts.split(';').filter(|h| !h.trim().is_empty()) {
        let default_port = 8485;
        nodes.push(parse_host_port(h.trim(), default_port).map_err(|e| bad(&e.to_string()))?);
    }
    if nodes.is_empty() {
        return Err(bad("no JournalNode listed"));
    }
    Ok(Some((nodes, journal.to_string())))
}

/// Which NameNode of `ns` this process is: `dfs.ha.namenode.id` when set, else the one whose
/// rpc-address host `is_local` accepts — exactly one must, as in Hadoop.
pub fn own_namenode<'a>(
    conf: &Configuration,
    ns: &'a Nameservice,
    is_local: impl Fn(&str) -> bool,
) -> Result<&'a NameNodeAddrs, HaConfError> {
    if let Some(id) = conf.get_trimmed(keys::DFS_HA_NAMENODE_ID_KEY) {
        return ns.namenodes.iter().find(|n| n.id == id).ok_or_else(|| {
            HaConfError::UnknownNameNodeId {
                ns: ns.id.clone(),
                nn: id.to_string(),
                listed: ns.ids(),
            }
        });
    }
    let local: Vec<&NameNodeAddrs> = ns.namenodes.iter().filter(|n| is_local(&n.rpc.0)).collect();
    match local.as_slice() {
        [one] => Ok(one),
        [] => Err(HaConfError::NoLocalNameNode {
            ns: ns.id.clone(),
            listed: ns
                .namenodes
                .iter()
                .map(|n| format!("{}={}", n.id, n.rpc_addr()))
                .collect::<Vec<_>>()
                .join(", "),
        }),
        many => Err(HaConfError::AmbiguousLocalNameNode {
            ns: ns.id.clone(),
            matching: many
                .iter()
                .map(|n| format!("{}={}", n.id, n.rpc_addr()))
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// For a NameNode of an HA nameservice: finds which NameNode it is ([`own_namenode`] with
/// [`is_local_host`]) and sets the generic `dfs.namenode.rpc-address` and
/// `dfs.namenode.http-address` from its `<ns>.<nn>`-suffixed ones, so the rest of the NameNode
/// reads its own addresses as without HA. Returns `(nameservice, namenode id)`; `None`, and the
/// configuration untouched, without an HA nameservice.
pub fn apply_own_namenode(
    conf: &mut Configuration,
) -> Result<Option<(String, String)>, HaConfError> {
    let Some(ns) = single_nameservice(conf)? else {
        return Ok(None);
    };
    let own = own_namenode(conf, &ns, is_local_host)?.clone();
    conf.set(keys::DFS_NAMENODE_RPC_ADDRESS_KEY, own.rpc_addr());
    if let Some((host, port)) = &own.http {
        conf.set(
            keys::DFS_NAMENODE_HTTP_ADDRESS_KEY,
            join_host_port(host, *port),
        );
    }
    Ok(Some((ns.id, own.id)))
}

/// True when `host` resolves to an address of this machine: a wildcard or loopback address,
/// or one a socket can be bound to here.
pub fn is_local_host(host: &str) -> bool {
    let Ok(addrs) = (host, 0u16).to_socket_addrs() else {
        return false;
    };
    addrs.map(|a| a.ip()).any(is_local_ip)
}

fn is_local_ip(ip: IpAddr) -> bool {
    ip.is_loopback() || ip.is_unspecified() || UdpSocket::bind((ip, 0)).is_ok()
}

#[cfg(test)]
mod journal_tests {
    use super::*;

    #[test]
    fn qjournal_uris_name_the_journal_nodes() {
        let mut c = Configuration::new();
        assert_eq!(journal_nodes(&c).unwrap(), None);
        c.set("dfs.namenode.shared.edits.dir", "file:///shared/edits");
        assert_eq!(journal_nodes(&c).unwrap(), None, "not a quorum journal");
        c.set(
            "dfs.namenode.shared.edits.dir",
            "qjournal://jn1:8485;jn2;10.0.0.3:9000/mycluster",
        );
        let (nodes, id) = journal_nodes(&c).unwrap().unwrap();
        assert_eq!(id, "mycluster");
        assert_eq!(
            nodes,
            vec![
                ("jn1".to_string(), 8485),
                ("jn2".to_string(), 8485),
                ("10.0.0.3".to_string(), 9000)
            ]
        );
        c.set("dfs.namenode.shared.edits.dir", "qjournal://jn1:8485");
        assert!(journal_nodes(&c).is_err(), "no journal id");
        c.set("dfs.namenode.shared.edits.dir", "qjournal:///ns");
        assert!(journal_nodes(&c).is_err(), "no host");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ha_conf() -> Configuration {
        let mut c = Configuration::new();
        c.set("dfs.nameservices", "mycluster");
        c.set("dfs.ha.namenodes.mycluster", "nn1, nn2,nn3");
        c.set("dfs.namenode.rpc-address.mycluster.nn1", "host1:8020");
        c.set("dfs.namenode.rpc-address.mycluster.nn2", "host2:9000");
        c.set("dfs.namenode.rpc-address.mycluster.nn3", "host3");
        c.set("dfs.namenode.http-address.mycluster.nn1", "host1:9870");
        c.set(
            "dfs.client.failover.proxy.provider.mycluster",
            keys::CONFIGURED_FAILOVER_PROXY_PROVIDER,
        );
        c
    }

    #[test]
    fn parses_a_nameservice() {
        let c = ha_conf();
        let ns = nameservice(&c, "mycluster").unwrap().unwrap();
        assert_eq!(ns.id, "mycluster");
        let ids: Vec<&str> = ns.namenodes.iter().map(|n| n.id.as_str()).collect();
        assert_eq!(ids, ["nn1", "nn2", "nn3"]);
        assert_eq!(ns.namenodes[0].rpc, ("host1".to_string(), 8020));
        assert_eq!(ns.namenodes[0].http, Some(("host1".to_string(), 9870)));
        assert_eq!(ns.namenodes[1].rpc_addr(), "host2:9000");
        assert_eq!(ns.namenodes[1].http, None);
        assert_eq!(ns.namenodes[2].rpc.1, 8020);
        assert_eq!(ns.namenode("nn2").unwrap().rpc.0, "host2");
        assert!(ns.namenode("nn9").is_err());
        assert_eq!(nameservices(&c).unwrap(), vec![ns.clone()]);
        assert_eq!(single_nameservice(&c).unwrap(), Some(ns.clone()));
        assert_eq!(logical_nameservice(&c, "mycluster").unwrap(), Some(ns));
        assert_eq!(logical_nameservice(&c, "mycluster:8020").unwrap(), None);
        assert_eq!(logical_nameservice(&c, "host1").unwrap(), None);
    }

    #[test]
    fn a_nameservice_without_namenodes_is_not_ha() {
        let mut c = Configuration::new();
        c.set("dfs.nameservices", "plain");
        c.set("dfs.namenode.rpc-address.plain", "h:1");
        assert_eq!(nameservice(&c, "plain").unwrap(), None);
        assert!(nameservices(&c).unwrap().is_empty());
        c.set(
            "dfs.client.failover.proxy.provider.plain",
            keys::CONFIGURED_FAILOVER_PROXY_PROVIDER,
        );
        let e = nameservice(&c, "plain").unwrap_err();
        assert!(e.to_string().contains("dfs.ha.namenodes.plain"), "{e}");
    }

    #[test]
    fn malformed_configurations() {
        let mut c = ha_conf();
        c.set("dfs.namenode.rpc-address.mycluster.nn2", "host2:notaport");
        let e = nameservice(&c, "mycluster").unwrap_err();
        assert!(
            e.to_string()
                .contains("dfs.namenode.rpc-address.mycluster.nn2"),
            "{e}"
        );
        let mut c = ha_conf();
        c.unset("dfs.namenode.rpc-address.mycluster.nn3");
        let e = nameservice(&c, "mycluster").unwrap_err();
        assert_eq!(
            e,
            HaConfError::MissingAddress {
                ns: "mycluster".into(),
                nn: "nn3".into(),
                key: "dfs.namenode.rpc-address.mycluster.nn3".into()
            }
        );
        let mut c = ha_conf();
        c.set("dfs.ha.namenodes.mycluster", "nn1,nn1");
        assert!(matches!(
            nameservice(&c, "mycluster"),
            Err(HaConfError::DuplicateNameNode { .. })
        ));
        let mut c = ha_conf();
        c.set(
            "dfs.client.failover.proxy.provider.mycluster",
            "org.apache.hadoop.hdfs.server.namenode.ha.RequestHedgingProxyProvider",
        );
        let e = nameservice(&c, "mycluster").unwrap_err();
        assert!(e.to_string().contains("RequestHedgingProxyProvider"), "{e}");
        // Java clients' observer reads: rhdfs fails over with it as with the configured one.
        let mut c = ha_conf();
        c.set(
            "dfs.client.failover.proxy.provider.mycluster",
            keys::OBSERVER_READ_PROXY_PROVIDER,
        );
        assert_eq!(
            nameservice(&c, "mycluster").unwrap(),
            nameservice(&ha_conf(), "mycluster").unwrap()
        );
        let mut c = ha_conf();
        c.set("dfs.nameservices", "mycluster,other");
        c.set("dfs.ha.namenodes.other", "a");
        c.set("dfs.namenode.rpc-address.other.a", "x:1");
        assert!(matches!(
            single_nameservice(&c),
            Err(HaConfError::SeveralNameservices { .. })
        ));
    }

    #[test]
    fn own_namenode_id() {
        let mut c = ha_conf();
        let ns = nameservice(&c, "mycluster").unwrap().unwrap();
        let own = own_namenode(&c, &ns, |h| h == "host2").unwrap();
        assert_eq!(own.id, "nn2");
        let e = own_namenode(&c, &ns, |_| false).unwrap_err();
        assert!(matches!(e, HaConfError::NoLocalNameNode { .. }), "{e}");
        assert!(e.to_string().contains("dfs.ha.namenode.id"), "{e}");
        let e = own_namenode(&c, &ns, |h| h != "host3").unwrap_err();
        assert!(
            e.to_string().contains("nn1=host1:8020, nn2=host2:9000"),
            "{e}"
        );
        c.set("dfs.ha.namenode.id", "nn3");
        assert_eq!(own_namenode(&c, &ns, |_| true).unwrap().id, "nn3");
        c.set("dfs.ha.namenode.id", "nn7");
        assert!(matches!(
            own_namenode(&c, &ns, |_| true),
            Err(HaConfError::UnknownNameNodeId { .. })
        ));
    }

    #[test]
    fn own_namenode_keys_become_the_generic_ones() {
        let mut c = ha_conf();
        c.set("dfs.ha.namenode.id", "nn1");
        let own = apply_own_namenode(&mut c).unwrap();
        assert_eq!(own, Some(("mycluster".to_string(), "nn1".to_string())));
        assert_eq!(c.get("dfs.namenode.rpc-address"), Some("host1:8020"));
        assert_eq!(c.get("dfs.namenode.http-address"), Some("host1:9870"));
        let mut plain = Configuration::new();
        assert_eq!(apply_own_namenode(&mut plain).unwrap(), None);
        assert_eq!(plain.get("dfs.namenode.rpc-address"), None);
    }

    #[test]
    fn local_hosts() {
        assert!(is_local_host("127.0.0.1"));
        assert!(is_local_host("localhost"));
        assert!(is_local_host("0.0.0.0"));
        // TEST-NET-1 (RFC 5737) is never assigned to a host.
        assert!(!is_local_host("192.0.2.1"));
        assert!(!is_local_host("no-such-host.invalid"));
    }

    #[test]
    fn ipv6_rpc_addr() {
        let n = NameNodeAddrs {
            id: "a".into(),
            rpc: ("::1".into(), 8020),
            http: None,
        };
        assert_eq!(n.rpc_addr(), "[::1]:8020");
    }
}
