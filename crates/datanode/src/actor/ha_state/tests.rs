//! The active-claim rules and the standby command filter: tables and a property over
//! random heartbeats from three NameNodes.

use super::*;
use proptest::prelude::*;
use rhdfs_proto::datanode::{BlockCommandProto, BlockIdCommandProto};

use NnState::{Active, Observer, Standby};

/// Table: (nn, state, txid) heartbeats in order, with the change and the active NameNode
/// expected after each.
fn run(steps: &[(usize, NnState, u64, Change, Option<usize>)]) {
    let mut t = ActiveTracker::default();
    for (i, &(nn, state, txid, change, active)) in steps.iter().enumerate() {
        assert_eq!(t.on_heartbeat(nn, state, txid), change, "step {i}");
        assert_eq!(t.active(), active, "step {i}");
    }
}

#[test]
fn first_claim_at_txid_zero_is_acknowledged() {
    run(&[(
        0,
        Active,
        0,
        Change::Acknowledged { nn: 0, txid: 0 },
        Some(0),
    )]);
}

#[test]
fn standby_never_becomes_active() {
    run(&[
        (1, Standby, 500, Change::None, None),
        (
            0,
            Active,
            10,
            Change::Acknowledged { nn: 0, txid: 10 },
            Some(0),
        ),
        (1, Standby, 900, Change::None, Some(0)),
        (1, Observer, 900, Change::None, Some(0)),
    ]);
}

#[test]
fn lower_or_equal_txid_claims_are_ignored() {
    run(&[
        (
            0,
            Active,
            10,
            Change::Acknowledged { nn: 0, txid: 10 },
            Some(0),
        ),
        (0, Active, 20, Change::None, Some(0)),
        (
            1,
            Active,
            15,
            Change::StaleClaim {
                nn: 1,
                txid: 15,
                last: 20,
            },
            Some(0),
        ),
        (
            1,
            Active,
            20,
            Change::StaleClaim {
                nn: 1,
                txid: 20,
                last: 20,
            },
            Some(0),
        ),
        (
            1,
            Active,
            21,
            Change::TakenOver {
                nn: 1,
                from: 0,
                txid: 21,
            },
            Some(1),
        ),
        // The old active, not yet told of the failover, claims with its old txid.
        (
            0,
            Active,
            20,
            Change::StaleClaim {
                nn: 0,
                txid: 20,
                last: 21,
            },
            Some(1),
        ),
    ]);
}

#[test]
fn active_reporting_standby_is_demoted_and_the_claim_txid_is_kept() {
    run(&[
        (
            0,
            Active,
            30,
            Change::Acknowledged { nn: 0, txid: 30 },
            Some(0),
        ),
        (
            0,
            Standby,
            31,
            Change::Relinquished { nn: 0, txid: 31 },
            None,
        ),
        // A new active must still be past the last acknowledged claim.
        (
            1,
            Active,
            30,
            Change::StaleClaim {
                nn: 1,
                txid: 30,
                last: 30,
            },
            None,
        ),
        (
            1,
            Active,
            32,
            Change::Acknowledged { nn: 1, txid: 32 },
            Some(1),
        ),
        (
            1,
            Observer,
            40,
            Change::Relinquished { nn: 1, txid: 40 },
            None,
        ),
    ]);
}

#[test]
fn an_active_handshake_is_acknowledged_only_when_none_is_active() {
    let mut t = ActiveTracker::default();
    assert!(!t.on_handshake(0, Some(Standby)));
    assert!(!t.on_handshake(0, None));
    assert_eq!(t.active(), None);
    assert!(t.on_handshake(1, Some(Active)));
    assert!(!t.on_handshake(0, Some(Active)));
    assert_eq!(t.active(), Some(1));
    assert_eq!(t.last_claim_txid(), None);
    // Its first heartbeat sets the claim txid; a STANDBY one demotes it.
    assert_eq!(t.on_heartbeat(1, Active, 9), Change::None);
    assert_eq!(t.last_claim_txid(), Some(9));
    assert_eq!(
        t.on_heartbeat(1, Standby, 9),
        Change::Relinquished { nn: 1, txid: 9 }
    );
}

#[test]
fn forgetting_the_active_leaves_none() {
    let mut t = ActiveTracker::default();
    t.on_heartbeat(1, Active, 5);
    t.forget(0);
    assert_eq!(t.active(), Some(1));
    t.forget(1);
    assert_eq!(t.active(), None);
    assert_eq!(t.last_claim_txid(), Some(5));
}

