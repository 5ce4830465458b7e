//! The wire form of openraft's RPCs: conversions to and from the `rhdfs_proto::raft`
//! messages. Decoding checks what openraft and the log store take for granted (entries
//! follow the previous log id one index at a time, each entry decodes, a response kind is
//! known and carries its field), so bytes from the network never panic or reach the store
//! malformed.

use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;
use openraft::error::SnapshotMismatch;
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, InstallSnapshotRequest, InstallSnapshotResponse,
    VoteRequest, VoteResponse,
};
use openraft::{
    BasicNode, LogId, Membership, SnapshotMeta, SnapshotSegmentId, StoredMembership, Vote,
};
use rhdfs_proto::raft as pb;
use rhdfs_proto::raft::append_entries_response_proto::Kind;

use crate::codec::{self, EntryData, decode_entry, encode_entry};
use crate::net::error::NetError;
use crate::store::LogTypeConfig;

/// Method name of openraft's AppendEntries RPC.
pub const APPEND_ENTRIES: &str = "appendEntries";
/// Method name of openraft's Vote RPC.
pub const REQUEST_VOTE: &str = "requestVote";
/// Method name of one chunk of openraft's InstallSnapshot RPC.
pub const INSTALL_SNAPSHOT: &str = "installSnapshot";

fn malformed(what: &'static str, reason: impl Into<String>) -> NetError {
    NetError::Malformed {
        what,
        reason: reason.into(),
    }
}

pub(crate) fn vote_to(v: &Vote<u64>) -> pb::RaftVoteProto {
    pb::RaftVoteProto {
        term: v.leader_id.term,
        node_id: codec::vote_node(v),
        committed: v.committed,
    }
}

pub(crate) fn vote_from(p: &pb::RaftVoteProto) -> Vote<u64> {
    codec::vote(p.term, p.node_id, p.committed)
}

fn log_id_to(l: &Option<LogId<u64>>) -> Option<pb::RaftLogIdProto> {
    l.map(|l| pb::RaftLogIdProto {
        term: l.leader_id.term,
        node_id: codec::NO_NODE,
        index: l.index,
    })
}

fn log_id_from(p: &Option<pb::RaftLogIdProto>) -> Option<LogId<u64>> {
    p.as_ref().map(|p| codec::log_id(p.term, p.index))
}

/// The request as sent: each entry as its Raft log record's payload.
pub(crate) fn append_request_to<C: LogTypeConfig>(
    req: &AppendEntriesRequest<C>,
) -> pb::AppendEntriesRequestProto
where
    C::D: EntryData + Clone,
{
    let entries = req
        .entries
        .iter()
        .map(|e| {
            let mut payload = Vec::new();
            encode_entry(e, &mut payload);
            pb::RaftEntryProto {
                index: e.log_id.index,
                payload: Bytes::from(payload),
            }
        })
        .collect();
    pb::AppendEntriesRequestProto {
        vote: vote_to(&req.vote),
        prev_log_id: log_id_to(&req.prev_log_id),
        leader_commit: log_id_to(&req.leader_commit),
        entries,
    }
}

/// The request received; its entries must follow `prev_log_id` one index at a time.
pub(crate) fn append_request_from<C: LogTypeConfig>(
    p: pb::AppendEntriesRequestProto,
) -> Result<AppendEntriesRequest<C>, NetError>
where
    C::D: EntryData + Clone,
{
    let prev_log_id = log_id_from(&p.prev_log_id);
    let mut due = match prev_log_id {
        None => Some(0),
        Some(l) => l.index.checked_add(1),
    };
    let mut entries = Vec::with_capacity(p.entries.len());
    for e in &p.entries {
        if Some(e.index) != due {
            return Err(malformed(
                "appendEntries request",
                format!("entry {} does not follow {prev_log_id:?}", e.index),
            ));
        }
        let entry = decode_entry::<C>(e.index, &e.payload)
            .map_err(|err| malformed("log entry", err.to_string()))?;
        entries.push(entry);
        due = e.index.checked_add(1);
    }
    Ok(AppendEntriesRequest {
        vote: vote_from(&p.vote),
        prev_log_id,
        leader_commit: log_id_from(&p.leader_commit),
        entries,
    })
}

pub(crate) fn append_response_to(r: &AppendEntriesResponse<u64>) -> pb::AppendEntriesResponseProto {
    let (kind, matching, higher_vote) = match r {
        AppendEntriesResponse::Success => (Kind::Success, None, None),
        AppendEntriesResponse::PartialSuccess(m) => (Kind::PartialSuccess, log_id_to(m), None),
        AppendEntriesResponse::Conflict => (Kind::Conflict, None, None),
        AppendEntriesResponse::HigherVote(v) => (Kind::HigherVote, None, Some(vote_to(v))),
    };
    pb::AppendEntriesResponseProto {
        kind: kind as i32,
        matching,
        higher_vote,
    }
}

pub(crate) fn append_response_from(
    p: &pb::AppendEntriesResponseProto,
) -> Result<AppendEntriesResponse<u64>, NetError> {
    let what = "appendEntries response";
    let kind = Kind::try_from(p.kind).map_err(|_| malformed(what, format!("kind {}", p.kind)))?;
    Ok(match kind {
        Kind::Success => AppendEntriesResponse::Success,
        Kind::PartialSuccess => AppendEntriesResponse::PartialSuccess(log_id_from(&p.matching)),
        Kind::Conflict => AppendEntriesResponse::Conflict,
        Kind::HigherVote => {
            let v = p
                .higher_vote
                .as_ref()
                .ok_or_else(|| malformed(what, "HIGHER_VOTE without the vote"))?;
            AppendEntriesResponse::HigherVote(vote_from(v))
        }
    })
}

