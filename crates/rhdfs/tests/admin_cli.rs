//! `rhdfs fsck` and `rhdfs dfsadmin` as processes against a MiniCluster: exit codes and
//! the first/last lines Hadoop's tools print.

use std::process::Output;

use anyhow::Context;
use rhdfs_minicluster::MiniCluster;

async fn rhdfs(conf_dir: &std::path::Path, args: &[&str]) -> anyhow::Result<Output> {
    Ok(tokio::process::Command::new(env!("CARGO_BIN_EXE_rhdfs"))
        .args(args)
        .env("HADOOP_CONF_DIR", conf_dir)
        .env("RUST_LOG", "error")
        .output()
        .await?)
}

/// `rhdfs` run as `user` (HADOOP_USER_NAME).
async fn rhdfs_as(conf_dir: &std::path::Path, user: &str, args: &[&str]) -> anyhow::Result<Output> {
    Ok(tokio::process::Command::new(env!("CARGO_BIN_EXE_rhdfs"))
        .args(args)
        .env("HADOOP_CONF_DIR", conf_dir)
        .env("HADOOP_USER_NAME", user)
        .env("RUST_LOG", "error")
        .output()
        .await?)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fsck_and_dfsadmin_commands() -> anyhow::Result<()> {
    let cluster = MiniCluster::builder().datanodes(1).build().await?;
    let dir = tempfile::tempdir()?;
    cluster.write_client_conf(dir.path())?;
    let http = cluster.namenode().http_addr();
    let http_conf = format!("dfs.namenode.http-address={http}");

    let out = rhdfs(dir.path(), &["fsck", "/", "-files", "-D", &http_conf]).await?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.starts_with("FSCK started by "), "{stdout}");
    assert!(stdout.contains("\n/ <dir>\n"), "{stdout}");
    assert!(
        stdout.ends_with("The filesystem under path '/' is HEALTHY\n"),
        "{stdout}"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Connecting to namenode via http://"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let out = rhdfs(dir.path(), &["fsck", "/nope", "-D", &http_conf]).await?;
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).ends_with("Path '/nope' does not exist\n"));

    let out = rhdfs(dir.path(), &["fsck", "/", "-bogus", "-D", &http_conf]).await?;
    assert_eq!(out.status.code(), Some(255));

    // -blockId: the ids after the flag, up to the next option.
    let out = rhdfs(
        dir.path(),
        &["fsck", "/", "-blockId", "blk_123", "-D", &http_conf],
    )
    .await?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.starts_with("FSCK started by "), "{stdout}");
    assert!(
        stdout.ends_with("\n\nBlock blk_123 does not exist\n"),
        "{stdout}"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("&blockId=blk_123+&path=%2F"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = rhdfs(
        dir.path(),
        &["fsck", "/", "-storagepolicies", "-D", &http_conf],
    )
    .await?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("\nBlocks satisfying the specified storage policy:\n"),
        "{stdout}"
    );

    // A user who may not list a directory: FAILED, exit 255; the superuser-only views
    // are refused.
    let out = rhdfs(dir.path(), &["dfs", "-mkdir", "/secret"]).await?;
    assert_eq!(out.status.code(), Some(0));
    let out = rhdfs(dir.path(), &["dfs", "-chmod", "700", "/secret"]).await?;
    assert_eq!(out.status.code(), Some(0));
    let out = rhdfs_as(
        dir.path(),
        "mallory",
        &["fsck", "/secret", "-D", &http_conf],
    )
    .await?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(255), "{stdout}");
    assert!(
        stdout
            .contains("\nPermission denied: user=mallory, access=READ_EXECUTE, inode=\"/secret\":"),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("\n\n\nFsck on path '/secret' FAILED\n"),
        "{stdout}"
    );
    let out = rhdfs_as(
        dir.path(),
        "mallory",
        &["fsck", "/", "-list-corruptfileblocks", "-D", &http_conf],
    )
    .await?;
    assert_eq!(out.status.code(), Some(255));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Failed to open path '/': Permission denied\n"
    );
    let out = rhdfs(
        dir.path(),
        &["fsck", "/", "-list-corruptfileblocks", "-D", &http_conf],
    )
    .await?;
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "The filesystem under path '/' has 0 CORRUPT blocks\n"
    );

    let out = rhdfs(dir.path(), &["dfsadmin", "-report"]).await?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.starts_with("Configured Capacity: "), "{stdout}");
    assert!(
        stdout.contains("\nLive datanodes (1):\n\nName: "),
        "{stdout}"
    );

    let meta = dir.path().join("meta.txt");
    let meta_s = meta.to_string_lossy().to_string();
    let out = rhdfs(dir.path(), &["dfsadmin", "-metasave", &meta_s]).await?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert_eq!(
        stdout,
        format!(
            "Created metasave file {meta_s} in the log directory of namenode {}\n",
            cluster.uri()
        )
    );
    assert!(std::fs::read_to_string(&meta)?.contains("Metasave: Number of datanodes: 1"));

    let dn_ipc = cluster
        .datanode(0)
        .context("datanode 0")?
        .ipc_addr()
        .to_string();
    let out = rhdfs(
        dir.path(),
        &["dfsadmin", "-triggerBlockReport", "-incremental", &dn_ipc],
    )
    .await?;
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("Triggering an incremental block report on {dn_ipc}.\n")
    );

    let out = rhdfs(dir.path(), &["dfsadmin", "-printTopology"]).await?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let dn_xfer = cluster.datanode(0).context("datanode 0")?.xfer_addr();
    assert!(
        stdout.starts_with(&format!("Rack: /default-rack\n   {dn_xfer} (")),
        "{stdout}"
    );
    assert!(stdout.ends_with(")\n\n"), "{stdout}");
    assert_eq!(stdout.lines().count(), 3, "{stdout}");
    let out = rhdfs(dir.path(), &["dfsadmin", "-printTopology", "extra"]).await?;
    assert_eq!(out.status.code(), Some(255));

    // -listOpenFiles: a file held open by a writer, with its client name and host.
    let fs = rhdfs_client::FileSystem::connect(&cluster.uri()).await?;
    let mut w = fs
        .create("/open/f", rhdfs_client::CreateOptions::default())
        .await?;
    w.write(b"abc").await?;
    w.hflush().await?;
    let out = rhdfs(dir.path(), &["dfsadmin", "-listOpenFiles"]).await?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let mut lines = stdout.lines();
    assert_eq!(
        lines.next(),
        Some("Client Host         \tClient Name         \tOpen File Path")
    );
    let entry = lines.next().unwrap_or_default();
    let fields: Vec<&str> = entry.split('\t').map(str::trim).collect();
    assert_eq!(fields.len(), 3, "{stdout}");
    assert_eq!(
        (fields[1], fields[2]),
        (fs.client_name(), "/open/f"),
        "{stdout}"
    );
    assert_eq!(lines.next(), None, "{stdout}");
    let out = rhdfs(
        dir.path(),
        &["dfsadmin", "-listOpenFiles", "-path", "/elsewhere"],
    )
    .await?;
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);
    let out = rhdfs(
        dir.path(),
        &["dfsadmin", "-listOpenFiles", "-blockingDecommission"],
    )
    .await?;
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);
    let out = rhdfs(dir.path(), &["dfsadmin", "-listOpenFiles", "-path"]).await?;
    assert_eq!(out.status.code(), Some(255));
    w.close().await?;
    let out = rhdfs(dir.path(), &["dfsadmin", "-listOpenFiles"]).await?;
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);

    // -getDatanodeInfo and -shutdownDatanode on the DataNode's IPC port.
    let out = rhdfs(dir.path(), &["dfsadmin", "-getDatanodeInfo", &dn_ipc]).await?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.starts_with("Uptime: "), "{stdout}");
    assert!(
        stdout.contains(", Software version: 3.5.0, Config version: "),
        "{stdout}"
    );
    let out = rhdfs(dir.path(), &["dfsadmin", "-evictWriters", &dn_ipc]).await?;
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("Requested writer eviction to datanode {dn_ipc}\n")
    );
    let out = rhdfs(dir.path(), &["dfsadmin", "-evictWriters"]).await?;
    assert_eq!(out.status.code(), Some(255));
    let out = rhdfs(
        dir.path(),
        &["dfsadmin", "-shutdownDatanode", &dn_ipc, "later"],
    )
    .await?;
    assert_eq!(out.status.code(), Some(255));
    let out = rhdfs(dir.path(), &["dfsadmin", "-shutdownDatanode", &dn_ipc]).await?;
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("Submitted a shutdown request to datanode {dn_ipc}\n")
    );
    let dn = cluster.datanode(0).context("datanode 0")?;
    let upgrade =
        tokio::time::timeout(std::time::Duration::from_secs(10), dn.shutdown_requested()).await?;
    assert!(!upgrade);
    // A second request while one is in progress is refused.
    let out = rhdfs(dir.path(), &["dfsadmin", "-shutdownDatanode", &dn_ipc]).await?;
    assert_eq!(out.status.code(), Some(255));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Shutdown already in progress"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // -saveNamespace needs safe mode; -beforeShutdown then finds the fresh image recent.
    let out = rhdfs(dir.path(), &["dfsadmin", "-saveNamespace"]).await?;
    assert_eq!(out.status.code(), Some(255));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Safe mode should be turned ON"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = rhdfs(dir.path(), &["dfsadmin", "-safemode", "enter"]).await?;
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Safe mode is ON\n");
    let out = rhdfs(dir.path(), &["dfsadmin", "-saveNamespace"]).await?;
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Save namespace successful\n"
    );
    let out = rhdfs(
        dir.path(),
        &["dfsadmin", "-saveNamespace", "-beforeShutdown"],
    )
    .await?;
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Do checkpoint if necessary before stopping namenode. The time window is 10800 seconds, and the transaction gap is 3000000\n\
         No extra checkpoint has been made\n"
    );
    // rollEdits is refused in safe mode, then rolls once it is off.
    let out = rhdfs(dir.path(), &["dfsadmin", "-rollEdits"]).await?;
    assert_eq!(out.status.code(), Some(255));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Log not rolled. Name node is in safe mode."),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = rhdfs(dir.path(), &["dfsadmin", "-safemode", "leave"]).await?;
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Safe mode is OFF\n");
    let out = rhdfs(dir.path(), &["dfsadmin", "-rollEdits"]).await?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let txid: u64 = stdout
        .strip_prefix("Successfully rolled edit logs.\nNew segment starts at txid ")
        .and_then(|t| t.trim_end().parse().ok())
        .with_context(|| format!("unexpected output: {stdout}"))?;
    assert!(txid > 1, "{stdout}");

    cluster.shutdown().await;
    Ok(())
}

/// `rhdfs version` / `--version`: the version, the source revision (a git commit id here)
/// and the build date, as `hadoop version` lays them out.
#[tokio::test]
async fn version_names_the_revision_and_build_date() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    for arg in ["version", "--version"] {
        let out = rhdfs(dir.path(), &[arg]).await?;
        anyhow::ensure!(out.status.success(), "{arg}: {out:?}");
        let text = String::from_utf8(out.stdout)?;
        let lines: Vec<&str> = text.lines().collect();
        anyhow::ensure!(
            lines.first() == Some(&concat!("rhdfs ", env!("CARGO_PKG_VERSION"))),
            "{text}"
        );
        let rev = lines
            .get(1)
            .and_then(|l| l.strip_prefix("Source code revision "))
            .with_context(|| format!("no revision line in\n{text}"))?;
        anyhow::ensure!(
            rev == "unknown" || (rev.len() == 40 && rev.bytes().all(|b| b.is_ascii_hexdigit())),
            "{text}"
        );
        anyhow::ensure!(
            lines.get(2).is_some_and(|l| l.starts_with("Compiled on ")),
            "{text}"
        );
    }
    Ok(())
}
