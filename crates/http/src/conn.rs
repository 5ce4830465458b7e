//! One accepted connection: its request heads, their bodies (Content-Length or chunked) and
//! the responses, written whole or streamed after a head with their length. HTTP/1.1
//! connections persist (keep-alive) unless the client asks to close, or a request body was
//! left unread, or a response was cut short; the read buffer starts empty, grows only while
//! a request is being read, and is given back between requests.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::request::{MAX_HEAD, Request};

/// Longest chunk-size or trailer line accepted in a chunked body.
const MAX_LINE: usize = 4096;
/// Read size while waiting for a request head.
const HEAD_READ: usize = 2 * 1024;
/// Read size while receiving a request body.
const BODY_READ: usize = 64 * 1024;

fn invalid(msg: impl Into<String>) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, msg.into())
}

/// The reason phrase of the status codes these servers send.
pub fn reason(code: u16) -> &'static str {
    match code {
        100 => "Continue",
        200 => "OK",
        201 => "Created",
        307 => "Temporary Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        500 => "Internal Server Error",
        _ => "Unknown",
    }
}

/// How the request body is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BodyMode {
    Length(u64),
    Chunked { left: u64, crlf_due: bool },
    Done,
}

/// An accepted connection.
pub struct Connection<S = tokio::net::TcpStream> {
    stream: S,
    peer: SocketAddr,
    /// Bytes read past what has been consumed (the body's start follows the head).
    buf: BytesMut,
    read_timeout: Duration,
    body: BodyMode,
    continue_due: bool,
    /// The current request allows the connection to persist (HTTP/1.1 without
    /// `Connection: close`, or HTTP/1.0 with `Connection: keep-alive`).
    keep_alive: bool,
    /// Something happened that rules out another request on this connection.
    must_close: bool,
    /// Body bytes of the response started and not yet written; None before a response.
    response_left: Option<u64>,
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send> Connection<S> {
    pub fn new(stream: S, peer: SocketAddr, read_timeout: Duration) -> Self {
        Connection {
            stream,
            peer,
            buf: BytesMut::new(),
            read_timeout,
            body: BodyMode::Done,
            continue_due: false,
            keep_alive: false,
            must_close: false,
            response_left: None,
        }
    }

    /// Whether the connection can carry another request: the last one asked to persist, its
    /// body was read whole and its response was written whole.
    pub fn reusable(&self) -> bool {
        self.keep_alive
            && !self.must_close
            && self.body == BodyMode::Done
            && self.response_left == Some(0)
    }

    /// Waits up to `idle` for the first byte of another request; false when the peer closed
    /// or stayed silent. The buffer is given back meanwhile, unless bytes are already there.
    pub async fn wait_next(&mut self, idle: Duration) -> bool {
        if !self.buf.is_empty() {
            return true;
        }
        // An idle connection holds no buffer.
        self.buf = BytesMut::new();
        let mut probe = [0u8; 1];
        match tokio::time::timeout(idle, self.stream.read(&mut probe)).await {
            Ok(Ok(1)) => {
                self.buf.extend_from_slice(&probe);
                true
            }
            _ => false,
        }
    }

    pub fn peer(&self) -> SocketAddr {
        self.peer
    }

    /// Reads more bytes into the buffer (small reads for heads, larger for bodies); false at
    /// end of stream.
    async fn fill(&mut self) -> std::io::Result<bool> {
        let want = if self.body == BodyMode::Done {
            HEAD_READ
        } else {
            BODY_READ
        };
        self.buf.reserve(want);
        let n = tokio::time::timeout(self.read_timeout, self.stream.read_buf(&mut self.buf))
            .await
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "read timed out"))??;
        Ok(n > 0)
    }

    /// Reads the request head. `Ok(None)` when the head is not a request line.
    pub async fn read_request(&mut self) -> std::io::Result<Option<Request>> {
        let end = loop {
            if let Some(p) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break p + 4;
            }
            if let Some(p) = self.buf.windows(2).position(|w| w == b"\n\n") {
                break p + 2;
            }
            if self.buf.len() > MAX_HEAD {
                return Err(invalid("request head too large"));
            }
            if !self.fill().await? {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "connection closed before the request head ended",
                ));
            }
        };
        let head = self.buf.split_to(end);
        let text = String::from_utf8_lossy(&head);
        let Some(req) = Request::parse(&text) else {
            return Ok(None);
        };
        let http10 = text
            .lines()
            .next()
            .is_some_and(|l| l.trim_end().ends_with("HTTP/1.0"));
        let conn_header = req.header("connection").map(str::to_ascii_lowercase);
        self.keep_alive = match conn_header.as_deref() {
            Some(v) if v.contains("close") => false,
            Some(v) if v.contains("keep-alive") => true,
            _ => !http10,
        };
        self.response_left = None;
        let chunked = req
            .header("transfer-encoding")
            .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
        self.body = if chunked {
            BodyMode::Chunked {
                left: 0,
                crlf_due: false,
            }
        } else {
            match req.header("content-length").map(|v| v.parse::<u64>()) {
                Some(Ok(0)) | None => BodyMode::Done,
                Some(Ok(n)) => BodyMode::Length(n),
                Some(Err(_)) => return Err(invalid("bad Content-Length")),
            }
        };
        self.continue_due = self.body != BodyMode::Done
            && req
                .header("expect")
                .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"));
        Ok(Some(req))
    }

    async fn read_line(&mut self) -> std::io::Result<String> {
        loop {
            if let Some(p) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let line = self.buf.split_to(p + 2);
                return Ok(String::from_utf8_lossy(&line[..p]).into_owned());
            }
            if self.buf.len() > MAX_LINE {
                return Err(invalid("chunk line too long"));
            }
            if !self.fill().await? {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "connection closed inside a chunked body",
                ));
            }
        }
    }

    async fn take_buffered(&mut self, max: u64) -> std::io::Result<Bytes> {
        if self.buf.is_empty() && !self.fill().await? {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "connection closed before the request body ended",
            ));
        }
        let n = (self.buf.len() as u64).min(max) as usize;
        Ok(self.buf.split_to(n).freeze())
    }

    /// The next piece of the request body; `None` once it has all been read.
    pub async fn body_chunk(&mut self) -> std::io::Result<Option<Bytes>> {
        if self.continue_due {
            self.continue_due = false;
            self.stream
                .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
                .await?;
        }
        loop {
            match self.body {
                BodyMode::Done => return Ok(None),
                BodyMode::Length(left) => {
                    let piece = self.take_buffered(left).await?;
                    let left = left - piece.len() as u64;
                    self.body = if left == 0 {
                        BodyMode::Done
                    } else {
                        BodyMode::Length(left)
                    };
                    return Ok(Some(piece));
                }
                BodyMode::Chunked { left: 0, crlf_due } => {
                    if crlf_due && !self.read_line().await?.is_empty() {
                        return Err(invalid("chunk not followed by CRLF"));
                    }
                    let line = self.read_line().await?;
                    let size = line.split(';').next().unwrap_or_default().trim();
                    let size = u64::from_str_radix(size, 16)
                        .map_err(|_| invalid(format!("bad chunk size {size:?}")))?;
                    if size == 0 {
                        while !self.read_line().await?.is_empty() {}
                        self.body = BodyMode::Done;
                    } else {
                        self.body = BodyMode::Chunked {
                            left: size,
                            crlf_due: false,
                        };
                    }
                }
                BodyMode::Chunked { left, .. } => {
                    let piece = self.take_buffered(left).await?;
                    let left = left - piece.len() as u64;
                    self.body = BodyMode::Chunked {
                        left,
                        crlf_due: left == 0,
                    };
                    return Ok(Some(piece));
                }
            }
        }
    }

    /// Reads and drops what is left of the body, at most `limit` bytes.
    pub async fn discard_body(&mut self, limit: u64) -> std::io::Result<()> {
        let mut seen = 0u64;
        while let Some(b) = self.body_chunk().await? {
            seen += b.len() as u64;
            if seen > limit {
                return Err(invalid("request body too large"));
            }
        }
        Ok(())
    }

    /// Before closing with the body unread: reads (and drops) at most `limit` bytes of it,
    /// unless the client still waits for `100 Continue` (then it sends nothing).
    pub async fn drain_for_close(&mut self, limit: u64) -> std::io::Result<()> {
        if self.continue_due {
            return Ok(());
        }
        self.discard_body(limit).await
    }

    /// Gets the request body out of the way of an answer that does not need it: a client
    /// waiting for `100 Continue` is never invited to send it; otherwise at most `limit`
    /// bytes are read (and dropped) so the answer is not lost to a connection reset.
    pub async fn skip_body(&mut self, limit: u64) -> std::io::Result<()> {
        if self.continue_due {
            // The client may still send the body it was not invited to send: this
            // connection carries no further request.
            self.continue_due = false;
            self.body = BodyMode::Done;
            self.must_close = true;
            return Ok(());
        }
        self.discard_body(limit).await
    }

    /// Writes a status line and headers for a body of `len` bytes.
    pub async fn start_response(
        &mut self,
        code: u16,
        content_type: &str,
        len: u64,
        headers: &[(&str, &str)],
    ) -> std::io::Result<()> {
        let mut head = format!("HTTP/1.1 {code} {}\r\n", reason(code));
        if !content_type.is_empty() {
            head.push_str(&format!("Content-Type: {content_type}\r\n"));
        }
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        // Decided now: a body still unread (or not invited) ends the connection.
        if self.body != BodyMode::Done || self.continue_due {
            self.must_close = true;
        }
        let persist = self.keep_alive && !self.must_close;
        head.push_str(&format!(
            "Content-Length: {len}\r\nConnection: {}\r\n\r\n",
            if persist { "keep-alive" } else { "close" }
        ));
        self.response_left = Some(len);
        self.stream.write_all(head.as_bytes()).await
    }

    /// Writes part of a response body started with [`Connection::start_response`].
    pub async fn write_body(&mut self, data: &[u8]) -> std::io::Result<()> {
        self.response_left = self
            .response_left
            .map(|left| left.saturating_sub(data.len() as u64));
        self.stream.write_all(data).await
    }

    /// Flushes the response; the connection closes now unless it can carry another
    /// request.
    pub async fn finish(&mut self) -> std::io::Result<()> {
        self.stream.flush().await?;
        if self.reusable() {
            return Ok(());
        }
        self.stream.shutdown().await
    }

    /// A whole response.
    pub async fn respond(
        &mut self,
        code: u16,
        content_type: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> std::io::Result<()> {
        self.start_response(code, content_type, body.len() as u64, headers)
            .await?;
        self.write_body(body).await?;
        self.finish().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn body_of(raw: &[u8]) -> std::io::Result<(Request, Vec<u8>)> {
        let (mut client, server) = tokio::io::duplex(1024);
        client.write_all(raw).await?;
        drop(client);
        let peer: SocketAddr = "127.0.0.1:1".parse().map_err(std::io::Error::other)?;
        let mut c = Connection::new(server, peer, Duration::from_secs(5));
        let req = c
            .read_request()
            .await?
            .ok_or_else(|| invalid("no request"))?;
        let mut body = Vec::new();
        while let Some(b) = c.body_chunk().await? {
            body.extend_from_slice(&b);
        }
        Ok((req, body))
    }

    #[tokio::test]
    async fn content_length_body() -> std::io::Result<()> {
        let (req, body) =
            body_of(b"PUT /x?op=A HTTP/1.1\r\nContent-Length: 5\r\n\r\nhelloEXTRA").await?;
        assert_eq!(req.param("op"), Some("A"));
        assert_eq!(body, b"hello");
        Ok(())
    }

    #[tokio::test]
    async fn chunked_body() -> std::io::Result<()> {
        let (_, body) = body_of(
            b"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\nTrailer: x\r\n\r\n",
        )
        .await?;
        assert_eq!(body, b"hello world");
        Ok(())
    }

    #[tokio::test]
    async fn expect_continue_is_answered_only_when_the_body_is_read() -> std::io::Result<()> {
        let peer: SocketAddr = "127.0.0.1:1".parse().map_err(std::io::Error::other)?;
        let raw = b"PUT /x HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n";
        // Skipped: no interim response, only the final one.
        let (mut client, server) = tokio::io::duplex(4096);
        client.write_all(raw).await?;
        let mut c = Connection::new(server, peer, Duration::from_secs(5));
        c.read_request().await?;
        c.skip_body(10).await?;
        c.respond(400, "", &[], b"").await?;
        drop(c);
        let mut got = String::new();
        client.read_to_string(&mut got).await?;
        assert!(got.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{got}");
        // Read: 100 Continue first.
        let (mut client, server) = tokio::io::duplex(4096);
        client.write_all(raw).await?;
        client.write_all(b"ok").await?;
        let mut c = Connection::new(server, peer, Duration::from_secs(5));
        c.read_request().await?;
        assert_eq!(c.body_chunk().await?.as_deref(), Some(&b"ok"[..]));
        c.respond(201, "", &[], b"").await?;
        drop(c);
        let mut got = String::new();
        client.read_to_string(&mut got).await?;
        assert!(
            got.starts_with("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\n"),
            "{got}"
        );
        Ok(())
    }

    #[tokio::test]
    async fn no_body() -> std::io::Result<()> {
        let (_, body) = body_of(b"GET /x HTTP/1.1\r\nHost: h\r\n\r\n").await?;
        assert!(body.is_empty());
        Ok(())
    }

    #[tokio::test]
    async fn truncated_and_malformed_bodies_are_errors() {
        assert!(
            body_of(b"PUT /x HTTP/1.1\r\nContent-Length: 9\r\n\r\nshort")
                .await
                .is_err()
        );
        assert!(
            body_of(b"PUT /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")
                .await
                .is_err()
        );
        assert!(
            body_of(b"PUT /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcXX0\r\n\r\n")
                .await
                .is_err()
        );
        assert!(
            body_of(b"PUT /x HTTP/1.1\r\nContent-Length: x\r\n\r\n")
                .await
                .is_err()
        );
    }
}
