//! Issue 12: `rhdfs dfs` and the Apache Hadoop 3.5 Java FsShell print the same for
//! -getfacl, -setfacl -m/-x/-b/-k/--set/-R, -getfattr -d/-n/-e/-R and -setfattr -n -v/-x:
//! every change is made once by each shell on its own tree, and both trees are then read
//! back by both shells; -ls shows the "+" of an entry with an ACL as FsShell does.

use rhdfs_minicluster::MiniCluster;

use rhdfs_testkit::java::JavaShell;

struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

async fn rhdfs_dfs(conf_dir: &std::path::Path, args: &[&str]) -> anyhow::Result<Out> {
    let o = tokio::process::Command::new(env!("CARGO_BIN_EXE_rhdfs"))
        .arg("dfs")
        .args(args)
        .env("HADOOP_CONF_DIR", conf_dir)
        .env("RUST_LOG", "error")
        .output()
        .await?;
    Ok(Out {
        code: o.status.code(),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    })
}

async fn java_dfs(sh: &JavaShell, args: &[&str]) -> anyhow::Result<Out> {
    let o = sh.run(args).await?;
    Ok(Out {
        code: o.code,
        stdout: o.stdout_str(),
        stderr: o.errors(),
    })
}

/// Runs `args` (with `{}` standing for the tree) with Java on /j and rhdfs on /r, then
/// compares exit codes, stdout and stderr (the tree names swapped).
async fn both(sh: &JavaShell, conf: &std::path::Path, args: &[&str]) -> anyhow::Result<String> {
    let on = |root: &str| -> Vec<String> { args.iter().map(|a| a.replace("{}", root)).collect() };
    let ja = on("/j");
    let ra = on("/r");
    let j = java_dfs(sh, &ja.iter().map(String::as_str).collect::<Vec<_>>()).await?;
    let r = rhdfs_dfs(conf, &ra.iter().map(String::as_str).collect::<Vec<_>>()).await?;
    assert_eq!(
        j.code,
        r.code,
        "exit codes of {args:?}: java {j:?} rhdfs {r:?}",
        j = j.stderr,
        r = r.stderr
    );
    assert_eq!(j.stdout.replace("/j", "/r"), r.stdout, "stdout of {args:?}");
    if j.code == Some(255) {
        // A usage error: the message line matches; the usage text lists each shell's commands.
        let first = |s: &str| s.lines().next().unwrap_or_default().to_string();
        assert_eq!(first(&j.stderr), first(&r.stderr), "stderr of {args:?}");
    } else {
        assert_eq!(
            j.stderr.replace("/j", "/r"),
            r.stderr.trim_end(),
            "stderr of {args:?}"
        );
    }
    Ok(r.stdout)
}

