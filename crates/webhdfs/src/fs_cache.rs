//! One `rhdfs-client` FileSystem per (NameNode address, user), kept between requests so a
//! request does not pay for a new connection.

use std::collections::HashMap;

use parking_lot::Mutex;
use rhdfs_client::{ClientError, FileSystem};
use rhdfs_conf::Configuration;

use crate::error::WebError;

/// At most this many file systems are kept; past it the cache starts again empty.
const MAX_ENTRIES: usize = 256;

/// The umask of the cached clients: WebHDFS `permission` values are final modes.
const NO_UMASK: &str = "000";

pub struct FsCache {
    conf: Configuration,
    map: Mutex<HashMap<(String, String), FileSystem>>,
}

impl FsCache {
    /// Clients built from `conf` with no umask.
    pub fn new(conf: &Configuration) -> Self {
        let mut conf = conf.clone();
        conf.set("fs.permissions.umask-mode", NO_UMASK);
        FsCache {
            conf,
            map: Mutex::new(HashMap::new()),
        }
    }

    /// The file system of `user` on the NameNode at `nn` (host:port).
    pub async fn get(&self, nn: &str, user: &str) -> Result<FileSystem, WebError> {
        let key = (nn.to_string(), user.to_string());
        if let Some(fs) = self.map.lock().get(&key) {
            return Ok(fs.clone());
        }
        let fs = FileSystem::connect_as(&format!("hdfs://{nn}"), self.conf.clone(), user)
            .await
            .map_err(|e| {
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
