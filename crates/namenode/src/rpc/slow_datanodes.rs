//! getSlowDatanodeReport (Hadoop's HDFS-16521): the DataNodes their peers report slow, the
//! most reported first; empty unless `dfs.datanode.peer.stats.enabled`. Like Hadoop it needs
//! no superuser.

use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, decode_request, encode_response};
use rhdfs_proto::hdfs::{GetSlowDatanodeReportRequestProto, GetSlowDatanodeReportResponseProto};

use super::ClientProtocolService;
use super::datanode_info::datanode_info_to_proto;

impl ClientProtocolService {
    pub(super) async fn get_slow_datanode_report(
        &self,
        _ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let _req: GetSlowDatanodeReportRequestProto = decode_request(body)?;
        let datanode_info_proto = self
            .fs
            .block_manager()
            .slow_datanode_report()
            .iter()
            .map(datanode_info_to_proto)
            .collect();
        Ok(encode_response(&GetSlowDatanodeReportResponseProto {
            datanode_info_proto,
        }))
    }
}
