//! What one Raft entry of the NameNode's log carries: a batch of edit records, each with
//! the txid the active NameNode gave it, in txid order.
//!
//! ```text
//! [u32 BE n] n × { [u64 BE txid] [u32 BE len] [len bytes: the record as edit_codec writes it] }
//! ```
//!
//! A batch is one group commit of the active: every edit logged while the previous batch
//! was being replicated. Decoding checks every length, so bytes from a peer or the disk
//! never panic.

use std::io::Cursor;

use rhdfs_raftlog::EntryData;

/// One group commit's edits.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EditBatch {
    /// `(txid, encoded EditOp)`, txids consecutive.
    pub records: Vec<(u64, Vec<u8>)>,
}

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
        if !b.is_empty() {
            return Err(format!("{} bytes after the edit batch", b.len()));
        }
        Ok(EditBatch { records })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn round_trips(first in 1u64..u64::MAX / 2, recs in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 0..20)) {
            let batch = EditBatch {
                records: recs.into_iter().enumerate().map(|(i, r)| (first + i as u64, r)).collect(),
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
}
