//! The active NameNode's side of the replicated edit log.
//!
//! [`RaftJournal`] is the namespace's journal while the NameNode is active: under the
//! namespace lock it numbers each applied edit and queues its record. [`EditShipper`]'s
//! task sends what is queued to Raft as one [`EditBatch`] per `client_write`, one at a time,
//! so edits logged while a batch is being replicated form the next batch (group commit
//! across the majority's fdatasyncs). [`EditShipper::sync`] waits until a txid is committed.
//!
//! A write Raft refuses (this member is no longer the leader), or one still pending when the
//! member stops being active, fails every sync waiting above the last committed txid with a
//! StandbyException: the client fails over and retries. The records stay known
//! ([`EditShipper::take_own`]) until they are applied, so the apply side can tell an edit of
//! this NameNode that the next leader committed after all from one that replaced it. Each
//! keeps the ids of the at-most-once call that logged it: records sent again when the member
//! becomes active once more carry their calls as the first sending did, so every member's
//! retry cache learns them when they commit.

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::{Notify, watch};

use crate::edit::{EditOp, Journal};
use crate::edit_codec;
use crate::error::{FsError, FsResult};
use crate::ha::batch::{BatchCall, EditBatch, EditRaft, MAX_CLIENT_ID};
use crate::retry_cache::CallIds;

/// How far replication got, for sync waiters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Progress {
    /// Every txid up to this one is committed (or was applied before this member became
    /// active).
    committed: u64,
    /// Set when the member stopped being active with edits above `committed` unconfirmed.
    failed: bool,
}

#[derive(Debug, Default)]
struct Queue {
    active: bool,
    /// The last txid handed out.
    last: u64,
    /// Numbered, not yet sent.
    pending: Vec<(u64, Vec<u8>)>,
    /// The at-most-once calls the pending records complete (a call's entry moves to its
    /// latest record).
    pending_calls: Vec<BatchCall>,
    /// Every record of this member's not yet applied locally, by txid (sent or pending).
    own: BTreeMap<u64, Own>,
}

/// A record this member queued, and the at-most-once call that logged it.
#[derive(Debug, Clone)]
struct Own {
    record: Vec<u8>,
    call: Option<CallIds>,
}

/// Notes that the record at `txid` completes `call` so far: a call's entry moves to its
/// latest record. Calls whose client id is too long to ship are left out.
fn note_call(calls: &mut Vec<BatchCall>, txid: u64, call: &CallIds) {
    if call.client_id.len() > MAX_CLIENT_ID {
        return;
    }
    match calls.last_mut() {
        Some(last) if last.call_id == call.call_id && last.client_id == call.client_id => {
            last.txid = txid;
        }
        _ => calls.push(BatchCall {
            txid,
            client_id: call.client_id.to_vec(),
            call_id: call.call_id,
        }),
    }
}

/// Sends the active's edits to Raft; see the module docs.
#[derive(Debug)]
pub struct EditShipper {
    queue: Mutex<Queue>,
    wake: Notify,
    progress: watch::Sender<Progress>,
}

impl Default for EditShipper {
    fn default() -> Self {
        EditShipper {
            queue: Mutex::new(Queue::default()),
            wake: Notify::new(),
            progress: watch::Sender::new(Progress {
                committed: 0,
                failed: false,
            }),
        }
    }
}

impl EditShipper {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Starts shipping as the member becomes active (under the namespace lock), with every
    /// edit up to `committed` applied and committed and the namespace at `ns_last`. Edits
    /// above `committed` are this member's own from an earlier term as the active that no
    /// log holds (had another leader committed a record at one of their txids, applying it
    /// would have found the difference): they are sent again, in order, ahead of new ones,
    /// with the calls that logged them.
    /// False, and not active, when the namespace holds edits this member does not
    /// know as its own: it cannot become active.
    pub fn activate(&self, committed: u64, ns_last: u64) -> bool {
        let mut q = self.queue.lock();
        q.own.retain(|t, _| *t > committed);
        let mut carried_calls = Vec::new();
        let carried: Vec<(u64, Vec<u8>)> = q
            .own
            .range(..=ns_last)
            .map(|(t, own)| {
                if let Some(c) = &own.call {
                    note_call(&mut carried_calls, *t, c);
                }
                (*t, own.record.clone())
            })
            .collect();
        let contiguous = carried
            .iter()
            .enumerate()
            .all(|(i, (t, _))| Some(*t) == committed.checked_add(i as u64 + 1))
            && committed.checked_add(carried.len() as u64) == Some(ns_last);
        if !contiguous {
            return false;
        }
        q.active = true;
        q.last = ns_last;
        q.pending = carried;
        q.pending_calls = carried_calls;
        self.progress.send_replace(Progress {
            committed,
            failed: false,
        });
        self.wake.notify_one();
        true
    }

