//! `rhdfs`: the one command line. Starts the daemons and a local cluster; later the operator
//! tools (`dfs`, `fsck`, `dfsadmin`, `bench`) hang off it too.

mod admin;
mod args;
mod bench;
mod cluster;
mod daemons;
mod debug;
mod logs;

use rhdfs::dfs;

use std::process::ExitCode;

const USAGE: &str = "\
Usage: rhdfs COMMAND [options]

Commands:
  cluster    [--datanodes N] [--dir DIR] [-D key=value ...]
             start a local NameNode and N DataNodes (default 3) on 127.0.0.1;
             prints `ready hdfs://host:port` once every DataNode has registered and
             writes DIR/conf/core-site.xml for clients. Ctrl-C stops everything.
  namenode   [-format [-force] | -bootstrapStandby [-force] | -recover | -observer] [--config DIR]
             [-D key=value ...]
             run a NameNode from core-site.xml/hdfs-site.xml (HADOOP_CONF_DIR or --config)
  datanode   [--config DIR] [-D key=value ...]
             run a DataNode from the same configuration
  journalnode [--config DIR] [-D key=value ...]
             run a JournalNode: a log-only voter of the HA nameservice's replicated edit
             log (dfs.namenode.shared.edits.dir = qjournal://host:port;.../journal)
  dfs        FsShell commands: -ls, -put, -get, -cat, -rm, ... (`rhdfs dfs -help`)
  fsck       PATH [-files [-blocks [-locations|-racks|-replicaDetails]]] [-openforwrite]
             [-list-corruptfileblocks] [-delete|-move]
  dfsadmin   -report [-live|-dead|-decommissioning] | -safemode get|enter|leave|wait |
             -saveNamespace | -metasave FILE | -refreshNodes | -triggerBlockReport ...
  haadmin    -getServiceState NN | -getAllServiceState | -checkHealth NN |
             -transitionToActive NN | -transitionToStandby NN  (HA nameservice NameNode ids)
  debug      verifyMeta -meta <metadata-file> [-block <block-file>] |
             computeMeta -block <block-file> -out <output-metadata-file> |
             recoverLease -path <path> [-retries <num-retries>]   (as `hdfs debug`)
  bench      dfsio -write|-read --files N --size SIZE [--replication R]
             delete-under-load [--blocks N] [--writers W] [--datanodes D]
             nn [-op OP|all] [-threads T] [-files N] [-datanodes D] (`rhdfs bench help`)
  version    the version, the source revision and the build date (also --version)
  help       this text

Daemons (cluster, namenode, datanode) also take --log-dir DIR (else HADOOP_LOG_DIR; `cluster`
defaults to DIR/logs): each logs to rhdfs-USER-DAEMON-HOST.log there, rolled at
-D hadoop.log.maxfilesize (256MB) keeping -D hadoop.log.maxbackupindex (20) files; the
NameNode writes hdfs-audit.log beside it. Levels: RUST_LOG=info (default), debug, ...;
at run time through the NameNode web port's /logLevel?log=TARGET&level=LEVEL.
";

fn main() -> ExitCode {
    let mut argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.is_empty() {
        eprint!("{USAGE}");
        return ExitCode::from(1);
    }
    let cmd = argv.remove(0);
    // Daemons set up their own logging (info, a log file) once their configuration is read;
    // client tools only warn, like Hadoop's shell.
    let daemon = matches!(
        cmd.as_str(),
        "cluster" | "namenode" | "datanode" | "journalnode"
    );
    let _log = if daemon { None } else { logs::init_client() };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("rhdfs: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let name = cmd.clone();
    let result = runtime.block_on(async move {
        match cmd.as_str() {
            "cluster" => cluster::run(argv).await.map(|()| 0),
            "namenode" => daemons::namenode(argv).await.map(|()| 0),
            "datanode" => daemons::datanode(argv).await.map(|()| 0),
            "journalnode" => daemons::journalnode(argv).await.map(|()| 0),
            "dfs" | "fs" => dfs::run(argv).await,
            "fsck" => admin::fsck(argv).await,
            "dfsadmin" => admin::dfsadmin(argv).await,
            "haadmin" => rhdfs::haadmin::run(argv).await,
            "debug" => debug::run(argv).await,
            "bench" => bench::run(argv).await,
            "version" | "--version" | "-version" => {
                print!("{}", version_text());
                Ok(0)
            }
            "help" | "-h" | "--help" | "-help" => {
                print!("{USAGE}");
                Ok(0)
            }
            other => Err(anyhow::anyhow!("unknown command `{other}`\n\n{USAGE}")),
        }
    });
    match result {
        // Like Java's System.exit, only the low byte survives: -1 exits with 255.
        Ok(code) => ExitCode::from(u8::try_from(code.rem_euclid(256)).unwrap_or(1)),
        Err(e) => {
            eprintln!("rhdfs {name}: {e:#}");
            ExitCode::from(1)
        }
    }
}

/// `rhdfs version`, laid out as `hadoop version` prints it.
fn version_text() -> String {
    format!(
        "rhdfs {}\nSource code revision {}\nCompiled on {}\nSpeaks Hadoop 3.x ClientProtocol, DatanodeProtocol, DataTransferProtocol and WebHDFS\n",
        env!("CARGO_PKG_VERSION"),
        rhdfs_metrics::build::REVISION,
        rhdfs_metrics::build::BUILD_DATE,
    )
}

/// Resolves when the process is asked to stop (Ctrl-C or SIGTERM).
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
