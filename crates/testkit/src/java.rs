//! Runs Apache Hadoop's `org.apache.hadoop.fs.FsShell` (the code behind `hdfs dfs`) from the
//! client jars that `scripts/install-hadoop-client.sh` puts in `~/.cache/rhdfs/hadoop-client`
//! (or `$RHDFS_HADOOP_CLIENT_DIR`).
//!
//! When the jars (or `java`) are missing, [`JavaShell::new`] prints a loud `SKIPPED` line and
//! returns `None`, unless `RHDFS_REQUIRE_JAVA=1`, in which case it fails the test.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, bail};
use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStdin, Command};

/// Default time limit for one FsShell run (JVM start included); the process is killed after it.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

pub const API_JAR: &str = "hadoop-client-api-3.5.0.jar";
pub const RUNTIME_JAR: &str = "hadoop-client-runtime-3.5.0.jar";

/// Output of one FsShell run.
#[derive(Debug)]
pub struct ShellOutput {
    pub args: Vec<String>,
    /// Exit code (`None` when killed by a signal).
    pub code: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

impl ShellOutput {
    pub fn stdout_str(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// stdout lines, empty lines dropped.
    pub fn lines(&self) -> Vec<String> {
        self.stdout_str()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_owned)
            .collect()
    }

    /// stdout as rows of whitespace-separated columns (`-ls`, `-du`, `-count`, `-df`).
    pub fn rows(&self) -> Vec<Vec<String>> {
        self.lines()
            .iter()
            .map(|l| l.split_whitespace().map(str::to_owned).collect())
            .collect()
    }

    /// stderr without the SLF4J "no providers" chatter.
    pub fn errors(&self) -> String {
        self.stderr
            .lines()
            .filter(|l| !l.starts_with("SLF4J"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Fails unless the exit code is 0; returns self for further checks.
    #[track_caller]
    pub fn ok(self) -> Self {
        if self.code != Some(0) {
            panic!(
                "FsShell {:?} exited with {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
                self.args,
                self.code,
                truncate(&self.stdout_str(), 4000),
                truncate(&self.errors(), 8000)
            );
        }
        self
    }

    /// Fails unless the exit code is `code`.
    #[track_caller]
    pub fn code_is(self, code: i32) -> Self {
        if self.code != Some(code) {
            panic!(
                "FsShell {:?}: expected exit code {code}, got {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
                self.args,
                self.code,
                truncate(&self.stdout_str(), 4000),
                truncate(&self.errors(), 8000)
            );
        }
        self
    }
}

fn truncate(s: &str, n: usize) -> String {
    if s.len() <= n {
        s.to_owned()
    } else {
        let mut cut = n;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}... [{} more bytes]", &s[..cut], s.len() - cut)
    }
}

/// Directory holding the Hadoop client jars.
pub fn client_dir() -> PathBuf {
    match std::env::var_os("RHDFS_HADOOP_CLIENT_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => {
            // Where scripts/install-hadoop-client.sh puts them by default, else the repo's cache.
            let home = std::env::var_os("HOME")
                .map(|h| PathBuf::from(h).join(".cache/rhdfs/hadoop-client"));
            match home {
                Some(h) if h.join("hadoop-client-api-3.5.0.jar").is_file() => h,
                _ => crate::repo_root().join(".cache").join("hadoop-client"),
            }
        }
    }
}

fn java_required() -> bool {
    std::env::var("RHDFS_REQUIRE_JAVA").is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true"))
}

/// Why the Java client cannot run here, or `None` when it can.
fn missing_reason(dir: &Path) -> Option<String> {
    for jar in [API_JAR, RUNTIME_JAR] {
        if !dir.join(jar).is_file() {
            return Some(format!(
                "{} not found (run scripts/install-hadoop-client.sh, or set RHDFS_HADOOP_CLIENT_DIR)",
                dir.join(jar).display()
            ));
        }
    }
    match std::process::Command::new("java").arg("-version").output() {
        Ok(o) if o.status.success() => None,
        Ok(o) => Some(format!(
            "`java -version` failed: {}",
            String::from_utf8_lossy(&o.stderr)
        )),
        Err(e) => Some(format!("cannot run `java`: {e}")),
    }
}

/// FsShell runner bound to one NameNode URI, with its own configuration directory.
pub struct JavaShell {
    conf_dir: tempfile::TempDir,
    jars: PathBuf,
    uri: String,
    /// Extra `-D key=value` generic options put before every command.
    defines: Vec<(String, String)>,
    pub timeout: Duration,
}

impl JavaShell {
    /// `Ok(None)` (after printing a SKIPPED line) when the Java client is not installed and
    /// `RHDFS_REQUIRE_JAVA` is not `1`; `Err` when it is required but missing.
    pub fn new(uri: &str, test: &str) -> anyhow::Result<Option<Self>> {
        Self::with_conf(uri, test, &[])
    }

