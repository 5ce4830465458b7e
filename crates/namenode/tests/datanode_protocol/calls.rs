//! DatanodeProtocol over the RpcService interface, and the block list encodings.

use super::support::*;
use bytes::Bytes;
use rhdfs_blockmanager::{
    Block, ReplicaState, ReportKind, ReportedReplica, decode_buffers, decode_longs, encode_buffer,
    encode_longs,
};
use rhdfs_ipc::RpcService;
use rhdfs_namenode::rpc::datanode::commands::transfer_command;
use rhdfs_proto::datanode::{
    BlockReceivedAndDeletedRequestProto, BlockReportContextProto, BlockReportRequestProto,
    BlockReportResponseProto, HeartbeatRequestProto, HeartbeatResponseProto,
    ReceivedDeletedBlockInfoProto, RegisterDatanodeRequestProto, RegisterDatanodeResponseProto,
    StorageBlockReportProto, StorageReceivedDeletedBlocksProto, block_command_proto,
    datanode_command_proto,
};
use rhdfs_proto::hdfs::{
    BlockProto, DatanodeStorageProto, StorageReportProto, VersionRequestProto, VersionResponseProto,
};

fn storage_proto(i: u32) -> DatanodeStorageProto {
    DatanodeStorageProto {
        storage_uuid: storage(i),
        state: None,
        storage_type: Some(1),
    }
}

#[allow(deprecated)]
fn heartbeat_req(i: u32) -> HeartbeatRequestProto {
    HeartbeatRequestProto {
        registration: registration(i),
        reports: vec![StorageReportProto {
            storage_uuid: storage(i),
            capacity: Some(2 * GB),
            remaining: Some(GB),
            dfs_used: Some(10),
            storage: Some(storage_proto(i)),
            ..StorageReportProto::default()
        }],
        xceiver_count: Some(3),
        request_full_block_report_lease: Some(true),
        ..HeartbeatRequestProto::default()
    }
}

