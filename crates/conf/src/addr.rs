//! `host:port` parsing and the well-known daemon addresses.

use crate::configuration::Configuration;
use crate::error::ConfError;
use crate::keys;

/// The NameNode RPC port used when `fs.defaultFS` names no port.
pub const DEFAULT_NAMENODE_RPC_PORT: u16 = 8020;

fn bad(addr: &str, reason: &str) -> ConfError {
    ConfError::InvalidAddress {
        addr: addr.to_string(),
        reason: reason.to_string(),
    }
}

/// Splits `host[:port]` (optionally `scheme://host[:port][/path]`, or `[v6addr]:port`) into
/// host and port, using `default_port` when none is given. IPv6 hosts are returned without
/// brackets.
pub fn parse_host_port(s: &str, default_port: u16) -> Result<(String, u16), ConfError> {
    let orig = s;
    let mut s = s.trim();
    if let Some(i) = s.find("://") {
        s = &s[i + 3..];
    }
    if let Some(i) = s.find('/') {
        s = &s[..i];
    }
    if let Some(i) = s.rfind('@') {
        s = &s[i + 1..];
    }
    let (host, port) = if let Some(rest) = s.strip_prefix('[') {
        let end = rest
            .find(']')
            .ok_or_else(|| bad(orig, "unterminated '[' in IPv6 address"))?;
        let host = &rest[..end];
        let after = &rest[end + 1..];
        let port = match after.strip_prefix(':') {
            Some(p) => Some(p),
            None if after.is_empty() => None,
            None => return Err(bad(orig, "unexpected text after IPv6 address")),
        };
        (host, port)
    } else if s.matches(':').count() > 1 {
        return Err(bad(orig, "IPv6 addresses must be written as [addr]:port"));
    } else {
        match s.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (s, None),
        }
    };
    if host.is_empty() {
        return Err(bad(orig, "missing host"));
    }
    let port = match port {
        None => default_port,
        Some(p) => p
            .parse::<u16>()
            .map_err(|_| bad(orig, "port is not a number in 0..=65535"))?,
    };
    Ok((host.to_string(), port))
}

/// Parses the `host:port` in `key`, or `default` when unset or empty.
pub fn address_from_conf(
    conf: &Configuration,
    key: &str,
    default: &str,
) -> Result<(String, u16), ConfError> {
    let v = conf.get_trimmed(key).unwrap_or(default);
    parse_host_port(v, 0).map_err(|e| match e {
        ConfError::InvalidAddress { addr, reason } => ConfError::InvalidValue {
            key: key.to_string(),
            value: addr,
            reason,
        },
        other => other,
    })
}

/// The NameNode RPC address: `dfs.namenode.rpc-address` if set, else the authority of
/// `fs.defaultFS` when that is an `hdfs://` URI (port 8020 when absent). A logical
/// nameservice in `fs.defaultFS` is resolved through `dfs.namenode.rpc-address.<ns>` or
/// `dfs.ha.namenodes.<ns>` + `dfs.namenode.rpc-address.<ns>.<nn>` (first NameNode).
pub fn namenode_rpc_address(conf: &Configuration) -> Result<(String, u16), ConfError> {
    if let Some(v) = conf.get_trimmed(keys::DFS_NAMENODE_RPC_ADDRESS_KEY) {
        return parse_host_port(v, DEFAULT_NAMENODE_RPC_PORT).map_err(|e| match e {
            ConfError::InvalidAddress { addr, reason } => ConfError::InvalidValue {
                key: keys::DFS_NAMENODE_RPC_ADDRESS_KEY.to_string(),
                value: addr,
                reason,
            },
            other => other,
        });
    }
    let fs = conf.get_str(keys::FS_DEFAULT_FS_KEY, keys::FS_DEFAULT_FS_DEFAULT);
    let fs = fs.trim();
    let Some((scheme, rest)) = fs.split_once("://") else {
        return Err(ConfError::NoNameNodeAddress(format!(
            "{} is {fs:?}, not an hdfs:// URI, and {} is not set",
            keys::FS_DEFAULT_FS_KEY,
            keys::DFS_NAMENODE_RPC_ADDRESS_KEY
        )));
    };
    if !scheme.eq_ignore_ascii_case("hdfs") {
        return Err(ConfError::NoNameNodeAddress(format!(
            "{} is {fs:?}, not an hdfs:// URI, and {} is not set; set one of them \
             (e.g. {}=hdfs://localhost:8020)",
            keys::FS_DEFAULT_FS_KEY,
            keys::DFS_NAMENODE_RPC_ADDRESS_KEY,
            keys::FS_DEFAULT_FS_KEY
        )));
    }
    let authority = rest.split('/').next().unwrap_or("");
    if authority.is_empty() {
        return Err(ConfError::NoNameNodeAddress(format!(
            "{} is {fs:?}, which names no host",
            keys::FS_DEFAULT_FS_KEY
        )));
    }
    if !authority.contains(':')
        && let Some(a) = nameservice_address(conf, authority)
    {
        return parse_host_port(&a, DEFAULT_NAMENODE_RPC_PORT);
    }
    parse_host_port(authority, DEFAULT_NAMENODE_RPC_PORT)
}

