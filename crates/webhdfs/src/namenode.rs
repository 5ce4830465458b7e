//! The NameNode's half of WebHDFS: metadata operations answered here, through an RPC client
//! of the NameNode's own port acting as the requesting user; OPEN, CREATE, APPEND and
//! GETFILECHECKSUM redirected (307) to a DataNode's HTTP port, chosen from the block's
//! locations or, for a new file, among the live DataNodes.

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};

use rhdfs_client::error::class;
use rhdfs_client::{ClientError, FileSystem};
use rhdfs_conf::Configuration;
use rhdfs_http::url::{encode_component, encode_query_value};
use rhdfs_http::{Connection, Request};
use rhdfs_ipc::caller::{Forwarded, scope};
use rhdfs_proto::hdfs::{DatanodeInfoProto, LocatedBlockProto};

use crate::error::{Failure, WebError};
use crate::fs_cache::FsCache;
use crate::op::Op;
use crate::{acl, json, located, params};

/// The parameters a redirect does not pass on (it sets its own).
const NOT_FORWARDED: &[&str] = &[
    "op",
    "user.name",
    "namenoderpcaddress",
    "noredirect",
    "doas",
    "delegation",
];

/// Picks a DataNode for data the NameNode has no replica location for (a new file, an empty
/// one): a live node not being decommissioned, the one on the client's host if there is one.
pub trait DatanodeChooser: Send + Sync {
    /// The DataNode's HTTP address as (host, port), or None when no DataNode is available.
    fn any_datanode(&self, client_ip: &str) -> Option<(String, u16)>;
}

/// What an operation answers.
#[derive(Debug, PartialEq, Eq)]
enum Reply {
    Json(String),
    Empty,
    Redirect(String),
}

/// The NameNode's WebHDFS endpoint.
pub struct NameNodeWebHdfs {
    cache: FsCache,
    rpc_addr: OnceLock<String>,
    chooser: Arc<dyn DatanodeChooser>,
    web: crate::WebSettings,
}

fn http_host(ip: &str) -> String {
    if ip.contains(':') {
        format!("[{ip}]")
    } else {
        ip.to_string()
    }
}

fn info_addr(dn: &DatanodeInfoProto) -> Option<(String, u16)> {
    let port = u16::try_from(dn.id.info_port).ok().filter(|p| *p != 0)?;
    Some((dn.id.ip_addr.clone(), port))
}

/// The replica to redirect a reader to: one on the client's own host if there is one, else
/// the first in the NameNode's order.
fn replica_for(lb: Option<&LocatedBlockProto>, client_ip: &str) -> Option<(String, u16)> {
    let locs = &lb?.locs;
    locs.iter()
        .filter(|d| d.id.ip_addr == client_ip)
        .chain(locs.iter())
        .find_map(info_addr)
}

impl NameNodeWebHdfs {
    /// `conf` configures the RPC clients.
    pub fn new(
        conf: &Configuration,
        chooser: Arc<dyn DatanodeChooser>,
        web: crate::WebSettings,
    ) -> Self {
        NameNodeWebHdfs {
            cache: FsCache::new(conf),
            rpc_addr: OnceLock::new(),
            chooser,
            web,
        }
    }

    /// The NameNode's RPC address as DataNodes and clients reach it (host:port); requests
    /// fail with RetriableException until it is known.
    pub fn set_rpc_addr(&self, addr: String) {
        let _ = self.rpc_addr.set(addr);
    }

    /// Reach the NameNode in-process from now on, so that its audit log names each HTTP
    /// client and `proto=webhdfs` (see `rhdfs_ipc::caller`).
    pub fn set_rpc_connector(&self, nn: rhdfs_ipc::LocalConnector) {
        self.cache.set_in_process(nn);
    }

