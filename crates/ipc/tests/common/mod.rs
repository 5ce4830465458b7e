//! Shared test support: a toy service and raw-socket helpers.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use prost::Message;
use rhdfs_ipc::frame::{PREAMBLE_LEN, decode_delimited, read_frame};
use rhdfs_ipc::{
    CallContext, RpcError, RpcServer, RpcService, ServerConfig, decode_request, encode_response,
};
use rhdfs_proto::common::{RpcResponseHeaderProto, UserInformationProto};
use rhdfs_proto::hdfs::{GetFileInfoRequestProto, GetFileInfoResponseProto, HdfsFileStatusProto};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

pub const PROTOCOL: &str = "org.apache.hadoop.hdfs.protocol.ClientProtocol";

/// Counters the toy service exposes to tests.
#[derive(Default)]
pub struct Stats {
    pub running: AtomicUsize,
    pub max_running: AtomicUsize,
    pub completed: AtomicUsize,
    /// What a `gate` call waits for (`notify_one` lets one through, before or after it waits).
    pub gate: tokio::sync::Notify,
}

/// The toy service:
/// - `getFileInfo{src}`: a directory status for "/", empty response otherwise.
/// - `whoami{src}`: `{effective_user: user, real_user: "protocol|method|callId|clientIdLen|retry"}`.
/// - `sleep{src: millis}`: sleeps, then echoes `src` as `effective_user`.
/// - `fail{src}`: `java.io.FileNotFoundException` naming `src`.
/// - `panic`: the handler panics.
/// - `gate{src}`: waits for `Stats::gate`, then echoes `src` as `effective_user`.
pub fn toy_service(stats: Arc<Stats>) -> ToyService {
    ToyService { stats }
}

pub struct ToyService {
    stats: Arc<Stats>,
}

impl ToyService {
    async fn sleep(&self, req: GetFileInfoRequestProto) -> Result<UserInformationProto, RpcError> {
        let stats = &self.stats;
        let now = stats.running.fetch_add(1, Ordering::SeqCst) + 1;
        stats.max_running.fetch_max(now, Ordering::SeqCst);
        let millis: u64 = req
            .src
            .parse()
            .map_err(|_| RpcError::io(format!("bad millis {:?}", req.src)))?;
        tokio::time::sleep(Duration::from_millis(millis)).await;
        stats.running.fetch_sub(1, Ordering::SeqCst);
        stats.completed.fetch_add(1, Ordering::SeqCst);
        Ok(UserInformationProto {
            effective_user: Some(req.src),
            real_user: None,
        })
    }
}

#[async_trait]
impl RpcService for ToyService {
    async fn call(&self, ctx: CallContext, body: Bytes) -> Result<Bytes, RpcError> {
        // Decoded per method, so an unknown method is reported before a bad body.
        let req = || decode_request::<GetFileInfoRequestProto>(&body);
        match ctx.method.as_str() {
            "getFileInfo" => {
                let fs = (req()?.src == "/").then(|| HdfsFileStatusProto {
                    file_type: 1,
                    path: Bytes::new(),
                    length: 0,
                    owner: "root".into(),
                    group: "supergroup".into(),
                    file_id: Some(16385),
                    ..Default::default()
                });
                Ok(encode_response(&GetFileInfoResponseProto { fs }))
            }
            "whoami" => {
                req()?;
                Ok(encode_response(&UserInformationProto {
                    effective_user: Some(ctx.user.clone()),
                    real_user: Some(format!(
                        "{}|{}|{}|{}|{}",
                        ctx.protocol,
                        ctx.method,
                        ctx.call_id,
                        ctx.client_id.len(),
                        ctx.retry_count
                    )),
                }))
            }
            // Whom the call is for and how it came (`caller`).
            "whence" => Ok(encode_response(&UserInformationProto {
                effective_user: Some(ctx.client_ip().to_string()),
                real_user: Some(ctx.via().to_string()),
            })),
            "sleep" => Ok(encode_response(&self.sleep(req()?).await?)),
            "fail" => Err(RpcError::new(
                "java.io.FileNotFoundException",
                format!("File does not exist: {}", req()?.src),
            )),
            "panic" => panic!("toy handler panics on purpose"),
            "gate" => {
                let src = req()?.src;
                self.stats.gate.notified().await;
                Ok(encode_response(&UserInformationProto {
                    effective_user: Some(src),
                    real_user: None,
                }))
            }
            other => Err(RpcError::no_such_method_on(other, &ctx.protocol)),
        }
    }
}

/// Starts the toy service on a free local port.
pub async fn start(cfg: ServerConfig) -> (RpcServer, Arc<Stats>) {
    let stats = Arc::new(Stats::default());
    let addr: SocketAddr = "127.0.0.1:0".parse().expect("literal address");
    let server = RpcServer::bind(addr, Arc::new(toy_service(Arc::clone(&stats))), cfg)
        .await
        .expect("bind");
    (server, stats)
}

pub fn req(src: &str) -> GetFileInfoRequestProto {
    GetFileInfoRequestProto { src: src.into() }
}

/// A raw connection that has sent a good preamble and connection context.
pub async fn raw_connected(addr: SocketAddr, client_id: &Bytes) -> TcpStream {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    s.write_all(&rhdfs_ipc::frame::preamble(rhdfs_ipc::frame::AUTH_NONE))
        .await
        .expect("preamble");
    s.write_all(&rhdfs_ipc::headers::context_frame(
        client_id, "alice", PROTOCOL,
    ))
    .await
    .expect("context");
    s
}

/// Reads one response frame and splits off its header.
pub async fn read_response(s: &mut TcpStream) -> (RpcResponseHeaderProto, Bytes) {
    let mut frame = tokio::time::timeout(Duration::from_secs(10), read_frame(s, 1 << 20))
        .await
        .expect("response in time")
        .expect("readable frame")
        .expect("a frame, not EOF");
    let header = decode_delimited(&mut frame, "header").expect("response header");
    (header, frame)
}

/// Waits for the peer to close; returns everything read before EOF.
pub async fn read_to_eof(s: &mut TcpStream) -> Vec<u8> {
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out))
        .await
        .expect("server closes the connection in time")
        .ok();
    out
}

/// Asserts nothing arrives on `s` for `wait`.
pub async fn assert_silent(s: &mut TcpStream, wait: Duration) {
    let mut buf = [0u8; 1];
    if let Ok(res) = tokio::time::timeout(wait, s.read(&mut buf)).await {
        panic!("expected silence, got {res:?} / {buf:?}");
    }
}

pub fn decode<M: Message + Default>(bytes: Bytes) -> M {
    let mut b = bytes;
    decode_delimited(&mut b, "body").expect("delimited body")
}

pub fn preamble_len() -> usize {
    PREAMBLE_LEN
}