#[tokio::test]
async fn version_register_heartbeat_reports() {
    let (bm, _clock) = manager(config());
    let svc = dn_service(&bm);

    let v: VersionResponseProto = call(&svc, "versionRequest", &VersionRequestProto {})
        .await
        .expect("version");
    assert_eq!(v.info.block_pool_id, "BP-1-127.0.0.1-1");
    assert_eq!(v.info.storage_info.namespce_id, 42);
    assert_eq!(v.info.storage_info.cluster_id, "CID-test");
    assert_eq!(v.info.storage_info.layout_version as i32, -67);
    assert_eq!(v.info.software_version, "3.5.0");
    assert_eq!(v.info.state, Some(0));

    // heartbeat before registration: DNA_REGISTER
    let hb: HeartbeatResponseProto = call(&svc, "sendHeartbeat", &heartbeat_req(1))
        .await
        .expect("hb");
    assert_eq!(hb.cmds.len(), 1);
    assert_eq!(
        hb.cmds[0].cmd_type,
        datanode_command_proto::Type::RegisterCommand as i32
    );

    let reg: RegisterDatanodeResponseProto = call(
        &svc,
        "registerDatanode",
        &RegisterDatanodeRequestProto {
            registration: registration(1),
        },
    )
    .await
    .expect("register");
    // the connection's address replaces 0.0.0.0
    assert_eq!(reg.registration.datanode_id.ip_addr, "127.0.0.1");
    assert_eq!(reg.registration.datanode_id.datanode_uuid, uuid(1));

    let hb: HeartbeatResponseProto = call(&svc, "sendHeartbeat", &heartbeat_req(1))
        .await
        .expect("hb");
    assert!(hb.cmds.is_empty());
    assert_eq!(hb.ha_status.state, 0);
    assert_ne!(hb.full_block_report_lease_id, Some(0));
    let info = bm
        .datanode_report(ReportKind::Live)
        .pop()
        .expect("live node");
    assert_eq!(info.id.ip_addr, "127.0.0.1");
    assert_eq!(info.capacity, 2 * GB);
    assert_eq!(info.xceiver_count, 3);

    // a block written to the node, then the file deleted
    bm.add_block_under_construction(Block::new(7, 1001, 0), 1, &[]);
    let ibr = BlockReceivedAndDeletedRequestProto {
        registration: registration(1),
        block_pool_id: "BP-1-127.0.0.1-1".into(),
        #[allow(deprecated)]
        blocks: vec![StorageReceivedDeletedBlocksProto {
            storage_uuid: storage(1),
            blocks: vec![ReceivedDeletedBlockInfoProto {
                block: BlockProto {
                    block_id: 7,
                    gen_stamp: 1001,
                    num_bytes: Some(5),
                },
                delete_hint: None,
                status: 2,
            }],
            storage: Some(storage_proto(1)),
        }],
    };
    let _: rhdfs_proto::datanode::BlockReceivedAndDeletedResponseProto =
        call(&svc, "blockReceivedAndDeleted", &ibr)
            .await
            .expect("ibr");
    bm.commit_block(Block::new(7, 1001, 5)).expect("commit");
    assert!(bm.try_complete_block(7));

    // full report: block 7 plus an unknown block 8 (long-list format), after the
    // storage's first report (which would hold block 8's replica: `orphans`)
    bm.full_report(&uuid(1), &storage(1), 1, &[])
        .expect("first report");
    let replicas = vec![
        ReportedReplica {
            block: Block::new(7, 1001, 5),
            state: ReplicaState::Finalized,
        },
        ReportedReplica {
            block: Block::new(8, 1001, 5),
            state: ReplicaState::Finalized,
        },
    ];
    let br = BlockReportRequestProto {
        registration: registration(1),
        block_pool_id: "BP-1-127.0.0.1-1".into(),
        reports: vec![StorageBlockReportProto {
            storage: storage_proto(1),
            blocks: encode_longs(&replicas),
            number_of_blocks: None,
            blocks_buffers: vec![],
        }],
        context: Some(BlockReportContextProto {
            total_rpcs: 1,
            cur_rpc: 0,
            id: 5,
            lease_id: hb.full_block_report_lease_id,
            sorted: None,
        }),
    };
    let resp: BlockReportResponseProto = call(&svc, "blockReport", &br).await.expect("report");
    assert!(resp.cmd.is_none());
    assert_eq!(bm.fs_stats().pending_deletion, 1);

    bm.remove_blocks_now(&[7]);
    assert_eq!(bm.compute_invalidate_work(), 2);
    let hb: HeartbeatResponseProto = call(&svc, "sendHeartbeat", &heartbeat_req(1))
        .await
        .expect("hb");
    assert_eq!(hb.cmds.len(), 1);
    let cmd = &hb.cmds[0];
    assert_eq!(
        cmd.cmd_type,
        datanode_command_proto::Type::BlockCommand as i32
    );
    let blk = cmd.blk_cmd.as_ref().expect("blkCmd");
    assert_eq!(blk.action, block_command_proto::Action::Invalidate as i32);
    assert_eq!(blk.block_pool_id, "BP-1-127.0.0.1-1");
    let mut ids: Vec<u64> = blk.blocks.iter().map(|b| b.block_id).collect();
    ids.sort();
    assert_eq!(ids, vec![7, 8]);
    assert_eq!(blk.targets.len(), 2);
    assert!(blk.targets.iter().all(|t| t.datanodes.is_empty()));
}

#[tokio::test]
async fn unknown_methods_and_garbage() {
    let (bm, _clock) = manager(config());
    let svc = dn_service(&bm);
    let err = svc
        .call(ctx("cacheReport"), Bytes::new())
        .await
        .unwrap_err();
    assert_eq!(
        err.class_name,
        "org.apache.hadoop.ipc.RpcNoSuchMethodException"
    );
    let err = svc
        .call(ctx("sendHeartbeat"), Bytes::from_static(&[0x0a, 0xff]))
        .await
        .unwrap_err();
    assert_eq!(err.class_name, "java.io.IOException");
    // a report from a node never registered
    let br = BlockReportRequestProto {
        registration: registration(9),
        block_pool_id: "BP".into(),
        reports: vec![StorageBlockReportProto {
            storage: storage_proto(9),
            blocks: vec![0, 0],
            number_of_blocks: None,
            blocks_buffers: vec![],
        }],
        context: None,
    };
    let err = call::<_, BlockReportResponseProto>(&svc, "blockReport", &br)
        .await
        .unwrap_err();
    assert_eq!(
        err.message,
        format!("ProcessReport from dead or unregistered node: {}", uuid(9))
    );
}

