//! What was built: version, source revision and build date, for `rhdfs_build_info` and the
//! Version / CompileInfo bean attributes.

/// The package version (Hadoop's "Version" carries the revision after a comma).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// `git rev-parse HEAD` at build time, or "unknown".
pub const REVISION: &str = env!("RHDFS_METRICS_GIT_REVISION");
/// UTC build date, or "unknown".
pub const BUILD_DATE: &str = env!("RHDFS_METRICS_BUILD_DATE");

/// Hadoop's `Version` attribute form: `<version>, r<revision>`.
pub fn version_with_revision() -> String {
    format!("{VERSION}, r{REVISION}")
}

/// Hadoop's `CompileInfo` form: `<date> by <user> from <branch>`.
pub fn compile_info() -> String {
    format!("{BUILD_DATE} by rhdfs from {REVISION}")
}

/// Writes `rhdfs_build_info{version, revision, build_date} 1` and the process families.
pub fn expose(e: &mut crate::Exposition, daemon: &str) {
    e.gauges(
        "rhdfs_build_info",
        "A metric with a constant 1 labelled by the daemon, version, source revision and build date.",
        [(
            vec![
                ("daemon", daemon.to_string()),
                ("version", VERSION.to_string()),
                ("revision", REVISION.to_string()),
                ("build_date", BUILD_DATE.to_string()),
            ],
            1.0,
        )],
    );
    crate::process::expose(e, &crate::process::read());
}
