//! Issue 3 item 2: files written by `rhdfs dfs -put` are byte-identical when read by
//! hdfs-native and by the Java FsShell, and the other way round. The Java half is skipped when
//! Java or the Hadoop client jars (scripts/install-hadoop-client.sh) are missing.

use rhdfs::dfs;

use std::path::{Path, PathBuf};
use std::process::Command;

use rhdfs_testkit::cluster::*;
use rhdfs_testkit::seqfile::*;

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

/// The Hadoop client jars: `RHDFS_HADOOP_CLIENT_DIR`, else where
/// `scripts/install-hadoop-client.sh` puts them (`~/.cache/rhdfs/hadoop-client`, or
/// `<repo>/.cache/hadoop-client`). `None` skips the Java part of a test, unless
/// `RHDFS_REQUIRE_JAVA=1` (set by `scripts/test.sh`), which makes a missing client a failure.
fn jars() -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(d) = std::env::var_os("RHDFS_HADOOP_CLIENT_DIR").filter(|d| !d.is_empty()) {
        candidates.push(PathBuf::from(d));
    } else {
        if let Some(home) = std::env::var_os("HOME") {
            candidates.push(PathBuf::from(home).join(".cache/rhdfs/hadoop-client"));
        }
        candidates.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.cache/hadoop-client"));
    }
    let java = Command::new("java")
        .arg("-version")
        .output()
        .is_ok_and(|o| o.status.success());
    let found = candidates
        .into_iter()
        .find(|d| d.join("hadoop-client-api-3.5.0.jar").is_file());
    match found {
        Some(dir) if java => Some(dir),
        _ if std::env::var("RHDFS_REQUIRE_JAVA").is_ok_and(|v| v == "1") => {
            panic!("RHDFS_REQUIRE_JAVA=1 but java or the Hadoop client jars are missing")
        }
        _ => None,
    }
}

/// (exit code, stdout, stderr) of the Java FsShell.
fn java_run(jars: &Path, conf: &Path, args: &[&str]) -> anyhow::Result<(i32, String, String)> {
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
    let err: String = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| !l.starts_with("SLF4J"))
        .map(|l| format!("{l}\n"))
        .collect();
    Ok((
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        err,
    ))
}

async fn rhdfs_run(uri: &str, args: &[&str]) -> anyhow::Result<(i32, String, String)> {
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
    Ok((
        code,
        String::from_utf8_lossy(&out).into_owned(),
        String::from_utf8_lossy(&err).into_owned(),
    ))
}

