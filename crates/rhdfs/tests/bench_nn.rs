//! Issue 17: a small run of `rhdfs bench nn` finishes and its figures are sane — every
//! operation ran with no failure, percentiles are ordered, the round trip and the fdatasync
//! cost are positive, CPU per operation is not negative and the NameNode's share of it (its
//! own runtime's threads) is printed and no more than the whole process's — and
//! the simulated DataNodes obeyed the NameNode's invalidations at the clean-up. No timing is
//! asserted.

use anyhow::{Context, ensure};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn small_run_of_every_operation() -> anyhow::Result<()> {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_rhdfs"))
        .args([
            "bench",
            "nn",
            "-op",
            "all",
            "-threads",
            "3",
            "-files",
            "30",
            "-filesPerDir",
            "4",
            "-datanodes",
            "4",
            "-blocksPerReport",
            "12",
        ])
        .env("RUST_LOG", "warn")
        .output()
        .await?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    ensure!(
        out.status.success(),
        "bench nn failed: {:?}\n{stdout}\n{stderr}",
        out.status
    );
    let rtt_line = stdout
        .lines()
        .find(|l| l.starts_with("loopback TCP round trip"))
        .context("no round-trip line")?;
    let rtt: f64 = rtt_line
        .rsplit(':')
        .next()
        .and_then(|v| v.trim().trim_end_matches("µs").trim().parse().ok())
        .with_context(|| format!("round trip in {rtt_line:?}"))?;
    ensure!(rtt > 0.0, "round trip {rtt}");
    let sync_line = stdout
        .lines()
        .find(|l| l.starts_with("fdatasync of a 128-byte append"))
        .with_context(|| format!("no fdatasync line\n{stdout}"))?;
    let fsync: f64 = sync_line
        .rsplit(':')
        .next()
        .and_then(|v| v.trim().trim_end_matches("µs").trim().parse().ok())
        .with_context(|| format!("fdatasync cost in {sync_line:?}"))?;
    ensure!(fsync > 0.0, "fdatasync {fsync}");
    ensure!(
        stdout
            .lines()
            .any(|l| l.starts_with("single-client mutation floor (round trip + fdatasync):")),
        "no single-client floor line\n{stdout}"
    );
    for op in [
        "create",
        "mkdirs",
        "open",
        "fileStatus",
        "webFileStatus",
        "rename",
        "delete",
        "addBlock",
        "blockReport",
    ] {
        let row: Vec<&str> = stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(op))
            .with_context(|| format!("no row for {op}\n{stdout}"))?
            .split_whitespace()
            .collect();
        ensure!(row.len() == 13, "{op}: row {row:?}");
        let num = |i: usize| -> anyhow::Result<f64> {
            row[i]
                .parse::<f64>()
                .with_context(|| format!("{op}: column {i} of {row:?}"))
        };
        let want_ops = if op == "blockReport" { 4.0 } else { 30.0 };
        ensure!(num(1)? == want_ops, "{op}: ops {row:?}");
        ensure!(num(4)? > 0.0, "{op}: ops/s {row:?}");
        ensure!(num(5)? > 0.0 && num(5)? <= num(6)?, "{op}: p50/p99 {row:?}");
        ensure!(
            num(7)? <= num(8)?,
            "{op}: multiples of the round trip {row:?}"
        );
        ensure!(num(10)? >= 0.0, "{op}: CPU per operation {row:?}");
        // The NameNode's threads are part of this process, read inside its interval; both
        // clocks may lag a thread running elsewhere by a scheduler tick (10 ms allowed over
        // the row's operations).
        let tick_per_op = 10_000.0 / want_ops;
        ensure!(
            num(11)? >= 0.0 && num(11)? <= num(10)? + tick_per_op,
            "{op}: NameNode CPU per operation {row:?}"
        );
        ensure!(num(12)? == 0.0, "{op}: failures {row:?}\n{stderr}");
    }
    let reported = stdout
        .lines()
        .find(|l| l.contains("replicas in 4 full reports"))
        .context("no replica count for blockReport")?;
    let replicas: u64 = reported
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .with_context(|| format!("replicas in {reported:?}"))?;
    ensure!(
        replicas >= 4 * 12,
        "{replicas} replicas reported, want at least 48"
    );
    let ratio_line = stdout
        .lines()
        .find(|l| l.starts_with("webFileStatus / fileStatus at p50:"))
        .with_context(|| format!("no WebHDFS/RPC ratio\n{stdout}"))?;
    let ratio: f64 = ratio_line
        .split(':')
        .nth(1)
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .with_context(|| format!("ratio in {ratio_line:?}"))?;
    ensure!(ratio > 0.0 && ratio.is_finite(), "{ratio_line}");
    ensure!(
        stdout.contains("invalidated by the NameNode and dropped"),
        "the simulated DataNodes kept replicas after the clean-up\n{stdout}"
    );
    Ok(())
}

