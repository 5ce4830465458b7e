//! The RPC client: one TCP connection per `RpcClient` (re-opened lazily if it dies), many
//! concurrent calls matched to responses by call id.

use std::collections::HashMap;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::Duration;

use bytes::Bytes;
use parking_lot::Mutex;
use prost::Message;
use rhdfs_proto::common::RpcResponseHeaderProto;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tracing::{debug, trace};

use crate::alignment::ClientAlignment;
use crate::error::IpcError;
use crate::frame::{
    AUTH_NONE, FrameError, STATUS_ERROR, STATUS_FATAL, STATUS_SUCCESS, decode_delimited, preamble,
    read_frame, take_delimited,
};
use crate::headers::{CallExtras, call_frame_for, context_frame};
use crate::local::LocalConnector;

mod connect;
pub use connect::ConnectRetry;

/// Default of `ipc.maximum.response.length` (128 MiB).
pub const MAX_RESPONSE_LENGTH_DEFAULT: usize = 128 * 1024 * 1024;
/// Default connect timeout (`ipc.client.connect.timeout`, 20 s).
pub const CONNECT_TIMEOUT_DEFAULT: Duration = Duration::from_secs(20);
/// Default idle time after which the client drops its connection
/// (`ipc.client.connection.maxidletime`, 10 s; the server waits twice as long).
pub const CLIENT_MAX_IDLE_DEFAULT: Duration = Duration::from_secs(10);
/// `ipc.client.rpc-timeout.ms`: call timeout (0 = none).
pub const RPC_TIMEOUT_KEY: &str = "ipc.client.rpc-timeout.ms";
/// Default of [`RPC_TIMEOUT_KEY`] (Hadoop 3.5: 120 s).
pub const RPC_TIMEOUT_DEFAULT: Duration = Duration::from_secs(120);
/// `ipc.maximum.response.length`.
pub const MAX_RESPONSE_LENGTH_KEY: &str = "ipc.maximum.response.length";
/// `ipc.client.connect.timeout` (ms).
pub const CONNECT_TIMEOUT_KEY: &str = "ipc.client.connect.timeout";

/// Client limits and timeouts.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// Fail a call with `ErrorKind::TimedOut` if no response arrives in time (`None`: wait).
    pub call_timeout: Option<Duration>,
    /// Responses longer than this close the connection.
    pub max_response_length: usize,
    /// Limit on establishing the TCP connection.
    pub connect_timeout: Duration,
    /// How often a failed TCP connect is tried again: none unless the caller asks
    /// ([`ConnectRetry::from_conf`] for Hadoop's `ipc.client.connect.*` keys); a failover
    /// layer or a component with a retry loop of its own moves on instead.
    pub connect_retry: ConnectRetry,
    /// With no call pending for this long the client closes its connection (the server may
    /// close one idle for twice as long, once `ipc.client.idlethreshold` connections are
    /// open, and that could race a new call); the next call reconnects.
    pub max_idle: Duration,
    /// Connect through this in-process connector instead of TCP to the address (a gateway
    /// inside the server's process; see `local`).
    pub in_process: Option<LocalConnector>,
    /// The client's state (Hadoop's `ClientGSIContext`): when set, every request carries its
    /// state id and every successful response's state id updates it. Clients sharing one
    /// (clones of this configuration) share it. None: requests carry no state id.
    pub alignment: Option<Arc<ClientAlignment>>,
}

impl Default for ClientConfig {
    fn default() -> Self {
        Self {
            call_timeout: None,
            max_response_length: MAX_RESPONSE_LENGTH_DEFAULT,
            connect_timeout: CONNECT_TIMEOUT_DEFAULT,
            connect_retry: ConnectRetry::NONE,
            max_idle: CLIENT_MAX_IDLE_DEFAULT,
            in_process: None,
            alignment: None,
        }
    }
}