pub(crate) fn vote_request_to(r: &VoteRequest<u64>) -> pb::VoteRequestProto {
    pb::VoteRequestProto {
        vote: vote_to(&r.vote),
        last_log_id: log_id_to(&r.last_log_id),
    }
}

pub(crate) fn vote_request_from(p: &pb::VoteRequestProto) -> VoteRequest<u64> {
    VoteRequest {
        vote: vote_from(&p.vote),
        last_log_id: log_id_from(&p.last_log_id),
    }
}

pub(crate) fn vote_response_to(r: &VoteResponse<u64>) -> pb::VoteResponseProto {
    pb::VoteResponseProto {
        vote: vote_to(&r.vote),
        vote_granted: r.vote_granted,
        last_log_id: log_id_to(&r.last_log_id),
    }
}

pub(crate) fn vote_response_from(p: &pb::VoteResponseProto) -> VoteResponse<u64> {
    VoteResponse {
        vote: vote_from(&p.vote),
        vote_granted: p.vote_granted,
        last_log_id: log_id_from(&p.last_log_id),
    }
}

fn membership_to(m: &Membership<u64, BasicNode>) -> pb::RaftMembershipProto {
    use pb::raft_membership_proto::{ConfigProto, NodeProto};
    pb::RaftMembershipProto {
        configs: m
            .get_joint_config()
            .iter()
            .map(|c| ConfigProto {
                voter_ids: c.iter().copied().collect(),
            })
            .collect(),
        nodes: m
            .nodes()
            .map(|(id, n)| NodeProto {
                id: *id,
                addr: n.addr.clone(),
            })
            .collect(),
    }
}

fn membership_from(p: &pb::RaftMembershipProto) -> Membership<u64, BasicNode> {
    let configs: Vec<BTreeSet<u64>> = p
        .configs
        .iter()
        .map(|c| c.voter_ids.iter().copied().collect())
        .collect();
    let nodes: BTreeMap<u64, BasicNode> = p
        .nodes
        .iter()
        .map(|n| (n.id, BasicNode::new(&n.addr)))
        .collect();
    Membership::new(configs, nodes)
}

/// One snapshot chunk as sent; its data moves into the message.
pub(crate) fn snapshot_request_to<C: LogTypeConfig>(
    r: InstallSnapshotRequest<C>,
) -> pb::InstallSnapshotRequestProto
where
    C::D: EntryData + Clone,
{
    let meta = &r.meta;
    pb::InstallSnapshotRequestProto {
        vote: vote_to(&r.vote),
        meta: pb::RaftSnapshotMetaProto {
            last_log_id: log_id_to(&meta.last_log_id),
            membership_log_id: log_id_to(meta.last_membership.log_id()),
            membership: membership_to(meta.last_membership.membership()),
            snapshot_id: meta.snapshot_id.clone(),
        },
        offset: r.offset,
        data: Bytes::from(r.data),
        done: r.done,
    }
}

pub(crate) fn snapshot_request_from<C: LogTypeConfig>(
    p: pb::InstallSnapshotRequestProto,
) -> InstallSnapshotRequest<C>
where
    C::D: EntryData + Clone,
{
    let m = &p.meta;
    InstallSnapshotRequest {
        vote: vote_from(&p.vote),
        meta: SnapshotMeta {
            last_log_id: log_id_from(&m.last_log_id),
            last_membership: StoredMembership::new(
                log_id_from(&m.membership_log_id),
                membership_from(&m.membership),
            ),
            snapshot_id: m.snapshot_id.clone(),
        },
        offset: p.offset,
        data: Vec::from(p.data),
        done: p.done,
    }
}

/// The receiver's vote, or the mismatch that makes the sender start the snapshot over.
pub(crate) fn snapshot_response_to(
    r: &Result<InstallSnapshotResponse<u64>, SnapshotMismatch>,
) -> pb::InstallSnapshotResponseProto {
    let segment = |s: &SnapshotSegmentId| pb::RaftSnapshotSegmentIdProto {
        id: s.id.clone(),
        offset: s.offset,
    };
    match r {
        Ok(resp) => pb::InstallSnapshotResponseProto {
            vote: Some(vote_to(&resp.vote)),
            expected: None,
            got: None,
        },
        Err(m) => pb::InstallSnapshotResponseProto {
            vote: None,
            expected: Some(segment(&m.expect)),
            got: Some(segment(&m.got)),
        },
    }
}

pub(crate) fn snapshot_response_from(
    p: &pb::InstallSnapshotResponseProto,
) -> Result<Result<InstallSnapshotResponse<u64>, SnapshotMismatch>, NetError> {
    let segment = |s: &pb::RaftSnapshotSegmentIdProto| SnapshotSegmentId {
        id: s.id.clone(),
        offset: s.offset,
    };
    match (&p.vote, &p.expected, &p.got) {
        (Some(v), None, None) => Ok(Ok(InstallSnapshotResponse { vote: vote_from(v) })),
        (None, Some(expect), Some(got)) => Ok(Err(SnapshotMismatch {
            expect: segment(expect),
            got: segment(got),
        })),
        _ => Err(malformed(
            "installSnapshot response",
            "neither a vote nor a mismatch",
        )),
    }
}

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;
