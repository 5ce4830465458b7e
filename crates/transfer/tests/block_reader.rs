//! BlockReader against the fake DataNode.

use crate::support;

use std::time::Duration;

use rhdfs_proto::hdfs::Status;
use rhdfs_transfer::{BlockReader, ReadBlockParams, TransferError, read_block};
use support::{Behaviour, FakeDn, block, cfg, pattern};

#[tokio::test]
async fn read_ranges_and_reuse_connection() {
    let dn = FakeDn::new(Behaviour {
        read_packet_chunks: 3,
        ..Default::default()
    });
    let data = pattern(5000);
    dn.blocks.lock().unwrap().insert(7, data.clone());
    let port = dn.start().await;
    let addr = format!("127.0.0.1:{port}");

    let mut r = BlockReader::connect(
        &addr,
        &ReadBlockParams::new(block(7), "c1", 0, 5000),
        &cfg(),
    )
    .await
    .unwrap();
    let all = r.read_all().await.unwrap();
    assert_eq!(&all[..], &data[..]);
    assert!(r.is_done());
    let stream = r.into_inner();

    // Unaligned range on the same connection.
    let (part, stream) = read_block(
        stream,
        &ReadBlockParams::new(block(7), "c1", 700, 1000),
        &cfg(),
    )
    .await
    .unwrap();
    assert_eq!(&part[..], &data[700..1700]);
    // Tail of the block with a short last chunk.
    let (tail, _stream) = read_block(
        stream,
        &ReadBlockParams::new(block(7), "c1", 4999, 1),
        &cfg(),
    )
    .await
    .unwrap();
    assert_eq!(&tail[..], &data[4999..]);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let log = dn.log.lock().unwrap();
    assert_eq!(log.ops, 3);
    assert_eq!(log.read_statuses, vec![Some(Status::ChecksumOk); 3]);
}

#[tokio::test]
async fn read_checksum_mismatch() {
    let dn = FakeDn::new(Behaviour {
        corrupt_at: Some(1300),
        read_packet_chunks: 2,
        ..Default::default()
    });
    dn.blocks.lock().unwrap().insert(8, pattern(3000));
    let port = dn.start().await;
    let addr = format!("127.0.0.1:{port}");
    let mut r = BlockReader::connect(&addr, &ReadBlockParams::new(block(8), "c", 0, 3000), &cfg())
        .await
        .unwrap();
    let err = r.read_all().await.unwrap_err();
    match err {
        TransferError::Checksum { chunk, offset } => {
            assert_eq!(chunk, 0);
            assert_eq!(offset, 1024);
        }
        other => panic!("{other:?}"),
    }
    drop(r);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        dn.log.lock().unwrap().read_statuses,
        vec![Some(Status::ErrorChecksum)]
    );
}

#[tokio::test]
async fn read_error_response() {
    let dn = FakeDn::new(Behaviour {
        read_error: Some("Replica not found".into()),
        ..Default::default()
    });
    let port = dn.start().await;
    let addr = format!("127.0.0.1:{port}");
    let err = BlockReader::connect(&addr, &ReadBlockParams::new(block(9), "c", 0, 10), &cfg())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, TransferError::Remote { status: 1, message, .. } if message == "Replica not found"),
        "{err:?}"
    );
}

#[tokio::test]
async fn read_short_replica_is_an_error() {
    let dn = FakeDn::new(Behaviour::default());
    dn.blocks.lock().unwrap().insert(10, pattern(100));
    let port = dn.start().await;
    let addr = format!("127.0.0.1:{port}");
    let mut r = BlockReader::connect(&addr, &ReadBlockParams::new(block(10), "c", 0, 200), &cfg())
        .await
        .unwrap();
    assert!(matches!(
        r.read_all().await,
        Err(TransferError::Protocol(_))
    ));
}
