//! The shell's commands, one row each: the name (typed with a leading `-`), FsShell's usage
//! line, rhdfs's own description for `-help`, and whether the command only reads file
//! contents from HDFS (which decides the thread it runs on, see [`super::run`]). A new
//! command is a row here, an [`Op`] and its arm in `Shell::dispatch`.

/// One command of `rhdfs dfs`.
pub(crate) struct Command {
    /// The name without its dash (`cat` for `-cat`).
    pub name: &'static str,
    /// What `Shell::dispatch` runs for it.
    pub op: Op,
    /// FsShell's usage line.
    pub usage: &'static str,
    /// What the command does (two-space indented under its usage line by `-help`).
    pub description: &'static str,
    /// Streams HDFS file contents and writes nothing to HDFS: runs on a thread of its own
    /// with a single-threaded runtime (see [`super::run`]).
    pub reads_contents: bool,
}

/// Each command's operation: the table gives names, `Shell::dispatch` an arm per variant (the
/// compiler checks that every one is handled).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    AppendToFile,
    Cat,
    Checksum,
    Chgrp,
    Chmod,
    Chown,
    Concat,
    CopyFromLocal,
    CopyToLocal,
    Count,
    Cp,
    Df,
    Du,
    Expunge,
    Find,
    Get,
    Getfacl,
    Getfattr,
    Getmerge,
    Head,
    Help,
    Ls,
    Mkdir,
    MoveFromLocal,
    Mv,
    Put,
    Rm,
    Rmdir,
    Setfacl,
    Setfattr,
    Setrep,
    Stat,
    Tail,
    Test,
    Text,
    Touch,
    Touchz,
    Truncate,
    Usage,
}

