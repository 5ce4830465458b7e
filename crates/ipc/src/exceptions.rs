//! The Java exception class names rhdfs sends and recognises, each spelled once. Services
//! map their errors to these at the RPC (or WebHDFS) edge; clients compare against them.

pub const IO_EXCEPTION: &str = "java.io.IOException";
pub const EOF_EXCEPTION: &str = "java.io.EOFException";
pub const FILE_NOT_FOUND: &str = "java.io.FileNotFoundException";
pub const ILLEGAL_ARGUMENT: &str = "java.lang.IllegalArgumentException";
pub const UNSUPPORTED_OPERATION: &str = "java.lang.UnsupportedOperationException";
pub const UNSUPPORTED_ACTION: &str =
    "org.apache.hadoop.hdfs.server.namenode.UnsupportedActionException";
pub const RUNTIME_EXCEPTION: &str = "java.lang.RuntimeException";
pub const SECURITY_EXCEPTION: &str = "java.lang.SecurityException";
pub const HADOOP_ILLEGAL_ARGUMENT: &str = "org.apache.hadoop.HadoopIllegalArgumentException";

pub const FILE_ALREADY_EXISTS: &str = "org.apache.hadoop.fs.FileAlreadyExistsException";
pub const PARENT_NOT_DIRECTORY: &str = "org.apache.hadoop.fs.ParentNotDirectoryException";
pub const PATH_IS_NOT_EMPTY_DIRECTORY: &str =
    "org.apache.hadoop.fs.PathIsNotEmptyDirectoryException";
pub const INVALID_PATH: &str = "org.apache.hadoop.fs.InvalidPathException";

pub const ACCESS_CONTROL: &str = "org.apache.hadoop.security.AccessControlException";
pub const AUTHORIZATION: &str = "org.apache.hadoop.security.authorize.AuthorizationException";

pub const SAFE_MODE: &str = "org.apache.hadoop.hdfs.server.namenode.SafeModeException";
pub const NOT_REPLICATED_YET: &str =
    "org.apache.hadoop.hdfs.server.namenode.NotReplicatedYetException";
pub const LEASE_EXPIRED: &str = "org.apache.hadoop.hdfs.server.namenode.LeaseExpiredException";
pub const ALREADY_BEING_CREATED: &str =
    "org.apache.hadoop.hdfs.protocol.AlreadyBeingCreatedException";
pub const ACL_EXCEPTION: &str = "org.apache.hadoop.hdfs.protocol.AclException";
pub const RECOVERY_IN_PROGRESS: &str =
    "org.apache.hadoop.hdfs.protocol.RecoveryInProgressException";
pub const BLOCK_MISSING: &str = "org.apache.hadoop.hdfs.BlockMissingException";

pub const DISALLOWED_DATANODE: &str =
    "org.apache.hadoop.hdfs.server.protocol.DisallowedDatanodeException";
pub const INCORRECT_VERSION: &str =
    "org.apache.hadoop.hdfs.server.common.IncorrectVersionException";
pub const REPLICA_NOT_FOUND: &str =
    "org.apache.hadoop.hdfs.server.datanode.ReplicaNotFoundException";
pub const UNRESOLVED_TOPOLOGY: &str = "org.apache.hadoop.net.UnresolvedTopologyException";

pub const RETRIABLE: &str = "org.apache.hadoop.ipc.RetriableException";
/// A standby NameNode's answer to a call it does not serve: the client fails over.
pub const STANDBY: &str = "org.apache.hadoop.ipc.StandbyException";
/// An observer NameNode's answer to a read it cannot serve (a block without locations yet):
/// the client of ObserverReadProxyProvider sends the call to the active.
pub const OBSERVER_RETRY_ON_ACTIVE: &str = "org.apache.hadoop.ipc.ObserverRetryOnActiveException";
/// HAServiceProtocol.monitorHealth: the service is not healthy.
pub const HEALTH_CHECK_FAILED: &str = "org.apache.hadoop.ha.HealthCheckFailedException";
/// HAServiceProtocol: a state transition could not be made.
pub const SERVICE_FAILED: &str = "org.apache.hadoop.ha.ServiceFailedException";
pub const NO_SUCH_METHOD: &str = "org.apache.hadoop.ipc.RpcNoSuchMethodException";
pub const NO_SUCH_PROTOCOL: &str = "org.apache.hadoop.ipc.RpcNoSuchProtocolException";
pub const VERSION_MISMATCH: &str = "org.apache.hadoop.ipc.RPC$VersionMismatch";
pub const IPC_EXCEPTION: &str = "org.apache.hadoop.ipc.IpcException";
pub const INVALID_TOPOLOGY: &str = "org.apache.hadoop.net.NetworkTopology$InvalidTopologyException";
pub const PATH_COMPONENT_TOO_LONG: &str =
    "org.apache.hadoop.hdfs.protocol.FSLimitException$PathComponentTooLongException";
pub const MAX_DIRECTORY_ITEMS_EXCEEDED: &str =
    "org.apache.hadoop.hdfs.protocol.FSLimitException$MaxDirectoryItemsExceededException";
pub const NS_QUOTA_EXCEEDED: &str = "org.apache.hadoop.hdfs.protocol.NSQuotaExceededException";
pub const DS_QUOTA_EXCEEDED: &str = "org.apache.hadoop.hdfs.protocol.DSQuotaExceededException";
pub const TYPE_QUOTA_EXCEEDED: &str =
    "org.apache.hadoop.hdfs.protocol.QuotaByStorageTypeExceededException";
pub const QUOTA_BY_STORAGE_TYPE_EXCEEDED: &str =
    "org.apache.hadoop.hdfs.protocol.QuotaByStorageTypeExceededException";
pub const PATH_IS_NOT_DIRECTORY: &str = "org.apache.hadoop.fs.PathIsNotDirectoryException";
