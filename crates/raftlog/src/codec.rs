//! What the bytes of a Raft entry and of the meta file are.
//!
//! A Raft entry is stored as one edit-log record ([`rhdfs_editlog::record`] framing: length,
//! txid, header CRC, payload, payload CRC) whose txid is the entry's log index and whose
//! payload is:
//!
//! ```text
//! [u64 BE term][u64 BE 0][u8 kind: 0 blank, 1 normal, 2 membership][body]
//! normal:     the application's bytes (EntryData::encode)
//! membership: [u32 n configs]{[u32 n ids]{u64 id}}[u32 n nodes]{[u64 id][u32 len][addr utf-8]}
//! ```
//!
//! The meta file holds the vote and the last purged log id:
//!
//! ```text
//! "RHDFSRM1" [u8 flags: 1 vote, 2 purged]
//! vote:   [u64 term][u64 node voted for, 0 for none][u8 committed]
//! purged: [u64 term][u64 0][u64 index]
//! [u32 BE CRC32C of everything before]
//! ```
//!
//! Raft runs as standard Raft (openraft's `single-term-leader`): one leader per term, so a log
//! id is a term and an index. The 8 bytes after a log id's term carried its leader's node id
//! before (openraft's default mode, where votes of one term are ordered by node id and a member
//! that campaigned late in a leader's term out-ranked it); they are written 0 and not read, so
//! logs written then still open. Members are numbered from 1, so 0 never names one.
//!
//! Every decoder checks lengths first: bytes from disk never panic.

use std::collections::{BTreeMap, BTreeSet};

use openraft::{
    BasicNode, CommittedLeaderId, Entry, EntryPayload, LeaderId, LogId, Membership, RaftTypeConfig,
    Vote,
};

use crate::error::{RaftLogError, Result};

/// Application data carried by normal entries: how it is written into an edit-log record.
/// The NameNode's is the encoded edit op (or batch of ops); `Vec<u8>` is provided.
pub trait EntryData: Sized {
    /// Appends the bytes of `self` to `out`.
    fn encode(&self, out: &mut Vec<u8>);
    /// Reads back what [`EntryData::encode`] wrote; errors on malformed bytes.
    fn decode(bytes: &[u8]) -> std::result::Result<Self, String>;
}

impl EntryData for Vec<u8> {
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self);
    }
    fn decode(bytes: &[u8]) -> std::result::Result<Self, String> {
        Ok(bytes.to_vec())
    }
}

/// The node field of a log id, and of a vote for nobody (members are numbered from 1).
pub const NO_NODE: u64 = 0;

/// A log id: in standard Raft its term names its leader.
pub fn log_id(term: u64, index: u64) -> LogId<u64> {
    LogId::new(CommittedLeaderId::new(term, NO_NODE), index)
}

/// The member `v` is a vote for, [`NO_NODE`] for none.
pub fn vote_node(v: &Vote<u64>) -> u64 {
    v.leader_id.voted_for.unwrap_or(NO_NODE)
}

/// The vote of `term` for `node` ([`NO_NODE`]: for nobody yet).
pub fn vote(term: u64, node: u64, committed: bool) -> Vote<u64> {
    Vote {
        leader_id: LeaderId {
            term,
            voted_for: (node != NO_NODE).then_some(node),
        },
        committed,
    }
}

const KIND_BLANK: u8 = 0;
const KIND_NORMAL: u8 = 1;
const KIND_MEMBERSHIP: u8 = 2;

/// A cursor over bytes read from disk; every read is bounds-checked.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    what: &'static str,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8], what: &'static str) -> Self {
        Reader { bytes, what }
    }

    fn err(&self, reason: impl Into<String>) -> RaftLogError {
        RaftLogError::Decode {
            what: self.what,
            reason: reason.into(),
        }
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.bytes.len() < n {
            return Err(self.err(format!("needed {n} more bytes, {} left", self.bytes.len())));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    pub(crate) fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    pub(crate) fn u32(&mut self) -> Result<u32> {
        let mut a = [0u8; 4];
        a.copy_from_slice(self.take(4)?);
        Ok(u32::from_be_bytes(a))
    }

    pub(crate) fn u64(&mut self) -> Result<u64> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_be_bytes(a))
    }

    /// A count that must fit in what is left (each item at least `min_item` bytes).
    pub(crate) fn count(&mut self, min_item: usize) -> Result<usize> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min_item) > self.bytes.len() {
            return Err(self.err(format!("count {n} exceeds the bytes left")));
        }
        Ok(n)
    }

    pub(crate) fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.bytes)
    }

    pub(crate) fn end(&self) -> Result<()> {
        if self.bytes.is_empty() {
            Ok(())
        } else {
            Err(self.err(format!("{} trailing bytes", self.bytes.len())))
        }
    }
}

