//! The operations, by HTTP method, with Hadoop's names and its answer to an unknown one.

use crate::error::WebError;

/// A WebHDFS operation rhdfs serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    Open,
    GetFileStatus,
    ListStatus,
    ListStatusBatch,
    GetContentSummary,
    GetFileChecksum,
    GetHomeDirectory,
    GetTrashRoot,
    GetServerDefaults,
    GetFileBlockLocations,
    GetQuotaUsage,
    GetStatus,
    Create,
    Mkdirs,
    Rename,
    SetReplication,
    SetOwner,
    SetPermission,
    SetTimes,
    Append,
    Delete,
    GetBlockLocations,
    CheckAccess,
    Truncate,
    Concat,
    GetAclStatus,
    GetXAttrs,
    ListXAttrs,
    SetAcl,
    ModifyAclEntries,
    RemoveAclEntries,
    RemoveDefaultAcl,
    RemoveAcl,
    SetXAttr,
    RemoveXAttr,
    SetQuota,
    SetQuotaByStorageType,
}

const ALL: [Op; 37] = [
    Op::Open,
    Op::GetFileStatus,
    Op::ListStatus,
    Op::ListStatusBatch,
    Op::GetContentSummary,
    Op::GetFileChecksum,
    Op::GetHomeDirectory,
    Op::GetTrashRoot,
    Op::GetServerDefaults,
    Op::GetFileBlockLocations,
    Op::GetQuotaUsage,
    Op::GetStatus,
    Op::Create,
    Op::Mkdirs,
    Op::Rename,
    Op::SetReplication,
    Op::SetOwner,
    Op::SetPermission,
    Op::SetTimes,
    Op::Append,
    Op::Delete,
    Op::GetBlockLocations,
    Op::CheckAccess,
    Op::Truncate,
    Op::Concat,
    Op::GetAclStatus,
    Op::GetXAttrs,
    Op::ListXAttrs,
    Op::SetAcl,
    Op::ModifyAclEntries,
    Op::RemoveAclEntries,
    Op::RemoveDefaultAcl,
    Op::RemoveAcl,
    Op::SetXAttr,
    Op::RemoveXAttr,
    Op::SetQuota,
    Op::SetQuotaByStorageType,
];

/// Hadoop operations rhdfs knows but does not serve (snapshots, tokens, storage policies,
/// erasure coding: the namespace has none of them), by method: answered with UnsupportedOperationException rather than "no such op".
const UNSUPPORTED: &[(&str, &[&str])] = &[
    (
        "GET",
        &[
            "GETDELEGATIONTOKEN",
            "GETALLSTORAGEPOLICY",
            "GETSTORAGEPOLICY",
            "GETSNAPSHOTDIFF",
            "GETSNAPSHOTDIFFLISTING",
            "GETSNAPSHOTTABLEDIRECTORYLIST",
            "GETSNAPSHOTLIST",
            "GETECPOLICY",
            "GETECPOLICIES",
            "GETECCODECS",
            "GETFILELINKSTATUS",
            "GETLINKTARGET",
            "GETSTORAGEPOLICIES",
        ],
    ),
    (
        "PUT",
        &[
            "CREATESYMLINK",
            "RENEWDELEGATIONTOKEN",
            "CANCELDELEGATIONTOKEN",
            "ALLOWSNAPSHOT",
            "DISALLOWSNAPSHOT",
            "CREATESNAPSHOT",
            "RENAMESNAPSHOT",
            "SETSTORAGEPOLICY",
            "SATISFYSTORAGEPOLICY",
            "ENABLEECPOLICY",
            "DISABLEECPOLICY",
            "SETECPOLICY",
        ],
    ),
    ("POST", &["UNSETSTORAGEPOLICY", "UNSETECPOLICY"]),
    ("DELETE", &["DELETESNAPSHOT"]),
];

