//! Breaking split votes that would otherwise repeat.
//!
//! openraft 0.9 draws a member's election timeout once, when the member starts, and checks
//! it only on its ticks (every 1.5 heartbeat intervals). Two members whose ticks meet (members
//! of one process started together, or processes whose tick phases happen to coincide) and
//! whose timeouts fall in the same tick slot campaign in the same instant every term: each
//! votes for itself, refuses the other, and the vote splits again, term after term, until
//! scheduling jitter parts their ticks (seen: 35 terms, 20 s without a leader under load).
//!
//! The network notes in a [`SplitSeen`] each refusal that is a split: the peer voted for
//! another candidate of the same term, and its log is not ahead of the candidate's. A
//! candidate refused because its log is behind is not split (openraft then delays its next
//! election on purpose, so the member with the longer log wins) and is left alone.
//! [`break_split_votes`] watches one member: a member still a candidate in the same term a
//! settling time after it became one, having seen a split in that term, starts the next
//! election itself, at a moment drawn from a seeded random generator within a spread, before
//! its tick-based timer would: two candidates draw moments far apart compared to a round
//! trip, so the first one's request reaches the other while that one still waits, and wins
//! its vote. [`SplitVotes`] is the decision, kept apart from the task so it is tested without
//! a clock.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use openraft::raft::{VoteRequest, VoteResponse};
use openraft::{Raft, RaftTypeConfig, ServerState};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tokio::time::Instant;

/// The latest term in which one of this member's vote requests was refused by a split (see
/// the module docs); clones share it.
#[derive(Debug, Clone, Default)]
pub struct SplitSeen(Arc<AtomicU64>);

impl SplitSeen {
    /// Notes the answer `resp` to this member's `req`.
    pub fn note(&self, req: &VoteRequest<u64>, resp: &VoteResponse<u64>) {
        let (asked, got) = (&req.vote.leader_id, &resp.vote.leader_id);
        let split = !resp.vote_granted
            && !resp.vote.committed
            && got.term == asked.term
            && got.voted_for != asked.voted_for
            && resp.last_log_id <= req.last_log_id;
        if split {
            self.0.fetch_max(asked.term, Ordering::AcqRel);
        }
    }

    /// The latest term a split was seen in (0: none).
    pub fn term(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }
}

/// What the member should do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Nothing to do until its state changes.
    Idle,
    /// Look again at this moment (an election of its own is due then).
    At(Instant),
    /// Start an election now.
    Elect,
}

/// The decision: when a candidate that has not won starts its next election.
#[derive(Debug)]
pub struct SplitVotes {
    rng: StdRng,
    settle: Duration,
    spread: Duration,
    /// The term of the candidacy being watched and when its next election is due.
    pending: Option<(u64, Instant)>,
    /// The last term whose candidacy was decided on.
    decided: Option<u64>,
}

impl SplitVotes {
    /// A candidate that has seen a split starts its own next election `settle` plus a random
    /// part of `spread` after it was first seen a candidate in a term.
    pub fn new(seed: u64, settle: Duration, spread: Duration) -> Self {
        SplitVotes {
            rng: StdRng::seed_from_u64(seed),
            settle,
            spread,
            pending: None,
            decided: None,
        }
    }

    /// The member is in `state` at `term` at `now`; `split` is the latest term it saw a split
    /// vote in.
    pub fn observe(&mut self, state: ServerState, term: u64, split: u64, now: Instant) -> Next {
        if state != ServerState::Candidate {
            self.pending = None;
            return Next::Idle;
        }
        if self.decided == Some(term) {
            return Next::Idle;
        }
        match self.pending {
            Some((t, due)) if t == term => {
                if now < due {
                    return Next::At(due);
                }
                self.pending = None;
                self.decided = Some(term);
                if split == term {
                    Next::Elect
                } else {
                    Next::Idle
                }
            }
            _ => {
                let spread = self.rng.random_range(Duration::ZERO..=self.spread);
                let due = now + self.settle + spread;
                self.pending = Some((term, due));
                Next::At(due)
            }
        }
    }
}