/// Both shells read both trees the same way.
async fn same_view(sh: &JavaShell, conf: &std::path::Path, args: &[&str]) -> anyhow::Result<()> {
    let on = |root: &str| -> Vec<String> { args.iter().map(|a| a.replace("{}", root)).collect() };
    let j_on_j = java_dfs(sh, &on("/j").iter().map(String::as_str).collect::<Vec<_>>()).await?;
    let r_on_r = rhdfs_dfs(
        conf,
        &on("/r").iter().map(String::as_str).collect::<Vec<_>>(),
    )
    .await?;
    assert_eq!(j_on_j.code, Some(0), "{args:?}: {}", j_on_j.stderr);
    assert_eq!(
        j_on_j.stdout.replace("/j", "/r"),
        r_on_r.stdout,
        "{args:?}: the tree changed by Java and the one changed by rhdfs differ"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn getfacl_setfacl_getfattr_setfattr_match_java() -> anyhow::Result<()> {
    let cluster = MiniCluster::builder().datanodes(1).build().await?;
    let Some(sh) = JavaShell::new(&cluster.uri(), "acl_shell")? else {
        return Ok(());
    };
    let dir = tempfile::tempdir()?;
    cluster.write_client_conf(dir.path())?;
    let conf = dir.path();
    for root in ["/j", "/r"] {
        let o = rhdfs_dfs(conf, &["-mkdir", "-p", &format!("{root}/d/sub")]).await?;
        assert_eq!(o.code, Some(0), "{}", o.stderr);
        let o = rhdfs_dfs(conf, &["-touchz", &format!("{root}/d/f")]).await?;
        assert_eq!(o.code, Some(0), "{}", o.stderr);
    }
    let plain = both(&sh, conf, &["-getfacl", "{}/d"]).await?;
    assert!(plain.starts_with("# file: /r/d\n# owner: "), "{plain}");

    let steps: &[&[&str]] = &[
        &["-setfacl", "-m", "user:bob:rwx,group:staff:r-x", "{}/d"],
        &[
            "-setfacl",
            "-m",
            "default:user:carl:r-x,default:mask::r--",
            "{}/d",
        ],
        &["-setfacl", "-x", "user:bob", "{}/d"],
        &[
            "-setfacl",
            "-R",
            "-m",
            "user:eve:r--,default:user:eve:rwx",
            "{}/d",
        ],
        &["-chmod", "1750", "{}/d"],
        &["-setfacl", "-k", "{}/d"],
        &[
            "-setfacl",
            "--set",
            "user::rwx,group::r-x,other::---,user:dan:rw-",
            "{}/d/f",
        ],
        &["-setfacl", "-b", "{}/d/sub"],
        &["-setfattr", "-n", "user.a", "-v", "hello", "{}/d"],
        &["-setfattr", "-n", "user.b", "-v", "0x0102ff", "{}/d"],
        &["-setfattr", "-n", "user.c", "{}/d"],
        &["-setfattr", "-n", "user.a", "-v", "\"again\"", "{}/d"],
        &["-setfattr", "-n", "user.s", "-v", "0sAAEC", "{}/d/f"],
        &["-setfattr", "-x", "user.c", "{}/d"],
        // A narrower mask: the group entries show their #effective permissions.
        &["-chmod", "1740", "{}/d"],
    ];
    for step in steps {
        both(&sh, conf, step).await?;
        same_view(&sh, conf, &["-getfacl", "-R", "{}"]).await?;
    }
    let acl = both(&sh, conf, &["-getfacl", "-R", "{}/d"]).await?;
    assert!(acl.contains("#effective:"), "{acl}");
    // -ls shows a "+" after the permissions of an entry with an ACL (HAS_ACL): both shells
    // list the same tree the same way (times included).
    for args in [
        &["-ls", "-R", "/r"][..],
        &["-ls", "-d", "/r/d", "/r/d/f", "/r/d/sub"],
    ] {
        let j = java_dfs(&sh, args).await?;
        let r = rhdfs_dfs(conf, args).await?;
        assert_eq!(
            (j.code, &j.stdout),
            (r.code, &r.stdout),
            "{args:?}: {}",
            r.stderr
        );
    }
    let ls = rhdfs_dfs(conf, &["-ls", "-d", "/r/d", "/r/d/sub"])
        .await?
        .stdout;
    let perms: Vec<&str> = ls.lines().filter_map(|l| l.split(' ').next()).collect();
    assert_eq!(perms, ["drwxr----T+", "drwxr-xr-x"], "{ls}");
    for read in [
        &["-getfattr", "-d", "{}/d"][..],
        &["-getfattr", "-R", "-d", "{}"],
        &["-getfattr", "-n", "user.b", "-e", "hex", "{}/d"],
        &["-getfattr", "-n", "user.a", "-e", "base64", "{}/d"],
        &["-getfattr", "-d", "-e", "text", "{}/d/f"],
        &["-getfattr", "-n", "user.missing", "{}/d"],
        &["-getfattr", "-n", "trusted.x", "{}/d"],
        &["-setfattr", "-x", "user.missing", "{}/d"],
        &["-setfattr", "-n", "bogus.x", "{}/d"],
        &["-setfacl", "-m", "user:bob:rwz", "{}/d"],
        &["-setfacl", "-m", "default:user:x:rwx", "{}/d/f"],
        &["-setfacl", "-b", "-k", "{}/d"],
        &["-getfacl", "{}/nothing"],
    ] {
        both(&sh, conf, read).await?;
    }
    Ok(())
}
