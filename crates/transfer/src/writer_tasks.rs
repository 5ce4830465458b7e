//! Background side of [`crate::BlockWriter`]: the state shared with the ack-reader task
//! (queue of unacknowledged packets, progress, window, first error) and the ack-reader and
//! heartbeat tasks.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex as StdMutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{Mutex, Semaphore, watch};
use tracing::warn;

use crate::ack::{UNKNOWN_SEQNO, read_ack};
use crate::config::{TransferConfig, with_timeout};
use crate::error::TransferError;
use crate::packet::{HEARTBEAT_SEQNO, Packet};

pub(crate) type BoxWrite = Box<dyn AsyncWrite + Send + Unpin>;

/// A sent packet waiting for its ack.
#[derive(Debug, Clone)]
pub(crate) struct Pending {
    pub(crate) packet: Packet,
    pub(crate) end_offset: u64,
}

#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Progress {
    pub(crate) acked_seqno: Option<i64>,
    pub(crate) acked_bytes: u64,
    pub(crate) failed: bool,
}

/// State shared by the writer, the ack task and the heartbeat task.
pub(crate) struct Shared {
    pub(crate) queue: StdMutex<VecDeque<Pending>>,
    pub(crate) error: StdMutex<Option<TransferError>>,
    pub(crate) progress: watch::Sender<Progress>,
    pub(crate) window: Semaphore,
    pub(crate) closing: AtomicBool,
}

impl Shared {
    pub(crate) fn fail(&self, e: TransferError) {
        warn!(error = %e, "write pipeline failed");
        if let Ok(mut slot) = self.error.lock()
            && slot.is_none()
        {
            *slot = Some(e);
        }
        self.window.close();
        self.progress.send_modify(|p| p.failed = true);
    }

    pub(crate) fn error(&self) -> TransferError {
        match self.error.lock() {
            Ok(slot) => match slot.as_ref() {
                Some(e) => duplicate(e),
                None => TransferError::protocol("write pipeline failed"),
            },
            Err(_) => TransferError::protocol("write pipeline failed"),
        }
    }
}

/// A copy of an error (io::Error is not Clone).
pub(crate) fn duplicate(e: &TransferError) -> TransferError {
    match e {
        TransferError::Io(io) => TransferError::Io(std::io::Error::new(io.kind(), io.to_string())),
        TransferError::Protocol(m) => TransferError::Protocol(m.clone()),
        TransferError::Checksum { chunk, offset } => TransferError::Checksum {
            chunk: *chunk,
            offset: *offset,
        },
        TransferError::Remote {
            status,
            message,
            first_bad_link,
        } => TransferError::Remote {
            status: *status,
            message: message.clone(),
            first_bad_link: first_bad_link.clone(),
        },
        TransferError::Pipeline {
            seqno,
            index,
            status,
        } => TransferError::Pipeline {
            seqno: *seqno,
            index: *index,
            status: *status,
        },
        TransferError::Timeout(m) => TransferError::Timeout(m.clone()),
    }
}

pub(crate) struct Sink {
    pub(crate) w: BoxWrite,
    pub(crate) last_send: Instant,
}

/// Reads acks in order and matches them against the queue of sent packets.
pub(crate) async fn ack_loop<R: AsyncRead + Unpin>(
    mut rd: R,
    shared: Arc<Shared>,
    timeout: Duration,
) {
    loop {
        let ack = match with_timeout(timeout, "waiting for pipeline ack", read_ack(&mut rd)).await {
            Ok(a) => a,
            Err(e) => {
                shared.fail(e);
                return;
            }
        };
        if let Err(e) = ack.check() {
            shared.fail(e);
            return;
        }
        if ack.seqno == HEARTBEAT_SEQNO || ack.seqno == UNKNOWN_SEQNO {
            continue;
        }
        let front = match shared.queue.lock() {
            Ok(q) => q.front().map(|p| {
                (
                    p.packet.header.seqno,
                    p.end_offset,
                    p.packet.header.last_packet_in_block,
                )
            }),
            Err(_) => None,
        };
        let Some((expected, end_offset, last)) = front else {
            shared.fail(TransferError::protocol(format!(
                "ack for seqno {} with no packet outstanding",
                ack.seqno
            )));
            return;
        };
        if ack.seqno != expected {
            shared.fail(TransferError::protocol(format!(
                "expecting ack for seqno {expected} but received {}",
                ack.seqno
            )));
            return;
        }
        if let Ok(mut q) = shared.queue.lock() {
            q.pop_front();
        }
        shared.window.add_permits(1);
        shared.progress.send_modify(|p| {
            p.acked_seqno = Some(expected);
            p.acked_bytes = end_offset;
        });
        if last {
            return;
        }
    }
}

/// Sends a heartbeat packet whenever nothing was sent for `heartbeat_interval`.
pub(crate) async fn heartbeat_loop(
    sink: Arc<Mutex<Sink>>,
    shared: Arc<Shared>,
    cfg: TransferConfig,
) {
    if cfg.heartbeat_interval.is_zero() {
        return;
    }
    let hb = Packet::heartbeat().to_bytes();
    loop {
        let wake = sink.lock().await.last_send + cfg.heartbeat_interval;
        tokio::time::sleep_until(wake.into()).await;
        let mut s = sink.lock().await;
        if shared.closing.load(Ordering::SeqCst) || shared.progress.borrow().failed {
            return;
        }
        if s.last_send.elapsed() < cfg.heartbeat_interval {
            continue;
        }
        let res = with_timeout(cfg.write_timeout, "sending heartbeat", async {
            s.w.write_all(&hb).await?;
            s.w.flush().await?;
            Ok(())
        })
        .await;
        s.last_send = Instant::now();
        if let Err(e) = res {
            drop(s);
            shared.fail(e);
            return;
        }
    }
}
