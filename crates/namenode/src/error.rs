//! Errors raised by the namespace. Each variant is one Hadoop exception class; the
//! mapping to Java class names lives in `rpc/errors.rs` and nowhere else.

/// A namespace error. `Display` is the one-line message sent to the client.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FsError {
    /// `java.io.FileNotFoundException`; the message is complete.
    #[error("{0}")]
    FileNotFound(String),
    /// `org.apache.hadoop.fs.FileAlreadyExistsException`.
    #[error("{0}")]
    FileAlreadyExists(String),
    /// `org.apache.hadoop.fs.ParentNotDirectoryException`.
    #[error("{0}")]
    ParentNotDirectory(String),
    /// `org.apache.hadoop.fs.PathIsNotEmptyDirectoryException`.
    #[error("{0} is non empty")]
    PathIsNotEmptyDirectory(String),
    /// `org.apache.hadoop.security.AccessControlException`.
    #[error("{0}")]
    AccessControl(String),
    /// `org.apache.hadoop.hdfs.server.namenode.SafeModeException`.
    #[error("{0}")]
    SafeMode(String),
    /// `org.apache.hadoop.hdfs.protocol.AlreadyBeingCreatedException`.
    #[error("{0}")]
    AlreadyBeingCreated(String),
    /// `org.apache.hadoop.hdfs.server.namenode.LeaseExpiredException`.
    #[error("{0}")]
    LeaseExpired(String),
    /// `org.apache.hadoop.hdfs.protocol.RecoveryInProgressException`.
    #[error("{0}")]
    RecoveryInProgress(String),
    /// `org.apache.hadoop.hdfs.server.namenode.NotReplicatedYetException`.
    #[error("Not replicated yet: {0}")]
    NotReplicatedYet(String),
    /// `org.apache.hadoop.fs.InvalidPathException`.
    #[error("Invalid path name {0}")]
    InvalidPath(String),
    /// `org.apache.hadoop.HadoopIllegalArgumentException`.
    #[error("{0}")]
    IllegalArgument(String),
    /// `org.apache.hadoop.hdfs.protocol.AclException`.
    #[error("{0}")]
    Acl(String),
    /// `org.apache.hadoop.hdfs.protocol.FSLimitException$PathComponentTooLongException`.
    #[error("{0}")]
    PathComponentTooLong(String),
    /// `org.apache.hadoop.hdfs.protocol.FSLimitException$MaxDirectoryItemsExceededException`.
    #[error("{0}")]
    MaxDirectoryItemsExceeded(String),
    /// `org.apache.hadoop.hdfs.protocol.NSQuotaExceededException`.
    #[error("{0}")]
    NsQuotaExceeded(String),
    /// `org.apache.hadoop.hdfs.protocol.DSQuotaExceededException`.
    #[error("{0}")]
    DsQuotaExceeded(String),
    /// `org.apache.hadoop.hdfs.protocol.QuotaByStorageTypeExceededException`.
    #[error("{0}")]
    TypeQuotaExceeded(String),
    /// `org.apache.hadoop.ipc.UnsupportedActionException` (setQuota by storage type
    /// refused).
    #[error("{0}")]
    UnsupportedAction(String),
    /// `org.apache.hadoop.fs.PathIsNotDirectoryException`.
    #[error("`{0}': Is not a directory")]
    PathIsNotDirectory(String),
    /// `java.lang.IllegalArgumentException` (setQuota's argument checks).
    #[error("{0}")]
    JavaIllegalArgument(String),
    /// An error from the block manager (its Java class is chosen in `rpc/errors.rs`).
    #[error(transparent)]
    BlockManager(#[from] rhdfs_blockmanager::error::BlockManagerError),
    /// `org.apache.hadoop.ipc.StandbyException`: this NameNode of an HA nameservice is not
    /// the active one (or stopped being it before the operation's edits were replicated).
    #[error("{0}")]
    Standby(String),
    /// `java.io.IOException` with a message.
    #[error("{0}")]
    Io(String),
}

impl FsError {
    /// "File does not exist: /x", the message HDFS uses for a missing path.
    pub fn not_found(path: &str) -> Self {
        FsError::FileNotFound(format!("File does not exist: {path}"))
    }
}

pub type FsResult<T> = Result<T, FsError>;
