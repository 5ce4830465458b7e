//! `rhdfs namenode` and `rhdfs datanode`: one daemon each, configured like Hadoop's.

use anyhow::{Context, Result, bail};
use rhdfs_conf::clock::system_clock;
use rhdfs_datanode::DataNode;
use rhdfs_namenode::NameNode;
use tracing::Instrument;

use crate::args::{CommonArgs, take_flag};

/// Refuses to start a daemon configured for an authentication rhdfs does not speak: with
/// `hadoop.security.authentication=kerberos` an operator expects a secured cluster, and
/// serving it unauthenticated would be a silent downgrade.
fn require_simple_authentication(conf: &rhdfs_conf::Configuration) -> Result<()> {
    let key = rhdfs_conf::keys::HADOOP_SECURITY_AUTHENTICATION_KEY;
    let auth = conf.get_str(
        key,
        rhdfs_conf::keys::HADOOP_SECURITY_AUTHENTICATION_DEFAULT,
    );
    if !auth.trim().eq_ignore_ascii_case("simple") {
        bail!(
            "{key} is {:?}: rhdfs supports only simple authentication; set {key}=simple \
             (Kerberos/SASL is not implemented)",
            auth.trim()
        );
    }
    Ok(())
}

/// Runs a NameNode until Ctrl-C; with `-format`, formats the name directories and exits;
/// with `-bootstrapStandby`, formats them from another NameNode of its HA nameservice and
/// exits; with `-recover`, keeps the valid prefix of a damaged edit log and exits; with
/// `-observer`, an HA NameNode joins its nameservice as an observer.
pub async fn namenode(args: Vec<String>) -> Result<()> {
    let (common, mut rest) = CommonArgs::extract(args)?;
    let format = take_flag(&mut rest, &["-format", "--format"]);
    let force = take_flag(&mut rest, &["-force", "--force"]);
    let recover = take_flag(&mut rest, &["-recover", "--recover"]);
    let bootstrap = take_flag(&mut rest, &["-bootstrapStandby", "--bootstrapStandby"]);
    let observer = take_flag(&mut rest, &["-observer", "--observer"]);
    // rhdfs never prompts: without -force a formatted directory is refused (Hadoop's
    // -nonInteractive answer), so the flag is accepted and changes nothing.
    let _ = take_flag(&mut rest, &["-nonInteractive", "--nonInteractive"]);
    let (mut conf, _log) = setup(&common, &rest, "namenode")?;
    if observer {
        // As Hadoop's NameNode does with its start-up option.
        conf.set(rhdfs_conf::keys::DFS_NAMENODE_STARTUP_KEY, "OBSERVER");
    }
    if format {
        rhdfs_namenode::format(&conf, force).context("formatting the namespace")?;
        println!("formatted");
        return Ok(());
    }
    if bootstrap {
        return bootstrap_standby(&conf, force).await;
    }
    if recover {
        // Like `hdfs namenode -recover`: keep the longest valid prefix of the edit log,
        // repair every name directory to it, report, and exit.
        let conf2 = conf.clone();
        let last = tokio::task::spawn_blocking(move || rhdfs_namenode::server::recover(&conf2))
            .await
            .context("recovery task failed")?
            .context("recovering the edit log")?;
        println!("recovery complete: the namespace now ends at transaction {last}");
        return Ok(());
    }
    let span = rhdfs_logging::daemon_span("namenode");
    let nn = NameNode::start(conf, system_clock())
        .instrument(span)
        .await
        .context("starting the NameNode")?;
    println!("namenode listening on {}", nn.rpc_addr());
    tokio::select! {
        _ = crate::shutdown_signal() => {}
        _ = nn.failed() => {
            nn.shutdown().await;
            anyhow::bail!(
                "the namespace diverged from the nameservice's replicated edit log; exiting so \
                 that a restart reloads it"
            );
        }
    }
    nn.shutdown().await;
    Ok(())
}