    /// Stops shipping: syncs waiting above the committed txid fail. Queued records stay
    /// known for [`EditShipper::take_own`].
    pub fn deactivate(&self) {
        let mut q = self.queue.lock();
        q.active = false;
        q.pending.clear();
        q.pending_calls.clear();
        self.progress.send_modify(|p| p.failed = true);
        self.wake.notify_one();
    }

    /// Numbers and queues one record (the journal, under the namespace lock), logged by
    /// `call` when an at-most-once call runs.
    fn queue(&self, record: Vec<u8>, call: Option<CallIds>) -> u64 {
        let mut q = self.queue.lock();
        q.last += 1;
        let txid = q.last;
        if q.active {
            q.pending.push((txid, record.clone()));
            if let Some(c) = &call {
                note_call(&mut q.pending_calls, txid, c);
            }
        }
        q.own.insert(txid, Own { record, call });
        txid
    }

    /// The record this member queued at `txid`, if it did (and forgets it): the apply side
    /// compares it with the committed one.
    pub fn take_own(&self, txid: u64) -> Option<Vec<u8>> {
        self.queue.lock().own.remove(&txid).map(|own| own.record)
    }

    /// Waits until `txid` is committed; a StandbyException if this member stopped being
    /// active before it was.
    pub async fn sync(&self, txid: u64) -> FsResult<u64> {
        self.wake.notify_one();
        let mut rx = self.progress.subscribe();
        loop {
            let p = *rx.borrow_and_update();
            if p.committed >= txid {
                return Ok(p.committed);
            }
            if p.failed {
                return Err(FsError::Standby(
                    "Operation category WRITE is not supported in state standby: this NameNode \
                     stopped being active before the edits were replicated. Visit \
                     https://s.apache.org/sbnn-error"
                        .to_string(),
                ));
            }
            if rx.changed().await.is_err() {
                return Err(FsError::Io("the edit shipper stopped".into()));
            }
        }
    }

    /// The shipping task: one `client_write` at a time, each taking everything queued.
    pub async fn run(self: Arc<Self>, raft: openraft::Raft<EditRaft>) {
        loop {
            let batch = {
                let mut q = self.queue.lock();
                if q.active && !q.pending.is_empty() {
                    Some(EditBatch {
                        records: std::mem::take(&mut q.pending),
                        calls: std::mem::take(&mut q.pending_calls),
                    })
                } else {
                    None
                }
            };
            let Some(batch) = batch else {
                self.wake.notified().await;
                continue;
            };
            let last = batch.last_txid();
            let mut progress = self.progress.subscribe();
            // A deposed leader's write may never be answered (openraft 0.9 can leave it
            // pending when the member catches up by snapshot): deactivation ends the wait.
            let outcome = tokio::select! {
                r = raft.client_write(batch) => r.map(drop).map_err(|e| e.to_string()),
                _ = progress.wait_for(|p| p.failed) => Err("no longer active".to_string()),
            };
            match outcome {
                Ok(()) => {
                    self.progress.send_if_modified(|p| {
                        let advance = !p.failed && p.committed < last;
                        if advance {
                            p.committed = last;
                        }
                        advance
                    });
                }
                Err(e) => {
                    tracing::warn!(last_txid = last, "edits not replicated: {e}");
                    self.deactivate();
                }
            }
        }
    }
}

/// The namespace's journal while its NameNode is active with HA.
#[derive(Debug)]
pub struct RaftJournal {
    shipper: Arc<EditShipper>,
}

impl RaftJournal {
    pub fn new(shipper: Arc<EditShipper>) -> Self {
        RaftJournal { shipper }
    }
}

impl Journal for RaftJournal {
    fn record(&mut self, op: &EditOp) -> FsResult<u64> {
        Ok(self
            .shipper
            .queue(edit_codec::encode(op), CallIds::current()))
    }
}

/// The namespace's journal while its NameNode is a standby: it logs nothing itself (its
/// namespace changes only by the committed edits it applies), so an attempt is an error.
#[derive(Debug, Default)]
pub struct StandbyJournal;

impl Journal for StandbyJournal {
    fn record(&mut self, _op: &EditOp) -> FsResult<u64> {
        self.accepts().map(|()| 0)
    }

