//! In-process connections to an [`RpcServer`](crate::RpcServer): a gateway in the server's
//! own process (the NameNode's WebHDFS) talks to it through a [`LocalConnector`].
//!
//! - A `tokio::io::duplex` pipe, not a loopback socket: no listener, so nothing outside the
//!   process can open one, and the server knows each such connection by construction (its
//!   `Origin::InProcess`), not by anything the peer sends.
//! - The same connection code as a TCP one (preamble, context, calls, metrics, the idle
//!   table) so calls behave and are counted the same; only what a call may claim differs
//!   (`caller`: whom it is for).
//! - The connector holds the server's shutdown signal: once the server stops, connecting
//!   fails and open in-process connections end with the TCP ones.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use tokio::io::DuplexStream;
use tokio::sync::watch;

use crate::config::ServerConfig;
use crate::connection;
use crate::idle::Connections;
use crate::service::RpcService;

/// Pipe capacity each way: a call or response larger than this simply waits for the
/// other side to read (no size limit follows from it).
const PIPE_BYTES: usize = 64 * 1024;

/// Opens in-process connections to one server. Cheap to clone.
#[derive(Clone)]
pub struct LocalConnector {
    inner: Arc<Inner>,
}

struct Inner {
    /// The server's own address: what its handlers see as these connections' peer.
    addr: SocketAddr,
    svc: Arc<dyn RpcService>,
    cfg: Arc<ServerConfig>,
    conns: Arc<Connections>,
    shutdown: watch::Receiver<bool>,
}

impl std::fmt::Debug for LocalConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalConnector")
            .field("addr", &self.inner.addr)
            .finish_non_exhaustive()
    }
}

impl LocalConnector {
    pub(crate) fn new(
        addr: SocketAddr,
        svc: Arc<dyn RpcService>,
        cfg: Arc<ServerConfig>,
        conns: Arc<Connections>,
        shutdown: watch::Receiver<bool>,
    ) -> Self {
        LocalConnector {
            inner: Arc::new(Inner {
                addr,
                svc,
                cfg,
                conns,
                shutdown,
            }),
        }
    }

    /// The server's address (for messages).
    pub fn addr(&self) -> SocketAddr {
        self.inner.addr
    }

    /// A new connection: the client's end of the pipe; the server side runs as a task.
    pub fn connect(&self) -> io::Result<DuplexStream> {
        let i = &self.inner;
        if *i.shutdown.borrow() {
            return Err(io::Error::new(
                io::ErrorKind::ConnectionRefused,
                format!("the IPC server on {} has stopped", i.addr),
            ));
        }
        let (client, server) = tokio::io::duplex(PIPE_BYTES);
        tokio::spawn(tracing::Instrument::in_current_span(
            connection::serve_in_process(
                server,
                i.addr,
                Arc::clone(&i.svc),
                Arc::clone(&i.cfg),
                i.conns.register(),
                i.shutdown.clone(),
            ),
        ));
        Ok(client)
    }
}
