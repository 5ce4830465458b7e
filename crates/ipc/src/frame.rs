//! Low-level Hadoop IPC framing: the connection preamble, 4-byte big-endian frame lengths and
//! varint-delimited protobuf messages inside a frame.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use prost::Message;
use tokio::io::{AsyncRead, AsyncReadExt};

/// The four magic bytes that open every IPC connection.
pub const RPC_MAGIC: [u8; 4] = *b"hrpc";
/// The only IPC protocol version spoken (`RpcConstants.CURRENT_VERSION`).
pub const IPC_VERSION: u8 = 9;
/// Service class byte sent by both stock clients.
pub const DEFAULT_SERVICE_CLASS: u8 = 0;
/// Auth-protocol byte: no authentication.
pub const AUTH_NONE: u8 = 0x00;
/// Auth-protocol byte: SASL (-33 as a signed byte).
pub const AUTH_SASL: u8 = 0xDF;
/// Length of the connection preamble.
pub const PREAMBLE_LEN: usize = 7;

/// Call id used for fatal responses not tied to a call (`AUTHORIZATION_FAILED`).
pub const FATAL_CALL_ID: i32 = -1;
/// Call id marking an invalid call.
pub const INVALID_CALL_ID: i32 = -2;
/// Call id of the connection context frame (never answered).
pub const CONNECTION_CONTEXT_CALL_ID: i32 = -3;
/// Call id of a ping frame (never answered).
pub const PING_CALL_ID: i32 = -4;
/// Call id of SASL exchange frames.
pub const SASL_CALL_ID: i32 = -33;

/// `RpcKindProto.RPC_PROTOCOL_BUFFER`.
pub const RPC_KIND_PROTOCOL_BUFFER: i32 = 2;
/// `RpcRequestHeaderProto.OperationProto.RPC_FINAL_PACKET`.
pub const RPC_OP_FINAL_PACKET: i32 = 0;
/// `RpcRequestHeaderProto.OperationProto.RPC_CLOSE_CONNECTION`.
pub const RPC_OP_CLOSE_CONNECTION: i32 = 2;

/// `RpcResponseHeaderProto.RpcStatusProto` values.
pub const STATUS_SUCCESS: i32 = 0;
/// Call failed; the connection stays open.
pub const STATUS_ERROR: i32 = 1;
/// Connection-level failure; the connection is closed.
pub const STATUS_FATAL: i32 = 2;

/// `RpcResponseHeaderProto.RpcErrorCodeProto` values used by this crate.
pub const ERROR_APPLICATION: i32 = 1;
/// The method is not part of the protocol.
pub const ERROR_NO_SUCH_METHOD: i32 = 2;
/// The protocol is not served here.
pub const ERROR_NO_SUCH_PROTOCOL: i32 = 3;
/// Internal server failure.
pub const ERROR_RPC_SERVER: i32 = 4;
/// Fatal: header fields invalid.
pub const FATAL_INVALID_RPC_HEADER: i32 = 12;
/// Fatal: the request could not be deserialized.
pub const FATAL_DESERIALIZING_REQUEST: i32 = 13;
/// Fatal: IPC version mismatch.
pub const FATAL_VERSION_MISMATCH: i32 = 14;
/// Fatal: authentication failed / not supported.
pub const FATAL_UNAUTHORIZED: i32 = 15;

/// `RpcSaslProto.SaslState` values used by this crate.
pub const SASL_STATE_SUCCESS: i32 = 0;
/// The client's opening SASL message.
pub const SASL_STATE_NEGOTIATE: i32 = 1;

/// Buffer reserved before a frame's bytes arrive; larger frames grow as they are read.
const INITIAL_FRAME_CAPACITY: usize = 64 * 1024;

/// Why a frame could not be read or taken apart.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    #[error("frame length {len} exceeds the maximum of {max} bytes")]
    TooLong { len: u64, max: usize },
    #[error("malformed frame: {0}")]
    Malformed(String),
}

