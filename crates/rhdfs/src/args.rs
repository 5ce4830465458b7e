//! Hadoop-style command-line arguments: `-D key=value`, `--config DIR` / `-conf FILE`, and the
//! flags of each subcommand.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use rhdfs_conf::Configuration;

/// Options every daemon command understands.
#[derive(Debug, Default)]
pub struct CommonArgs {
    /// `-D key=value`, in order.
    pub defines: Vec<String>,
    /// `--config DIR` (like `hadoop --config`); falls back to `HADOOP_CONF_DIR`.
    pub config_dir: Option<PathBuf>,
    /// `-conf FILE`: extra resource files.
    pub resources: Vec<PathBuf>,
    /// `--log-dir DIR`: the daemons' log directory (before `HADOOP_LOG_DIR`).
    pub log_dir: Option<PathBuf>,
}

impl CommonArgs {
    /// Takes the common options out of `args`, returning what is left.
    pub fn extract(args: Vec<String>) -> Result<(Self, Vec<String>)> {
        let mut common = CommonArgs::default();
        let mut rest = Vec::new();
        let mut it = args.into_iter();
        while let Some(a) = it.next() {
            match a.as_str() {
                "-D" => {
                    let v = it.next().context("-D needs key=value")?;
                    common.defines.push(v);
                }
                s if s.starts_with("-D") && s.len() > 2 => common.defines.push(s[2..].to_string()),
                "--config" | "-config" => {
                    let v = it.next().context("--config needs a directory")?;
                    common.config_dir = Some(PathBuf::from(v));
                }
                "--log-dir" | "-log-dir" => {
                    let v = it.next().context("--log-dir needs a directory")?;
                    common.log_dir = Some(PathBuf::from(v));
                }
                "-conf" | "--conf" => {
                    let v = it.next().context("-conf needs a file")?;
                    common.resources.push(PathBuf::from(v));
                }
                _ => rest.push(a),
            }
        }
        Ok((common, rest))
    }

    /// The configuration: `--config DIR` or `HADOOP_CONF_DIR` (core-site.xml, hdfs-site.xml),
    /// then `-conf` files, then `-D` definitions.
    pub fn configuration(&self) -> Result<Configuration> {
        let mut conf = match &self.config_dir {
            Some(dir) => Configuration::load_dir(dir)
                .with_context(|| format!("reading configuration from {}", dir.display()))?,
            None => Configuration::from_env().context("reading HADOOP_CONF_DIR")?,
        };
        for r in &self.resources {
            conf.add_resource(r)
                .with_context(|| format!("reading {}", r.display()))?;
        }
        for d in &self.defines {
            conf.apply_define(d)
                .with_context(|| format!("bad -D {d}"))?;
        }
        Ok(conf)
    }
}

/// Takes `--name VALUE` (or `-name VALUE`) out of `rest`.
pub fn take_value(rest: &mut Vec<String>, names: &[&str]) -> Result<Option<String>> {
    if let Some(pos) = rest.iter().position(|a| names.contains(&a.as_str())) {
        if pos + 1 >= rest.len() {
            bail!("{} needs a value", rest[pos]);
        }
        let v = rest.remove(pos + 1);
        rest.remove(pos);
        return Ok(Some(v));
    }
    Ok(None)
}

/// Takes a flag out of `rest`; true when it was there.
pub fn take_flag(rest: &mut Vec<String>, names: &[&str]) -> bool {
    let before = rest.len();
    rest.retain(|a| !names.contains(&a.as_str()));
    rest.len() != before
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn extracts_defines_and_config() {
        let (c, rest) = CommonArgs::extract(v(&[
            "-D",
            "a=1",
            "-Db=2",
            "--config",
            "/etc/x",
            "--datanodes",
            "4",
            "--log-dir",
            "/var/log/x",
        ]))
        .unwrap();
        assert_eq!(c.defines, vec!["a=1", "b=2"]);
        assert_eq!(c.config_dir, Some(PathBuf::from("/etc/x")));
        assert_eq!(c.log_dir, Some(PathBuf::from("/var/log/x")));
        assert_eq!(rest, v(&["--datanodes", "4"]));
    }

    #[test]
    fn takes_values_and_flags() {
        let mut rest = v(&["--datanodes", "5", "-format"]);
        assert_eq!(
            take_value(&mut rest, &["--datanodes"]).unwrap(),
            Some("5".to_string())
        );
        assert!(take_flag(&mut rest, &["-format"]));
        assert!(rest.is_empty());
        let mut bad = v(&["--dir"]);
        assert!(take_value(&mut bad, &["--dir"]).is_err());
    }
}