fn nameservice_address(conf: &Configuration, ns: &str) -> Option<String> {
    let base = keys::DFS_NAMENODE_RPC_ADDRESS_KEY;
    if let Some(v) = conf.get_trimmed(&format!("{base}.{ns}")) {
        return Some(v.to_string());
    }
    let nns = conf.get_list(&format!("{}.{ns}", keys::DFS_HA_NAMENODES_KEY_PREFIX));
    nns.iter()
        .find_map(|nn| conf.get_trimmed(&format!("{base}.{ns}.{nn}")))
        .map(str::to_string)
}

/// `host:port`, with brackets around an IPv6 host.
pub fn join_host_port(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// The NameNode web address a client connects to: `dfs.namenode.http-address`, with a
/// wildcard host (`0.0.0.0`, `::`, none) replaced by `nn_host`, the host the client reaches
/// the NameNode's RPC port on.
pub fn namenode_http_address_for(conf: &Configuration, nn_host: &str) -> Result<String, ConfError> {
    let (host, port) = namenode_http_address(conf)?;
    let host = match host.as_str() {
        "" | "0.0.0.0" | "::" => nn_host,
        h => h,
    };
    Ok(join_host_port(host, port))
}

/// The NameNode HTTP address (`dfs.namenode.http-address`, default `0.0.0.0:9870`).
pub fn namenode_http_address(conf: &Configuration) -> Result<(String, u16), ConfError> {
    address_from_conf(
        conf,
        keys::DFS_NAMENODE_HTTP_ADDRESS_KEY,
        keys::DFS_NAMENODE_HTTP_ADDRESS_DEFAULT,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_port_forms() {
        assert_eq!(
            parse_host_port("nn:9000", 8020).ok(),
            Some(("nn".into(), 9000))
        );
        assert_eq!(
            parse_host_port(" nn ", 8020).ok(),
            Some(("nn".into(), 8020))
        );
        assert_eq!(
            parse_host_port("hdfs://nn.example.com:8021/", 8020).ok(),
            Some(("nn.example.com".into(), 8021))
        );
        assert_eq!(
            parse_host_port("hdfs://nn/user/x", 8020).ok(),
            Some(("nn".into(), 8020))
        );
        assert_eq!(
            parse_host_port("[::1]:50", 1).ok(),
            Some(("::1".into(), 50))
        );
        assert_eq!(
            parse_host_port("0.0.0.0:0", 1).ok(),
            Some(("0.0.0.0".into(), 0))
        );
        assert!(parse_host_port("nn:99999", 1).is_err());
        assert!(parse_host_port("nn:abc", 1).is_err());
        assert!(parse_host_port(":80", 1).is_err());
        assert!(parse_host_port("", 1).is_err());
        assert!(parse_host_port("::1", 1).is_err());
    }

    #[test]
    fn namenode_address_sources() {
        let mut c = Configuration::new();
        let e = namenode_rpc_address(&c).expect_err("file:/// must be rejected");
        assert!(e.to_string().contains("file:///"), "{e}");
        c.set("fs.defaultFS", "hdfs://namenode");
        assert_eq!(
            namenode_rpc_address(&c).ok(),
            Some(("namenode".into(), 8020))
        );
        c.set("fs.default.name", "hdfs://other:9000/");
        assert_eq!(namenode_rpc_address(&c).ok(), Some(("other".into(), 9000)));
        c.set("dfs.namenode.rpc-address", "rpc-host:8888");
        assert_eq!(
            namenode_rpc_address(&c).ok(),
            Some(("rpc-host".into(), 8888))
        );
        c.set("dfs.namenode.rpc-address", "rpc-host:x");
        let e = namenode_rpc_address(&c).expect_err("bad port");
        assert!(e.to_string().contains("dfs.namenode.rpc-address"), "{e}");
    }

    #[test]
    fn web_address_a_client_connects_to() -> Result<(), ConfError> {
        let mut conf = Configuration::new();
        assert_eq!(namenode_http_address_for(&conf, "nn")?, "nn:9870");
        assert_eq!(namenode_http_address_for(&conf, "::1")?, "[::1]:9870");
        conf.set(keys::DFS_NAMENODE_HTTP_ADDRESS_KEY, "[::]:50070");
        assert_eq!(namenode_http_address_for(&conf, "nn")?, "nn:50070");
        conf.set(keys::DFS_NAMENODE_HTTP_ADDRESS_KEY, "web:9871");
        assert_eq!(namenode_http_address_for(&conf, "nn")?, "web:9871");
        Ok(())
    }

    #[test]
    fn namenode_address_from_nameservice() {
        let mut c = Configuration::new();
        c.set("fs.defaultFS", "hdfs://mycluster");
        c.set("dfs.ha.namenodes.mycluster", "nn1, nn2");
        c.set("dfs.namenode.rpc-address.mycluster.nn1", "host1:8020");
        assert_eq!(namenode_rpc_address(&c).ok(), Some(("host1".into(), 8020)));
        c.set("fs.defaultFS", "viewfs://x/");
        assert!(namenode_rpc_address(&c).is_err());
    }

    #[test]
    fn http_address_default() {
        let c = Configuration::new();
        assert_eq!(
            namenode_http_address(&c).ok(),
            Some(("0.0.0.0".into(), 9870))
        );
    }
}
