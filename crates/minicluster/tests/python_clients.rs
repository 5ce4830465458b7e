//! Issue 12's ACLs through the Python clients users reach for: HdfsCLI (the `hdfs` package,
//! over WebHDFS: acl_status, set_acl with and without clear, remove_acl_entries,
//! remove_default_acl, remove_acl, its errors) and hdfs-native's Python bindings (over RPC:
//! get_acl_status, modify_acl_entries, set_acl, remove_acl_entries, remove_default_acl,
//! remove_acl), each reading what the other wrote. The checks are in `python/acl_clients.py`.
//! Neither package has extended-attribute calls, so xattrs are not exercised here.
//!
//! Skipped (with a loud SKIPPED line) when python3 or the packages are missing, unless
//! RHDFS_REQUIRE_PYTHON=1 (`scripts/test.sh` installs them with
//! `scripts/install-python-clients.sh` and sets it).

use crate::common;

use std::time::Duration;

use anyhow::Context;
use rhdfs_minicluster::MiniCluster;

/// Why the Python clients cannot run here, or None when they can.
async fn missing() -> Option<String> {
    let out = tokio::process::Command::new("python3")
        .args(["-c", "import hdfs, hdfs_native"])
        .output()
        .await;
    match out {
        Err(e) => Some(format!("python3 cannot run: {e}")),
        Ok(o) if !o.status.success() => Some(format!(
            "the packages are missing: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Ok(_) => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hdfscli_and_hdfs_native_python_acls() -> anyhow::Result<()> {
    if let Some(why) = missing().await {
        let required = std::env::var("RHDFS_REQUIRE_PYTHON").is_ok_and(|v| v == "1" || v == "true");
        anyhow::ensure!(
            !required,
            "the Python clients are required (RHDFS_REQUIRE_PYTHON=1) but {why}"
        );
        eprintln!(
            "\n**************** SKIPPED (Python clients): {why}; run scripts/install-python-clients.sh ****************\n"
        );
        return Ok(());
    }
    let c = MiniCluster::builder().datanodes(1).build().await?;
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/acl_clients.py");
    let run = tokio::process::Command::new("python3")
        .arg(script)
        .arg(common::nn_http(&c)?)
        .arg(c.uri())
        .arg(common::current_user())
        .env_remove("HADOOP_USER_NAME")
        .env_remove("HADOOP_CONF_DIR")
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(300), run)
        .await
        .context("the Python clients did not finish in 300 s")??;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "acl_clients.py failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    let checks: u32 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("checks: "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0);
    assert!(
        checks >= 23,
        "too few checks ran ({checks}):\n{stdout}\n{stderr}"
    );
    c.shutdown().await;
    Ok(())
}
