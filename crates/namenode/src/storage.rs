//! The name directories: `<dfs.namenode.name.dir>/current/VERSION` holds the namespace
//! identity (namespace id, cluster id, block pool id, ctime), written at format time and
//! reused on every start.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use rand::Rng;
use rhdfs_blockmanager::NamespaceInfo;
use rhdfs_conf::{Configuration, keys};

use crate::NameNodeError;

/// Hadoop's NameNode layout version for 3.x (written for tools that read VERSION).
pub const LAYOUT_VERSION: i32 = -66;

/// The configured name directories (`file://` prefixes stripped).
pub fn name_dirs(conf: &Configuration) -> Result<Vec<PathBuf>, NameNodeError> {
    let dirs: Vec<PathBuf> = conf
        .get_list(keys::DFS_NAMENODE_NAME_DIR_KEY)
        .iter()
        .map(|d| PathBuf::from(d.strip_prefix("file://").unwrap_or(d)))
        .filter(|p| !p.as_os_str().is_empty())
        .collect();
    if dirs.is_empty() {
        return Err(NameNodeError::Storage(format!(
            "{} names no directory",
            keys::DFS_NAMENODE_NAME_DIR_KEY
        )));
    }
    Ok(dirs)
}

fn version_path(dir: &Path) -> PathBuf {
    dir.join("current").join("VERSION")
}

fn is_empty_dir(dir: &Path) -> Result<bool, NameNodeError> {
    match fs::read_dir(dir) {
        Ok(mut it) => Ok(it.next().is_none()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(true),
        Err(e) => Err(NameNodeError::Storage(format!(
            "cannot read {}: {e}",
            dir.display()
        ))),
    }
}

/// A fresh namespace identity. `ip` goes into the block pool id.
pub fn new_namespace_info(ip: &str, now_ms: u64) -> NamespaceInfo {
    let mut rng = rand::rng();
    let namespace_id = rng.random_range(1..i32::MAX as u32);
    let bp_rand = rng.random_range(1..i32::MAX as u32);
    NamespaceInfo {
        namespace_id,
        cluster_id: format!("CID-{}", uuid::Uuid::new_v4()),
        block_pool_id: format!("BP-{bp_rand}-{ip}-{now_ms}"),
        ctime: 0,
    }
}

fn render_version(ns: &NamespaceInfo) -> String {
    format!(
        "#rhdfs NameNode storage\nnamespaceID={}\nclusterID={}\ncTime={}\nstorageType=NAME_NODE\nblockpoolID={}\nlayoutVersion={LAYOUT_VERSION}\n",
        ns.namespace_id, ns.cluster_id, ns.ctime, ns.block_pool_id
    )
}

fn parse_version(path: &Path, text: &str) -> Result<NamespaceInfo, NameNodeError> {
    let props: BTreeMap<&str, &str> = text
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim(), v.trim()))
        .collect();
    let get = |k: &str| {
        props
            .get(k)
            .copied()
            .ok_or_else(|| NameNodeError::Storage(format!("{}: no {k}", path.display())))
    };
    let bad = |k: &str| NameNodeError::Storage(format!("{}: bad {k}", path.display()));
    if get("storageType")? != "NAME_NODE" {
        return Err(NameNodeError::Storage(format!(
            "{}: not a NameNode storage directory",
            path.display()
        )));
    }
    Ok(NamespaceInfo {
        namespace_id: get("namespaceID")?
            .parse()
            .map_err(|_| bad("namespaceID"))?,
        cluster_id: get("clusterID")?.to_string(),
        block_pool_id: get("blockpoolID")?.to_string(),
        ctime: get("cTime")?.parse().map_err(|_| bad("cTime"))?,
    })
}