#[test]
fn wire_states() {
    assert_eq!(NnState::from_wire(0), Active);
    assert_eq!(NnState::from_wire(1), Standby);
    assert_eq!(NnState::from_wire(2), Observer);
    assert_eq!(NnState::from_wire(77), Standby);
}

fn cmd(t: CmdType) -> DatanodeCommandProto {
    DatanodeCommandProto {
        cmd_type: t as i32,
        ..Default::default()
    }
}

fn block_cmd(a: BlockAction) -> DatanodeCommandProto {
    DatanodeCommandProto {
        cmd_type: CmdType::BlockCommand as i32,
        blk_cmd: Some(BlockCommandProto {
            action: a as i32,
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[test]
fn standby_commands_as_hadoop_takes_them() {
    let cache = DatanodeCommandProto {
        cmd_type: CmdType::BlockIdCommand as i32,
        blk_id_cmd: Some(BlockIdCommandProto {
            action: CacheAction::Cache as i32,
            ..Default::default()
        }),
        ..Default::default()
    };
    let table = [
        (
            cmd(CmdType::RegisterCommand),
            FromStandby::Accept,
            "DNA_REGISTER",
        ),
        (
            cmd(CmdType::KeyUpdateCommand),
            FromStandby::Accept,
            "DNA_ACCESSKEYUPDATE",
        ),
        (
            block_cmd(BlockAction::Transfer),
            FromStandby::Ignore,
            "DNA_TRANSFER",
        ),
        (
            block_cmd(BlockAction::Invalidate),
            FromStandby::Ignore,
            "DNA_INVALIDATE",
        ),
        (
            block_cmd(BlockAction::Shutdown),
            FromStandby::Ignore,
            "DNA_SHUTDOWN",
        ),
        (
            cmd(CmdType::BlockRecoveryCommand),
            FromStandby::Ignore,
            "DNA_RECOVERBLOCK",
        ),
        (
            cmd(CmdType::FinalizeCommand),
            FromStandby::Ignore,
            "DNA_FINALIZE",
        ),
        (
            cmd(CmdType::BalancerBandwidthCommand),
            FromStandby::Ignore,
            "DNA_BALANCERBANDWIDTHUPDATE",
        ),
        (cache, FromStandby::Ignore, "DNA_CACHE"),
    ];
    for (c, verdict, name) in table {
        assert_eq!(from_standby(&c), verdict, "{name}");
        assert_eq!(action_name(&c), name);
    }
    let unknown = DatanodeCommandProto {
        cmd_type: 99,
        ..Default::default()
    };
    assert_eq!(from_standby(&unknown), FromStandby::Ignore);
}

fn heartbeat() -> impl Strategy<Value = (usize, NnState, u64)> {
    (
        0usize..3,
        prop_oneof![Just(Active), Just(Standby), Just(Observer)],
        0u64..50,
    )
}

proptest! {
    /// Over any heartbeats from three NameNodes: the acknowledged claim txid never goes
    /// down; a NameNode becomes active only with a txid above every earlier acknowledged
    /// claim; the active one's latest heartbeat claimed ACTIVE; a non-active claim at or
    /// below the last acknowledged claim changes nothing.
    #[test]
    fn claims_only_move_forward(hbs in proptest::collection::vec(heartbeat(), 0..60)) {
        let mut t = ActiveTracker::default();
        let mut latest: [Option<NnState>; 3] = [None; 3];
        for (nn, state, txid) in hbs {
            let before = t.clone();
            let change = t.on_heartbeat(nn, state, txid);
            latest[nn] = Some(state);
            prop_assert!(t.last_claim_txid() >= before.last_claim_txid());
            match change {
                Change::Acknowledged { .. } | Change::TakenOver { .. } => {
                    prop_assert!(before.last_claim_txid().is_none_or(|l| txid > l));
                    prop_assert_eq!(t.active(), Some(nn));
                }
                Change::StaleClaim { .. } => prop_assert_eq!(&t, &before),
                Change::Relinquished { .. } => prop_assert_eq!(t.active(), None),
                Change::None => prop_assert_eq!(t.active(), before.active()),
            }
            if let Some(a) = t.active() {
                prop_assert_eq!(latest[a], Some(Active));
            }
        }
    }
}
