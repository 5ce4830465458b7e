//! The NameNode's Raft snapshots: its newest image, so the Raft log is compacted at each
//! checkpoint and a member that fell behind the others' logs catches up from an image.
//!
//! - **Building** (`snapshot_job`): no namespace lock and no encoding. A member's images are
//!   written by its checkpointer off the live namespace (`persist::checkpoint`); every image
//!   saved triggers a Raft snapshot (`ha::member`), which is the newest image read back from
//!   disk. The Raft entry it covers is the newest applied entry whose edits the image holds
//!   in full: [`AppliedPoints`] remembers, for applied entries, the member's last txid after
//!   each. openraft then purges the log up to that entry, less
//!   `rhdfs.ha.raft.log.retained.entries`.
//! - **Bytes**: the image payload, then `[u64 BE txid][u32 BE CRC32C of all before]`. The
//!   image may hold edits of entries after the one the snapshot names; a member installing
//!   it skips them when they arrive (`ha::apply` skips txids its edit log has).
//! - **Installing** (`install`): the image is checked and loaded into a new namespace off
//!   every lock, saved as this member's newest image with its edit log started over after it
//!   (`Durable::install_image`), and only then made the namespace (`Namesystem::
//!   install_namespace`, the block map following). A snapshot without an image is refused
//!   (a JournalNode's snapshot is a NameNode's image too, `ha::journal_snapshots`, and it
//!   purges its log only behind one).

use std::collections::VecDeque;
use std::sync::Arc;

use openraft::LogId;
use parking_lot::Mutex;
use rhdfs_raftlog::{AppSnapshot, SnapshotJob};

use crate::ha::Role;
use crate::ha::ship::EditShipper;
use crate::namesystem::Namesystem;

/// Applied entries remembered at most; past it the older half is thinned to every other one.
const MAX_POINTS: usize = 65_536;

/// `(entry, this member's last txid once the entry was applied)`, oldest first.
#[derive(Debug, Default)]
pub struct AppliedPoints {
    points: VecDeque<(LogId<u64>, u64)>,
}

impl AppliedPoints {
    /// Remembers that after `entry` the member's edits end at `txid`.
    pub fn record(&mut self, entry: LogId<u64>, txid: u64) {
        match self.points.back_mut() {
            // No edit since: the later entry is covered by whatever covers the earlier.
            Some(last) if last.1 == txid => *last = (entry, txid),
            _ => self.points.push_back((entry, txid)),
        }
        if self.points.len() > MAX_POINTS {
            let half = self.points.len() / 2;
            let older: Vec<_> = self.points.drain(..half).collect();
            for p in older.into_iter().rev().step_by(2) {
                self.points.push_front(p);
            }
        }
    }

    /// The newest entry whose edits end at or before `txid`, all points kept.
    pub fn peek_covered_by(&self, txid: u64) -> Option<LogId<u64>> {
        self.points
            .iter()
            .rev()
            .find(|(_, t)| *t <= txid)
            .map(|(id, _)| *id)
    }

    /// The newest entry whose edits end at or before `txid`; older points are forgotten.
    pub fn covered_by(&mut self, txid: u64) -> Option<LogId<u64>> {
        let i = self.points.iter().rposition(|(_, t)| *t <= txid)?;
        self.points.drain(..i);
        self.points.front().map(|(id, _)| *id)
    }

    pub fn clear(&mut self) {
        self.points.clear();
    }

    pub fn len(&self) -> usize {
        self.points.len()
    }

    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }
}

/// The snapshot's bytes for the image `payload` at `txid`.
pub(crate) fn encode(mut payload: Vec<u8>, txid: u64) -> Vec<u8> {
    payload.extend_from_slice(&txid.to_be_bytes());
    let trailer = rhdfs_editlog::image_trailer(&payload);
    payload.extend_from_slice(&trailer);
    payload
}

/// The image payload and its txid, checked.
pub(crate) fn decode(data: &[u8]) -> Result<(&[u8], u64), String> {
    if data.is_empty() {
        return Err(
            "the snapshot holds no namespace image (a JournalNode's, before it received \
                    one); this NameNode needs one from another NameNode (or \
                    `rhdfs namenode -bootstrapStandby`)"
                .into(),
        );
    }
    let body = rhdfs_editlog::decode_image(data).map_err(|e| format!("snapshot: {e}"))?;
    let at = body
        .len()
        .checked_sub(8)
        .ok_or("the snapshot has no txid")?;
    let (payload, txid) = body.split_at(at);
    let txid = u64::from_be_bytes(txid.try_into().map_err(|_| "bad txid field")?);
    Ok((payload, txid))
}