impl ClientConfig {
    /// Reads `ipc.client.rpc-timeout.ms` (0 disables the call timeout),
    /// `ipc.maximum.response.length`, `ipc.client.connect.timeout` and
    /// `ipc.client.connection.maxidletime`; connects are not retried
    /// ([`ClientConfig::connect_retry`]).
    pub fn from_conf(conf: &rhdfs_conf::Configuration) -> Result<Self, rhdfs_conf::ConfError> {
        use rhdfs_conf::TimeUnit::Milliseconds;
        let call_timeout = conf.get_duration(RPC_TIMEOUT_KEY, RPC_TIMEOUT_DEFAULT, Milliseconds)?;
        let max_response =
            conf.get_size(MAX_RESPONSE_LENGTH_KEY, MAX_RESPONSE_LENGTH_DEFAULT as u64)?;
        Ok(Self {
            call_timeout: (!call_timeout.is_zero()).then_some(call_timeout),
            max_response_length: usize::try_from(max_response).unwrap_or(usize::MAX),
            connect_timeout: conf.get_duration(
                CONNECT_TIMEOUT_KEY,
                CONNECT_TIMEOUT_DEFAULT,
                Milliseconds,
            )?,
            connect_retry: ConnectRetry::NONE,
            max_idle: conf.get_duration(
                crate::config::CONNECTION_MAX_IDLE_KEY,
                CLIENT_MAX_IDLE_DEFAULT,
                Milliseconds,
            )?,
            in_process: None,
            alignment: None,
        })
    }
}

/// Decodes `body`, the answer to `method`, as `Resp` (what [`RpcClient::call`] and callers
/// of [`RpcClient::call_raw`] that want a message do).
pub fn decode_response<Resp: Message + Default>(
    method: &str,
    body: Bytes,
) -> Result<Resp, IpcError> {
    Resp::decode(body)
        .map_err(|e| IpcError::Protocol(format!("cannot decode the {method} response: {e}")))
}

/// A Hadoop RPC client for one protocol on one server. Cheap to clone; clones share the
/// connection, call-id counter and client id. `call` takes `&self` and may run concurrently.
#[derive(Clone, Debug)]
pub struct RpcClient {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    addr: String,
    protocol: String,
    user: String,
    client_id: Bytes,
    cfg: ClientConfig,
    next_call_id: AtomicI32,
    closed: AtomicBool,
    conn: tokio::sync::Mutex<Option<Arc<Conn>>>,
}

impl RpcClient {
    /// Connects to `addr` (`host:port`) and sends the preamble and connection context.
    pub async fn connect(addr: &str, protocol: &str, user: &str) -> Result<Self, IpcError> {
        Self::connect_with(addr, protocol, user, ClientConfig::default()).await
    }

    /// [`RpcClient::connect`] with explicit limits.
    pub async fn connect_with(
        addr: &str,
        protocol: &str,
        user: &str,
        cfg: ClientConfig,
    ) -> Result<Self, IpcError> {
        let shared = Shared {
            addr: addr.to_owned(),
            protocol: protocol.to_owned(),
            user: user.to_owned(),
            client_id: Self::new_client_id(),
            cfg,
            next_call_id: AtomicI32::new(0),
            closed: AtomicBool::new(false),
            conn: tokio::sync::Mutex::new(None),
        };
        let conn = Conn::open(&shared).await?;
        *shared.conn.lock().await = Some(Arc::new(conn));
        Ok(Self {
            shared: Arc::new(shared),
        })
    }

    /// A client that connects on its first call, sending `client_id` in every header: one of a
    /// set of clients (one per server) that a failover layer re-sends the same call through,
    /// so the servers' retry caches see one caller. Such a layer numbers the calls itself
    /// ([`RpcClient::call_raw_as`]) and must not mix in [`RpcClient::call`].
    pub fn lazy(
        addr: &str,
        protocol: &str,
        user: &str,
        cfg: ClientConfig,
        client_id: Bytes,
    ) -> Self {
        Self {
            shared: Arc::new(Shared {
                addr: addr.to_owned(),
                protocol: protocol.to_owned(),
                user: user.to_owned(),
                client_id,
                cfg,
                next_call_id: AtomicI32::new(0),
                closed: AtomicBool::new(false),
                conn: tokio::sync::Mutex::new(None),
            }),
        }
    }

    /// A fresh random 16-byte client id, as [`RpcClient::connect`] makes for itself.
    pub fn new_client_id() -> Bytes {
        Bytes::copy_from_slice(uuid::Uuid::new_v4().as_bytes())
    }

    /// Calls `method` with `req` and decodes the response as `Resp`.
    pub async fn call<Req: Message, Resp: Message + Default>(
        &self,
        method: &str,
        req: &Req,
    ) -> Result<Resp, IpcError> {
        decode_response(method, self.call_raw(method, &req.encode_to_vec()).await?)
    }

    /// Calls `method` with an already encoded request; returns the encoded response message.
    pub async fn call_raw(&self, method: &str, body: &[u8]) -> Result<Bytes, IpcError> {
        self.send(method, body, None).await
    }

