//! Issue 12: `-find`, `-head`, `-touch` and `-moveFromLocal` in `rhdfs dfs` against the Java
//! FsShell 3.5 on the same cluster: the same stdout, first error line and exit code. Skipped
//! (loudly) without Java or the Hadoop client jars, unless RHDFS_REQUIRE_JAVA=1.

use rhdfs::dfs;
use rhdfs_testkit::java::JavaShell;

use rhdfs_testkit::cluster::*;

struct Run {
    code: i32,
    out: String,
    /// The first stderr line (usage errors add the usage text after it).
    err: String,
}

async fn rhdfs(uri: &str, args: &[&str]) -> Run {
    let mut argv = vec!["-fs".to_string(), uri.to_string()];
    argv.extend(args.iter().map(|s| s.to_string()));
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = dfs::run_with(argv, &mut out, &mut err).await.unwrap_or(-1);
    let err = String::from_utf8_lossy(&err);
    Run {
        code,
        out: String::from_utf8_lossy(&out).into_owned(),
        err: err.lines().next().unwrap_or("").to_string(),
    }
}

async fn java(sh: &JavaShell, args: &[&str]) -> anyhow::Result<Run> {
    let o = sh.run(args).await?;
    Ok(Run {
        code: o.code.unwrap_or(-1),
        out: o.stdout_str(),
        err: o.errors().lines().next().unwrap_or("").to_string(),
    })
}

