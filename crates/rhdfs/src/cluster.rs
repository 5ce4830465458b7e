//! `rhdfs cluster`: a NameNode and N DataNodes in one process, on one data directory; with
//! `--namenodes N` (two or more) an HA nameservice `ns` whose NameNodes replicate their edits
//! through Raft, on RPC ports 8020, 8021, … (or from the `fs.defaultFS` port up).

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use rhdfs_conf::Configuration;
use rhdfs_minicluster::MiniCluster;
use rhdfs_minicluster::ha::{HaMiniCluster, NAMESERVICE};

use crate::args::{CommonArgs, take_value};

/// Runs a local cluster until Ctrl-C.
pub async fn run(args: Vec<String>) -> Result<()> {
    let (common, mut rest) = CommonArgs::extract(args)?;
    let datanodes: usize = match take_value(&mut rest, &["--datanodes", "-datanodes", "-n"])? {
        Some(v) => v
            .parse()
            .with_context(|| format!("--datanodes takes a number, not `{v}`"))?,
        None => 3,
    };
    let namenodes: usize = match take_value(&mut rest, &["--namenodes", "-namenodes"])? {
        Some(v) => v
            .parse()
            .with_context(|| format!("--namenodes takes a number, not `{v}`"))?,
        None => 1,
    };
    if namenodes == 0 {
        bail!("--namenodes must be at least 1");
    }
    let dir = PathBuf::from(
        take_value(&mut rest, &["--dir", "-dir"])?.unwrap_or_else(|| "rhdfs-data".to_string()),
    );
    if !rest.is_empty() {
        bail!("unexpected arguments: {}", rest.join(" "));
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let dir = dir
        .canonicalize()
        .with_context(|| format!("resolving {}", dir.display()))?;

    let mut conf = common.configuration()?;
    let logs = crate::logs::log_dir(common.log_dir.clone(), &conf, Some(dir.join("logs")));
    let _log = crate::logs::init_daemon("cluster", logs, &mut conf)?;
    if namenodes > 1 {
        return run_ha(conf, dir, namenodes, datanodes).await;
    }
    // A local cluster answers where Hadoop clients look by default unless told otherwise;
    // DataNodes take free ports so that several fit on one host.
    if conf.get("dfs.namenode.rpc-address").is_none() {
        let addr = match conf.get("fs.defaultFS") {
            Some(uri) if uri.starts_with("hdfs://") => uri
                .trim_start_matches("hdfs://")
                .trim_end_matches('/')
                .to_string(),
            _ => "127.0.0.1:8020".to_string(),
        };
        conf.set("dfs.namenode.rpc-address", addr);
    }
    if conf.get("dfs.namenode.http-address").is_none() {
        conf.set("dfs.namenode.http-address", "127.0.0.1:9870");
    }

    let cluster = MiniCluster::builder()
        .datanodes(datanodes)
        .configuration(&conf)
        .base_dir(&dir)
        .build()
        .await
        .context("starting the cluster")?;

    let conf_dir = dir.join("conf");
    let core_site = cluster
        .write_client_conf(&conf_dir)
        .context("writing the client configuration")?;
    let uri = cluster.uri();
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "ready {uri}")?;
        writeln!(out, "  NameNode     {uri} ({datanodes} DataNodes)")?;
        let http = cluster.namenode().http_addr();
        writeln!(
            out,
            "  NameNode web http://{http}/ (overview, fsck, jmx, metrics, webhdfs/v1)"
        )?;
        writeln!(out, "  WebHDFS      webhdfs://{http}/")?;
        writeln!(out, "  data         {}", dir.display())?;
        writeln!(out, "  client conf  {}", core_site.display())?;
        writeln!(
            out,
            "  try          HADOOP_CONF_DIR={} hadoop fs -ls /",
            conf_dir.display()
        )?;
        out.flush()?;
    }
    crate::shutdown_signal().await;
    eprintln!("stopping the cluster");
    cluster.shutdown().await;
    Ok(())
}

/// `--namenodes N`: an HA nameservice until Ctrl-C.
async fn run_ha(
    conf: Configuration,
    dir: PathBuf,
    namenodes: usize,
    datanodes: usize,
) -> Result<()> {
    let first: u16 = match conf.get("fs.defaultFS") {
        Some(uri) if uri.starts_with("hdfs://") => uri
            .trim_start_matches("hdfs://")
            .trim_end_matches('/')
            .rsplit_once(':')
            .and_then(|(_, p)| p.parse().ok())
            .unwrap_or(8020),
        _ => 8020,
    };
    let ports: Vec<u16> = (0..namenodes)
        .map(|i| u16::try_from(i).ok().and_then(|i| first.checked_add(i)))
        .collect::<Option<_>>()
        .context("NameNode ports past 65535")?;
    // HaMiniCluster sets fs.defaultFS to the nameservice for every daemon.
    let cluster = HaMiniCluster::start(Some(dir.clone()), &ports, datanodes, &conf)
        .await
        .context("starting the HA cluster")?;
    let conf_dir = dir.join("conf");
    cluster
        .write_client_conf(&conf_dir)
        .context("writing the client configuration")?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "ready hdfs://{NAMESERVICE}")?;
        for i in 0..cluster.num_namenodes() {
            if let Some(nn) = cluster.namenode(i) {
                writeln!(
                    out,
                    "  NameNode nn{}  {} web http://{}/",
                    i + 1,
                    nn.rpc_addr(),
                    nn.http_addr()
                )?;
            }
        }
        writeln!(out, "  DataNodes    {datanodes}")?;
        writeln!(out, "  data         {}", dir.display())?;
        writeln!(
            out,
            "  client conf  {} (core-site.xml, hdfs-site.xml)",
            conf_dir.display()
        )?;
        writeln!(
            out,
            "  try          HADOOP_CONF_DIR={} hadoop fs -ls /",
            conf_dir.display()
        )?;
        out.flush()?;
    }
    crate::shutdown_signal().await;
    eprintln!("stopping the cluster");
    cluster.shutdown().await;
    Ok(())
}
