//! How ClientProtocol declares each method may be retried (Hadoop's `@Idempotent` and
//! `@AtMostOnce` annotations, by the RPC method name sent on the wire): the one declaration a
//! client failing over reads to decide whether a call that may have reached a NameNode can be
//! sent again, and that the NameNode's own method table is checked against (a method declared
//! at-most-once must be answered from its retry cache there).
//!
//! [`COORDINATED_READS`]: the reads Hadoop marks `@ReadOnly(isCoordinated = true)`, which an
//! observer NameNode serves once it applied the client's state id, and which a client reading
//! from observers sends to one.

/// The ClientProtocol methods rhdfs serves that Hadoop marks `@ReadOnly(isCoordinated =
/// true)`: an observer serves them once it applied the state id the client sent; a client of
/// ObserverReadProxyProvider sends them to an observer.
pub const COORDINATED_READS: &[&str] = &[
    "getServerDefaults",
    "getFileInfo",
    "getLocatedFileInfo",
    "isFileClosed",
    "getPreferredBlockSize",
    "getLinkTarget",
    "getListing",
    "getContentSummary",
    "getBlockLocations",
    "listOpenFiles",
    "getAclStatus",
    "getXAttrs",
    "listXAttrs",
    "checkAccess",
];

/// Whether `method` is one of [`COORDINATED_READS`].
pub fn is_coordinated_read(method: &str) -> bool {
    COORDINATED_READS.contains(&method)
}

/// Whether a ClientProtocol call may be re-sent after it may have been received.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retry {
    /// Running it twice leaves what running it once does.
    Idempotent,
    /// Not idempotent: the NameNode answers a re-sent call (same client id and call id) from
    /// its retry cache.
    AtMostOnce,
}

/// The declared retry class of ClientProtocol method `method`; `None` for one with neither
/// declaration (rhdfs's own methods), which is re-sent only when it cannot have arrived.
pub fn retry_class(method: &str) -> Option<Retry> {
    use Retry::{AtMostOnce, Idempotent};
    Some(match method {
        "getBlockLocations"
        | "getServerDefaults"
        | "setReplication"
        | "getStoragePolicies"
        | "setStoragePolicy"
        | "unsetStoragePolicy"
        | "getStoragePolicy"
        | "setPermission"
        | "setOwner"
        | "abandonBlock"
        | "addBlock"
        | "getAdditionalDatanode"
        | "complete"
        | "reportBadBlocks"
        | "truncate"
        | "mkdirs"
        | "getListing"
        | "getBatchedListing"
        | "renewLease"
        | "recoverLease"
        | "getFsStats"
        | "getFsReplicatedBlockStats"
        | "getFsECBlockGroupStats"
        | "getDatanodeReport"
        | "getDatanodeStorageReport"
        | "getPreferredBlockSize"
        | "setSafeMode"
        | "restoreFailedStorage"
        | "refreshNodes"
        | "finalizeUpgrade"
        | "upgradeStatus"
        | "rollingUpgrade"
        | "listCorruptFileBlocks"
        | "metaSave"
        | "setBalancerBandwidth"
        | "getFileInfo"
        | "isFileClosed"
        | "getFileLinkInfo"
        | "getLocatedFileInfo"
        | "getContentSummary"
        | "setQuota"
        | "fsync"
        | "setTimes"
        | "getLinkTarget"
        | "updateBlockForPipeline"
        | "getDelegationToken"
        | "renewDelegationToken"
        | "cancelDelegationToken"
        | "getDataEncryptionKey"
        | "allowSnapshot"
        | "disallowSnapshot"
        | "getSnapshotDiffReport"
        | "getSnapshottableDirListing"
        | "listCacheDirectives"
        | "listCachePools"
        | "modifyAclEntries"
        | "removeAclEntries"
        | "removeDefaultAcl"
        | "removeAcl"
        | "setAcl"
        | "getAclStatus"
        | "getEZForPath"
        | "listEncryptionZones"
        | "getXAttrs"
        | "listXAttrs"
        | "checkAccess"
        | "getCurrentEditLogTxid"
        | "getEditsFromTxid"
        | "getQuotaUsage"
        | "listOpenFiles"
        | "msync"
        | "getHAServiceState"
        | "getSlowDatanodeReport" => Idempotent,
        "create"
        | "append"
        | "rename"
        | "rename2"
        | "concat"
        | "delete"
        | "saveNamespace"
        | "rollEdits"
        | "createSymlink"
        | "updatePipeline"
        | "createSnapshot"
        | "deleteSnapshot"
        | "renameSnapshot"
        | "addCacheDirective"
        | "modifyCacheDirective"
        | "removeCacheDirective"
        | "addCachePool"
        | "modifyCachePool"
        | "removeCachePool"
        | "createEncryptionZone"
        | "setXAttr"
        | "removeXAttr"
        | "satisfyStoragePolicy" => AtMostOnce,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_classes() {
        assert_eq!(retry_class("getFileInfo"), Some(Retry::Idempotent));
        assert_eq!(retry_class("mkdirs"), Some(Retry::Idempotent));
        assert_eq!(retry_class("create"), Some(Retry::AtMostOnce));
        assert_eq!(retry_class("updatePipeline"), Some(Retry::AtMostOnce));
        assert_eq!(retry_class("releaseOrphans"), None);
    }

    /// A client re-sends a coordinated read to the next observer, then the active, after it
    /// may have reached one: each is declared idempotent.
    #[test]
    fn coordinated_reads_are_idempotent() {
        for m in COORDINATED_READS {
            assert_eq!(retry_class(m), Some(Retry::Idempotent), "{m}");
        }
        assert!(is_coordinated_read("getBlockLocations"));
        assert!(!is_coordinated_read("msync"));
        assert!(!is_coordinated_read("getHAServiceState"));
        assert!(!is_coordinated_read("mkdirs"));
    }
}
