//! Which NameNode `rhdfs dfsadmin` and `rhdfs fsck` talk to. For `fs.defaultFS =
//! hdfs://<nameservice>` with several NameNodes it is the first that answers a ClientProtocol
//! read (a standby answers StandbyException, a dead one not at all), as Hadoop's DFSAdmin and
//! DFSck find the active one; otherwise the configured address.

use anyhow::{Context, Result, bail};
use rhdfs_conf::{Configuration, keys};
use rhdfs_ipc::{ClientConfig, RpcClient};
use rhdfs_proto::hdfs::{GetServerDefaultsRequestProto, GetServerDefaultsResponseProto};
use rhdfs_proto::protocols::CLIENT_PROTOCOL;

/// The NameNode chosen: its RPC `host:port` and, when the nameservice names it, its web
/// `host:port`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub rpc: String,
    pub http: Option<String>,
}

/// The nameservice `fs.defaultFS` names, unless `dfs.namenode.rpc-address` is set.
fn nameservice(conf: &Configuration) -> Result<Option<rhdfs_conf::ha::Nameservice>> {
    if conf
        .get_trimmed(keys::DFS_NAMENODE_RPC_ADDRESS_KEY)
        .is_some()
    {
        return Ok(None);
    }
    let fs = conf.get_str(keys::FS_DEFAULT_FS_KEY, keys::FS_DEFAULT_FS_DEFAULT);
    let Some(rest) = fs.trim().strip_prefix("hdfs://") else {
        return Ok(None);
    };
    let authority = rest.split('/').next().unwrap_or("");
    Ok(rhdfs_conf::ha::logical_nameservice(conf, authority)?)
}

/// The NameNode to administer (see the module).
pub async fn namenode(conf: &Configuration, user: &str) -> Result<Target> {
    let Some(ns) = nameservice(conf)? else {
        let (host, port) = rhdfs_conf::addr::namenode_rpc_address(conf)?;
        return Ok(Target {
            rpc: format!("{host}:{port}"),
            http: None,
        });
    };
    let ipc = ClientConfig::from_conf(conf)?;
    let mut tried = Vec::new();
    for nn in &ns.namenodes {
        let rpc = nn.rpc_addr();
        let answer = async {
            let c = RpcClient::connect_with(&rpc, CLIENT_PROTOCOL, user, ipc.clone()).await?;
            let r = c
                .call::<_, GetServerDefaultsResponseProto>(
                    "getServerDefaults",
                    &GetServerDefaultsRequestProto {},
                )
                .await;
            c.close().await;
            r
        }
        .await;
        match answer {
            Ok(_) => {
                return Ok(Target {
                    rpc,
                    http: nn
                        .http
                        .as_ref()
                        .map(|(h, p)| rhdfs_conf::ha::join_host_port(h, *p)),
                });
            }
            Err(e) => tried.push(format!("{} ({rpc}): {e}", nn.id)),
        }
    }
    bail!(
        "no NameNode of nameservice {} answered: {}",
        ns.id,
        tried.join("; ")
    )
}

/// [`namenode`]'s RPC address, with the nameservice in the error's context.
pub async fn rpc_address(conf: &Configuration, user: &str) -> Result<String> {
    namenode(conf, user)
        .await
        .map(|t| t.rpc)
        .context("finding the NameNode to talk to")
}
