//! What one Raft entry of the NameNode's log carries: a batch of edit records, each with
//! the txid the active NameNode gave it, in txid order.
//!
//! ```text
//! [u32 BE n] n × { [u64 BE txid] [u32 BE len] [len bytes: the record as edit_codec writes it] }
//! then, when the batch completes at-most-once calls:
//! [u32 BE m] m × { [u64 BE txid] [i32 BE call id] [u8 len] [len bytes: rpc client id] }
//! ```
//!
//! A batch is one group commit of the active: every edit logged while the previous batch
//! was being replicated. A call's entry names the txid of the last edit it logged in the
//! batch (Hadoop carries the same ids in each edit op), so a standby applying it knows the
//! call ran. Decoding checks every length, so bytes from a peer or the disk never panic.

use std::io::Cursor;

use rhdfs_raftlog::EntryData;

/// One group commit's edits.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EditBatch {
    /// `(txid, encoded EditOp)`, txids consecutive.
    pub records: Vec<(u64, Vec<u8>)>,
    /// The at-most-once calls whose edits the batch holds, each at the txid of its last.
    pub calls: Vec<BatchCall>,
}

/// An at-most-once call that logged edits: its rpc ids and the txid of its last edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchCall {
    pub txid: u64,
    pub client_id: Vec<u8>,
    pub call_id: i32,
}

/// Longest rpc client id carried (Hadoop's are 16 bytes).
pub const MAX_CLIENT_ID: usize = 255;

impl EditBatch {
    /// The txid of the last record (0 for an empty batch).
    pub fn last_txid(&self) -> u64 {
        self.records.last().map_or(0, |(t, _)| *t)
    }
}

openraft::declare_raft_types!(
    /// The Raft type configuration of the NameNode's replicated edit log.
    pub EditRaft: D = EditBatch, R = ()
);

fn take<'a>(bytes: &mut &'a [u8], n: usize) -> Result<&'a [u8], String> {
    if bytes.len() < n {
        return Err(format!(
            "edit batch cut short: needed {n} more bytes, {} left",
            bytes.len()
        ));
    }
    let (head, rest) = bytes.split_at(n);
    *bytes = rest;
    Ok(head)
}

