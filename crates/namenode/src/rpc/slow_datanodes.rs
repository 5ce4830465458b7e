//! getSlowDatanodeReport (Hadoop's HDFS-16521): the DataNodes their peers report slow, the
//! most reported first; empty unless `dfs.datanode.peer.stats.enabled` (on by default in
//! rhdfs). Like Hadoop it needs no superuser. rhdfs adds (field 1001, skipped by Hadoop's
//! clients) each node's reporters, latencies, whether it is avoided and when it is eligible
//! again, which `dfsadmin -report -slownodes` prints.

use bytes::Bytes;
use rhdfs_blockmanager::slowpeers::SlowNodeDetail;
use rhdfs_ipc::{CallContext, RpcError, decode_request, encode_response};
use rhdfs_proto::hdfs::{
    GetSlowDatanodeReportRequestProto, GetSlowDatanodeReportResponseProto, SlowNodeDetailProto,
    SlowNodeReporterProto,
};

use super::ClientProtocolService;
use super::datanode_info::datanode_info_to_proto;

impl ClientProtocolService {
    pub(super) async fn get_slow_datanode_report(
        &self,
        _ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let _req: GetSlowDatanodeReportRequestProto = decode_request(body)?;
        let bm = self.fs.block_manager();
        let datanode_info_proto = bm
            .slow_datanode_report()
            .iter()
            .map(datanode_info_to_proto)
            .collect();
        let rhdfs_slow_node_details = bm
            .slow_datanode_details()
            .into_iter()
            .map(|(uuid, d)| detail_to_proto(uuid, d))
            .collect();
        Ok(encode_response(&GetSlowDatanodeReportResponseProto {
            datanode_info_proto,
            rhdfs_slow_node_details,
        }))
    }
}

fn detail_to_proto(uuid: String, d: SlowNodeDetail) -> SlowNodeDetailProto {
    SlowNodeDetailProto {
        datanode_uuid: uuid,
        reporters: d
            .reports
            .into_iter()
            .map(|(r, ago, left)| SlowNodeReporterProto {
                reporting_node: r.reporting_node,
                latency: Some(r.latency),
                median: Some(r.stats.median),
                mad: Some(r.stats.mad),
                upper_limit: Some(r.stats.upper_limit),
                reported_seconds_ago: Some(ago.as_secs()),
                expires_in_seconds: Some(left.as_secs()),
            })
            .collect(),
        avoided: Some(d.avoided),
        eligible_again_in_seconds: Some(d.eligible_in.as_secs()),
    }
}
