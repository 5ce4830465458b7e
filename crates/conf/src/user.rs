//! The current user and groups, as Hadoop's simple authentication sees them.

use std::process::Command;

/// The user name: `$HADOOP_USER_NAME` if set, else the OS user (`$USER`, `$LOGNAME`, then
/// `id -un`), else `"unknown"`.
pub fn current_user() -> String {
    for var in ["HADOOP_USER_NAME", "USER", "LOGNAME"] {
        if let Ok(v) = std::env::var(var) {
            let v = v.trim();
            if !v.is_empty() {
                return v.to_string();
            }
        }
    }
    run_id(&["-un"])
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "unknown".to_string())
}

/// The groups of the current user, best effort (`id -Gn`); empty when unknown.
///
/// When `HADOOP_USER_NAME` names a different user, that user's groups are looked up.
pub fn current_groups() -> Vec<String> {
    groups_of(&current_user())
}

/// The groups of `user`, best effort (`id -Gn user`); empty when unknown.
pub fn groups_of(user: &str) -> Vec<String> {
    run_id(&["-Gn", user])
        .map(|s| s.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

fn run_id(args: &[&str]) -> Option<String> {
    let out = Command::new("id").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8(out.stdout).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_is_not_empty() {
        assert!(!current_user().is_empty());
    }
}
