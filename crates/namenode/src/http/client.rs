//! A minimal HTTP/1.1 GET for the operator commands (`rhdfs fsck` fetches `/fsck`).

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Largest response body accepted.
const MAX_RESPONSE: usize = 256 * 1024 * 1024;

/// Percent-encodes a query value (unreserved characters and `/` kept).
pub fn encode_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// GETs `path_and_query` from `addr` (host:port); returns the status code and body.
pub async fn get(
    addr: &str,
    path_and_query: &str,
    timeout: Duration,
) -> std::io::Result<(u16, String)> {
    let fut = async {
        let mut s = TcpStream::connect(addr).await?;
        let req = format!(
            "GET {path_and_query} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nUser-Agent: rhdfs\r\n\r\n"
        );
        s.write_all(req.as_bytes()).await?;
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

fn parse_response(buf: &[u8]) -> std::io::Result<(u16, String)> {
    let bad = |m: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, m.to_string());
    let end = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| bad("HTTP response without a header end"))?;
    let head = String::from_utf8_lossy(&buf[..end]);
    let status_line = head.lines().next().unwrap_or_default();
    let code = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse::<u16>().ok())
        .ok_or_else(|| bad("HTTP response without a status code"))?;
    let mut body = &buf[end + 4..];
    let len = head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim()
            .eq_ignore_ascii_case("content-length")
            .then(|| v.trim().parse::<usize>().ok())
            .flatten()
    });
    if let Some(len) = len {
        body = &body[..len.min(body.len())];
    }
    Ok((code, String::from_utf8_lossy(body).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_response() {
        let r = parse_response(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloXX").ok();
        assert_eq!(r, Some((200, "hello".to_string())));
        assert!(parse_response(b"HTTP/1.1 200 OK\r\n").is_err());
    }

    #[test]
    fn encodes() {
        assert_eq!(encode_component("/a b/c&d"), "/a%20b/c%26d");
    }
}
