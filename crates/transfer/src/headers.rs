//! Builders for the common op headers and small DatanodeInfo helpers.

use rhdfs_proto::common::TokenProto;
use rhdfs_proto::hdfs::{
    BaseHeaderProto, ClientOperationHeaderProto, DatanodeInfoProto, ExtendedBlockProto,
};

/// A token with four empty fields: what clients send with security off.
pub fn empty_token() -> TokenProto {
    TokenProto::default()
}

/// `BaseHeaderProto{block, token}`; a missing token is sent as [`empty_token`].
pub fn base_header(block: &ExtendedBlockProto, token: Option<&TokenProto>) -> BaseHeaderProto {
    BaseHeaderProto {
        block: block.clone(),
        token: Some(token.cloned().unwrap_or_else(empty_token)),
        trace_info: None,
    }
}

/// `ClientOperationHeaderProto{baseHeader, clientName}`.
pub fn client_header(
    block: &ExtendedBlockProto,
    token: Option<&TokenProto>,
    client_name: &str,
) -> ClientOperationHeaderProto {
    ClientOperationHeaderProto {
        base_header: base_header(block, token),
        client_name: client_name.to_string(),
    }
}

/// "ipAddr:xferPort" of a DataNode: the address to connect to, and the firstBadLink format.
pub fn xfer_addr(dn: &DatanodeInfoProto) -> String {
    format!("{}:{}", dn.id.ip_addr, dn.id.xfer_port)
}