fn u32_of(bytes: &mut &[u8]) -> Result<u32, String> {
    let b = take(bytes, 4)?;
    Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

fn u64_of(bytes: &mut &[u8]) -> Result<u64, String> {
    let b = take(bytes, 8)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(b);
    Ok(u64::from_be_bytes(a))
}

impl EntryData for EditBatch {
    fn encode(&self, out: &mut Vec<u8>) {
        // A batch is bounded by the edit log's record limit per record and by memory; a
        // count or length past u32 cannot be built by the active.
        out.extend_from_slice(&(self.records.len() as u32).to_be_bytes());
        for (txid, rec) in &self.records {
            out.extend_from_slice(&txid.to_be_bytes());
            out.extend_from_slice(&(rec.len() as u32).to_be_bytes());
            out.extend_from_slice(rec);
        }
        if self.calls.is_empty() {
            return;
        }
        out.extend_from_slice(&(self.calls.len() as u32).to_be_bytes());
        for c in &self.calls {
            out.extend_from_slice(&c.txid.to_be_bytes());
            out.extend_from_slice(&c.call_id.to_be_bytes());
            // The shipper carries only ids up to MAX_CLIENT_ID bytes.
            let id = &c.client_id[..c.client_id.len().min(MAX_CLIENT_ID)];
            out.push(id.len() as u8);
            out.extend_from_slice(id);
        }
    }

    fn decode(bytes: &[u8]) -> Result<Self, String> {
        let mut b = bytes;
        let n = u32_of(&mut b)? as usize;
        // Each record takes at least 12 bytes: a count beyond that is corrupt.
        if n > b.len() / 12 {
            return Err(format!(
                "edit batch claims {n} records in {} bytes",
                b.len()
            ));
        }
        let mut records = Vec::with_capacity(n);
        let mut prev: Option<u64> = None;
        for _ in 0..n {
            let txid = u64_of(&mut b)?;
            if let Some(p) = prev
                && p.checked_add(1) != Some(txid)
            {
                return Err(format!("edit batch txid {txid} follows {p}"));
            }
            prev = Some(txid);
            let len = u32_of(&mut b)? as usize;
            records.push((txid, take(&mut b, len)?.to_vec()));
        }
        let calls = if b.is_empty() {
            Vec::new()
        } else {
            decode_calls(&mut b, &records)?
        };
        if !b.is_empty() {
            return Err(format!("{} bytes after the edit batch", b.len()));
        }
        Ok(EditBatch { records, calls })
    }
}

fn decode_calls(b: &mut &[u8], records: &[(u64, Vec<u8>)]) -> Result<Vec<BatchCall>, String> {
    let m = u32_of(b)? as usize;
    // Each call takes at least 13 bytes.
    if m > b.len() / 13 {
        return Err(format!("edit batch claims {m} calls in {} bytes", b.len()));
    }
    let first = records.first().map(|(t, _)| *t);
    let last = records.last().map(|(t, _)| *t);
    let mut calls = Vec::with_capacity(m);
    for _ in 0..m {
        let txid = u64_of(b)?;
        if !(first.is_some_and(|f| txid >= f) && last.is_some_and(|l| txid <= l)) {
            return Err(format!(
                "edit batch call at txid {txid} outside its records"
            ));
        }
        let call_id = i32::from_be_bytes(u32_of(b)?.to_be_bytes());
        let len = usize::from(take(b, 1)?[0]);
        let client_id = take(b, len)?.to_vec();
        calls.push(BatchCall {
            txid,
            client_id,
            call_id,
        });
    }
    Ok(calls)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn round_trips(first in 1u64..u64::MAX / 2, recs in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 0..20)) {
            let n = recs.len() as u64;
            let calls = (0..n.min(3))
                .map(|i| BatchCall {
                    txid: first + i,
                    client_id: vec![i as u8; 16],
                    call_id: i as i32 - 1,
                })
                .collect();
            let batch = EditBatch {
                records: recs.into_iter().enumerate().map(|(i, r)| (first + i as u64, r)).collect(),
                calls,
            };
            let mut out = Vec::new();
            batch.encode(&mut out);
            prop_assert_eq!(EditBatch::decode(&out).unwrap(), batch);
        }

        #[test]
        fn malformed_bytes_are_errors_not_panics(bytes in proptest::collection::vec(any::<u8>(), 0..100)) {
            let _ = EditBatch::decode(&bytes);
        }
    }

    #[test]
    fn gaps_and_cut_batches_are_refused() {
        let batch = EditBatch {
            records: vec![(5, vec![1, 2]), (6, vec![3])],
            calls: Vec::new(),
        };
        let mut out = Vec::new();
        batch.encode(&mut out);
        assert!(EditBatch::decode(&out[..out.len() - 1]).is_err());
        let mut gap = out.clone();
        // The second record's txid (after count 4, txid 8, len 4, payload 2).
        gap[4 + 8 + 4 + 2 + 7] = 9;
        assert!(EditBatch::decode(&gap).unwrap_err().contains("follows"));
        out.push(0);
        assert!(EditBatch::decode(&out).is_err());
    }

    #[test]
    fn calls_must_name_a_txid_of_the_batch() {
        let mut batch = EditBatch {
            records: vec![(5, vec![1]), (6, vec![2])],
            calls: vec![BatchCall {
                txid: 6,
                client_id: vec![7; 16],
                call_id: 3,
            }],
        };
        let mut out = Vec::new();
        batch.encode(&mut out);
        assert_eq!(EditBatch::decode(&out).unwrap(), batch);
        batch.calls[0].txid = 7;
        let mut out = Vec::new();
        batch.encode(&mut out);
        assert!(EditBatch::decode(&out).unwrap_err().contains("outside"));
    }
}
