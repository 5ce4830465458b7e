//! `rhdfs dfs` (the `dfs` module of the rhdfs library, run in-process) against a minicluster,
//! with FsShell's output, error lines and exit codes (as recorded from the Java 3.5.0 FsShell;
//! dates masked).

use rhdfs::dfs;

use rhdfs_minicluster::MiniCluster;
use rhdfs_testkit::cluster::*;
use rhdfs_testkit::seqfile::*;
use std::time::Duration;

struct Out {
    code: i32,
    out: String,
    err: String,
}

async fn sh(uri: &str, args: &[&str]) -> Out {
    let mut argv = vec![
        "-fs".to_string(),
        uri.to_string(),
        "-D".into(),
        format!("dfs.blocksize={BLOCK}"),
    ];
    argv.extend(args.iter().map(|s| s.to_string()));
    let mut out = Vec::new();
    let mut err = Vec::new();
    let code = match dfs::run_with(argv, &mut out, &mut err).await {
        Ok(c) => c,
        Err(e) => {
            err.extend_from_slice(format!("run failed: {e:#}").as_bytes());
            -1
        }
    };
    Out {
        code,
        out: mask_dates(&String::from_utf8_lossy(&out)),
        err: String::from_utf8_lossy(&err).into_owned(),
    }
}

