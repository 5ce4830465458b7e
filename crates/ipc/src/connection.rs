//! One server-side IPC connection: preamble, optional SASL negotiate, connection context, then
//! a read loop that polls each call's handler once at once (a call that has to wait goes on as
//! a task of its own) and writes the responses from the same task (`outbox`).

use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::FutureExt;
use futures::future::BoxFuture;
use rhdfs_proto::common::{
    IpcConnectionContextProto, RequestHeaderProto, RpcRequestHeaderProto, RpcSaslProto,
};
use tokio::io::{AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader, BufWriter, DuplexStream};
use tokio::net::TcpStream;
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;
use tracing::{debug, error, trace, warn};

use crate::alignment::{AlignmentContext, with_client_state_id};
use crate::caller::Forwarded;
use crate::config::{ServerConfig, shutdown_signalled};
use crate::error::{IPC_EXCEPTION, RpcError, VERSION_MISMATCH_EXCEPTION};
use crate::frame::{
    AUTH_NONE, AUTH_SASL, CONNECTION_CONTEXT_CALL_ID, FATAL_INVALID_RPC_HEADER, FATAL_UNAUTHORIZED,
    FATAL_VERSION_MISMATCH, FrameError, IPC_VERSION, PING_CALL_ID, PREAMBLE_LEN,
    RPC_KIND_PROTOCOL_BUFFER, RPC_MAGIC, RPC_OP_CLOSE_CONNECTION, SASL_CALL_ID,
    SASL_STATE_NEGOTIATE, decode_delimited, read_frame, take_delimited,
};
use crate::headers::{ReplyTo, error_frame, fatal_frame, sasl_success_frame, success_frame};
use crate::idle::{CallGuard, Counted, ReadSide, Registration};
use crate::metrics::RpcMetrics;
use crate::outbox::{self, Outbox};
use crate::service::{CallContext, RpcService};

/// How long a connection closed for a protocol violation keeps reading (and discarding).
const LINGER_TIME: Duration = Duration::from_millis(500);
/// How much it discards at most meanwhile.
const LINGER_MAX_BYTES: usize = 1024 * 1024;

/// Why a connection ended.
#[derive(Debug, thiserror::Error)]
enum Close {
    /// Orderly: EOF, RPC_CLOSE_CONNECTION, closed by the idle scan.
    #[error("{0}")]
    Normal(&'static str),
    /// The peer broke the protocol; logged as a warning.
    #[error("{0}")]
    Violation(String),
    /// Socket failure (reset, broken pipe).
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
}

impl From<FrameError> for Close {
    fn from(e: FrameError) -> Self {
        match e {
            FrameError::Io(e) => Close::Io(e),
            other => Close::Violation(other.to_string()),
        }
    }
}

/// Where a connection came from, which decides what its calls may claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// Accepted from the network: every call is its peer's own.
    Network,
    /// Opened inside this process through a `LocalConnector` (no socket, so no network peer
    /// can be one): a call's caller context may name whom it is made for (`caller`).
    InProcess,
}

/// Serves one accepted connection until it ends or the server shuts down.
pub(crate) async fn serve(
    stream: TcpStream,
    peer: SocketAddr,
    svc: Arc<dyn RpcService>,
    cfg: Arc<ServerConfig>,
    reg: Registration,
    shutdown: watch::Receiver<bool>,
) {
    // Nagle off unless `ipc.server.tcpnodelay` says otherwise: a response is one write.
    if cfg.tcp_nodelay
        && let Err(e) = stream.set_nodelay(true)
    {
        debug!("IPC {peer}: set_nodelay failed: {e}");
    }
    let (rd, wr) = stream.into_split();
    let from = (peer, Origin::Network);
    serve_halves(ReadSide::Tcp(rd), wr, from, svc, cfg, reg, shutdown).await
}

/// Serves the server's end of an in-process connection; `peer` is the server's own address
/// (the calls come from this process).
pub(crate) async fn serve_in_process(
    stream: DuplexStream,
    peer: SocketAddr,
    svc: Arc<dyn RpcService>,
    cfg: Arc<ServerConfig>,
    reg: Registration,
    shutdown: watch::Receiver<bool>,
) {
    let (rd, wr) = tokio::io::split(stream);
    let from = (peer, Origin::InProcess);
    serve_halves(ReadSide::InProcess(rd), wr, from, svc, cfg, reg, shutdown).await
}

