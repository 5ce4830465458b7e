//! `rhdfs debug`: Hadoop's `hdfs debug` commands — `verifyMeta` and `computeMeta` on a
//! DataNode's replica files, `recoverLease` on a file left open. Their messages and exit codes
//! are Hadoop's DebugAdmin's, so scripts written for `hdfs debug` read them the same way.

use anyhow::Result;

use crate::args::CommonArgs;

mod meta;
mod recover_lease;

/// One command: its name, usage line and help text.
struct Command {
    name: &'static str,
    usage: &'static str,
    help: &'static str,
}

const VERIFY_META: Command = Command {
    name: "verifyMeta",
    usage: "verifyMeta -meta <metadata-file> [-block <block-file>]",
    help: "  Reads a replica's metadata file header (its checksum type and chunk size); with\n  -block, also checks every chunk of the block file against the metadata file's CRCs.",
};

const COMPUTE_META: Command = Command {
    name: "computeMeta",
    usage: "computeMeta -block <block-file> -out <output-metadata-file>",
    help: "  Writes a new metadata file for a block file: the header and a CRC of every chunk,\n  with the configured dfs.checksum.type and dfs.bytes-per-checksum.\n\n  Caution: a metadata file computed from a damaged block file vouches for the damage;\n  the replica then reads as good. Only for a block file known to be intact.",
};

const RECOVER_LEASE: Command = Command {
    name: "recoverLease",
    usage: "recoverLease -path <path> [-retries <num-retries>]",
    help: "  Asks the NameNode to recover the lease of a file left open (block recovery, then\n  the file is closed); tries -retries times (1 by default), 5 seconds apart. The path\n  must be on HDFS.",
};

const HELP: Command = Command {
    name: "help",
    usage: "help [command-name]",
    help: "  Prints a command's usage and help, or every command's usage.",
};

const COMMANDS: [&Command; 4] = [&VERIFY_META, &COMPUTE_META, &RECOVER_LEASE, &HELP];

/// A command's usage and help, printed (to stdout) when it is run without arguments.
fn print_usage(c: &Command) {
    println!("{}", c.usage);
    println!("{}\n", c.help);
}

fn print_all_usage() {
    println!("Usage: rhdfs debug <command> [arguments]\n");
    println!("Low-level tools for investigating and repairing replicas and leases: misused, they");
    println!("can make damaged data look good.\n");
    for c in COMMANDS {
        println!("{}", c.usage);
    }
    println!();
}

/// The command `arg` names (`verifyMeta` or `-verifyMeta`, as Hadoop accepts both).
fn command_named(arg: &str) -> Option<&'static Command> {
    let name = arg.strip_prefix('-').unwrap_or(arg);
    COMMANDS.iter().copied().find(|c| c.name == name)
}

/// `rhdfs debug ARGS`: the exit status. No command, or one it does not know, prints the
/// usage and exits 0, as Hadoop's DebugAdmin does; a command without arguments prints its
/// own usage and help and exits 1.
pub async fn run(args: Vec<String>) -> Result<i32> {
    let (common, mut rest) = CommonArgs::extract(args)?;
    let Some(cmd) = rest.first().and_then(|a| command_named(a)) else {
        print_all_usage();
        return Ok(0);
    };
    rest.remove(0);
    if rest.is_empty() && cmd.name != HELP.name {
        print_usage(cmd);
        return Ok(1);
    }
    match cmd.name {
        "verifyMeta" => meta::verify_command(rest).await,
        "computeMeta" => meta::compute_command(common.configuration()?, rest).await,
        "recoverLease" => recover_lease::run(common.configuration()?, rest).await,
        _ => {
            match rest.first().and_then(|a| command_named(a)) {
                Some(c) => print_usage(c),
                None => print_all_usage(),
            }
            Ok(0)
        }
    }
}
