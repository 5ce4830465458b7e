//! `rhdfs dfs`: Hadoop FsShell's commands, options, output formats, error lines and exit
//! codes, on top of `rhdfs_client`.

mod acl;
mod attrs;
pub mod bench;
mod commands;
mod copy;
mod find;
mod format;
mod generic;
mod help;
mod listing;
mod modify;
mod progress;
mod reading;
mod text;
mod touch;
mod truncate;
mod xattr;

use std::io::Write;

use rhdfs_client::{ClientError, FileStatus, FileSystem};
use rhdfs_conf::Configuration;

use commands::{Op, command, usage_all, usage_of};
use generic::{Generic, Split};

/// Exit code for usage errors (FsShell returns -1).
pub const EXIT_USAGE: i32 = 255;

/// Runs `rhdfs dfs <args>` on the process's stdout and stderr; returns the exit code.
pub async fn run(args: Vec<String>) -> anyhow::Result<i32> {
    if !Split::of(&args)
        .command()
        .is_some_and(commands::reads_contents)
    {
        return run_here(args).await;
    }
    // Commands that stream file contents run on a thread of their own with a single-threaded
    // runtime: the thread that waits for a DataNode socket to become readable is the one that
    // reads it. On the caller's runtime the command runs on the thread blocked on it, woken
    // by a worker for every socket read (a quarter of the client's CPU on `-cat`). Commands
    // that also write keep the caller's workers for the pipeline's tasks.
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("dfs".to_string())
        .spawn(move || {
            let ran = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(anyhow::Error::from)
                .and_then(|rt| rt.block_on(run_here(args)));
            let _ = tx.send(ran);
        })?;
    rx.await?
}

async fn run_here(args: Vec<String>) -> anyhow::Result<i32> {
    let mut out = stdout_writer();
    let mut err = std::io::stderr();
    let code = run_with(args, &mut out, &mut err).await;
    quiet_on_closed_pipe(out.flush())?;
    code
}

/// The shell's buffer for standard output; writes of file contents this large or larger
/// (`-cat`'s chunks are up to a packet or a short-circuit piece, 1 MiB) go to the descriptor
/// without being copied.
const STDOUT_BUFFER: usize = 64 << 10;

/// Standard output as a plain buffered writer on a duplicate of descriptor 1. Std's `Stdout`
/// is line-buffered: its `LineWriter` scans every write for the last newline and splits the
/// write there, a pass over each byte `-cat` prints. Nothing else in the shell writes to
/// std's `Stdout`, so the two never interleave. Without a descriptor 1 to duplicate, std's
/// `Stdout` (which drops output to a closed descriptor).
fn stdout_writer() -> std::io::BufWriter<Box<dyn Write + Send>> {
    use std::os::fd::AsFd;
    let sink: Box<dyn Write + Send> = match std::io::stdout().as_fd().try_clone_to_owned() {
        Ok(fd) => Box::new(std::fs::File::from(fd)),
        Err(_) => Box::new(std::io::stdout()),
    };
    std::io::BufWriter::with_capacity(STDOUT_BUFFER, sink)
}

/// Output to a reader that went away (`rhdfs dfs -ls | head`) is dropped, as Java's
/// `System.out` drops it: not an error of the command. `-cat` and `-text` say so themselves.
fn quiet_on_closed_pipe(r: std::io::Result<()>) -> std::io::Result<()> {
    match r {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r,
    }
}

