//! `-help [cmd ...]` and `-usage [cmd ...]`, laid out as FsShell prints them: `-usage CMD`
//! gives `Usage: hadoop fs [generic options] <usage>`, `-help CMD` the usage followed by
//! ` :` and an indented description; an unknown name is `` -help: `x': Unknown command ``
//! with the full usage on stderr and exit -1. The descriptions (rhdfs's own) are in `commands`.

use std::io::Write;

use super::EXIT_USAGE;
use super::commands::{COMMANDS, command, usage_all};

/// The `-help` text of one command.
pub fn help_of(name: &str) -> Option<String> {
    let c = command(name)?;
    let mut s = format!("{} :\n", c.usage);
    for line in c.description.lines() {
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
            for c in COMMANDS {
                if let Some(h) = help_of(c.name) {
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
            command(name).map(|c| format!("Usage: hadoop fs [generic options] {}\n", c.usage))
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
