//! The disk side of a WRITE_BLOCK: one thread per replica being received writes the
//! packets the receiver hands it, in order, and queues each packet's ack for the responder
//! once this node's write of it is done (an ack never goes before the data is written, as
//! before). The receiver goes on reading, forwarding and verifying the next packets
//! meanwhile. It replaced a `spawn_blocking` per packet, whose task hand-off and wake-ups
//! were a fifth of the DataNodes' CPU in a profile of `bench dfsio -write`. The thread is
//! its own (`dn-block-writer`), not one of tokio's blocking pool: it lives as long as the
//! block is written, and a pool of at most 512 threads held by that many slow writers would
//! leave the DataNode's other blocking work (finalizing a replica among it) waiting.
//!
//! Every ack of the op goes through this queue while the thread runs (heartbeats and refused
//! packets as [`Job::Ack`]), so the responder sees them in the order the packets came.

use std::sync::Arc;

use bytes::Bytes;
use rhdfs_proto::hdfs::Status;
use tokio::sync::{mpsc, oneshot};

use super::{XceiverContext, XceiverError};
use crate::error::StorageError;
use crate::metrics::{Activity, IoKind, IoSample};
use crate::writer::ReplicaWriter;

/// Packets the receiver may be ahead of the disk writer.
const QUEUED_PACKETS: usize = 16;

/// An ack the responder owes upstream.
#[derive(Debug, Clone, Copy)]
pub(super) struct PendingAck {
    pub seqno: i64,
    pub status: Status,
    /// Last packet or a fatal error: the responder stops after this ack.
    pub end: bool,
}

/// Where acks go: the responder's queue, or nowhere for an op that sends none.
#[derive(Debug, Clone)]
pub(super) struct Acks {
    pub tx: mpsc::UnboundedSender<PendingAck>,
    pub on: bool,
}

impl Acks {
    pub(super) fn send(&self, seqno: i64, status: Status, end: bool) {
        if self.on {
            let _ = self.tx.send(PendingAck { seqno, status, end });
        }
    }
}

/// Work for the disk thread, in packet order.
#[derive(Debug)]
pub(super) enum Job {
    /// Write `data` at `offset`; with `ack`, ack `seqno` once written.
    Write {
        seqno: i64,
        offset: u64,
        data: Bytes,
        /// The packet's CRCs, when they were made with the replica's checksum.
        sums: Option<Bytes>,
        sync: bool,
        ack: bool,
    },
    /// An ack with nothing to write, queued behind the writes before it.
    Ack {
        seqno: i64,
        status: Status,
        end: bool,
    },
}

/// What the disk thread hands back: the writer, and the error that stopped it.
type Outcome = (ReplicaWriter, Result<(), StorageError>);

/// The running disk thread of one WRITE_BLOCK.
pub(super) struct DiskWriter {
    jobs: mpsc::Sender<Job>,
    thread: oneshot::Receiver<Outcome>,
}

impl DiskWriter {
    pub(super) fn start(
        ctx: Arc<XceiverContext>,
        w: ReplicaWriter,
        acks: Acks,
    ) -> Result<DiskWriter, XceiverError> {
        let (jobs, rx) = mpsc::channel(QUEUED_PACKETS);
        let (done, thread) = oneshot::channel();
        std::thread::Builder::new()
            .name("dn-block-writer".into())
            .spawn(move || {
                let _ = done.send(write_jobs(&ctx, w, rx, &acks));
            })
            .map_err(|e| XceiverError::Other(format!("cannot start a replica writer: {e}")))?;
        Ok(DiskWriter { jobs, thread })
    }

    /// Queues `job`; when the thread has stopped on an error, that error.
    pub(super) async fn send(&mut self, job: Job) -> Result<(), XceiverError> {
        if self.jobs.send(job).await.is_ok() {
            return Ok(());
        }
        match (&mut self.thread).await {
            Ok((_, Err(e))) => Err(e.into()),
            Ok((_, Ok(()))) => Err(XceiverError::Other("replica writer stopped".into())),
            Err(_) => Err(XceiverError::Other("replica writer failed".into())),
        }
    }

    /// Waits for every queued write; the writer back, or the error that stopped it (whose
    /// ack was queued).
    pub(super) async fn finish(self) -> Result<ReplicaWriter, XceiverError> {
        let DiskWriter { jobs, thread } = self;
        drop(jobs);
        match thread.await {
            Ok((w, Ok(()))) => Ok(w),
            Ok((_, Err(e))) => Err(e.into()),
            Err(_) => Err(XceiverError::Other("replica writer failed".into())),
        }
    }
}