    /// [`RpcClient::call_raw`] as call `call_id`, attempt `retry_count` (0 first): a failover
    /// layer re-sending one call to another server keeps its id so that server's retry cache
    /// can answer a retried at-most-once call with the first answer.
    pub async fn call_raw_as(
        &self,
        method: &str,
        body: &[u8],
        call_id: i32,
        retry_count: i32,
    ) -> Result<Bytes, IpcError> {
        self.send(method, body, Some((call_id & i32::MAX, retry_count)))
            .await
    }

    /// Opens the connection if there is none: a failover layer learns here, before sending
    /// anything, that a server cannot be reached (so any call may go elsewhere).
    pub async fn ensure_connected(&self) -> Result<(), IpcError> {
        self.connection().await.map(drop)
    }

    async fn send(
        &self,
        method: &str,
        body: &[u8],
        id: Option<(i32, i32)>,
    ) -> Result<Bytes, IpcError> {
        let shared = &self.shared;
        // A connection found dead before anything was sent on it is replaced once.
        let mut attempts = 0;
        let (conn, call_id, rx) = loop {
            attempts += 1;
            let conn = self.connection().await?;
            let call_id = match id {
                Some((call_id, _)) => call_id,
                None => shared.next_call_id.fetch_add(1, Ordering::Relaxed) & i32::MAX,
            };
            match conn.table.register(call_id) {
                Ok(rx) => break (conn, call_id, rx),
                Err(e) if attempts >= 2 => return Err(e),
                Err(_) => continue,
            }
        };
        let _pending = PendingGuard {
            table: &conn.table,
            call_id,
        };
        let frame = call_frame_for(
            call_id,
            &shared.client_id,
            method,
            &shared.protocol,
            body,
            CallExtras {
                caller_context: crate::caller::current(),
                retry_count: id.map_or(0, |(_, retry)| retry),
                state_id: shared
                    .cfg
                    .alignment
                    .as_ref()
                    .map(|a| a.last_seen_state_id()),
            },
        );
        trace!("IPC client {}: call {call_id} {method}", shared.addr);
        if conn.tx.send(frame).await.is_err() {
            return Err(conn.table.failure());
        }
        let reply = match shared.cfg.call_timeout {
            None => rx.await,
            Some(limit) => match tokio::time::timeout(limit, rx).await {
                Ok(reply) => reply,
                Err(_) => {
                    return Err(IpcError::Io(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!(
                            "call {call_id} {method} to {} timed out after {limit:?}",
                            shared.addr
                        ),
                    )));
                }
            },
        };
        reply.unwrap_or_else(|_| Err(conn.table.failure()))
    }

    /// The live connection, re-opened if the previous one died.
    async fn connection(&self) -> Result<Arc<Conn>, IpcError> {
        let shared = &self.shared;
        if shared.closed.load(Ordering::Acquire) {
            return Err(IpcError::Closed);
        }
        let mut slot = shared.conn.lock().await;
        if let Some(conn) = slot.as_ref()
            && !conn.table.is_closed()
        {
            return Ok(Arc::clone(conn));
        }
        if let Some(old) = slot.take() {
            old.shutdown();
        }
        debug!("IPC client: connecting to {}", shared.addr);
        let conn = Arc::new(Conn::open(shared).await?);
        *slot = Some(Arc::clone(&conn));
        Ok(conn)
    }

    /// Closes the connection; pending and later calls fail with [`IpcError::Closed`].
    pub async fn close(&self) {
        self.shared.closed.store(true, Ordering::Release);
        if let Some(conn) = self.shared.conn.lock().await.take() {
            conn.shutdown();
        }
    }

    /// The 16-byte client id sent in every request header.
    pub fn client_id(&self) -> &Bytes {
        &self.shared.client_id
    }

    /// The server address as given to `connect`.
    pub fn addr(&self) -> &str {
        &self.shared.addr
    }

    /// The protocol name sent in the context and every request header.
    pub fn protocol(&self) -> &str {
        &self.shared.protocol
    }

    /// The effective user sent in the connection context.
    pub fn user(&self) -> &str {
        &self.shared.user
    }
}

/// Why a connection stopped; turned into an `IpcError` for every call it fails.
#[derive(Debug, Clone)]
enum Failure {
    Closed,
    Io(io::ErrorKind, String),
    Remote { class_name: String, message: String },
    Protocol(String),
}