impl Op {
    /// The name in `op=`.
    pub fn name(self) -> &'static str {
        match self {
            Op::Open => "OPEN",
            Op::GetFileStatus => "GETFILESTATUS",
            Op::ListStatus => "LISTSTATUS",
            Op::ListStatusBatch => "LISTSTATUS_BATCH",
            Op::GetContentSummary => "GETCONTENTSUMMARY",
            Op::GetFileChecksum => "GETFILECHECKSUM",
            Op::GetHomeDirectory => "GETHOMEDIRECTORY",
            Op::GetTrashRoot => "GETTRASHROOT",
            Op::GetServerDefaults => "GETSERVERDEFAULTS",
            Op::GetFileBlockLocations => "GETFILEBLOCKLOCATIONS",
            Op::GetQuotaUsage => "GETQUOTAUSAGE",
            Op::GetStatus => "GETSTATUS",
            Op::Create => "CREATE",
            Op::Mkdirs => "MKDIRS",
            Op::Rename => "RENAME",
            Op::SetReplication => "SETREPLICATION",
            Op::SetOwner => "SETOWNER",
            Op::SetPermission => "SETPERMISSION",
            Op::SetTimes => "SETTIMES",
            Op::Append => "APPEND",
            Op::Delete => "DELETE",
            Op::GetBlockLocations => "GET_BLOCK_LOCATIONS",
            Op::CheckAccess => "CHECKACCESS",
            Op::Truncate => "TRUNCATE",
            Op::Concat => "CONCAT",
            Op::GetAclStatus => "GETACLSTATUS",
            Op::GetXAttrs => "GETXATTRS",
            Op::ListXAttrs => "LISTXATTRS",
            Op::SetAcl => "SETACL",
            Op::ModifyAclEntries => "MODIFYACLENTRIES",
            Op::RemoveAclEntries => "REMOVEACLENTRIES",
            Op::RemoveDefaultAcl => "REMOVEDEFAULTACL",
            Op::RemoveAcl => "REMOVEACL",
            Op::SetXAttr => "SETXATTR",
            Op::RemoveXAttr => "REMOVEXATTR",
            Op::SetQuota => "SETQUOTA",
            Op::SetQuotaByStorageType => "SETQUOTABYSTORAGETYPE",
        }
    }

    /// The HTTP method that carries it.
    pub fn method(self) -> &'static str {
        match self {
            Op::Open
            | Op::GetFileStatus
            | Op::ListStatus
            | Op::ListStatusBatch
            | Op::GetContentSummary
            | Op::GetFileChecksum
            | Op::GetHomeDirectory
            | Op::GetTrashRoot
            | Op::GetServerDefaults
            | Op::GetFileBlockLocations
            | Op::GetQuotaUsage
            | Op::GetStatus
            | Op::GetBlockLocations
            | Op::CheckAccess
            | Op::GetAclStatus
            | Op::GetXAttrs
            | Op::ListXAttrs => "GET",
            Op::Create
            | Op::Mkdirs
            | Op::Rename
            | Op::SetReplication
            | Op::SetOwner
            | Op::SetPermission
            | Op::SetTimes
            | Op::SetAcl
            | Op::ModifyAclEntries
            | Op::RemoveAclEntries
            | Op::RemoveDefaultAcl
            | Op::RemoveAcl
            | Op::SetXAttr
            | Op::RemoveXAttr
            | Op::SetQuota
            | Op::SetQuotaByStorageType => "PUT",
            Op::Append | Op::Truncate | Op::Concat => "POST",
            Op::Delete => "DELETE",
        }
    }

    /// Served by a DataNode after a redirect from the NameNode.
    pub fn redirects(self) -> bool {
        matches!(
            self,
            Op::Open | Op::Create | Op::Append | Op::GetFileChecksum
        )
    }

    /// Hadoop's parameter class for a method (named in its error message).
    fn param_class(method: &str) -> &'static str {
        match method {
            "GET" => "GetOpParam",
            "PUT" => "PutOpParam",
            "POST" => "PostOpParam",
            "DELETE" => "DeleteOpParam",
            _ => "HttpOpParam",
        }
    }

    /// The operation named `name` (case-insensitive) sent with `method`.
    pub fn parse(method: &str, name: Option<&str>) -> Result<Op, WebError> {
        let Some(name) = name.filter(|n| !n.is_empty()) else {
            return Err(WebError::illegal_argument(
                "Invalid value for webhdfs parameter \"op\": op is not specified",
            ));
        };
        let upper = name.to_ascii_uppercase();
        if let Some(op) = ALL
            .iter()
            .find(|op| op.method() == method && op.name() == upper)
        {
            return Ok(*op);
        }
        let unsupported = UNSUPPORTED
            .iter()
            .any(|(m, ops)| *m == method && ops.contains(&upper.as_str()));
        if unsupported {
            return Err(WebError::unsupported(format!("{upper} is not supported")));
        }
        Err(WebError::illegal_argument(format!(
            "Invalid value for webhdfs parameter \"op\": No enum constant org.apache.hadoop.hdfs.web.resources.{}.Op.{upper}",
            Self::param_class(method)
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_by_method() {
        assert_eq!(
            Op::parse("GET", Some("liststatus")).ok(),
            Some(Op::ListStatus)
        );
        assert_eq!(Op::parse("PUT", Some("CREATE")).ok(), Some(Op::Create));
        for op in ALL {
            assert_eq!(Op::parse(op.method(), Some(op.name())).ok(), Some(op));
        }
        let e = Op::parse("GET", Some("MKDIRS")).expect_err("wrong method");
        assert_eq!(e.class, "java.lang.IllegalArgumentException");
        assert!(e.message.ends_with("GetOpParam.Op.MKDIRS"), "{}", e.message);
        assert_eq!(e.status(), 400);
        let e = Op::parse("POST", Some("unsetecpolicy")).expect_err("unsupported");
        assert_eq!(e.class, "java.lang.UnsupportedOperationException");
        assert_eq!(e.message, "UNSETECPOLICY is not supported");
        assert!(Op::parse("GET", None).is_err());
    }

    #[test]
    fn redirected_ops() {
        let r: Vec<_> = ALL
            .iter()
            .filter(|o| o.redirects())
            .map(|o| o.name())
            .collect();
        assert_eq!(r, ["OPEN", "GETFILECHECKSUM", "CREATE", "APPEND"]);
    }
}
