//! A JournalNode's Raft snapshots, so its log is compacted as the NameNodes' are.
//!
//! A JournalNode holds no namespace and cannot build an image. Its snapshot is a NameNode's
//! image, in the bytes a NameNode's own snapshot has (`ha::snapshot`), fetched over that
//! NameNode's HTTP port (`/imagetransfer`):
//! - **When**: every `dfs.namenode.checkpoint.check.period` it looks whether its log holds
//!   `rhdfs.ha.raft.log.retained.entries` applied entries past its snapshot; if so, it asks
//!   each NameNode for its newest image's txid (`?getimagetxid=1`) and fetches the newest
//!   one only when it covers an entry past its snapshot (a NameNode saves an image at each
//!   checkpoint, so this is at most once per checkpoint, and never to purge nothing).
//! - **What it covers**: the newest applied entry whose edits the image holds in full, from
//!   the txids the entries carry ([`AppliedPoints`], as a NameNode's); the purge behind it
//!   keeps `rhdfs.ha.raft.log.retained.entries`, as a NameNode's.
//! - **Passed on**: while the JournalNode leads (bringing the NameNodes' logs up to its own),
//!   a NameNode behind its purged log installs the image as from any leader. One the
//!   JournalNode is sent (it fell behind a NameNode's purge) is kept the same way.
//!
//! A NameNode that cannot be reached, or has no newer image, costs a skipped round; the
//! snapshot in force stays.

use std::sync::Arc;
use std::time::Duration;

use openraft::LogId;
use parking_lot::Mutex;
use rhdfs_raftlog::{AppSnapshot, SnapshotJob, StateMachineApp};

use crate::ha::batch::{EditBatch, EditRaft};
use crate::ha::member::NnRaft;
use crate::ha::peer_image;
use crate::ha::snapshot::{self, AppliedPoints};

/// What the JournalNode's state machine and its compaction task share.
#[derive(Debug, Default)]
pub struct JournalState {
    points: AppliedPoints,
    /// The highest txid of the entries applied (0: none seen since start or the last
    /// snapshot installed, whose txid it then is).
    last_txid: u64,
    /// An image fetched for the next snapshot build: (txid, payload).
    fetched: Option<(u64, Vec<u8>)>,
}

/// The state machine of a log-only member: entries are stored by the log; it remembers
/// which txids each applied entry ends at, so a NameNode's image can be its snapshot.
pub struct LogOnly {
    state: Arc<Mutex<JournalState>>,
}

impl LogOnly {
    pub fn new() -> (LogOnly, Arc<Mutex<JournalState>>) {
        let state = Arc::new(Mutex::new(JournalState::default()));
        (
            LogOnly {
                state: state.clone(),
            },
            state,
        )
    }
}

impl StateMachineApp<EditRaft> for LogOnly {
    fn apply(&mut self, log_id: &LogId<u64>, data: Option<&EditBatch>) {
        let mut st = self.state.lock();
        if let Some(batch) = data {
            st.last_txid = st.last_txid.max(batch.last_txid());
        }
        if st.last_txid > 0 {
            let txid = st.last_txid;
            st.points.record(*log_id, txid);
        }
    }

    fn snapshot(&self, _last_applied: Option<LogId<u64>>) -> SnapshotJob {
        let state = self.state.clone();
        Box::new(move || {
            let mut st = state.lock();
            let Some((txid, payload)) = st.fetched.take() else {
                return Ok(AppSnapshot {
                    covers: None,
                    data: Vec::new(),
                });
            };
            let covers = st.points.covered_by(txid);
            drop(st);
            Ok(AppSnapshot {
                covers,
                data: snapshot::encode(payload, txid),
            })
        })
    }

    fn restore(&mut self, data: &[u8]) -> Result<(), String> {
        let mut st = self.state.lock();
        st.points.clear();
        st.fetched = None;
        st.last_txid = match snapshot::decode(data) {
            Ok((_, txid)) => txid,
            Err(e) => {
                // Kept as sent (a leader's); only this member's own compaction waits for
                // entries with txids again.
                tracing::warn!("the snapshot received holds no usable image: {e}");
                0
            }
        };
        Ok(())
    }
}

/// Whether a NameNode's image covering entry `covers` is worth fetching: the log holds at
/// least `retained` applied entries past the snapshot, and the image covers a later entry
/// than the snapshot does.
pub fn worth_fetching(
    applied: Option<u64>,
    snapshot: Option<u64>,
    retained: u64,
    covers: Option<u64>,
) -> bool {
    let (Some(applied), Some(covers)) = (applied, covers) else {
        return false;
    };
    let past = applied.saturating_sub(snapshot.unwrap_or(0));
    past >= retained.max(1) && snapshot.is_none_or(|s| covers > s)
}

/// The NameNodes to fetch images from: `(id, http address)`.
pub type Peers = Vec<(String, String)>;

