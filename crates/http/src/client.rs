//! An HTTP/1.1 client for the operator commands (`rhdfs fsck` fetches `/fsck`) and tests:
//! one-shot requests ([`request`]) or many over one persistent connection ([`Persistent`]);
//! any method, an optional body, redirects not followed.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

pub use crate::url::{encode_component, encode_query_value};

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

/// One keep-alive connection: requests are sent one after another and each response is
/// read by its Content-Length.
#[derive(Debug)]
pub struct Persistent {
    addr: String,
    stream: TcpStream,
    buf: Vec<u8>,
    timeout: Duration,
}

impl Persistent {
    pub async fn connect(addr: &str, timeout: Duration) -> std::io::Result<Self> {
        let stream = tokio::time::timeout(timeout, TcpStream::connect(addr))
            .await
            .map_err(|_| {
                std::io::Error::new(std::io::ErrorKind::TimedOut, "connect timed out")
            })??;
        stream.set_nodelay(true)?;
        Ok(Persistent {
            addr: addr.to_string(),
            stream,
            buf: Vec::new(),
            timeout,
        })
    }

    /// The local address of the connection (one connection = one local port).
    pub fn local_addr(&self) -> std::io::Result<std::net::SocketAddr> {
        self.stream.local_addr()
    }

    /// Sends one request and reads its response; the connection stays open unless the
    /// server said `Connection: close` (then the next request fails).
    pub async fn request(
        &mut self,
        method: &str,
        path_and_query: &str,
        body: Option<&[u8]>,
    ) -> std::io::Result<Response> {
        let timeout = self.timeout;
        tokio::time::timeout(timeout, self.exchange(method, path_and_query, body))
            .await
            .map_err(|_| {
                std::io::Error::new(std::io::ErrorKind::TimedOut, "HTTP request timed out")
            })?
    }

    async fn exchange(
        &mut self,
        method: &str,
        path_and_query: &str,
        body: Option<&[u8]>,
    ) -> std::io::Result<Response> {
        let mut req = format!(
            "{method} {path_and_query} HTTP/1.1\r\nHost: {}\r\nUser-Agent: rhdfs\r\n",
            self.addr
        );
        if let Some(b) = body {
            req.push_str(&format!("Content-Length: {}\r\n", b.len()));
        }
        req.push_str("\r\n");
        self.stream.write_all(req.as_bytes()).await?;
        if let Some(b) = body {
            self.stream.write_all(b).await?;
        }
        let bad = |m: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, m.to_string());
        let end = loop {
            if let Some(p) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break p + 4;
            }
            self.read_more().await?;
        };
        let head = parse_response(&self.buf[..end])?;
        let len = head
            .header("content-length")
            .and_then(|v| v.parse::<usize>().ok())
            .ok_or_else(|| bad("persistent response without Content-Length"))?;
        if len > MAX_RESPONSE {
            return Err(bad("HTTP response too large"));
        }
        while self.buf.len() < end + len {
            self.read_more().await?;
        }
        let body = self.buf[end..end + len].to_vec();
        self.buf.drain(..end + len);
        Ok(Response { body, ..head })
    }

    async fn read_more(&mut self) -> std::io::Result<()> {
        let mut chunk = vec![0u8; 16 * 1024];
        let n = self.stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "connection closed by the server",
            ));
        }
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(())
    }
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