impl Failure {
    fn to_error(&self) -> IpcError {
        match self {
            Failure::Closed => IpcError::Closed,
            Failure::Io(kind, msg) => IpcError::Io(io::Error::new(*kind, msg.clone())),
            Failure::Remote {
                class_name,
                message,
            } => IpcError::Remote {
                class_name: class_name.clone(),
                message: message.clone(),
            },
            Failure::Protocol(msg) => IpcError::Protocol(msg.clone()),
        }
    }
}

type Reply = Result<Bytes, IpcError>;

/// Calls awaiting a response on one connection.
#[derive(Debug, Default)]
struct CallTable {
    state: Mutex<TableState>,
}

#[derive(Debug, Default)]
struct TableState {
    calls: HashMap<i32, oneshot::Sender<Reply>>,
    failure: Option<Failure>,
}

impl CallTable {
    fn register(&self, call_id: i32) -> Result<oneshot::Receiver<Reply>, IpcError> {
        let mut state = self.state.lock();
        if let Some(failure) = &state.failure {
            return Err(failure.to_error());
        }
        let (tx, rx) = oneshot::channel();
        state.calls.insert(call_id, tx);
        Ok(rx)
    }

    fn complete(&self, call_id: i32, reply: Reply) {
        match self.state.lock().calls.remove(&call_id) {
            // The caller may have given up (timeout, cancellation); that is fine.
            Some(tx) => {
                let _ = tx.send(reply);
            }
            None => debug!("IPC client: response for unknown call id {call_id}"),
        }
    }

    fn remove(&self, call_id: i32) {
        self.state.lock().calls.remove(&call_id);
    }

    /// Marks the connection dead and fails every pending call. The first failure wins.
    fn fail_all(&self, failure: Failure) {
        let calls = {
            let mut state = self.state.lock();
            if state.failure.is_none() {
                state.failure = Some(failure);
            }
            std::mem::take(&mut state.calls)
        };
        let failure = self.failure();
        for (_, tx) in calls {
            let _ = tx.send(Err(clone_error(&failure)));
        }
    }

    /// Marks the connection closed if no call is pending; true if it did.
    fn retire_if_idle(&self) -> bool {
        let mut state = self.state.lock();
        if state.failure.is_none() && state.calls.is_empty() {
            state.failure = Some(Failure::Closed);
        }
        state.failure.is_some()
    }

    fn is_closed(&self) -> bool {
        self.state.lock().failure.is_some()
    }

    fn failure(&self) -> IpcError {
        self.state
            .lock()
            .failure
            .as_ref()
            .map_or(IpcError::Closed, Failure::to_error)
    }
}

fn clone_error(e: &IpcError) -> IpcError {
    match e {
        IpcError::Io(err) => IpcError::Io(io::Error::new(err.kind(), err.to_string())),
        IpcError::Remote {
            class_name,
            message,
        } => IpcError::Remote {
            class_name: class_name.clone(),
            message: message.clone(),
        },
        IpcError::Protocol(msg) => IpcError::Protocol(msg.clone()),
        IpcError::Closed => IpcError::Closed,
    }
}

/// Removes a call's table entry when the call finishes or is cancelled.
struct PendingGuard<'a> {
    table: &'a CallTable,
    call_id: i32,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        self.table.remove(self.call_id);
    }
}

/// One TCP connection: a writer task fed by a channel and a reader task filling the table.
#[derive(Debug)]
struct Conn {
    tx: mpsc::Sender<Bytes>,
    table: Arc<CallTable>,
    reader: JoinHandle<()>,
    writer: JoinHandle<()>,
}

impl Conn {
    async fn open(shared: &Shared) -> Result<Self, IpcError> {
        if let Some(local) = &shared.cfg.in_process {
            let (rd, wr) = tokio::io::split(local.connect()?);
            return Self::start(shared, rd, wr).await;
        }
        let stream = connect::connect_tcp(
            &shared.addr,
            shared.cfg.connect_timeout,
            &shared.cfg.connect_retry,
        )
        .await?;
        stream.set_nodelay(true)?;
        let (rd, wr) = stream.into_split();
        Self::start(shared, rd, wr).await
    }

