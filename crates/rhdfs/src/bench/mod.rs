//! `rhdfs bench SUBCOMMAND ...`: load generators that print what an operator would measure.
//!
//! - `delete-under-load`: seed 000's scenario — a large delete while writers keep closing
//!   files; close latency, failures, longest lock holds, time until deletions drain.
//! - `nn-ops`: creates, mkdirs, renames and deletes per second for 1, 8 and 64 clients,
//!   with the edit log's fsyncs per operation (group commit).
//! - `dfsio`: TestDFSIO-like throughput (`crate::dfs::bench`).

mod delete_under_load;
mod nn_ops;

const USAGE: &str = "\
Usage: rhdfs bench SUBCOMMAND [options]

Subcommands:
  delete-under-load [--blocks N] [--writers W] [--datanodes D] [--creators C]
                    [--replication R] [-fs URI [--nn-http HOST:PORT]] [-D key=value ...]
        create N one-block files, then delete them while W writers create and close
        small files; prints close latency p50/p99/max, failures, the longest lock hold
        per lock and operation, and the time until pending deletions reach zero.
        Without -fs an in-process cluster of D DataNodes (default 3) is started.
  nn-ops [--ops N] [--clients 1,8,64] [-fs URI] [-D key=value ...]
        NameNode metadata throughput: N creates (create+close of an empty file),
        mkdirs, renames and deletes per client count, each acknowledged after its
        edit is synced; prints ops/s and, against the in-process cluster (no -fs),
        the edit log's fsyncs per operation, which group commit keeps below 1.
  dfsio -write|-read --files N --size SIZE [--replication R]
        TestDFSIO-like throughput
";

/// Runs `rhdfs bench ARGS`; the exit code is non-zero when the benchmark saw failures.
pub async fn run(args: Vec<String>) -> anyhow::Result<i32> {
    let Some(sub) = args.first().cloned() else {
        eprint!("{USAGE}");
        return Ok(1);
    };
    match sub.as_str() {
        "delete-under-load" => delete_under_load::run(args[1..].to_vec()).await,
        "nn-ops" => nn_ops::run(args[1..].to_vec()).await,
        "dfsio" => crate::dfs::bench::bench(args).await,
        "help" | "-h" | "--help" | "-help" => {
            print!("{USAGE}");
            Ok(0)
        }
        other => anyhow::bail!("unknown bench `{other}`\n\n{USAGE}"),
    }
}