async fn serve_halves<W: AsyncWrite + Unpin + Send + 'static>(
    rd: ReadSide,
    wr: W,
    (peer, origin): (SocketAddr, Origin),
    svc: Arc<dyn RpcService>,
    cfg: Arc<ServerConfig>,
    reg: Registration,
    mut shutdown: watch::Receiver<bool>,
) {
    let metrics = Arc::clone(&cfg.metrics);
    let _open = metrics.connection();
    let conn = Connection {
        peer,
        origin,
        svc,
        cfg,
        rd: BufReader::new(Counted::new(rd, &reg)),
        reg,
    };
    tokio::select! {
        () = conn.run(BufWriter::new(wr), metrics) => {}
        () = shutdown_signalled(&mut shutdown) => debug!("IPC connection from {peer} closed: server shutdown"),
    }
}

struct Connection {
    peer: SocketAddr,
    origin: Origin,
    svc: Arc<dyn RpcService>,
    cfg: Arc<ServerConfig>,
    rd: BufReader<Counted>,
    /// This connection in the server's table (idle scan); leaves it when dropped.
    reg: Registration,
}

/// Identity established by the connection context.
struct Session {
    user: String,
    protocol: String,
}

impl Connection {
    async fn run<W: AsyncWrite + Unpin + Send + 'static>(
        mut self,
        wr: W,
        metrics: Arc<RpcMetrics>,
    ) {
        let close = self.serve_calls(wr, metrics).await;
        let peer = self.peer;
        match &close {
            Close::Normal(why) => debug!("IPC connection from {peer} closed: {why}"),
            Close::Violation(why) => warn!("IPC connection from {peer} closed: {why}"),
            Close::Io(e) => debug!("IPC connection from {peer} closed: I/O error: {e}"),
        }
        if matches!(close, Close::Violation(_)) {
            // Our write side is closed by now. Swallow what the peer still sends for a moment:
            // closing with unread input would turn the FIN into an RST and could destroy the
            // FATAL response before the peer reads it.
            self.linger().await;
        }
    }

    async fn linger(&mut self) {
        let mut scratch = vec![0u8; 16 * 1024];
        let mut budget = LINGER_MAX_BYTES;
        let drain = async {
            while budget > 0 {
                match self.rd.read(&mut scratch).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => budget = budget.saturating_sub(n),
                }
            }
        };
        let _ = tokio::time::timeout(LINGER_TIME, drain).await;
    }

    async fn serve_calls<W: AsyncWrite + Unpin + Send + 'static>(
        &mut self,
        mut wr: W,
        metrics: Arc<RpcMetrics>,
    ) -> Close {
        let session = match self.handshake(&mut wr).await {
            Ok(Some(session)) => {
                metrics.authenticated(true);
                session
            }
            Ok(None) => return Close::Normal("EOF before the connection context"),
            Err(close) => {
                if matches!(close, Close::Violation(_)) {
                    metrics.authenticated(false);
                }
                return close;
            }
        };
        let (mut out, tx) = Outbox::new(wr, metrics);
        let close = self.call_loop(&session, &mut out, tx).await;
        // Every response already queued is written, and those of calls still running once
        // they end. After a violation only the FATAL matters: give it a moment to go out,
        // then drop the socket.
        let finished = if matches!(close, Close::Violation(_)) {
            match tokio::time::timeout(LINGER_TIME, out.finish()).await {
                Ok(res) => res,
                Err(_) => return close,
            }
        } else {
            out.finish().await
        };
        match finished {
            Ok(()) => close,
            Err(e) => match close {
                Close::Normal(_) => Close::Io(e),
                other => other,
            },
        }
    }

    /// Reads the preamble and the frames up to and including the connection context.
    async fn handshake<W: AsyncWrite + Unpin>(
        &mut self,
        wr: &mut W,
    ) -> Result<Option<Session>, Close> {
        let read = self
            .unless_closed_as_idle(|rd| {
                Box::pin(async move {
                    let mut pre = [0u8; PREAMBLE_LEN];
                    rd.read_exact(&mut pre).await.map(|_| pre)
                })
            })
            .await?;
        let pre = match read {
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                return Err(Close::Violation(
                    "connection closed inside the preamble".into(),
                ));
            }
            Err(e) => return Err(Close::Io(e)),
            Ok(pre) => pre,
        };
        self.reg.state().handled(PREAMBLE_LEN as u64);
        if pre[..4] != RPC_MAGIC {
            return Err(Close::Violation(format!(
                "bad preamble: magic {:02x?} is not \"hrpc\"",
                &pre[..4]
            )));
        }
        if pre[4] != IPC_VERSION {
            let msg = format!(
                "Server IPC version {IPC_VERSION} cannot communicate with client version {}",
                pre[4]
            );
            let frame = fatal_frame(
                &ReplyTo::connection(),
                VERSION_MISMATCH_EXCEPTION,
                &msg,
                FATAL_VERSION_MISMATCH,
            );
            send_fatal(wr, &frame).await;
            return Err(Close::Violation(format!("bad preamble: {msg}")));
        }
        let mut sasl_pending = match pre[6] {
            AUTH_NONE => false,
            AUTH_SASL => true,
            other => {
                let msg = format!("Unsupported auth protocol {other:#04x}");
                let frame = fatal_frame(
                    &ReplyTo::connection(),
                    IPC_EXCEPTION,
                    &msg,
                    FATAL_UNAUTHORIZED,
                );
                send_fatal(wr, &frame).await;
                return Err(Close::Violation(format!("bad preamble: {msg}")));
            }
        };
        loop {
            let Some(mut frame) = self.next_frame().await? else {
                return Ok(None);
            };
            let header: RpcRequestHeaderProto =
                decode_delimited(&mut frame, "RpcRequestHeaderProto")?;
            match header.call_id {
                PING_CALL_ID => continue,
                SASL_CALL_ID if sasl_pending => {
                    let sasl: RpcSaslProto = decode_delimited(&mut frame, "RpcSaslProto")?;
                    if sasl.state != SASL_STATE_NEGOTIATE {
                        return Err(self
                            .fatal_header(wr, &header, "SASL is not supported beyond NEGOTIATE")
                            .await);
                    }
                    // SIMPLE-only server: SUCCESS makes the client fall back to SIMPLE.
                    let frame = sasl_success_frame(&ReplyTo::from_request(&header));
                    wr.write_all(&frame).await?;
                    wr.flush().await?;
                    sasl_pending = false;
                }
                // A SASL client that skips NEGOTIATE and goes straight to SIMPLE is accepted too.
                CONNECTION_CONTEXT_CALL_ID => {
                    let ctx: IpcConnectionContextProto =
                        decode_delimited(&mut frame, "IpcConnectionContextProto")?;
                    let user = ctx
                        .user_info
                        .and_then(|u| u.effective_user)
                        .unwrap_or_default();
                    let protocol = ctx.protocol.unwrap_or_default();
                    debug!(
                        "IPC connection from {}: user {user:?}, protocol {protocol:?}",
                        self.peer
                    );
                    return Ok(Some(Session { user, protocol }));
                }
                other => {
                    let reason = if sasl_pending {
                        format!("expected a SASL negotiation, got call id {other}")
                    } else {
                        format!("connection context not established (call id {other})")
                    };
                    return Err(self.fatal_header(wr, &header, &reason).await);
                }
            }
        }
    }

    /// Sends a FATAL invalid-header response and returns the violation to close with.
    async fn fatal_header<W: AsyncWrite + Unpin>(
        &self,
        wr: &mut W,
        header: &RpcRequestHeaderProto,
        reason: &str,
    ) -> Close {
        let frame = fatal_frame(
            &ReplyTo::from_request(header),
            IPC_EXCEPTION,
            reason,
            FATAL_INVALID_RPC_HEADER,
        );
        send_fatal(wr, &frame).await;
        Close::Violation(reason.to_owned())
    }

    /// Reads the next frame, unless the idle scan closes the connection first.
    async fn next_frame(&mut self) -> Result<Option<Bytes>, Close> {
        let max = self.cfg.max_data_length;
        let res = self
            .unless_closed_as_idle(|rd| Box::pin(read_frame(rd, max)))
            .await?;
        if let Ok(Some(frame)) = &res {
            // The 4-byte length and the frame are handled input from now on.
            self.reg.state().handled(4 + frame.len() as u64);
            self.cfg.metrics.received(4 + frame.len() as u64);
        }
        res.map_err(Close::from)
    }

    /// Runs the read `start` makes until it completes, or until the idle scan asks this
    /// connection to close and it is still idle then: no call running, every byte received
    /// handled (so the pending read has consumed nothing and can be dropped) and nothing
    /// unread in the socket. A request waiting anywhere keeps the connection open.
    async fn unless_closed_as_idle<T>(
        &mut self,
        mut start: impl for<'a> FnMut(&'a mut BufReader<Counted>) -> BoxFuture<'a, T>,
    ) -> Result<T, Close> {
        let state = Arc::clone(self.reg.state());
        let rules = *self.reg.connections().rules();
        loop {
            {
                let mut read = start(&mut self.rd);
                loop {
                    tokio::select! {
                        biased;
                        res = &mut read => return Ok(res),
                        () = state.close_requested() => {
                            if state.still_idle(&rules, self.reg.connections().now()) {
                                break;
                            }
                        }
                    }
                }
            }
            if !self.rd.get_ref().has_unread_input() {
                return Err(Close::Normal("idle: closed by the idle connection scan"));
            }
        }
    }

    /// Reads calls until EOF, close or a protocol violation. Each call's handler is polled
    /// once right away: a call answered then is queued for writing by this task; one that
    /// has to wait goes on in a task of its own, so the next request is read meanwhile (calls
    /// on one connection stay concurrent, answered as they finish).
    async fn call_loop<W: AsyncWrite + Unpin>(
        &mut self,
        session: &Session,
        out: &mut Outbox<W>,
        tx: outbox::Sender,
    ) -> Close {
        let limit = self.cfg.max_in_flight_per_connection.max(1);
        let permits = Arc::new(Semaphore::new(limit));
        let mut calls = JoinSet::new();
        let close = loop {
            let mut frame = match out.while_running(self.next_frame()).await {
                Ok(Some(frame)) => frame,
                Ok(None) => break Close::Normal("EOF"),
                Err(close) => break close,
            };
            let read_at = Instant::now();
            let header: RpcRequestHeaderProto =
                match decode_delimited(&mut frame, "RpcRequestHeaderProto") {
                    Ok(h) => h,
                    Err(e) => break e.into(),
                };
            if header.rpc_op.unwrap_or_default() == RPC_OP_CLOSE_CONNECTION {
                break Close::Normal("client sent RPC_CLOSE_CONNECTION");
            }
            match header.call_id {
                PING_CALL_ID => {
                    trace!("IPC {}: ping", self.peer);
                    continue;
                }
                id if id < 0 => {
                    let reason = format!("unexpected call id {id} after the connection context");
                    out.push(fatal_for(&header, &reason), None);
                    break Close::Violation(reason);
                }
                _ => {}
            }
            if let Some(kind) = header.rpc_kind
                && kind != RPC_KIND_PROTOCOL_BUFFER
            {
                let reason = format!("unsupported rpc kind {kind}");
                out.push(fatal_for(&header, &reason), None);
                break Close::Violation(reason);
            }
            let request = match decode_request_frame(&mut frame) {
                Ok(r) => r,
                Err(e) => {
                    out.push(fatal_for(&header, &e.to_string()), None);
                    break e.into();
                }
            };
            let (request_header, body) = request;
            let protocol = if request_header.declaring_class_protocol_name.is_empty() {
                session.protocol.clone()
            } else {
                request_header.declaring_class_protocol_name
            };
            let reply_to = ReplyTo::from_request(&header);
            let ctx = CallContext {
                user: session.user.clone(),
                protocol,
                method: request_header.method_name,
                client_id: header.client_id,
                call_id: header.call_id,
                retry_count: reply_to.retry_count,
                peer: self.peer,
                // Only an in-process connection may say whom a call is for; a network
                // client's caller context is not read at all.
                forwarded: match self.origin {
                    Origin::InProcess => header
                        .caller_context
                        .as_ref()
                        .and_then(|c| Forwarded::parse(&c.context)),
                    Origin::Network => None,
                },
            };
            trace!(
                "IPC {}: call {} {}.{}",
                self.peer, ctx.call_id, ctx.protocol, ctx.method
            );
            self.cfg.metrics.enqueued();
            // Backpressure: stop reading while the connection has `limit` calls running or
            // answers unwritten (the slot is freed once the answer is written).
            let (permit, started) = match Arc::clone(&permits).try_acquire_owned() {
                Ok(p) => (p, read_at),
                Err(_) => match out
                    .while_running(Arc::clone(&permits).acquire_owned())
                    .await
                {
                    Ok(p) => (p, Instant::now()),
                    Err(_) => break Close::Normal("call limiter closed"),
                },
            };
            let mut call = Box::pin(tracing::Instrument::in_current_span(answer(
                Arc::clone(&self.svc),
                (ctx, header.state_id),
                body,
                (reply_to, self.cfg.alignment.clone()),
                self.reg.state().call_started(),
                (Arc::clone(&self.cfg.metrics), read_at, started),
            )));
            match futures::poll!(call.as_mut()) {
                Poll::Ready(frame) => out.push(frame, Some(permit)),
                Poll::Pending => {
                    let tx = tx.clone();
                    calls.spawn(async move {
                        let frame = call.await;
                        // The outbox is gone only if the connection was dropped.
                        let _ = tx.send((frame, Some(permit)));
                    });
                }
            }
            while calls.try_join_next().is_some() {}
        };
        // Calls already started finish on their own (their responses are still written if the
        // socket is usable); aborting them midway could leave service state half-updated.
        calls.detach_all();
        close
    }
}