fn own_status(ctx: &XceiverContext) -> Status {
    if ctx.faults.ack_error() {
        Status::Error
    } else {
        Status::Success
    }
}

/// Acks the thread owes, held while more packets are queued behind the one just written:
/// handed to the responder together once the queue is empty (or [`QUEUED_PACKETS`] are
/// held), so a run of packets read at once wakes the responder and is written upstream once,
/// not once per packet. Each ack still goes only after its own packet's write, and in order.
struct HeldAcks<'a> {
    acks: &'a Acks,
    held: Vec<PendingAck>,
}

impl HeldAcks<'_> {
    fn push(&mut self, seqno: i64, status: Status, end: bool) {
        if self.acks.on {
            self.held.push(PendingAck { seqno, status, end });
        }
        if end || self.held.len() >= QUEUED_PACKETS {
            self.flush();
        }
    }

    fn flush(&mut self) {
        for a in self.held.drain(..) {
            self.acks.send(a.seqno, a.status, a.end);
        }
    }
}

/// The next job: the one a run stopped at, else one already queued, else — the held acks
/// handed over first — the next one to come; `None` once the receiver closed the queue.
fn next_job(
    rx: &mut mpsc::Receiver<Job>,
    stopped_at: &mut Option<Job>,
    held: &mut HeldAcks<'_>,
) -> Option<Job> {
    if let Some(job) = stopped_at.take() {
        return Some(job);
    }
    match rx.try_recv() {
        Ok(job) => Some(job),
        Err(_) => {
            held.flush();
            rx.blocking_recv()
        }
    }
}

/// Bytes of packets written together at most (`ReplicaWriter::write_packets`).
const RUN_BYTES: usize = 1 << 20;

/// A packet written, in a run or alone: its seqno, whether it is acked, its data and CRCs
/// (empty for one written alone that came without them).
struct RunPacket {
    seqno: i64,
    ack: bool,
    data: Bytes,
    sums: Bytes,
}

/// The packets already queued that follow `first` (at `offset`) with nothing between: no
/// sync, their CRCs received, up to [`RUN_BYTES`]. The job it stopped at goes to
/// `stopped_at`.
fn gather_run(
    rx: &mut mpsc::Receiver<Job>,
    stopped_at: &mut Option<Job>,
    offset: u64,
    first: RunPacket,
) -> Vec<RunPacket> {
    let mut end = offset + first.data.len() as u64;
    let mut bytes = first.data.len();
    let mut run = vec![first];
    while bytes < RUN_BYTES {
        let Ok(job) = rx.try_recv() else { break };
        match job {
            Job::Write {
                seqno,
                offset,
                data,
                sums: Some(sums),
                sync: false,
                ack,
            } if offset == end && bytes + data.len() <= RUN_BYTES => {
                end += data.len() as u64;
                bytes += data.len();
                run.push(RunPacket {
                    seqno,
                    ack,
                    data,
                    sums,
                });
            }
            other => {
                *stopped_at = Some(other);
                break;
            }
        }
    }
    run
}

/// Bytes written between two starts of write-back with sync-behind-writes (Hadoop's
/// BlockReceiver CACHE_DROP_LAG_BYTES).
const WRITE_BEHIND_LAG: u64 = 8 << 20;

/// dfs.datanode.sync.behind.writes: the write-back of every [`WRITE_BEHIND_LAG`] bytes is
/// started as soon as they are written, so that a replica's data goes to the disk while it is
/// received instead of in one burst when the kernel's dirty limits are reached.
struct WriteBehind {
    on: bool,
    /// Where the next write-back to start begins.
    from: u64,
}

impl WriteBehind {
    fn new(on: bool, w: &ReplicaWriter) -> Self {
        WriteBehind { on, from: w.len() }
    }

    fn after_write(&mut self, w: &ReplicaWriter) {
        let to = w.len();
        if !self.on || to < self.from.saturating_add(WRITE_BEHIND_LAG) {
            return;
        }
        if let Err(e) = w.start_write_back(self.from, to) {
            // As Hadoop: a warning, and the replica is written without it from here on.
            tracing::warn!("sync-behind-writes of blk_{} failed: {e}", w.id());
            self.on = false;
        }
        self.from = to;
    }
}

