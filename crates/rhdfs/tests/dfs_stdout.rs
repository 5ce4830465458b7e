//! `rhdfs dfs -cat`/`-text` as a process: file bytes reach standard output unchanged (binary,
//! with and without newlines, across blocks), a reader closing the pipe early gets FsShell's
//! one error line, and `rhdfs bench SUB --help` prints the usage with exit status 0.

use std::process::Stdio;

use anyhow::{Context, ensure};
use rhdfs_testkit::cluster::*;
use tokio::io::AsyncReadExt;

fn rhdfs() -> tokio::process::Command {
    let mut c = tokio::process::Command::new(env!("CARGO_BIN_EXE_rhdfs"));
    c.env("RUST_LOG", "warn");
    c
}

async fn dfs(uri: &str, args: &[&str]) -> anyhow::Result<std::process::Output> {
    Ok(rhdfs()
        .args(["dfs", "-fs", uri])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .await?)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cat_and_text_print_file_bytes_unchanged() -> anyhow::Result<()> {
    let c = cluster(3).await?;
    let u = c.uri();
    let fs = fs(&c, &[]).await?;
    // Every byte value, newlines included, across three blocks and a partial one.
    let mixed = data(3 * BLOCK as usize + 12_345, 21);
    ensure!(mixed.contains(&b'\n'));
    // No newline at all.
    let no_nl: Vec<u8> = data(BLOCK as usize + 999, 22)
        .into_iter()
        .map(|b| if b == b'\n' { b'x' } else { b })
        .collect();
    // Only newlines, and a file that ends in the middle of a line.
    let all_nl = vec![b'\n'; 70_000];
    let tail = b"line one\nline two\nno end".to_vec();
    let files = [
        ("/mixed.bin", &mixed),
        ("/no_nl.bin", &no_nl),
        ("/all_nl.txt", &all_nl),
        ("/tail.txt", &tail),
    ];
    for (p, d) in &files {
        write_file(&fs, p, d).await?;
    }
    for cmd in ["-cat", "-text"] {
        for (p, d) in &files {
            let o = dfs(&u, &[cmd, p]).await?;
            ensure!(
                o.status.success(),
                "{cmd} {p}: {:?} {}",
                o.status,
                String::from_utf8_lossy(&o.stderr)
            );
            ensure!(
                o.stdout == **d,
                "{cmd} {p}: {} bytes printed",
                o.stdout.len()
            );
            ensure!(
                o.stderr.is_empty(),
                "{cmd} {p}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
    }
    // Several files in one command: concatenated in argument order.
    let o = dfs(&u, &["-cat", "/tail.txt", "/no_nl.bin", "/tail.txt"]).await?;
    ensure!(o.status.success());
    ensure!(o.stdout == [&tail[..], &no_nl[..], &tail[..]].concat());
    c.shutdown().await;
    Ok(())
}

/// `rhdfs dfs -cat BIG | head -c N`: the reader goes away; FsShell's `IOUtils.copyBytes`
/// throws "Unable to write to output stream." (exit 1) and nothing else is printed.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cat_to_a_closed_pipe_stops_with_one_error_line() -> anyhow::Result<()> {
    let c = cluster(3).await?;
    let u = c.uri();
    let fs = fs(&c, &[]).await?;
    // Far more than a pipe and the shell's buffer hold, so writes after the close must fail.
    let big = data(4 * BLOCK as usize, 23);
    write_file(&fs, "/big.bin", &big).await?;
    let mut child = rhdfs()
        .args(["dfs", "-fs", &u, "-cat", "/big.bin"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stdout = child.stdout.take().context("stdout")?;
    let mut head = vec![0u8; 1000];
    stdout.read_exact(&mut head).await?;
    ensure!(head == big[..1000]);
    drop(stdout);
    let o = child.wait_with_output().await?;
    let err = String::from_utf8_lossy(&o.stderr);
    ensure!(o.status.code() == Some(1), "{:?} {err}", o.status);
    ensure!(
        err == "cat: Unable to write to output stream.\n",
        "stderr: {err}"
    );
    // A listing into a closed pipe is dropped quietly, as Java's System.out drops it.
    for i in 0..2000 {
        fs.mkdirs(&format!("/many/d{i:04}"), None).await?;
    }
    let mut child = rhdfs()
        .args(["dfs", "-fs", &u, "-ls", "/many"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stdout = child.stdout.take().context("stdout")?;
    let mut first = vec![0u8; 10];
    stdout.read_exact(&mut first).await?;
    drop(stdout);
    let o = child.wait_with_output().await?;
    let err = String::from_utf8_lossy(&o.stderr);
    ensure!(o.status.success(), "{:?} {err}", o.status);
    ensure!(err.is_empty(), "stderr: {err}");
    c.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bench_subcommand_help_prints_usage() -> anyhow::Result<()> {
    for (sub, shows) in [
        ("dfsio", "-write|-read"),
        ("nn", "-threads"),
        ("nn-memory", "-files"),
        ("ha", "-kills"),
        ("delete-under-load", "--blocks"),
    ] {
        for flag in ["--help", "-h"] {
            let o = rhdfs()
                .args(["bench", sub, flag])
                .stdin(Stdio::null())
                .output()
                .await?;
            let out = String::from_utf8_lossy(&o.stdout);
            ensure!(
                o.status.success(),
                "bench {sub} {flag}: {:?} {}",
                o.status,
                String::from_utf8_lossy(&o.stderr)
            );
            ensure!(
                out.starts_with(&format!("Usage: rhdfs bench {sub} ")) && out.contains(shows),
                "bench {sub} {flag}: {out}"
            );
        }
    }
    let o = rhdfs().args(["bench", "--help"]).output().await?;
    let out = String::from_utf8_lossy(&o.stdout);
    ensure!(
        o.status.success() && out.contains("  dfsio -write|-read"),
        "{out}"
    );
    Ok(())
}
