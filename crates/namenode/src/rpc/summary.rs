//! getContentSummary and getQuotaUsage.

use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, decode_request, encode_response};
use rhdfs_proto::hdfs::{
    GetContentSummaryRequestProto, GetContentSummaryResponseProto, GetQuotaUsageRequestProto,
    GetQuotaUsageResponseProto, QuotaUsageProto,
};

use super::ClientProtocolService;
use super::convert::{content_summary, quota, type_quota_infos};

impl ClientProtocolService {
    pub(super) async fn get_content_summary(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: GetContentSummaryRequestProto = decode_request(body)?;
        let caller = self.caller(ctx).await;
        let cs = self.fs.content_summary(&caller, &req.path).await?;
        Ok(encode_response(&GetContentSummaryResponseProto {
            summary: content_summary(&cs),
        }))
    }

    pub(super) async fn get_quota_usage(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: GetQuotaUsageRequestProto = decode_request(body)?;
        let caller = self.caller(ctx).await;
        let cs = self.fs.content_summary(&caller, &req.path).await?;
        Ok(encode_response(&GetQuotaUsageResponseProto {
            usage: QuotaUsageProto {
                file_and_directory_count: cs.file_count + cs.directory_count,
                quota: quota(cs.quota),
                space_consumed: cs.space_consumed,
                space_quota: quota(cs.space_quota),
                type_quota_infos: type_quota_infos(&cs),
            },
        }))
    }
}
