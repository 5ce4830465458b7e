//! openraft logs a line for every retry of a call to a Raft peer that is down — an ERROR
//! (`RPCError`, `while requesting vote`) and often a WARN beside it, several a second for as
//! long as the peer is away (its replication loop retries after each backoff). Those lines say
//! one thing: peer N is unreachable. [`PeerDownLimiter`] lets the first of them through per
//! peer and place in openraft's code, then one per [`PEER_DOWN_EVERY`]; every other line —
//! a storage error, a timeout, a bad answer, a peer reachable again and failing otherwise, any
//! line of rhdfs's own — passes untouched.
//!
//! A line is one of those when its target is openraft's and its `error`, `err` or `result`
//! field (the replication handler's `update progress error`) reads
//! `Unreachable node` (openraft's `RPCError::Unreachable`, which rhdfs's Raft network returns
//! for a peer that refuses or drops connections: `rhdfs_raftlog::net::error`). The peer is
//! told by the `raft peer N at host:port` words of that error.

use std::collections::HashMap;
use std::fmt;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tracing::callsite::Identifier;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer};

/// How often a line about the same unreachable peer from the same place is let through.
pub const PEER_DOWN_EVERY: Duration = Duration::from_secs(60);

/// What openraft's `RPCError::Unreachable` displays as.
const UNREACHABLE: &str = "Unreachable node";

/// Rate-limits openraft's lines about unreachable peers; see the module docs.
pub struct PeerDownLimiter {
    every: Duration,
    /// When a line was last let through, by place in the code and peer.
    last: Mutex<HashMap<(Identifier, String), Instant>>,
}

impl PeerDownLimiter {
    pub fn new(every: Duration) -> Self {
        PeerDownLimiter {
            every,
            last: Mutex::new(HashMap::new()),
        }
    }

    /// Whether a line from `place` about `peer` goes out at `now`.
    fn allow(&self, place: Identifier, peer: String, now: Instant) -> bool {
        let mut last = self.last.lock();
        match last.get_mut(&(place.clone(), peer.clone())) {
            Some(at) if now.saturating_duration_since(*at) < self.every => false,
            Some(at) => {
                *at = now;
                true
            }
            None => {
                last.insert((place, peer), now);
                true
            }
        }
    }

    /// The peer an openraft line says is unreachable, if it says so.
    fn unreachable_peer(event: &Event<'_>) -> Option<String> {
        let meta = event.metadata();
        if !meta.target().starts_with("openraft") || *meta.level() > Level::WARN {
            return None;
        }
        let mut error = ErrorField(None);
        event.record(&mut error);
        let text = error.0?;
        text.contains(UNREACHABLE).then(|| peer_words(&text))
    }

    fn event_allowed(&self, event: &Event<'_>, now: Instant) -> bool {
        match Self::unreachable_peer(event) {
            Some(peer) => self.allow(event.metadata().callsite(), peer, now),
            None => true,
        }
    }
}

/// `N at host:port` of `raft peer N at host:port unreachable`, or the empty string.
fn peer_words(text: &str) -> String {
    text.split_once("raft peer ")
        .and_then(|(_, rest)| rest.split_once(" unreachable"))
        .map(|(peer, _)| peer.to_string())
        .unwrap_or_default()
}

/// The text of an event's `error`, `err` or `result` field.
struct ErrorField(Option<String>);

impl Visit for ErrorField {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if matches!(field.name(), "error" | "err" | "result") {
            self.0 = Some(format!("{value:?}"));
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if matches!(field.name(), "error" | "err" | "result") {
            self.0 = Some(value.to_string());
        }
    }
}

impl<S: Subscriber> Layer<S> for PeerDownLimiter {
    fn event_enabled(&self, event: &Event<'_>, _cx: Context<'_, S>) -> bool {
        self.event_allowed(event, Instant::now())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use tracing_subscriber::layer::SubscriberExt;

    /// Collects the messages of the events that reach it.
    #[derive(Clone, Default)]
    struct Seen(Arc<Mutex<Vec<String>>>);

    struct Message(String);

    impl Visit for Message {
        fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
            if field.name() == "message" {
                self.0 = format!("{value:?}");
            }
        }
    }