/// Reads one length-prefixed frame. Returns `Ok(None)` on a clean EOF before the length.
pub async fn read_frame<R: AsyncRead + Unpin>(
    reader: &mut R,
    max_len: usize,
) -> Result<Option<Bytes>, FrameError> {
    let mut len_buf = [0u8; 4];
    let mut filled = 0;
    while filled < len_buf.len() {
        let n = reader.read(&mut len_buf[filled..]).await?;
        if n == 0 {
            if filled == 0 {
                return Ok(None);
            }
            return Err(FrameError::Io(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "connection closed inside a frame length",
            )));
        }
        filled += n;
    }
    // Hadoop treats the length as a signed int; a negative value is as bad as an oversized one.
    let len = u64::from(u32::from_be_bytes(len_buf));
    if len > max_len as u64 || len > i32::MAX as u64 {
        return Err(FrameError::TooLong { len, max: max_len });
    }
    // Grow the buffer as bytes arrive rather than trusting the length up front: a peer that
    // announces a large frame and sends nothing must not cost that much memory.
    let mut data = Vec::with_capacity((len as usize).min(INITIAL_FRAME_CAPACITY));
    let got = (&mut *reader).take(len).read_to_end(&mut data).await?;
    if (got as u64) < len {
        return Err(FrameError::Io(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("connection closed after {got} of {len} frame bytes"),
        )));
    }
    Ok(Some(Bytes::from(data)))
}

/// Splits the next varint-delimited message off the front of `buf`, returning its bytes.
pub fn take_delimited(buf: &mut Bytes, what: &str) -> Result<Bytes, FrameError> {
    let len = prost::encoding::decode_varint(buf)
        .map_err(|e| FrameError::Malformed(format!("{what}: bad length prefix: {e}")))?;
    if len > buf.remaining() as u64 {
        return Err(FrameError::Malformed(format!(
            "{what}: length prefix {len} exceeds the {} bytes left in the frame",
            buf.remaining()
        )));
    }
    Ok(buf.split_to(len as usize))
}

/// Decodes the next varint-delimited message of type `M` from the front of `buf`.
pub fn decode_delimited<M: Message + Default>(
    buf: &mut Bytes,
    what: &str,
) -> Result<M, FrameError> {
    let bytes = take_delimited(buf, what)?;
    M::decode(bytes).map_err(|e| FrameError::Malformed(format!("{what}: {e}")))
}

/// Builds one frame: the 4-byte big-endian length followed by each part, varint-delimited.
pub fn encode_frame(parts: &[&[u8]]) -> Bytes {
    let body_len: usize = parts
        .iter()
        .map(|p| prost::encoding::encoded_len_varint(p.len() as u64) + p.len())
        .sum();
    let mut out = BytesMut::with_capacity(4 + body_len);
    // Frames we build are bounded by the message sizes we chose to send; saturate defensively.
    out.put_u32(u32::try_from(body_len).unwrap_or(u32::MAX));
    for part in parts {
        prost::encoding::encode_varint(part.len() as u64, &mut out);
        out.put_slice(part);
    }
    out.freeze()
}

/// Builds the 7-byte connection preamble.
pub fn preamble(auth: u8) -> [u8; PREAMBLE_LEN] {
    let [m0, m1, m2, m3] = RPC_MAGIC;
    [m0, m1, m2, m3, IPC_VERSION, DEFAULT_SERVICE_CLASS, auth]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_roundtrip() {
        let frame = encode_frame(&[b"abc", b"", &[7u8; 200]]);
        let len = u32::from_be_bytes([frame[0], frame[1], frame[2], frame[3]]) as usize;
        assert_eq!(len, frame.len() - 4);
        let mut rest = frame.slice(4..);
        assert_eq!(&take_delimited(&mut rest, "a").unwrap()[..], b"abc");
        assert!(take_delimited(&mut rest, "b").unwrap().is_empty());
        assert_eq!(take_delimited(&mut rest, "c").unwrap().len(), 200);
        assert!(rest.is_empty());
    }

    #[test]
    fn truncated_delimited_is_malformed() {
        let mut buf = Bytes::from_static(&[5, 1, 2]);
        assert!(matches!(
            take_delimited(&mut buf, "x"),
            Err(FrameError::Malformed(_))
        ));
        let mut buf = Bytes::from_static(&[0xff, 0xff]);
        assert!(take_delimited(&mut buf, "x").is_err());
    }

    #[tokio::test]
    async fn read_frame_limits() {
        let frame = encode_frame(&[&[1u8; 10]]);
        let mut r = &frame[..];
        assert_eq!(read_frame(&mut r, 100).await.unwrap().unwrap().len(), 11);
        assert!(read_frame(&mut r, 100).await.unwrap().is_none());
        let mut r = &frame[..];
        assert!(matches!(
            read_frame(&mut r, 5).await,
            Err(FrameError::TooLong { len: 11, max: 5 })
        ));
        let mut r: &[u8] = &[0, 0];
        assert!(read_frame(&mut r, 5).await.is_err());
    }
}
