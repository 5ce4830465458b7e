//! A DataNode's identity: a plain type every layer of the block manager may name.

/// A DataNode's identity and ports, as in DatanodeIDProto.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DatanodeId {
    pub uuid: String,
    pub ip_addr: String,
    pub host_name: String,
    pub xfer_port: u32,
    pub info_port: u32,
    pub info_secure_port: u32,
    pub ipc_port: u32,
}

impl DatanodeId {
    pub fn xfer_addr(&self) -> String {
        format!("{}:{}", self.ip_addr, self.xfer_port)
    }
}
