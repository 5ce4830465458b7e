//! Pipeline ack and BlockOpResponseProto helper tests.

use prost::Message;
use rhdfs_proto::hdfs::{PipelineAckProto, Status};
use rhdfs_transfer::TransferError;
use rhdfs_transfer::ack::{self, Ecn, PipelineAck, SlowStatus};

#[test]
fn ack_wire_bytes() {
    let a = PipelineAck::success(5, 2);
    let bytes = a.to_proto().encode_to_vec();
    // seqno zigzag(5)=10; reply unpacked; downstreamAckTimeNanos 0; flag packed.
    assert_eq!(
        bytes,
        vec![
            0x08, 0x0a, 0x10, 0x00, 0x10, 0x00, 0x18, 0x00, 0x22, 0x02, 0x00, 0x00
        ]
    );
    let hb = PipelineAck::success(-1, 1).to_proto().encode_to_vec();
    assert_eq!(&hb[..2], &[0x08, 0x01]);
}

#[tokio::test]
async fn ack_round_trip() {
    let mut a = PipelineAck::new(
        123_456_789_012,
        vec![Status::Success, Status::ErrorChecksum],
    );
    a.downstream_ack_time_nanos = 42;
    let mut wire = Vec::new();
    ack::write_ack(&mut wire, &a).await.unwrap();
    let back = ack::read_ack(&mut wire.as_slice()).await.unwrap();
    assert_eq!(back, a);
    assert_eq!(back.first_failure(), Some((1, Status::ErrorChecksum)));
    match back.check() {
        Err(TransferError::Pipeline {
            seqno,
            index,
            status,
        }) => {
            assert_eq!(seqno, 123_456_789_012);
            assert_eq!(index, 1);
            assert_eq!(status, Status::ErrorChecksum as i32);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn flags_and_aggregation() {
    let f = ack::make_flag(Status::Error, Ecn::Congested, SlowStatus::Slow);
    assert_eq!(f, 1 | 3 << 5 | 2 << 7);
    assert_eq!(ack::flag_status(f), 1);
    assert_eq!(ack::flag_ecn(f), Ecn::Congested);
    assert_eq!(ack::flag_slow(f), SlowStatus::Slow);

    let last = PipelineAck::success(9, 1);
    let mid = PipelineAck::with_downstream(9, Status::Success, Some(&last), 1000);
    assert_eq!(mid.replies, vec![Status::Success, Status::Success]);
    assert_eq!(mid.flags, vec![0, 0]);
    assert_eq!(mid.downstream_ack_time_nanos, 1000);
    assert!(mid.check().is_ok());

    let failed = PipelineAck::mirror_failed(9, Status::Success);
    assert_eq!(failed.first_failure(), Some((1, Status::Error)));

    // Flag wins over reply, as in the Java client.
    let p = PipelineAckProto {
        seqno: 1,
        reply: vec![0, 0],
        downstream_ack_time_nanos: None,
        flag: vec![0, 1],
    };
    let a = PipelineAck::from_proto(p);
    assert_eq!(a.first_failure(), Some((1, Status::Error)));
    // No flags: replies are used.
    let p = PipelineAckProto {
        seqno: 1,
        reply: vec![1, 0],
        downstream_ack_time_nanos: None,
        flag: vec![],
    };
    assert_eq!(
        PipelineAck::from_proto(p).first_failure(),
        Some((0, Status::Error))
    );
    // Both fail: the highest index is blamed.
    let both = PipelineAck::new(2, vec![Status::Error, Status::Error, Status::Success]);
    assert_eq!(both.first_failure(), Some((1, Status::Error)));
}

#[tokio::test]
async fn block_op_responses() {
    assert!(ack::check_response(&ack::response_success()).is_ok());
    let e = ack::response_error(Status::ErrorInvalid, "no such block");
    match ack::check_response(&e) {
        Err(TransferError::Remote {
            status, message, ..
        }) => {
            assert_eq!(status, Status::ErrorInvalid as i32);
            assert_eq!(message, "no such block");
        }
        other => panic!("{other:?}"),
    }
    let c = ack::response_connect_ack(Status::Error, "127.0.0.1:9866");
    let mut wire = Vec::new();
    ack::write_response(&mut wire, &c).await.unwrap();
    let back = ack::read_response(&mut wire.as_slice()).await.unwrap();
    match ack::check_response(&back) {
        Err(TransferError::Remote { first_bad_link, .. }) => {
            assert_eq!(first_bad_link, "127.0.0.1:9866")
        }
        other => panic!("{other:?}"),
    }
    let mut wire = Vec::new();
    ack::write_client_read_status(&mut wire, Status::ChecksumOk)
        .await
        .unwrap();
    assert_eq!(wire, vec![2, 0x08, 6]);
    assert_eq!(
        ack::read_client_read_status(&mut wire.as_slice())
            .await
            .unwrap(),
        Some(Status::ChecksumOk)
    );
    assert_eq!(
        ack::read_client_read_status(&mut &[][..]).await.unwrap(),
        None
    );
}
