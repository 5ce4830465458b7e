//! Byte-level checks that the generated types encode the way Hadoop peers expect.

use bytes::Bytes;
use prost::Message;
use rhdfs_proto::common::{
    RpcKindProto, RpcRequestHeaderProto, RpcResponseHeaderProto, RpcSaslProto,
    rpc_response_header_proto::RpcStatusProto, rpc_sasl_proto::SaslState,
};
use rhdfs_proto::datanode::{
    self, BlockCommandProto, DatanodeCommandProto, HeartbeatResponseProto,
    NnhaStatusHeartbeatProto, datanode_command_proto, nnha_status_heartbeat_proto,
};
use rhdfs_proto::hdfs::{
    self, BlockProto, GetFileInfoRequestProto, HdfsFileStatusProto, PacketHeaderProto,
    PipelineAckProto,
};

#[test]
fn get_file_info_request_root() {
    let req = GetFileInfoRequestProto { src: "/".into() };
    assert_eq!(req.encode_to_vec(), [0x0a, 0x01, 0x2f]);
    let back = GetFileInfoRequestProto::decode(&[0x0a, 0x01, 0x2f][..]).unwrap();
    assert_eq!(back.src, "/");
}

#[test]
fn response_header_call_id_is_plain_uint32_varint() {
    let h = RpcResponseHeaderProto {
        call_id: (-33i32) as u32,
        status: RpcStatusProto::Success as i32,
        ..Default::default()
    };
    // callId: 5-byte varint of 0xFFFF_FFDF; status is required, so it is always written.
    assert_eq!(
        h.encode_to_vec(),
        [0x08, 0xdf, 0xff, 0xff, 0xff, 0x0f, 0x10, 0x00]
    );
    assert_eq!(h.retry_count(), -1, "retryCount defaults to -1");
}

#[test]
fn request_header_call_id_is_zigzag() {
    let h = RpcRequestHeaderProto {
        rpc_kind: Some(RpcKindProto::RpcProtocolBuffer as i32),
        rpc_op: Some(0),
        call_id: -3,
        client_id: Bytes::new(),
        retry_count: Some(-1),
        ..Default::default()
    };
    let b = h.encode_to_vec();
    // 08 02 | 10 00 | 18 05 (zigzag(-3) = 5) | 22 00 | 28 01 (zigzag(-1) = 1)
    assert_eq!(
        b,
        [0x08, 0x02, 0x10, 0x00, 0x18, 0x05, 0x22, 0x00, 0x28, 0x01]
    );
    let back = RpcRequestHeaderProto::decode(&b[..]).unwrap();
    assert_eq!(back.call_id, -3);
    assert_eq!(back.retry_count(), -1);
}

#[test]
fn sasl_negotiate() {
    let m = RpcSaslProto {
        state: SaslState::Negotiate as i32,
        ..Default::default()
    };
    assert_eq!(m.encode_to_vec(), [0x10, 0x01]);
}

#[test]
fn packet_header_sizes() {
    let mut h = PacketHeaderProto {
        offset_in_block: 0,
        seqno: 0,
        last_packet_in_block: false,
        data_len: 0,
        sync_block: None,
    };
    // 2 x (tag + fixed64) + (tag + bool) + (tag + fixed32)
    assert_eq!(h.encoded_len(), 25);
    assert_eq!(h.encode_to_vec().len(), 25);
    h.sync_block = Some(false);
    assert_eq!(h.encoded_len(), 27);
}

#[test]
fn pipeline_ack_flags_are_packed_replies_are_not() {
    let ack = PipelineAckProto {
        seqno: 1,
        reply: vec![hdfs::Status::Success as i32, hdfs::Status::Success as i32],
        downstream_ack_time_nanos: None,
        flag: vec![0, 0],
    };
    // seqno sint64 1 -> 08 02; reply unpacked -> 10 00 10 00; flag packed -> 22 02 00 00
    assert_eq!(
        ack.encode_to_vec(),
        [0x08, 0x02, 0x10, 0x00, 0x10, 0x00, 0x22, 0x02, 0x00, 0x00]
    );
}