/// `yyyy-MM-dd HH:mm` → `DATE`.
fn mask_dates(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    let is_d = |j: usize| b.get(j).is_some_and(|c| c.is_ascii_digit());
    while i < b.len() {
        if i + 16 <= b.len()
            && (0..4).all(|k| is_d(i + k))
            && b[i + 4] == b'-'
            && b[i + 7] == b'-'
            && b[i + 10] == b' '
            && b[i + 13] == b':'
        {
            out.push_str("DATE");
            i += 16;
            continue;
        }
        out.push(b[i] as char);
        i += 1;
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fsshell_commands() -> anyhow::Result<()> {
    let c = cluster(3).await?;
    let uri = c.uri();
    let u = &uri;
    let me = rhdfs_conf::user::current_user();
    let tmp = tempfile::tempdir()?;
    let small = tmp.path().join("small.txt");
    std::fs::write(&small, b"hello world\n")?;
    let r3k = tmp.path().join("r3k");
    let r3k_data = data(3000, 9);
    std::fs::write(&r3k, &r3k_data)?;
    let small_s = small.to_string_lossy().to_string();
    let r3k_s = r3k.to_string_lossy().to_string();

    assert_eq!(sh(u, &["-mkdir", "-p", "/a/b"]).await.code, 0);
    assert_eq!(sh(u, &["-put", &small_s, "/a/f.txt"]).await.code, 0);
    assert_eq!(sh(u, &["-put", &r3k_s, "/a/b/r3k"]).await.code, 0);
    let grp = {
        let o = sh(u, &["-stat", "%g", "/a/f.txt"]).await;
        o.out.trim().to_string()
    };
    let ow = format!("{me} {grp}");

    let o = sh(u, &["-ls", "/a"]).await;
    assert_eq!(o.code, 0, "{}", o.err);
    assert_eq!(
        o.out,
        format!(
            "Found 2 items\ndrwxr-xr-x   - {ow}          0 DATE /a/b\n-rw-r--r--   3 {ow}         12 DATE /a/f.txt\n"
        )
    );
    let o = sh(u, &["-ls", "-R", "/a"]).await;
    assert_eq!(
        o.out,
        format!(
            "drwxr-xr-x   - {ow}          0 DATE /a/b\n-rw-r--r--   3 {ow}       3000 DATE /a/b/r3k\n-rw-r--r--   3 {ow}         12 DATE /a/f.txt\n"
        )
    );
    let o = sh(u, &["-ls", "-h", "/a/b"]).await;
    assert_eq!(
        o.out,
        format!("Found 1 items\n-rw-r--r--   3 {ow}      2.9 K DATE /a/b/r3k\n")
    );
    let o = sh(u, &["-ls", "-d", "/a"]).await;
    assert_eq!(o.out, format!("drwxr-xr-x   - {ow}          0 DATE /a\n"));
    let o = sh(u, &["-ls", "/nonexist"]).await;
    assert_eq!(
        (o.code, o.err.as_str()),
        (1, "ls: `/nonexist': No such file or directory\n")
    );

    let o = sh(u, &["-du", "/a"]).await;
    assert_eq!(o.out, "3000  9000  /a/b\n12    36    /a/f.txt\n");
    let o = sh(u, &["-du", "-s", "-h", "/a"]).await;
    assert_eq!(o.out, "2.9 K  8.8 K  /a\n");
    let o = sh(u, &["-count", "/a"]).await;
    assert_eq!(o.out, "           2            2               3012 /a\n");
    let o = sh(u, &["-count", "-q", "-h", "/a"]).await;
    assert_eq!(
        o.out,
        "        none             inf            none             inf            2            2              2.9 K /a\n"
    );
    let o = sh(u, &["-df"]).await;
    assert_eq!(o.code, 0);
    let lines: Vec<&str> = o.out.lines().collect();
    assert!(
        lines[0].starts_with("Filesystem") && lines[0].ends_with("Use%"),
        "{}",
        o.out
    );
    assert!(lines[1].starts_with(u.as_str()), "{}", o.out);

    let o = sh(u, &["-stat", "%n %b %F %o %r %a %A", "/a/f.txt"]).await;
    assert_eq!(o.out, "f.txt 12 regular file 1048576 3 644 rw-r--r--\n");
    let o = sh(u, &["-stat", "%F", "/a"]).await;
    assert_eq!(o.out, "directory\n");
    let o = sh(u, &["-checksum", "/a/f.txt"]).await;
    assert_eq!(
        o.out,
        "/a/f.txt\tMD5-of-0MD5-of-512CRC32C\t000002000000000000000000cb719ad85249ddab138233798a828f23\n"
    );

    for (args, code, err) in [
        (
            vec!["-mkdir", "/a"],
            1,
            "mkdir: `/a': File exists\n".to_string(),
        ),
        (
            vec!["-mkdir", "/x/y"],
            1,
            format!("mkdir: `{u}/x': No such file or directory\n"),
        ),
        (vec!["-mkdir", "-p", "/a"], 0, String::new()),
        (
            vec!["-cat", "/nonexist"],
            1,
            "cat: `/nonexist': No such file or directory\n".into(),
        ),
        (vec!["-cat", "/a"], 1, "cat: `/a': Is a directory\n".into()),
        (vec!["-rm", "/a"], 1, "rm: `/a': Is a directory\n".into()),
        (
            vec!["-rm", "/nonexist"],
            1,
            "rm: `/nonexist': No such file or directory\n".into(),
        ),
        (vec!["-rm", "-f", "/nonexist"], 0, String::new()),
        (vec!["-test", "-e", "/nonexist"], 1, String::new()),
        (vec!["-test", "-d", "/a"], 0, String::new()),
        (vec!["-test", "-f", "/a"], 1, String::new()),
        (vec!["-test", "-z", "/a/f.txt"], 1, String::new()),
        (vec!["-touchz", "/a/empty"], 0, String::new()),
        (
            vec!["-touchz", "/a/f.txt"],
            1,
            "touchz: `/a/f.txt': Not a zero-length file\n".into(),
        ),
        (vec!["-test", "-z", "/a/empty"], 0, String::new()),
        (vec!["-mv", "/a/f.txt", "/a/g.txt"], 0, String::new()),
        (
            vec!["-mv", "/nonexist", "/a/z"],
            1,
            "mv: `/nonexist': No such file or directory\n".into(),
        ),
        (vec!["-mv", "/a/g.txt", "/a/b"], 0, String::new()),
        (vec!["-cp", "/a/b/g.txt", "/a/c.txt"], 0, String::new()),
        (
            vec!["-cp", "/a/b/g.txt", "/a/c.txt"],
            1,
            "cp: `/a/c.txt': File exists\n".into(),
        ),
        (vec!["-chmod", "600", "/a/c.txt"], 0, String::new()),
        (vec!["-chmod", "-R", "755", "/a/b"], 0, String::new()),
        (vec!["-chown", ":grp2", "/a/c.txt"], 0, String::new()),
        (
            vec!["-put", &small_s, "/a/c.txt"],
            1,
            "put: `/a/c.txt': File exists\n".into(),
        ),
        (
            vec!["-put", "nonexist.txt", "/a/q"],
            1,
            "put: `nonexist.txt': No such file or directory\n".into(),
        ),
        (vec!["-put", "-f", &small_s, "/a/c.txt"], 0, String::new()),
        (
            vec!["-du", "-s", "/nonexist"],
            1,
            "du: `/nonexist': No such file or directory\n".into(),
        ),
        (
            vec!["-count", "/nonexist"],
            1,
            "count: `/nonexist': No such file or directory\n".into(),
        ),
        (
            vec!["-stat", "/nonexist"],
            1,
            "stat: `/nonexist': No such file or directory\n".into(),
        ),
        (
            vec!["-chmod", "755", "/nonexist"],
            1,
            "chmod: `/nonexist': No such file or directory\n".into(),
        ),
        (
            vec!["-setrep", "1", "/nonexist"],
            1,
            "setrep: `/nonexist': No such file or directory\n".into(),
        ),
        (
            vec!["-checksum", "/nonexist"],
            1,
            "checksum: `/nonexist': No such file or directory\n".into(),
        ),
        (
            vec!["-ls", "/a/nomatch*"],
            1,
            "ls: `/a/nomatch*': No such file or directory\n".into(),
        ),
    ] {
        let o = sh(u, &args).await;
        assert_eq!((o.code, o.err.clone()), (code, err), "{args:?}: {}", o.out);
    }
    let o = sh(u, &["-setrep", "2", "/a/c.txt"]).await;
    assert_eq!(o.out, "Replication 2 set: /a/c.txt\n");
    let o = sh(u, &["-setrep", "2", "/a"]).await;
    assert_eq!(
        o.out,
        "Replication 2 set: /a/b/g.txt\nReplication 2 set: /a/b/r3k\nReplication 2 set: /a/c.txt\nReplication 2 set: /a/empty\n"
    );
    let o = sh(u, &["-ls", "/a/b"]).await;
    assert!(o.out.contains("-rwxr-xr-x   2 "), "{}", o.out);
    let o = sh(u, &["-cat", "/a/c.txt"]).await;
    assert_eq!(o.out, "hello world\n");
    let o = sh(u, &["-tail", "/a/c.txt"]).await;
    assert_eq!(o.out, "hello world\n");
    let o = sh(u, &["-text", "/a/c.txt"]).await;
    assert_eq!(o.out, "hello world\n");
    let got = tmp.path().join("got.txt");
    let got_s = got.to_string_lossy().to_string();
    assert_eq!(sh(u, &["-get", "/a/c.txt", &got_s]).await.code, 0);
    assert_eq!(std::fs::read(&got)?, b"hello world\n");
    let o = sh(u, &["-get", "/a/c.txt", &got_s]).await;
    assert_eq!(
        (o.code, o.err),
        (1, format!("get: `{got_s}': File exists\n"))
    );
    let o = sh(u, &["-get", "/nonexist", &format!("{got_s}2")]).await;
    assert_eq!(
        (o.code, o.err.as_str()),
        (1, "get: `/nonexist': No such file or directory\n")
    );
    assert_eq!(
        sh(u, &["-appendToFile", &small_s, "/a/c.txt"]).await.code,
        0
    );
    let o = sh(u, &["-cat", "/a/c.txt"]).await;
    assert_eq!(o.out, "hello world\nhello world\n");
    let merged = tmp.path().join("merged");
    assert_eq!(
        sh(u, &["-getmerge", "/a/b", &merged.to_string_lossy()])
            .await
            .code,
        0
    );
    let mut want = b"hello world\n".to_vec();
    want.extend_from_slice(&r3k_data);
    assert_eq!(std::fs::read(&merged)?, want);
    let o = sh(u, &["-ls", "/a/*.txt"]).await;
    assert_eq!(o.out.lines().count(), 1, "{}", o.out);
    assert!(o.out.trim_end().ends_with(" /a/c.txt"));
    let o = sh(u, &["-ls", "/a/{b,c.txt}"]).await;
    assert!(o.out.starts_with("Found 2 items\n"), "{}", o.out);
    assert_eq!(o.out.lines().count(), 4, "{}", o.out);
    let o = sh(u, &["-rm", "-r", "/a/b"]).await;
    assert_eq!(o.out, "Deleted /a/b\n");
    let o = sh(u, &["-rm", "-skipTrash", "/a/c.txt"]).await;
    assert_eq!(o.out, "Deleted /a/c.txt\n");
    let o = sh(u, &["-ls", "-R", "/a"]).await;
    assert_eq!(
        o.out,
        format!("-rw-r--r--   2 {ow}          0 DATE /a/empty\n")
    );
    // usage errors
    let o = sh(u, &["-bogus"]).await;
    assert_eq!(o.code, 255);
    assert!(o.err.starts_with("-bogus: Unknown command\n"));
    let o = sh(u, &["-ls", "-Z", "/"]).await;
    assert_eq!(o.code, 255);
    assert!(o.err.starts_with("-ls: Illegal option -Z\n"), "{}", o.err);
    let o = sh(u, &["-mkdir"]).await;
    assert_eq!(o.code, 255);
    assert!(
        o.err
            .starts_with("-mkdir: Not enough arguments: expected 1 but got 0\n")
    );
    // trash
    assert_eq!(sh(u, &["-touchz", "/t1"]).await.code, 0);
    let o = sh(u, &["-D", "fs.trash.interval=10", "-rm", "/t1"]).await;
    assert_eq!(o.code, 0, "{}", o.err);
    let o = sh(u, &["-ls", &format!("/user/{me}/.Trash/Current/t1")]).await;
    assert_eq!(o.code, 0, "{}", o.err);
    assert_eq!(
        sh(u, &["-D", "fs.trash.interval=10", "-expunge"])
            .await
            .code,
        0
    );
    let o = sh(u, &["-test", "-e", &format!("/user/{me}/.Trash/Current")]).await;
    assert_eq!(o.code, 1);
    c.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn put_get_large_file_is_byte_identical() -> anyhow::Result<()> {
    let c = cluster(3).await?;
    let u = c.uri();
    let tmp = tempfile::tempdir()?;
    let src = tmp.path().join("big.bin");
    let d = data(2 * BLOCK as usize + 4321, 11);
    std::fs::write(&src, &d)?;
    let o = sh(&u, &["-put", &src.to_string_lossy(), "/big.bin"]).await;
    assert_eq!(o.code, 0, "{}", o.err);
    assert_eq!(o.err, "", "no progress bar when stderr is not a terminal");
    let dst = tmp.path().join("back.bin");
    let o = sh(&u, &["-get", "/big.bin", &dst.to_string_lossy()]).await;
    assert_eq!(o.code, 0, "{}", o.err);
    assert_eq!(std::fs::read(&dst)?, d);
    let fs = fs(&c, &[]).await?;
    assert_eq!(read_file(&fs, "/big.bin").await?, d);
    c.shutdown().await;
    Ok(())
}

/// `-cat` and `-get` read through short-circuit local reads when the keys are given: the
/// DataNode refuses every TCP connection, so the bytes can only come from the block file.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cat_and_get_read_short_circuit() -> anyhow::Result<()> {
    let tmp = tempfile::tempdir()?;
    let sock = tmp.path().join("dn._PORT.sock").display().to_string();
    let c = MiniCluster::builder()
        .datanodes(1)
        .conf("dfs.namenode.fs-limits.min-block-size", "0")
        .conf("dfs.blocksize", BLOCK.to_string())
        .conf("dfs.client.read.shortcircuit", "true")
        .conf("dfs.domain.socket.path", &sock)
        .wait_ready(Duration::from_secs(60))
        .build()
        .await?;
    let u = c.uri();
    let fs = fs(&c, &[("dfs.replication", "1")]).await?;
    let d: Vec<u8> = data(BLOCK as usize + 777, 12)
        .iter()
        .map(|b| b'a' + b % 26)
        .collect();
    write_file(&fs, "/sc.bin", &d).await?;
    let local = tmp.path().to_string_lossy().into_owned();
    let bench = |mode: &[&str]| -> Vec<String> {
        ["dfsio"]
            .iter()
            .chain(mode)
            .chain(&["--files", "2", "--size", "1m", "--replication", "1"])
            .chain(&["--local-dir", &local, "-fs", &u])
            .map(|s| s.to_string())
            .collect()
    };
    assert_eq!(dfs::bench::bench(bench(&["-write"])).await?, 0);
    if let Some(dn) = c.datanode(0) {
        dn.faults().set_reject_transfers(true);
    }
    let sc_key = "dfs.client.read.shortcircuit=true".to_string();
    let path_key = format!("dfs.domain.socket.path={sock}");
    let keys = ["-D", &sc_key, "-D", &path_key];
    // The benchmark's short-circuit read, with its pass over the same block files read
    // plainly: no byte can come over TCP.
    let read = bench(&[&["-read", "--repeat", "2"][..], &keys[..]].concat());
    assert_eq!(dfs::bench::bench(read).await?, 0);
    let dst = tmp.path().join("back.bin");
    let dst_s = dst.to_string_lossy().into_owned();
    let get = [&keys[..], &["-get", "/sc.bin", &dst_s]].concat();
    let o = sh(&u, &get).await;
    assert_eq!(o.code, 0, "{}", o.err);
    assert_eq!(std::fs::read(&dst)?, d);
    let o = sh(&u, &[&keys[..], &["-cat", "/sc.bin"]].concat()).await;
    assert_eq!(o.code, 0, "{}", o.err);
    assert!(o.out.as_bytes() == &d[..], "-cat printed the file");
    // Without the keys the read needs TCP, which the DataNode refuses.
    let o = sh(
        &u,
        &["-D", "dfs.client.retry.window.base=10", "-cat", "/sc.bin"],
    )
    .await;
    assert_ne!(o.code, 0);
    c.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn bench_dfsio_runs() -> anyhow::Result<()> {
    let c = cluster(3).await?;
    let tmp = tempfile::tempdir()?;
    let local = tmp.path().to_string_lossy().into_owned();
    // Two write rounds: the second deletes the first's files and waits for their replicas'
    // deletion before it is timed. A warm read first reads the files once, untimed.
    for mode in [
        &["-write", "--repeat", "2"][..],
        &["-read"],
        &["-read", "--warm"],
    ] {
        let args: Vec<String> = ["dfsio"]
            .iter()
            .chain(mode)
            .chain(&[
                "--files",
                "2",
                "--size",
                "2m",
                "--replication",
                "2",
                "--local-dir",
                &local,
                "-fs",
                &c.uri(),
            ])
            .map(|s| s.to_string())
            .collect();
        assert_eq!(dfs::bench::bench(args).await?, 0);
    }
    let fs = fs(&c, &[]).await?;
    let st = fs.status("/benchmarks/TestDFSIO/io_data/test_io_1").await?;
    assert_eq!((st.length, st.replication), (2 << 20, 2));
    c.shutdown().await;
    Ok(())
}

/// A writer the test can read while `-tail -f` is still running.
#[derive(Clone, Default)]
struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .map_err(|_| std::io::Error::other("poisoned"))?
            .extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Shared {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().expect("not poisoned")).into_owned()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn tail_follows_appends() -> anyhow::Result<()> {
    let c = cluster(3).await?;
    let u = c.uri();
    let tmp = tempfile::tempdir()?;
    // Last 1 KB of a 3000-byte file.
    let first: Vec<u8> = (0..3000u32).map(|i| b'a' + (i % 26) as u8).collect();
    let local = tmp.path().join("first");
    std::fs::write(&local, &first)?;
    let o = sh(&u, &["-put", &local.to_string_lossy(), "/log"]).await;
    assert_eq!(o.code, 0, "{}", o.err);
    let o = sh(&u, &["-tail", "/log"]).await;
    assert_eq!(o.out.as_bytes(), &first[3000 - 1024..]);
    let o = sh(&u, &["-tail", "/log", "/log"]).await;
    assert_eq!(o.code, 255);
    assert!(o.err.starts_with("-tail: "), "{}", o.err);

    // -f: a writer appends twice while tail polls (every 5 s, as Tail.java); stopped after 13 s.
    let small = tmp.path().join("small");
    std::fs::write(&small, b"0123456789\n")?;
    let o = sh(&u, &["-put", &small.to_string_lossy(), "/grow"]).await;
    assert_eq!(o.code, 0, "{}", o.err);
    let out = Shared::default();
    let seen = out.clone();
    let uri = u.clone();
    let dir = tmp.path().to_path_buf();
    let writer = async move {
        for (i, line) in ["appended one\n", "appended two\n"].iter().enumerate() {
            tokio::time::sleep(std::time::Duration::from_secs(2 + 5 * i as u64)).await;
            let p = dir.join(format!("add{i}"));
            std::fs::write(&p, line)?;
            let o = sh(&uri, &["-appendToFile", &p.to_string_lossy(), "/grow"]).await;
            anyhow::ensure!(o.code == 0, "append: {}", o.err);
        }
        anyhow::Ok(())
    };
    let argv: Vec<String> = ["-fs", &u, "-tail", "-f", "/grow"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut w = out;
    let mut err = Vec::new();
    let tail = tokio::time::timeout(
        std::time::Duration::from_secs(13),
        dfs::run_with(argv, &mut w, &mut err),
    );
    let (wrote, r) = tokio::join!(writer, tail);
    wrote?;
    assert!(
        r.is_err(),
        "tail -f returned: {r:?} {}",
        String::from_utf8_lossy(&err)
    );
    assert_eq!(seen.text(), "0123456789\nappended one\nappended two\n");
    c.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn text_errors_and_unsupported_sequence_files() -> anyhow::Result<()> {
    let c = cluster(1).await?;
    let u = c.uri();
    let tmp = tempfile::tempdir()?;
    let io = |c: &str| format!("org.apache.hadoop.io.{c}");
    let recs = vec![(text_w("k"), text_w("v"))];
    let mut block = sequence_file(&io("Text"), &io("Text"), None, &recs);
    // Turn on the compressed and block-compressed flags and name a codec after them.
    let flags = 4 + 1 + 25 + 1 + 25;
    let codec = b"org.apache.hadoop.io.compress.BZip2Codec";
    block.splice(
        flags..flags + 2,
        [1u8, 1, codec.len() as u8]
            .into_iter()
            .chain(codec.iter().copied()),
    );
    let files: Vec<(&str, Vec<u8>)> = vec![
        ("block", block),
        (
            "snappy",
            sequence_file(
                &io("Text"),
                &io("Text"),
                Some("org.apache.hadoop.io.compress.SnappyCodec"),
                &recs,
            ),
        ),
        (
            "custom",
            sequence_file("com.example.Thing", &io("Text"), None, &recs),
        ),
        ("tiny", b"SE".to_vec()),
        ("bad.gz", b"not gzip at all".to_vec()),
    ];
    for (name, bytes) in &files {
        let p = tmp.path().join(name);
        std::fs::write(&p, bytes)?;
        let o = sh(&u, &["-put", &p.to_string_lossy(), &format!("/{name}")]).await;
        assert_eq!(o.code, 0, "{}", o.err);
    }
    for (path, msg) in [
        (
            "/block",
            "text: block-compressed SequenceFiles are not supported (codec org.apache.hadoop.io.compress.BZip2Codec)\n",
        ),
        (
            "/snappy",
            "text: SequenceFile record compression with org.apache.hadoop.io.compress.SnappyCodec is not supported\n",
        ),
        (
            "/custom",
            "text: SequenceFile Writable class com.example.Thing is not supported\n",
        ),
        ("/tiny", "text: java.io.EOFException\n"),
    ] {
        let o = sh(&u, &["-text", path]).await;
        assert_eq!(
            (o.code, o.out.as_str(), o.err.as_str()),
            (1, "", msg),
            "{path}"
        );
    }
    // Java prints the same first line and exit code, then the usage of every command.
    let o = sh(&u, &["-count", "-q", "-t", "bogus", "/"]).await;
    assert_eq!(o.code, 255);
    assert!(
        o.err
            .starts_with("-count: No enum constant org.apache.hadoop.fs.StorageType.BOGUS\n"),
        "{}",
        o.err
    );
    let o = sh(&u, &["-text", "/bad.gz"]).await;
    assert_eq!(o.code, 1);
    assert!(o.err.starts_with("text: gzip: "), "{}", o.err);
    c.shutdown().await;
    Ok(())
}

/// close() fails when the last block never reaches its minimum replication (the DataNode's
/// RECEIVED_BLOCK report is held back): `-put` prints Hadoop's message, exits 1 and deletes
/// `<dst>._COPYING_`, as FsShell's deleteOnExit of the temporary file does.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn put_deletes_copying_file_when_close_fails() -> anyhow::Result<()> {
    let c = MiniCluster::builder()
        .datanodes(1)
        .conf("dfs.namenode.fs-limits.min-block-size", "0")
        .conf("dfs.blocksize", BLOCK.to_string())
        .conf("rhdfs.namenode.replication.wait.ms", "0")
        .wait_ready(Duration::from_secs(60))
        .build()
        .await?;
    let u = c.uri();
    let tmp = tempfile::tempdir()?;
    let src = tmp.path().join("f.txt");
    std::fs::write(&src, b"some bytes\n")?;
    c.datanode(0)
        .expect("datanode 0")
        .faults()
        .set_ibr_delay(Duration::from_secs(600));
    let o = sh(
        &u,
        &[
            "-D",
            "dfs.client.block.write.locateFollowingBlock.retries=1",
            "-D",
            "dfs.replication=1",
            "-put",
            &src.to_string_lossy(),
            "/p.txt",
        ],
    )
    .await;
    assert_eq!(o.code, 1, "{}", o.err);
    let prefix = "put: Unable to close file because the last block BP-";
    let suffix = " does not have enough number of replicas.\n";
    assert!(
        o.err.starts_with(prefix) && o.err.ends_with(suffix) && o.err.contains(":blk_"),
        "{}",
        o.err
    );
    let fs = fs(&c, &[]).await?;
    assert!(fs.get_file_info("/p.txt._COPYING_").await?.is_none());
    assert!(fs.get_file_info("/p.txt").await?.is_none());
    c.datanode(0)
        .expect("datanode 0")
        .faults()
        .set_ibr_delay(Duration::ZERO);
    c.shutdown().await;
    Ok(())
}