fn put_u32(out: &mut Vec<u8>, v: usize) {
    out.extend_from_slice(&u32::try_from(v).unwrap_or(u32::MAX).to_be_bytes());
}

pub(crate) fn encode_membership(m: &Membership<u64, BasicNode>, out: &mut Vec<u8>) {
    let configs = m.get_joint_config();
    put_u32(out, configs.len());
    for c in configs {
        put_u32(out, c.len());
        for id in c {
            out.extend_from_slice(&id.to_be_bytes());
        }
    }
    let nodes: Vec<_> = m.nodes().collect();
    put_u32(out, nodes.len());
    for (id, node) in nodes {
        out.extend_from_slice(&id.to_be_bytes());
        put_u32(out, node.addr.len());
        out.extend_from_slice(node.addr.as_bytes());
    }
}

pub(crate) fn decode_membership(r: &mut Reader<'_>) -> Result<Membership<u64, BasicNode>> {
    let n = r.count(4)?;
    let mut configs = Vec::with_capacity(n);
    for _ in 0..n {
        let k = r.count(8)?;
        let mut set = BTreeSet::new();
        for _ in 0..k {
            set.insert(r.u64()?);
        }
        configs.push(set);
    }
    let n = r.count(12)?;
    let mut nodes = BTreeMap::new();
    for _ in 0..n {
        let id = r.u64()?;
        let len = r.count(1)?;
        let addr = std::str::from_utf8(r.take(len)?)
            .map_err(|e| RaftLogError::Decode {
                what: "membership node address",
                reason: e.to_string(),
            })?
            .to_string();
        nodes.insert(id, BasicNode { addr });
    }
    Ok(Membership::new(configs, nodes))
}

/// The record payload of `entry` (its index is the record's txid).
pub fn encode_entry<C>(entry: &Entry<C>, out: &mut Vec<u8>)
where
    C: RaftTypeConfig<NodeId = u64, Node = BasicNode>,
    C::D: EntryData,
{
    out.extend_from_slice(&entry.log_id.leader_id.term.to_be_bytes());
    out.extend_from_slice(&NO_NODE.to_be_bytes());
    match &entry.payload {
        EntryPayload::Blank => out.push(KIND_BLANK),
        EntryPayload::Normal(d) => {
            out.push(KIND_NORMAL);
            d.encode(out);
        }
        EntryPayload::Membership(m) => {
            out.push(KIND_MEMBERSHIP);
            encode_membership(m, out);
        }
    }
}

/// The entry stored as record `index` with `payload`.
pub fn decode_entry<C>(index: u64, payload: &[u8]) -> Result<Entry<C>>
where
    C: RaftTypeConfig<NodeId = u64, Node = BasicNode>,
    C::D: EntryData,
{
    let mut r = Reader::new(payload, "raft entry");
    let term = r.u64()?;
    let _leader_node = r.u64()?;
    let payload = match r.u8()? {
        KIND_BLANK => EntryPayload::Blank,
        KIND_NORMAL => {
            let d = C::D::decode(r.rest()).map_err(|reason| RaftLogError::Decode {
                what: "raft entry application data",
                reason,
            })?;
            EntryPayload::Normal(d)
        }
        KIND_MEMBERSHIP => EntryPayload::Membership(decode_membership(&mut r)?),
        other => {
            return Err(RaftLogError::Decode {
                what: "raft entry",
                reason: format!("unknown kind {other}"),
            });
        }
    };
    r.end()?;
    Ok(Entry {
        log_id: log_id(term, index),
        payload,
    })
}

/// What the meta file holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Meta {
    pub vote: Option<Vote<u64>>,
    pub purged: Option<LogId<u64>>,
}

const META_MAGIC: [u8; 8] = *b"RHDFSRM1";

