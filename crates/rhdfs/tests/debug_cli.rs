//! `rhdfs debug` as a process against a MiniCluster, as `hdfs debug` is used: verifyMeta and
//! computeMeta on a replica's files on the DataNode's disk, recoverLease on a file left open.
//! Exit codes and messages are Hadoop's DebugAdmin's.

use std::process::Output;

use anyhow::Context;
use rhdfs_client::{CreateOptions, FileSystem};
use rhdfs_minicluster::MiniCluster;

async fn debug(conf_dir: &std::path::Path, args: &[&str]) -> anyhow::Result<(i32, String, String)> {
    let out: Output = tokio::process::Command::new(env!("CARGO_BIN_EXE_rhdfs"))
        .arg("debug")
        .args(args)
        .env("HADOOP_CONF_DIR", conf_dir)
        .env("RUST_LOG", "error")
        .output()
        .await?;
    Ok((
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debug_commands_check_replicas_and_recover_leases() -> anyhow::Result<()> {
    let cluster = MiniCluster::builder().datanodes(1).build().await?;
    let dir = tempfile::tempdir()?;
    cluster.write_client_conf(dir.path())?;
    let conf = dir.path();
    let fs = FileSystem::connect(&cluster.uri()).await?;
    let one = || CreateOptions {
        replication: Some(1),
        ..CreateOptions::default()
    };

    // Usage: no command (or an unknown one) exits 0, as Hadoop's; a command without
    // arguments prints its usage and exits 1.
    for args in [&[][..], &["nonsense"][..]] {
        let (code, out, _) = debug(conf, args).await?;
        assert_eq!(code, 0, "{out}");
        assert!(
            out.starts_with("Usage: rhdfs debug <command> [arguments]\n"),
            "{out}"
        );
    }
    let (code, out, _) = debug(conf, &["verifyMeta"]).await?;
    assert_eq!(code, 1);
    assert!(
        out.starts_with("verifyMeta -meta <metadata-file> [-block <block-file>]\n"),
        "{out}"
    );
    let (code, out, _) = debug(conf, &["help", "computeMeta"]).await?;
    assert_eq!(code, 0);
    assert!(
        out.starts_with("computeMeta -block <block-file> -out <output-metadata-file>\n"),
        "{out}"
    );

    // A closed file: its replica's block and meta file on the DataNode's disk.
    let data: Vec<u8> = (0..70_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let mut w = fs.create("/d/closed", one()).await?;
    w.write(&data).await?;
    w.close().await?;
    let id = fs.block_locations("/d/closed").await?[0].block_id;
    let dn = cluster.datanode(0).context("DataNode 0")?;
    let files = dn
        .faults()
        .replica_files(id)
        .context("the replica's files")?;
    let (block, meta) = (
        files.block_file.to_string_lossy().into_owned(),
        files.meta_file.to_string_lossy().into_owned(),
    );

    let (code, out, _) = debug(conf, &["verifyMeta", "-meta", &meta]).await?;
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        out,
        "Checksum type: DataChecksum(type=CRC32C, chunkSize=512)\n"
    );
    let (code, out, _) = debug(conf, &["verifyMeta", "-meta", &meta, "-block", &block]).await?;
    assert_eq!(code, 0, "{out}");
    assert!(
        out.ends_with(&format!(
            "Checksum verification succeeded on block file {block}\n"
        )),
        "{out}"
    );
    let (code, _, err) = debug(conf, &["verifyMeta", "-block", &block]).await?;
    assert_eq!(
        (code, err.as_str()),
        (1, "You must specify a meta file with -meta\n")
    );

    // computeMeta writes the metadata file the DataNode wrote, byte for byte.
    let out_meta = dir.path().join("out.meta");
    let out_meta = out_meta.to_string_lossy();
    let (code, _, err) = debug(conf, &["computeMeta", "-whatever"]).await?;
    assert_eq!(
        (code, err.as_str()),
        (2, "You must specify a block file with -block\n")
    );
    let (code, _, err) = debug(conf, &["computeMeta", "-block", "bla"]).await?;
    assert_eq!(
        (code, err.as_str()),
        (3, "Block file <bla> does not exist or is not a file\n")
    );
    let (code, _, err) = debug(conf, &["computeMeta", "-block", &block]).await?;
    assert_eq!(
        (code, err.as_str()),
        (4, "You must specify a output file with -out\n")
    );
    let (code, _, err) = debug(conf, &["computeMeta", "-block", &block, "-out", &block]).await?;
    assert_eq!((code, err.as_str()), (5, "output file already exists!\n"));
    let (code, out, _) = debug(conf, &["computeMeta", "-block", &block, "-out", &out_meta]).await?;
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        out,
        format!(
            "Checksum calculation succeeded on block file {block} saved metadata to meta file {out_meta}\n"
        )
    );
    assert_eq!(std::fs::read(&*out_meta)?, std::fs::read(&meta)?);

    // A damaged block file is told.
    let mut bad = std::fs::read(&block)?;
    bad[40_000] ^= 1;
    std::fs::write(&block, &bad)?;
    let (code, out, _) = debug(conf, &["verifyMeta", "-meta", &meta, "-block", &block]).await?;
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!(
            "Checksum error: {block} at {}",
            40_000 / 512 * 512
        )),
        "{out}"
    );

    // recoverLease: a file left open (its writer gone) is closed; a missing file is given up.
    let (code, _, err) = debug(conf, &["recoverLease", "-retries", "1"]).await?;
    assert_eq!(
        (code, err.as_str()),
        (1, "You must supply a -path argument to recoverLease.\n")
    );
    let w = fs.create("/d/open", one()).await?;
    std::mem::forget(w);
    assert!(!fs.is_file_closed("/d/open").await?);
    let (code, out, err) = debug(conf, &["recoverLease", "-path", "/d/open"]).await?;
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out, "recoverLease SUCCEEDED on /d/open\n");
    assert!(fs.is_file_closed("/d/open").await?);
    let uri = format!("{}/d/open", cluster.uri());
    // A leading '-' names the command too.
    let (code, out, _) = debug(conf, &["-recoverLease", "-path", &uri]).await?;
    assert_eq!(
        (code, out),
        (0, format!("recoverLease SUCCEEDED on {uri}\n"))
    );
    let (code, _, err) = debug(conf, &["recoverLease", "-path", "/nope", "-retries", "2"]).await?;
    assert_eq!(code, 1);
    assert!(
        err.ends_with("Giving up on recoverLease for /nope after 1 try\n"),
        "{err}"
    );
    let (code, _, err) = debug(conf, &["recoverLease", "-path", "file:///tmp/x"]).await?;
    assert_eq!(code, 1);
    assert_eq!(
        err,
        "Invalid filesystem for path file:///tmp/x: needed scheme hdfs, but got: file\n"
    );
    cluster.shutdown().await;
    Ok(())
}
