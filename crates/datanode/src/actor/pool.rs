//! The NameNodes of one block pool as the actors see them together (Hadoop's
//! BPOfferService): which one is active, from each heartbeat's HA status, and which of a
//! NameNode's commands reach the command worker. The rules are `ha_state`'s; this adds the
//! lock, the NameNodes' names and Hadoop's log lines.

use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use rhdfs_proto::datanode::DatanodeCommandProto;
use rhdfs_proto::hdfs::NnhaStatusHeartbeatProto;

use super::ha_state::{ActiveTracker, Change, FromStandby, NnState, action_name, from_standby};

/// The HA view shared by the actors of one block pool.
#[derive(Debug)]
pub struct PoolHa {
    tracker: Mutex<ActiveTracker>,
    /// Each NameNode's name for logs (its address), by actor index.
    names: Vec<String>,
    /// Commands dropped because their NameNode was not the active one.
    ignored: AtomicU64,
    /// Heartbeat responses whose HA status and commands were handled, per NameNode.
    handled: Vec<AtomicU64>,
}

impl PoolHa {
    /// A pool served by NameNodes with these names (index = actor index).
    pub fn new(names: Vec<String>) -> Self {
        let handled = names.iter().map(|_| AtomicU64::new(0)).collect();
        PoolHa {
            tracker: Mutex::new(ActiveTracker::default()),
            names,
            ignored: AtomicU64::new(0),
            handled,
        }
    }

    fn name(&self, nn: usize) -> &str {
        self.names.get(nn).map_or("?", String::as_str)
    }

    /// The name of the NameNode taken as active, if any.
    pub fn active(&self) -> Option<String> {
        let a = self.tracker.lock().active();
        a.map(|nn| self.name(nn).to_string())
    }

    /// True when NameNode `nn` is the one taken as active.
    pub fn is_active(&self, nn: usize) -> bool {
        self.tracker.lock().is_active(nn)
    }

    /// Commands ignored so far because they came from a NameNode not taken as active.
    pub fn ignored_commands(&self) -> u64 {
        self.ignored.load(Ordering::Relaxed)
    }

    /// Heartbeat responses of NameNode `nn` fully handled (HA status taken, commands
    /// queued or dropped).
    pub fn heartbeats_handled(&self, nn: usize) -> u64 {
        self.handled
            .get(nn)
            .map_or(0, |h| h.load(Ordering::Relaxed))
    }

    /// Takes a heartbeat response of NameNode `nn`: its HA status first, then its commands,
    /// which are returned when `nn` is the active one and otherwise filtered as Hadoop's
    /// processCommandFromStandby does.
    pub fn on_heartbeat(
        &self,
        nn: usize,
        status: &NnhaStatusHeartbeatProto,
        cmds: Vec<DatanodeCommandProto>,
    ) -> Vec<DatanodeCommandProto> {
        let state = NnState::from_wire(status.state);
        let (change, active) = {
            let mut t = self.tracker.lock();
            let change = t.on_heartbeat(nn, state, status.txid);
            (change, t.is_active(nn))
        };
        self.log_change(change);
        let out = self.admit(nn, active, cmds);
        if let Some(h) = self.handled.get(nn) {
            h.fetch_add(1, Ordering::Relaxed);
        }
        out
    }

    /// NameNode `nn`'s versionRequest answer: an ACTIVE NameNode is acknowledged when none
    /// is active yet.
    pub fn on_handshake(&self, nn: usize, state: Option<i32>) {
        let state = state.map(NnState::from_wire);
        if self.tracker.lock().on_handshake(nn, state) {
            tracing::info!(
                "Acknowledging ACTIVE Namenode during handshake {}",
                self.name(nn)
            );
        }
    }

    /// Commands of NameNode `nn` outside a heartbeat (a block report's answer): taken as
    /// the NameNode stands now.
    pub fn on_commands(
        &self,
        nn: usize,
        cmds: Vec<DatanodeCommandProto>,
    ) -> Vec<DatanodeCommandProto> {
        let active = self.is_active(nn);
        self.admit(nn, active, cmds)
    }

    /// The NameNode's actor stopped for good: it is active no more (Hadoop's shutdownActor).
    pub fn forget(&self, nn: usize) {
        self.tracker.lock().forget(nn);
    }

    fn admit(
        &self,
        nn: usize,
        active: bool,
        cmds: Vec<DatanodeCommandProto>,
    ) -> Vec<DatanodeCommandProto> {
        if active {
            return cmds;
        }
        let mut out = Vec::with_capacity(cmds.len());
        for cmd in cmds {
            match from_standby(&cmd) {
                FromStandby::Accept => {
                    tracing::info!(
                        "DatanodeCommand action from standby {}: {}",
                        self.name(nn),
                        action_name(&cmd)
                    );
                    out.push(cmd);
                }
                FromStandby::Ignore => {
                    self.ignored.fetch_add(1, Ordering::Relaxed);
                    tracing::info!(
                        "Got a command from standby NN {} - ignoring command: {}",
                        self.name(nn),
                        action_name(&cmd)
                    );
                }
            }
        }
        out
    }

    fn log_change(&self, change: Change) {
        match change {
            Change::None => {}
            Change::Acknowledged { nn, txid } => {
                tracing::info!(
                    "Namenode {} trying to claim ACTIVE state with txid={txid}",
                    self.name(nn)
                );
                tracing::info!("Acknowledging ACTIVE Namenode {}", self.name(nn));
            }
            Change::TakenOver { nn, from, txid } => {
                tracing::info!(
                    "Namenode {} trying to claim ACTIVE state with txid={txid}",
                    self.name(nn)
                );
                tracing::info!(
                    "Namenode {} taking over ACTIVE state from {} at higher txid={txid}",
                    self.name(nn),
                    self.name(from)
                );
            }
            Change::Relinquished { nn, txid } => tracing::info!(
                "Namenode {} relinquishing ACTIVE state with txid={txid}",
                self.name(nn)
            ),
            Change::StaleClaim { nn, txid, last } => tracing::warn!(
                "NN {} tried to claim ACTIVE state at txid={txid} but there was already a more recent claim at txid={last}",
                self.name(nn)
            ),
        }
    }
}