/// Masks `yyyy-MM-dd HH:mm[:ss]` dates.
fn mask(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    let d = |j: usize| b.get(j).is_some_and(|c| c.is_ascii_digit());
    while i < b.len() {
        if i + 16 <= b.len()
            && (0..4).all(|k| d(i + k))
            && b[i + 4] == b'-'
            && b[i + 7] == b'-'
            && b[i + 13] == b':'
        {
            out.push_str("DATE");
            i += 16;
            if b.get(i) == Some(&b':') && d(i + 1) && d(i + 2) {
                i += 3;
            }
            continue;
        }
        out.push(b[i] as char);
        i += 1;
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn same_output_as_java_fsshell() -> anyhow::Result<()> {
    let Some(jars) = jars() else {
        eprintln!("skipping: no java or no Hadoop client jars");
        return Ok(());
    };
    let c = cluster(3).await?;
    let uri = c.uri();
    let u = uri.as_str();
    let tmp = tempfile::tempdir()?;
    let conf = tmp.path().join("conf");
    std::fs::create_dir_all(&conf)?;
    std::fs::write(
        conf.join("core-site.xml"),
        format!(
            "<?xml version=\"1.0\"?><configuration><property><name>fs.defaultFS</name><value>{uri}</value></property></configuration>"
        ),
    )?;
    let f1 = tmp.path().join("f1");
    std::fs::write(&f1, b"hello world\n")?;
    let f2 = tmp.path().join("f2");
    std::fs::write(&f2, data(BLOCK as usize + 5000, 60))?;
    let f3 = tmp.path().join("f3");
    std::fs::write(&f3, data(3000, 61))?;
    for a in [
        vec!["-mkdir", "-p", "/t/d1/d2", "/t/e", "/x"],
        vec!["-put", &f1.to_string_lossy(), "/t/f1"],
        vec!["-put", &f2.to_string_lossy(), "/t/d1/f2"],
        vec!["-put", &f3.to_string_lossy(), "/t/d1/d2/f3"],
        vec!["-touchz", "/t/empty"],
        vec!["-setrep", "2", "/t/f1"],
        vec!["-chmod", "640", "/t/d1/f2"],
        vec!["-mkdir", "-p", "rel/sub"],
        vec!["-put", &f1.to_string_lossy(), "rel/f1"],
    ] {
        let (code, _, err) = rhdfs_run(u, &a).await?;
        anyhow::ensure!(code == 0, "{a:?}: {err}");
    }
    // -text inputs: gzip (by magic and by name), zlib (.deflate), SequenceFiles.
    let text_files = text_inputs(tmp.path())?;
    for (local, remote) in &text_files {
        let (code, _, err) = rhdfs_run(u, &["-put", &local.to_string_lossy(), remote]).await?;
        anyhow::ensure!(code == 0, "put {remote}: {err}");
    }
    // Quotas by storage type on /t/d1 (DISK, which holds every replica, and SSD), for
    // `-count -t`.
    let addr = u.trim_start_matches("hdfs://");
    let me = rhdfs_conf::user::current_user();
    for (ty, q) in [(1, 100i64 << 20), (2, 1 << 30)] {
        rhdfs_namenode::rpc::quota::call(addr, &me, "/t/d1", i64::MAX, q, Some(ty)).await?;
    }
    let f1s = f1.to_string_lossy().into_owned();
    let uri_t = format!("{uri}/t");
    let uri_nope = format!("{uri}/nope");
    let cmds: Vec<Vec<&str>> = vec![
        vec!["-ls", "/t"],
        vec!["-ls", "-R", "/t"],
        vec!["-ls", "-R", "-h", "/t"],
        vec!["-ls", "-d", "/t", "/t/d1"],
        vec!["-ls", "/t/f1", "/t/d1"],
        vec!["-ls", "/t/*"],
        vec!["-ls", "/t/d1/{f2,d2}"],
        vec!["-ls", "-S", "/t"],
        vec!["-ls", "-r", "/t"],
        vec!["-ls", "-C", "-R", "/t"],
        vec!["-ls", "/nope"],
        vec!["-ls"],
        vec!["-ls", "rel"],
        vec!["-ls", "-R", "."],
        vec!["-ls", "rel/*"],
        vec!["-ls", "rel/nope"],
        vec!["-ls", &uri_t],
        vec!["-ls", "-d", &uri_t],
        vec!["-ls", &uri_nope],
        vec!["-du", "rel"],
        vec!["-du", "-s", &uri_t],
        vec!["-count", "rel", &uri_t],
        vec!["-stat", "%n %b", "rel/f1"],
        vec!["-cat", "rel/nope"],
        vec!["-mkdir", "rel"],
        vec!["-ls", "/t/nomatch*"],
        vec!["-du", "/t"],
        vec!["-du", "-s", "/t", "/t/d1"],
        vec!["-du", "-h", "/t/d1"],
        vec!["-du", "/nope"],
        vec!["-count", "/t", "/t/d1"],
        vec!["-count", "-q", "/t"],
        vec!["-count", "-q", "-h", "/t"],
        vec!["-count", "-h", "/t/d1"],
        vec!["-count", "/nope"],
        vec!["-stat", "/t/f1"],
        vec![
            "-stat",
            "%n %b %F %g %o %r %u %a %A",
            "/t/f1",
            "/t/d1",
            "/t/empty",
        ],
        vec!["-stat", "%F %b", "/t/empty"],
        vec!["-checksum", "/t/f1", "/t/d1/f2", "/t/empty"],
        vec!["-checksum", "/t/d1"],
        vec!["-cat", "/t/f1"],
        vec!["-cat", "/nope"],
        vec!["-cat", "/t/d1"],
        vec!["-tail", "/t/f1"],
        vec!["-text", "/t/f1"],
        vec!["-text", "/x/plain.gz", "/x/renamed.bin", "/x/z.deflate"],
        vec!["-text", "/x/seq-text", "/x/seq-nums", "/x/seq-bytes"],
        vec!["-text", "/x/seq-deflate", "/x/seq-gzip"],
        vec!["-text", "/x/empty.txt", "/x/one"],
        vec!["-tail", "/t/d1/f2"],
        vec!["-tail", "/t/d1"],
        vec!["-tail", "/nope"],
        vec!["-count", "-v", "/t"],
        vec!["-count", "-q", "-v", "/t"],
        vec!["-count", "-u", "/t", "/t/d1"],
        vec!["-count", "-u", "-v", "-h", "/t"],
        vec!["-count", "-q", "-t", "/t"],
        vec!["-count", "-q", "-t", "-v", "/t"],
        vec!["-count", "-u", "-t", "SSD,disk", "-v", "/t"],
        vec!["-count", "-q", "-t", "all", "/t"],
        vec!["-count", "-q", "-t", "all", "/t/d1", "/t"],
        vec!["-count", "-q", "-h", "-v", "-t", "/t/d1"],
        vec!["-count", "-q", "-t", "DISK,SSD,ARCHIVE", "/t/d1"],
        vec!["-count", "-u", "-h", "-t", "/t/d1"],
        vec!["-count", "-x", "-v", "/t"],
        vec!["-count", "-q", "-x", "/t"],
        vec!["-count", "-e", "-v", "/t", "/t/f1", "/t/empty"],
        vec!["-count", "-q", "-t", "ram_disk", "/t"],
        vec!["-count", "-q", "-e", "/t"],
        vec!["-count", "-v", "-h", "-e", "-u", "/t"],
        vec!["-test", "-e", "/t/f1"],
        vec!["-test", "-d", "/t/f1"],
        vec!["-test", "-z", "/t/empty"],
        vec!["-test", "-f", "/nope"],
        vec!["-mkdir", "/t"],
        vec!["-mkdir", "/nope/x"],
        vec!["-rm", "/t/d1"],
        vec!["-rm", "/nope"],
        vec!["-touchz", "/t/f1"],
        vec!["-mv", "/nope", "/t/x"],
        vec!["-cp", "/t/f1", "/t/empty"],
        vec!["-chmod", "755", "/nope"],
        vec!["-setrep", "1", "/nope"],
        vec!["-put", &f1s, "/t/f1"],
        vec!["-get", "/nope", "/tmp/never-created-by-this-test"],
    ];
    let mut mismatches = Vec::new();
    for a in &cmds {
        let (jc, jo, je) = java_run(&jars, &conf, a)?;
        let (rc, ro, re) = rhdfs_run(u, a).await?;
        if (jc, mask(&jo), je.clone()) != (rc, mask(&ro), re.clone()) {
            mismatches.push(format!(
                "{a:?}\n  java  ({jc}): {:?} / {je:?}\n  rhdfs ({rc}): {:?} / {re:?}",
                mask(&jo),
                mask(&ro)
            ));
        }
    }
    c.shutdown().await;
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    Ok(())
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

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn same_changes_as_java_fsshell() -> anyhow::Result<()> {
    let Some(jars) = jars() else {
        eprintln!("skipping: no java or no Hadoop client jars");
        return Ok(());
    };
    let c = cluster(3).await?;
    let uri = c.uri();
    let u = uri.as_str();
    let tmp = tempfile::tempdir()?;
    let conf = tmp.path().join("conf");
    std::fs::create_dir_all(&conf)?;
    std::fs::write(
        conf.join("core-site.xml"),
        format!(
            "<?xml version=\"1.0\"?><configuration><property><name>fs.defaultFS</name><value>{uri}</value></property></configuration>"
        ),
    )?;
    let f1 = tmp.path().join("f1");
    std::fs::write(&f1, b"hello world\n")?;
    let f1s = f1.to_string_lossy().into_owned();
    // A local file with its own times and mode for -put -p.
    let fp = tmp.path().join("fp");
    std::fs::write(&fp, b"preserved\n")?;
    {
        use std::os::unix::fs::PermissionsExt;
        let t0 = std::time::UNIX_EPOCH + std::time::Duration::from_millis(1_577_934_245_000);
        let t1 = std::time::UNIX_EPOCH + std::time::Duration::from_millis(1_580_000_000_000);
        std::fs::File::options()
            .write(true)
            .open(&fp)?
            .set_times(std::fs::FileTimes::new().set_modified(t0).set_accessed(t1))?;
        std::fs::set_permissions(&fp, std::fs::Permissions::from_mode(0o640))?;
    }
    let fps = fp.to_string_lossy().into_owned();
    // The same tree under /j (changed by Java) and /r (changed by rhdfs).
    for root in ["/j", "/r"] {
        for a in [
            vec![
                "-mkdir".to_string(),
                "-p".into(),
                format!("{root}/d/s"),
                format!("{root}/e"),
            ],
            vec!["-put".into(), f1s.clone(), format!("{root}/a")],
            vec!["-put".into(), f1s.clone(), format!("{root}/f")],
            vec!["-put".into(), f1s.clone(), format!("{root}/d/s/x")],
        ] {
            let a: Vec<&str> = a.iter().map(String::as_str).collect();
            let (code, _, err) = rhdfs_run(u, &a).await?;
            anyhow::ensure!(code == 0, "{a:?}: {err}");
        }
    }
    let cmds: Vec<Vec<&str>> = vec![
        vec!["-mv", "R/a", "R/b"],
        vec!["-mv", "R/nope", "R/x"],
        vec!["-mv", "R/b", "R/d"],
        vec!["-mv", "R/d/b", "R/f"],
        vec!["-mv", "R/d", "R/d/s"],
        vec!["-cp", "R/f", "R/g"],
        vec!["-cp", "R/f", "R/g"],
        vec!["-cp", "-f", "R/f", "R/g"],
        vec!["-cp", "R/d", "R/d3"],
        vec!["-setrep", "2", "R/f"],
        vec!["-setrep", "1", "R/d"],
        vec!["-chmod", "-R", "700", "R/d"],
        vec!["-chmod", "g+w,o-r", "R/f"],
        vec!["-chown", "-R", ":g2", "R/d"],
        vec!["-chgrp", "g3", "R/f"],
        vec!["-touchz", "R/t"],
        vec!["-touchz", "R/d"],
        vec!["-appendToFile", &f1s, "R/f"],
        vec!["-cat", "R/f"],
        vec!["-put", "-p", &fps, "R/pp"],
        vec!["-cp", "-p", "R/pp", "R/pp2"],
        vec!["-cp", "-pt", "R/f", "R/pt"],
        vec!["-cp", "-pop", "R/f", "R/po"],
        vec!["-cp", "-p", "R/d", "R/dp"],
        // Times from the local file are the same in both trees; the others are compared
        // with their sources below.
        vec!["-stat", "%n %Y %u %g %a", "R/pp", "R/pp2"],
        vec![
            "-stat",
            "%n %u %g %a",
            "R/pt",
            "R/po",
            "R/dp",
            "R/dp/s",
            "R/dp/s/x",
        ],
        vec!["-put", &f1s, "R/d"],
        vec!["-put", &f1s, "R/d"],
        vec!["-put", "-f", &f1s, "R/d"],
        vec!["-put", &f1s, "R/nodir/x"],
        vec!["-rmdir", "R/e"],
        vec!["-rmdir", "R/d"],
        vec!["-rm", "-r", "R/d3"],
        vec!["-rm", "R/g", "R/nope"],
        vec!["-rm", "-skipTrash", "R/t"],
        vec!["-ls", "-R", "R"],
    ];
    let mut mismatches = Vec::new();
    for a in &cmds {
        let root = |s: &str, r: &str| match s.strip_prefix('R') {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => format!("{r}{rest}"),
            _ => s.to_string(),
        };
        let ja: Vec<String> = a.iter().map(|s| root(s, "/j")).collect();
        let ra: Vec<String> = a.iter().map(|s| root(s, "/r")).collect();
        let ja: Vec<&str> = ja.iter().map(String::as_str).collect();
        let ra: Vec<&str> = ra.iter().map(String::as_str).collect();
        let (jc, jo, je) = java_run(&jars, &conf, &ja)?;
        let (rc, ro, re) = rhdfs_run(u, &ra).await?;
        let jo = mask(&jo).replace("/j", "/r");
        let je = je.replace("/j", "/r");
        if (jc, &jo, &je) != (rc, &mask(&ro), &re) {
            mismatches.push(format!(
                "{a:?}\n  java  ({jc}): {jo:?} / {je:?}\n  rhdfs ({rc}): {:?} / {re:?}",
                mask(&ro)
            ));
        }
    }
    // -p kept the source's modification times, in both trees.
    for r in ["/j", "/r"] {
        for (copy, src) in [("pt", "f"), ("dp/s", "d/s"), ("dp/s/x", "d/s/x")] {
            let (_, a, _) = rhdfs_run(u, &["-stat", "%Y", &format!("{r}/{copy}")]).await?;
            let (_, b, _) = rhdfs_run(u, &["-stat", "%Y", &format!("{r}/{src}")]).await?;
            if a != b || a.is_empty() {
                mismatches.push(format!("{r}/{copy} mtime {a:?} != {r}/{src} {b:?}"));
            }
        }
    }
    c.shutdown().await;
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    Ok(())
}
