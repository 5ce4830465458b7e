//! Build facts for the `build_info` metric and the NameNodeInfo/DataNodeInfo beans: the git
//! revision of the source tree and the build date ("unknown" when git or date is missing).

use std::process::Command;

fn output(cmd: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(cmd).args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

fn main() {
    let revision = output("git", &["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let date = output("date", &["-u", "+%Y-%m-%dT%H:%MZ"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=RHDFS_METRICS_GIT_REVISION={revision}");
    println!("cargo:rustc-env=RHDFS_METRICS_BUILD_DATE={date}");
    // A new commit changes the revision. Watch only paths that exist (a missing one would
    // rerun this script, and rebuild every dependent crate, on every build); in a git
    // worktree HEAD and the refs live in different directories.
    let git_dir = output("git", &["rev-parse", "--absolute-git-dir"]);
    let common = output("git", &["rev-parse", "--git-common-dir"]);
    let watch = [
        git_dir.map(|d| format!("{d}/HEAD")),
        common.map(|d| format!("{d}/refs/heads")),
    ];
    for p in watch.into_iter().flatten() {
        if std::path::Path::new(&p).exists() {
            println!("cargo:rerun-if-changed={p}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
