//! READ_BLOCK range/response helpers, BLOCK_CHECKSUM and TRANSFER_BLOCK helpers.

use rhdfs_proto::hdfs::{ExtendedBlockProto, OpBlockChecksumProto, OpTransferBlockProto, Status};
use rhdfs_transfer::ack;
use rhdfs_transfer::block_ops::{self, BlockChecksum};
use rhdfs_transfer::md5crc::block_md5_of_data;
use rhdfs_transfer::op::{self, DEFAULT_MAX_MESSAGE_LEN, Op};
use rhdfs_transfer::{ChecksumKind, DataChecksum, TransferConfig, TransferError};
use tokio::io::BufReader;

fn block() -> ExtendedBlockProto {
    ExtendedBlockProto {
        pool_id: "BP-1".into(),
        block_id: 1 << 30 | 1,
        generation_stamp: 1001,
        num_bytes: Some(1000),
    }
}

#[test]
fn read_range_rounds_to_chunks() {
    let cs = DataChecksum::default();
    assert_eq!(
        block_ops::read_range(&cs, 0, 5000, 5000).unwrap(),
        (0, 5000)
    );
    assert_eq!(
        block_ops::read_range(&cs, 700, 1000, 5000).unwrap(),
        (512, 2048)
    );
    assert_eq!(
        block_ops::read_range(&cs, 4999, 1, 5000).unwrap(),
        (4608, 5000)
    );
    assert_eq!(
        block_ops::read_range(&cs, 5000, 0, 5000).unwrap(),
        (4608, 5000)
    );
    assert!(block_ops::read_range(&cs, 10, 5000, 5000).is_err());
    let r = block_ops::read_block_response(&cs, 512);
    let info = r.read_op_checksum_info.unwrap();
    assert_eq!(info.chunk_offset, 512);
    assert_eq!(info.checksum.r#type, 2);
}

#[tokio::test]
async fn block_checksum_round_trip() {
    let (client, server) = tokio::io::duplex(4096);
    let data = vec![7u8; 1000];
    let (md5, n) = block_md5_of_data(&DataChecksum::default(), &data);
    let server = tokio::spawn(async move {
        let mut s = BufReader::new(server);
        assert_eq!(op::read_op(&mut s).await.unwrap(), Some(Op::BlockChecksum));
        let req: OpBlockChecksumProto = op::read_delimited(&mut s, DEFAULT_MAX_MESSAGE_LEN)
            .await
            .unwrap();
        assert_eq!(req.header.block.num_bytes, Some(1000));
        assert_eq!(
            req.block_checksum_options.unwrap().block_checksum_type,
            Some(1)
        );
        let bc = BlockChecksum {
            bytes_per_crc: 512,
            crc_per_block: n,
            md5,
            kind: ChecksumKind::Crc32c,
        };
        ack::write_response(&mut s, &bc.to_response())
            .await
            .unwrap();
    });
    let mut c = client;
    let got = block_ops::request_block_checksum(&mut c, &block(), None, &TransferConfig::default())
        .await
        .unwrap();
    server.await.unwrap();
    assert_eq!(got.crc_per_block, 2);
    assert_eq!(got.md5, md5);
    assert_eq!(got.kind, ChecksumKind::Crc32c);

    let err = BlockChecksum::from_response(&ack::response_error(Status::ErrorInvalid, "gone"));
    assert!(matches!(err, Err(TransferError::Remote { status: 3, .. })));
}

#[tokio::test]
async fn transfer_block_request() {
    let (client, server) = tokio::io::duplex(4096);
    let server = tokio::spawn(async move {
        let mut s = BufReader::new(server);
        assert_eq!(op::read_op(&mut s).await.unwrap(), Some(Op::TransferBlock));
        let req: OpTransferBlockProto = op::read_delimited(&mut s, DEFAULT_MAX_MESSAGE_LEN)
            .await
            .unwrap();
        assert_eq!(req.header.client_name, "cl");
        assert_eq!(req.target_storage_ids, vec!["DS-9".to_string()]);
        ack::write_response(&mut s, &ack::response_success())
            .await
            .unwrap();
    });
    let op = block_ops::transfer_block_request(&block(), None, "cl", &[], &[1], &["DS-9".into()]);
    let mut c = client;
    block_ops::request_transfer_block(&mut c, &op, &TransferConfig::default())
        .await
        .unwrap();
    server.await.unwrap();
}

#[test]
fn config_from_conf() {
    let mut conf = rhdfs_conf::Configuration::new();
    conf.set("dfs.client.socket-timeout", "10s");
    conf.set("dfs.client-write-packet-size", "4096");
    conf.set("dfs.checksum.type", "CRC32");
    let c = TransferConfig::from_conf(&conf).unwrap();
    assert_eq!(c.socket_timeout, std::time::Duration::from_secs(10));
    assert_eq!(c.heartbeat_interval, std::time::Duration::from_secs(5));
    assert_eq!(c.write_packet_size, 4096);
    assert_eq!(c.checksum, DataChecksum::new(ChecksumKind::Crc32, 512));
    let d = TransferConfig::from_conf(&rhdfs_conf::Configuration::new()).unwrap();
    assert_eq!(d, TransferConfig::default());
}

#[test]
fn failed_node_index_from_errors() {
    use rhdfs_proto::hdfs::op_write_block_proto::BlockConstructionStage;
    use rhdfs_proto::hdfs::{DatanodeIdProto, DatanodeInfoProto};
    use rhdfs_transfer::WriteBlockParams;
    let dn = |port: u32| DatanodeInfoProto {
        id: DatanodeIdProto {
            ip_addr: "10.0.0.1".into(),
            xfer_port: port,
            ..Default::default()
        },
        ..Default::default()
    };
    let p = WriteBlockParams::new(
        block(),
        "c",
        vec![dn(1), dn(2), dn(3)],
        BlockConstructionStage::PipelineSetupCreate,
    );
    let op = p.to_proto();
    assert_eq!(op.targets.len(), 2);
    assert_eq!(op.targets[0].id.xfer_port, 2);
    assert_eq!(op.pipeline_size, 3);
    assert_eq!(op.target_storage_types, vec![1, 1]);
    let remote = |link: &str| TransferError::Remote {
        status: 1,
        message: String::new(),
        first_bad_link: link.into(),
    };
    assert_eq!(p.failed_node_index(&remote("10.0.0.1:3")), Some(2));
    assert_eq!(p.failed_node_index(&remote("")), Some(0));
    assert_eq!(p.failed_node_index(&remote("10.9.9.9:1")), None);
    let pipe = TransferError::Pipeline {
        seqno: 4,
        index: 1,
        status: 1,
    };
    assert_eq!(p.failed_node_index(&pipe), Some(1));
    assert_eq!(
        p.failed_node_index(&TransferError::Timeout("x".into())),
        None
    );
}
