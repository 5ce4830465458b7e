//! Logging for the `rhdfs` processes: lines on stderr (colour only on a terminal) and, with a
//! log directory, in a file of their own rolled by size (`file-rotate`, written off the
//! calling thread by `tracing-appender`, never with colour codes); levels changed at run
//! time (`level`, behind the web ports' `/logLevel`); openraft's line per retry of a call to
//! a Raft peer that is down let through once a minute per peer (`peer_down`). Every daemon
//! runs inside a [`daemon_span`], so each line of `rhdfs cluster` names the daemon that wrote
//! it.

mod file;
pub mod level;
pub mod peer_down;

use std::io::IsTerminal;
use std::path::PathBuf;

use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, fmt, reload};

pub use file::FileSettings;

/// Why logging could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("cannot create the log directory {dir}: {source}")]
    Dir {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("a logger is already installed in this process")]
    AlreadySet,
}

/// What to set up.
#[derive(Debug, Clone, Default)]
pub struct LogSettings {
    /// `RUST_LOG`-style directives (`info`, `warn,rhdfs_namenode=debug`).
    pub directives: String,
    /// The log file, when there is a log directory.
    pub file: Option<FileSettings>,
}

/// Keeps the file writer's thread alive; dropping it flushes what is queued.
#[must_use = "dropping the guard stops the log file writer"]
pub struct LogGuard {
    _file: Option<tracing_appender::non_blocking::WorkerGuard>,
}

/// Installs the process's logger. Bad directives fall back to `info`.
pub fn init(settings: LogSettings) -> Result<LogGuard, LogError> {
    let filter =
        EnvFilter::try_new(&settings.directives).unwrap_or_else(|_| EnvFilter::new("info"));
    let (filter, handle) = reload::Layer::new(filter);
    let stderr = fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal());
    let (file_layer, guard) = match &settings.file {
        Some(f) => {
            let (writer, guard) = tracing_appender::non_blocking(f.open()?);
            (
                Some(fmt::layer().with_writer(writer).with_ansi(false)),
                Some(guard),
            )
        }
        None => (None, None),
    };
    tracing_subscriber::registry()
        .with(filter)
        .with(peer_down::PeerDownLimiter::new(peer_down::PEER_DOWN_EVERY))
        .with(stderr)
        .with(file_layer)
        .try_init()
        .map_err(|_| LogError::AlreadySet)?;
    level::install(handle, &settings.directives);
    Ok(LogGuard { _file: guard })
}

/// The span a daemon runs in: `daemon{name=datanode-1}:` starts each of its lines. At ERROR
/// level so that it is never filtered out while any of its lines is written.
pub fn daemon_span(name: &str) -> tracing::Span {
    tracing::error_span!("daemon", name = %name)
}