    /// Answers one `/webhdfs/v1` request.
    pub async fn handle(&self, req: &Request, conn: &mut Connection) -> std::io::Result<()> {
        if !self.web.enabled {
            return crate::WebSettings::not_served(conn).await;
        }
        let result = self.answer(req, conn.peer()).await;
        // The data of a CREATE or APPEND goes to the DataNode, not here.
        if let Err(e) = conn.skip_body(1 << 20).await {
            tracing::debug!(path = %req.path, "WebHDFS request body not read: {e}");
        }
        match result {
            Ok(Reply::Json(body)) => {
                conn.respond(200, crate::json_content_type(req), &[], body.as_bytes())
                    .await
            }
            Ok(Reply::Empty) => {
                conn.respond(200, crate::json_content_type(req), &[], b"")
                    .await
            }
            Ok(Reply::Redirect(url)) => {
                let body = json::location(&url);
                if params::boolean(req, "noredirect", false).unwrap_or(false) {
                    conn.respond(200, crate::json_content_type(req), &[], body.as_bytes())
                        .await
                } else {
                    conn.respond(
                        307,
                        crate::json_content_type(req),
                        &[("Location", &url)],
                        body.as_bytes(),
                    )
                    .await
                }
            }
            Err(e) => e.send(req, conn).await,
        }
    }

    async fn answer(&self, req: &Request, peer: SocketAddr) -> Result<Reply, WebError> {
        let path = crate::fs_path(&req.path)
            .ok_or_else(|| WebError::new(class::FILE_NOT_FOUND, &req.path))?;
        let op = Op::parse(&req.method, req.param("op"))?;
        let user = self.web.request_user(req)?;
        let nn = self
            .rpc_addr
            .get()
            .ok_or_else(|| WebError::new(class::RETRIABLE, "NameNode still not started"))?;
        let fs = self.cache.get(nn, &user).await?;
        let fail = |e: ClientError| {
            self.cache.forget_on_failure(nn, &user, &e);
            WebError::from(e)
        };
        // Every call made for this request names its HTTP client (believed only on the
        // in-process connection; elsewhere the NameNode ignores it).
        let caller = Forwarded::new(peer.ip(), "webhdfs");
        scope(&caller, self.run(op, &fs, &path, req, nn, &user, peer))
            .await
            .map_err(|e| match e {
                Failure::Client(e) => fail(e),
                Failure::Web(e) => e,
            })
    }

