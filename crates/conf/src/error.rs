use std::path::PathBuf;

/// Errors produced while loading or reading a [`crate::Configuration`].
#[derive(Debug, thiserror::Error)]
pub enum ConfError {
    /// A configuration resource could not be read or written.
    #[error("I/O error on {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A configuration resource is not well-formed XML.
    #[error("malformed configuration resource {source_name}: {message}")]
    Xml {
        source_name: String,
        message: String,
    },
    /// A key holds a value that cannot be parsed as the requested type.
    #[error("invalid value {value:?} for configuration key {key}: {reason}")]
    InvalidValue {
        key: String,
        value: String,
        reason: String,
    },
    /// A `-D` definition is not of the form `key=value`.
    #[error("invalid definition {0:?}: expected key=value")]
    InvalidDefine(String),
    /// A host:port string could not be parsed.
    #[error("invalid address {addr:?}: {reason}")]
    InvalidAddress { addr: String, reason: String },
    /// The NameNode RPC address could not be determined from the configuration.
    #[error("cannot determine the NameNode RPC address: {0}")]
    NoNameNodeAddress(String),
    /// `${var}` expansion went deeper than the allowed bound (a reference cycle).
    #[error("variable substitution depth too large ({depth}) expanding {expr:?}")]
    SubstitutionDepth { depth: usize, expr: String },
}

impl ConfError {
    pub(crate) fn invalid(key: &str, value: &str, reason: impl Into<String>) -> Self {
        ConfError::InvalidValue {
            key: key.to_string(),
            value: value.to_string(),
            reason: reason.into(),
        }
    }
}
