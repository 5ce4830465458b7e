//! HAServiceProtocol (`org.apache.hadoop.ha.HAServiceProtocol`) on the NameNode's RPC port:
//! what `haadmin` and a failover controller ask a NameNode.
//!
//! `getServiceStatus` answers the NameNode's role (`crate::ha`): ACTIVE without HA, and in an
//! HA nameservice ACTIVE for the Raft leader, STANDBY for the others; `monitorHealth` reports
//! whether it is serving. Without HA a state transition is refused with
//! `ServiceFailedException` (there is nothing to hand over to); with HA it moves Raft
//! leadership (`crate::ha::transition`): transitionToActive wins an election,
//! transitionToStandby hands the role to the most caught-up standby (an observer becomes a
//! standby); transitionToObserver makes a standby an observer (`crate::ha::observer`;
//! refused on the active with Hadoop's "Cannot transition from 'active' to 'observer'", and
//! transitionToActive on an observer with the reverse). Every method needs the superuser,
//! as in Hadoop.

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use rhdfs_conf::{ConfError, Configuration, keys};
use rhdfs_ipc::exceptions::{HEALTH_CHECK_FAILED, SERVICE_FAILED};
use rhdfs_ipc::{CallContext, RpcError, RpcService, decode_request, encode_response};
use rhdfs_proto::common::{
    GetServiceStatusRequestProto, GetServiceStatusResponseProto, HaRequestSource,
    MonitorHealthRequestProto, MonitorHealthResponseProto, TransitionToActiveRequestProto,
    TransitionToActiveResponseProto, TransitionToObserverRequestProto,
    TransitionToObserverResponseProto, TransitionToStandbyRequestProto,
    TransitionToStandbyResponseProto,
};

use crate::namesystem::Namesystem;
use crate::startup::Status;

/// The HAServiceProtocol service of one NameNode.
pub struct HaServiceProtocolService {
    fs: Arc<Namesystem>,
    /// `dfs.ha.nn.not-become-active-in-safemode`: in safe mode, report unhealthy and not
    /// ready to become active.
    not_active_in_safe_mode: bool,
    /// With HA: how transitions move Raft leadership.
    leadership: Option<crate::ha::transition::Leadership>,
}

impl HaServiceProtocolService {
    /// Reads `dfs.ha.nn.not-become-active-in-safemode`.
    pub fn new(fs: Arc<Namesystem>, conf: &Configuration) -> Result<Self, ConfError> {
        Ok(HaServiceProtocolService {
            fs,
            not_active_in_safe_mode: conf.get_bool(
                keys::DFS_HA_NN_NOT_BECOME_ACTIVE_IN_SAFEMODE_KEY,
                keys::DFS_HA_NN_NOT_BECOME_ACTIVE_IN_SAFEMODE_DEFAULT,
            )?,
            leadership: None,
        })
    }

    /// Transitions move Raft leadership through `leadership` (an HA nameservice).
    pub fn with_leadership(mut self, leadership: crate::ha::transition::Leadership) -> Self {
        self.leadership = Some(leadership);
        self
    }

    /// transitionToActive / transitionToStandby of an HA member.
    async fn transition(
        &self,
        leadership: &crate::ha::transition::Leadership,
        method: &str,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let failed = |why: String| {
            RpcError::new(
                SERVICE_FAILED,
                format!("This NameNode cannot {method}: {why}"),
            )
        };
        let by_user = |source: i32| source != HaRequestSource::RequestByZkfc as i32;
        match method {
            "transitionToActive" => {
                let req = decode_request::<TransitionToActiveRequestProto>(body)?;
                if self.fs.ha_role().get() == crate::ha::Role::Observer {
                    return Err(RpcError::new(
                        SERVICE_FAILED,
                        crate::ha::transition::OBSERVER_TO_ACTIVE,
                    ));
                }
                if let Some(why) = self.unhealthy() {
                    return Err(failed(why));
                }
                leadership
                    .become_active(by_user(req.req_info.req_source))
                    .await
                    .map_err(failed)?;
                Ok(encode_response(&TransitionToActiveResponseProto {}))
            }
            "transitionToObserver" => {
                decode_request::<TransitionToObserverRequestProto>(body)?;
                if self.fs.ha_role().get() == crate::ha::Role::Active {
                    // Hadoop's words, without this NameNode's preamble.
                    return Err(RpcError::new(
                        SERVICE_FAILED,
                        crate::ha::transition::ACTIVE_TO_OBSERVER,
                    ));
                }
                leadership.become_observer().map_err(failed)?;
                Ok(encode_response(&TransitionToObserverResponseProto {}))
            }
            _ => {
                let req = decode_request::<TransitionToStandbyRequestProto>(body)?;
                leadership
                    .become_standby(by_user(req.req_info.req_source))
                    .await
                    .map_err(failed)?;
                Ok(encode_response(&TransitionToStandbyResponseProto {}))
            }
        }
    }

