//! The Apache Hadoop 3.5 Java client's `webhdfs://` file system (WebHdfsFileSystem) through
//! `FsShell`: -put (CREATE redirected to a DataNode, then RENAME of the ._COPYING_ file),
//! -ls, -cat (OPEN), -checksum (GETFILECHECKSUM, its JSON decoded by the Java client),
//! -appendToFile (APPEND), -setrep, -chmod, -mv, -count (GETCONTENTSUMMARY), -count -q -u
//! (GETQUOTAUSAGE), -df (GETSTATUS) and -rm -r
//! (GETSERVERDEFAULTS for the trash setting, DELETE). The bytes are checked through
//! the RPC path as well.
//!
//! Skipped (with a loud SKIPPED line) when the jars are missing, unless RHDFS_REQUIRE_JAVA=1.

use crate::common;

use common::checksum::{file_checksum, parse_checksum_line};
use common::java::JavaShell;
use rhdfs_minicluster::MiniCluster;

const MIB: usize = 1024 * 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn java_webhdfs_shell_commands() -> anyhow::Result<()> {
    let c = MiniCluster::builder()
        .datanodes(3)
        .conf("dfs.blocksize", MIB.to_string())
        .build()
        .await?;
    let http = common::nn_http(&c)?;
    let uri = format!("webhdfs://{http}");
    let Some(sh) = JavaShell::new(&uri, "java_webhdfs_shell_commands")? else {
        c.shutdown().await;
        return Ok(());
    };
    let native = common::native_client(&c.uri())?;
    native
        .mkdirs("/jw", 0o755, true)
        .await
        .map_err(|e| anyhow::anyhow!("mkdirs: {e}"))?;

    let local = tempfile::tempdir()?;
    let data = common::random_bytes(2 * MIB + 777, 21);
    let src = local.path().join("f.bin");
    std::fs::write(&src, &data)?;
    let src = src.to_string_lossy().into_owned();
    // The client's block size travels as CREATE's `blocksize`: three blocks.
    sh.run(&["-D", "dfs.blocksize=1048576", "-put", &src, "/jw/f"])
        .await?
        .ok();
    common::assert_same_bytes(
        "RPC read of the -put",
        &common::native_read(&native, "/jw/f").await?,
        &data,
    );

    let out = sh.run(&["-ls", "/jw"]).await?.ok();
    let lines = out.lines();
    assert_eq!(
        lines.first().map(String::as_str),
        Some("Found 1 items"),
        "{lines:?}"
    );
    let cols: Vec<&str> = lines
        .get(1)
        .map(|l| l.split_whitespace().collect())
        .unwrap_or_default();
    assert_eq!(cols.first().copied(), Some("-rw-r--r--"), "{lines:?}");
    assert_eq!(cols.get(1).copied(), Some("3"), "{lines:?}");
    assert_eq!(
        cols.get(4).copied(),
        Some(data.len().to_string().as_str()),
        "{lines:?}"
    );
    assert_eq!(cols.last().copied(), Some("/jw/f"), "{lines:?}");

    let out = sh.run(&["-cat", "/jw/f"]).await?.ok();
    common::assert_same_bytes("-cat over WebHDFS", &out.stdout, &data);

    let out = sh.run(&["-checksum", "/jw/f"]).await?.ok();
    let line = out.lines().first().cloned().unwrap_or_default();
    let (path, algorithm, hex) =
        parse_checksum_line(&line).ok_or_else(|| anyhow::anyhow!("bad -checksum line {line:?}"))?;
    let (want_algorithm, want_hex) = file_checksum(&data, MIB);
    assert!(path.ends_with("/jw/f"), "{line}");
    assert_eq!((algorithm, hex), (want_algorithm, want_hex), "{line}");

    // APPEND, SETREPLICATION, SETPERMISSION, RENAME and GETCONTENTSUMMARY as FsShell uses them.
    let tail = common::random_bytes(5000, 22);
    let tail_src = local.path().join("tail.bin");
    std::fs::write(&tail_src, &tail)?;
    let tail_src = tail_src.to_string_lossy().into_owned();
    sh.run(&["-appendToFile", &tail_src, "/jw/f"]).await?.ok();
    sh.run(&["-setrep", "2", "/jw/f"]).await?.ok();
    sh.run(&["-chmod", "640", "/jw/f"]).await?.ok();
    sh.run(&["-mv", "/jw/f", "/jw/g"]).await?.ok();
    let mut all = data.clone();
    all.extend_from_slice(&tail);
    let st = native
        .get_file_info("/jw/g")
        .await
        .map_err(|e| anyhow::anyhow!("/jw/g: {e}"))?;
    assert_eq!(
        (st.length, st.replication, st.permission),
        (all.len(), Some(2), 0o640),
        "{st:?}"
    );
    common::assert_same_bytes(
        "after -appendToFile",
        &common::native_read(&native, "/jw/g").await?,
        &all,
    );
    let out = sh.run(&["-count", "/jw"]).await?.ok();
    let cols = out.rows().first().cloned().unwrap_or_default();
    assert_eq!(
        cols,
        ["1", "1", &all.len().to_string(), "/jw"].map(String::from),
        "{:?}",
        out.lines()
    );

    // -count -q -u asks GETQUOTAUSAGE, -df GETSTATUS.
    let out = sh.run(&["-count", "-q", "-u", "/jw"]).await?.ok();
    let cols = out.rows().first().cloned().unwrap_or_default();
    assert_eq!(
        cols,
        ["none", "inf", "none", "inf", "/jw"].map(String::from),
        "{:?}",
        out.lines()
    );
    let out = sh.run(&["-df", "/"]).await?.ok();
    let lines = out.lines();
    assert!(
        lines.first().is_some_and(|l| l.starts_with("Filesystem")),
        "{lines:?}"
    );
    let capacity = c.namenode().block_manager().fs_stats().capacity;
    let cols: Vec<&str> = lines
        .get(1)
        .map(|l| l.split_whitespace().collect())
        .unwrap_or_default();
    assert!(
        cols.first().is_some_and(|f| f.starts_with("webhdfs://")),
        "{lines:?}"
    );
    assert_eq!(
        cols.get(1).copied(),
        Some(capacity.to_string().as_str()),
        "{lines:?}"
    );

    sh.run(&["-rm", "-r", "/jw"]).await?.ok();
    assert!(
        native.get_file_info("/jw").await.is_err(),
        "/jw is still there"
    );
    c.shutdown().await;
    Ok(())
}