    /// Like [`JavaShell::new`], with extra properties written into core-site.xml.
    pub fn with_conf(
        uri: &str,
        test: &str,
        extra: &[(&str, &str)],
    ) -> anyhow::Result<Option<Self>> {
        let jars = client_dir();
        if let Some(why) = missing_reason(&jars) {
            if java_required() {
                bail!(
                    "{test}: the Hadoop Java client is required (RHDFS_REQUIRE_JAVA=1) but {why}"
                );
            }
            eprintln!(
                "\n**************** SKIPPED (Java client): {test}: {why}; set RHDFS_REQUIRE_JAVA=1 to make this a failure ****************\n"
            );
            return Ok(None);
        }
        let conf_dir = tempfile::Builder::new()
            .prefix("rhdfs-java-conf")
            .tempdir()?;
        let mut props: Vec<(String, String)> = vec![
            ("fs.defaultFS".into(), uri.to_owned()),
            ("dfs.client.use.datanode.hostname".into(), "false".into()),
            // Fail fast instead of 10 connect retries per call when something is down.
            ("ipc.client.connect.max.retries".into(), "3".into()),
            ("ipc.client.connect.retry.interval".into(), "500".into()),
        ];
        for (k, v) in extra {
            props.retain(|(pk, _)| pk != k);
            props.push(((*k).to_owned(), (*v).to_owned()));
        }
        write_site_xml(&conf_dir.path().join("core-site.xml"), &props)?;
        // An empty hdfs-site.xml so nothing from a stray HADOOP_CONF_DIR leaks in.
        write_site_xml(&conf_dir.path().join("hdfs-site.xml"), &[])?;
        Ok(Some(Self {
            conf_dir,
            jars,
            uri: uri.to_owned(),
            defines: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
        }))
    }

    pub fn uri(&self) -> &str {
        &self.uri
    }

    pub fn conf_dir(&self) -> &Path {
        self.conf_dir.path()
    }

    /// Adds a `-D key=value` generic option to every later command.
    pub fn define(&mut self, key: &str, value: &str) {
        self.defines.push((key.to_owned(), value.to_owned()));
    }

    fn command(&self, args: &[&str], env: &[(&str, &str)]) -> (Command, Vec<String>) {
        let sep = if cfg!(windows) { ";" } else { ":" };
        let cp = format!(
            "{}{sep}{}",
            self.conf_dir.path().display(),
            self.jars.join("*").display()
        );
        let mut cmd = Command::new("java");
        cmd.arg("-Xmx512m")
            .arg("-XX:+UseSerialGC")
            .arg("-XX:TieredStopAtLevel=1")
            .arg("-Djava.net.preferIPv4Stack=true")
            .arg("-cp")
            .arg(cp)
            .arg("org.apache.hadoop.fs.FsShell");
        let mut shown = Vec::new();
        for (k, v) in &self.defines {
            cmd.arg("-D").arg(format!("{k}={v}"));
            shown.push(format!("-D {k}={v}"));
        }
        cmd.args(args);
        shown.extend(args.iter().map(|s| s.to_string()));
        cmd.env_remove("HADOOP_CONF_DIR")
            .env_remove("HADOOP_USER_NAME")
            .env_remove("HADOOP_PROXY_USER")
            .env_remove("CLASSPATH")
            .env_remove("JAVA_TOOL_OPTIONS");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.kill_on_drop(true);
        (cmd, shown)
    }

