//! Small helpers about DataNodes and blocks: addresses, display names, block names.

use rhdfs_proto::hdfs::{DatanodeInfoProto, ExtendedBlockProto};

/// Where to connect for data transfer: `ip:xferPort`, or `hostname:xferPort` with
/// `dfs.client.use.datanode.hostname`.
pub(crate) fn xfer_addr(dn: &DatanodeInfoProto, use_hostname: bool) -> String {
    let host = if use_hostname && !dn.id.host_name.is_empty() {
        &dn.id.host_name
    } else {
        &dn.id.ip_addr
    };
    if host.contains(':') {
        format!("[{host}]:{}", dn.id.xfer_port)
    } else {
        format!("{host}:{}", dn.id.xfer_port)
    }
}

/// `ip:ipcPort` (ClientDatanodeProtocol).
pub(crate) fn ipc_addr(dn: &DatanodeInfoProto, use_hostname: bool) -> String {
    let host = if use_hostname && !dn.id.host_name.is_empty() {
        &dn.id.host_name
    } else {
        &dn.id.ip_addr
    };
    format!("{host}:{}", dn.id.ipc_port)
}

/// Java's DatanodeID equality: transfer address plus UUID.
pub(crate) fn same_node(a: &DatanodeInfoProto, b: &DatanodeInfoProto) -> bool {
    a.id.ip_addr == b.id.ip_addr
        && a.id.xfer_port == b.id.xfer_port
        && a.id.datanode_uuid == b.id.datanode_uuid
}

/// `DatanodeInfoWithStorage[ip:port,DS-...,DISK]` as Java prints pipeline members.
pub(crate) fn display(dn: &DatanodeInfoProto, storage_id: Option<&str>) -> String {
    match storage_id {
        Some(s) if !s.is_empty() => format!(
            "DatanodeInfoWithStorage[{}:{},{s},DISK]",
            dn.id.ip_addr, dn.id.xfer_port
        ),
        _ => format!("{}:{}", dn.id.ip_addr, dn.id.xfer_port),
    }
}

/// A list of nodes as `[a, b]`.
pub(crate) fn display_list(nodes: &[DatanodeInfoProto]) -> String {
    let v: Vec<String> = nodes.iter().map(|d| display(d, None)).collect();
    format!("[{}]", v.join(", "))
}

/// `blk_<id>_<gs>`.
pub(crate) fn block_local_name(b: &ExtendedBlockProto) -> String {
    format!("blk_{}_{}", b.block_id, b.generation_stamp)
}

/// `BP-...:blk_<id>_<gs>` as Java prints an ExtendedBlock.
pub(crate) fn block_name(b: &ExtendedBlockProto) -> String {
    format!("{}:{}", b.pool_id, block_local_name(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        let mut dn = DatanodeInfoProto::default();
        dn.id.ip_addr = "10.0.0.1".into();
        dn.id.host_name = "dn1".into();
        dn.id.xfer_port = 9866;
        dn.id.ipc_port = 9867;
        assert_eq!(xfer_addr(&dn, false), "10.0.0.1:9866");
        assert_eq!(xfer_addr(&dn, true), "dn1:9866");
        assert_eq!(ipc_addr(&dn, false), "10.0.0.1:9867");
        let b = ExtendedBlockProto {
            pool_id: "BP-1".into(),
            block_id: 1073741825,
            generation_stamp: 1001,
            num_bytes: Some(3),
        };
        assert_eq!(block_name(&b), "BP-1:blk_1073741825_1001");
        assert_eq!(
            display(&dn, Some("DS-9")),
            "DatanodeInfoWithStorage[10.0.0.1:9866,DS-9,DISK]"
        );
    }
}
