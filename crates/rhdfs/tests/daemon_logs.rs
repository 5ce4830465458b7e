//! Issue 15: daemon logs, `/logLevel`, `/logs/`, and the help texts of `dfsadmin` and `dfs`,
//! on real processes. A NameNode with `hadoop.log.dir` writes
//! `rhdfs-<user>-namenode-<host>.log` there (no colour codes, each line naming its daemon,
//! "leaving start-up safe mode" once) and `hdfs-audit.log`; `/logLevel` turns DEBUG on for a
//! target and its lines appear; `/logs/` lists and serves both files.

use std::time::Duration;

use anyhow::Context;

use crate::common::procs::{Cluster, ClusterOptions, wait_for};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namenode_log_file_levels_and_logs_page() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let logs = dir.path().join("logs");
    let c = Cluster::start_with(
        dir.path(),
        ClusterOptions {
            datanodes: 1,
            log: "info".into(),
            namenode_conf: vec![format!("hadoop.log.dir={}", logs.display())],
            ..ClusterOptions::default()
        },
    )?;
    let log_file = || -> Option<std::path::PathBuf> {
        std::fs::read_dir(&logs)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                    n.starts_with("rhdfs-") && n.contains("-namenode-") && n.ends_with(".log")
                })
            })
    };
    let read = || {
        log_file()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .unwrap_or_default()
    };
    wait_for(
        "the NameNode to leave start-up safe mode",
        Duration::from_secs(90),
        || async { Ok(read().contains("leaving start-up safe mode")) },
    )
    .await
    .with_context(|| c.log_tail("nn.log"))?;
    let fs = c.connect().await?;
    fs.mkdirs("/logged", Some(0o755)).await?;

    // Run-time level: DEBUG for the IPC server shows each new connection.
    let page = c
        .http_get("/logLevel?log=rhdfs_ipc::server&level=DEBUG")
        .await?;
    assert!(
        page.contains("<!-- OUTPUT -->Effective Level: <b>DEBUG</b>"),
        "{page}"
    );
    let page = c.http_get("/logLevel?log=rhdfs_ipc::server::x").await?;
    assert!(page.contains("Effective Level: <b>DEBUG</b>"), "{page}");
    let page = c.http_get("/logLevel?log=rhdfs_ipc&level=LOUD").await?;
    assert!(page.contains("Bad Level : LOUD"), "{page}");
    let fs2 = c.connect().await?;
    fs2.get_file_info("/logged").await?;
    wait_for(
        "a DEBUG line of the IPC server",
        Duration::from_secs(60),
        || async {
            Ok(read()
                .contains("DEBUG daemon{name=namenode}: rhdfs_ipc::server: IPC connection from"))
        },
    )
    .await?;

    let text = read();
    assert!(!text.contains('\u{1b}'), "colour codes in the log file");
    assert_eq!(
        text.matches("leaving start-up safe mode").count(),
        1,
        "{text}"
    );
    // Lines of the daemon's tasks name it (those of blocking threads, e.g. the image load, do not yet).
    let leaving = text
        .lines()
        .find(|l| l.contains("leaving start-up safe mode"))
        .unwrap_or_default();
    assert!(leaving.contains("INFO daemon{name=namenode}:"), "{leaving}");

    // The audit line of the mkdirs, then /logs/ lists and serves both files.
    let audit = logs.join("hdfs-audit.log");
    wait_for("the audit line", Duration::from_secs(60), || async {
        Ok(std::fs::read_to_string(&audit)
            .unwrap_or_default()
            .contains("\tcmd=mkdirs\tsrc=/logged\t"))
    })
    .await?;
    let listing = c.http_get("/logs/").await?;
    let name = log_file()
        .and_then(|p| p.file_name()?.to_str().map(str::to_string))
        .context("log file")?;
    assert!(listing.contains(&format!(">{name}</a>")), "{listing}");
    assert!(listing.contains(">hdfs-audit.log</a>"), "{listing}");
    let served = c.http_get("/logs/hdfs-audit.log").await?;
    let on_disk = std::fs::read_to_string(&audit)?;
    assert!(
        on_disk.starts_with(&served) && served.contains("cmd=mkdirs"),
        "{served}"
    );
    let missing = rhdfs_namenode::http::client::get(
        &c.http_addr(),
        "/logs/..%2Fnn.log",
        Duration::from_secs(30),
    )
    .await?;
    assert_eq!(missing.0, 404);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn help_texts_of_dfsadmin_and_dfs() -> anyhow::Result<()> {
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_rhdfs"))
            .args(args)
            .output()
    };
    let out = run(&["dfsadmin", "-help", "safemode"])?;
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("-safemode <enter | leave | get | wait | forceExit>:\n\t"),
        "{text}"
    );
    let out = run(&["dfsadmin", "-help"])?;
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("-report [-live] [-dead] [-decommissioning]:\n\t"),
        "{text}"
    );
    assert!(text.contains("-releaseOrphans:\n\t"), "{text}");

    // As the Java FsShell 3.5 prints them (`hadoop fs -usage mkdir mv`).
    let out = run(&["dfs", "-usage", "mkdir", "mv"])?;
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Usage: hadoop fs [generic options] -mkdir [-p] <path> ...\n\
         Usage: hadoop fs [generic options] -mv <src> ... <dst>\n"
    );
    let out = run(&["dfs", "-help", "ls"])?;
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("-ls [-C] [-d] [-h] [-R] [-t] [-S] [-r] [-u] [<path> ...] :\n  "),
        "{text}"
    );
    assert_eq!(
        text.matches(" :\n").count(),
        1,
        "one command's help only: {text}"
    );
    let out = run(&["dfs", "-help", "nope"])?;
    assert_eq!(out.status.code(), Some(255));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("-help: `nope': Unknown command\n"));
    Ok(())
}