/// The JournalNode's compaction task; see the module docs.
pub async fn compact(
    raft: NnRaft,
    state: Arc<Mutex<JournalState>>,
    peers: Peers,
    check: Duration,
    retained: u64,
) {
    let mut tick = tokio::time::interval(check.max(Duration::from_millis(100)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let (applied, snap) = {
            let m = raft.metrics();
            let m = m.borrow();
            (m.last_applied.map(|l| l.index), m.snapshot.map(|l| l.index))
        };
        let covering = |txid: u64| state.lock().points.peek_covered_by(txid).map(|l| l.index);
        // Cheap first: is the log long enough, and does any NameNode have a newer image?
        if !worth_fetching(applied, snap, retained, applied) {
            continue;
        }
        let mut newest: Option<(u64, &(String, String))> = None;
        for peer in &peers {
            match peer_image::newest_image_txid(&peer.1).await {
                Ok(Some(txid)) if newest.is_none_or(|(t, _)| txid > t) => {
                    newest = Some((txid, peer))
                }
                Ok(_) => {}
                Err(e) => tracing::debug!(namenode = %peer.0, "no image txid: {e}"),
            }
        }
        let Some((txid, (id, http))) = newest else {
            tracing::info!(
                "no NameNode told its newest image over HTTP: the JournalNode's log is not \
                 compacted this round"
            );
            continue;
        };
        if !worth_fetching(applied, snap, retained, covering(txid)) {
            continue;
        }
        let (txid, payload) = match peer_image::fetch_newest_image(http).await {
            Ok(Ok(image)) => image,
            Ok(Err(reason)) => {
                tracing::warn!(namenode = %id, "the image fetched is not usable: {reason}");
                continue;
            }
            Err(e) => {
                tracing::info!(namenode = %id, "cannot fetch the image: {e}");
                continue;
            }
        };
        let covers = covering(txid);
        if !worth_fetching(applied, snap, retained, covers) {
            continue;
        }
        tracing::info!(
            namenode = %id,
            txid,
            entry = ?covers,
            "the JournalNode takes a NameNode's image as its Raft snapshot"
        );
        state.lock().fetched = Some((txid, payload));
        if let Err(e) = raft.trigger().snapshot().await {
            tracing::info!("Raft snapshot not taken: {e}");
            state.lock().fetched = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use openraft::CommittedLeaderId;

    fn id(i: u64) -> LogId<u64> {
        LogId::new(CommittedLeaderId::new(1, 1), i)
    }

    #[test]
    fn an_image_is_fetched_only_to_purge_something() {
        // Too few entries past the snapshot.
        assert!(!worth_fetching(Some(10), Some(5), 20, Some(9)));
        // Enough, and the image covers a later entry.
        assert!(worth_fetching(Some(40), Some(5), 20, Some(30)));
        // Enough, but the image is not newer than the snapshot.
        assert!(!worth_fetching(Some(40), Some(30), 5, Some(30)));
        // No snapshot yet: any covered entry will do once the log is long enough.
        assert!(worth_fetching(Some(40), None, 20, Some(1)));
        // Nothing applied, or an image older than every entry remembered.
        assert!(!worth_fetching(None, None, 1, Some(1)));
        assert!(!worth_fetching(Some(40), None, 1, None));
    }

    /// A batch of `n` records from txid `first` (the log-only member never decodes them).
    fn batch(first: u64, n: u64) -> EditBatch {
        EditBatch {
            records: (first..first + n).map(|t| (t, vec![0u8; 4])).collect(),
            calls: Vec::new(),
        }
    }

    #[test]
    fn the_snapshot_is_the_fetched_image_at_the_entry_it_holds() {
        let (mut sm, state) = LogOnly::new();
        // A blank entry before any edit is not a point: no image can name it.
        sm.apply(&id(1), None);
        sm.apply(&id(2), Some(&batch(1, 3)));
        sm.apply(&id(3), None);
        sm.apply(&id(4), Some(&batch(4, 2)));
        assert_eq!(state.lock().points.peek_covered_by(0), None);
        // Nothing fetched: nothing to offer.
        let built = sm.snapshot(Some(id(4)))().expect("job");
        assert_eq!(built.covers, None);
        // An image at txid 4 holds entries 2 and 3 in full, not 4 (txids 4..=5).
        state.lock().fetched = Some((4, b"image".to_vec()));
        let built = sm.snapshot(Some(id(4)))().expect("job");
        assert_eq!(built.covers, Some(id(3)));
        let (payload, txid) = snapshot::decode(&built.data).expect("a NameNode's bytes");
        assert_eq!((payload, txid), (&b"image"[..], 4));
        assert!(
            state.lock().fetched.is_none(),
            "the fetched image is used once"
        );
        // A snapshot received from a leader: entries after it continue from its txid.
        sm.restore(&built.data).expect("restore");
        sm.apply(&id(9), None);
        assert_eq!(state.lock().points.peek_covered_by(4), Some(id(9)));
    }
}
