//! `namenode -bootstrapStandby`: a NameNode of an HA nameservice that has never run (or whose
//! directories are given up with `-force`) takes the storage identity and the newest image of
//! another NameNode of the nameservice (`/imagetransfer` on its HTTP port), formats its name
//! directories with them and starts its Raft log empty. At its first start it joins the Raft
//! group, which sends it the log; every edit after the image is applied from it (edits up to
//! the image's txid are skipped), so it catches up without the other NameNode's edit log.
//!
//! Exit codes are Hadoop's BootstrapStandby ones: 2 when no other NameNode answered, 3 when
//! the answer is not a usable image or identity, 5 when the directories are formatted and
//! `-force` was not given.

use rhdfs_conf::Configuration;
use rhdfs_conf::ha::{self, HaConfError, NameNodeAddrs};
use rhdfs_editlog::{ImageStore, StorageDirs, StorageVersion};

use crate::ha::member::RaftSettings;
use crate::ha::peer_image;
use crate::persist::PersistError;

#[derive(Debug, thiserror::Error)]
pub enum BootstrapError {
    #[error(transparent)]
    Conf(#[from] HaConfError),
    #[error("{0}")]
    ConfValue(#[from] rhdfs_conf::ConfError),
    #[error("bootstrapStandby needs an HA nameservice (dfs.nameservices, dfs.ha.namenodes.<ns>)")]
    NotHa,
    #[error("Unable to fetch namespace information from any remote NN. Possible NameNodes: {0}")]
    Unreachable(String),
    #[error("NameNode {from} sent no usable image: {reason}")]
    BadImage { from: String, reason: String },
    #[error("The storage directory {0} is already formatted; run with -force to re-bootstrap it")]
    AlreadyFormatted(String),
    #[error(transparent)]
    Persist(#[from] PersistError),
    #[error("{0}")]
    Io(String),
}

impl BootstrapError {
    /// The process exit code (Hadoop's BootstrapStandby codes).
    pub fn exit_code(&self) -> i32 {
        match self {
            BootstrapError::Unreachable(_) => 2,
            BootstrapError::BadImage { .. } => 3,
            BootstrapError::AlreadyFormatted(_) => 5,
            _ => 1,
        }
    }
}

/// What was bootstrapped, for the report Hadoop prints.
#[derive(Debug, Clone)]
pub struct Bootstrapped {
    pub nameservice: String,
    pub own: String,
    /// The NameNode the image came from.
    pub from: NameNodeAddrs,
    pub from_http: String,
    pub version: StorageVersion,
    pub image_txid: u64,
}

/// Runs bootstrapStandby for the NameNode `conf` configures (`force`: re-format directories
/// that hold a namespace or a Raft log).
pub async fn bootstrap_standby(
    conf: &Configuration,
    force: bool,
) -> Result<Bootstrapped, BootstrapError> {
    let mut conf = conf.clone();
    let (nameservice, own) = ha::apply_own_namenode(&mut conf)?.ok_or(BootstrapError::NotHa)?;
    let ns = ha::single_nameservice(&conf)?.ok_or(BootstrapError::NotHa)?;
    let dirs = StorageDirs::from_conf(&conf).map_err(PersistError::from)?;
    let raft_dir = RaftSettings::from_conf(&conf, dirs.roots().into_iter().next())
        .map_err(|e| BootstrapError::Io(e.to_string()))?
        .dir;
    if !force && let Some(d) = formatted(&dirs, &raft_dir) {
        return Err(BootstrapError::AlreadyFormatted(d));
    }
    let mut tried = Vec::new();
    for other in ns.namenodes.iter().filter(|n| n.id != own) {
        let http = peer_image::http_address(other);
        let (version, txid, payload) = match fetch(&http).await {
            Ok(Ok(image)) => image,
            Ok(Err(reason)) => {
                return Err(BootstrapError::BadImage {
                    from: format!("{} ({http})", other.id),
                    reason,
                });
            }
            Err(e) => {
                tracing::warn!(namenode = %other.id, %http, "cannot fetch the image: {e}");
                tried.push(format!("{}={http}", other.id));
                continue;
            }
        };
        let (c, v) = (conf.clone(), version.clone());
        tokio::task::spawn_blocking(move || install(&c, &raft_dir, &v, txid, &payload, force))
            .await
            .map_err(|e| BootstrapError::Io(format!("bootstrap task failed: {e}")))??;
        return Ok(Bootstrapped {
            nameservice,
            own,
            from: other.clone(),
            from_http: http,
            version,
            image_txid: txid,
        });
    }
    Err(BootstrapError::Unreachable(tried.join(", ")))
}

/// The first directory that holds a namespace or a Raft log, if any.
fn formatted(dirs: &StorageDirs, raft_dir: &std::path::Path) -> Option<String> {
    if dirs.is_formatted() {
        return dirs.roots().first().map(|d| d.display().to_string());
    }
    let raft_used = std::fs::read_dir(raft_dir).is_ok_and(|mut it| it.next().is_some());
    raft_used.then(|| raft_dir.display().to_string())
}

/// The identity and newest image of the NameNode at `http`: `Err` when it cannot be reached,
/// `Ok(Err(reason))` when its answer is not usable.
async fn fetch(http: &str) -> std::io::Result<Result<(StorageVersion, u64, Vec<u8>), String>> {
    let version = match peer_image::fetch_version(http).await? {
        Ok(v) => v,
        Err(reason) => return Ok(Err(reason)),
    };
    Ok(peer_image::fetch_newest_image(http)
        .await?
        .map(|(txid, payload)| (version, txid, payload)))
}

/// Formats the name directories with `version`, saves the image and empties the Raft log
/// directory. Blocking.
fn install(
    conf: &Configuration,
    raft_dir: &std::path::Path,
    version: &StorageVersion,
    txid: u64,
    payload: &[u8],
    force: bool,
) -> Result<(), BootstrapError> {
    let dirs = StorageDirs::from_conf(conf).map_err(PersistError::from)?;
    let _lock = dirs.lock().map_err(PersistError::from)?;
    dirs.format(version, force).map_err(|e| match e {
        rhdfs_editlog::EditLogError::AlreadyFormatted(d) => {
            BootstrapError::AlreadyFormatted(d.display().to_string())
        }
        other => PersistError::from(other).into(),
    })?;
    ImageStore::from_conf(dirs.clone(), conf)
        .and_then(|images| images.save_image(txid, payload))
        .map_err(PersistError::from)?;
    if raft_dir.exists() {
        std::fs::remove_dir_all(raft_dir).map_err(|e| {
            BootstrapError::Io(format!("removing the Raft log {}: {e}", raft_dir.display()))
        })?;
    }
    tracing::info!(txid, cluster = %version.cluster_id, pool = %version.block_pool_id, "bootstrapped from another NameNode's image");
    Ok(())
}