/// A small `rhdfs bench nn-memory`: the loader wrote every file, the restarted NameNode
/// took every replica location from the simulated DataNodes and left safe mode, and the
/// resident-size figures are positive and grow with what was loaded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn small_run_of_nn_memory() -> anyhow::Result<()> {
    let work = tempfile::tempdir()?;
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_rhdfs"))
        .args([
            "bench",
            "nn-memory",
            "-files",
            "5000",
            "-filesPerDir",
            "300",
        ])
        .args(["-datanodes", "4", "-replication", "3", "-dir"])
        .arg(work.path().join("scratch"))
        .env("RUST_LOG", "warn")
        .output()
        .await?;
    let stdout = succeeded("bench nn-memory", &out)?;
    let line = |prefix: &str| line_of(&stdout, prefix);
    ensure!(
        line("namespace loader:")?.contains("5000 files in"),
        "{stdout}"
    );
    ensure!(
        line("restart:")?.contains("(15000 replicas from 4 DataNodes)"),
        "{stdout}"
    );
    let mib: Vec<f64> = line("RSS:")?
        .split(" MiB")
        .filter_map(|s| s.rsplit(' ').next()?.parse().ok())
        .collect();
    ensure!(mib.len() == 3, "RSS figures {mib:?}\n{stdout}");
    ensure!(
        mib[0] > 0.0 && mib[0] < mib[1] && mib[1] <= mib[2],
        "RSS should grow from empty to loaded to reported: {mib:?}"
    );
    ensure!(
        line("RSS per file")?.contains("per replica location"),
        "{stdout}"
    );
    // The NameNode's longest lock holds, read from its /jmx (no timing asserted).
    let holds = line("lock holds:")?;
    ensure!(
        holds.contains("longest of a full report") && holds.contains("blocks."),
        "{stdout}"
    );
    Ok(())
}

/// Issue 14: a small `rhdfs bench ha` — two kills of the active NameNode under writers —
/// finishes with every acknowledged file read back and the NameNodes' namespaces identical
/// (its exit status), and prints sane figures. No timing is asserted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn small_run_of_bench_ha() -> anyhow::Result<()> {
    let reserved = (0..3)
        .map(|_| rhdfs_testkit::ports::reserve())
        .collect::<Result<Vec<_>, _>>()?;
    let ports = reserved
        .iter()
        .map(|p| p.port().to_string())
        .collect::<Vec<_>>()
        .join(",");
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_rhdfs"))
        .args([
            "bench", "ha", "-kills", "2", "-writers", "2", "-seconds", "0.5", "-ports", &ports,
        ])
        .env("RUST_LOG", "error,openraft=off")
        .output()
        .await?;
    let stdout = succeeded("bench ha", &out)?;
    let line = |prefix: &str| line_of(&stdout, prefix);
    ensure!(line("mkdirs, 2 clients")?.contains("ratio"), "{stdout}");
    let failover = line("failover (kill of the active")?;
    ensure!(failover.contains("2 kills: p50 "), "{failover}");
    ensure!(
        line("writes under failover:")?.ends_with(" 0 acknowledged lost"),
        "{stdout}"
    );
    ensure!(
        line("namespaces of all 3 NameNodes identical")?.contains("txid"),
        "{stdout}"
    );
    Ok(())
}

/// The stdout of a finished `rhdfs` run, or an error with both streams when it failed.
fn succeeded(what: &str, out: &std::process::Output) -> anyhow::Result<String> {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    ensure!(
        out.status.success(),
        "{what} failed: {:?}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(stdout)
}

/// The first line of `stdout` starting with `prefix`.
fn line_of<'a>(stdout: &'a str, prefix: &str) -> anyhow::Result<&'a str> {
    stdout
        .lines()
        .find(|l| l.starts_with(prefix))
        .with_context(|| format!("no {prefix:?} line\n{stdout}"))
}
