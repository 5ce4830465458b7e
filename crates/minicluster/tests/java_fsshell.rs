//! Issue 2, "What must work" item 1: the Apache Hadoop 3.5 Java client (`FsShell`, from the jars
//! installed by `scripts/install-hadoop-client.sh`) against a three-DataNode MiniCluster.
//! Every step checks the command's output, not only its exit code.
//!
//! Skipped (with a loud SKIPPED line) when the jars are missing, unless RHDFS_REQUIRE_JAVA=1.

use crate::common;

use std::collections::HashSet;

use anyhow::Context;
use common::checksum::{file_checksum, parse_checksum_line};
use common::java::{JavaShell, ShellOutput};
use common::rpc::{CLIENT_PROTOCOL, RawRpc};
use rhdfs_minicluster::MiniCluster;

const MIB: usize = 1024 * 1024;
const BLOCK: usize = 4 * MIB;

/// The single `-stat` line.
fn stat_line(out: &ShellOutput) -> String {
    out.lines().first().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn java_fsshell_round_trip() -> anyhow::Result<()> {
    let cluster = MiniCluster::builder().datanodes(3).build().await?;
    let uri = cluster.uri();
    let Some(sh) = JavaShell::new(&uri, "java_fsshell_round_trip")? else {
        return Ok(());
    };
    let local = tempfile::tempdir()?;
    let native = common::native_client(&uri)?;

    // ---- -mkdir -p ------------------------------------------------------------------------
    sh.run(&["-mkdir", "-p", "/java/dir/sub"]).await?.ok();
    let st = native.get_file_info("/java/dir/sub").await?;
    assert!(st.isdir, "-mkdir -p made {st:?}");
    let out = sh.run(&["-stat", "%F", "/java/dir/sub"]).await?.ok();
    assert_eq!(stat_line(&out), "directory");

    // ---- -put of 40 MiB with 4 MiB blocks ------------------------------------------------
    let data = common::random_bytes(40 * MIB, 1);
    let src = local.path().join("big.bin");
    std::fs::write(&src, &data)?;
    let out = sh
        .run(&[
            "-D",
            "dfs.blocksize=4194304",
            "-put",
            src.to_str().unwrap(),
            "/java/dir/big",
        ])
        .await?
        .ok();
    assert!(out.stdout.is_empty(), "-put printed {:?}", out.stdout_str());
    let out = sh
        .run(&["-stat", "%b %o %r %F", "/java/dir/big"])
        .await?
        .ok();
    assert_eq!(
        stat_line(&out),
        format!("{} {BLOCK} 3 regular file", data.len())
    );
    assert!(
        native
            .get_file_info("/java/dir/big._COPYING_")
            .await
            .is_err(),
        "the temporary ._COPYING_ file is still there"
    );

    // 10 blocks, each with 3 replicas on 3 distinct DataNodes (polled: block reports are async).
    let lb = common::poll_until(
        "10 blocks x 3 replicas for /java/dir/big",
        std::time::Duration::from_secs(60),
        || {
            let uri = uri.clone();
            async move {
                let mut rpc = RawRpc::connect(&uri, CLIENT_PROTOCOL, &common::current_user())
                    .await
                    .map_err(|e| e.to_string())?;
                let lb = rpc
                    .get_block_locations("/java/dir/big")
                    .await
                    .map_err(|e| e.to_string())?;
                let counts: Vec<usize> = lb
                    .blocks
                    .iter()
                    .map(|b| {
                        b.locs
                            .iter()
                            .filter_map(|l| l.id.as_ref()?.datanode_uuid.clone())
                            .collect::<HashSet<_>>()
                            .len()
                    })
                    .collect();
                if lb.blocks.len() == 10 && counts.iter().all(|&c| c == 3) {
                    Ok(lb)
                } else {
                    Err(format!(
                        "{} blocks, distinct locations per block {counts:?}",
                        lb.blocks.len()
                    ))
                }
            }
        },
    )
    .await?;
    assert_eq!(lb.file_length, Some(data.len() as u64));
    for (i, b) in lb.blocks.iter().enumerate() {
        let eb = b.b.as_ref().context("located block without block")?;
        assert_eq!(eb.num_bytes, Some(BLOCK as u64), "block {i} length");
        assert_eq!(b.offset, Some((i * BLOCK) as u64), "block {i} offset");
    }

    // ---- -ls -----------------------------------------------------------------------------
    let out = sh.run(&["-ls", "/java/dir"]).await?.ok();
    let lines = out.lines();
    assert_eq!(lines[0], "Found 2 items", "{lines:?}");
    let big = lines
        .iter()
        .find(|l| l.ends_with(" /java/dir/big"))
        .context("no -ls line for big")?;
    let cols: Vec<&str> = big.split_whitespace().collect();
    assert_eq!(cols.len(), 8, "{big}");
    assert_eq!(
        (cols[0], cols[1], cols[4]),
        ("-rw-r--r--", "3", "41943040"),
        "{big}"
    );
    let sub = lines
        .iter()
        .find(|l| l.ends_with(" /java/dir/sub"))
        .context("no -ls line for sub")?;
    assert!(sub.starts_with("drwxr-xr-x"), "{sub}");
    let sub_cols: Vec<&str> = sub.split_whitespace().collect();
    assert_eq!(
        sub_cols[1], "-",
        "a directory shows '-' for replication: {sub}"
    );
    assert_eq!(cols[2], sub_cols[2], "same owner for file and dir");

    // ---- -cat and -get byte-identical ----------------------------------------------------
    let out = sh.run(&["-cat", "/java/dir/big"]).await?.ok();
    common::assert_same_bytes("-cat /java/dir/big", &out.stdout, &data);
    let got = local.path().join("got.bin");
    sh.run(&["-get", "/java/dir/big", got.to_str().unwrap()])
        .await?
        .ok();
    common::assert_same_bytes("-get /java/dir/big", &std::fs::read(&got)?, &data);

    // ---- -checksum equals the locally computed MD5-of-MD5-of-CRC32C -----------------------
    let (want_algo, want_value) = file_checksum(&data, BLOCK);
    assert_eq!(want_algo, "MD5-of-8192MD5-of-512CRC32C");
    let out = sh.run(&["-checksum", "/java/dir/big"]).await?.ok();
    let (path, algo, value) = parse_checksum_line(&stat_line(&out)).context("-checksum output")?;
    assert_eq!(
        (path.as_str(), algo.as_str(), value.as_str()),
        ("/java/dir/big", want_algo.as_str(), want_value.as_str())
    );

    // ---- -mv -----------------------------------------------------------------------------
    sh.run(&["-mv", "/java/dir/big", "/java/dir/sub/moved"])
        .await?
        .ok();
    sh.run(&["-test", "-e", "/java/dir/big"]).await?.code_is(1);
    let out = sh
        .run(&["-stat", "%b %n", "/java/dir/sub/moved"])
        .await?
        .ok();
    assert_eq!(stat_line(&out), format!("{} moved", data.len()));

    // ---- -cp (same block size, so the checksum must be identical) ------------------------
    sh.run(&[
        "-D",
        "dfs.blocksize=4194304",
        "-cp",
        "/java/dir/sub/moved",
        "/java/dir/copy",
    ])
    .await?
    .ok();
    let out = sh.run(&["-checksum", "/java/dir/copy"]).await?.ok();
    let (_, algo, value) = parse_checksum_line(&stat_line(&out)).context("-checksum output")?;
    assert_eq!(
        (algo.as_str(), value.as_str()),
        (want_algo.as_str(), want_value.as_str())
    );
    let copied = common::native_read(&native, "/java/dir/copy").await?;
    common::assert_same_bytes("-cp result", &copied, &data);

    // ---- -appendToFile (to a file whose last block is full, then to a partial chunk) -------
    let tail1 = common::random_bytes(1000, 2);
    let tail2 = common::random_bytes(70_000, 3);
    std::fs::write(local.path().join("tail1"), &tail1)?;
    std::fs::write(local.path().join("tail2"), &tail2)?;
    sh.run(&[
        "-appendToFile",
        local.path().join("tail1").to_str().unwrap(),
        "/java/dir/copy",
    ])
    .await?
    .ok();
    sh.run(&[
        "-appendToFile",
        local.path().join("tail2").to_str().unwrap(),
        "/java/dir/copy",
    ])
    .await?
    .ok();
    let mut want = data.clone();
    want.extend_from_slice(&tail1);
    want.extend_from_slice(&tail2);
    let out = sh.run(&["-stat", "%b", "/java/dir/copy"]).await?.ok();
    assert_eq!(stat_line(&out), want.len().to_string());
    let out = sh.run(&["-cat", "/java/dir/copy"]).await?.ok();
    common::assert_same_bytes("-cat after -appendToFile", &out.stdout, &want);
    // -appendToFile onto a missing file creates it.
    sh.run(&[
        "-appendToFile",
        local.path().join("tail1").to_str().unwrap(),
        "/java/dir/fresh",
    ])
    .await?
    .ok();
    let out = sh.run(&["-cat", "/java/dir/fresh"]).await?.ok();
    common::assert_same_bytes("-appendToFile to a new file", &out.stdout, &tail1);

    // ---- -setrep 2 -----------------------------------------------------------------------
    let out = sh.run(&["-setrep", "2", "/java/dir/copy"]).await?.ok();
    assert!(
        out.stdout_str()
            .contains("Replication 2 set: /java/dir/copy"),
        "{}",
        out.stdout_str()
    );
    let out = sh.run(&["-stat", "%r", "/java/dir/copy"]).await?.ok();
    assert_eq!(stat_line(&out), "2");

    // ---- -du -----------------------------------------------------------------------------
    // /java/dir now holds: sub/moved (40 MiB, repl 3), copy (want.len(), repl 2), fresh (1000, repl 3).
    let out = sh.run(&["-du", "/java/dir"]).await?.ok();
    let du = out.rows();
    let find = |p: &str| {
        du.iter()
            .find(|r| r.last().map(String::as_str) == Some(p))
            .cloned()
    };
    let row = find("/java/dir/sub").with_context(|| format!("no -du row for sub: {du:?}"))?;
    assert_eq!(
        row,
        vec![
            data.len().to_string(),
            (data.len() * 3).to_string(),
            "/java/dir/sub".into()
        ]
    );
    let row = find("/java/dir/copy").with_context(|| format!("no -du row for copy: {du:?}"))?;
    assert_eq!(
        row,
        vec![
            want.len().to_string(),
            (want.len() * 2).to_string(),
            "/java/dir/copy".into()
        ]
    );
    let row = find("/java/dir/fresh").with_context(|| format!("no -du row for fresh: {du:?}"))?;
    assert_eq!(
        row,
        vec!["1000".to_string(), "3000".into(), "/java/dir/fresh".into()]
    );
    assert_eq!(du.len(), 3, "{du:?}");
    let out = sh.run(&["-du", "-s", "/java/dir"]).await?.ok();
    let total = data.len() + want.len() + tail1.len();
    let consumed = data.len() * 3 + want.len() * 2 + tail1.len() * 3;
    assert_eq!(
        out.rows(),
        vec![vec![
            total.to_string(),
            consumed.to_string(),
            "/java/dir".into()
        ]]
    );

    // ---- -count: DIR_COUNT FILE_COUNT CONTENT_SIZE PATHNAME --------------------------------
    let out = sh.run(&["-count", "/java/dir"]).await?.ok();
    assert_eq!(
        out.rows(),
        vec![vec![
            "2".to_string(),
            "3".into(),
            total.to_string(),
            "/java/dir".into()
        ]]
    );
    let out = sh.run(&["-count", "-q", "/java/dir"]).await?.ok();
    let q = out.rows();
    assert_eq!(q.len(), 1, "{q:?}");
    assert_eq!(
        q[0][..4],
        ["none", "inf", "none", "inf"],
        "no quotas set: {q:?}"
    );
    assert_eq!(
        q[0][4..],
        [
            "2".to_string(),
            "3".into(),
            total.to_string(),
            "/java/dir".into()
        ]
    );

    // ---- -stat -----------------------------------------------------------------------------
    let out = sh
        .run(&["-stat", "%n|%b|%r|%o|%F|%a", "/java/dir/copy"])
        .await?
        .ok();
    assert_eq!(
        stat_line(&out),
        format!("copy|{}|2|{BLOCK}|regular file|644", want.len())
    );
    let st = native.get_file_info("/java/dir/copy").await?;
    let out = sh.run(&["-stat", "%u %g %Y", "/java/dir/copy"]).await?.ok();
    assert_eq!(
        stat_line(&out),
        format!("{} {} {}", st.owner, st.group, st.modification_time)
    );

    // ---- -touchz ---------------------------------------------------------------------------
    sh.run(&["-touchz", "/java/dir/empty"]).await?.ok();
    let out = sh.run(&["-stat", "%b %F", "/java/dir/empty"]).await?.ok();
    assert_eq!(stat_line(&out), "0 regular file");
    let out = sh.run(&["-checksum", "/java/dir/empty"]).await?.ok();
    let (_, algo, value) = parse_checksum_line(&stat_line(&out)).context("-checksum output")?;
    assert_eq!((algo, value), file_checksum(&[], BLOCK));

    // ---- -test -e --------------------------------------------------------------------------
    sh.run(&["-test", "-e", "/java/dir/empty"])
        .await?
        .code_is(0);
    sh.run(&["-test", "-e", "/java/dir/nothing-here"])
        .await?
        .code_is(1);
    sh.run(&["-test", "-d", "/java/dir/sub"]).await?.code_is(0);
    sh.run(&["-test", "-f", "/java/dir/sub"]).await?.code_is(1);

    // ---- -rm -r ----------------------------------------------------------------------------
    let out = sh.run(&["-rm", "-r", "/java/dir"]).await?.ok();
    assert!(
        out.stdout_str().contains("Deleted /java/dir"),
        "{}",
        out.stdout_str()
    );
    sh.run(&["-test", "-e", "/java/dir"]).await?.code_is(1);
    assert!(matches!(
        native.get_file_info("/java/dir").await,
        Err(hdfs_native::HdfsError::FileNotFound(_))
    ));
    let out = sh.run(&["-ls", "/java"]).await?.ok();
    assert!(
        out.lines().is_empty(),
        "/java should be empty: {:?}",
        out.lines()
    );

    // Still serving after all that.
    sh.run(&["-mkdir", "/java/after"]).await?.ok();
    sh.run(&["-test", "-d", "/java/after"]).await?.code_is(0);

    cluster.shutdown().await;
    Ok(())
}
