//! getHAServiceState (ClientProtocol): the NameNode's HA state, answered in every state.
//! ObserverReadProxyProvider asks each NameNode to find the observers it reads from.

use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, encode_response};
use rhdfs_proto::common::HaServiceStateProto;
use rhdfs_proto::hdfs::{HaServiceStateResponseProto, nnha_status_heartbeat_proto};

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

/// A role as DataNodes are told it (heartbeats' NNHAStatusHeartbeat, versionRequest's
/// NamespaceInfo): an observer says OBSERVER, as Hadoop's; a DataNode takes commands from
/// neither it nor a standby.
pub fn datanode_ha_state(role: Role) -> nnha_status_heartbeat_proto::State {
    match role {
        Role::Active => nnha_status_heartbeat_proto::State::Active,
        Role::Observer => nnha_status_heartbeat_proto::State::Observer,
        Role::Standby | Role::Failed => nnha_status_heartbeat_proto::State::Standby,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datanodes_are_told_each_role_as_hadoop_names_it() {
        use nnha_status_heartbeat_proto::State;
        assert_eq!(datanode_ha_state(Role::Active), State::Active);
        assert_eq!(datanode_ha_state(Role::Observer), State::Observer);
        assert_eq!(datanode_ha_state(Role::Standby), State::Standby);
        assert_eq!(datanode_ha_state(Role::Failed), State::Standby);
    }
}
