//! `-help [cmd ...]` and `-usage [cmd ...]`, laid out as FsShell prints them: `-usage CMD`
//! gives `Usage: hadoop fs [generic options] <usage>`, `-help CMD` the usage followed by
//! ` :` and an indented description; an unknown name is `` -help: `x': Unknown command ``
//! with the full usage on stderr and exit -1. The descriptions are rhdfs's own.

use std::io::Write;

use super::{EXIT_USAGE, usage_all, usage_of};

/// What each command does (two-space indented under its usage line).
const DESCRIPTIONS: &[(&str, &str)] = &[
    (
        "appendToFile",
        "Appends the local files (or standard input for -) to the end of <dst>.",
    ),
    (
        "cat",
        "Writes the contents of the files to standard output.",
    ),
    (
        "checksum",
        "Prints the file checksum (MD5 of MD5s of CRC32C chunk checksums) of each file.",
    ),
    (
        "chgrp",
        "Changes the group of the files; -R walks directories.",
    ),
    (
        "chmod",
        "Changes the permissions of the files, symbolic or octal; -R walks directories.",
    ),
    (
        "chown",
        "Changes the owner and/or group of the files; -R walks directories.",
    ),
    (
        "concat",
        "Joins the source files onto the end of the target file and removes the sources;\nall must be in one directory and every block but the last of each must be full.",
    ),
    (
        "copyFromLocal",
        "Copies local files to the filesystem; -f overwrites the destination.",
    ),
    (
        "copyToLocal",
        "Copies files to the local filesystem; -f overwrites the destination.",
    ),
    (
        "count",
        "Counts the directories, files and bytes under the paths; -q adds quotas,\n-u quotas only, -h human-readable sizes, -v a header line.",
    ),
    (
        "cp",
        "Copies files within the filesystem; -f overwrites, -p keeps times, owner\nand permission.",
    ),
    (
        "df",
        "Shows the capacity, used and free space; -h human-readable sizes.",
    ),
    (
        "du",
        "Shows the space used by the files or directory entries; -s sums, -h\nhuman-readable sizes.",
    ),
    (
        "expunge",
        "Deletes trash checkpoints older than the retention and checkpoints the\ncurrent trash.",
    ),
    (
        "find",
        "Finds files matching the expression (-name, -iname, -print, -print0) under\nthe paths.",
    ),
    (
        "get",
        "Copies files to the local filesystem; -f overwrites the destination.",
    ),
    (
        "getfacl",
        "Shows the ACL entries of a file or directory; -R walks directories.",
    ),
    (
        "getfattr",
        "Shows an extended attribute (-n name) or all of them (-d); -e encodes values\nas text, hex or base64.",
    ),
    (
        "getmerge",
        "Concatenates the source files into one local file; -nl adds a newline after\neach.",
    ),
    (
        "head",
        "Writes the first kilobyte of the file to standard output.",
    ),
    ("help", "Shows what the commands do."),
    (
        "ls",
        "Lists the files and directories; -d lists directories as files, -R walks\ndirectories, -h human-readable sizes, -C paths only, -t/-S sort by time/size,\n-r reverses, -u uses access times.",
    ),
    (
        "mkdir",
        "Creates directories; -p creates parents and accepts existing ones.",
    ),
    ("moveFromLocal", "Like -put, then deletes the local source."),
    ("mv", "Moves files within the filesystem."),
    (
        "put",
        "Copies local files (or standard input for -) to the filesystem; -f\noverwrites, -p keeps times, owner and permission.",
    ),
    (
        "rm",
        "Deletes files, moving them to the trash when it is enabled; -r deletes\ndirectories, -f ignores missing files, -skipTrash deletes at once.",
    ),
    ("rmdir", "Removes empty directories."),
    (
        "setfacl",
        "Sets ACL entries: -m modifies, -x removes, -b removes all but the base\nentries, -k removes the default ACL, --set replaces; -R walks directories.",
    ),
    (
        "setfattr",
        "Sets (-n name -v value) or removes (-x name) an extended attribute.",
    ),
    (
        "setrep",
        "Changes the replication factor of files; -w waits until it is reached, -R is\naccepted for compatibility.",
    ),
    (
        "stat",
        "Prints file information in the given format (%b %F %g %n %o %r %u %y %Y ...).",
    ),
    (
        "tail",
        "Writes the last kilobyte of the file; -f follows it as it grows.",
    ),
    (
        "test",
        "Exit status 0 if the path exists (-e), is a directory (-d), a file (-f), is\nnot empty (-s) or has zero length (-z).",
    ),
    (
        "text",
        "Writes a file as text, decoding gzip, deflate and SequenceFiles.",
    ),
    (
        "touch",
        "Updates the access and modification times, creating an empty file when\nmissing unless -c; -a/-m pick one time, -t sets it.",
    ),
    (
        "touchz",
        "Creates empty files; fails for a file that is not empty.",
    ),
    (
        "truncate",
        "Truncates the files to <length> bytes; -w waits until block recovery of a\ncut-off last block has finished.",
    ),
    ("usage", "Shows the usage of the commands."),
];

fn description(name: &str) -> &'static str {
    DESCRIPTIONS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, d)| *d)
        .unwrap_or("")
}

/// The `-help` text of one command.
pub fn help_of(name: &str) -> Option<String> {
    let usage = usage_of(name)?;
    let mut s = format!("{usage} :\n");
    for line in description(name).lines() {
        s.push_str("  ");
        s.push_str(line);
        s.push('\n');
    }
    Some(s)
}

/// Runs `-help` or `-usage` (`cmd`) for `names`; returns the exit code.
pub fn run(
    cmd: &str,
    names: &[String],
    out: &mut (dyn Write + Send),
    err: &mut (dyn Write + Send),
) -> std::io::Result<i32> {
    let help = cmd != "-usage";
    if names.is_empty() {
        if help {
            write!(out, "{}", usage_all())?;
            writeln!(out)?;
            for (name, _) in DESCRIPTIONS {
                if let Some(h) = help_of(name) {
                    writeln!(out, "{h}")?;
                }
            }
        } else {
            write!(out, "{}", usage_all())?;
        }
        return Ok(0);
    }
    for n in names {
        let name = n.trim_start_matches('-');
        let text = if help {
            help_of(name)
        } else {
            usage_of(name).map(|u| format!("Usage: hadoop fs [generic options] {u}\n"))
        };
        match text {
            Some(t) => write!(out, "{t}")?,
            None => {
                writeln!(err, "{cmd}: `{n}': Unknown command")?;
                write!(err, "{}", usage_all())?;
                return Ok(EXIT_USAGE);
            }
        }
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_has_a_description() {
        for (name, _) in super::super::USAGES {
            assert!(!description(name).is_empty(), "{name}");
        }
    }

    #[test]
    fn usage_and_help_of_one_command() {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = run("-usage", &["mkdir".into()], &mut out, &mut err).unwrap();
        assert_eq!(code, 0);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "Usage: hadoop fs [generic options] -mkdir [-p] <path> ...\n"
        );
        let mut out = Vec::new();
        run("-help", &["-mkdir".into()], &mut out, &mut err).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with("-mkdir [-p] <path> ... :\n  Creates"),
            "{text}"
        );
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = run("-help", &["nope".into()], &mut out, &mut err).unwrap();
        assert_eq!(code, EXIT_USAGE);
        let err = String::from_utf8(err).unwrap();
        assert!(
            err.starts_with("-help: `nope': Unknown command\nUsage: hadoop fs"),
            "{err}"
        );
    }
}
