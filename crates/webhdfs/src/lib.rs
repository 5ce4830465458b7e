//! WebHDFS (`/webhdfs/v1/<path>?op=...`), the REST face of the file system, served by both
//! daemons as Hadoop's are: the NameNode answers metadata operations and redirects OPEN,
//! CREATE, APPEND and GETFILECHECKSUM (307, `Location` on a DataNode's HTTP port with
//! `namenoderpcaddress`); the DataNode streams the data. Both act through `rhdfs-client` as
//! the requesting `user.name`, so permissions, leases and errors are exactly the RPC ones,
//! reported as Hadoop's `RemoteException` JSON with its HTTP status.

pub mod datanode;
pub mod error;
pub mod fs_cache;
pub mod json;
pub mod namenode;
pub mod op;
pub mod params;

pub use datanode::DataNodeWebHdfs;
pub use error::WebError;
pub use namenode::{DatanodeChooser, NameNodeWebHdfs};
pub use op::Op;

/// The path prefix of every WebHDFS request.
pub const PREFIX: &str = "/webhdfs/v1";

/// The Content-Type of a JSON answer to `req`: `application/json`, except for the JDK's HTTP
/// client (User-Agent `Java/...`), which gets none. Hadoop's Java WebHDFS client checks a
/// present Content-Type with JAX-RS `MediaType.valueOf`, and in the shaded client jars
/// (`hadoop-client-api` + `hadoop-client-runtime`, what Spark ships) that call fails for want
/// of Jersey's RuntimeDelegateImpl, turning every answer into "Response decoding failure";
/// without the header the client parses the JSON directly.
pub fn json_content_type(req: &rhdfs_http::Request) -> &'static str {
    match req.header("user-agent") {
        Some(ua) if ua.starts_with("Java/") => "",
        _ => "application/json",
    }
}

/// The file system path of a request path under [`PREFIX`] (`/webhdfs/v1` alone is `/`).
pub fn fs_path(request_path: &str) -> Option<String> {
    let rest = request_path.strip_prefix(PREFIX)?;
    if rest.is_empty() {
        return Some("/".to_string());
    }
    rest.starts_with('/').then(|| rest.to_string())
}

/// A request head for unit tests.
#[cfg(test)]
pub(crate) fn test_request(method: &str, path: &str, query: &str) -> rhdfs_http::Request {
    rhdfs_http::Request::parse(&format!("{method} {path}?{query} HTTP/1.1\r\n\r\n"))
        .expect("a request line")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert_eq!(fs_path("/webhdfs/v1"), Some("/".into()));
        assert_eq!(fs_path("/webhdfs/v1/"), Some("/".into()));
        assert_eq!(fs_path("/webhdfs/v1/a/b"), Some("/a/b".into()));
        assert_eq!(fs_path("/webhdfs/v1x"), None);
        assert_eq!(fs_path("/jmx"), None);
    }

    #[test]
    fn json_type_by_client() {
        let java = rhdfs_http::Request::parse("GET / HTTP/1.1\r\nUser-Agent: Java/17.0.15\r\n\r\n")
            .expect("request");
        let curl = rhdfs_http::Request::parse("GET / HTTP/1.1\r\nUser-Agent: curl/8\r\n\r\n")
            .expect("request");
        assert_eq!(json_content_type(&java), "");
        assert_eq!(json_content_type(&curl), "application/json");
    }
}
