//! versionRequest: the namespace a DataNode joins (ids, layout, capabilities).

use bytes::Bytes;
use rhdfs_blockmanager::BlockManager;
use rhdfs_ipc::{RpcError, decode_request, encode_response};
use rhdfs_proto::hdfs::{
    NamespaceInfoProto, StorageInfoProto, VersionRequestProto, VersionResponseProto,
};

use super::DatanodeProtocolService;
use crate::ha::Role;
use crate::rpc::ha_state::datanode_ha_state;

/// Layout version this NameNode announces (Hadoop 3.4/3.5 NameNodeLayoutVersion: -67).
pub const NAMENODE_LAYOUT_VERSION: i32 = -67;
/// Software version announced to DataNodes.
pub const SOFTWARE_VERSION: &str = "3.5.0";
/// NamespaceInfo capability bit: the NameNode accepts `blocksBuffers` block reports.
pub const CAPABILITY_STORAGE_BLOCK_REPORT_BUFFERS: u64 = 1;

/// The NamespaceInfo a DataNode receives from versionRequest, with this NameNode's HA
/// state (a DataNode acknowledges an ACTIVE one during its handshake).
pub fn namespace_info(bm: &BlockManager, role: Role) -> NamespaceInfoProto {
    let ns = bm.namespace_info();
    NamespaceInfoProto {
        build_version: format!("rhdfs-{}", env!("CARGO_PKG_VERSION")),
        unused: 0,
        block_pool_id: ns.block_pool_id.clone(),
        storage_info: StorageInfoProto {
            layout_version: NAMENODE_LAYOUT_VERSION as u32,
            namespce_id: ns.namespace_id,
            cluster_id: ns.cluster_id.clone(),
            c_time: ns.ctime,
        },
        software_version: SOFTWARE_VERSION.to_string(),
        capabilities: Some(CAPABILITY_STORAGE_BLOCK_REPORT_BUFFERS),
        state: Some(datanode_ha_state(role) as i32),
    }
}

impl DatanodeProtocolService {
    pub(super) fn version_request(&self, body: &Bytes) -> Result<Bytes, RpcError> {
        let _: VersionRequestProto = decode_request(body)?;
        Ok(encode_response(&VersionResponseProto {
            info: namespace_info(self.bm(), self.fs.ha_role().get()),
        }))
    }
}