/// Runs `args` (with `{}` replaced by `j` for Java and `r` for rhdfs) in both shells and
/// compares exit code, stdout (with the prefixes swapped back) and the first error line.
async fn same(sh: &JavaShell, uri: &str, args: &[&str]) -> anyhow::Result<Run> {
    let sub = |tag: &str| -> Vec<String> { args.iter().map(|a| a.replace("{}", tag)).collect() };
    let ja = sub("j");
    let ra = sub("r");
    let j = java(sh, &ja.iter().map(String::as_str).collect::<Vec<_>>()).await?;
    let r = rhdfs(uri, &ra.iter().map(String::as_str).collect::<Vec<_>>()).await;
    let norm = |s: &str, tag: &str| {
        let mut s = s.to_string();
        for end in ["/", "'", "\n", "\0"] {
            s = s.replace(&format!("/{tag}{end}"), &format!("/X{end}"));
        }
        s
    };
    assert_eq!(
        (r.code, norm(&r.out, "r"), norm(&r.err, "r")),
        (j.code, norm(&j.out, "j"), norm(&j.err, "j")),
        "rhdfs dfs {ra:?} vs FsShell {ja:?}"
    );
    Ok(r)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn find_head_touch_move_from_local_match_fsshell() -> anyhow::Result<()> {
    let c = cluster(2).await?;
    let uri = c.uri();
    let Some(sh) = JavaShell::new(&uri, "find_head_touch_move_from_local_match_fsshell")? else {
        return Ok(());
    };
    let fs = fs(&c, &[]).await?;
    for tag in ["j", "r"] {
        fs.mkdirs(&format!("/{tag}/d/e"), None).await?;
        write_file(&fs, &format!("/{tag}/a.txt"), b"alpha\n").await?;
        write_file(&fs, &format!("/{tag}/B.TXT"), b"beta\n").await?;
        write_file(&fs, &format!("/{tag}/d/c.txt"), b"gamma\n").await?;
        write_file(
            &fs,
            &format!("/{tag}/big"),
            "0123456789".repeat(300).as_bytes(),
        )
        .await?;
    }

    // -find: default -print, -name / -iname globs, explicit actions, -print0, errors.
    let r = same(&sh, &uri, &["-find", "/{}"]).await?;
    assert_eq!(r.out.lines().count(), 7, "{}", r.out);
    let r = same(&sh, &uri, &["-find", "/{}", "-name", "*.txt"]).await?;
    assert_eq!(r.out, "/r/a.txt\n/r/d/c.txt\n");
    same(&sh, &uri, &["-find", "/{}", "-iname", "*.TXT", "-print"]).await?;
    same(&sh, &uri, &["-find", "/{}/d", "/{}/a.txt", "-print0"]).await?;
    same(
        &sh,
        &uri,
        &["-find", "/{}", "-name", "[ab]*", "-a", "-print"],
    )
    .await?;
    same(&sh, &uri, &["-find", "/{}/nope", "/{}/d", "-name", "e"]).await?;
    same(&sh, &uri, &["-find", "/{}", "-foo"]).await?;
    same(&sh, &uri, &["-find"]).await?;

    // -head: the first KiB; a directory, a missing file, too many arguments.
    let r = same(&sh, &uri, &["-head", "/{}/big"]).await?;
    assert_eq!(r.out.len(), 1024);
    same(&sh, &uri, &["-head", "/{}/a.txt"]).await?;
    same(&sh, &uri, &["-head", "/{}/d"]).await?;
    same(&sh, &uri, &["-head", "/{}/nope"]).await?;
    same(&sh, &uri, &["-head", "/{}/a.txt", "/{}/B.TXT"]).await?;

    // -touch: -t sets both times, -a / -m one of them, -c creates nothing, errors.
    let stat = ["-stat", "%Y %X %b"];
    same(&sh, &uri, &["-touch", "-t", "20200229:123456", "/{}/t1"]).await?;
    let r = same(&sh, &uri, &[stat[0], stat[1], "/{}/t1"]).await?;
    assert_eq!(r.out, "1582979696000 1582979696000 0\n");
    same(
        &sh,
        &uri,
        &["-touch", "-a", "-t", "20210101:000000", "/{}/t1"],
    )
    .await?;
    same(
        &sh,
        &uri,
        &["-touch", "-m", "-t", "20220101:000000", "/{}/t1"],
    )
    .await?;
    let r = same(&sh, &uri, &[stat[0], stat[1], "/{}/t1"]).await?;
    assert_eq!(r.out, "1640995200000 1609459200000 0\n");
    same(&sh, &uri, &["-touch", "-c", "/{}/t2"]).await?;
    same(&sh, &uri, &["-test", "-e", "/{}/t2"]).await?;
    same(&sh, &uri, &["-touch", "/{}/t3"]).await?;
    same(&sh, &uri, &["-test", "-e", "/{}/t3"]).await?;
    same(&sh, &uri, &["-touch", "/{}/nodir/x"]).await?;
    same(&sh, &uri, &["-touch", "/{}/d"]).await?;
    same(&sh, &uri, &["-touch", "-t", "2020", "/{}/t1"]).await?;

    // -moveFromLocal: copied then deleted locally; an existing directory target is refused.
    let tmp = tempfile::tempdir()?;
    for tag in ["j", "r"] {
        std::fs::write(tmp.path().join(format!("m{tag}")), b"moved\n")?;
        std::fs::create_dir_all(tmp.path().join(tag).join("e"))?;
    }
    let local = |name: &str| tmp.path().join(name).to_string_lossy().into_owned();
    let (mj, mr) = (local("mj"), local("mr"));
    let j = java(&sh, &["-moveFromLocal", &mj, "/j/m"]).await?;
    let r = rhdfs(&uri, &["-moveFromLocal", &mr, "/r/m"]).await;
    assert_eq!((r.code, r.out, r.err), (j.code, j.out, j.err));
    assert!(!tmp.path().join("mj").exists() && !tmp.path().join("mr").exists());
    same(&sh, &uri, &["-cat", "/{}/m"]).await?;
    same(&sh, &uri, &["-test", "-e", "/{}/m._COPYING_"]).await?;
    // /<tag>/d/e exists: moving the local directory `e` into /<tag>/d is "File exists".
    let j = java(&sh, &["-moveFromLocal", &local("j/e"), "/j/d"]).await?;
    let r = rhdfs(&uri, &["-moveFromLocal", &local("r/e"), "/r/d"]).await;
    assert_eq!(
        (r.code, r.err.replace("/r/", "/X/")),
        (j.code, j.err.replace("/j/", "/X/"))
    );
    assert_eq!(r.code, 1);
    same(
        &sh,
        &uri,
        &["-moveFromLocal", "-t", "2", &local("nothing"), "/{}"],
    )
    .await?;
    c.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn truncate_concat_match_fsshell() -> anyhow::Result<()> {
    let c = cluster(2).await?;
    let uri = c.uri();
    let Some(sh) = JavaShell::new(&uri, "truncate_concat_match_fsshell")? else {
        return Ok(());
    };
    let fs = fs(&c, &[]).await?;
    for tag in ["j", "r"] {
        fs.mkdirs(&format!("/{tag}/d"), None).await?;
        for (name, len) in [("f", 3000), ("g", 3000), ("h", 100), ("s", 10)] {
            let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            write_file(&fs, &format!("/{tag}/{name}"), &data).await?;
        }
        for (i, text) in ["zero\n", "one\n", "two\n"].iter().enumerate() {
            write_file(&fs, &format!("/{tag}/c{i}"), text.as_bytes()).await?;
        }
    }

    // -truncate: -w waits for the recovery; a block boundary is done at once; without -w
    // the wait notice; Hadoop's errors and exit codes.
    let r = same(&sh, &uri, &["-truncate", "-w", "2000", "/{}/f"]).await?;
    assert_eq!(
        r.out,
        "Waiting for /r/f ...\nTruncated /r/f to length: 2000\n"
    );
    same(&sh, &uri, &["-cat", "/{}/f"]).await?;
    same(&sh, &uri, &["-truncate", "0", "/{}/f"]).await?;
    same(&sh, &uri, &["-stat", "%b", "/{}/f"]).await?;
    let r = same(&sh, &uri, &["-truncate", "1000", "/{}/g"]).await?;
    assert!(
        r.out.starts_with("Truncating /r/g to length: 1000. Wait"),
        "{}",
        r.out
    );
    same(&sh, &uri, &["-truncate", "5000", "/{}/h"]).await?;
    same(&sh, &uri, &["-truncate", "-1", "/{}/h"]).await?;
    same(&sh, &uri, &["-truncate", "abc", "/{}/h"]).await?;
    same(&sh, &uri, &["-truncate", "0", "/{}/d"]).await?;
    same(&sh, &uri, &["-truncate", "0", "/{}/nope"]).await?;
    same(&sh, &uri, &["-truncate", "1"]).await?;

    // -concat: three files into the first; the shell's own checks; the NameNode's.
    let r = same(&sh, &uri, &["-concat", "/{}/c0", "/{}/c1", "/{}/c2"]).await?;
    assert_eq!((r.code, r.out.as_str()), (0, ""));
    let r = same(&sh, &uri, &["-cat", "/{}/c0"]).await?;
    assert_eq!(r.out, "zero\none\ntwo\n");
    same(&sh, &uri, &["-test", "-e", "/{}/c1"]).await?;
    same(&sh, &uri, &["-concat", "/{}/c0", "/{}/s"]).await?;
    same(&sh, &uri, &["-concat"]).await?;
    same(&sh, &uri, &["-concat", "/{}/nope", "/{}/s", "/{}/h"]).await?;
    same(&sh, &uri, &["-concat", "/{}/c0", "/{}/s", "/{}/nope"]).await?;
    same(&sh, &uri, &["-concat", "/{}/c0", "/{}/s", "/{}/s"]).await?;
    same(&sh, &uri, &["-concat", "/{}/c0", "/{}/d", "/{}/s"]).await?;
    c.shutdown().await;
    Ok(())
}