/// Writes a run of packets with one call per file, its I/O sampled as that many writes.
fn write_run(
    ctx: &XceiverContext,
    w: &mut ReplicaWriter,
    offset: u64,
    run: &[RunPacket],
) -> Result<(), StorageError> {
    let packets: Vec<(&[u8], &[u8])> = run
        .iter()
        .map(|p| (p.data.as_ref(), p.sums.as_ref()))
        .collect();
    let io = IoSample::start(&ctx.config.metrics, &ctx.dataset, w.volume());
    let r = w.write_packets(offset, &packets);
    let n = u32::try_from(packets.len()).unwrap_or(u32::MAX);
    io.finish_run(IoKind::Write, r.is_ok(), n);
    r
}

/// Writes one packet (its CRCs stored as received where they can be, else computed), then
/// syncs the replica if the packet asks for it.
fn write_one(
    ctx: &XceiverContext,
    w: &mut ReplicaWriter,
    offset: u64,
    data: &[u8],
    sums: Option<&[u8]>,
    sync: bool,
) -> Result<(), StorageError> {
    let io = IoSample::start(&ctx.config.metrics, &ctx.dataset, w.volume());
    let r = match sums {
        Some(s) => w.write_packet(offset, data, s),
        None => w.write_at(offset, data),
    };
    io.finish_checked(IoKind::Write, r.is_ok());
    r?;
    if sync {
        let io = IoSample::start(&ctx.config.metrics, &ctx.dataset, w.volume());
        let r = w.sync();
        io.finish_sync(r.is_ok());
        r?;
    }
    Ok(())
}