fn sample() -> Vec<ReportedReplica> {
    vec![
        ReportedReplica {
            block: Block::new(1 << 30 | 1, 1001, 134217728),
            state: ReplicaState::Finalized,
        },
        ReportedReplica {
            block: Block::new(1 << 30 | 2, 1002, 7),
            state: ReplicaState::Rbw,
        },
        ReportedReplica {
            block: Block::new(1 << 30 | 3, 1003, 0),
            state: ReplicaState::Finalized,
        },
        ReportedReplica {
            block: Block::new(1 << 30 | 4, 1004, 9),
            state: ReplicaState::Rwr,
        },
    ]
}

#[test]
fn long_list_round_trip_and_layout() {
    let longs = encode_longs(&sample());
    assert_eq!(longs.len(), 2 + 3 * 3 + 4 * 2);
    assert_eq!(&longs[..2], &[2, 2]);
    assert_eq!(&longs[8..11], &[u64::MAX; 3]);
    let mut back = decode_longs(&longs).expect("decode");
    back.sort_by_key(|r| r.block.id);
    assert_eq!(back, sample());
    // empty forms
    assert!(decode_longs(&[]).expect("empty").is_empty());
    assert!(decode_longs(&[0, 0]).expect("header only").is_empty());
    assert!(
        decode_longs(&[0, 0, u64::MAX, u64::MAX, u64::MAX])
            .expect("delimiter only")
            .is_empty()
    );
    // malformed input is an error, not a panic
    assert!(decode_longs(&[5]).is_err());
    assert!(decode_longs(&[3, 0, 1, 2]).is_err());
    assert!(decode_longs(&[u64::MAX, u64::MAX]).is_err());
    assert!(decode_longs(&[0, 1, 1, 1, 1, 1, 2, 3, 0]).is_err()); // bad delimiter
    assert!(decode_longs(&[0, 1, u64::MAX, u64::MAX, u64::MAX, 1, 2, 3, 9]).is_err()); // bad state
}

#[test]
fn buffer_round_trip_split_anywhere() {
    let buf = encode_buffer(&sample());
    assert_eq!(
        decode_buffers(4, std::slice::from_ref(&buf)).expect("decode"),
        sample()
    );
    // Hadoop cuts buffers at arbitrary byte positions
    for cut in 1..buf.len() {
        let parts = vec![buf.slice(..cut), buf.slice(cut..)];
        assert_eq!(decode_buffers(4, &parts).expect("decode split"), sample());
    }
    assert!(decode_buffers(5, std::slice::from_ref(&buf)).is_err());
    assert!(decode_buffers(1_000_000, &[Bytes::from_static(&[1, 2])]).is_err());
}

#[test]
fn transfer_command_layout() {
    let (bm, _clock) = manager(config());
    add_nodes(&bm, 3, GB);
    let targets = bm
        .choose_targets("/f", 2, Some("10.0.0.2"), &[], &[], 1)
        .expect("targets");
    let cmd = transfer_command(bm.block_pool_id(), &[(Block::new(9, 1005, 77), targets)]);
    assert_eq!(
        cmd.cmd_type,
        datanode_command_proto::Type::BlockCommand as i32
    );
    let blk = cmd.blk_cmd.expect("blkCmd");
    assert_eq!(blk.action, block_command_proto::Action::Transfer as i32);
    assert_eq!(blk.blocks.len(), 1);
    assert_eq!(
        (
            blk.blocks[0].block_id,
            blk.blocks[0].gen_stamp,
            blk.blocks[0].num_bytes
        ),
        (9, 1005, Some(77))
    );
    assert_eq!(blk.targets.len(), 1);
    assert_eq!(blk.targets[0].datanodes.len(), 2);
    assert_eq!(blk.targets[0].datanodes[0].id.datanode_uuid, uuid(2));
    assert_eq!(
        blk.target_storage_uuids[0].storage_uuids,
        vec![
            storage(2),
            blk.target_storage_uuids[0].storage_uuids[1].clone()
        ]
    );
    assert_eq!(blk.target_storage_types[0].storage_types, vec![1, 1]);
}
