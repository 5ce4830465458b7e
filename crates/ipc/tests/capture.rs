//! Byte-level checks against the Java 3.5.0 FsShell `-ls /` capture (PROTOCOL.md §1.8).

use crate::common;

use std::sync::Arc;

use async_trait::async_trait;
use bytes::{Bytes, BytesMut};
use common::{PROTOCOL, read_to_eof};
use rhdfs_ipc::headers::{call_frame, context_frame};
use rhdfs_ipc::{
    CallContext, RpcError, RpcServer, RpcService, ServerConfig, decode_request, encode_response,
};
use rhdfs_proto::hdfs::{GetFileInfoRequestProto, GetFileInfoResponseProto};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::sync::mpsc;

const CLIENT_ID: [u8; 16] = [
    0x5e, 0x1f, 0x2a, 0x90, 0x33, 0x44, 0x4d, 0x11, 0x8a, 0x0b, 0xcc, 0xde, 0x01, 0x02, 0x7f, 0x80,
];

fn hex(s: &str) -> Vec<u8> {
    s.split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).expect("hex byte"))
        .collect()
}

/// The captured bytes, with the (unrecorded) client id filled in.
fn capture() -> Vec<u8> {
    let mut out = hex("68 72 70 63 09 00 00");
    // Connection context frame.
    out.extend(hex("00 00 00 5b 21 08 02 10 00 18 05 22 10"));
    out.extend(CLIENT_ID);
    out.extend(hex(
        "28 01 3a 05 0a 03 43 4c 49 38 12 06 0a 04 72 6f 6f 74 1a 2e",
    ));
    out.extend(PROTOCOL.as_bytes());
    // Call #0: getFileInfo("/").
    out.extend(hex("00 00 00 66 21 08 02 10 00 18 00 22 10"));
    out.extend(CLIENT_ID);
    out.extend(hex("28 00 3a 05 0a 03 43 4c 49 3f 0a 0b"));
    out.extend(b"getFileInfo");
    out.extend(hex("12 2e"));
    out.extend(PROTOCOL.as_bytes());
    out.extend(hex("18 01 03 0a 01 2f"));
    out
}

/// Records what the server handed to the service.
struct Recorder(mpsc::UnboundedSender<(CallContext, Bytes)>);

#[async_trait]
impl RpcService for Recorder {
    async fn call(&self, ctx: CallContext, body: Bytes) -> Result<Bytes, RpcError> {
        let _ = self.0.send((ctx, body));
        Ok(encode_response(&GetFileInfoResponseProto { fs: None }))
    }
}

#[tokio::test]
async fn server_decodes_the_java_capture() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let server = RpcServer::bind(
        "127.0.0.1:0".parse().unwrap(),
        Arc::new(Recorder(tx)),
        ServerConfig::default(),
    )
    .await
    .unwrap();
    let bytes = capture();
    assert_eq!(bytes.len(), 7 + 4 + 0x5b + 4 + 0x66);
    let mut s = TcpStream::connect(server.local_addr()).await.unwrap();
    s.write_all(&bytes).await.unwrap();

    let (ctx, body) = rx.recv().await.unwrap();
    assert_eq!(ctx.user, "root");
    assert_eq!(ctx.protocol, PROTOCOL);
    assert_eq!(ctx.method, "getFileInfo");
    assert_eq!(ctx.call_id, 0);
    assert_eq!(ctx.retry_count, 0);
    assert_eq!(&ctx.client_id[..], &CLIENT_ID[..]);
    assert_eq!(&body[..], &[0x0a, 0x01, 0x2f]);
    let req: GetFileInfoRequestProto = decode_request(&body).unwrap();
    assert_eq!(req.src, "/");

    // The response, byte for byte: header {callId 0, SUCCESS, version 9, clientId, retry 0}
    // then the empty GetFileInfoResponseProto (a single 0x00 length byte).
    let mut expected_header = hex("08 00 10 00 18 09 3a 10");
    expected_header.extend(CLIENT_ID);
    expected_header.extend(hex("40 00"));
    let mut expected = BytesMut::new();
    let total = 1 + expected_header.len() + 1;
    expected.extend_from_slice(&(total as u32).to_be_bytes());
    expected.extend_from_slice(&[expected_header.len() as u8]);
    expected.extend_from_slice(&expected_header);
    expected.extend_from_slice(&[0x00]);
    let mut got = vec![0u8; expected.len()];
    tokio::io::AsyncReadExt::read_exact(&mut s, &mut got)
        .await
        .unwrap();
    assert_eq!(got, &expected[..]);

    drop(s);
    server.shutdown().await;
}

#[tokio::test]
async fn client_frames_match_the_capture_without_caller_context() {
    let client_id = Bytes::copy_from_slice(&CLIENT_ID);
    let full = capture();
    // Our client sends no callerContext (hdfs-native does not either): the capture minus the
    // 7 bytes `3a 05 0a 03 43 4c 49` in each request header, lengths adjusted.
    let caller_context = hex("3a 05 0a 03 43 4c 49");
    let strip = |frame: &[u8]| -> Vec<u8> {
        let pos = frame
            .windows(caller_context.len())
            .position(|w| w == &caller_context[..])
            .expect("callerContext present");
        let mut out = frame[..pos].to_vec();
        out.extend_from_slice(&frame[pos + caller_context.len()..]);
        let len = (out.len() - 4) as u32;
        out[..4].copy_from_slice(&len.to_be_bytes());
        out[4] -= caller_context.len() as u8; // header length varint (single byte)
        out
    };
    let context = &full[7..7 + 4 + 0x5b];
    let call = &full[7 + 4 + 0x5b..];
    assert_eq!(
        &context_frame(&client_id, "root", PROTOCOL)[..],
        &strip(context)[..]
    );
    let body = prost::Message::encode_to_vec(&GetFileInfoRequestProto { src: "/".into() });
    assert_eq!(
        &call_frame(0, &client_id, "getFileInfo", PROTOCOL, &body)[..],
        &strip(call)[..]
    );
}

#[tokio::test]
async fn response_header_for_negative_call_id_is_uint32() {
    // A fatal response's callId -1 must be 5 varint bytes (ff ff ff ff 0f), not 10.
    let server = RpcServer::bind(
        "127.0.0.1:0".parse().unwrap(),
        Arc::new(Recorder(mpsc::unbounded_channel().0)),
        ServerConfig::default(),
    )
    .await
    .unwrap();
    let mut s = TcpStream::connect(server.local_addr()).await.unwrap();
    s.write_all(b"hrpc\x08\x00\x00").await.unwrap();
    let mut raw = read_to_eof(&mut s).await;
    assert_eq!(&raw[5..11], &hex("08 ff ff ff ff 0f")[..]);
    let mut b = Bytes::from(raw.split_off(4));
    let h: rhdfs_proto::common::RpcResponseHeaderProto =
        rhdfs_ipc::frame::decode_delimited(&mut b, "header").unwrap();
    assert_eq!(h.call_id, u32::MAX);
    server.shutdown().await;
}
