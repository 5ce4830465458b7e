//! Build facts for `rhdfs version`: the git revision of the source tree and the build date,
//! taken from `git` and `date` when they are there ("unknown" otherwise).

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
    println!("cargo:rustc-env=RHDFS_GIT_REVISION={revision}");
    println!("cargo:rustc-env=RHDFS_BUILD_DATE={date}");
    // A new commit changes the revision; nothing else needs a rebuild of these facts.
    for head in ["../../.git/HEAD", "../../.git/refs/heads"] {
        println!("cargo:rerun-if-changed={head}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