/// The build of a snapshot: the newest image and the entry it covers (none before an image
/// holds the edits of an entry applied since this member started).
pub fn snapshot_job(fs: &Arc<Namesystem>, points: &Arc<Mutex<AppliedPoints>>) -> SnapshotJob {
    let durable = fs.durable().cloned();
    let points = points.clone();
    Box::new(move || {
        let durable = durable.ok_or("the NameNode has no storage")?;
        let Some((txid, payload)) = durable
            .images()
            .load_latest_image()
            .map_err(|e| format!("reading the newest image: {e}"))?
        else {
            return Ok(AppSnapshot {
                covers: None,
                data: Vec::new(),
            });
        };
        let covers = points.lock().covered_by(txid);
        Ok(AppSnapshot {
            covers,
            data: encode(payload, txid),
        })
    })
}

/// Installs a snapshot received from the leader: see the module docs. Blocking.
pub fn install(
    fs: &Namesystem,
    shipper: &EditShipper,
    points: &Mutex<AppliedPoints>,
    data: &[u8],
) -> Result<(), String> {
    let (payload, txid) = decode(data)?;
    let durable = fs.durable().ok_or("the NameNode has no storage")?;
    let ns = durable
        .namespace_from_image(txid, payload)
        .map_err(|e| format!("the snapshot's image does not load: {e}"))?;
    // A leader never installs; a member that still thinks it is active stops serving
    // first (the new namespace journals as a standby's).
    if fs.ha_role().get() == Role::Active {
        fs.ha_role().set(Role::Standby);
    }
    shipper.deactivate();
    durable
        .install_image(txid, payload)
        .map_err(|e| format!("saving the snapshot's image (txid {txid}): {e}"))?;
    fs.install_namespace(ns);
    points.lock().clear();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use openraft::CommittedLeaderId;

    fn id(i: u64) -> LogId<u64> {
        LogId::new(CommittedLeaderId::new(1, 1), i)
    }

    #[test]
    fn the_newest_entry_an_image_holds_is_found_and_older_points_go() {
        let mut p = AppliedPoints::default();
        p.record(id(1), 0);
        p.record(id(2), 5);
        p.record(id(3), 9);
        // A blank entry after 3: the same edits, a newer entry.
        p.record(id(4), 9);
        p.record(id(5), 12);
        assert_eq!(p.len(), 4);
        assert_eq!(p.peek_covered_by(10), Some(id(4)));
        assert_eq!(p.peek_covered_by(0), Some(id(1)));
        assert_eq!(p.len(), 4, "peeking forgets nothing");
        assert_eq!(p.covered_by(4), Some(id(1)));
        assert_eq!(p.covered_by(10), Some(id(4)));
        assert_eq!(p.len(), 2, "points before the one found are forgotten");
        assert_eq!(
            p.covered_by(3),
            None,
            "an image older than every point left"
        );
        assert_eq!(p.covered_by(100), Some(id(5)));
    }

    #[test]
    fn points_stay_bounded_and_keep_recent_ones() {
        let mut p = AppliedPoints::default();
        for i in 1..=(MAX_POINTS as u64 * 3) {
            p.record(id(i), i);
        }
        assert!(p.len() <= MAX_POINTS);
        let last = MAX_POINTS as u64 * 3;
        assert_eq!(p.covered_by(last), Some(id(last)));
        // An older image still finds an entry at or before it.
        let mut q = AppliedPoints::default();
        for i in 1..=(MAX_POINTS as u64 * 3) {
            q.record(id(i), i);
        }
        let found = q.covered_by(1000).expect("an older point");
        assert!(found.index <= 1000);
    }

    #[test]
    fn snapshot_bytes_round_trip_and_are_checked() {
        let data = encode(b"image payload".to_vec(), 42);
        assert_eq!(decode(&data), Ok((&b"image payload"[..], 42)));
        let mut bad = data.clone();
        bad[3] ^= 1;
        assert!(
            decode(&bad).unwrap_err().contains("checksum"),
            "{:?}",
            decode(&bad)
        );
        assert!(decode(&[]).unwrap_err().contains("JournalNode"));
        assert!(decode(&data[..6]).is_err());
    }
}