/// A daemon's configuration (simple authentication only) and its log, once every argument
/// but the common ones was taken from `rest`.
fn setup(
    common: &CommonArgs,
    rest: &[String],
    daemon: &str,
) -> Result<(rhdfs_conf::Configuration, rhdfs_logging::LogGuard)> {
    if !rest.is_empty() {
        bail!("unexpected arguments: {}", rest.join(" "));
    }
    let mut conf = common.configuration()?;
    require_simple_authentication(&conf)?;
    let dir = crate::logs::log_dir(common.log_dir.clone(), &conf, None);
    let log = crate::logs::init_daemon(daemon, dir, &mut conf)?;
    Ok((conf, log))
}

/// Runs a JournalNode (a log-only voter of an HA nameservice's Raft group) until Ctrl-C.
pub async fn journalnode(args: Vec<String>) -> Result<()> {
    let (common, rest) = CommonArgs::extract(args)?;
    let (conf, _log) = setup(&common, &rest, "journalnode")?;
    let span = rhdfs_logging::daemon_span("journalnode");
    let jn = rhdfs_namenode::ha::journal_node::JournalNode::start(&conf)
        .instrument(span)
        .await
        .context("starting the JournalNode")?;
    println!("journalnode {} listening on {}", jn.id(), jn.rpc_addr());
    crate::shutdown_signal().await;
    jn.shutdown().await;
    Ok(())
}

/// Runs a DataNode until Ctrl-C.
pub async fn datanode(args: Vec<String>) -> Result<()> {
    let (common, rest) = CommonArgs::extract(args)?;
    let (conf, _log) = setup(&common, &rest, "datanode")?;
    let span = rhdfs_logging::daemon_span("datanode");
    let dn = DataNode::start(conf, system_clock())
        .instrument(span)
        .await
        .context("starting the DataNode")?;
    println!(
        "datanode {} transfer {} ipc {}",
        dn.uuid(),
        dn.xfer_addr(),
        dn.ipc_addr()
    );
    tokio::select! {
        _ = crate::shutdown_signal() => {}
        reason = dn.refused() => {
            // Hadoop's DataNode exits (status 0) once its only block pool service stopped.
            tracing::warn!("Exiting Datanode: {reason}");
        }
        failed = dn.volumes_failed() => {
            tracing::warn!("Exiting Datanode: too many failed volumes: [{failed}]");
        }
        upgrade = dn.shutdown_requested() => {
            tracing::warn!(for_upgrade = upgrade, "Exiting Datanode: shutdownDatanode requested");
        }
    }
    dn.shutdown().await;
    Ok(())
}

/// `namenode -bootstrapStandby`: prints what Hadoop's BootstrapStandby prints; exits with its
/// codes (2: no other NameNode answered, 3: unusable answer, 5: already formatted).
async fn bootstrap_standby(conf: &rhdfs_conf::Configuration, force: bool) -> Result<()> {
    match rhdfs_namenode::ha::bootstrap::bootstrap_standby(conf, force).await {
        Ok(b) => {
            println!(
                "=====================================================\n\
                 About to bootstrap Standby ID {} from:\n           \
                 Nameservice ID: {}\n        \
                 Other Namenode ID: {}\n  \
                 Other NN's HTTP address: {}\n   \
                 Other NN's IPC  address: {}\n             \
                 Namespace ID: {}\n            \
                 Block pool ID: {}\n               \
                 Cluster ID: {}\n           \
                 Layout version: {}\n       \
                 isUpgradeFinalized: true\n\
                 =====================================================",
                b.own,
                b.nameservice,
                b.from.id,
                b.from_http,
                b.from.rpc_addr(),
                b.version.namespace_id,
                b.version.block_pool_id,
                b.version.cluster_id,
                b.version.layout_version,
            );
            println!(
                "bootstrapped from the image at transaction {}",
                b.image_txid
            );
            Ok(())
        }
        Err(e) => {
            eprintln!("bootstrapStandby: {e}");
            std::process::exit(e.exit_code());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_simple_authentication_starts() {
        let mut conf = rhdfs_conf::Configuration::new();
        assert!(require_simple_authentication(&conf).is_ok());
        conf.set("hadoop.security.authentication", " SIMPLE ");
        assert!(require_simple_authentication(&conf).is_ok());
        conf.set("hadoop.security.authentication", "kerberos");
        let e = require_simple_authentication(&conf)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("supports only simple authentication"), "{e}");
    }
}