    /// Sends the preamble and connection context, then starts the reader and the writer.
    async fn start<R, W>(shared: &Shared, rd: R, wr: W) -> Result<Self, IpcError>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let mut wr = BufWriter::new(wr);
        wr.write_all(&preamble(AUTH_NONE)).await?;
        wr.write_all(&context_frame(
            &shared.client_id,
            &shared.user,
            &shared.protocol,
        ))
        .await?;
        wr.flush().await?;
        let table = Arc::new(CallTable::default());
        let (tx, rx) = mpsc::channel(256);
        let reader = tokio::spawn(tracing::Instrument::in_current_span(read_loop(
            BufReader::new(rd),
            Arc::clone(&table),
            Responses {
                client_id: shared.client_id.clone(),
                alignment: shared.cfg.alignment.clone(),
            },
            shared.cfg.max_response_length,
        )));
        let writer = tokio::spawn(tracing::Instrument::in_current_span(write_loop(
            wr,
            rx,
            Arc::clone(&table),
            shared.cfg.max_idle,
        )));
        Ok(Self {
            tx,
            table,
            reader,
            writer,
        })
    }

    fn shutdown(&self) {
        self.table.fail_all(Failure::Closed);
        self.reader.abort();
        self.writer.abort();
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Writes queued call frames. After `max_idle` with no call pending it retires the
/// connection (new calls then open a fresh one) and half-closes the socket.
async fn write_loop<W: AsyncWrite + Unpin>(
    mut wr: W,
    mut rx: mpsc::Receiver<Bytes>,
    table: Arc<CallTable>,
    max_idle: Duration,
) {
    let res: io::Result<()> = async {
        loop {
            let frame = match tokio::time::timeout(max_idle, rx.recv()).await {
                Ok(Some(frame)) => frame,
                Ok(None) => return Ok(()),
                Err(_) if table.retire_if_idle() => {
                    debug!("IPC client: closing idle connection");
                    return wr.shutdown().await;
                }
                Err(_) => continue,
            };
            wr.write_all(&frame).await?;
            while let Ok(frame) = rx.try_recv() {
                wr.write_all(&frame).await?;
            }
            wr.flush().await?;
        }
    }
    .await;
    if let Err(e) = res {
        table.fail_all(Failure::Io(e.kind(), format!("write failed: {e}")));
    }
}

/// What the reader checks responses against and records from them.
struct Responses {
    client_id: Bytes,
    /// Updated from each successful response's state id, before its caller sees it.
    alignment: Option<Arc<ClientAlignment>>,
}

async fn read_loop<R: AsyncRead + Unpin>(
    mut rd: BufReader<R>,
    table: Arc<CallTable>,
    responses: Responses,
    max_len: usize,
) {
    let failure = loop {
        match read_frame(&mut rd, max_len).await {
            Ok(Some(frame)) => {
                if let Err(failure) = dispatch_response(frame, &table, &responses) {
                    break failure;
                }
            }
            Ok(None) => break Failure::Closed,
            Err(FrameError::Io(e)) => break Failure::Io(e.kind(), format!("read failed: {e}")),
            Err(e) => break Failure::Protocol(e.to_string()),
        }
    };
    debug!("IPC client connection ended: {failure:?}");
    table.fail_all(failure);
}

/// Hands one response to its caller; `Err` ends the connection.
fn dispatch_response(
    mut frame: Bytes,
    table: &CallTable,
    responses: &Responses,
) -> Result<(), Failure> {
    let client_id = &responses.client_id;
    let header: RpcResponseHeaderProto = decode_delimited(&mut frame, "RpcResponseHeaderProto")
        .map_err(|e| Failure::Protocol(e.to_string()))?;
    // The field is uint32; call ids are i32 reinterpreted.
    let call_id = header.call_id as i32;
    if let Some(id) = &header.client_id
        && !id.is_empty()
        && id != client_id
    {
        return Err(Failure::Protocol(format!(
            "client ids do not match in the response to call {call_id}"
        )));
    }
    let remote = || Failure::Remote {
        class_name: header.exception_class_name.clone().unwrap_or_default(),
        message: header.error_msg.clone().unwrap_or_default(),
    };
    match header.status {
        STATUS_SUCCESS => {
            let body = if frame.is_empty() {
                Bytes::new()
            } else {
                take_delimited(&mut frame, "response body")
                    .map_err(|e| Failure::Protocol(e.to_string()))?
            };
            // As Hadoop's client: only a successful response moves the client's state, and
            // before the caller gets it (its next request carries it).
            if let (Some(alignment), Some(state_id)) = (&responses.alignment, header.state_id) {
                alignment.receive_response_state(state_id);
            }
            table.complete(call_id, Ok(body));
            Ok(())
        }
        STATUS_ERROR => {
            table.complete(call_id, Err(remote().to_error()));
            Ok(())
        }
        STATUS_FATAL => Err(remote()),
        other => Err(Failure::Protocol(format!(
            "unknown response status {other} for call {call_id}"
        ))),
    }
}

#[cfg(test)]
mod alignment_tests;