impl Meta {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = META_MAGIC.to_vec();
        let flags = u8::from(self.vote.is_some()) | (u8::from(self.purged.is_some()) << 1);
        out.push(flags);
        if let Some(v) = &self.vote {
            out.extend_from_slice(&v.leader_id.term.to_be_bytes());
            out.extend_from_slice(&vote_node(v).to_be_bytes());
            out.push(u8::from(v.committed));
        }
        if let Some(p) = &self.purged {
            out.extend_from_slice(&p.leader_id.term.to_be_bytes());
            out.extend_from_slice(&NO_NODE.to_be_bytes());
            out.extend_from_slice(&p.index.to_be_bytes());
        }
        let crc = crc32c::crc32c(&out);
        out.extend_from_slice(&crc.to_be_bytes());
        out
    }

    pub fn decode(bytes: &[u8]) -> Result<Meta> {
        let err = |reason: &str| RaftLogError::Decode {
            what: "raft meta file",
            reason: reason.to_string(),
        };
        let body_len = bytes
            .len()
            .checked_sub(4)
            .ok_or_else(|| err("shorter than its checksum"))?;
        let (body, crc) = bytes.split_at(body_len);
        let mut r = Reader::new(crc, "raft meta file");
        if r.u32()? != crc32c::crc32c(body) {
            return Err(err("checksum mismatch"));
        }
        let mut r = Reader::new(body, "raft meta file");
        if r.take(8)? != META_MAGIC {
            return Err(err("bad magic"));
        }
        let flags = r.u8()?;
        let vote = if flags & 1 != 0 {
            let term = r.u64()?;
            let node = r.u64()?;
            let committed = r.u8()? != 0;
            Some(vote(term, node, committed))
        } else {
            None
        };
        let purged = if flags & 2 != 0 {
            let term = r.u64()?;
            let _leader_node = r.u64()?;
            let index = r.u64()?;
            Some(log_id(term, index))
        } else {
            None
        };
        r.end()?;
        Ok(Meta { vote, purged })
    }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;

    openraft::declare_raft_types!(T: D = Vec<u8>, R = ());

    #[test]
    fn entries_round_trip_and_truncations_fail_cleanly() {
        let m = Membership::new(
            vec![BTreeSet::from([1, 2, 3])],
            BTreeMap::from([
                (1, BasicNode::new("a:1")),
                (2, BasicNode::new("b:2")),
                (3, BasicNode::new("c:3")),
                (4, BasicNode::new("learner:4")),
            ]),
        );
        let id = log_id(7, 9);
        for payload in [
            EntryPayload::<T>::Blank,
            EntryPayload::Normal(b"edit".to_vec()),
            EntryPayload::Membership(m),
        ] {
            let e = Entry::<T> {
                log_id: id,
                payload,
            };
            let mut bytes = Vec::new();
            encode_entry(&e, &mut bytes);
            let back = decode_entry::<T>(9, &bytes).expect("decodes");
            assert_eq!(format!("{back:?}"), format!("{e:?}"));
            for cut in 0..bytes.len() {
                // Normal data is the rest of the record: any cut of it decodes.
                if matches!(e.payload, EntryPayload::Normal(_)) && cut >= 17 {
                    continue;
                }
                assert!(decode_entry::<T>(9, &bytes[..cut]).is_err(), "cut {cut}");
            }
        }
    }

    #[test]
    fn meta_round_trip_and_damage() {
        let meta = Meta {
            vote: Some(Vote::new_committed(3, 2)),
            purged: Some(log_id(2, 40)),
        };
        let bytes = meta.encode();
        assert_eq!(Meta::decode(&bytes).expect("decodes"), meta);
        assert_eq!(
            Meta::decode(&Meta::default().encode()).expect("decodes"),
            Meta::default()
        );
        for cut in 0..bytes.len() {
            assert!(Meta::decode(&bytes[..cut]).is_err());
        }
        let mut bad = bytes.clone();
        bad[10] ^= 1;
        assert!(Meta::decode(&bad).is_err());
        // A vote for nobody yet (term 0 before any election, or a term learnt from a leader).
        let nobody = Meta {
            vote: Some(Vote::default()),
            purged: None,
        };
        assert_eq!(Meta::decode(&nobody.encode()).expect("decodes"), nobody);
    }

    /// Standard Raft: a leader's vote is comparable with a candidate's of the same term only
    /// by being committed, so a member that campaigned late in a leader's term (as every
    /// member's `initialize` does) takes the leader's entries instead of deposing it. In
    /// openraft's default mode T1-N3 out-ranked the committed T1-N2.
    #[test]
    fn a_late_candidate_of_the_leaders_term_yields_to_the_leader() {
        let leader = vote(1, 2, true);
        let late = vote(1, 3, false);
        assert!(leader > late);
        assert!(vote(2, 3, false) > leader);
    }

    /// Records written when a log id carried its leader's node id still decode.
    #[test]
    fn entries_and_meta_with_a_leader_node_id_decode() {
        let mut entry = Vec::new();
        entry.extend_from_slice(&4u64.to_be_bytes());
        entry.extend_from_slice(&2u64.to_be_bytes());
        entry.push(KIND_BLANK);
        let e = decode_entry::<T>(12, &entry).expect("decodes");
        assert_eq!(e.log_id, log_id(4, 12));
        let mut meta = META_MAGIC.to_vec();
        meta.push(2);
        for v in [4u64, 2, 11] {
            meta.extend_from_slice(&v.to_be_bytes());
        }
        let crc = crc32c::crc32c(&meta);
        meta.extend_from_slice(&crc.to_be_bytes());
        let m = Meta::decode(&meta).expect("decodes");
        assert_eq!(m.purged, Some(log_id(4, 11)));
    }
}
