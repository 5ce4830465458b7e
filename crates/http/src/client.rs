//! A one-shot HTTP/1.1 client for the operator commands (`rhdfs fsck` fetches `/fsck`) and
//! tests: any method, an optional body, redirects not followed.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

pub use crate::url::encode_component;

/// Largest response body accepted.
const MAX_RESPONSE: usize = 256 * 1024 * 1024;

/// A response: status, headers and the whole body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub code: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    /// The value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// GETs `path_and_query` from `addr` (host:port); returns the status code and body.
pub async fn get(
    addr: &str,
    path_and_query: &str,
    timeout: Duration,
) -> std::io::Result<(u16, String)> {
    let r = request(addr, "GET", path_and_query, None, timeout).await?;
    Ok((r.code, r.text()))
}

/// Sends one request (with a Content-Length body when `body` is given) and reads the whole
/// response.
pub async fn request(
    addr: &str,
    method: &str,
    path_and_query: &str,
    body: Option<&[u8]>,
    timeout: Duration,
) -> std::io::Result<Response> {
    let fut = async {
        let mut s = TcpStream::connect(addr).await?;
        let mut req = format!(
            "{method} {path_and_query} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nUser-Agent: rhdfs\r\n"
        );
        if let Some(b) = body {
            req.push_str(&format!(
                "Content-Type: application/octet-stream\r\nContent-Length: {}\r\n",
                b.len()
            ));
        }
        req.push_str("\r\n");
        s.write_all(req.as_bytes()).await?;
        if let Some(b) = body {
            s.write_all(b).await?;
        }
        let mut buf = Vec::new();
        let mut chunk = [0u8; 64 * 1024];
        loop {
            let n = s.read(&mut chunk).await?;
            if n == 0 {
                break;
            }
            buf.extend_from_slice(&chunk[..n]);
            if buf.len() > MAX_RESPONSE {
                return Err(std::io::Error::other("HTTP response too large"));
            }
        }
        parse_response(&buf)
    };
    tokio::time::timeout(timeout, fut)
        .await
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "HTTP request timed out"))?
}

fn parse_response(buf: &[u8]) -> std::io::Result<Response> {
    let bad = |m: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, m.to_string());
    let end = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| bad("HTTP response without a header end"))?;
    let head = String::from_utf8_lossy(&buf[..end]);
    let mut lines = head.lines();
    let code = lines
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse::<u16>().ok())
        .ok_or_else(|| bad("HTTP response without a status code"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            Some((k.trim().to_string(), v.trim().to_string()))
        })
        .collect();
    let mut body = &buf[end + 4..];
    let len = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse::<usize>().ok());
    if let Some(len) = len {
        body = &body[..len.min(body.len())];
    }
    Ok(Response {
        code,
        headers,
        body: body.to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_response() -> std::io::Result<()> {
        let r = parse_response(
            b"HTTP/1.1 307 Temporary Redirect\r\nLocation: http://x/y\r\nContent-Length: 5\r\n\r\nhelloXX",
        )?;
        assert_eq!(r.code, 307);
        assert_eq!(r.header("location"), Some("http://x/y"));
        assert_eq!(r.text(), "hello");
        assert!(parse_response(b"HTTP/1.1 200 OK\r\n").is_err());
        Ok(())
    }
}
