//! `rhdfs debug recoverLease -path P [-retries N]`: asks the NameNode to recover the lease of a
//! file left open, as `hdfs debug recoverLease` does — up to N tries 5 s apart, exit 0 once the
//! NameNode says the file is closed.

use std::time::Duration;

use anyhow::Result;
use rhdfs_client::FileSystem;
use rhdfs_conf::{Configuration, keys};

use crate::args::take_value;

/// Between tries, as Hadoop's DebugAdmin waits.
const RETRY_DELAY: Duration = Duration::from_millis(5000);

pub(super) async fn run(mut conf: Configuration, mut rest: Vec<String>) -> Result<i32> {
    let path = take_value(&mut rest, &["-path"])?;
    let retries = take_value(&mut rest, &["-retries"])?;
    let Some(path) = path else {
        eprintln!("You must supply a -path argument to recoverLease.");
        return Ok(1);
    };
    let max_tries = match retries.as_deref().map(str::parse::<i32>) {
        None => 1,
        Some(Ok(n)) => n,
        Some(Err(e)) => {
            eprintln!("Failed to parse the argument to -retries: {e}");
            return Ok(1);
        }
    };
    let target = match Target::of(&path) {
        Ok(t) => t,
        Err(scheme) => {
            eprintln!("Invalid filesystem for path {path}: needed scheme hdfs, but got: {scheme}");
            return Ok(1);
        }
    };
    if let Some(fs_uri) = &target.fs_uri {
        conf.set(keys::FS_DEFAULT_FS_KEY, fs_uri);
    }
    let fs = FileSystem::from_conf(conf).await?;
    let mut tries = 0;
    loop {
        match fs.recover_lease(&target.path).await {
            Ok(true) => {
                println!("recoverLease SUCCEEDED on {path}");
                return Ok(0);
            }
            Ok(false) => eprintln!("recoverLease returned false."),
            Err(e) if e.class_name() == rhdfs_client::error::class::FILE_NOT_FOUND => {
                eprintln!("recoverLease got exception: {}", e.message());
                eprintln!("Giving up on recoverLease for {path} after 1 try");
                return Ok(1);
            }
            Err(e) => eprintln!("recoverLease got exception: {}", e.message()),
        }
        tries += 1;
        if tries >= max_tries {
            break;
        }
        eprintln!("Retrying in {} ms...", RETRY_DELAY.as_millis());
        tokio::time::sleep(RETRY_DELAY).await;
        eprintln!("Retry #{tries}");
    }
    let word = if max_tries == 1 { "try." } else { "tries." };
    eprintln!("Giving up on recoverLease for {path} after {max_tries} {word}");
    Ok(1)
}

/// Where `-path` points: the file system (`hdfs://authority`, or the default one for a
/// path without a scheme) and the path in it.
#[derive(Debug, PartialEq, Eq)]
struct Target {
    fs_uri: Option<String>,
    path: String,
}

impl Target {
    /// The target, or the scheme of a path on another file system.
    fn of(p: &str) -> Result<Self, String> {
        let Some((scheme, rest)) = p.split_once("://") else {
            return Ok(Target {
                fs_uri: None,
                path: p.to_string(),
            });
        };
        if !scheme.eq_ignore_ascii_case("hdfs") {
            return Err(scheme.to_string());
        }
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        Ok(Target {
            fs_uri: (!authority.is_empty()).then(|| format!("hdfs://{authority}")),
            path: path.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_uris_name_their_file_system() {
        assert_eq!(
            Target::of("/a/b"),
            Ok(Target {
                fs_uri: None,
                path: "/a/b".into()
            })
        );
        assert_eq!(
            Target::of("hdfs://nn:8020/a"),
            Ok(Target {
                fs_uri: Some("hdfs://nn:8020".into()),
                path: "/a".into()
            })
        );
        assert_eq!(
            Target::of("hdfs:///a"),
            Ok(Target {
                fs_uri: None,
                path: "/a".into()
            })
        );
        assert_eq!(Target::of("file:///tmp/x"), Err("file".into()));
        assert_eq!(Target::of("webhdfs://nn:9870/x"), Err("webhdfs".into()));
    }
}