fn write_version(dir: &Path, ns: &NamespaceInfo) -> Result<(), NameNodeError> {
    let io =
        |e: std::io::Error| NameNodeError::Storage(format!("cannot write {}: {e}", dir.display()));
    let current = dir.join("current");
    fs::create_dir_all(&current).map_err(io)?;
    let tmp = current.join("VERSION.tmp");
    let mut f = fs::File::create(&tmp).map_err(io)?;
    f.write_all(render_version(ns).as_bytes()).map_err(io)?;
    f.sync_all().map_err(io)?;
    fs::rename(&tmp, version_path(dir)).map_err(io)?;
    Ok(())
}

/// Formats every name directory with a new identity. A directory that is not empty is
/// refused unless `force`.
pub fn format_dirs(
    dirs: &[PathBuf],
    ip: &str,
    now_ms: u64,
    force: bool,
) -> Result<NamespaceInfo, NameNodeError> {
    for d in dirs {
        if !force && !is_empty_dir(d)? {
            return Err(NameNodeError::Storage(format!(
                "name directory {} is not empty; format with -force to overwrite it",
                d.display()
            )));
        }
    }
    let ns = new_namespace_info(ip, now_ms);
    for d in dirs {
        if force && d.join("current").exists() {
            fs::remove_dir_all(d.join("current")).map_err(|e| {
                NameNodeError::Storage(format!("cannot clear {}: {e}", d.display()))
            })?;
        }
        write_version(d, &ns)?;
    }
    tracing::info!(cluster = %ns.cluster_id, pool = %ns.block_pool_id, "formatted the namespace");
    Ok(ns)
}

/// Loads the identity from the first directory holding a VERSION (copying it to the
/// others), or formats when every directory is empty. A non-empty directory without a
/// VERSION is an error.
pub fn load_or_format(
    dirs: &[PathBuf],
    ip: &str,
    now_ms: u64,
) -> Result<NamespaceInfo, NameNodeError> {
    for d in dirs {
        let p = version_path(d);
        if p.exists() {
            let text = fs::read_to_string(&p)
                .map_err(|e| NameNodeError::Storage(format!("cannot read {}: {e}", p.display())))?;
            let ns = parse_version(&p, &text)?;
            for other in dirs {
                if !version_path(other).exists() && is_empty_dir(other)? {
                    write_version(other, &ns)?;
                }
            }
            return Ok(ns);
        }
    }
    for d in dirs {
        if !is_empty_dir(d)? {
            return Err(NameNodeError::Storage(format!(
                "name directory {} is not formatted and not empty",
                d.display()
            )));
        }
    }
    format_dirs(dirs, ip, now_ms, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_then_reload_keeps_ids() {
        let t = tempfile::tempdir().unwrap();
        let dirs = vec![t.path().join("a"), t.path().join("b")];
        let ns = load_or_format(&dirs, "127.0.0.1", 1234).unwrap();
        assert!(ns.block_pool_id.starts_with("BP-"));
        assert!(ns.block_pool_id.ends_with("-127.0.0.1-1234"));
        assert!(ns.cluster_id.starts_with("CID-"));
        assert!(ns.namespace_id > 0);
        let again = load_or_format(&dirs, "127.0.0.1", 9999).unwrap();
        assert_eq!(ns, again);
        assert!(dirs[1].join("current/VERSION").exists());
        assert!(format_dirs(&dirs, "127.0.0.1", 1, false).is_err());
        let fresh = format_dirs(&dirs, "127.0.0.1", 1, true).unwrap();
        assert_ne!(fresh.cluster_id, ns.cluster_id);
    }

    #[test]
    fn refuses_foreign_directory() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("junk"), b"x").unwrap();
        assert!(load_or_format(&[t.path().to_path_buf()], "127.0.0.1", 1).is_err());
        std::fs::create_dir_all(t.path().join("current")).unwrap();
        std::fs::write(t.path().join("current/VERSION"), "storageType=DATA_NODE\n").unwrap();
        assert!(load_or_format(&[t.path().to_path_buf()], "127.0.0.1", 1).is_err());
    }
}
