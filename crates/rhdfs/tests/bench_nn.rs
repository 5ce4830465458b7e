//! Issue 17: a small run of `rhdfs bench nn` finishes and its figures are sane — every
//! operation ran with no failure, percentiles are ordered, the round trip is positive — and
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
    for op in [
        "create",
        "mkdirs",
        "open",
        "fileStatus",
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
        ensure!(row.len() == 11, "{op}: row {row:?}");
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
        ensure!(num(10)? == 0.0, "{op}: failures {row:?}\n{stderr}");
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
    ensure!(
        stdout.contains("invalidated by the NameNode and dropped"),
        "the simulated DataNodes kept replicas after the clean-up\n{stdout}"
    );
    Ok(())
}
