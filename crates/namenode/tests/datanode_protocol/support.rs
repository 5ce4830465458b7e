//! The block manager set-up of `rhdfs_blockmanager::testing`, and the NameNode's
//! DatanodeProtocol handler over it (an empty namespace around the block manager).

use std::sync::Arc;

use bytes::Bytes;
use prost::Message;
use rhdfs_blockmanager::{BlockManager, DatanodeId};
use rhdfs_conf::clock::system_clock;
use rhdfs_ipc::{CallContext, RpcError, RpcService};
use rhdfs_namenode::namespace::{Namespace, NamespaceConfig, Now};
use rhdfs_namenode::namesystem::{Namesystem, NamesystemSettings};
use rhdfs_namenode::rpc::datanode::DatanodeProtocolService;
use rhdfs_proto::datanode::DatanodeRegistrationProto;
use rhdfs_proto::hdfs::{DatanodeIdProto, ExportedBlockKeysProto, StorageInfoProto};
use rhdfs_proto::protocols::DATANODE_PROTOCOL;

pub use rhdfs_blockmanager::testing::*;

/// The DatanodeProtocol handler of a NameNode whose block manager is `bm`.
pub fn dn_service(bm: &Arc<BlockManager>) -> DatanodeProtocolService {
    let clock = system_clock();
    let ns = Namespace::new(
        NamespaceConfig {
            superuser: "root".into(),
            ..NamespaceConfig::default()
        },
        Now {
            wall_ms: clock.now_millis(),
            mono: clock.monotonic(),
        },
    );
    let fs = Namesystem::new(
        ns,
        bm.clone(),
        clock,
        NamesystemSettings::default(),
        Arc::new(|_user: &str| Vec::new()),
    );
    DatanodeProtocolService::new(fs)
}

/// The context of a DataNode's call of `method`.
pub fn ctx(method: &str) -> CallContext {
    CallContext {
        user: "dn".into(),
        protocol: DATANODE_PROTOCOL.into(),
        method: method.into(),
        client_id: Bytes::from_static(&[0; 16]),
        call_id: 0,
        retry_count: 0,
        peer: "127.0.0.1:50000".parse().expect("addr"),
        forwarded: None,
    }
}

/// Calls `method` with `req` through the service's RpcService interface.
pub async fn call<Req: Message, Resp: Message + Default>(
    svc: &DatanodeProtocolService,
    method: &str,
    req: &Req,
) -> Result<Resp, RpcError> {
    let body = svc
        .call(ctx(method), Bytes::from(req.encode_to_vec()))
        .await?;
    Ok(Resp::decode(body).expect("response decodes"))
}

/// The registration DataNode `id` sends.
pub fn registration_of(id: DatanodeId) -> DatanodeRegistrationProto {
    DatanodeRegistrationProto {
        datanode_id: DatanodeIdProto {
            ip_addr: id.ip_addr,
            host_name: id.host_name,
            datanode_uuid: id.uuid,
            xfer_port: id.xfer_port,
            info_port: id.info_port,
            ipc_port: id.ipc_port,
            info_secure_port: None,
        },
        storage_info: StorageInfoProto {
            layout_version: (-57i32) as u32,
            namespce_id: 42,
            cluster_id: "CID-test".into(),
            c_time: 0,
        },
        keys: ExportedBlockKeysProto::default(),
        software_version: "3.5.0".into(),
    }
}

/// The registration of DataNode `i` claiming no address (the NameNode takes the
/// connection's) and transfer port 9000 + i.
pub fn registration(i: u32) -> DatanodeRegistrationProto {
    registration_of(DatanodeId {
        ip_addr: "0.0.0.0".into(),
        xfer_port: 9000 + i,
        ..dn_id(i)
    })
}
