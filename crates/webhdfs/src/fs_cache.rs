//! One `rhdfs-client` FileSystem per (NameNode address, user), kept between requests so a
//! request does not pay for a new connection.

use std::collections::HashMap;
use std::sync::OnceLock;

use parking_lot::Mutex;
use rhdfs_client::{ClientError, FileSystem};
use rhdfs_conf::Configuration;
use rhdfs_ipc::LocalConnector;

use crate::error::WebError;

/// At most this many file systems are kept; past it the cache starts again empty.
const MAX_ENTRIES: usize = 256;

/// The umask of the cached clients: WebHDFS `permission` values are final modes.
const NO_UMASK: &str = "000";

pub struct FsCache {
    conf: Configuration,
    map: Mutex<HashMap<(String, String), FileSystem>>,
    /// Set in the NameNode's process: its clients reach it in-process, so their calls may
    /// name the HTTP client they are made for (`rhdfs_ipc::caller`).
    in_process: OnceLock<LocalConnector>,
}

impl FsCache {
    /// Clients built from `conf` with no umask.
    pub fn new(conf: &Configuration) -> Self {
        let mut conf = conf.clone();
        conf.set("fs.permissions.umask-mode", NO_UMASK);
        FsCache {
            conf,
            map: Mutex::new(HashMap::new()),
            in_process: OnceLock::new(),
        }
    }

    /// Clients made from now on connect through `nn` (the first connector set stays).
    pub fn set_in_process(&self, nn: LocalConnector) {
        let _ = self.in_process.set(nn);
    }

    /// The file system of `user` on the NameNode at `nn` (host:port).
    pub async fn get(&self, nn: &str, user: &str) -> Result<FileSystem, WebError> {
        let key = (nn.to_string(), user.to_string());
        if let Some(fs) = self.map.lock().get(&key) {
            return Ok(fs.clone());
        }
        let uri = format!("hdfs://{nn}");
        let conf = self.conf.clone();
        let fs = match self.in_process.get() {
            Some(local) => FileSystem::connect_in_process(&uri, conf, user, local.clone()).await,
            None => FileSystem::connect_as(&uri, conf, user).await,
        };
        let fs = fs.map_err(|e| {
            WebError::io(format!(
                "cannot connect to the NameNode at {nn}: {}",
                e.message()
            ))
        })?;
        let mut map = self.map.lock();
        if map.len() >= MAX_ENTRIES {
            map.clear();
        }
        Ok(map.entry(key).or_insert(fs).clone())
    }

    /// Drops the cached client of `user` after a connection-level failure.
    pub fn forget_on_failure(&self, nn: &str, user: &str, e: &ClientError) {
        if matches!(e, ClientError::Io(_) | ClientError::Rpc(_)) {
            self.map.lock().remove(&(nn.to_string(), user.to_string()));
        }
    }
}
