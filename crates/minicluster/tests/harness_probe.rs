//! Self-test of the test harness (FsShell runner, raw RPC client, local `-checksum` computation)
//! against the Python protocol probe `shared/reference/probe/mockhdfs.py`, independent of rhdfs.
//!
//! Ignored by default (it needs the probe script, which lives outside this repository):
//!   RHDFS_PROBE_SCRIPT=/work/shared/reference/probe/mockhdfs.py \
//!     cargo test -p rhdfs-minicluster --test integration harness_probe:: -- --ignored --nocapture

use crate::common;

use std::process::Stdio;
use std::time::Duration;

use anyhow::Context;
use common::checksum::{file_checksum, parse_checksum_line};
use common::java::JavaShell;
use common::rpc::RawRpc;
use tokio::io::AsyncWriteExt;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the Python probe (RHDFS_PROBE_SCRIPT); validates the harness, not rhdfs"]
async fn harness_works_against_the_python_probe() -> anyhow::Result<()> {
    let script = std::env::var("RHDFS_PROBE_SCRIPT")
        .unwrap_or_else(|_| "/work/shared/reference/probe/mockhdfs.py".to_owned());
    if !std::path::Path::new(&script).is_file() {
        eprintln!("\n******** SKIPPED: probe script {script} not found ********\n");
        return Ok(());
    }
    let work = tempfile::tempdir()?;
    // The probe hard-codes its DataNode IPC ports (9867 + i); move them to free ports so the
    // test does not collide with another probe on the machine.
    let ipc_base = (0..50)
        .map(|_| free_port())
        .find(|p| {
            *p < 65000 && (1..3).all(|i| std::net::TcpListener::bind(("127.0.0.1", p + i)).is_ok())
        })
        .context("no three consecutive free ports")?;
    let patched = std::fs::read_to_string(&script)?.replace("9867 + i", &format!("{ipc_base} + i"));
    let patched_path = work.path().join("mockhdfs.py");
    std::fs::write(&patched_path, patched)?;
    let probe_dir = std::path::Path::new(&script)
        .parent()
        .unwrap()
        .to_path_buf();
    let nn_port = free_port();
    let dn_ports: Vec<String> = (0..3).map(|_| free_port().to_string()).collect();
    let mut probe = tokio::process::Command::new("python3")
        .arg(&patched_path)
        .env("PYTHONPATH", &probe_dir)
        .env("NN_PORT", nn_port.to_string())
        .env("DN_PORTS", dn_ports.join(","))
        .env("DN_DIR", work.path().join("dn"))
        .env("MOCK_LOG", work.path().join("calls.log"))
        .env("VERBOSE", "0")
        .current_dir(work.path())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(work.path().join("probe.err"))?)
        .kill_on_drop(true)
        .spawn()
        .context("starting the probe")?;
    let uri = format!("hdfs://127.0.0.1:{nn_port}");
    common::poll_until("the probe to listen", Duration::from_secs(30), || async {
        tokio::net::TcpStream::connect(("127.0.0.1", nn_port))
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    })
    .await
    .with_context(|| std::fs::read_to_string(work.path().join("probe.err")).unwrap_or_default())?;

    let result = exercise(&uri, work.path()).await;
    let _ = probe.kill().await;
    result
}

