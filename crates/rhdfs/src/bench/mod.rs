//! `rhdfs bench SUBCOMMAND ...`: load generators that print what an operator would measure.
//!
//! - `delete-under-load`: seed 000's scenario — a large delete while writers keep closing
//!   files; close latency, failures, longest lock holds, time until deletions drain.
//! - `nn`: NameNode throughput and latency per operation, like Hadoop's
//!   NNThroughputBenchmark, with simulated DataNodes for addBlock and blockReport.
//! - `nn-memory`: NameNode RSS per file and per replica location and restart time, on a
//!   namespace written by the loader and reported by simulated DataNodes.
//! - `ha`: failover time and HA write throughput on an in-process nameservice (issue 14).
//! - `dfsio`: TestDFSIO-like throughput (`crate::dfs::bench`).

mod delete_under_load;
mod ha;
mod nn;
mod nn_memory;

const HEAD: &str = "Usage: rhdfs bench SUBCOMMAND [options]\n\nSubcommands:\n";

/// Each subcommand's usage, as `rhdfs bench` lists them and `rhdfs bench SUB --help` prints one.
const SUBCOMMANDS: &[(&str, &str)] = &[
    (
        "delete-under-load",
        "\
  delete-under-load [--blocks N] [--writers W] [--datanodes D] [--creators C]
                    [--replication R] [-fs URI [--nn-http HOST:PORT]] [-D key=value ...]
        create N one-block files, then delete them while W writers create and close
        small files; prints close latency p50/p99/max, failures, the longest lock hold
        per lock and operation, and the time until pending deletions reach zero.
        Without -fs an in-process cluster of D DataNodes (default 3) is started.
",
    ),
    (
        "nn",
        "\
  nn [-op create|mkdirs|open|fileStatus|webFileStatus|rename|delete|addBlock|
         blockReport|all[,...]]
     [-threads T] [-files N] [-filesPerDir P] [-datanodes D] [-blocksPerReport B]
     [-keepResults] [-fs URI [--nn-http HOST:PORT] [-nn-pid PID]] [-D key=value ...]
        NameNode throughput like Hadoop's NNThroughputBenchmark: T clients share N
        operations of each kind; prints ops/s, p50/p99 latency and both as multiples
        of the loopback TCP round trip measured in the same run, and (in-process,
        without -fs) the edit log's fsyncs per operation. CPU µs per operation: this
        process's (cpu) and the NameNode's alone (nn: in-process its own runtime's
        threads, with -fs the process -nn-pid names, else -). addBlock and blockReport
        use D simulated DataNodes (no data) that each send a full report of B
        replicas (replicas/s printed); addBlock's ops/s and fsyncs include each
        file's untimed create and complete, its latencies are addBlock's. Defaults: all, 8 threads, 1000 files, 4 per
        directory, 3 DataNodes, 100 blocks per report. Without -fs an in-process
        NameNode with no real DataNodes is started. webFileStatus asks fileStatus's
        question through WebHDFS GETFILESTATUS, one keep-alive connection per thread
        (web port: --nn-http, else dfs.namenode.http-address on the -fs host), and
        the ratio of its p50 to fileStatus's is printed.
",
    ),
    (
        "nn-memory",
        "\
  nn-memory [-files N] [-filesPerDir P] [-datanodes D] [-replication R] [-dir DIR]
            [-D key=value ...]
        NameNode memory and restart time: the namespace loader writes an image of N
        one-block files (P per directory) into a new name directory; a NameNode process
        is started on it (time to serving RPC, RSS per file above an empty NameNode's),
        then D simulated DataNodes send full reports (R replicas per block; time to
        leaving safe mode, RSS per replica location). Defaults: 100000 files, 1000 per
        directory, 10 DataNodes, replication 3, a scratch directory under the temp dir.
",
    ),
    (
        "ha",
        "\
  ha [-kills K] [-writers W] [-seconds S] [-ports A,B,C] [-D key=value ...]
        NameNode HA on the Raft-replicated edit log, in-process: 3 NameNodes of
        nameservice ns and 3 DataNodes. Prints mkdirs/s of W clients for S seconds
        against the nameservice and against one NameNode (no HA) and their ratio; then,
        while W writers create small files, kills the active NameNode K times and prints
        the time from each kill to the first acknowledged mkdir (p50/p99/max); finally
        reads back every acknowledged file and compares the NameNodes' namespaces (exit
        status 1 if a file was lost or they differ). Defaults: 5 kills, 4 writers, 3 s,
        three free loopback ports for the NameNodes.
",
    ),
    (
        "dfsio",
        "\
  dfsio -write|-read --files N --size SIZE [--replication R] [--warm] [--repeat K]
        [--local-dir DIR] [-fs URI] [-D key=value ...]
        TestDFSIO-like throughput of N concurrent writers/readers against the same bytes
        written/read with plain file I/O by N threads on the DataNodes' disk (or DIR), in
        K rounds of (rhdfs pass, plain pass); prints each round, medians, the median ratio
        (writes: of local / R), and CPU seconds per GiB of the client, the local DataNode
        processes and the whole machine. Reads drop the page cache before each pass (as
        root); --warm reads every replica and the plain files once first instead. A write
        pass ends with its bytes on the disk (rhdfs: sync after the files close; plain: new
        files, each fdatasync'd); before each, untimed: the pass before's files deleted (rhdfs:
        until the DataNodes removed their replicas), dirty pages written back, and as root the
        page cache dropped.
",
    ),
];

/// Runs `rhdfs bench ARGS`; the exit code is non-zero when the benchmark saw failures.
pub async fn run(args: Vec<String>) -> anyhow::Result<i32> {
    let Some(sub) = args.first().cloned() else {
        eprint!("{}", usage());
        return Ok(1);
    };
    // `rhdfs bench SUB --help`: that subcommand's usage, exit 0, as `rhdfs SUB --help` does.
    if args[1..].iter().any(|a| is_help(a))
        && let Some((_, text)) = SUBCOMMANDS.iter().find(|(name, _)| *name == sub)
    {
        print!("Usage: rhdfs bench {text}");
        return Ok(0);
    }
    match sub.as_str() {
        "delete-under-load" => delete_under_load::run(args[1..].to_vec()).await,
        "nn" => nn::run(args[1..].to_vec()).await,
        "ha" => ha::run(args[1..].to_vec()).await,
        "nn-memory" => nn_memory::run(args[1..].to_vec()).await,
        "dfsio" => crate::dfs::bench::bench(args).await,
        "help" => {
            print!("{}", usage());
            Ok(0)
        }
        h if is_help(h) => {
            print!("{}", usage());
            Ok(0)
        }
        other => anyhow::bail!("unknown bench `{other}`\n\n{}", usage()),
    }
}

fn is_help(a: &str) -> bool {
    matches!(a, "-h" | "--help" | "-help")
}

/// `rhdfs bench`'s usage: every subcommand's.
fn usage() -> String {
    let mut u = HEAD.to_string();
    for (_, text) in SUBCOMMANDS {
        u.push_str("  ");
        u.push_str(text);
    }
    u
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_lists_every_subcommand_under_its_name() {
        let u = usage();
        for (name, text) in SUBCOMMANDS {
            assert!(text.starts_with(name), "{name}: {text}");
            assert!(text.ends_with('\n'), "{name}");
            assert!(u.contains(&format!("\n  {name} ")), "{name} listed");
        }
    }
}
