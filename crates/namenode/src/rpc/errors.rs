//! The one place namespace and block manager errors become Java exceptions (class name +
//! message).

use rhdfs_blockmanager::error::BlockManagerError;
use rhdfs_blockmanager::topology::TopologyError;
use rhdfs_ipc::RpcError;

use crate::error::FsError;

pub use rhdfs_ipc::exceptions::{
    ACCESS_CONTROL, ACL_EXCEPTION, ALREADY_BEING_CREATED, FILE_ALREADY_EXISTS, FILE_NOT_FOUND,
    INVALID_PATH, LEASE_EXPIRED, MAX_DIRECTORY_ITEMS_EXCEEDED, NOT_REPLICATED_YET,
    PARENT_NOT_DIRECTORY, PATH_COMPONENT_TOO_LONG, PATH_IS_NOT_EMPTY_DIRECTORY,
    RECOVERY_IN_PROGRESS, SAFE_MODE,
};
/// The namespace's argument errors are Hadoop's HadoopIllegalArgumentException.
pub const ILLEGAL_ARGUMENT: &str = rhdfs_ipc::exceptions::HADOOP_ILLEGAL_ARGUMENT;
pub const IO: &str = rhdfs_ipc::exceptions::IO_EXCEPTION;

/// The Java class a client receives for `e`.
pub fn class_of(e: &FsError) -> &'static str {
    match e {
        FsError::FileNotFound(_) => FILE_NOT_FOUND,
        FsError::FileAlreadyExists(_) => FILE_ALREADY_EXISTS,
        FsError::ParentNotDirectory(_) => PARENT_NOT_DIRECTORY,
        FsError::PathIsNotEmptyDirectory(_) => PATH_IS_NOT_EMPTY_DIRECTORY,
        FsError::AccessControl(_) => ACCESS_CONTROL,
        FsError::SafeMode(_) => SAFE_MODE,
        FsError::AlreadyBeingCreated(_) => ALREADY_BEING_CREATED,
        FsError::LeaseExpired(_) => LEASE_EXPIRED,
        FsError::RecoveryInProgress(_) => RECOVERY_IN_PROGRESS,
        FsError::NotReplicatedYet(_) => NOT_REPLICATED_YET,
        FsError::InvalidPath(_) => INVALID_PATH,
        FsError::IllegalArgument(_) => ILLEGAL_ARGUMENT,
        FsError::Acl(_) => ACL_EXCEPTION,
        FsError::PathComponentTooLong(_) => PATH_COMPONENT_TOO_LONG,
        FsError::MaxDirectoryItemsExceeded(_) => MAX_DIRECTORY_ITEMS_EXCEEDED,
        FsError::NsQuotaExceeded(_) => rhdfs_ipc::exceptions::NS_QUOTA_EXCEEDED,
        FsError::DsQuotaExceeded(_) => rhdfs_ipc::exceptions::DS_QUOTA_EXCEEDED,
        FsError::TypeQuotaExceeded(_) => rhdfs_ipc::exceptions::TYPE_QUOTA_EXCEEDED,
        FsError::UnsupportedAction(_) => rhdfs_ipc::exceptions::UNSUPPORTED_ACTION,
        FsError::PathIsNotDirectory(_) => rhdfs_ipc::exceptions::PATH_IS_NOT_DIRECTORY,
        FsError::JavaIllegalArgument(_) => rhdfs_ipc::exceptions::ILLEGAL_ARGUMENT,
        FsError::BlockManager(e) => block_manager_class(e),
        FsError::Standby(_) => rhdfs_ipc::exceptions::STANDBY,
        FsError::Io(_) => IO,
    }
}

/// The Java class a client or DataNode receives for a block manager error: Hadoop's
/// topology exceptions for a rack that cannot be resolved or does not fit,
/// DisallowedDatanodeException for a node outside the include list, IOException otherwise.
pub fn block_manager_class(e: &BlockManagerError) -> &'static str {
    match e {
        BlockManagerError::Topology(TopologyError::Unresolved(_)) => {
            rhdfs_ipc::exceptions::UNRESOLVED_TOPOLOGY
        }
        BlockManagerError::Topology(TopologyError::Invalid(_)) => {
            rhdfs_ipc::exceptions::INVALID_TOPOLOGY
        }
        BlockManagerError::DisallowedDatanode(_) => rhdfs_ipc::exceptions::DISALLOWED_DATANODE,
        BlockManagerError::Topology(
            TopologyError::UnsupportedMapping(_) | TopologyError::Config(_),
        )
        | BlockManagerError::NotEnoughReplicas(_)
        | BlockManagerError::UnknownBlock(_)
        | BlockManagerError::InvalidState(_)
        | BlockManagerError::UnregisteredNode(_)
        | BlockManagerError::MalformedReport(_)
        | BlockManagerError::Config(_) => IO,
    }
}

/// A block manager error as the RPC error sent to the caller.
pub fn block_manager_to_rpc(e: BlockManagerError) -> RpcError {
    RpcError::new(block_manager_class(&e), e.to_string())
}

/// `e` as the RPC error sent to the client (message on one line).
pub fn to_rpc(e: FsError) -> RpcError {
    let class = class_of(&e);
    let msg = e.to_string().replace('\n', " ");
    RpcError::new(class, msg)
}

impl From<FsError> for RpcError {
    fn from(e: FsError) -> Self {
        to_rpc(e)
    }
}

/// "Access denied for user X. Superuser privilege is required" (checkSuperuserPrivilege).
pub fn superuser_required(user: &str) -> RpcError {
    RpcError::new(
        ACCESS_CONTROL,
        format!("Access denied for user {user}. Superuser privilege is required"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_classes_and_messages() {
        let e = to_rpc(FsError::not_found("/x"));
        assert_eq!(e.class_name, FILE_NOT_FOUND);
        assert_eq!(e.message, "File does not exist: /x");
        let e = to_rpc(FsError::PathIsNotEmptyDirectory("/d".into()));
        assert_eq!(e.class_name, PATH_IS_NOT_EMPTY_DIRECTORY);
        assert_eq!(e.message, "/d is non empty");
        let e = to_rpc(FsError::NotReplicatedYet("/f".into()));
        assert_eq!(e.message, "Not replicated yet: /f");
        let e = to_rpc(FsError::SafeMode("a\nb".into()));
        assert_eq!(
            (e.class_name.as_str(), e.message.as_str()),
            (SAFE_MODE, "a b")
        );
    }

    #[test]
    fn block_manager_errors_name_hadoops_classes() {
        let class = |e: BlockManagerError| block_manager_to_rpc(e).class_name;
        assert_eq!(
            class(TopologyError::Invalid("/r/h:1".into()).into()),
            "org.apache.hadoop.net.NetworkTopology$InvalidTopologyException"
        );
        assert_eq!(
            class(TopologyError::Unresolved("h1".into()).into()),
            "org.apache.hadoop.net.UnresolvedTopologyException"
        );
        assert_eq!(
            class(BlockManagerError::DisallowedDatanode("x".into())),
            "org.apache.hadoop.hdfs.server.protocol.DisallowedDatanodeException"
        );
        assert_eq!(
            class(BlockManagerError::NotEnoughReplicas("x".into())),
            "java.io.IOException"
        );
        let e = to_rpc(FsError::from(BlockManagerError::UnknownBlock(7)));
        assert_eq!(
            (e.class_name.as_str(), e.message.as_str()),
            (IO, "Block blk_7 does not exist")
        );
    }
}