async fn exercise(uri: &str, work: &std::path::Path) -> anyhow::Result<()> {
    let Some(mut sh) = JavaShell::new(uri, "harness_probe")? else {
        return Ok(());
    };

    sh.run(&["-mkdir", "-p", "/p/q"]).await?.ok();
    sh.run(&["-test", "-d", "/p/q"]).await?.ok();

    let data = common::random_bytes(3 * 1024 * 1024 + 1234, 7);
    let local = work.join("src.bin");
    std::fs::write(&local, &data)?;
    sh.define("dfs.blocksize", "1048576");
    sh.run(&["-put", local.to_str().unwrap(), "/p/q/f"])
        .await?
        .ok();

    let ls = sh.run(&["-ls", "/p/q"]).await?.ok();
    let line = ls
        .lines()
        .into_iter()
        .find(|l| l.ends_with(" /p/q/f"))
        .context("no -ls line for /p/q/f")?;
    let cols: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(cols[0], "-rw-r--r--", "{line}");
    assert_eq!(cols[4], data.len().to_string(), "{line}");

    let cat = sh.run(&["-cat", "/p/q/f"]).await?.ok();
    common::assert_same_bytes("-cat", &cat.stdout, &data);

    // The local checksum algorithm against what FsShell prints (multi-block, then one block).
    let out = sh.run(&["-checksum", "/p/q/f"]).await?.ok();
    let (path, algo, value) = parse_checksum_line(&out.lines()[0]).context("checksum line")?;
    let (want_algo, want_value) = file_checksum(&data, 1048576);
    assert_eq!(
        (path.as_str(), algo.as_str(), value.as_str()),
        ("/p/q/f", want_algo.as_str(), want_value.as_str())
    );

    let small = &data[..100_000];
    std::fs::write(work.join("small.bin"), small)?;
    sh.run(&[
        "-put",
        work.join("small.bin").to_str().unwrap(),
        "/p/q/small",
    ])
    .await?
    .ok();
    let out = sh.run(&["-checksum", "/p/q/small"]).await?.ok();
    let (_, algo, value) = parse_checksum_line(&out.lines()[0]).context("checksum line")?;
    assert_eq!((algo, value), file_checksum(small, 1048576));

    // Ten and three blocks: the final MD5 is over 160 (padded to 256) and 48 (to 64) bytes.
    for (nblocks, name) in [(10usize, "/p/q/ten"), (3, "/p/q/three")] {
        let bs = 131072usize;
        let d = &data[..(nblocks - 1) * bs + 1000];
        std::fs::write(work.join("part.bin"), d)?;
        let out = sh
            .run(&[
                "-D",
                "dfs.blocksize=131072",
                "-put",
                work.join("part.bin").to_str().unwrap(),
                name,
            ])
            .await?
            .ok();
        assert!(out.stdout.is_empty());
        let out = sh.run(&["-checksum", name]).await?.ok();
        let (_, algo, value) = parse_checksum_line(&out.lines()[0]).context("checksum line")?;
        assert_eq!((algo, value), file_checksum(d, bs), "{name}");
    }

    // -put from stdin.
    let mut put = sh.spawn_with_stdin(&["-put", "-", "/p/q/stdin"])?;
    let mut stdin = put.stdin.take().unwrap();
    for chunk in small.chunks(10_000) {
        stdin.write_all(chunk).await?;
    }
    drop(stdin);
    put.finish(common::java::DEFAULT_TIMEOUT).await?.ok();
    let cat = sh.run(&["-cat", "/p/q/stdin"]).await?.ok();
    common::assert_same_bytes("-cat of stdin put", &cat.stdout, small);

    // Missing path.
    let out = sh.run(&["-ls", "/p/nope"]).await?.code_is(1);
    assert!(
        out.errors().contains("No such file or directory"),
        "{}",
        out.errors()
    );
    sh.run(&["-test", "-e", "/p/nope"]).await?.code_is(1);

    // Raw RPC: getBlockLocations shows the 4 blocks.
    let mut rpc =
        RawRpc::connect(uri, common::rpc::CLIENT_PROTOCOL, &common::current_user()).await?;
    let lb = rpc.get_block_locations("/p/q/f").await?;
    assert_eq!(lb.file_length, Some(data.len() as u64));
    assert_eq!(lb.blocks.len(), 4);
    assert!(rpc.get_file_info_exists("/p/q/f").await?);
    assert!(!rpc.get_file_info_exists("/p/q/nope").await?);

    // hdfs-native reads what Java wrote.
    let client = common::native_client(uri)?;
    let got = common::native_read(&client, "/p/q/f").await?;
    common::assert_same_bytes("hdfs-native read", &got, &data);
    Ok(())
}
