//! msync: a client of ObserverReadProxyProvider asks the active for its state id.
//!
//! The answer is empty; what the client wants is the response header's state id (the
//! server's `ha::observer::StateIdContext`), which covers every mutation acknowledged
//! before the call. Only the active answers (Hadoop checks the WRITE category): a standby
//! or observer refuses with StandbyException, so the client's msync fails over to the
//! active.

use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, encode_response};
use rhdfs_proto::hdfs::MsyncResponseProto;

use super::ClientProtocolService;
use crate::ha::OperationCategory;

impl ClientProtocolService {
    pub(super) async fn msync(&self, _ctx: &CallContext, _body: &Bytes) -> Result<Bytes, RpcError> {
        self.fs.ha_role().get().check(OperationCategory::Write)?;
        Ok(encode_response(&MsyncResponseProto {}))
    }
}