/// [`run`] with explicit output streams (used by tests).
pub async fn run_with(
    args: Vec<String>,
    out: &mut (dyn Write + Send),
    err: &mut (dyn Write + Send),
) -> anyhow::Result<i32> {
    let mut conf = Configuration::from_env()?;
    let mut fs_uri: Option<&str> = None;
    let split = Split::of(&args);
    for option in &split.options {
        match *option {
            Generic::Define(kv) => conf.apply_define(kv)?,
            Generic::Conf(file) => conf.add_resource(file)?,
            Generic::Fs(uri) => fs_uri = Some(uri),
        }
    }
    let rest = match split.rest {
        Ok(rest) => rest,
        Err(missing) => {
            writeln!(err, "{missing}")?;
            return Ok(EXIT_USAGE);
        }
    };
    let Some(cmd) = rest.first() else {
        write!(err, "{}", usage_all())?;
        return Ok(EXIT_USAGE);
    };
    if matches!(cmd.as_str(), "--help" | "-h") {
        return Ok(help::run(cmd, &rest[1..], out, err)?);
    }
    let Some(command) = cmd.strip_prefix('-').and_then(command) else {
        writeln!(err, "{cmd}: Unknown command")?;
        write!(err, "{}", usage_all())?;
        return Ok(EXIT_USAGE);
    };
    // Help needs no file system.
    if matches!(command.op, Op::Help | Op::Usage) {
        return Ok(help::run(cmd, &rest[1..], out, err)?);
    }
    let name = command.name.to_string();
    if let Some(u) = fs_uri {
        conf.set(rhdfs_conf::keys::FS_DEFAULT_FS_KEY, u);
    }
    let fs = match FileSystem::from_conf(conf.clone()).await {
        Ok(fs) => fs,
        Err(e) => {
            writeln!(err, "{name}: {}", e.message())?;
            return Ok(1);
        }
    };
    let mut sh = Shell {
        fs,
        out,
        err,
        name: name.clone(),
        code: 0,
        ls_opts: Default::default(),
        preserve: Default::default(),
        ls_widths: None,
    };
    let argv: Vec<String> = rest[1..].to_vec();
    let result = sh.dispatch(command.op, &argv).await;
    let code = match result {
        Ok(()) => sh.code,
        Err(ShellError::Usage(msg)) => {
            writeln!(sh.err, "-{name}: {msg}")?;
            if let Some(u) = usage_of(&name) {
                writeln!(sh.err, "Usage: hadoop fs [generic options] {u}")?;
            }
            EXIT_USAGE
        }
        Err(ShellError::Fatal(msg)) => {
            writeln!(sh.err, "{name}: {msg}")?;
            1
        }
        // Output to a reader that went away: dropped, as Java's `System.out` drops it.
        Err(ShellError::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => sh.code,
        Err(ShellError::Io(e)) => {
            writeln!(sh.err, "{name}: {e}")?;
            1
        }
    };
    quiet_on_closed_pipe(sh.out.flush())?;
    sh.fs.close().await;
    Ok(code)
}

/// Why a command stopped.
#[derive(Debug)]
pub(crate) enum ShellError {
    /// Bad options or arguments: the usage line follows, exit 255.
    Usage(String),
    /// A failure that ends the command (already worded as FsShell would).
    Fatal(String),
    Io(std::io::Error),
}

impl From<std::io::Error> for ShellError {
    fn from(e: std::io::Error) -> Self {
        ShellError::Io(e)
    }
}

impl From<ClientError> for ShellError {
    fn from(e: ClientError) -> Self {
        ShellError::Fatal(e.message())
    }
}

pub(crate) type ShResult<T = ()> = std::result::Result<T, ShellError>;

/// A path argument: how it was typed, so results can be shown the same way.
#[derive(Debug, Clone)]
pub(crate) struct Shown {
    /// Prefix put before absolute paths (`hdfs://host:port` when the argument had one).
    uri_prefix: String,
    /// Working directory when the argument was relative.
    relative_to: Option<String>,
}

impl Shown {
    pub(crate) fn of(fs: &FileSystem, arg: &str) -> Self {
        let parts = rhdfs_client::path::split_uri(arg);
        let uri_prefix = match (&parts.scheme, &parts.authority) {
            (Some(s), Some(a)) => format!("{s}://{a}"),
            (Some(s), None) => format!("{s}:"),
            _ => String::new(),
        };
        let relative_to = (parts.scheme.is_none() && !parts.path.starts_with('/'))
            .then(|| fs.working_dir().to_string());
        Shown {
            uri_prefix,
            relative_to,
        }
    }

    /// How an absolute path is displayed for this argument.
    pub(crate) fn show(&self, abs: &str) -> String {
        if let Some(wd) = &self.relative_to {
            if abs == wd {
                return ".".to_string();
            }
            if let Some(r) = abs.strip_prefix(&format!("{wd}/")) {
                return r.to_string();
            }
        }
        format!("{}{abs}", self.uri_prefix)
    }
}

pub(crate) struct Shell<'a> {
    pub fs: FileSystem,
    pub out: &'a mut (dyn Write + Send),
    pub err: &'a mut (dyn Write + Send),
    pub name: String,
    pub code: i32,
    pub(crate) ls_opts: listing::LsOpts,
    /// What `-cp -p` / `-put -p` carry over to the copies.
    pub(crate) preserve: copy::Preserve,
    /// `-ls` column widths so far in this command.
    pub(crate) ls_widths: Option<format::LsWidths>,
}

