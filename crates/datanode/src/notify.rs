//! How the data path tells the NameNode side about replicas: a trait, so the transfer server
//! can run without a NameNode, and an unbounded channel implementation used by the actor.

use tokio::sync::mpsc;

/// Incremental block report status (`ReceivedDeletedBlockInfoProto.BlockStatus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockStatus {
    Receiving,
    Received,
    Deleted,
}

impl BlockStatus {
    pub fn code(self) -> i32 {
        match self {
            BlockStatus::Receiving => 1,
            BlockStatus::Received => 2,
            BlockStatus::Deleted => 3,
        }
    }
}

/// One replica event for the incremental block report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockEvent {
    pub bpid: String,
    pub storage_id: String,
    pub block_id: u64,
    pub gs: u64,
    pub num_bytes: u64,
    pub status: BlockStatus,
}

/// Receives replica events. Must not block: RECEIVED is reported before the last ack goes out.
pub trait BlockNotifier: Send + Sync + std::fmt::Debug + 'static {
    fn notify(&self, ev: BlockEvent);
}

impl BlockNotifier for mpsc::UnboundedSender<BlockEvent> {
    fn notify(&self, ev: BlockEvent) {
        if self.send(ev).is_err() {
            tracing::debug!("block event dropped: the reporter is gone");
        }
    }
}

/// Drops every event.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoopNotifier;

impl BlockNotifier for NoopNotifier {
    fn notify(&self, _ev: BlockEvent) {}
}
