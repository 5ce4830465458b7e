//! Round trips of every message through its proto bytes, and malformed input refused.

use openraft::{Entry, EntryPayload};
use prost::Message;

use super::*;
use crate::codec::log_id;
use crate::kv::{KvCommand, KvConfig};

fn membership() -> Membership<u64, BasicNode> {
    Membership::new(
        vec![BTreeSet::from([1, 2, 3]), BTreeSet::from([2, 3, 4])],
        BTreeMap::from([
            (1, BasicNode::new("nn1:8020")),
            (2, BasicNode::new("nn2:8020")),
            (3, BasicNode::new("nn3:8020")),
            (4, BasicNode::new("nn4:8020")),
            (5, BasicNode::new("learner:8020")),
        ]),
    )
}

fn entries(first: u64, n: u64) -> Vec<Entry<KvConfig>> {
    (first..first + n)
        .map(|i| Entry {
            log_id: log_id(3, i),
            payload: match i % 3 {
                0 => EntryPayload::Blank,
                1 => EntryPayload::Normal(KvCommand {
                    key: format!("k{i}"),
                    value: format!("v{i}"),
                }),
                _ => EntryPayload::Membership(membership()),
            },
        })
        .collect()
}

/// Encodes to bytes and decodes again, as the wire does.
fn through_bytes<M: Message + Default>(m: &M) -> M {
    M::decode(m.encode_to_vec().as_slice()).expect("decodes")
}

fn dbg<T: std::fmt::Debug>(t: &T) -> String {
    format!("{t:?}")
}

#[test]
fn append_entries_round_trip() {
    for (prev, first) in [(None, 0), (Some(log_id(2, 9)), 10)] {
        let req = AppendEntriesRequest::<KvConfig> {
            vote: Vote::new_committed(3, 2),
            prev_log_id: prev,
            leader_commit: Some(log_id(2, 7)),
            entries: entries(first, 5),
        };
        let back = append_request_from::<KvConfig>(through_bytes(&append_request_to(&req)))
            .expect("valid request");
        assert_eq!(dbg(&back), dbg(&req));
    }
    for resp in [
        AppendEntriesResponse::Success,
        AppendEntriesResponse::PartialSuccess(None),
        AppendEntriesResponse::PartialSuccess(Some(log_id(1, 4))),
        AppendEntriesResponse::Conflict,
        AppendEntriesResponse::HigherVote(Vote::new(9, 3)),
    ] {
        let back = append_response_from(&through_bytes(&append_response_to(&resp)));
        assert_eq!(back.expect("valid response"), resp);
    }
}

#[test]
fn append_entries_out_of_place_or_damaged_is_refused() {
    let req = AppendEntriesRequest::<KvConfig> {
        vote: Vote::new_committed(3, 2),
        prev_log_id: Some(log_id(2, 9)),
        leader_commit: None,
        entries: entries(10, 3),
    };
    let good = append_request_to(&req);
    // A gap, an entry before the previous one, a repeated index.
    for indexes in [[10, 12, 13], [9, 10, 11], [10, 10, 11], [11, 12, 13]] {
        let mut p = good.clone();
        for (e, i) in p.entries.iter_mut().zip(indexes) {
            e.index = i;
        }
        assert!(append_request_from::<KvConfig>(p).is_err(), "{indexes:?}");
    }
    // A truncated entry payload.
    let mut p = good.clone();
    p.entries[2].payload = p.entries[2].payload.slice(..5);
    assert!(append_request_from::<KvConfig>(p).is_err());
    // An index past the end of the log space.
    let mut p = good;
    p.prev_log_id = log_id_to(&Some(log_id(2, u64::MAX)));
    p.entries[0].index = 0;
    assert!(append_request_from::<KvConfig>(p).is_err());
    // Unknown kinds, a HIGHER_VOTE without its vote, bytes that are no message.
    let bad = pb::AppendEntriesResponseProto {
        kind: 99,
        matching: None,
        higher_vote: None,
    };
    assert!(append_response_from(&bad).is_err());
    let bad = pb::AppendEntriesResponseProto {
        kind: Kind::HigherVote as i32,
        ..bad
    };
    assert!(append_response_from(&bad).is_err());
    assert!(pb::AppendEntriesRequestProto::decode(&[0xff, 0xff, 0xff][..]).is_err());
}

#[test]
fn vote_round_trip() {
    for last in [None, Some(log_id(4, 77))] {
        let req = VoteRequest::new(Vote::new(5, 3), last);
        assert_eq!(
            vote_request_from(&through_bytes(&vote_request_to(&req))),
            req
        );
        let resp = VoteResponse::new(Vote::new_committed(5, 3), last, true);
        assert_eq!(
            vote_response_from(&through_bytes(&vote_response_to(&resp))),
            resp
        );
    }
}

#[test]
fn snapshot_chunks_round_trip() {
    let req = InstallSnapshotRequest::<KvConfig> {
        vote: Vote::new_committed(7, 1),
        meta: SnapshotMeta {
            last_log_id: Some(log_id(6, 120)),
            last_membership: StoredMembership::new(Some(log_id(1, 0)), membership()),
            snapshot_id: "6-1-120-3".into(),
        },
        offset: 4096,
        data: b"key\0value\0".to_vec(),
        done: true,
    };
    let expected = dbg(&req);
    let back = snapshot_request_from::<KvConfig>(through_bytes(&snapshot_request_to(req)));
    assert_eq!(dbg(&back), expected);

    let ok = Ok(InstallSnapshotResponse {
        vote: Vote::new_committed(7, 1),
    });
    let mismatch = Err(SnapshotMismatch {
        expect: SnapshotSegmentId {
            id: "a".into(),
            offset: 0,
        },
        got: SnapshotSegmentId {
            id: "b".into(),
            offset: 4096,
        },
    });
    for r in [ok, mismatch] {
        let back = snapshot_response_from(&through_bytes(&snapshot_response_to(&r)));
        assert_eq!(back.expect("valid response"), r);
    }
    let neither = pb::InstallSnapshotResponseProto::default();
    assert!(snapshot_response_from(&neither).is_err());
}
