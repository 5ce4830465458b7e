//! `ClientError`: every failure of the library, keeping the remote Java exception class.

use rhdfs_conf::ConfError;
use rhdfs_ipc::IpcError;
use rhdfs_transfer::TransferError;

/// Java class names the client looks at.
pub use rhdfs_ipc::exceptions as class;

/// Why a client operation failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The NameNode (or a DataNode's IPC port) answered with a Java exception.
    #[error("{message}")]
    Remote { class_name: String, message: String },
    /// The path does not exist (found out by the client, e.g. an empty getFileInfo).
    #[error("File does not exist: {0}")]
    FileNotFound(String),
    /// Socket-level failure talking to the NameNode.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The NameNode connection broke or spoke nonsense.
    #[error("NameNode RPC failed: {0}")]
    Rpc(String),
    /// A data-transfer failure that could not be recovered from.
    #[error("{0}")]
    Transfer(#[from] TransferError),
    /// Bad configuration.
    #[error("configuration: {0}")]
    Conf(#[from] ConfError),
    /// A bad HA nameservice configuration.
    #[error("configuration: {0}")]
    HaConf(#[from] rhdfs_conf::ha::HaConfError),
    /// A path or URI the client cannot use.
    #[error("{0}")]
    InvalidPath(String),
    /// No replica of a block could be read (Java's BlockMissingException).
    #[error("Could not obtain block: {block} file={path}")]
    BlockMissing { block: String, path: String },
    /// A client-side I/O failure with Hadoop's wording (write pipeline, close, checksum...).
    #[error("{0}")]
    Failed(String),
    /// The stream was already closed.
    #[error("Stream closed")]
    Closed,
}

/// Result alias of this crate.
pub type Result<T, E = ClientError> = std::result::Result<T, E>;

impl ClientError {
    /// A remote-style error with an explicit Java class.
    pub fn remote(class_name: impl Into<String>, message: impl Into<String>) -> Self {
        ClientError::Remote {
            class_name: class_name.into(),
            message: message.into(),
        }
    }

    /// The Java exception class this error corresponds to.
    pub fn class_name(&self) -> &str {
        match self {
            ClientError::Remote { class_name, .. } => class_name,
            ClientError::FileNotFound(_) => class::FILE_NOT_FOUND,
            ClientError::BlockMissing { .. } => class::BLOCK_MISSING,
            ClientError::InvalidPath(_) => class::ILLEGAL_ARGUMENT,
            _ => class::IO_EXCEPTION,
        }
    }

    /// The message without the class name (what FsShell prints after `cmd: `).
    pub fn message(&self) -> String {
        match self {
            ClientError::Remote { message, .. } => message.clone(),
            other => other.to_string(),
        }
    }

    fn class_is(&self, name: &str) -> bool {
        self.class_name() == name
    }

    pub fn is_file_not_found(&self) -> bool {
        self.class_is(class::FILE_NOT_FOUND)
    }
    pub fn is_already_exists(&self) -> bool {
        self.class_is(class::FILE_ALREADY_EXISTS)
    }
    pub fn is_access_denied(&self) -> bool {
        self.class_is(class::ACCESS_CONTROL)
    }
    pub fn is_safe_mode(&self) -> bool {
        self.class_is(class::SAFE_MODE)
    }
    pub fn is_not_replicated_yet(&self) -> bool {
        self.class_is(class::NOT_REPLICATED_YET)
    }
    pub fn is_not_empty_directory(&self) -> bool {
        self.class_is(class::PATH_IS_NOT_EMPTY_DIRECTORY)
    }
    pub fn is_parent_not_directory(&self) -> bool {
        self.class_is(class::PARENT_NOT_DIRECTORY)
    }
    pub fn is_already_being_created(&self) -> bool {
        self.class_is(class::ALREADY_BEING_CREATED)
    }
}

impl From<IpcError> for ClientError {
    fn from(e: IpcError) -> Self {
        match e {
            IpcError::Remote {
                class_name,
                message,
            } => ClientError::Remote {
                class_name,
                message,
            },
            IpcError::Io(e) => ClientError::Io(e),
            IpcError::Protocol(m) => ClientError::Rpc(m),
            IpcError::Closed => ClientError::Rpc("connection closed".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_class_is_kept() {
        let e: ClientError = IpcError::Remote {
            class_name: class::FILE_NOT_FOUND.into(),
            message: "File does not exist: /x".into(),
        }
        .into();
        assert!(e.is_file_not_found());
        assert_eq!(e.message(), "File does not exist: /x");
        assert_eq!(e.to_string(), "File does not exist: /x");
        assert!(ClientError::FileNotFound("/y".into()).is_file_not_found());
        let e = ClientError::remote(class::SAFE_MODE, "Name node is in safe mode.");
        assert!(e.is_safe_mode() && !e.is_file_not_found());
        assert_eq!(
            ClientError::Failed("x".into()).class_name(),
            class::IO_EXCEPTION
        );
    }
}