/// Every command, in the order `-usage` and `-help` list them.
pub(crate) const COMMANDS: &[Command] = &[
    Command {
        name: "appendToFile",
        op: Op::AppendToFile,
        usage: "-appendToFile <localsrc> ... <dst>",
        description: "Appends the local files (or standard input for -) to the end of <dst>.",
        reads_contents: false,
    },
    Command {
        name: "cat",
        op: Op::Cat,
        usage: "-cat [-ignoreCrc] <src> ...",
        description: "Writes the contents of the files to standard output.",
        reads_contents: true,
    },
    Command {
        name: "checksum",
        op: Op::Checksum,
        usage: "-checksum <src> ...",
        description: "Prints the file checksum (MD5 of MD5s of CRC32C chunk checksums) of each file.",
        reads_contents: false,
    },
    Command {
        name: "chgrp",
        op: Op::Chgrp,
        usage: "-chgrp [-R] GROUP PATH...",
        description: "Changes the group of the files; -R walks directories.",
        reads_contents: false,
    },
    Command {
        name: "chmod",
        op: Op::Chmod,
        usage: "-chmod [-R] <MODE[,MODE]... | OCTALMODE> PATH...",
        description: "Changes the permissions of the files, symbolic or octal; -R walks directories.",
        reads_contents: false,
    },
    Command {
        name: "chown",
        op: Op::Chown,
        usage: "-chown [-R] [OWNER][:[GROUP]] PATH...",
        description: "Changes the owner and/or group of the files; -R walks directories.",
        reads_contents: false,
    },
    Command {
        name: "concat",
        op: Op::Concat,
        usage: "-concat <target path> <src path> <src path> ...",
        description: "Joins the source files onto the end of the target file and removes the sources;\nall must be in one directory and every block but the last of each must be full.",
        reads_contents: false,
    },
    Command {
        name: "copyFromLocal",
        op: Op::CopyFromLocal,
        usage: "-copyFromLocal [-f] <localsrc> ... <dst>",
        description: "Copies local files to the filesystem; -f overwrites the destination.",
        reads_contents: false,
    },
    Command {
        name: "copyToLocal",
        op: Op::CopyToLocal,
        usage: "-copyToLocal [-f] [-ignoreCrc] <src> ... <localdst>",
        description: "Copies files to the local filesystem; -f overwrites the destination.",
        reads_contents: true,
    },
    Command {
        name: "count",
        op: Op::Count,
        usage: "-count [-q] [-h] [-v] [-t [<storage type>]] [-u] [-x] [-e] [-s] <path> ...",
        description: "Counts the directories, files and bytes under the paths; -q adds quotas,\n-u quotas only, -h human-readable sizes, -v a header line.",
        reads_contents: false,
    },
    Command {
        name: "cp",
        op: Op::Cp,
        usage: "-cp [-f] [-p | -p[topax]] <src> ... <dst>",
        description: "Copies files within the filesystem; -f overwrites, -p keeps times, owner\nand permission.",
        reads_contents: false,
    },
    Command {
        name: "df",
        op: Op::Df,
        usage: "-df [-h] [<path> ...]",
        description: "Shows the capacity, used and free space; -h human-readable sizes.",
        reads_contents: false,
    },
    Command {
        name: "du",
        op: Op::Du,
        usage: "-du [-s] [-h] <path> ...",
        description: "Shows the space used by the files or directory entries; -s sums, -h\nhuman-readable sizes.",
        reads_contents: false,
    },
    Command {
        name: "expunge",
        op: Op::Expunge,
        usage: "-expunge",
        description: "Deletes trash checkpoints older than the retention and checkpoints the\ncurrent trash.",
        reads_contents: false,
    },
    Command {
        name: "find",
        op: Op::Find,
        usage: "-find <path> ... <expression> ...",
        description: "Finds files matching the expression (-name, -iname, -print, -print0) under\nthe paths.",
        reads_contents: false,
    },
    Command {
        name: "get",
        op: Op::Get,
        usage: "-get [-f] [-ignoreCrc] <src> ... <localdst>",
        description: "Copies files to the local filesystem; -f overwrites the destination.",
        reads_contents: true,
    },
    Command {
        name: "getfacl",
        op: Op::Getfacl,
        usage: "-getfacl [-R] <path>",
        description: "Shows the ACL entries of a file or directory; -R walks directories.",
        reads_contents: false,
    },
    Command {
        name: "getfattr",
        op: Op::Getfattr,
        usage: "-getfattr [-R] {-n name | -d} [-e en] <path>",
        description: "Shows an extended attribute (-n name) or all of them (-d); -e encodes values\nas text, hex or base64.",
        reads_contents: false,
    },
    Command {
        name: "getmerge",
        op: Op::Getmerge,
        usage: "-getmerge [-nl] [-skip-empty-file] <src> <localdst>",
        description: "Concatenates the source files into one local file; -nl adds a newline after\neach.",
        reads_contents: true,
    },
    Command {
        name: "head",
        op: Op::Head,
        usage: "-head <file>",
        description: "Writes the first kilobyte of the file to standard output.",
        reads_contents: true,
    },
    Command {
        name: "help",
        op: Op::Help,
        usage: "-help [cmd ...]",
        description: "Shows what the commands do.",
        reads_contents: false,
    },
    Command {
        name: "ls",
        op: Op::Ls,
        usage: "-ls [-C] [-d] [-h] [-R] [-t] [-S] [-r] [-u] [<path> ...]",
        description: "Lists the files and directories; -d lists directories as files, -R walks\ndirectories, -h human-readable sizes, -C paths only, -t/-S sort by time/size,\n-r reverses, -u uses access times.",
        reads_contents: false,
    },
    Command {
        name: "mkdir",
        op: Op::Mkdir,
        usage: "-mkdir [-p] <path> ...",
        description: "Creates directories; -p creates parents and accepts existing ones.",
        reads_contents: false,
    },
    Command {
        name: "moveFromLocal",
        op: Op::MoveFromLocal,
        usage: "-moveFromLocal [-f] [-p] [-l] [-d] <localsrc> ... <dst>",
        description: "Like -put, then deletes the local source.",
        reads_contents: false,
    },
    Command {
        name: "mv",
        op: Op::Mv,
        usage: "-mv <src> ... <dst>",
        description: "Moves files within the filesystem.",
        reads_contents: false,
    },
    Command {
        name: "put",
        op: Op::Put,
        usage: "-put [-f] [-p] <localsrc> ... <dst>",
        description: "Copies local files (or standard input for -) to the filesystem; -f\noverwrites, -p keeps times, owner and permission.",
        reads_contents: false,
    },
    Command {
        name: "rm",
        op: Op::Rm,
        usage: "-rm [-f] [-r|-R] [-skipTrash] <src> ...",
        description: "Deletes files, moving them to the trash when it is enabled; -r deletes\ndirectories, -f ignores missing files, -skipTrash deletes at once.",
        reads_contents: false,
    },
    Command {
        name: "rmdir",
        op: Op::Rmdir,
        usage: "-rmdir [--ignore-fail-on-non-empty] <dir> ...",
        description: "Removes empty directories.",
        reads_contents: false,
    },
    Command {
        name: "setfacl",
        op: Op::Setfacl,
        usage: "-setfacl [-R] [{-b|-k} {-m|-x <acl_spec>} <path>]|[--set <acl_spec> <path>]",
        description: "Sets ACL entries: -m modifies, -x removes, -b removes all but the base\nentries, -k removes the default ACL, --set replaces; -R walks directories.",
        reads_contents: false,
    },
    Command {
        name: "setfattr",
        op: Op::Setfattr,
        usage: "-setfattr {-n name [-v value] | -x name} <path>",
        description: "Sets (-n name -v value) or removes (-x name) an extended attribute.",
        reads_contents: false,
    },
    Command {
        name: "setrep",
        op: Op::Setrep,
        usage: "-setrep [-R] [-w] <rep> <path> ...",
        description: "Changes the replication factor of files; -w waits until it is reached, -R is\naccepted for compatibility.",
        reads_contents: false,
    },
    Command {
        name: "stat",
        op: Op::Stat,
        usage: "-stat [format] <path> ...",
        description: "Prints file information in the given format (%b %F %g %n %o %r %u %y %Y ...).",
        reads_contents: false,
    },
    Command {
        name: "tail",
        op: Op::Tail,
        usage: "-tail [-f] [-s <sleep interval>] <file>",
        description: "Writes the last kilobyte of the file; -f follows it as it grows.",
        reads_contents: true,
    },
    Command {
        name: "test",
        op: Op::Test,
        usage: "-test -[defsz] <path>",
        description: "Exit status 0 if the path exists (-e), is a directory (-d), a file (-f), is\nnot empty (-s) or has zero length (-z).",
        reads_contents: false,
    },
    Command {
        name: "text",
        op: Op::Text,
        usage: "-text [-ignoreCrc] <src> ...",
        description: "Writes a file as text, decoding gzip, deflate and SequenceFiles.",
        reads_contents: true,
    },
    Command {
        name: "touch",
        op: Op::Touch,
        usage: "-touch [-a] [-m] [-t TIMESTAMP (yyyyMMdd:HHmmss) ] [-c] <path> ...",
        description: "Updates the access and modification times, creating an empty file when\nmissing unless -c; -a/-m pick one time, -t sets it.",
        reads_contents: false,
    },
    Command {
        name: "touchz",
        op: Op::Touchz,
        usage: "-touchz <path> ...",
        description: "Creates empty files; fails for a file that is not empty.",
        reads_contents: false,
    },
    Command {
        name: "truncate",
        op: Op::Truncate,
        usage: "-truncate [-w] <length> <path> ...",
        description: "Truncates the files to <length> bytes; -w waits until block recovery of a\ncut-off last block has finished.",
        reads_contents: false,
    },
    Command {
        name: "usage",
        op: Op::Usage,
        usage: "-usage [cmd ...]",
        description: "Shows the usage of the commands.",
        reads_contents: false,
    },
];