#[test]
fn proto2_defaults() {
    let st = HdfsFileStatusProto::default();
    assert_eq!(st.children_num(), -1);
    assert_eq!(st.block_replication(), 0);
    let di = hdfs::DatanodeInfoProto::default();
    assert_eq!(
        di.admin_state(),
        hdfs::datanode_info_proto::AdminState::Normal
    );
    let rb = hdfs::OpReadBlockProto::default();
    assert!(rb.send_checksums());
    let sd = hdfs::FsServerDefaultsProto::default();
    assert_eq!(sd.checksum_type(), hdfs::ChecksumTypeProto::ChecksumCrc32);
}

#[test]
fn content_summary_quota_minus_one_travels_as_u64_max() {
    let cs = hdfs::ContentSummaryProto {
        quota: u64::MAX,
        space_quota: u64::MAX,
        ..Default::default()
    };
    let back = hdfs::ContentSummaryProto::decode(cs.encode_to_vec().as_slice()).unwrap();
    assert_eq!(back.quota as i64, -1);
}

#[test]
fn heartbeat_response_with_invalidate_roundtrips() {
    let resp = HeartbeatResponseProto {
        cmds: vec![DatanodeCommandProto {
            cmd_type: datanode_command_proto::Type::BlockCommand as i32,
            blk_cmd: Some(BlockCommandProto {
                action: datanode::block_command_proto::Action::Invalidate as i32,
                block_pool_id: "BP-1".into(),
                blocks: vec![BlockProto {
                    block_id: 1_073_741_825,
                    gen_stamp: 1001,
                    num_bytes: Some(0),
                }],
                ..Default::default()
            }),
            ..Default::default()
        }],
        ha_status: NnhaStatusHeartbeatProto {
            state: nnha_status_heartbeat_proto::State::Active as i32,
            txid: 7,
        },
        ..Default::default()
    };
    let back = HeartbeatResponseProto::decode(resp.encode_to_vec().as_slice()).unwrap();
    assert_eq!(back, resp);
    assert_eq!(back.full_block_report_lease_id(), 0);
}

#[test]
fn block_report_longs_are_packed() {
    let r = datanode::StorageBlockReportProto {
        storage: hdfs::DatanodeStorageProto {
            storage_uuid: "DS-1".into(),
            ..Default::default()
        },
        blocks: vec![1, 2, 3],
        ..Default::default()
    };
    let b = r.encode_to_vec();
    // field 2, wire type 2, 3 bytes of varints
    let needle = [0x12, 0x03, 0x01, 0x02, 0x03];
    assert!(b.windows(needle.len()).any(|w| w == needle), "{b:02x?}");
}

#[test]
fn server_types_reexported_in_datanode_module() {
    let v = datanode::VersionResponseProto::default();
    let _: &hdfs::NamespaceInfoProto = &v.info;
    let _ = datanode::InitReplicaRecoveryResponseProto::default();
    assert_eq!(datanode::ReplicaStateProto::Finalized as i32, 0);
}

#[test]
fn protocol_names() {
    use rhdfs_proto::protocols::*;
    assert_eq!(
        CLIENT_PROTOCOL,
        "org.apache.hadoop.hdfs.protocol.ClientProtocol"
    );
    assert_eq!(
        DATANODE_PROTOCOL,
        "org.apache.hadoop.hdfs.server.protocol.DatanodeProtocol"
    );
    assert_eq!(
        CLIENT_DATANODE_PROTOCOL,
        "org.apache.hadoop.hdfs.protocol.ClientDatanodeProtocol"
    );
    assert_eq!(
        INTER_DATANODE_PROTOCOL,
        "org.apache.hadoop.hdfs.server.protocol.InterDatanodeProtocol"
    );
}