    #[allow(clippy::too_many_arguments)]
    async fn run(
        &self,
        op: Op,
        fs: &FileSystem,
        path: &str,
        req: &Request,
        nn: &str,
        user: &str,
        peer: SocketAddr,
    ) -> Result<Reply, Failure> {
        Ok(match op {
            Op::GetFileStatus => Reply::Json(json::file_status(&fs.status(path).await?)),
            Op::ListStatus => {
                let entries = fs.list_status(path).await?;
                Reply::Json(json::file_statuses(&suffixed(entries, path)))
            }
            Op::ListStatusBatch => {
                let after = params::string(req, "startAfter").unwrap_or("");
                let (entries, remaining, _) = fs.list_page(path, after.as_bytes()).await?;
                Reply::Json(json::directory_listing(&suffixed(entries, path), remaining))
            }
            Op::GetContentSummary => {
                Reply::Json(json::content_summary(&fs.content_summary(path).await?))
            }
            Op::GetQuotaUsage => Reply::Json(json::quota_usage(&fs.content_summary(path).await?)),
            Op::GetStatus => Reply::Json(json::fs_status(&fs.fs_stats().await?)),
            Op::GetHomeDirectory => Reply::Json(json::path(&format!("/user/{user}"))),
            Op::GetTrashRoot => Reply::Json(json::path(&format!("/user/{user}/.Trash"))),
            Op::GetServerDefaults => {
                Reply::Json(json::server_defaults(&fs.server_defaults().await?))
            }
            Op::GetFileBlockLocations => {
                let offset = params::unsigned(req, "offset")?.unwrap_or(0);
                let length = params::unsigned(req, "length")?.unwrap_or(i64::MAX as u64);
                let lbs = fs.located_blocks(path, offset, length).await?;
                Reply::Json(json::block_locations(&lbs.blocks))
            }
            Op::GetBlockLocations => {
                let offset = params::unsigned(req, "offset")?.unwrap_or(0);
                let length = params::unsigned(req, "length")?.unwrap_or(i64::MAX as u64);
                let lbs = fs.located_blocks(path, offset, length).await?;
                Reply::Json(located::located_blocks(&lbs))
            }
            Op::CheckAccess => {
                let mode = params::fs_action(req, op.name())?;
                fs.check_access(path, mode).await?;
                Reply::Empty
            }
            Op::Mkdirs => {
                let perm = params::permission(req, 0o755)?;
                Reply::Json(json::boolean(fs.mkdirs(path, Some(perm)).await?))
            }
            Op::Rename => {
                let dst = params::destination(req)?;
                match params::string(req, "renameoptions") {
                    None => Reply::Json(json::boolean(fs.rename(path, &dst).await?)),
                    Some(opts) => {
                        let overwrite = opts
                            .split(',')
                            .any(|o| o.trim().eq_ignore_ascii_case("OVERWRITE"));
                        fs.rename2(path, &dst, overwrite).await?;
                        Reply::Empty
                    }
                }
            }
            Op::SetReplication => {
                let r = match params::replication(req)? {
                    Some(r) => r,
                    None => {
                        u16::try_from(fs.server_defaults().await?.replication).unwrap_or(u16::MAX)
                    }
                };
                Reply::Json(json::boolean(fs.set_replication(path, r).await?))
            }
            Op::SetOwner => {
                let owner = params::string(req, "owner");
                let group = params::string(req, "group");
                if owner.is_none() && group.is_none() {
                    return Err(
                        WebError::illegal_argument("Both owner and group are empty.").into(),
                    );
                }
                fs.set_owner(path, owner, group).await?;
                Reply::Empty
            }
            Op::SetPermission => {
                fs.set_permission(path, params::permission(req, 0o755)?)
                    .await?;
                Reply::Empty
            }
            Op::SetTimes => {
                let t = |name| -> Result<Option<u64>, WebError> {
                    Ok(params::long(req, name, -1)?
                        .filter(|v| *v >= 0)
                        .map(|v| v as u64))
                };
                fs.set_times(path, t("modificationtime")?, t("accesstime")?)
                    .await?;
                Reply::Empty
            }
            Op::Truncate => {
                let len = params::new_length(req)?;
                Reply::Json(json::boolean(fs.truncate(path, len as i64).await?))
            }
            Op::Concat => {
                let srcs = params::sources(req)?;
                let srcs: Vec<&str> = srcs.iter().map(String::as_str).collect();
                fs.concat(path, &srcs).await?;
                Reply::Empty
            }
            Op::SetQuota => {
                let ns = params::quota(req, "namespacequota")?;
                let ds = params::quota(req, "storagespacequota")?;
                fs.set_quota(path, ns, ds).await?;
                Reply::Empty
            }
            Op::SetQuotaByStorageType => {
                let ty = params::storage_type(req)?;
                let ds = params::quota(req, "storagespacequota")?;
                fs.set_type_quota(path, ty, ds).await?;
                Reply::Empty
            }
            Op::GetAclStatus
            | Op::SetAcl
            | Op::ModifyAclEntries
            | Op::RemoveAclEntries
            | Op::RemoveDefaultAcl
            | Op::RemoveAcl
            | Op::GetXAttrs
            | Op::ListXAttrs
            | Op::SetXAttr
            | Op::RemoveXAttr => match acl::run(op, fs, path, req).await? {
                acl::Answer::Json(body) => Reply::Json(body),
                acl::Answer::Empty => Reply::Empty,
            },
            Op::Delete => {
                let recursive = params::boolean(req, "recursive", false)?;
                Reply::Json(json::boolean(fs.delete(path, recursive).await?))
            }
            Op::Open | Op::GetFileChecksum | Op::Append => {
                // As Hadoop's NameNode chooses: the file must exist, an OPEN offset must lie
                // inside a non-empty file, and a replica holder of the block is preferred.
                let len = match fs.get_file_info(path).await? {
                    Some(st) => st.length,
                    None => {
                        return Err(WebError::new(
                            "java.io.FileNotFoundException",
                            format!("File {path} not found."),
                        )
                        .into());
                    }
                };
                let offset = match op {
                    Op::Open => params::unsigned(req, "offset")?.unwrap_or(0),
                    _ => len.saturating_sub(1),
                };
                if op == Op::Open && offset >= len && len > 0 {
                    return Err(WebError::io(format!(
                        "Offset={offset} out of the range [0, {len}); OPEN, path={path}"
                    ))
                    .into());
                }
                let client_ip = peer.ip().to_string();
                let mut holder = None;
                if len > 0 {
                    let lbs = fs.located_blocks(path, offset, 1).await?;
                    holder = if op == Op::Append {
                        replica_for(lbs.last_block.as_ref(), &client_ip)
                    } else {
                        let block = lbs
                            .blocks
                            .iter()
                            .find(|b| b.offset + b.b.num_bytes.unwrap_or(0) > offset);
                        replica_for(block, &client_ip)
                    };
                }
                let dn = holder.or_else(|| self.chooser.any_datanode(&client_ip));
                Reply::Redirect(redirect_url(dn, op, path, req, nn, user)?)
            }
            Op::Create => {
                let dn = self.chooser.any_datanode(&peer.ip().to_string());
                Reply::Redirect(redirect_url(dn, op, path, req, nn, user)?)
            }
        })
    }
}