    /// Runs `FsShell <args>` with the default timeout.
    pub async fn run(&self, args: &[&str]) -> anyhow::Result<ShellOutput> {
        self.run_env(args, &[]).await
    }

    /// Runs `FsShell <args>` with extra environment variables (e.g. `HADOOP_USER_NAME`).
    pub async fn run_env(
        &self,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> anyhow::Result<ShellOutput> {
        let (mut cmd, shown) = self.command(args, env);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let child = cmd.spawn().context("spawning java")?;
        wait(child, shown, self.timeout).await
    }

    /// Spawns `FsShell <args>` with a piped stdin (for `-put - <dst>`); its stdout and stderr are
    /// drained in the background. Take `stdin`, feed it, drop it, then [`Running::finish`].
    pub fn spawn_with_stdin(&self, args: &[&str]) -> anyhow::Result<Running> {
        let (mut cmd, shown) = self.command(args, &[]);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let child = cmd.spawn().context("spawning java")?;
        Running::new(child, shown)
    }
}

/// A spawned FsShell whose output is being collected.
pub struct Running {
    child: Child,
    args: Vec<String>,
    pub stdin: Option<ChildStdin>,
    out_task: tokio::task::JoinHandle<Vec<u8>>,
    err_task: tokio::task::JoinHandle<Vec<u8>>,
}

fn drain<R: tokio::io::AsyncRead + Unpin + Send + 'static>(
    mut r: R,
) -> tokio::task::JoinHandle<Vec<u8>> {
    tokio::spawn(async move {
        let mut v = Vec::new();
        let _ = r.read_to_end(&mut v).await;
        v
    })
}

impl Running {
    fn new(mut child: Child, args: Vec<String>) -> anyhow::Result<Self> {
        let out = child.stdout.take().context("stdout not piped")?;
        let err = child.stderr.take().context("stderr not piped")?;
        let stdin = child.stdin.take();
        Ok(Self {
            child,
            args,
            stdin,
            out_task: drain(out),
            err_task: drain(err),
        })
    }

    /// Closes stdin (if still open) and waits for the exit; kills the process after `timeout`.
    pub async fn finish(mut self, timeout: Duration) -> anyhow::Result<ShellOutput> {
        drop(self.stdin.take());
        let status = match tokio::time::timeout(timeout, self.child.wait()).await {
            Ok(s) => s?,
            Err(_) => {
                let _ = self.child.kill().await;
                let stderr = self.err_task.await.unwrap_or_default();
                bail!(
                    "FsShell {:?} did not finish within {timeout:?}; killed it. stderr:\n{}",
                    self.args,
                    String::from_utf8_lossy(&stderr)
                );
            }
        };
        let stdout = self.out_task.await.unwrap_or_default();
        let stderr = String::from_utf8_lossy(&self.err_task.await.unwrap_or_default()).into_owned();
        Ok(ShellOutput {
            args: self.args,
            code: status.code(),
            stdout,
            stderr,
        })
    }
}

/// Waits for a spawned FsShell, reading stdout/stderr concurrently; kills it after `timeout`.
pub async fn wait(
    child: Child,
    args: Vec<String>,
    timeout: Duration,
) -> anyhow::Result<ShellOutput> {
    Running::new(child, args)?.finish(timeout).await
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Writes a Hadoop `*-site.xml` with the given properties.
pub fn write_site_xml(path: &Path, props: &[(String, String)]) -> anyhow::Result<()> {
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<configuration>\n");
    for (k, v) in props {
        s.push_str(&format!(
            "  <property><name>{}</name><value>{}</value></property>\n",
            xml_escape(k),
            xml_escape(v)
        ));
    }
    s.push_str("</configuration>\n");
    std::fs::write(path, s).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}