    /// Why this NameNode is not serving, if it is not: start-up still running (image, edits,
    /// start-up safe mode), no name directory left for the edit log, or safe mode when the
    /// configuration says a NameNode in safe mode must not be active.
    fn unhealthy(&self) -> Option<String> {
        if self.fs.ha_role().get() == crate::ha::Role::Failed {
            return Some(
                "The NameNode's namespace diverged from the replicated edit log; restart it"
                    .to_string(),
            );
        }
        if let Some(p) = self.fs.startup_progress() {
            let view = p.view();
            if let Some(phase) = view
                .phases
                .iter()
                .find(|v| v.status != Status::Complete)
                .map(|v| v.phase)
            {
                return Some(format!(
                    "The NameNode is still starting up: {} is not complete",
                    phase.description()
                ));
            }
        }
        if let Some(d) = self.fs.durable()
            && d.log().dirs().active().is_empty()
        {
            return Some("The NameNode has no name directory left in service".to_string());
        }
        if self.not_active_in_safe_mode && self.fs.block_manager().in_safe_mode() {
            return Some(format!(
                "The NameNode is in safe mode and {} is true",
                keys::DFS_HA_NN_NOT_BECOME_ACTIVE_IN_SAFEMODE_KEY
            ));
        }
        None
    }

    async fn require_superuser(&self, ctx: &CallContext) -> Result<(), RpcError> {
        let caller = self
            .fs
            .caller(&ctx.user, &ctx.client_ip().to_string())
            .await;
        if !caller.superuser && self.fs.with_ns(|ns| ns.config().permissions_enabled) {
            return Err(super::errors::superuser_required(&caller.user));
        }
        Ok(())
    }

    fn monitor_health(&self, body: &Bytes) -> Result<Bytes, RpcError> {
        decode_request::<MonitorHealthRequestProto>(body)?;
        match self.unhealthy() {
            None => Ok(encode_response(&MonitorHealthResponseProto {})),
            Some(why) => Err(RpcError::new(HEALTH_CHECK_FAILED, why)),
        }
    }

    fn get_service_status(&self, body: &Bytes) -> Result<Bytes, RpcError> {
        decode_request::<GetServiceStatusRequestProto>(body)?;
        let role = self.fs.ha_role().get();
        // An observer cannot become active (Hadoop: "State is observer").
        let not_ready = self.unhealthy().or_else(|| {
            (role == crate::ha::Role::Observer).then(|| format!("State is {}", role.state_name()))
        });
        let state = super::ha_state::ha_state_proto(role);
        Ok(encode_response(&GetServiceStatusResponseProto {
            state: state as i32,
            ready_to_become_active: Some(not_ready.is_none()),
            not_ready_reason: not_ready,
        }))
    }

    /// No transition without HA: there is no standby to become, nor one to hand over to.
    fn refuse_transition(&self, method: &str, body: &Bytes) -> Result<Bytes, RpcError> {
        match method {
            "transitionToActive" => {
                decode_request::<TransitionToActiveRequestProto>(body).map(drop)
            }
            "transitionToStandby" => {
                decode_request::<TransitionToStandbyRequestProto>(body).map(drop)
            }
            _ => decode_request::<TransitionToObserverRequestProto>(body).map(drop),
        }?;
        if self.fs.is_ha() {
            return Err(RpcError::new(
                SERVICE_FAILED,
                format!(
                    "{method} is not supported: the NameNodes of this nameservice are active or \
                     standby, chosen by Raft election"
                ),
            ));
        }
        Err(RpcError::new(
            SERVICE_FAILED,
            format!(
                "HA is not configured for this NameNode: it is the only, active NameNode of its \
                 namespace and cannot {method} (configure {} and {}.<nameservice>)",
                keys::DFS_NAMESERVICES_KEY,
                keys::DFS_HA_NAMENODES_KEY_PREFIX
            ),
        ))
    }
}

#[async_trait]
impl RpcService for HaServiceProtocolService {
    async fn call(&self, ctx: CallContext, body: Bytes) -> Result<Bytes, RpcError> {
        let known = matches!(
            ctx.method.as_str(),
            "monitorHealth"
                | "getServiceStatus"
                | "transitionToActive"
                | "transitionToStandby"
                | "transitionToObserver"
        );
        if !known {
            return Err(RpcError::no_such_method_on(&ctx.method, &ctx.protocol));
        }
        self.require_superuser(&ctx).await?;
        match ctx.method.as_str() {
            "monitorHealth" => self.monitor_health(&body),
            "getServiceStatus" => self.get_service_status(&body),
            m @ ("transitionToActive" | "transitionToStandby" | "transitionToObserver") => {
                match &self.leadership {
                    Some(l) => self.transition(l, m, &body).await,
                    None => self.refuse_transition(m, &body),
                }
            }
            m => self.refuse_transition(m, &body),
        }
    }
}
