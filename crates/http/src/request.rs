//! A request head: method, path, query parameters (decoded, in order) and headers.

use crate::url::{decode_component, decode_path};

/// Longest request head accepted.
pub const MAX_HEAD: usize = 16 * 1024;

/// A parsed request head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub method: String,
    /// The decoded path, without the query.
    pub path: String,
    pub params: Vec<(String, String)>,
    /// Header names as sent; look them up with [`Request::header`].
    pub headers: Vec<(String, String)>,
}

impl Request {
    /// Parses a head (request line and header lines; the blank line may be included).
    pub fn parse(head: &str) -> Option<Request> {
        let mut lines = head.lines();
        let line = lines.next()?;
        let mut parts = line.split_whitespace();
        let method = parts.next()?.to_string();
        let target = parts.next()?;
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        let params = query
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                (decode_component(k), decode_component(v))
            })
            .collect();
        let headers = lines
            .take_while(|l| !l.is_empty())
            .filter_map(|l| {
                let (k, v) = l.split_once(':')?;
                Some((k.trim().to_string(), v.trim().to_string()))
            })
            .collect();
        Some(Request {
            method,
            path: decode_path(path),
            params,
            headers,
        })
    }

    /// The first value of query parameter `name` (case-sensitive, as servlets are).
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The parameters as `(&str, &str)` pairs.
    pub fn param_pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.params.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_lines() {
        let r = Request::parse(
            "GET /fsck?ugi=bob&path=%2Fa+b&files=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\n",
        )
        .expect("parsed");
        assert_eq!(r.method, "GET");
        assert_eq!(r.path, "/fsck");
        assert_eq!(
            r.params,
            vec![
                ("ugi".into(), "bob".into()),
                ("path".into(), "/a b".into()),
                ("files".into(), "1".into()),
            ]
        );
        assert_eq!(r.param("path"), Some("/a b"));
        assert_eq!(r.param("nope"), None);
        assert_eq!(r.header("content-length"), Some("3"));
        assert_eq!(r.header("host"), Some("x"));
        assert!(Request::parse("").is_none());
        assert!(Request::parse("GET").is_none());
    }

    #[test]
    fn path_plus_is_kept() {
        let r = Request::parse("PUT /webhdfs/v1/a+b%20c?op=MKDIRS HTTP/1.1\r\n\r\n").expect("ok");
        assert_eq!(r.path, "/webhdfs/v1/a+b c");
    }
}
