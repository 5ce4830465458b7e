//! A connection's response side, driven by the connection's own task: the frames of calls
//! answered on their first poll are queued here directly, those of calls that had to wait
//! come through a channel from their tasks, and whatever is queued is written (then flushed
//! once the queue runs dry) whenever the connection task is polled — while it waits for the
//! next request, for a call slot, or after the last request. So a call answered at once is
//! written with no other task woken; a slow reader of responses never stops the reading of
//! requests (bounded by the call slots, each held until its frame is written).

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use tokio::io::AsyncWrite;
use tokio::sync::{OwnedSemaphorePermit, mpsc};

use crate::metrics::RpcMetrics;

/// One response frame and the call slot it holds until it is written.
pub(crate) type Queued = (Bytes, Option<OwnedSemaphorePermit>);

/// Where the task of a call that had to wait sends its response.
pub(crate) type Sender = mpsc::UnboundedSender<Queued>;

pub(crate) struct Outbox<W> {
    wr: W,
    queue: VecDeque<Queued>,
    /// Bytes of the front frame already written.
    written: usize,
    /// Written frames not flushed yet.
    unflushed: bool,
    rx: mpsc::UnboundedReceiver<Queued>,
    /// Every sender is gone (the connection's own one included).
    rx_closed: bool,
    /// The first write error; from then on frames are dropped (their calls' slots freed).
    failed: Option<io::Error>,
    metrics: Arc<RpcMetrics>,
}

impl<W: AsyncWrite + Unpin> Outbox<W> {
    pub(crate) fn new(wr: W, metrics: Arc<RpcMetrics>) -> (Self, Sender) {
        let (tx, rx) = mpsc::unbounded_channel();
        let out = Outbox {
            wr,
            queue: VecDeque::new(),
            written: 0,
            unflushed: false,
            rx,
            rx_closed: false,
            failed: None,
            metrics,
        };
        (out, tx)
    }

    /// Queues a frame; it goes out the next time the outbox is polled.
    pub(crate) fn push(&mut self, frame: Bytes, slot: Option<OwnedSemaphorePermit>) {
        if self.failed.is_none() {
            self.queue.push_back((frame, slot));
        }
    }

    /// Takes in the waiting calls' responses and writes what it can. Ready once nothing is
    /// queued, everything written is flushed, and (`until_closed`) every sender is gone.
    fn poll_progress(&mut self, cx: &mut Context<'_>, until_closed: bool) -> Poll<()> {
        while !self.rx_closed {
            match self.rx.poll_recv(cx) {
                Poll::Ready(Some((frame, slot))) => self.push(frame, slot),
                Poll::Ready(None) => self.rx_closed = true,
                Poll::Pending => break,
            }
        }
        if self.failed.is_none()
            && let Err(e) = std::task::ready!(self.poll_write_queue(cx))
        {
            self.failed = Some(e);
            self.queue.clear();
        }
        if until_closed && !self.rx_closed && self.failed.is_none() {
            return Poll::Pending;
        }
        Poll::Ready(())
    }

    fn poll_write_queue(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let Some((frame, _)) = self.queue.front() {
            while self.written < frame.len() {
                let n = std::task::ready!(
                    Pin::new(&mut self.wr).poll_write(cx, &frame[self.written..])
                )?;
                if n == 0 {
                    return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
                }
                self.written += n;
            }
            self.metrics.sent(frame.len() as u64);
            self.written = 0;
            self.unflushed = true;
            // Dropping the entry frees its call slot.
            self.queue.pop_front();
        }
        if self.unflushed {
            std::task::ready!(Pin::new(&mut self.wr).poll_flush(cx))?;
            self.unflushed = false;
        }
        Poll::Ready(Ok(()))
    }

    /// Runs `fut` to completion, writing queued responses meanwhile.
    pub(crate) async fn while_running<F: Future>(&mut self, fut: F) -> F::Output {
        let mut fut = std::pin::pin!(fut);
        std::future::poll_fn(|cx| {
            let _ = self.poll_progress(cx, false);
            fut.as_mut().poll(cx)
        })
        .await
    }

    /// Writes everything queued and everything still to come (until every sender is gone),
    /// then shuts the write side down. The first write error, if any.
    pub(crate) async fn finish(mut self) -> io::Result<()> {
        std::future::poll_fn(|cx| self.poll_progress(cx, true)).await;
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        tokio::io::AsyncWriteExt::shutdown(&mut self.wr).await
    }
}
