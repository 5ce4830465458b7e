//! A deliberately independent, minimal Hadoop IPC client: hand-written framing (PROTOCOL.md
//! §1.1–1.5) and its own protobuf definitions of the few messages the tests need. It shares no
//! code with the crates under test, so a symmetric bug in our encoder and decoder cannot hide.

use std::time::Duration;

use anyhow::{Context, bail};
use prost::Message;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

pub const CLIENT_PROTOCOL: &str = "org.apache.hadoop.hdfs.protocol.ClientProtocol";

// ---- RpcHeader.proto / IpcConnectionContext.proto / ProtobufRpcEngine.proto -------------------

#[derive(Clone, PartialEq, Message)]
pub struct RpcRequestHeaderProto {
    #[prost(int32, optional, tag = "1")]
    pub rpc_kind: Option<i32>,
    #[prost(int32, optional, tag = "2")]
    pub rpc_op: Option<i32>,
    #[prost(sint32, optional, tag = "3")]
    pub call_id: Option<i32>,
    #[prost(bytes = "vec", optional, tag = "4")]
    pub client_id: Option<Vec<u8>>,
    #[prost(sint32, optional, tag = "5")]
    pub retry_count: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct RequestHeaderProto {
    #[prost(string, optional, tag = "1")]
    pub method_name: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub declaring_class_protocol_name: Option<String>,
    #[prost(uint64, optional, tag = "3")]
    pub client_protocol_version: Option<u64>,
}

#[derive(Clone, PartialEq, Message)]
pub struct UserInformationProto {
    #[prost(string, optional, tag = "1")]
    pub effective_user: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub real_user: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct IpcConnectionContextProto {
    #[prost(message, optional, tag = "2")]
    pub user_info: Option<UserInformationProto>,
    #[prost(string, optional, tag = "3")]
    pub protocol: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct RpcResponseHeaderProto {
    #[prost(uint32, optional, tag = "1")]
    pub call_id: Option<u32>,
    #[prost(int32, optional, tag = "2")]
    pub status: Option<i32>,
    #[prost(uint32, optional, tag = "3")]
    pub server_ipc_version_num: Option<u32>,
    #[prost(string, optional, tag = "4")]
    pub exception_class_name: Option<String>,
    #[prost(string, optional, tag = "5")]
    pub error_msg: Option<String>,
    #[prost(int32, optional, tag = "6")]
    pub error_detail: Option<i32>,
    #[prost(bytes = "vec", optional, tag = "7")]
    pub client_id: Option<Vec<u8>>,
    #[prost(sint32, optional, tag = "8")]
    pub retry_count: Option<i32>,
}

// ---- hdfs.proto / ClientNamenodeProtocol.proto (only what the tests use) ---------------------

#[derive(Clone, PartialEq, Message)]
pub struct FsPermissionProto {
    #[prost(uint32, optional, tag = "1")]
    pub perm: Option<u32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct GetFileInfoRequestProto {
    #[prost(string, optional, tag = "1")]
    pub src: Option<String>,
}

/// `fs` is an HdfsFileStatusProto; kept as raw bytes since the tests only need its presence.
#[derive(Clone, PartialEq, Message)]
pub struct GetFileInfoResponseProto {
    #[prost(bytes = "vec", optional, tag = "1")]
    pub fs: Option<Vec<u8>>,
}

#[derive(Clone, PartialEq, Message)]
pub struct GetBlockLocationsRequestProto {
    #[prost(string, optional, tag = "1")]
    pub src: Option<String>,
    #[prost(uint64, optional, tag = "2")]
    pub offset: Option<u64>,
    #[prost(uint64, optional, tag = "3")]
    pub length: Option<u64>,
}

#[derive(Clone, PartialEq, Message)]
pub struct GetBlockLocationsResponseProto {
    #[prost(message, optional, tag = "1")]
    pub locations: Option<LocatedBlocksProto>,
}

#[derive(Clone, PartialEq, Message)]
pub struct LocatedBlocksProto {
    #[prost(uint64, optional, tag = "1")]
    pub file_length: Option<u64>,
    #[prost(message, repeated, tag = "2")]
    pub blocks: Vec<LocatedBlockProto>,
    #[prost(bool, optional, tag = "3")]
    pub under_construction: Option<bool>,
    #[prost(message, optional, tag = "4")]
    pub last_block: Option<LocatedBlockProto>,
    #[prost(bool, optional, tag = "5")]
    pub is_last_block_complete: Option<bool>,
}

#[derive(Clone, PartialEq, Message)]
pub struct LocatedBlockProto {
    #[prost(message, optional, tag = "1")]
    pub b: Option<ExtendedBlockProto>,
    #[prost(uint64, optional, tag = "2")]
    pub offset: Option<u64>,
    #[prost(message, repeated, tag = "3")]
    pub locs: Vec<DatanodeInfoProto>,
    #[prost(bool, optional, tag = "4")]
    pub corrupt: Option<bool>,
    #[prost(string, repeated, tag = "8")]
    pub storage_ids: Vec<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct ExtendedBlockProto {
    #[prost(string, optional, tag = "1")]
    pub pool_id: Option<String>,
    #[prost(uint64, optional, tag = "2")]
    pub block_id: Option<u64>,
    #[prost(uint64, optional, tag = "3")]
    pub generation_stamp: Option<u64>,
    #[prost(uint64, optional, tag = "4")]
    pub num_bytes: Option<u64>,
}

#[derive(Clone, PartialEq, Message)]
pub struct DatanodeInfoProto {
    #[prost(message, optional, tag = "1")]
    pub id: Option<DatanodeIdProto>,
}

#[derive(Clone, PartialEq, Message)]
pub struct DatanodeIdProto {
    #[prost(string, optional, tag = "1")]
    pub ip_addr: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub host_name: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub datanode_uuid: Option<String>,
    #[prost(uint32, optional, tag = "4")]
    pub xfer_port: Option<u32>,
    #[prost(uint32, optional, tag = "5")]
    pub info_port: Option<u32>,
    #[prost(uint32, optional, tag = "6")]
    pub ipc_port: Option<u32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct CreateRequestProto {
    #[prost(string, optional, tag = "1")]
    pub src: Option<String>,
    #[prost(message, optional, tag = "2")]
    pub masked: Option<FsPermissionProto>,
    #[prost(string, optional, tag = "3")]
    pub client_name: Option<String>,
    #[prost(uint32, optional, tag = "4")]
    pub create_flag: Option<u32>,
    #[prost(bool, optional, tag = "5")]
    pub create_parent: Option<bool>,
    #[prost(uint32, optional, tag = "6")]
    pub replication: Option<u32>,
    #[prost(uint64, optional, tag = "7")]
    pub block_size: Option<u64>,
}

#[derive(Clone, PartialEq, Message)]
pub struct MkdirsRequestProto {
    #[prost(string, optional, tag = "1")]
    pub src: Option<String>,
    #[prost(message, optional, tag = "2")]
    pub masked: Option<FsPermissionProto>,
    #[prost(bool, optional, tag = "3")]
    pub create_parent: Option<bool>,
}

#[derive(Clone, PartialEq, Message)]
pub struct DeleteRequestProto {
    #[prost(string, optional, tag = "1")]
    pub src: Option<String>,
    #[prost(bool, optional, tag = "2")]
    pub recursive: Option<bool>,
}

/// Any response whose content the test does not inspect.
#[derive(Clone, PartialEq, Message)]
pub struct Ignored {}

// ---- framing ----------------------------------------------------------------------------------

/// Connection preamble: "hrpc", version 9, service class 0, auth NONE.
pub const PREAMBLE: [u8; 7] = [b'h', b'r', b'p', b'c', 9, 0, 0];

/// Outcome of one call: the response header, and the body bytes after it (SUCCESS only).
#[derive(Debug)]
pub struct RawResponse {
    pub header: RpcResponseHeaderProto,
    pub body: Vec<u8>,
}

impl RawResponse {
    pub fn is_success(&self) -> bool {
        self.header.status.unwrap_or(0) == 0
    }
    pub fn exception(&self) -> &str {
        self.header.exception_class_name.as_deref().unwrap_or("")
    }
    pub fn message(&self) -> &str {
        self.header.error_msg.as_deref().unwrap_or("")
    }
    /// Decodes the (delimited) response message of a successful call.
    pub fn decode<M: Message + Default>(&self) -> anyhow::Result<M> {
        if !self.is_success() {
            bail!("call failed: {} {}", self.exception(), self.message());
        }
        Ok(M::decode_length_delimited(&self.body[..])?)
    }
}

/// Error from a typed call: a Java exception (class, message) or a transport problem.
#[derive(Debug)]
pub enum CallError {
    Remote { class: String, message: String },
    Other(anyhow::Error),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Remote { class, message } => write!(f, "remote {class}: {message}"),
            CallError::Other(e) => write!(f, "{e:#}"),
        }
    }
}

impl std::error::Error for CallError {}

/// One IPC connection, one call at a time.
pub struct RawRpc {
    pub stream: TcpStream,
    client_id: [u8; 16],
    next_call: i32,
    protocol: String,
}

/// Header of a normal call (`call_id >= 0`) or of the connection context (-3).
pub fn request_header(call_id: i32, client_id: &[u8; 16]) -> RpcRequestHeaderProto {
    RpcRequestHeaderProto {
        rpc_kind: Some(2),
        rpc_op: Some(0),
        call_id: Some(call_id),
        client_id: Some(client_id.to_vec()),
        retry_count: Some(if call_id < 0 { -1 } else { 0 }),
    }
}

/// Frame = int32 BE length + the given delimited messages.
pub fn frame(parts: &[&dyn DynMsg]) -> Vec<u8> {
    let mut body = Vec::new();
    for p in parts {
        p.put_delimited(&mut body);
    }
    let mut out = (body.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(&body);
    out
}

/// Object-safe "encode length-delimited" so [`frame`] can take mixed message types.
pub trait DynMsg {
    fn put_delimited(&self, out: &mut Vec<u8>);
}

impl<M: Message> DynMsg for M {
    fn put_delimited(&self, out: &mut Vec<u8>) {
        self.encode_length_delimited(out).expect("Vec grows");
    }
}

/// `host:port` from `hdfs://host:port[/...]`.
pub fn authority(uri: &str) -> String {
    let rest = uri.strip_prefix("hdfs://").unwrap_or(uri);
    rest.split('/').next().unwrap_or(rest).to_owned()
}

impl RawRpc {
    /// Connects to `addr` (`host:port` or `hdfs://host:port`) and sends the preamble and the
    /// connection context for `user`.
    pub async fn connect(addr: &str, protocol: &str, user: &str) -> anyhow::Result<Self> {
        let addr = authority(addr);
        let mut stream = TcpStream::connect(&addr)
            .await
            .with_context(|| format!("connecting to {addr}"))?;
        stream.set_nodelay(true)?;
        let client_id: [u8; 16] = rand::random();
        let ctx = IpcConnectionContextProto {
            user_info: Some(UserInformationProto {
                effective_user: Some(user.to_owned()),
                real_user: None,
            }),
            protocol: Some(protocol.to_owned()),
        };
        let mut buf = PREAMBLE.to_vec();
        buf.extend(frame(&[&request_header(-3, &client_id), &ctx]));
        stream.write_all(&buf).await?;
        Ok(Self {
            stream,
            client_id,
            next_call: 0,
            protocol: protocol.to_owned(),
        })
    }

    pub fn client_id(&self) -> [u8; 16] {
        self.client_id
    }

    /// Sends a call of `method` with `req` and returns the raw response.
    pub async fn call_raw<Req: Message>(
        &mut self,
        method: &str,
        req: &Req,
    ) -> anyhow::Result<RawResponse> {
        let call_id = self.next_call;
        self.next_call += 1;
        let rh = RequestHeaderProto {
            method_name: Some(method.to_owned()),
            declaring_class_protocol_name: Some(self.protocol.clone()),
            client_protocol_version: Some(1),
        };
        let f = frame(&[&request_header(call_id, &self.client_id), &rh, req]);
        self.stream.write_all(&f).await?;
        let resp = read_response(&mut self.stream, Duration::from_secs(60)).await?;
        let got = resp.header.call_id.context("response without callId")?;
        if got != call_id as u32 {
            bail!("response for call {got}, expected {call_id}");
        }
        if let Some(cid) = &resp.header.client_id
            && !cid.is_empty()
            && cid[..] != self.client_id[..]
        {
            bail!(
                "response clientId {cid:02x?} does not match ours {:02x?}",
                self.client_id
            );
        }
        Ok(resp)
    }

    /// Typed call: Ok(response) or Err(Remote{class, message}).
    pub async fn call<Req: Message, Resp: Message + Default>(
        &mut self,
        method: &str,
        req: &Req,
    ) -> Result<Resp, CallError> {
        let r = self.call_raw(method, req).await.map_err(CallError::Other)?;
        if r.is_success() {
            r.decode().map_err(CallError::Other)
        } else {
            Err(CallError::Remote {
                class: r.exception().to_owned(),
                message: r.message().to_owned(),
            })
        }
    }

    pub async fn get_block_locations(&mut self, src: &str) -> anyhow::Result<LocatedBlocksProto> {
        let req = GetBlockLocationsRequestProto {
            src: Some(src.to_owned()),
            offset: Some(0),
            length: Some(i64::MAX as u64),
        };
        let resp: GetBlockLocationsResponseProto = self.call("getBlockLocations", &req).await?;
        resp.locations
            .with_context(|| format!("getBlockLocations({src}) returned no locations"))
    }

    pub async fn get_file_info_exists(&mut self, src: &str) -> anyhow::Result<bool> {
        let resp: GetFileInfoResponseProto = self
            .call(
                "getFileInfo",
                &GetFileInfoRequestProto {
                    src: Some(src.to_owned()),
                },
            )
            .await?;
        Ok(resp.fs.is_some())
    }
}

/// Reads one response frame: int32 length, delimited header, rest = body.
pub async fn read_response(stream: &mut TcpStream, limit: Duration) -> anyhow::Result<RawResponse> {
    let fut = async {
        let mut len = [0u8; 4];
        stream
            .read_exact(&mut len)
            .await
            .context("reading response length")?;
        let len = u32::from_be_bytes(len) as usize;
        if len > 256 << 20 {
            bail!("response frame length {len} is absurd");
        }
        let mut buf = vec![0u8; len];
        stream
            .read_exact(&mut buf)
            .await
            .context("reading response frame")?;
        let mut slice = &buf[..];
        let header = RpcResponseHeaderProto::decode_length_delimited(&mut slice)?;
        Ok(RawResponse {
            header,
            body: slice.to_vec(),
        })
    };
    tokio::time::timeout(limit, fut)
        .await
        .context("timed out waiting for an RPC response")?
}

/// Reads and discards until the peer closes the connection (EOF or reset). Returns the bytes
/// received before that. Errors if the connection is still open after `limit`.
pub async fn read_until_closed(stream: &mut TcpStream, limit: Duration) -> anyhow::Result<Vec<u8>> {
    let mut got = Vec::new();
    let fut = async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) => return,
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(_) => return, // reset counts as closed
            }
        }
    };
    let outcome = tokio::time::timeout(limit, fut).await;
    match outcome {
        Ok(()) => Ok(got),
        Err(_) => bail!(
            "the server did not close the connection within {limit:?} ({} bytes received)",
            got.len()
        ),
    }
}
