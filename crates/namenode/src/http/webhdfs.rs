//! The NameNode's side of WebHDFS wiring: which DataNode a new file's data goes to, and the
//! RPC address redirects name.

use std::net::SocketAddr;
use std::sync::Arc;

use parking_lot::Mutex;
use rand::Rng;
use rand::rngs::StdRng;
use rhdfs_conf::Configuration;

use crate::namesystem::Namesystem;

/// Chooses among the live, in-service DataNodes: one on the client's host if there is any,
/// else any; at random among those (seeded once, `RHDFS_SEED` replays a run).
pub struct LiveDatanodes {
    fs: Arc<Namesystem>,
    rng: Mutex<StdRng>,
}

impl LiveDatanodes {
    pub fn new(fs: Arc<Namesystem>) -> Self {
        LiveDatanodes {
            fs,
            rng: Mutex::new(rhdfs_conf::rng::seeded_rng(None)),
        }
    }
}

impl rhdfs_webhdfs::DatanodeChooser for LiveDatanodes {
    fn any_datanode(&self, client_ip: &str) -> Option<(String, u16)> {
        let nodes: Vec<(String, u16)> = self
            .fs
            .block_manager()
            .live_http_endpoints()
            .into_iter()
            .filter_map(|(ip, port)| Some((ip, u16::try_from(port).ok().filter(|p| *p != 0)?)))
            .collect();
        let local: Vec<&(String, u16)> = nodes.iter().filter(|(ip, _)| ip == client_ip).collect();
        let pool: Vec<&(String, u16)> = if local.is_empty() {
            nodes.iter().collect()
        } else {
            local
        };
        if pool.is_empty() {
            return None;
        }
        let i = self.rng.lock().random_range(0..pool.len());
        Some(pool[i].clone())
    }
}

/// The RPC address as DataNodes should dial it: the bound address, or, when bound to a
/// wildcard, the configured `dfs.namenode.rpc-address` host with the bound port.
pub fn advertised_rpc_addr(conf: &Configuration, bound: SocketAddr) -> String {
    if !bound.ip().is_unspecified() {
        return bound.to_string();
    }
    match rhdfs_conf::addr::namenode_rpc_address(conf) {
        Ok((host, _)) if host != "0.0.0.0" && host != "::" => format!("{host}:{}", bound.port()),
        _ => format!("127.0.0.1:{}", bound.port()),
    }
}