    impl<S: Subscriber> Layer<S> for Seen {
        fn on_event(&self, event: &Event<'_>, _cx: Context<'_, S>) {
            let mut m = Message(String::new());
            event.record(&mut m);
            self.0.lock().push(m.0);
        }
    }

    const DOWN_3: &str = "Unreachable node: rhdfs_raftlog::net::error::NetError: raft peer 3 at \
                          127.0.0.1:41265 unreachable: I/O error: Connection refused";
    const DOWN_2: &str = "Unreachable node: rhdfs_raftlog::net::error::NetError: raft peer 2 at \
                          127.0.0.1:37041 unreachable: I/O error: Connection refused";

    /// Through a subscriber: openraft's repeated lines about a down peer come out once per
    /// peer and place (the limit is an hour here); its other errors, and anyone else's, all.
    #[test]
    fn repeated_unreachable_lines_come_out_once_per_peer_and_place() {
        let seen = Seen::default();
        let subscriber = tracing_subscriber::registry()
            .with(PeerDownLimiter::new(Duration::from_secs(3600)))
            .with(seen.clone());
        tracing::subscriber::with_default(subscriber, || {
            for _ in 0..5 {
                tracing::error!(target: "openraft::replication", err = %DOWN_3, "RPCError 3");
                tracing::warn!(target: "openraft::replication", error = %DOWN_3, "replication 3");
                tracing::error!(target: "openraft::replication", err = %DOWN_2, "RPCError 2");
                tracing::warn!(
                    target: "openraft::engine::handler::replication_handler",
                    result = %DOWN_3,
                    "update progress error"
                );
                tracing::error!(target: "openraft::replication", err = %"Timeout after 1s", "timeout");
                tracing::error!(target: "openraft::core", error = %"storage: disk full", "storage");
                tracing::error!(target: "rhdfs_namenode", error = %DOWN_3, "ours");
                tracing::info!(target: "openraft::core", error = %DOWN_3, "info");
            }
        });
        let seen = seen.0.lock().clone();
        let count = |m: &str| seen.iter().filter(|s| *s == m).count();
        assert_eq!(count("RPCError 3"), 1, "{seen:?}");
        assert_eq!(count("replication 3"), 1, "{seen:?}");
        assert_eq!(count("RPCError 2"), 1, "{seen:?}");
        assert_eq!(count("update progress error"), 1, "{seen:?}");
        assert_eq!(count("timeout"), 5, "{seen:?}");
        assert_eq!(count("storage"), 5, "{seen:?}");
        assert_eq!(count("ours"), 5, "{seen:?}");
        assert_eq!(count("info"), 5, "{seen:?}");
    }

    /// Once the limit has passed since the last line let through, the next one goes out.
    #[test]
    fn a_line_goes_out_again_once_the_limit_passed() {
        let limiter = PeerDownLimiter::new(Duration::from_secs(60));
        let place = || tracing::callsite::Identifier(&PLACE);
        let t0 = Instant::now();
        assert!(limiter.allow(place(), "3".into(), t0));
        assert!(!limiter.allow(place(), "3".into(), t0 + Duration::from_secs(59)));
        assert!(limiter.allow(place(), "2".into(), t0 + Duration::from_secs(59)));
        assert!(limiter.allow(place(), "3".into(), t0 + Duration::from_secs(60)));
        assert!(!limiter.allow(place(), "3".into(), t0 + Duration::from_secs(119)));
        assert!(limiter.allow(place(), "3".into(), t0 + Duration::from_secs(121)));
    }

    #[test]
    fn the_peer_is_read_from_the_error() {
        assert_eq!(peer_words(DOWN_3), "3 at 127.0.0.1:41265");
        assert_eq!(peer_words("Unreachable node: something else"), "");
    }

    struct Place;
    impl tracing::Callsite for Place {
        fn set_interest(&self, _: tracing::subscriber::Interest) {}
        fn metadata(&self) -> &tracing::Metadata<'_> {
            unreachable!("not registered")
        }
    }
    static PLACE: Place = Place;
}
