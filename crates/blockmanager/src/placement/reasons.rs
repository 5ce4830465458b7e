//! Why placement passed nodes over (Hadoop's NodeNotChosenReason), the counts a short
//! answer reports, and the "could only be written to" message that carries them.

use std::collections::BTreeMap;
use std::fmt;

/// Why a node examined for a target was not chosen (Hadoop's NodeNotChosenReason).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NotChosenReason {
    /// Decommissioning, decommissioned or in maintenance.
    NotInService,
    NodeStale,
    NodeTooBusy,
    TooManyNodesOnRack,
    NotEnoughStorageSpace,
    NodeSlow,
}

impl NotChosenReason {
    pub const ALL: [NotChosenReason; 6] = [
        NotChosenReason::NotInService,
        NotChosenReason::NodeStale,
        NotChosenReason::NodeTooBusy,
        NotChosenReason::TooManyNodesOnRack,
        NotChosenReason::NotEnoughStorageSpace,
        NotChosenReason::NodeSlow,
    ];

    /// Hadoop's enum constant name.
    pub fn name(self) -> &'static str {
        match self {
            NotChosenReason::NotInService => "NOT_IN_SERVICE",
            NotChosenReason::NodeStale => "NODE_STALE",
            NotChosenReason::NodeTooBusy => "NODE_TOO_BUSY",
            NotChosenReason::TooManyNodesOnRack => "TOO_MANY_NODES_ON_RACK",
            NotChosenReason::NotEnoughStorageSpace => "NOT_ENOUGH_STORAGE_SPACE",
            NotChosenReason::NodeSlow => "NODE_SLOW",
        }
    }

    /// Hadoop's text for the reason.
    pub fn text(self) -> &'static str {
        match self {
            NotChosenReason::NotInService => "the node is not in service",
            NotChosenReason::NodeStale => "the node is stale",
            NotChosenReason::NodeTooBusy => "the node is too busy",
            NotChosenReason::TooManyNodesOnRack => "the rack has too many chosen nodes",
            NotChosenReason::NotEnoughStorageSpace => "not enough storage space to place the block",
            NotChosenReason::NodeSlow => "the node is too slow",
        }
    }
}

impl fmt::Display for NotChosenReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How many examined nodes were passed over for each reason (each node counted once,
/// under the last reason it was rejected for). Displays as Hadoop logs its reason map:
/// `{NODE_TOO_BUSY=5, NOT_ENOUGH_STORAGE_SPACE=2}`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReasonCounts(pub BTreeMap<NotChosenReason, usize>);

impl ReasonCounts {
    pub fn get(&self, r: NotChosenReason) -> usize {
        self.0.get(&r).copied().unwrap_or(0)
    }
    pub fn total(&self) -> usize {
        self.0.values().sum()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Display for ReasonCounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (i, (r, n)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}={n}", r.name())?;
        }
        f.write_str("}")
    }
}

/// The result of one placement: the chosen indices into the node list in pipeline order,
/// why the other examined nodes were passed over, and how many nodes were excluded by the
/// end of the operation (the client's excluded nodes plus every node examined, as in
/// Hadoop's "N node(s) are excluded in this operation").
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlacementOutcome {
    pub chosen: Vec<usize>,
    pub reasons: ReasonCounts,
    pub excluded: usize,
}

impl PlacementOutcome {
    /// Hadoop's log line for a short placement, or "" when no node was rejected.
    pub fn reasons_detail(&self) -> String {
        if self.reasons.is_empty() {
            String::new()
        } else {
            format!("Not enough replicas was chosen. Reason: {}", self.reasons)
        }
    }
}

/// Hadoop's "could only be written to" message followed by the rejection reasons.
pub fn not_enough_replicas_detailed(
    src: &str,
    min_replication: usize,
    running: usize,
    outcome: &PlacementOutcome,
) -> String {
    let base = super::not_enough_replicas_message(
        src,
        outcome.chosen.len(),
        min_replication,
        running,
        outcome.excluded,
    );
    let detail = outcome.reasons_detail();
    if detail.is_empty() {
        base
    } else {
        format!("{base} {detail}")
    }
}