/// Each entry with its `pathSuffix`: its name, or "" when the listed path is the file itself.
fn suffixed(
    entries: Vec<rhdfs_client::FileStatus>,
    listed: &str,
) -> Vec<(rhdfs_client::FileStatus, String)> {
    let listed = rhdfs_client::path::normalize(listed).unwrap_or_else(|_| listed.to_string());
    entries
        .into_iter()
        .map(|st| {
            let suffix = if st.path == listed {
                String::new()
            } else {
                st.name().to_string()
            };
            (st, suffix)
        })
        .collect()
}

/// The DataNode URL a redirected op continues at.
fn redirect_url(
    dn: Option<(String, u16)>,
    op: Op,
    path: &str,
    req: &Request,
    nn: &str,
    user: &str,
) -> Result<String, WebError> {
    let (host, port) = dn.ok_or_else(|| {
        WebError::io(
            "Failed to find datanode, suggest to check cluster health. excludeDatanodes=null",
        )
    })?;
    let mut url = format!(
        "http://{}:{port}{}{}?op={}&namenoderpcaddress={}&user.name={}",
        http_host(&host),
        crate::PREFIX,
        encode_component(path),
        op.name(),
        encode_query_value(nn),
        encode_query_value(user)
    );
    for (k, v) in &req.params {
        if !NOT_FORWARDED.contains(&k.as_str()) {
            url.push_str(&format!(
                "&{}={}",
                encode_query_value(k),
                encode_query_value(v)
            ));
        }
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(q: &str) -> Request {
        crate::test_request("PUT", "/webhdfs/v1/a%20b", q)
    }

    #[test]
    fn redirects_carry_the_namenode_the_user_and_the_parameters() {
        let r = req("op=CREATE&user.name=bob&overwrite=true&noredirect=false&permission=600");
        let url = redirect_url(
            Some(("10.0.0.2".into(), 9864)),
            Op::Create,
            "/a b",
            &r,
            "nn.example:8020",
            "bob",
        )
        .expect("url");
        assert_eq!(
            url,
            "http://10.0.0.2:9864/webhdfs/v1/a%20b?op=CREATE&namenoderpcaddress=nn.example%3A8020&user.name=bob&overwrite=true&permission=600"
        );
        let v6 =
            redirect_url(Some(("::1".into(), 1)), Op::Open, "/", &r, "n:1", "bob").expect("url");
        assert!(v6.starts_with("http://[::1]:1/webhdfs/v1/?op=OPEN"), "{v6}");
        let none = redirect_url(None, Op::Create, "/x", &r, "n:1", "bob").expect_err("no DN");
        assert_eq!(none.status(), 403);
    }

    #[test]
    fn readers_go_to_a_replica_on_their_own_host() {
        use rhdfs_proto::hdfs::{DatanodeIdProto, DatanodeInfoProto};
        let dn = |ip: &str, port: u32| DatanodeInfoProto {
            id: DatanodeIdProto {
                ip_addr: ip.into(),
                info_port: port,
                ..Default::default()
            },
            ..Default::default()
        };
        let lb = LocatedBlockProto {
            locs: vec![
                dn("10.0.0.1", 0),
                dn("10.0.0.2", 9864),
                dn("10.0.0.3", 9864),
            ],
            ..Default::default()
        };
        assert_eq!(
            replica_for(Some(&lb), "10.0.0.3"),
            Some(("10.0.0.3".into(), 9864))
        );
        // No HTTP port on the first: the next in order.
        assert_eq!(
            replica_for(Some(&lb), "10.9.9.9"),
            Some(("10.0.0.2".into(), 9864))
        );
        assert_eq!(replica_for(None, "10.0.0.3"), None);
    }
}
