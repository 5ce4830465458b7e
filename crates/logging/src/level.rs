//! Log levels changed while the process runs, as Hadoop's `/logLevel` servlet does: a level
//! per target (a module path such as `rhdfs_namenode::safemode`, or `root` for the default),
//! taking log4j's level names.

use std::sync::OnceLock;

use parking_lot::Mutex;
use tracing_subscriber::{EnvFilter, Registry, reload};

/// Why a level could not be set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LevelError {
    #[error("Bad Level : {0}")]
    BadLevel(String),
    #[error("Bad log name : {0}")]
    BadTarget(String),
    #[error("log levels are not managed in this process")]
    NotManaged,
    #[error("cannot change the filter: {0}")]
    Reload(String),
}

struct Control {
    handle: reload::Handle<EnvFilter, Registry>,
    directives: Mutex<Directives>,
}

static CONTROL: OnceLock<Control> = OnceLock::new();

pub(crate) fn install(handle: reload::Handle<EnvFilter, Registry>, directives: &str) {
    let _ = CONTROL.set(Control {
        handle,
        directives: Mutex::new(Directives::parse(directives)),
    });
}

/// The tracing level of a log4j level name (ALL, TRACE, DEBUG, INFO, WARN, ERROR, FATAL, OFF;
/// any case).
pub fn parse_level(level: &str) -> Result<&'static str, LevelError> {
    Ok(match level.trim().to_ascii_uppercase().as_str() {
        "ALL" | "TRACE" => "TRACE",
        "DEBUG" => "DEBUG",
        "INFO" => "INFO",
        "WARN" => "WARN",
        "ERROR" | "FATAL" => "ERROR",
        "OFF" => "OFF",
        _ => return Err(LevelError::BadLevel(level.to_string())),
    })
}

/// Sets `target`'s level (`root`: the default); returns the level now in effect for it.
pub fn set_level(target: &str, level: &str) -> Result<String, LevelError> {
    let level = parse_level(level)?;
    let target = target.trim();
    if !target
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ':' | '.' | '-'))
        || target.is_empty()
    {
        return Err(LevelError::BadTarget(target.to_string()));
    }
    let control = CONTROL.get().ok_or(LevelError::NotManaged)?;
    let mut d = control.directives.lock();
    let mut next = d.clone();
    next.set(target, level);
    let filter =
        EnvFilter::try_new(next.render()).map_err(|e| LevelError::Reload(e.to_string()))?;
    control
        .handle
        .reload(filter)
        .map_err(|e| LevelError::Reload(e.to_string()))?;
    *d = next;
    Ok(d.effective(target).to_string())
}

/// The level in effect for `target`; None when this process's levels are not managed here.
pub fn effective_level(target: &str) -> Option<String> {
    let control = CONTROL.get()?;
    Some(
        control
            .directives
            .lock()
            .effective(target.trim())
            .to_string(),
    )
}

/// The filter as `target=LEVEL` directives plus a default.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Directives {
    default: String,
    /// (target, level), in the order given; a later one for the same target replaces it.
    targets: Vec<(String, String)>,
    /// Directives this model does not interpret (span filters), kept as they are.
    other: Vec<String>,
}

impl Directives {
    fn parse(s: &str) -> Self {
        let mut d = Directives {
            default: "ERROR".to_string(),
            targets: Vec::new(),
            other: Vec::new(),
        };
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            if part.contains('[') {
                d.other.push(part.to_string());
                continue;
            }
            match part.split_once('=') {
                Some((t, l)) => match parse_level(l) {
                    Ok(l) => d.set(t.trim(), l),
                    Err(_) => d.other.push(part.to_string()),
                },
                None => match parse_level(part) {
                    Ok(l) => d.default = l.to_string(),
                    Err(_) => d.targets.push((part.to_string(), "TRACE".to_string())),
                },
            }
        }
        d
    }

    fn set(&mut self, target: &str, level: &str) {
        if target == "root" {
            self.default = level.to_string();
            return;
        }
        self.targets.retain(|(t, _)| t != target);
        self.targets.push((target.to_string(), level.to_string()));
    }

    fn effective(&self, target: &str) -> &str {
        if target == "root" {
            return &self.default;
        }
        self.targets
            .iter()
            .filter(|(t, _)| {
                target == t
                    || target
                        .strip_prefix(t.as_str())
                        .is_some_and(|rest| rest.starts_with("::"))
            })
            .max_by_key(|(t, _)| t.len())
            .map(|(_, l)| l.as_str())
            .unwrap_or(&self.default)
    }

    fn render(&self) -> String {
        let mut parts = vec![self.default.to_ascii_lowercase()];
        parts.extend(
            self.targets
                .iter()
                .map(|(t, l)| format!("{t}={}", l.to_ascii_lowercase())),
        );
        parts.extend(self.other.iter().cloned());
        parts.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log4j_level_names() {
        assert_eq!(parse_level("debug"), Ok("DEBUG"));
        assert_eq!(parse_level("FATAL"), Ok("ERROR"));
        assert_eq!(parse_level("ALL"), Ok("TRACE"));
        assert!(parse_level("LOUD").is_err());
    }

    #[test]
    fn directives_set_and_resolve_by_longest_prefix() {
        let mut d = Directives::parse("info,rhdfs_namenode=warn");
        assert_eq!(d.effective("rhdfs_namenode::safemode"), "WARN");
        assert_eq!(d.effective("rhdfs_namenodex"), "INFO");
        d.set("rhdfs_namenode::safemode", "DEBUG");
        assert_eq!(d.effective("rhdfs_namenode::safemode"), "DEBUG");
        assert_eq!(d.effective("rhdfs_namenode::rpc"), "WARN");
        d.set("root", "ERROR");
        assert_eq!(d.effective("rhdfs_datanode"), "ERROR");
        assert_eq!(
            d.render(),
            "error,rhdfs_namenode=warn,rhdfs_namenode::safemode=debug"
        );
        assert!(EnvFilter::try_new(d.render()).is_ok());
    }
}
