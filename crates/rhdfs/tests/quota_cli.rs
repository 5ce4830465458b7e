//! Issue 12, quotas from the command line: `rhdfs dfsadmin -setQuota/-clrQuota/
//! -setSpaceQuota/-clrSpaceQuota` (Hadoop DFSAdmin's messages and exit codes) and the
//! figures of `rhdfs dfs -count -q -h`, against a MiniCluster.

use std::process::Output;

use rhdfs_minicluster::MiniCluster;

async fn rhdfs_as(
    conf_dir: &std::path::Path,
    user: Option<&str>,
    args: &[&str],
) -> anyhow::Result<Output> {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_rhdfs"));
    cmd.args(args)
        .env("HADOOP_CONF_DIR", conf_dir)
        .env("RUST_LOG", "error");
    if let Some(u) = user {
        cmd.env("HADOOP_USER_NAME", u);
    }
    Ok(cmd.output().await?)
}

/// (exit code, stdout, stderr)
async fn run(dir: &std::path::Path, args: &[&str]) -> anyhow::Result<(i32, String, String)> {
    let out = rhdfs_as(dir, None, args).await?;
    Ok((
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

/// A `-count -q` line as Hadoop's FsShell prints it: the four quota columns, then
/// (dirs, files, size) and the path.
fn count_q(q: [&str; 4], dirs: u64, files: u64, size: &str, p: &str) -> String {
    let [q, rq, sq, rsq] = q;
    format!("{q:>12} {rq:>15} {sq:>15} {rsq:>15} {dirs:>12} {files:>12} {size:>18} {p}\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dfsadmin_quota_commands_and_count() -> anyhow::Result<()> {
    let cluster = MiniCluster::builder().datanodes(1).build().await?;
    let tmp = tempfile::tempdir()?;
    let dir = tmp.path();
    cluster.write_client_conf(dir)?;

    assert_eq!(run(dir, &["dfs", "-mkdir", "-p", "/q/a"]).await?.0, 0);
    assert_eq!(
        run(dir, &["dfsadmin", "-setQuota", "3", "/q"]).await?,
        (0, String::new(), String::new())
    );
    assert_eq!(
        run(dir, &["dfs", "-count", "-q", "-h", "/q"]).await?.1,
        count_q(["3", "1", "none", "inf"], 2, 0, "0", "/q")
    );
    assert_eq!(run(dir, &["dfs", "-mkdir", "/q/b"]).await?.0, 0);
    let (code, _, err) = run(dir, &["dfs", "-mkdir", "/q/c"]).await?;
    assert_ne!(code, 0);
    assert!(
        err.contains(
            "The NameSpace quota (directories and files) of directory /q is exceeded: quota=3 file count=4"
        ),
        "{err}"
    );

    // A space quota too small for one block: the write fails and leaves no file.
    assert_eq!(run(dir, &["dfsadmin", "-setQuota", "10", "/q"]).await?.0, 0);
    let (code, _, err) = run(dir, &["dfsadmin", "-setSpaceQuota", "1k", "/q", "/q/a"]).await?;
    assert_eq!((code, err.as_str()), (0, ""));
    let local = dir.join("data");
    std::fs::write(&local, vec![7u8; 2000])?;
    let (code, _, err) = run(dir, &["dfs", "-put", local.to_str().unwrap(), "/q/a/f"]).await?;
    assert_ne!(code, 0);
    assert!(
        err.contains("The DiskSpace quota of /q/a is exceeded: quota = 1024 B = 1 KB"),
        "{err}"
    );
    assert_eq!(
        run(dir, &["dfs", "-count", "-q", "-h", "/q/a"]).await?.1,
        count_q(["none", "inf", "1 K", "1 K"], 1, 0, "0", "/q/a")
    );
    assert_eq!(
        run(dir, &["dfs", "-count", "-q", "/q"]).await?.1,
        count_q(["10", "7", "1024", "1024"], 3, 0, "0", "/q")
    );

    // Errors: per directory, "<cmd>: <message>", exit 255; the other directories still done.
    let (code, _, err) = run(dir, &["dfsadmin", "-clrQuota", "/nope", "/q"]).await?;
    assert_eq!(
        (code, err.as_str()),
        (255, "clrQuota: Directory does not exist: /nope\n")
    );
    let (code, _, err) = run(dir, &["dfsadmin", "-clrSpaceQuota", "/q", "/q/a"]).await?;
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(
        run(dir, &["dfs", "-count", "-q", "/q"]).await?.1,
        count_q(["none", "inf", "none", "inf"], 3, 0, "0", "/q")
    );
    let (code, _, err) = run(dir, &["dfsadmin", "-clrQuota", "/"]).await?;
    assert_eq!(
        (code, err.as_str()),
        (255, "clrQuota: Cannot clear namespace quota on root.\n")
    );
    let (code, _, err) = run(dir, &["dfsadmin", "-setQuota", "0", "/q"]).await?;
    assert_eq!(
        (code, err.as_str()),
        (
            255,
            "setQuota: Invalid values for quota : 0 and 9223372036854775807\nUsage: rhdfs dfsadmin [-setQuota <quota> <dirname>...<dirname>]\n"
        )
    );
    let (code, _, err) = run(dir, &["dfsadmin", "-setSpaceQuota", "10"]).await?;
    assert_eq!(code, 255);
    assert!(
        err.starts_with("setSpaceQuota: Not enough arguments: expected 2 but got 1\n"),
        "{err}"
    );
    let out = rhdfs_as(dir, Some("alice"), &["dfsadmin", "-setQuota", "5", "/q"]).await?;
    assert_eq!(out.status.code(), Some(255));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "setQuota: Access denied for user alice. Superuser privilege is required\n"
    );
    // Quotas by storage type: every replica is on DISK, so a DISK quota limits writes like a
    // space quota (QuotaByStorageTypeExceededException) and shows in `-count -q -t`.
    assert_eq!(run(dir, &["dfs", "-mkdir", "/q/t"]).await?.0, 0);
    let (code, _, err) = run(
        dir,
        &[
            "dfsadmin",
            "-setSpaceQuota",
            "1k",
            "-storageType",
            "DISK",
            "/q/t",
        ],
    )
    .await?;
    assert_eq!((code, err.as_str()), (0, ""));
    let (code, _, err) = run(
        dir,
        &[
            "dfsadmin",
            "-setSpaceQuota",
            "5m",
            "-storageType",
            "ssd",
            "/q/t",
        ],
    )
    .await?;
    assert_eq!((code, err.as_str()), (0, ""));
    let (code, _, err) = run(dir, &["dfs", "-put", local.to_str().unwrap(), "/q/t/f"]).await?;
    assert_ne!(code, 0);
    assert!(
        err.contains(
            "Quota by storage type : DISK on path : /q/t is exceeded. quota = 1024 B = 1 KB"
        ),
        "{err}"
    );
    assert_eq!(
        run(dir, &["dfs", "-test", "-e", "/q/t/f"]).await?.0,
        1,
        "nothing left"
    );
    assert_eq!(
        run(dir, &["dfs", "-count", "-q", "-t", "DISK,SSD", "/q/t"])
            .await?
            .1,
        format!(
            "{:>14} {:>18} {:>14} {:>18} /q/t\n",
            "1024", "1024", "5242880", "5242880"
        )
    );
    let (code, _, err) = run(
        dir,
        &["dfsadmin", "-clrSpaceQuota", "-storageType", "DISK", "/q/t"],
    )
    .await?;
    assert_eq!((code, err.as_str()), (0, ""));
    let (code, _, err) = run(dir, &["dfs", "-put", local.to_str().unwrap(), "/q/t/f"]).await?;
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        run(
            dir,
            &["dfs", "-count", "-q", "-h", "-t", "DISK,SSD", "/q/t"]
        )
        .await?
        .1,
        format!(
            "{:>14} {:>18} {:>14} {:>18} /q/t\n",
            "none", "inf", "5 M", "5 M"
        )
    );
    let (code, _, err) = run(
        dir,
        &[
            "dfsadmin",
            "-setSpaceQuota",
            "1k",
            "-storageType",
            "RAM_DISK",
            "/q/t",
        ],
    )
    .await?;
    assert_eq!(
        (code, err.as_str()),
        (
            255,
            "setSpaceQuota: Quota by storage type RAM_DISK on path : /q/t is not supported.\n"
        )
    );
    // The root's namespace quota is Long.MAX_VALUE.
    let (_, out, _) = run(dir, &["dfs", "-count", "-q", "-h", "/"]).await?;
    assert!(
        out.starts_with("       8.0 E           8.0 E            none             inf "),
        "{out}"
    );
    Ok(())
}