/// `rhdfs journalnode` as a process: it sets up its own daemon log (like the other daemons),
/// finds its place in `dfs.namenode.shared.edits.dir`, serves and opens its journal's log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn journalnode_process_serves_its_journal() -> anyhow::Result<()> {
    use tokio::io::AsyncBufReadExt;
    let dir = tempfile::tempdir()?;
    let port = rhdfs_testkit::ports::reserve()?;
    let jn = port.port();
    let logs = dir.path().join("logs");
    let edits = dir.path().join("journal");
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_rhdfs"))
        .arg("journalnode")
        .args([
            "-D",
            "dfs.nameservices=ns",
            "-D",
            "dfs.ha.namenodes.ns=nn1,nn2",
        ])
        .args(["-D", "dfs.namenode.rpc-address.ns.nn1=127.0.0.1:1"])
        .args(["-D", "dfs.namenode.rpc-address.ns.nn2=127.0.0.1:2"])
        .arg("-D")
        .arg(format!(
            "dfs.namenode.shared.edits.dir=qjournal://127.0.0.1:{jn}/ns"
        ))
        .arg("-D")
        .arg(format!("dfs.journalnode.rpc-address=127.0.0.1:{jn}"))
        .arg("-D")
        .arg(format!("dfs.journalnode.edits.dir={}", edits.display()))
        .arg("-D")
        .arg(format!("hadoop.log.dir={}", logs.display()))
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let stdout = child.stdout.take().context("stdout")?;
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
        .await
        .context("the JournalNode did not start within 60 s")??
        .unwrap_or_default();
    assert_eq!(
        line,
        format!("journalnode 3 listening on 127.0.0.1:{jn}"),
        "member 3: after the two NameNodes"
    );
    assert!(edits.join("ns").join("log").is_dir(), "the journal's log");
    let log_files: Vec<String> = std::fs::read_dir(&logs)?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    assert!(
        log_files.iter().any(|f| f.contains("-journalnode-")),
        "{log_files:?}"
    );
    child.kill().await?;
    Ok(())
}
