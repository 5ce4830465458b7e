//! `webFileStatus`: WebHDFS GETFILESTATUS against the NameNode's web port, each benchmark
//! thread over its own keep-alive connection, so its row reads beside `fileStatus` (the same
//! question over RPC) and the ratio of the two p50s is the cost of the HTTP edge.

use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use rhdfs_conf::Configuration;
use rhdfs_http::client::{Persistent, encode_component};
use tokio::sync::Mutex;

/// How long one connect or request may take before the operation counts as failed.
const TIMEOUT: Duration = Duration::from_secs(30);

/// One keep-alive connection per benchmark thread (thread `t` only ever locks entry `t`, so
/// the mutexes are never contended; they only make the set shareable across tasks).
pub struct WebClients {
    conns: Vec<Mutex<Persistent>>,
    user: String,
}

impl WebClients {
    pub async fn connect(addr: &str, threads: usize, user: &str) -> anyhow::Result<Self> {
        let mut conns = Vec::with_capacity(threads);
        for _ in 0..threads {
            let c = Persistent::connect(addr, TIMEOUT)
                .await
                .with_context(|| format!("connecting to the NameNode web port {addr}"))?;
            conns.push(Mutex::new(c));
        }
        Ok(WebClients {
            conns,
            user: encode_component(user),
        })
    }

    /// GETFILESTATUS of `path` on thread `t`'s connection; fails unless the answer is a
    /// FileStatus of a file.
    pub async fn file_status(&self, t: usize, path: &str) -> anyhow::Result<Duration> {
        let conn = self
            .conns
            .get(t)
            .context("no web connection for this thread")?;
        let encoded: Vec<String> = path.split('/').map(encode_component).collect();
        let target = format!(
            "/webhdfs/v1{}?op=GETFILESTATUS&user.name={}",
            encoded.join("/"),
            self.user
        );
        let mut conn = conn.lock().await;
        let start = Instant::now();
        let r = conn.request("GET", &target, None).await?;
        let took = start.elapsed();
        if r.code != 200 {
            bail!("GETFILESTATUS {path}: HTTP {} {}", r.code, r.text());
        }
        ensure!(
            r.text().contains("\"type\":\"FILE\""),
            "GETFILESTATUS {path}: not a file: {}",
            r.text()
        );
        Ok(took)
    }
}

/// The NameNode web address for a run against `-fs uri`: `--nn-http` when given, else
/// `dfs.namenode.http-address` with a wildcard host replaced by the host of `uri`.
pub fn http_address(
    explicit: Option<&str>,
    conf: &Configuration,
    uri: &str,
) -> anyhow::Result<String> {
    if let Some(a) = explicit {
        return Ok(a.to_string());
    }
    let (fs_host, _) = rhdfs_conf::addr::parse_host_port(uri, 0).with_context(|| {
        format!("cannot tell the NameNode web address from {uri:?}; give --nn-http host:port")
    })?;
    Ok(rhdfs_conf::addr::namenode_http_address_for(conf, &fs_host)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn web_address_from_options_conf_and_uri() -> anyhow::Result<()> {
        let mut conf = Configuration::new();
        assert_eq!(
            http_address(Some("h:1"), &conf, "hdfs://nn:8020")?,
            "h:1".to_string()
        );
        assert_eq!(
            http_address(None, &conf, "hdfs://nn.example:8020/")?,
            "nn.example:9870".to_string()
        );
        conf.set("dfs.namenode.http-address", "web.example:50070");
        assert_eq!(
            http_address(None, &conf, "hdfs://nn:8020")?,
            "web.example:50070".to_string()
        );
        conf.set("dfs.namenode.http-address", "0.0.0.0:9871");
        assert_eq!(
            http_address(None, &conf, "hdfs://[::1]:8020")?,
            "[::1]:9871".to_string()
        );
        Ok(())
    }
}
