//! Hadoop wire messages, generated (prost) from this crate's own `.proto` files in `proto/`.
//!
//! Message and enum names are exactly Hadoop's; fields are snake_case as usual for prost.
//! - [`common`]: package `hadoop.common` (RPC headers, connection context, tokens, HA state)
//! - [`hdfs`]: package `hadoop.hdfs` (shared HDFS types, ClientProtocol, data transfer,
//!   ClientDatanodeProtocol, ACLs, xattrs, HdfsServer types, InterDatanodeProtocol)
//! - [`datanode`]: package `hadoop.hdfs.datanode` (DatanodeProtocol), which also re-exports
//!   the HdfsServer and InterDatanodeProtocol messages that live in `hadoop.hdfs`
//! - [`raft`]: package `rhdfs.raft`, rhdfs's own Raft protocol between HA NameNodes
//!
//! prost conventions worth knowing:
//! - type names are UpperCamelCase-normalised: `DatanodeIDProto` is `DatanodeIdProto`,
//!   `NNHAStatusHeartbeatProto` is `NnhaStatusHeartbeatProto`, `RPCTraceInfoProto` is
//!   `RpcTraceInfoProto`, `HAServiceStateProto` is `HaServiceStateProto`,
//!   `GetEZForPathRequestProto` is `GetEzForPathRequestProto`;
//! - nested types live in a snake_case module named after the message
//!   (`datanode_info_proto::AdminState`, `datanode_command_proto::Type`);
//! - `required` fields are plain values, `optional` scalars are `Option<_>` with a getter that
//!   applies the proto2 default (e.g. `RpcRequestHeaderProto::retry_count()` is -1 when unset);
//! - enum-typed fields are `i32` (use `Enum::X as i32`, `Enum::try_from(v)`);
//! - `bytes` fields are `bytes::Bytes`.

/// Package `hadoop.common`.
#[allow(clippy::all, clippy::pedantic, missing_docs)]
pub mod common {
    include!(concat!(env!("OUT_DIR"), "/hadoop.common.rs"));
}

/// Package `hadoop.hdfs`.
#[allow(clippy::all, clippy::pedantic, missing_docs)]
pub mod hdfs {
    include!(concat!(env!("OUT_DIR"), "/hadoop.hdfs.rs"));

    /// Package `hadoop.hdfs.datanode` (DatanodeProtocol messages), also at `rhdfs_proto::datanode`.
    ///
    /// Nested here so prost's relative paths (`super::X` = `hadoop.hdfs.X`) resolve.
    ///
    /// HdfsServer types and InterDatanodeProtocol messages are in package `hadoop.hdfs` (as in
    /// Hadoop) and therefore defined in [`hdfs`](crate::hdfs); they are re-exported here.
    #[allow(clippy::all, clippy::pedantic, missing_docs)]
    pub mod datanode {
        include!(concat!(env!("OUT_DIR"), "/hadoop.hdfs.datanode.rs"));

        pub use super::{
            BlockKeyProto, BlockWithLocationsProto, BlocksWithLocationsProto,
            CheckpointCommandProto, CheckpointSignatureProto, ExportedBlockKeysProto,
            InitReplicaRecoveryRequestProto, InitReplicaRecoveryResponseProto,
            NamenodeCommandProto, NamenodeRegistrationProto, NamespaceInfoProto,
            NnhaStatusHeartbeatProto, RecoveringBlockProto, RemoteEditLogManifestProto,
            RemoteEditLogProto, ReplicaStateProto, StorageInfoProto,
            UpdateReplicaUnderRecoveryRequestProto, UpdateReplicaUnderRecoveryResponseProto,
            VersionRequestProto, VersionResponseProto, namenode_command_proto,
            namenode_registration_proto, nnha_status_heartbeat_proto,
        };
    }
}

pub use hdfs::datanode;

/// Package `rhdfs.raft`: rhdfs's own Raft protocol between the NameNodes of an HA
/// nameservice (`protocols::RAFT_PROTOCOL`), not a Hadoop one.
#[allow(clippy::all, clippy::pedantic, missing_docs)]
pub mod raft {
    include!(concat!(env!("OUT_DIR"), "/rhdfs.raft.rs"));
}

pub mod client_methods;

/// Protocol names used as `declaringClassProtocolName` in `RequestHeaderProto` and as
/// `protocol` in `IpcConnectionContextProto`.
pub mod protocols {
    /// Client to NameNode.
    pub const CLIENT_PROTOCOL: &str = "org.apache.hadoop.hdfs.protocol.ClientProtocol";
    /// DataNode to NameNode.
    pub const DATANODE_PROTOCOL: &str = "org.apache.hadoop.hdfs.server.protocol.DatanodeProtocol";
    /// Client to DataNode (IPC port).
    pub const CLIENT_DATANODE_PROTOCOL: &str =
        "org.apache.hadoop.hdfs.protocol.ClientDatanodeProtocol";
    /// DataNode to DataNode (block recovery).
    pub const INTER_DATANODE_PROTOCOL: &str =
        "org.apache.hadoop.hdfs.server.protocol.InterDatanodeProtocol";
    /// HA administration (haadmin, ZKFC) to a NameNode, on its RPC port.
    pub const HA_SERVICE_PROTOCOL: &str = "org.apache.hadoop.ha.HAServiceProtocol";
    /// Raft between the NameNodes of an HA nameservice (rhdfs's own, messages in [`crate::raft`]),
    /// on their RPC ports.
    pub const RAFT_PROTOCOL: &str = "org.apache.rhdfs.raft.RaftProtocol";
}

/// A `StorageTypeProto` value's name as Hadoop prints it (`DISK`, `SSD`, `ARCHIVE`,
/// `RAM_DISK`, `PROVIDED`, `NVDIMM`); `DISK` for a value it does not know.
pub fn storage_type_name(v: i32) -> &'static str {
    hdfs::StorageTypeProto::try_from(v).map_or("DISK", |t| t.as_str_name())
}
