//! Which NameNode of a block pool this DataNode takes as the active one, and which commands
//! it takes from the others — the rules of Hadoop's BPOfferService, as plain values so they
//! are tested without an actor.
//!
//! Every heartbeat response carries the NameNode's HA state and its last transaction id.
//! A NameNode that claims ACTIVE becomes the active one when its txid is above the highest
//! txid any acknowledged active claim has carried (a claim at or below it is a stale NameNode
//! that has not learnt of a failover yet, and is refused); the active one that reports
//! STANDBY (or OBSERVER) stops being active, leaving none until another claims. Commands run
//! only from the active NameNode; from any other only DNA_REGISTER and the key update are
//! taken, the rest are ignored.

use rhdfs_proto::datanode::DatanodeCommandProto;
use rhdfs_proto::datanode::block_command_proto::Action as BlockAction;
use rhdfs_proto::datanode::block_id_command_proto::Action as CacheAction;
use rhdfs_proto::datanode::datanode_command_proto::Type as CmdType;

/// The HA state a NameNode reports in a heartbeat response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NnState {
    Active,
    Standby,
    Observer,
}

impl NnState {
    /// The wire value of `NNHAStatusHeartbeatProto.state`; an unknown value is not active.
    pub fn from_wire(v: i32) -> NnState {
        use rhdfs_proto::hdfs::nnha_status_heartbeat_proto::State;
        match State::try_from(v) {
            Ok(State::Active) => NnState::Active,
            Ok(State::Observer) => NnState::Observer,
            Ok(State::Standby) | Err(_) => NnState::Standby,
        }
    }
}

/// What one heartbeat's HA status changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Nothing: the active one confirmed, or a non-active one stayed so.
    None,
    /// `nn` is the active one, where none was.
    Acknowledged { nn: usize, txid: u64 },
    /// `nn` took over from `from` at a higher txid.
    TakenOver { nn: usize, from: usize, txid: u64 },
    /// The active one reported another state; none is active now.
    Relinquished { nn: usize, txid: u64 },
    /// `nn` claimed ACTIVE with a txid not above the last acknowledged claim: ignored.
    StaleClaim { nn: usize, txid: u64, last: u64 },
}

/// The active NameNode of one block pool (by its index among the pool's NameNodes) and the
/// txid of the last claim that was acknowledged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ActiveTracker {
    active: Option<usize>,
    /// None until a claim was acknowledged (Hadoop starts at -1, so txid 0 may claim).
    last_claim: Option<u64>,
}

impl ActiveTracker {
    /// The NameNode taken as active, if any.
    pub fn active(&self) -> Option<usize> {
        self.active
    }

    /// True when `nn` is the NameNode taken as active.
    pub fn is_active(&self, nn: usize) -> bool {
        self.active == Some(nn)
    }

    /// The txid of the most recent acknowledged active claim.
    pub fn last_claim_txid(&self) -> Option<u64> {
        self.last_claim
    }

    /// Takes NameNode `nn`'s heartbeat status into account.
    pub fn on_heartbeat(&mut self, nn: usize, state: NnState, txid: u64) -> Change {
        let claims = state == NnState::Active;
        let change = match (claims, self.is_active(nn)) {
            (true, false) => {
                if self.last_claim.is_some_and(|last| txid <= last) {
                    return Change::StaleClaim {
                        nn,
                        txid,
                        last: self.last_claim.unwrap_or_default(),
                    };
                }
                let before = self.active.replace(nn);
                match before {
                    None => Change::Acknowledged { nn, txid },
                    Some(from) => Change::TakenOver { nn, from, txid },
                }
            }
            (false, true) => {
                self.active = None;
                Change::Relinquished { nn, txid }
            }
            _ => Change::None,
        };
        if self.is_active(nn) {
            // The active one's txid only grows; keep the highest seen.
            self.last_claim = Some(self.last_claim.map_or(txid, |l| l.max(txid)));
        }
        change
    }

    /// NameNode `nn`'s versionRequest answer said it is in `state`: an ACTIVE one is taken
    /// as active when none is (Hadoop's verifyAndSetNamespaceInfo), so commands are obeyed
    /// from the first heartbeat; the claim txid waits for the heartbeats. True when `nn` was
    /// acknowledged.
    pub fn on_handshake(&mut self, nn: usize, state: Option<NnState>) -> bool {
        if state == Some(NnState::Active) && self.active.is_none() {
            self.active = Some(nn);
            return true;
        }
        false
    }

    /// The NameNode `nn` is gone for good (its actor stopped): it is no longer active.
    pub fn forget(&mut self, nn: usize) {
        if self.is_active(nn) {
            self.active = None;
        }
    }
}

/// What to do with a command from a NameNode not taken as active.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FromStandby {
    /// Taken as from the active one (DNA_REGISTER, key update, nothing-to-do commands).
    Accept,
    /// A command only the active NameNode may give: ignored, logged.
    Ignore,
}

/// Hadoop's name of a command's action (DNA_*), for logs.
pub fn action_name(cmd: &DatanodeCommandProto) -> &'static str {
    match CmdType::try_from(cmd.cmd_type) {
        Ok(CmdType::BlockCommand) => match cmd
            .blk_cmd
            .as_ref()
            .and_then(|b| BlockAction::try_from(b.action).ok())
        {
            Some(BlockAction::Transfer) => "DNA_TRANSFER",
            Some(BlockAction::Invalidate) => "DNA_INVALIDATE",
            Some(BlockAction::Shutdown) => "DNA_SHUTDOWN",
            None => "DNA_UNKNOWN",
        },
        Ok(CmdType::BlockIdCommand) => match cmd
            .blk_id_cmd
            .as_ref()
            .and_then(|b| CacheAction::try_from(b.action).ok())
        {
            Some(CacheAction::Cache) => "DNA_CACHE",
            Some(CacheAction::Uncache) => "DNA_UNCACHE",
            None => "DNA_UNKNOWN",
        },
        Ok(CmdType::BalancerBandwidthCommand) => "DNA_BALANCERBANDWIDTHUPDATE",
        Ok(CmdType::BlockRecoveryCommand) => "DNA_RECOVERBLOCK",
        Ok(CmdType::FinalizeCommand) => "DNA_FINALIZE",
        Ok(CmdType::KeyUpdateCommand) => "DNA_ACCESSKEYUPDATE",
        Ok(CmdType::RegisterCommand) => "DNA_REGISTER",
        Ok(CmdType::BlockEcReconstructionCommand) => "DNA_ERASURE_CODING_RECONSTRUCTION",
        Ok(CmdType::BlockStorageMovementCommand) => "DNA_BLOCK_STORAGE_MOVEMENT",
        Ok(CmdType::DropSpsWorkCommand) => "DNA_DROP_SPS_WORK_COMMAND",
        Ok(CmdType::NullDatanodeCommand) => "DNA_UNKNOWN",
        Ok(CmdType::UnusedUpgradeCommand) | Err(_) => "DNA_UNKNOWN",
    }
}

/// Hadoop's processCommandFromStandby: only re-registration and block keys are taken from a
/// NameNode not believed active (a null command has nothing to take).
pub fn from_standby(cmd: &DatanodeCommandProto) -> FromStandby {
    match CmdType::try_from(cmd.cmd_type) {
        Ok(CmdType::RegisterCommand | CmdType::KeyUpdateCommand | CmdType::NullDatanodeCommand) => {
            FromStandby::Accept
        }
        _ => FromStandby::Ignore,
    }
}

#[cfg(test)]
mod tests;
