//! The accept loop both transfer listeners share (the TCP port and the domain socket): each
//! connection served on its own task, every one of them closed when the stop signal fires.

use std::future::Future;
use std::io;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinSet;

/// Accepts with `accept` until `stop` changes; `serve` turns an accepted connection into its
/// task, or refuses it with `None`. An accept error is logged (naming `listener`) and the
/// loop pauses briefly, so a persistent error such as running out of descriptors does not
/// spin.
pub(super) async fn accept_until_stopped<C, A, AF, S, SF>(
    listener: &str,
    mut accept: A,
    mut stop: watch::Receiver<bool>,
    mut serve: S,
) where
    A: FnMut() -> AF,
    AF: Future<Output = io::Result<C>>,
    S: FnMut(C) -> Option<SF>,
    SF: Future<Output = ()> + Send + 'static,
{
    let mut conns = JoinSet::new();
    loop {
        tokio::select! {
            _ = stop.changed() => break,
            // Finished connections are reaped as they end, so the set holds live ones only.
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
            acc = accept() => match acc {
                Ok(conn) => {
                    if let Some(task) = serve(conn) {
                        conns.spawn(tracing::Instrument::in_current_span(task));
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "{listener} accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    }
    conns.abort_all();
    while conns.join_next().await.is_some() {}
}
