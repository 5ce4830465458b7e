//! Issue 3 item 2: files written by `rhdfs dfs -put` are byte-identical when read by
//! hdfs-native and by the Java FsShell, and the other way round. The Java half is skipped when
//! Java or the Hadoop client jars (scripts/install-hadoop-client.sh) are missing.

mod common;
#[allow(dead_code)]
#[path = "../../rhdfs/src/dfs/mod.rs"]
mod dfs;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

async fn rhdfs_dfs(uri: &str, args: &[&str]) -> anyhow::Result<(i32, Vec<u8>)> {
    let mut argv = vec![
        "-fs".to_string(),
        uri.to_string(),
        "-D".into(),
        format!("dfs.blocksize={BLOCK}"),
    ];
    argv.extend(args.iter().map(|s| s.to_string()));
    let mut out = Vec::new();
    let mut err = Vec::new();
    let code = dfs::run_with(argv, &mut out, &mut err).await?;
    anyhow::ensure!(
        code == 0,
        "rhdfs dfs {args:?}: {}",
        String::from_utf8_lossy(&err)
    );
    Ok((code, out))
}

fn jars() -> Option<PathBuf> {
    let dir = std::env::var_os("RHDFS_HADOOP_CLIENT_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.cache/hadoop-client")
        });
    let ok = dir.join("hadoop-client-api-3.5.0.jar").is_file()
        && Command::new("java")
            .arg("-version")
            .output()
            .is_ok_and(|o| o.status.success());
    ok.then_some(dir)
}

fn java_fsshell(jars: &Path, conf: &Path, args: &[&str]) -> anyhow::Result<Vec<u8>> {
    let cp = format!("{}:{}", conf.display(), jars.join("*").display());
    let out = Command::new("java")
        .args([
            "-Xmx256m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-Djava.net.preferIPv4Stack=true",
            "-cp",
        ])
        .arg(cp)
        .arg("org.apache.hadoop.fs.FsShell")
        .args(["-D", &format!("dfs.blocksize={BLOCK}")])
        .args(args)
        .env_remove("HADOOP_CONF_DIR")
        .env_remove("HADOOP_USER_NAME")
        .output()?;
    anyhow::ensure!(
        out.status.success(),
        "FsShell {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(out.stdout)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn put_files_read_by_hdfs_native_and_java() -> anyhow::Result<()> {
    let c = cluster(3).await?;
    let uri = c.uri();
    let tmp = tempfile::tempdir()?;
    let d = data(2 * BLOCK as usize + 77_777, 21);
    let local = tmp.path().join("f.bin");
    std::fs::write(&local, &d)?;
    rhdfs_dfs(&uri, &["-put", &local.to_string_lossy(), "/ours.bin"]).await?;

    // hdfs-native reads ours; we read hdfs-native's.
    let native = hdfs_native::ClientBuilder::new().with_url(&uri).build()?;
    let r = native.read("/ours.bin").await?;
    assert_eq!(r.read_range(0, r.file_length()).await?.to_vec(), d);
    let mut w = native
        .create("/native.bin", hdfs_native::WriteOptions::default())
        .await?;
    for piece in d.chunks(99_999) {
        w.write_bytes(bytes::Bytes::copy_from_slice(piece)).await?;
    }
    w.close().await?;
    let (_, got) = rhdfs_dfs(&uri, &["-cat", "/native.bin"]).await?;
    assert_eq!(got, d);

    // Java reads ours and agrees on the checksum; we read Java's.
    if let Some(jars) = jars() {
        let conf = tmp.path().join("conf");
        std::fs::create_dir_all(&conf)?;
        std::fs::write(
            conf.join("core-site.xml"),
            format!(
                "<?xml version=\"1.0\"?><configuration><property><name>fs.defaultFS</name><value>{uri}</value></property></configuration>"
            ),
        )?;
        let cat = java_fsshell(&jars, &conf, &["-cat", "/ours.bin"])?;
        assert_eq!(cat, d);
        let java_sum = java_fsshell(&jars, &conf, &["-checksum", "/ours.bin"])?;
        let (_, our_sum) = rhdfs_dfs(&uri, &["-checksum", "/ours.bin"]).await?;
        assert_eq!(
            String::from_utf8_lossy(&our_sum),
            String::from_utf8_lossy(&java_sum)
        );
        java_fsshell(
            &jars,
            &conf,
            &["-put", &local.to_string_lossy(), "/java.bin"],
        )?;
        let (_, got) = rhdfs_dfs(&uri, &["-cat", "/java.bin"]).await?;
        assert_eq!(got, d);
        let java_ls = java_fsshell(&jars, &conf, &["-ls", "/ours.bin"])?;
        let (_, our_ls) = rhdfs_dfs(&uri, &["-ls", "/ours.bin"]).await?;
        assert_eq!(
            String::from_utf8_lossy(&our_ls),
            String::from_utf8_lossy(&java_ls)
        );
        // Appends from both sides.
        let extra = tmp.path().join("extra");
        std::fs::write(&extra, b"0123456789")?;
        java_fsshell(
            &jars,
            &conf,
            &["-appendToFile", &extra.to_string_lossy(), "/ours.bin"],
        )?;
        rhdfs_dfs(
            &uri,
            &["-appendToFile", &extra.to_string_lossy(), "/java.bin"],
        )
        .await?;
        let mut want = d.clone();
        want.extend_from_slice(b"0123456789");
        assert_eq!(rhdfs_dfs(&uri, &["-cat", "/ours.bin"]).await?.1, want);
        assert_eq!(java_fsshell(&jars, &conf, &["-cat", "/java.bin"])?, want);
    } else {
        eprintln!("skipping the Java half: no java or no Hadoop client jars");
    }
    c.shutdown().await;
    Ok(())
}
