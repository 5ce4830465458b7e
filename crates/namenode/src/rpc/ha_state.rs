//! getHAServiceState (ClientProtocol): the NameNode's HA state, answered in every state.
//! ObserverReadProxyProvider asks each NameNode to find the observers it reads from.

use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, encode_response};
use rhdfs_proto::common::HaServiceStateProto;
use rhdfs_proto::hdfs::HaServiceStateResponseProto;

use super::ClientProtocolService;
use crate::ha::Role;

/// A role as HAServiceStateProto (a NameNode whose namespace diverged is a standby to its
/// clients, as in getServiceStatus).
pub fn ha_state_proto(role: Role) -> HaServiceStateProto {
    match role {
        Role::Active => HaServiceStateProto::Active,
        Role::Observer => HaServiceStateProto::Observer,
        Role::Standby | Role::Failed => HaServiceStateProto::Standby,
    }
}

impl ClientProtocolService {
    pub(super) async fn get_ha_service_state(
        &self,
        _ctx: &CallContext,
        _body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        Ok(encode_response(&HaServiceStateResponseProto {
            state: ha_state_proto(self.fs.ha_role().get()) as i32,
        }))
    }
}
