//! The `current/VERSION` file: `key=value` lines identifying the namespace.

use rand::Rng;
use rhdfs_conf::clock::SharedClock;

/// The storage type of a NameNode directory.
pub const NAME_NODE_STORAGE_TYPE: &str = "NAME_NODE";

/// The NameNode layout version written by rhdfs (the one of the Hadoop 3.3 line).
pub const NAME_NODE_LAYOUT_VERSION: i32 = -66;

/// Contents of a NameNode storage directory's VERSION file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageVersion {
    pub namespace_id: u32,
    pub cluster_id: String,
    pub block_pool_id: String,
    pub ctime: u64,
    pub storage_type: String,
    pub layout_version: i32,
}

impl StorageVersion {
    /// A NAME_NODE version with the current layout version.
    pub fn new(namespace_id: u32, cluster_id: &str, block_pool_id: &str, ctime: u64) -> Self {
        StorageVersion {
            namespace_id,
            cluster_id: cluster_id.to_string(),
            block_pool_id: block_pool_id.to_string(),
            ctime,
            storage_type: NAME_NODE_STORAGE_TYPE.to_string(),
            layout_version: NAME_NODE_LAYOUT_VERSION,
        }
    }

    /// Fresh identifiers for `format`: a random namespace id, the given cluster id or a new
    /// `CID-<uuid>`, and a block pool id `BP-<random>-<host>-<now ms>`; cTime 0 as at format.
    pub fn generate(clock: &SharedClock, cluster_id: Option<&str>, host: &str) -> Self {
        let mut rng = rand::rng();
        let namespace_id = rng.random_range(1..=i32::MAX as u32);
        let cluster_id = match cluster_id {
            Some(c) => c.to_string(),
            None => {
                let b: [u8; 16] = rng.random();
                let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
                format!(
                    "CID-{}-{}-{}-{}-{}",
                    &hex[0..8],
                    &hex[8..12],
                    &hex[12..16],
                    &hex[16..20],
                    &hex[20..32]
                )
            }
        };
        let bp_rand = rng.random_range(1..=i32::MAX as u32);
        let block_pool_id = format!("BP-{bp_rand}-{host}-{}", clock.now_millis());
        StorageVersion::new(namespace_id, &cluster_id, &block_pool_id, 0)
    }

    /// The file text: a comment line, then one `key=value` line per field.
    pub fn to_text(&self) -> String {
        format!(
            "#rhdfs storage version\nnamespaceID={}\nclusterID={}\ncTime={}\nstorageType={}\nblockpoolID={}\nlayoutVersion={}\n",
            self.namespace_id,
            self.cluster_id,
            self.ctime,
            self.storage_type,
            self.block_pool_id,
            self.layout_version
        )
    }

    /// Parses the file text; unknown keys are ignored, `#`/`!` lines are comments.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut namespace_id = None;
        let mut cluster_id = None;
        let mut block_pool_id = None;
        let mut ctime = None;
        let mut storage_type = None;
        let mut layout_version = None;
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') || line.starts_with('!') {
                continue;
            }
            let Some((k, v)) = line.split_once('=') else {
                return Err(format!("line without '=': {line:?}"));
            };
            let (k, v) = (k.trim(), v.trim());
            match k {
                "namespaceID" => {
                    namespace_id = Some(v.parse::<u32>().map_err(|e| format!("namespaceID: {e}"))?)
                }
                "clusterID" => cluster_id = Some(v.to_string()),
                "blockpoolID" => block_pool_id = Some(v.to_string()),
                "cTime" => ctime = Some(v.parse::<u64>().map_err(|e| format!("cTime: {e}"))?),
                "storageType" => storage_type = Some(v.to_string()),
                "layoutVersion" => {
                    layout_version = Some(
                        v.parse::<i32>()
                            .map_err(|e| format!("layoutVersion: {e}"))?,
                    )
                }
                _ => {}
            }
        }
        let missing = |k: &str| format!("missing {k}");
        Ok(StorageVersion {
            namespace_id: namespace_id.ok_or_else(|| missing("namespaceID"))?,
            cluster_id: cluster_id.ok_or_else(|| missing("clusterID"))?,
            block_pool_id: block_pool_id.ok_or_else(|| missing("blockpoolID"))?,
            ctime: ctime.unwrap_or(0),
            storage_type: storage_type.ok_or_else(|| missing("storageType"))?,
            layout_version: layout_version.ok_or_else(|| missing("layoutVersion"))?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_round_trip() {
        let v = StorageVersion::new(12345, "CID-x", "BP-1-127.0.0.1-99", 0);
        let t = v.to_text();
        assert!(t.contains("storageType=NAME_NODE\n"));
        assert!(t.contains("layoutVersion=-66\n"));
        assert_eq!(StorageVersion::parse(&t), Ok(v));
    }

    #[test]
    fn parse_errors() {
        assert!(StorageVersion::parse("namespaceID=1\n").is_err());
        assert!(StorageVersion::parse("garbage\n").is_err());
        assert!(StorageVersion::parse("namespaceID=x\n").is_err());
    }

    #[test]
    fn generate_fills_ids() {
        let clock = rhdfs_conf::clock::system_clock();
        let v = StorageVersion::generate(&clock, None, "127.0.0.1");
        assert!(v.cluster_id.starts_with("CID-"));
        assert_eq!(v.cluster_id.len(), 40);
        assert!(v.block_pool_id.starts_with("BP-"));
        assert!(v.namespace_id > 0);
        let w = StorageVersion::generate(&clock, Some("CID-given"), "h");
        assert_eq!(w.cluster_id, "CID-given");
    }
}
