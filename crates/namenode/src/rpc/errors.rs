//! The one place namespace errors become Java exceptions (class name + message).

use rhdfs_ipc::RpcError;

use crate::error::FsError;

pub const FILE_NOT_FOUND: &str = "java.io.FileNotFoundException";
pub const FILE_ALREADY_EXISTS: &str = "org.apache.hadoop.fs.FileAlreadyExistsException";
pub const PARENT_NOT_DIRECTORY: &str = "org.apache.hadoop.fs.ParentNotDirectoryException";
pub const PATH_IS_NOT_EMPTY_DIRECTORY: &str =
    "org.apache.hadoop.fs.PathIsNotEmptyDirectoryException";
pub const ACCESS_CONTROL: &str = "org.apache.hadoop.security.AccessControlException";
pub const SAFE_MODE: &str = "org.apache.hadoop.hdfs.server.namenode.SafeModeException";
pub const ALREADY_BEING_CREATED: &str =
    "org.apache.hadoop.hdfs.protocol.AlreadyBeingCreatedException";
pub const LEASE_EXPIRED: &str = "org.apache.hadoop.hdfs.server.namenode.LeaseExpiredException";
pub const RECOVERY_IN_PROGRESS: &str =
    "org.apache.hadoop.hdfs.protocol.RecoveryInProgressException";
pub const NOT_REPLICATED_YET: &str =
    "org.apache.hadoop.hdfs.server.namenode.NotReplicatedYetException";
pub const INVALID_PATH: &str = "org.apache.hadoop.fs.InvalidPathException";
pub const ILLEGAL_ARGUMENT: &str = "org.apache.hadoop.HadoopIllegalArgumentException";
pub const PATH_COMPONENT_TOO_LONG: &str =
    "org.apache.hadoop.hdfs.protocol.FSLimitException$PathComponentTooLongException";
pub const MAX_DIRECTORY_ITEMS_EXCEEDED: &str =
    "org.apache.hadoop.hdfs.protocol.FSLimitException$MaxDirectoryItemsExceededException";
pub const IO: &str = "java.io.IOException";

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
        FsError::PathComponentTooLong(_) => PATH_COMPONENT_TOO_LONG,
        FsError::MaxDirectoryItemsExceeded(_) => MAX_DIRECTORY_ITEMS_EXCEEDED,
        FsError::BlockManager { class, .. } => class,
        FsError::Io(_) => IO,
    }
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
}
