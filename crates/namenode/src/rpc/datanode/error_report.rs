//! errorReport: a DataNode reports a failure (a failed volume, a fatal disk error).

use bytes::Bytes;
use rhdfs_ipc::{RpcError, decode_request, encode_response};
use rhdfs_proto::datanode::{ErrorReportRequestProto, ErrorReportResponseProto};

use super::DatanodeProtocolService;

impl DatanodeProtocolService {
    pub(super) fn error_report(&self, body: &Bytes) -> Result<Bytes, RpcError> {
        let req: ErrorReportRequestProto = decode_request(body)?;
        let id = &req.registartion.datanode_id;
        let name = format!("{}:{}", id.ip_addr, id.xfer_port);
        self.bm()
            .error_report(&id.datanode_uuid, &name, req.error_code, &req.msg);
        Ok(encode_response(&ErrorReportResponseProto {}))
    }
}