impl Shell<'_> {
    async fn dispatch(&mut self, op: Op, a: &[String]) -> ShResult {
        match op {
            Op::Ls => self.ls(a).await,
            Op::Du => self.du(a).await,
            Op::Df => self.df(a).await,
            Op::Count => self.count(a).await,
            Op::Stat => self.stat(a).await,
            Op::Test => self.test(a).await,
            Op::Checksum => self.checksum(a).await,
            Op::Cat => self.cat(a, false).await,
            Op::Text => self.cat(a, true).await,
            Op::Tail => self.tail(a).await,
            Op::Get | Op::CopyToLocal => self.get(a).await,
            Op::Getmerge => self.getmerge(a).await,
            Op::Mkdir => self.mkdir(a).await,
            Op::Put | Op::CopyFromLocal => self.put(a).await,
            Op::AppendToFile => self.append_to_file(a).await,
            Op::Touchz => self.touchz(a).await,
            Op::Touch => self.touch(a).await,
            Op::Find => self.find(a).await,
            Op::Head => self.head(a).await,
            Op::MoveFromLocal => self.move_from_local(a).await,
            Op::Rm => self.rm(a).await,
            Op::Rmdir => self.rmdir(a).await,
            Op::Expunge => self.expunge(a).await,
            Op::Mv => self.mv(a).await,
            Op::Cp => self.cp(a).await,
            Op::Setrep => self.setrep(a).await,
            Op::Chmod => self.chmod(a).await,
            Op::Chown => self.chown(a, false).await,
            Op::Chgrp => self.chown(a, true).await,
            Op::Getfacl => self.getfacl(a).await,
            Op::Setfacl => self.setfacl(a).await,
            Op::Getfattr => self.getfattr(a).await,
            Op::Setfattr => self.setfattr(a).await,
            Op::Truncate => self.truncate(a).await,
            Op::Concat => self.concat(a).await,
            // `run_with` answers these before connecting; the same answer here.
            Op::Help | Op::Usage => {
                let typed = format!("-{}", self.name);
                self.code = help::run(&typed, a, self.out, self.err)?;
                Ok(())
            }
        }
    }

    /// Prints `cmd: msg` and marks the run failed.
    pub(crate) fn error(&mut self, msg: &str) {
        let _ = writeln!(self.err, "{}: {msg}", self.name);
        self.code = 1;
    }

    /// Prints the FsShell line for a failure on `shown`.
    pub(crate) fn path_error(&mut self, shown: &str, e: &ClientError) {
        let msg = path_message(shown, e);
        self.error(&msg);
    }

    /// Expands one path argument (glob); prints "No such file or directory" when nothing
    /// matches.
    pub(crate) async fn expand(&mut self, arg: &str) -> ShResult<Option<(Shown, Vec<FileStatus>)>> {
        let shown = Shown::of(&self.fs, arg);
        match self.fs.glob_status(arg).await {
            Ok(v) if v.is_empty() => {
                self.error(&format!("`{arg}': No such file or directory"));
                Ok(None)
            }
            Ok(v) => Ok(Some((shown, v))),
            Err(e) => {
                self.path_error(arg, &e);
                Ok(None)
            }
        }
    }
}

/// FsShell's wording of a client error about a path.
pub(crate) fn path_message(shown: &str, e: &ClientError) -> String {
    if e.is_file_not_found() {
        format!("`{shown}': No such file or directory")
    } else if e.is_already_exists() {
        format!("`{shown}': File exists")
    } else if e.is_parent_not_directory() {
        format!("`{shown}': Is not a directory")
    } else if e.is_not_empty_directory() {
        format!("`{shown}': Directory is not empty")
    } else {
        e.message()
    }
}

/// Flags, flag values and the remaining arguments.
pub(crate) type Parsed = (Vec<String>, Vec<(String, String)>, Vec<String>);

/// Splits leading flags (`-r`, `-f`, ...) from the arguments. `allowed` lists the flags
/// without their dash; `with_value` those that take a value.
pub(crate) fn parse_flags(a: &[String], allowed: &[&str], with_value: &[&str]) -> ShResult<Parsed> {
    let mut flags = Vec::new();
    let mut values = Vec::new();
    let mut i = 0;
    while i < a.len() {
        let s = &a[i];
        if s == "--" {
            i += 1;
            break;
        }
        if !s.starts_with('-') || s == "-" {
            break;
        }
        let f = &s[1..];
        if with_value.contains(&f) {
            let v = a
                .get(i + 1)
                .ok_or_else(|| ShellError::Usage(format!("Illegal option {s}")))?;
            values.push((f.to_string(), v.clone()));
            i += 2;
            continue;
        }
        if allowed.contains(&f) {
            flags.push(f.to_string());
        } else if f.len() > 1 && f.chars().all(|c| allowed.contains(&c.to_string().as_str())) {
            flags.extend(f.chars().map(|c| c.to_string()));
        } else {
            return Err(ShellError::Usage(format!("Illegal option {s}")));
        }
        i += 1;
    }
    Ok((flags, values, a[i..].to_vec()))
}

pub(crate) fn need_args(args: &[String], n: usize) -> ShResult {
    if args.len() < n {
        return Err(ShellError::Usage(format!(
            "Not enough arguments: expected {n} but got {}",
            args.len()
        )));
    }
    Ok(())
}