/// Watches `raft` until it shuts down, starting an election when a candidacy has lost by a
/// split (see the module docs); `seen` is what its network notes. `may_campaign` is asked
/// before each: a member that must not campaign (an observer, elections held for a
/// hand-over) is left to its own timers.
pub async fn break_split_votes<C: RaftTypeConfig>(
    raft: Raft<C>,
    mut votes: SplitVotes,
    seen: SplitSeen,
    may_campaign: impl Fn() -> bool,
) {
    let mut metrics = raft.metrics();
    loop {
        let (state, term) = {
            let m = metrics.borrow_and_update();
            (m.state, m.current_term)
        };
        match votes.observe(state, term, seen.term(), Instant::now()) {
            Next::Idle => {
                if metrics.changed().await.is_err() {
                    return;
                }
            }
            Next::At(due) => {
                tokio::select! {
                    r = metrics.changed() => if r.is_err() { return },
                    _ = tokio::time::sleep_until(due) => {}
                }
            }
            Next::Elect => {
                if may_campaign() {
                    tracing::info!(term, "split vote: starting the next election now");
                    if raft.trigger().elect().await.is_err() {
                        return;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use openraft::{CommittedLeaderId, LogId, Vote};

    use super::*;

    const SETTLE: Duration = Duration::from_millis(250);
    const SPREAD: Duration = Duration::from_millis(750);

    #[test]
    fn a_split_candidacy_elects_once_due() {
        let mut v = SplitVotes::new(7, SETTLE, SPREAD);
        let t0 = Instant::now();
        let Next::At(due) = v.observe(ServerState::Candidate, 3, 0, t0) else {
            panic!("a candidacy is looked at again");
        };
        assert!(due >= t0 + SETTLE && due <= t0 + SETTLE + SPREAD);
        // Seen again in the same term before the moment: the same moment.
        assert_eq!(
            v.observe(ServerState::Candidate, 3, 3, t0 + SETTLE),
            Next::At(due)
        );
        assert_eq!(v.observe(ServerState::Candidate, 3, 3, due), Next::Elect);
        assert_eq!(v.observe(ServerState::Candidate, 3, 3, due), Next::Idle);
        // The election it started is a new term: a new moment.
        assert!(matches!(
            v.observe(ServerState::Candidate, 4, 3, due),
            Next::At(d) if d >= due + SETTLE
        ));
    }

    #[test]
    fn a_candidacy_refused_for_other_reasons_is_left_to_the_timers() {
        let mut v = SplitVotes::new(7, SETTLE, SPREAD);
        let t0 = Instant::now();
        let Next::At(due) = v.observe(ServerState::Candidate, 5, 4, t0) else {
            panic!("a candidacy is looked at again");
        };
        // No split in term 5 (its log is behind, or no answer): nothing, now or later.
        assert_eq!(v.observe(ServerState::Candidate, 5, 4, due), Next::Idle);
        assert_eq!(
            v.observe(ServerState::Candidate, 5, 4, due + SPREAD),
            Next::Idle
        );
    }

    #[test]
    fn winning_or_following_cancels_it() {
        let mut v = SplitVotes::new(7, SETTLE, SPREAD);
        let t0 = Instant::now();
        assert!(matches!(
            v.observe(ServerState::Candidate, 3, 3, t0),
            Next::At(_)
        ));
        let later = t0 + SETTLE + SPREAD;
        for state in [
            ServerState::Leader,
            ServerState::Follower,
            ServerState::Learner,
        ] {
            assert_eq!(v.observe(state, 3, 3, later), Next::Idle);
        }
        // A later candidacy in the same term (a vote granted, then lost) starts over.
        assert!(matches!(
            v.observe(ServerState::Candidate, 3, 3, later),
            Next::At(d) if d >= later + SETTLE
        ));
    }

    #[test]
    fn members_draw_moments_apart_and_replay_from_their_seed() {
        let t0 = Instant::now();
        let due = |seed: u64| match SplitVotes::new(seed, SETTLE, SPREAD).observe(
            ServerState::Candidate,
            5,
            5,
            t0,
        ) {
            Next::At(d) => d,
            other => panic!("{other:?}"),
        };
        assert_eq!(due(11), due(11));
        // Over many pairs of seeds, moments closer than a 5 ms round trip are rare.
        let close = (0..1000u64)
            .filter(|i| {
                let (a, b) = (due(2 * i), due(2 * i + 1));
                a.max(b) - a.min(b) < Duration::from_millis(5)
            })
            .count();
        assert!(close < 50, "{close} of 1000 pairs within 5 ms");
    }

    fn log(term: u64, index: u64) -> Option<LogId<u64>> {
        Some(LogId::new(CommittedLeaderId::new(term, 1), index))
    }

    #[test]
    fn only_a_refusal_by_another_candidate_of_the_term_is_a_split() {
        let req = VoteRequest::new(Vote::new(6, 1), log(5, 40));
        let answer = |vote: Vote<u64>, last: Option<LogId<u64>>, granted: bool| {
            let seen = SplitSeen::default();
            seen.note(&req, &VoteResponse::new(vote, last, granted));
            seen.term()
        };
        // The peer voted for itself in term 6, its log no longer than ours: a split.
        assert_eq!(answer(Vote::new(6, 2), log(5, 40), false), 6);
        assert_eq!(answer(Vote::new(6, 3), log(5, 12), false), 6);
        // Its log is ahead: ours must not win, no hurry.
        assert_eq!(answer(Vote::new(6, 2), log(5, 41), false), 0);
        // Granted; a leader's lease; another term.
        assert_eq!(answer(Vote::new(6, 1), log(5, 40), true), 0);
        assert_eq!(answer(Vote::new_committed(6, 2), log(5, 40), false), 0);
        assert_eq!(answer(Vote::new(7, 2), log(5, 40), false), 0);
        // The latest split term is kept.
        let seen = SplitSeen::default();
        seen.note(&req, &VoteResponse::new(Vote::new(6, 2), log(5, 40), false));
        let older = VoteRequest::new(Vote::new(4, 1), log(3, 10));
        seen.note(
            &older,
            &VoteResponse::new(Vote::new(4, 2), log(3, 10), false),
        );
        assert_eq!(seen.term(), 6);
    }
}