/// The thread: jobs until the receiver closes the queue or a write fails. Packets already
/// queued behind one another are written as one run (`gather_run`), their acks after it.
fn write_jobs(
    ctx: &XceiverContext,
    mut w: ReplicaWriter,
    mut rx: mpsc::Receiver<Job>,
    acks: &Acks,
) -> (ReplicaWriter, Result<(), StorageError>) {
    let mut held = HeldAcks {
        acks,
        held: Vec::with_capacity(QUEUED_PACKETS),
    };
    let mut stopped_at = None;
    let mut behind = WriteBehind::new(ctx.config.sync_behind_writes, &w);
    while let Some(job) = next_job(&mut rx, &mut stopped_at, &mut held) {
        let (seqno, offset, data, sums, sync, ack) = match job {
            Job::Ack { seqno, status, end } => {
                held.push(seqno, status, end);
                continue;
            }
            Job::Write {
                seqno,
                offset,
                data,
                sums,
                sync,
                ack,
            } => (seqno, offset, data, sums, sync, ack),
        };
        // What was written: a run of packets, or one packet that cannot join one (a sync, or
        // CRCs to compute), written and synced on its own.
        let (r, written) = match sums {
            Some(sums) if !sync => {
                let first = RunPacket {
                    seqno,
                    ack,
                    data,
                    sums,
                };
                let run = gather_run(&mut rx, &mut stopped_at, offset, first);
                (write_run(ctx, &mut w, offset, &run), run)
            }
            sums => {
                if sync {
                    // Earlier packets' acks do not wait for this one's sync.
                    held.flush();
                }
                let r = write_one(ctx, &mut w, offset, &data, sums.as_deref(), sync);
                let sums = sums.unwrap_or_default();
                (
                    r,
                    vec![RunPacket {
                        seqno,
                        ack,
                        data,
                        sums,
                    }],
                )
            }
        };
        if let Err(e) = r {
            held.push(seqno, Status::Error, true);
            return (w, Err(e));
        }
        for p in &written {
            Activity::add(&ctx.activity.bytes_written, p.data.len() as u64);
            if p.ack {
                held.push(p.seqno, own_status(ctx), false);
            }
        }
        behind.after_write(&w);
    }
    held.flush();
    (w, Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(seqno: i64, offset: u64, len: usize, sync: bool) -> Job {
        Job::Write {
            seqno,
            offset,
            data: Bytes::from(vec![seqno as u8; len]),
            sums: Some(Bytes::from(vec![0u8; len.div_ceil(512) * 4])),
            sync,
            ack: true,
        }
    }

    fn first(seqno: i64, len: usize) -> RunPacket {
        RunPacket {
            seqno,
            ack: true,
            data: Bytes::from(vec![0u8; len]),
            sums: Bytes::new(),
        }
    }

    fn seqnos(run: &[RunPacket]) -> Vec<i64> {
        run.iter().map(|p| p.seqno).collect()
    }

    /// A run takes the queued packets that follow on and stops at a sync, a gap, a packet
    /// without CRCs or an ack, which is kept for the next turn; nothing queued ends it too.
    #[test]
    fn runs_stop_where_a_packet_cannot_join() {
        let (tx, mut rx) = mpsc::channel(16);
        let mut stopped_at = None;
        tx.try_send(write(1, 100, 100, false)).unwrap();
        tx.try_send(write(2, 200, 100, false)).unwrap();
        tx.try_send(write(3, 300, 100, true)).unwrap();
        let run = gather_run(&mut rx, &mut stopped_at, 0, first(0, 100));
        assert_eq!(seqnos(&run), [0, 1, 2]);
        assert!(matches!(
            stopped_at.take(),
            Some(Job::Write { seqno: 3, .. })
        ));

        tx.try_send(write(5, 900, 100, false)).unwrap();
        let run = gather_run(&mut rx, &mut stopped_at, 400, first(4, 100));
        assert_eq!(seqnos(&run), [4]);
        assert!(matches!(
            stopped_at.take(),
            Some(Job::Write { seqno: 5, .. })
        ));

        let mut no_sums = write(7, 100, 100, false);
        if let Job::Write { sums, .. } = &mut no_sums {
            *sums = None;
        }
        tx.try_send(no_sums).unwrap();
        let run = gather_run(&mut rx, &mut stopped_at, 0, first(6, 100));
        assert_eq!(seqnos(&run), [6]);
        assert!(matches!(
            stopped_at.take(),
            Some(Job::Write { seqno: 7, .. })
        ));

        tx.try_send(Job::Ack {
            seqno: 9,
            status: Status::Success,
            end: true,
        })
        .unwrap();
        let run = gather_run(&mut rx, &mut stopped_at, 0, first(8, 100));
        assert_eq!(seqnos(&run), [8]);
        assert!(matches!(stopped_at.take(), Some(Job::Ack { seqno: 9, .. })));

        let run = gather_run(&mut rx, &mut stopped_at, 0, first(10, 100));
        assert_eq!(seqnos(&run), [10]);
        assert!(stopped_at.is_none());
    }

    /// With sync-behind-writes the write-back of each 8 MiB starts once it is written (from
    /// where the replica stood when its writer opened it); without, never.
    #[test]
    fn write_back_starts_every_lag_of_bytes() {
        let d = tempfile::tempdir().unwrap();
        let ds = crate::dataset::Dataset::open(&[d.path().to_path_buf()], 0).unwrap();
        let spec = crate::checksum::ChecksumSpec::new(crate::checksum::ChecksumType::Crc32c, 512);
        let mut w = ds.create_rbw("BP-1-127.0.0.1-1", 5, 1001, spec, 0).unwrap();
        let mut on = WriteBehind::new(true, &w);
        let mut off = WriteBehind::new(false, &w);
        let mib = vec![7u8; 1 << 20];
        for i in 0..9u64 {
            w.write_at(i << 20, &mib).unwrap();
            on.after_write(&w);
            off.after_write(&w);
            let want = if i + 1 >= 8 { 8 << 20 } else { 0 };
            assert_eq!(on.from, want, "after {} MiB", i + 1);
            assert!(on.on);
            assert_eq!(off.from, 0);
        }
        // A writer that opens a replica part written starts from its length.
        assert_eq!(WriteBehind::new(true, &w).from, 9 << 20);
    }

    /// A run holds at most `RUN_BYTES`; a packet that would pass it waits for the next one.
    #[test]
    fn runs_are_bounded() {
        let (tx, mut rx) = mpsc::channel(64);
        let mut stopped_at = None;
        let n = 64 * 1024;
        for i in 1..20 {
            tx.try_send(write(i, i as u64 * n as u64, n, false))
                .unwrap();
        }
        let run = gather_run(&mut rx, &mut stopped_at, 0, first(0, n));
        assert_eq!(run.len(), RUN_BYTES / n);
        assert!(stopped_at.is_none());
        assert!(matches!(rx.try_recv(), Ok(Job::Write { seqno: 16, .. })));
        // One that would pass the bound stops the run and is kept.
        let len = RUN_BYTES - n / 2;
        let at = 17 * n as u64 - len as u64;
        let run = gather_run(&mut rx, &mut stopped_at, at, first(0, len));
        assert_eq!(seqnos(&run), [0]);
        assert!(matches!(
            stopped_at.take(),
            Some(Job::Write { seqno: 17, .. })
        ));
    }
}
