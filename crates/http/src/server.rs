//! The accept loop: one task per connection, one request per connection.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::conn::Connection;
use crate::request::Request;

/// What serves the requests of one endpoint.
#[async_trait]
pub trait Handler: Send + Sync + 'static {
    /// Answers `req` on `conn` (the body, if any, is read from `conn`). An error ends the
    /// connection; it is logged at debug level.
    async fn handle(&self, req: Request, conn: &mut Connection) -> std::io::Result<()>;
}

/// Accepts connections on `listener` until the returned task is aborted. `read_timeout`
/// bounds each read of a request head or body.
pub fn serve(
    listener: TcpListener,
    handler: Arc<dyn Handler>,
    read_timeout: Duration,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            match listener.accept().await {
                Ok((stream, peer)) => {
                    let handler = handler.clone();
                    tokio::spawn(async move {
                        if let Err(e) = one(stream, peer, handler, read_timeout).await {
                            tracing::debug!(%peer, "HTTP connection: {e}");
                        }
                    });
                }
                Err(e) => {
                    tracing::warn!("HTTP accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    })
}

async fn one(
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    handler: Arc<dyn Handler>,
    read_timeout: Duration,
) -> std::io::Result<()> {
    let mut conn = Connection::new(stream, peer, read_timeout);
    match conn.read_request().await? {
        Some(req) => handler.handle(req, &mut conn).await,
        None => conn.respond(400, "text/plain", &[], b"bad request\n").await,
    }
}
