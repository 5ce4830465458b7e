//! WebHDFS (`/webhdfs/v1/<path>?op=...`), the REST face of the file system, served by both
//! daemons as Hadoop's are: the NameNode answers metadata operations and redirects OPEN,
//! CREATE, APPEND and GETFILECHECKSUM (307, `Location` on a DataNode's HTTP port with
//! `namenoderpcaddress`); the DataNode streams the data. Both act through `rhdfs-client` as
//! the requesting `user.name`, so permissions, leases and errors are exactly the RPC ones,
//! reported as Hadoop's `RemoteException` JSON with its HTTP status.

pub mod acl;
pub mod datanode;
pub mod error;
pub mod fs_cache;
pub mod json;
pub mod located;
pub mod namenode;
pub mod op;
pub mod params;

pub use datanode::DataNodeWebHdfs;
pub use error::WebError;
pub use namenode::{DatanodeChooser, NameNodeWebHdfs};
pub use op::Op;

/// What both daemons read from the configuration for their WebHDFS endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebSettings {
    /// `dfs.webhdfs.enabled`: when false `/webhdfs/v1` is not served (404).
    pub enabled: bool,
    /// `hadoop.http.staticuser.user`: who a request without `user.name` acts as.
    pub static_user: String,
    /// `hadoop.http.authentication.simple.anonymous.allowed`: when false a request without
    /// `user.name` is refused with 401.
    pub anonymous_allowed: bool,
}

impl WebSettings {
    pub fn from_conf(conf: &rhdfs_conf::Configuration) -> Result<Self, rhdfs_conf::ConfError> {
        use rhdfs_conf::keys;
        Ok(WebSettings {
            enabled: conf.get_bool(
                keys::DFS_WEBHDFS_ENABLED_KEY,
                keys::DFS_WEBHDFS_ENABLED_DEFAULT,
            )?,
            static_user: conf.get_str(
                keys::HADOOP_HTTP_STATICUSER_USER_KEY,
                keys::HADOOP_HTTP_STATICUSER_USER_DEFAULT,
            ),
            anonymous_allowed: conf.get_bool(
                keys::HADOOP_HTTP_AUTHENTICATION_SIMPLE_ANONYMOUS_ALLOWED_KEY,
                keys::HADOOP_HTTP_AUTHENTICATION_SIMPLE_ANONYMOUS_ALLOWED_DEFAULT,
            )?,
        })
    }

    /// The user a request acts as: `user.name`; without it the static user, or a 401 when
    /// anonymous requests are not allowed. A `doas` naming another user is refused (no proxy
    /// users are configured).
    pub fn request_user(&self, req: &rhdfs_http::Request) -> Result<String, WebError> {
        let user = match params::string(req, "user.name") {
            Some(u) => u,
            None if self.anonymous_allowed => self.static_user.as_str(),
            None => {
                return Err(WebError::new(
                    rhdfs_client::error::class::SECURITY_EXCEPTION,
                    "Authentication required",
                ));
            }
        };
        if let Some(doas) = params::string(req, "doas").filter(|d| *d != user) {
            return Err(WebError::new(
                rhdfs_client::error::class::AUTHORIZATION,
                format!("User: {user} is not allowed to impersonate {doas}"),
            ));
        }
        Ok(user.to_string())
    }

    /// Answers a request for a disabled endpoint: 404, as when no servlet is registered.
    pub async fn not_served(conn: &mut rhdfs_http::Connection) -> std::io::Result<()> {
        conn.skip_body(1 << 20).await?;
        conn.respond(404, "text/plain", &[], b"not found\n").await
    }
}

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
    fn users() {
        let open = WebSettings {
            enabled: true,
            static_user: "dr.who".into(),
            anonymous_allowed: true,
        };
        let closed = WebSettings {
            anonymous_allowed: false,
            ..open.clone()
        };
        let req = |q| test_request("GET", "/webhdfs/v1/", q);
        assert_eq!(
            open.request_user(&req("user.name=alice")),
            Ok("alice".into())
        );
        assert_eq!(
            closed.request_user(&req("user.name=alice")),
            Ok("alice".into())
        );
        assert_eq!(open.request_user(&req("")), Ok("dr.who".into()));
        let e = closed.request_user(&req("")).expect_err("anonymous");
        assert_eq!(
            (e.status(), e.message.as_str()),
            (401, "Authentication required")
        );
        assert_eq!(
            open.request_user(&req("user.name=a&doas=a")),
            Ok("a".into())
        );
        let e = open
            .request_user(&req("user.name=a&doas=root"))
            .expect_err("proxy");
        assert_eq!(e.status(), 403);
        assert_eq!(e.message, "User: a is not allowed to impersonate root");
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
