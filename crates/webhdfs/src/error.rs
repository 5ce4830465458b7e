//! Errors as WebHDFS reports them: a `RemoteException` JSON object naming the Java class,
//! with the HTTP status Hadoop's exception handler gives that class.

use rhdfs_client::ClientError;
use rhdfs_client::error::class;
use rhdfs_conf::json;

/// An operation's failure: the Java exception class and its message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{class}: {message}")]
pub struct WebError {
    pub class: String,
    pub message: String,
}

impl WebError {
    pub fn new(class: impl Into<String>, message: impl Into<String>) -> Self {
        WebError {
            class: class.into(),
            message: message.into(),
        }
    }

    pub fn illegal_argument(message: impl Into<String>) -> Self {
        Self::new(class::ILLEGAL_ARGUMENT, message)
    }

    pub fn unsupported(message: impl Into<String>) -> Self {
        Self::new(class::UNSUPPORTED_OPERATION, message)
    }

    pub fn io(message: impl Into<String>) -> Self {
        Self::new(class::IO_EXCEPTION, message)
    }

    /// A failure of the server itself (not of the request).
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(class::RUNTIME_EXCEPTION, message)
    }

    /// The class name without its package.
    pub fn simple_name(&self) -> &str {
        self.class.rsplit('.').next().unwrap_or(&self.class)
    }

    /// The status Hadoop's WebHDFS exception handler answers with: 401 for a security
    /// failure, 404 for FileNotFoundException, 400 for bad arguments and unsupported
    /// operations, 500 for a server fault, and 403 for every other IOException (access
    /// control, safe mode, quota, existing files, ...).
    pub fn status(&self) -> u16 {
        match self.simple_name() {
            "SecurityException" => 401,
            "FileNotFoundException" => 404,
            "IllegalArgumentException"
            | "HadoopIllegalArgumentException"
            | "InvalidPathException"
            | "UnsupportedOperationException" => 400,
            "RuntimeException" | "NullPointerException" => 500,
            _ => 403,
        }
    }

    /// `{"RemoteException":{"exception":...,"javaClassName":...,"message":...}}`.
    pub fn to_json(&self) -> String {
        format!(
            "{{\"RemoteException\":{{\"exception\":{},\"javaClassName\":{},\"message\":{}}}}}",
            json::string(self.simple_name()),
            json::string(&self.class),
            json::string(&self.message)
        )
    }
}

impl WebError {
    /// Answers `req` with this error: its status and RemoteException JSON.
    pub async fn send(
        &self,
        req: &rhdfs_http::Request,
        conn: &mut rhdfs_http::Connection,
    ) -> std::io::Result<()> {
        tracing::debug!(path = %req.path, "WebHDFS: {self}");
        let body = self.to_json();
        conn.respond(
            self.status(),
            crate::json_content_type(req),
            &[],
            body.as_bytes(),
        )
        .await
    }
}

impl From<ClientError> for WebError {
    fn from(e: ClientError) -> Self {
        WebError::new(e.class_name(), e.message())
    }
}

/// Why an operation failed: a client call (its connection may need dropping) or the request.
pub(crate) enum Failure {
    Client(ClientError),
    Web(WebError),
}

impl From<ClientError> for Failure {
    fn from(e: ClientError) -> Self {
        Failure::Client(e)
    }
}

impl From<WebError> for Failure {
    fn from(e: WebError) -> Self {
        Failure::Web(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_and_json() {
        let e = WebError::new("java.io.FileNotFoundException", "File does not exist: /x");
        assert_eq!(e.status(), 404);
        assert_eq!(
            e.to_json(),
            "{\"RemoteException\":{\"exception\":\"FileNotFoundException\",\"javaClassName\":\"java.io.FileNotFoundException\",\"message\":\"File does not exist: /x\"}}"
        );
        let cases = [
            ("org.apache.hadoop.security.AccessControlException", 403),
            (
                "org.apache.hadoop.hdfs.server.namenode.SafeModeException",
                403,
            ),
            ("org.apache.hadoop.fs.FileAlreadyExistsException", 403),
            ("java.lang.IllegalArgumentException", 400),
            ("org.apache.hadoop.fs.InvalidPathException", 400),
            ("java.lang.UnsupportedOperationException", 400),
            ("java.lang.SecurityException", 401),
            ("java.lang.RuntimeException", 500),
            ("java.io.IOException", 403),
        ];
        for (class, status) in cases {
            assert_eq!(WebError::new(class, "m").status(), status, "{class}");
        }
    }

    #[test]
    fn client_errors_keep_their_class() {
        let e: WebError = ClientError::remote(
            "org.apache.hadoop.fs.PathIsNotEmptyDirectoryException",
            "`/d is non empty': Directory is not empty",
        )
        .into();
        assert_eq!(e.simple_name(), "PathIsNotEmptyDirectoryException");
        assert_eq!(e.message, "`/d is non empty': Directory is not empty");
        assert_eq!(e.status(), 403);
    }
}