    /// Refused before the op is applied: a mutation that raced the NameNode's turn to
    /// standby fails without touching the namespace.
    fn accepts(&self) -> FsResult<()> {
        crate::ha::Role::Standby.check(crate::ha::OperationCategory::Write)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_standby_journal_leaves_the_namespace_untouched() {
        use crate::namespace::{Namespace, NamespaceConfig, Now};
        let now = Now {
            wall_ms: 1,
            mono: std::time::Duration::ZERO,
        };
        let mut ns = Namespace::new(NamespaceConfig::default(), now);
        ns.set_journal(Box::new(StandbyJournal));
        let before = ns.encode_image();
        let op = EditOp::Mkdir {
            id: 16_386,
            parent: crate::fsdir::ROOT_INODE_ID,
            name: b"d".to_vec(),
            perm: crate::fsdir::PermissionStatus {
                owner: "hdfs".into(),
                group: "supergroup".into(),
                mode: 0o755,
            },
            mtime: 2,
        };
        assert!(matches!(
            ns.log_and_apply(op, std::time::Duration::ZERO),
            Err(FsError::Standby(_))
        ));
        assert_eq!(ns.encode_image(), before, "nothing applied");
    }

    #[tokio::test]
    async fn sync_waits_for_the_commit_and_fails_on_deactivation() {
        let s = EditShipper::new();
        assert!(s.activate(10, 10));
        let t11 = s.queue(vec![1], None);
        let t12 = s.queue(vec![2], None);
        assert_eq!((t11, t12), (11, 12));
        assert_eq!(s.sync(10).await.unwrap(), 10);
        // Committed as a shipping task would after client_write.
        s.progress.send_modify(|p| p.committed = 11);
        assert_eq!(s.sync(11).await.unwrap(), 11);
        let waiter = {
            let s = s.clone();
            tokio::spawn(async move { s.sync(12).await })
        };
        tokio::task::yield_now().await;
        s.deactivate();
        assert!(matches!(waiter.await.unwrap(), Err(FsError::Standby(_))));
        // Own records stay known until applied.
        assert_eq!(s.take_own(11), Some(vec![1]));
        // Active again with 12 never committed anywhere: it is sent again first.
        assert!(s.activate(11, 12));
        assert_eq!(s.queue.lock().pending, vec![(12, vec![2])]);
        assert_eq!(s.queue(vec![3], None), 13);
        assert_eq!(s.sync(11).await.unwrap(), 11);
        // The ids of an at-most-once call go with its latest record.
        let ids = CallIds {
            client_id: bytes::Bytes::from_static(b"client"),
            call_id: 5,
        };
        let t14 = s.queue(vec![4], Some(ids.clone()));
        let t15 = s.queue(vec![5], Some(ids));
        let t16 = s.queue(vec![6], None);
        assert_eq!((t14, t15, t16), (14, 15, 16));
        assert_eq!(
            s.queue.lock().pending_calls,
            vec![BatchCall {
                txid: 15,
                client_id: b"client".to_vec(),
                call_id: 5
            }]
        );
        // A namespace ahead by edits this member did not queue cannot be made active.
        s.deactivate();
        assert!(!s.activate(11, 20));
        assert!(!s.activate(9, 13), "10 and 11 were never this member's");
    }

    fn ids(client: &'static [u8], call_id: i32) -> CallIds {
        CallIds {
            client_id: bytes::Bytes::from_static(client),
            call_id,
        }
    }

    /// A member that lost leadership with edits of at-most-once calls unconfirmed sends them
    /// again when it leads once more, each call's ids with its latest record, as the first
    /// sending did: the other members' retry caches learn the calls when they commit.
    #[tokio::test]
    async fn records_sent_again_carry_their_calls() {
        let s = EditShipper::new();
        assert!(s.activate(10, 10));
        assert_eq!(s.queue(vec![11], Some(ids(b"a", 1))), 11);
        assert_eq!(s.queue(vec![12], Some(ids(b"a", 1))), 12);
        assert_eq!(s.queue(vec![13], None), 13);
        assert_eq!(s.queue(vec![14], Some(ids(b"b", 7))), 14);
        let too_long = CallIds {
            client_id: bytes::Bytes::from(vec![0u8; MAX_CLIENT_ID + 1]),
            call_id: 3,
        };
        assert_eq!(s.queue(vec![15], Some(too_long)), 15);
        let first = s.queue.lock().pending_calls.clone();
        // Leadership lost before anything was committed: nothing pending any more.
        s.deactivate();
        assert!(s.queue.lock().pending_calls.is_empty());
        // Leader again, 11 committed and applied meanwhile (its record was this member's).
        assert_eq!(s.take_own(11), Some(vec![11]));
        assert!(s.activate(11, 15));
        let q = s.queue.lock();
        let txids: Vec<u64> = q.pending.iter().map(|(t, _)| *t).collect();
        assert_eq!(txids, vec![12, 13, 14, 15]);
        let sent_again = vec![
            BatchCall {
                txid: 12,
                client_id: b"a".to_vec(),
                call_id: 1,
            },
            BatchCall {
                txid: 14,
                client_id: b"b".to_vec(),
                call_id: 7,
            },
        ];
        assert_eq!(q.pending_calls, sent_again);
        assert_eq!(first, sent_again, "as the first sending had them");
        drop(q);
        // New calls go after the carried ones.
        assert_eq!(s.queue(vec![16], Some(ids(b"c", 2))), 16);
        assert_eq!(s.queue.lock().pending_calls.len(), 3);
    }
}
