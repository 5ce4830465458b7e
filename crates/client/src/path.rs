//! Paths and `hdfs://` URIs: parsing, normalising, resolving relative paths.

use crate::error::{ClientError, Result};

/// Default NameNode RPC port when a URI names none.
pub const DEFAULT_PORT: u16 = 8020;

/// A path argument split into its URI parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriParts {
    /// `hdfs`, `file`, ... when the argument had a scheme.
    pub scheme: Option<String>,
    /// `host:port` (or `host`) when the argument had an authority.
    pub authority: Option<String>,
    /// The path part, possibly relative or empty.
    pub path: String,
}

/// Splits `s` into scheme, authority and path, as `java.net.URI` would for the forms Hadoop
/// shells accept: `/p`, `p`, `hdfs://host:port/p`, `hdfs:/p`, `file:///p`.
pub fn split_uri(s: &str) -> UriParts {
    let scheme_end = s.find(':').filter(|&i| {
        i > 0
            && s[..i]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '+' || c == '-' || c == '.')
            && s[..i]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic())
            && !s[..i].contains('/')
    });
    let (scheme, rest) = match scheme_end {
        Some(i) => (Some(s[..i].to_ascii_lowercase()), &s[i + 1..]),
        None => (None, s),
    };
    if scheme.is_some()
        && let Some(after) = rest.strip_prefix("//")
    {
        let end = after.find('/').unwrap_or(after.len());
        let auth = &after[..end];
        return UriParts {
            scheme,
            authority: (!auth.is_empty()).then(|| auth.to_string()),
            path: after[end..].to_string(),
        };
    }
    UriParts {
        scheme,
        authority: None,
        path: rest.to_string(),
    }
}

/// `(host, port)` of an `hdfs://host[:port]` URI.
pub fn parse_hdfs_uri(uri: &str) -> Result<(String, u16)> {
    let parts = split_uri(uri);
    match parts.scheme.as_deref() {
        Some("hdfs") => {}
        _ => {
            return Err(ClientError::InvalidPath(format!(
                "not an hdfs:// URI: {uri}"
            )));
        }
    }
    let auth = parts
        .authority
        .ok_or_else(|| ClientError::InvalidPath(format!("no host in URI {uri}")))?;
    rhdfs_conf::addr::parse_host_port(&auth, DEFAULT_PORT)
        .map_err(|e| ClientError::InvalidPath(format!("bad authority in {uri}: {e}")))
}

/// Normalises an absolute path: duplicate and trailing slashes removed, `.` dropped, `..`
/// resolved (never above `/`).
pub fn normalize(path: &str) -> Result<String> {
    if !path.starts_with('/') {
        return Err(ClientError::InvalidPath(format!(
            "path is not absolute: {path}"
        )));
    }
    let mut parts: Vec<&str> = Vec::new();
    for c in path.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    Ok(format!("/{}", parts.join("/")))
}

/// Resolves `path` (absolute, relative to `working_dir`, or an `hdfs://` URI) to a normalised
/// absolute path.
pub fn resolve(working_dir: &str, path: &str) -> Result<String> {
    let parts = split_uri(path);
    if let Some(s) = parts.scheme.as_deref()
        && s != "hdfs"
    {
        return Err(ClientError::InvalidPath(format!(
            "Wrong FS: {path}, expected: hdfs://"
        )));
    }
    let p = parts.path;
    if p.is_empty() {
        if parts.authority.is_some() {
            return Ok("/".into());
        }
        return normalize(working_dir);
    }
    if p.starts_with('/') {
        normalize(&p)
    } else {
        normalize(&format!("{working_dir}/{p}"))
    }
}

/// The parent of a normalised absolute path; `None` for `/`.
pub fn parent(path: &str) -> Option<&str> {
    if path == "/" {
        return None;
    }
    match path.rfind('/') {
        Some(0) => Some("/"),
        Some(i) => Some(&path[..i]),
        None => None,
    }
}

/// The last component of a path (`""` for `/`).
pub fn name(path: &str) -> &str {
    let p = path.trim_end_matches('/');
    match p.rfind('/') {
        Some(i) => &p[i + 1..],
        None => p,
    }
}

/// `dir/name` without doubling the slash.
pub fn join(dir: &str, name: &str) -> String {
    if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_forms() {
        let u = split_uri("hdfs://nn:9000/a/b");
        assert_eq!(u.scheme.as_deref(), Some("hdfs"));
        assert_eq!(u.authority.as_deref(), Some("nn:9000"));
        assert_eq!(u.path, "/a/b");
        let u = split_uri("/a:b");
        assert_eq!(u.scheme, None);
        assert_eq!(u.path, "/a:b");
        let u = split_uri("hdfs:/x");
        assert_eq!(
            (u.scheme.as_deref(), u.authority, u.path.as_str()),
            (Some("hdfs"), None, "/x")
        );
        let u = split_uri("file:///tmp/x");
        assert_eq!(u.scheme.as_deref(), Some("file"));
        assert_eq!(u.path, "/tmp/x");
        assert_eq!(split_uri("rel/p").path, "rel/p");
        assert_eq!(parse_hdfs_uri("hdfs://h:1/").ok(), Some(("h".into(), 1)));
        assert_eq!(parse_hdfs_uri("hdfs://h").ok(), Some(("h".into(), 8020)));
        assert!(parse_hdfs_uri("file:///").is_err());
    }

    #[test]
    fn normalising_and_resolving() {
        assert_eq!(normalize("//a///b/").ok().as_deref(), Some("/a/b"));
        assert_eq!(normalize("/a/./b/../c").ok().as_deref(), Some("/a/c"));
        assert_eq!(normalize("/..").ok().as_deref(), Some("/"));
        assert!(normalize("a").is_err());
        let wd = "/user/alice";
        assert_eq!(resolve(wd, "x/y").ok().as_deref(), Some("/user/alice/x/y"));
        assert_eq!(resolve(wd, "").ok().as_deref(), Some("/user/alice"));
        assert_eq!(resolve(wd, ".").ok().as_deref(), Some("/user/alice"));
        assert_eq!(resolve(wd, "hdfs://nn:1/a/").ok().as_deref(), Some("/a"));
        assert_eq!(resolve(wd, "hdfs://nn:1").ok().as_deref(), Some("/"));
        assert!(resolve(wd, "file:///a").is_err());
    }

    #[test]
    fn parent_name_join() {
        assert_eq!(parent("/"), None);
        assert_eq!(parent("/a"), Some("/"));
        assert_eq!(parent("/a/b"), Some("/a"));
        assert_eq!(name("/a/b"), "b");
        assert_eq!(name("/"), "");
        assert_eq!(join("/", "a"), "/a");
        assert_eq!(join("/a", "b"), "/a/b");
    }
}
