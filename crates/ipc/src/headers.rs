//! Building the RPC header frames exchanged by client and server.

use bytes::Bytes;
use prost::Message;
use rhdfs_proto::common::{
    IpcConnectionContextProto, RequestHeaderProto, RpcCallerContextProto, RpcRequestHeaderProto,
    RpcResponseHeaderProto, RpcSaslProto, UserInformationProto,
};

use crate::error::RpcError;
use crate::frame::{
    CONNECTION_CONTEXT_CALL_ID, FATAL_CALL_ID, IPC_VERSION, RPC_KIND_PROTOCOL_BUFFER,
    RPC_OP_FINAL_PACKET, SASL_CALL_ID, SASL_STATE_SUCCESS, STATUS_ERROR, STATUS_FATAL,
    STATUS_SUCCESS, encode_frame,
};

/// `clientProtocolVersion` sent by both stock clients.
pub const CLIENT_PROTOCOL_VERSION: u64 = 1;

/// The identity of a request a response answers: echoed back in the response header.
#[derive(Debug, Clone)]
pub struct ReplyTo {
    pub call_id: i32,
    pub client_id: Bytes,
    pub retry_count: i32,
    /// The server's state id for the response header (`crate::alignment`).
    pub state_id: Option<i64>,
}

impl ReplyTo {
    pub fn from_request(h: &RpcRequestHeaderProto) -> Self {
        Self {
            call_id: h.call_id,
            client_id: h.client_id.clone(),
            retry_count: h.retry_count(),
            state_id: None,
        }
    }

    /// A reply target for fatal responses not tied to any call.
    pub fn connection() -> Self {
        Self {
            call_id: FATAL_CALL_ID,
            client_id: Bytes::new(),
            retry_count: -1,
            state_id: None,
        }
    }

    fn header(&self, status: i32) -> RpcResponseHeaderProto {
        RpcResponseHeaderProto {
            // Negative ids go out as 32-bit two's complement (the field is uint32).
            call_id: self.call_id as u32,
            status,
            server_ipc_version_num: Some(u32::from(IPC_VERSION)),
            client_id: (!self.client_id.is_empty()).then(|| self.client_id.clone()),
            retry_count: Some(self.retry_count),
            state_id: self.state_id,
            ..Default::default()
        }
    }
}

/// A SUCCESS response carrying `body` (an already encoded response message).
pub fn success_frame(to: &ReplyTo, body: &[u8]) -> Bytes {
    let header = to.header(STATUS_SUCCESS).encode_to_vec();
    encode_frame(&[&header, body])
}

/// An ERROR response (connection stays open) carrying `err`; no body.
pub fn error_frame(to: &ReplyTo, err: &RpcError) -> Bytes {
    let mut header = to.header(STATUS_ERROR);
    header.exception_class_name = Some(err.class_name.clone());
    header.error_msg = Some(err.message.clone());
    header.error_detail = Some(err.error_detail());
    encode_frame(&[&header.encode_to_vec()])
}

/// A FATAL response (the connection is closed right after it).
pub fn fatal_frame(to: &ReplyTo, class_name: &str, message: &str, detail: i32) -> Bytes {
    let mut header = to.header(STATUS_FATAL);
    header.exception_class_name = Some(class_name.to_owned());
    header.error_msg = Some(message.to_owned());
    header.error_detail = Some(detail);
    encode_frame(&[&header.encode_to_vec()])
}

/// The SIMPLE-only server's answer to a SASL NEGOTIATE: header {callId -33, SUCCESS} plus
/// `RpcSaslProto{state: SUCCESS}`.
pub fn sasl_success_frame(to: &ReplyTo) -> Bytes {
    let reply = ReplyTo {
        call_id: SASL_CALL_ID,
        ..to.clone()
    };
    let sasl = RpcSaslProto {
        state: SASL_STATE_SUCCESS,
        ..Default::default()
    };
    let header = reply.header(STATUS_SUCCESS).encode_to_vec();
    encode_frame(&[&header, &sasl.encode_to_vec()])
}

fn request_header(call_id: i32, client_id: &Bytes, retry_count: i32) -> RpcRequestHeaderProto {
    RpcRequestHeaderProto {
        rpc_kind: Some(RPC_KIND_PROTOCOL_BUFFER),
        rpc_op: Some(RPC_OP_FINAL_PACKET),
        call_id,
        client_id: client_id.clone(),
        retry_count: Some(retry_count),
        ..Default::default()
    }
}

/// The connection-context frame (callId -3) a client sends after the preamble.
pub fn context_frame(client_id: &Bytes, user: &str, protocol: &str) -> Bytes {
    let header = request_header(CONNECTION_CONTEXT_CALL_ID, client_id, -1);
    let context = IpcConnectionContextProto {
        user_info: Some(UserInformationProto {
            effective_user: Some(user.to_owned()),
            real_user: None,
        }),
        protocol: Some(protocol.to_owned()),
    };
    encode_frame(&[&header.encode_to_vec(), &context.encode_to_vec()])
}

/// A call frame: request header, `RequestHeaderProto`, and the encoded request message.
pub fn call_frame(
    call_id: i32,
    client_id: &Bytes,
    method: &str,
    protocol: &str,
    body: &[u8],
) -> Bytes {
    call_frame_for(
        call_id,
        client_id,
        method,
        protocol,
        body,
        CallExtras::default(),
    )
}

/// What a request header carries besides the call's ids.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallExtras {
    /// `RpcRequestHeaderProto.callerContext`: whom the call is made for (see `caller`).
    pub caller_context: Option<String>,
    /// 0 for a first attempt; a retry of the same call id counts up, as the server's retry
    /// cache expects.
    pub retry_count: i32,
    /// `RpcRequestHeaderProto.stateId` (8): the client's state (`alignment::ClientAlignment`).
    pub state_id: Option<i64>,
}

/// [`call_frame`] with a caller context, retry count and state id.
pub fn call_frame_for(
    call_id: i32,
    client_id: &Bytes,
    method: &str,
    protocol: &str,
    body: &[u8],
    extras: CallExtras,
) -> Bytes {
    let mut header = request_header(call_id, client_id, extras.retry_count);
    header.caller_context = extras.caller_context.map(|context| RpcCallerContextProto {
        context,
        signature: None,
    });
    header.state_id = extras.state_id;
    let request = RequestHeaderProto {
        method_name: method.to_owned(),
        declaring_class_protocol_name: protocol.to_owned(),
        client_protocol_version: CLIENT_PROTOCOL_VERSION,
    };
    encode_frame(&[&header.encode_to_vec(), &request.encode_to_vec(), body])
}
