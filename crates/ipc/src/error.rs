//! Error types: `RpcError` (what a service returns to a remote caller) and `IpcError` (what a
//! client call fails with).

use std::fmt;

/// Java class name of the generic I/O exception.
pub const IO_EXCEPTION: &str = crate::exceptions::IO_EXCEPTION;
/// Java class name used for an unknown method.
pub const NO_SUCH_METHOD_EXCEPTION: &str = crate::exceptions::NO_SUCH_METHOD;
/// Java class name used for an unknown protocol.
pub const NO_SUCH_PROTOCOL_EXCEPTION: &str = crate::exceptions::NO_SUCH_PROTOCOL;
/// Java class name of the fatal response to a bad IPC version.
pub const VERSION_MISMATCH_EXCEPTION: &str = crate::exceptions::VERSION_MISMATCH;
/// Java class name used for malformed requests.
pub const IPC_EXCEPTION: &str = crate::exceptions::IPC_EXCEPTION;

/// A failure to report to the remote caller as a Java exception.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RpcError {
    /// Fully qualified Java class name, e.g. `java.io.FileNotFoundException`.
    pub class_name: String,
    /// One-line message (FsShell prints it verbatim).
    pub message: String,
}

impl RpcError {
    /// An error with the given Java exception class and message.
    pub fn new(class_name: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            class_name: class_name.into(),
            message: message.into(),
        }
    }

    /// A `java.io.IOException`.
    pub fn io(message: impl Into<String>) -> Self {
        Self::new(IO_EXCEPTION, message)
    }

    /// An `RpcNoSuchMethodException` for a method when the protocol is not at hand.
    /// Prefer [`RpcError::no_such_method_on`], which names the protocol like Hadoop does.
    pub fn no_such_method(method: &str) -> Self {
        Self::new(
            NO_SUCH_METHOD_EXCEPTION,
            format!("Unknown method {method} called on this protocol."),
        )
    }

    /// An `RpcNoSuchMethodException` in Hadoop's wording:
    /// "Unknown method X called on P protocol."
    pub fn no_such_method_on(method: &str, protocol: &str) -> Self {
        Self::new(
            NO_SUCH_METHOD_EXCEPTION,
            format!("Unknown method {method} called on {protocol} protocol."),
        )
    }

    /// An `RpcNoSuchProtocolException` for a protocol this server does not serve.
    pub fn no_such_protocol(protocol: &str) -> Self {
        Self::new(
            NO_SUCH_PROTOCOL_EXCEPTION,
            format!("Unknown protocol: {protocol}"),
        )
    }

    /// The `RpcErrorCodeProto` value to send with this error.
    pub fn error_detail(&self) -> i32 {
        match self.class_name.as_str() {
            NO_SUCH_METHOD_EXCEPTION => crate::frame::ERROR_NO_SUCH_METHOD,
            NO_SUCH_PROTOCOL_EXCEPTION => crate::frame::ERROR_NO_SUCH_PROTOCOL,
            _ => crate::frame::ERROR_APPLICATION,
        }
    }
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.class_name, self.message)
    }
}

impl std::error::Error for RpcError {}

/// Why a client call failed.
#[derive(Debug, thiserror::Error)]
pub enum IpcError {
    /// Socket-level failure (connect, read or write); a call timeout is `ErrorKind::TimedOut`.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// The server answered with an exception.
    #[error("remote exception {class_name}: {message}")]
    Remote { class_name: String, message: String },
    /// The peer sent something that does not follow the IPC protocol.
    #[error("protocol error: {0}")]
    Protocol(String),
    /// The connection was closed before the call completed.
    #[error("connection closed")]
    Closed,
}

impl IpcError {
    /// The remote Java class name, when this is a remote exception.
    pub fn remote_class(&self) -> Option<&str> {
        match self {
            IpcError::Remote { class_name, .. } => Some(class_name),
            _ => None,
        }
    }
}

impl From<RpcError> for IpcError {
    fn from(e: RpcError) -> Self {
        IpcError::Remote {
            class_name: e.class_name,
            message: e.message,
        }
    }
}