/// Splits `RequestHeaderProto` and the request body off a call frame.
fn decode_request_frame(frame: &mut Bytes) -> Result<(RequestHeaderProto, Bytes), FrameError> {
    let header: RequestHeaderProto = decode_delimited(frame, "RequestHeaderProto")?;
    if header.method_name.is_empty() {
        return Err(FrameError::Malformed(
            "RequestHeaderProto: empty methodName".into(),
        ));
    }
    let body = if frame.is_empty() {
        Bytes::new()
    } else {
        take_delimited(frame, "request body")?
    };
    Ok((header, body))
}

fn fatal_for(header: &RpcRequestHeaderProto, reason: &str) -> Bytes {
    fatal_frame(
        &ReplyTo::from_request(header),
        IPC_EXCEPTION,
        reason,
        FATAL_INVALID_RPC_HEADER,
    )
}

async fn send_fatal<W: AsyncWrite + Unpin>(wr: &mut W, frame: &[u8]) {
    // Best effort: the connection is closed right after either way.
    if wr.write_all(frame).await.is_ok() && wr.flush().await.is_ok() {
        let _ = wr.shutdown().await;
    }
}

/// Runs one call and returns its response frame.
async fn answer(
    svc: Arc<dyn RpcService>,
    // The call and the state id its client sent (`alignment`).
    (ctx, client_state_id): (CallContext, Option<i64>),
    body: Bytes,
    // Whom to answer, and the server's state to answer with.
    (mut reply_to, alignment): (ReplyTo, Option<Arc<dyn AlignmentContext>>),
    // Held until the call is answered: the connection is busy (not idle) meanwhile.
    _running: CallGuard,
    // When the call was read, and when its handler started.
    (metrics, read_at, started): (Arc<RpcMetrics>, Instant, Instant),
) -> Bytes {
    let method = metrics.method(&ctx.method);
    let peer = ctx.peer;
    metrics.started(started.duration_since(read_at));
    let result = with_client_state_id(
        client_state_id,
        AssertUnwindSafe(svc.call(ctx, body)).catch_unwind(),
    )
    .await;
    metrics.finished(&method, started.elapsed(), matches!(result, Ok(Ok(_))));
    // Read after the call: the state its answer reflects, at least.
    reply_to.state_id = alignment.map(|a| a.last_seen_state_id());
    match result {
        Ok(Ok(resp)) => success_frame(&reply_to, &resp),
        Ok(Err(e)) => {
            debug!(
                "IPC {peer}: call {} {} failed: {e}",
                reply_to.call_id,
                method.name()
            );
            error_frame(&reply_to, &e)
        }
        Err(_) => {
            let method = method.name();
            error!("IPC {peer}: handler for {method} panicked");
            error_frame(
                &reply_to,
                &RpcError::io(format!("Server error while handling {method}")),
            )
        }
    }
}
