//! setQuota on the client (DistributedFileSystem.setQuota): superuser only on the NameNode.

use rhdfs_proto::hdfs::{SetQuotaRequestProto, SetQuotaResponseProto};

use crate::error::Result;
use crate::filesystem::FileSystem;

/// A quota value that clears the quota (HdfsConstants.QUOTA_RESET).
pub const QUOTA_RESET: i64 = -1;
/// A quota value that leaves the quota as it is (HdfsConstants.QUOTA_DONT_SET).
pub const QUOTA_DONT_SET: i64 = i64::MAX;

impl FileSystem {
    /// Sets the namespace (`ns`) and storage space (`ds`) quotas of directory `p`;
    /// [`QUOTA_RESET`] clears one, [`QUOTA_DONT_SET`] leaves it unchanged.
    pub async fn set_quota(&self, p: &str, ns: i64, ds: i64) -> Result<()> {
        let _: SetQuotaResponseProto = self
            .call(
                "setQuota",
                &SetQuotaRequestProto {
                    path: self.resolve(p)?,
                    // Sent as uint64: -1 and Long.MAX_VALUE as their bits, as Java's client does.
                    namespace_quota: ns as u64,
                    storagespace_quota: ds as u64,
                    storage_type: None,
                },
            )
            .await?;
        Ok(())
    }

    /// Sets the storage-space quota of directory `p` for one storage type (a
    /// `StorageTypeProto` value; DistributedFileSystem.setQuotaByStorageType);
    /// [`QUOTA_RESET`] clears it.
    pub async fn set_type_quota(&self, p: &str, storage_type: i32, quota: i64) -> Result<()> {
        let _: SetQuotaResponseProto = self
            .call(
                "setQuota",
                &SetQuotaRequestProto {
                    path: self.resolve(p)?,
                    namespace_quota: QUOTA_DONT_SET as u64,
                    storagespace_quota: quota as u64,
                    storage_type: Some(storage_type),
                },
            )
            .await?;
        Ok(())
    }
}