/// The command named `name` (without its dash).
pub(crate) fn command(name: &str) -> Option<&'static Command> {
    COMMANDS.iter().find(|c| c.name == name)
}

/// The usage line of the command `name`.
pub(crate) fn usage_of(name: &str) -> Option<&'static str> {
    command(name).map(|c| c.usage)
}

/// Whether the command typed as `typed` (`-cat`) streams file contents only.
pub(crate) fn reads_contents(typed: &str) -> bool {
    typed
        .strip_prefix('-')
        .and_then(command)
        .is_some_and(|c| c.reads_contents)
}

/// FsShell's usage of every command and the generic options.
pub(crate) fn usage_all() -> String {
    let mut s = String::from("Usage: hadoop fs [generic options]\n");
    for c in COMMANDS {
        s.push_str(&format!("\t[{}]\n", c.usage));
    }
    s.push_str(
        "\nGeneric options supported are:\n\
         -conf <configuration file>        specify an application configuration file\n\
         -D <property=value>               define a value for a given property\n\
         -fs <file:///|hdfs://namenode:port> specify default filesystem URL to use, overrides 'fs.defaultFS' property from configurations.\n",
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_every_command_is_described() {
        for (i, c) in COMMANDS.iter().enumerate() {
            assert!(!c.description.is_empty(), "{}", c.name);
            assert!(
                c.usage.starts_with(&format!("-{} ", c.name)) || c.usage == format!("-{}", c.name),
                "{}",
                c.usage
            );
            assert!(
                COMMANDS[..i].iter().all(|o| o.name != c.name),
                "{} twice",
                c.name
            );
        }
    }

    #[test]
    fn only_commands_that_stream_contents_run_apart() {
        let apart: Vec<&str> = COMMANDS
            .iter()
            .filter(|c| c.reads_contents)
            .map(|c| c.name)
            .collect();
        assert_eq!(
            apart,
            [
                "cat",
                "copyToLocal",
                "get",
                "getmerge",
                "head",
                "tail",
                "text"
            ]
        );
        assert!(reads_contents("-cat"));
        assert!(!reads_contents("cat"), "a command is typed with its dash");
        assert!(!reads_contents("--cat"));
        assert!(!reads_contents("-put"));
        assert!(!reads_contents("-nope"));
    }
}
