//! The serving side: [`RaftService`], openraft's RPCs as an `RpcService`.

use async_trait::async_trait;
use bytes::Bytes;
use openraft::Raft;
use openraft::error::{InstallSnapshotError, RaftError};
use parking_lot::RwLock;
use rhdfs_ipc::{CallContext, RpcError, RpcService, decode_request, encode_response};
use rhdfs_proto::raft as pb;

use crate::codec::EntryData;
use crate::net::error::{NOT_SERVING, NetError};
use crate::net::fault::Faults;
use crate::net::wire::{self, APPEND_ENTRIES, INSTALL_SNAPSHOT, REQUEST_VOTE};
use crate::store::LogTypeConfig;

/// Serves `org.apache.rhdfs.raft.RaftProtocol` for one member: each call goes to the
/// member's `Raft` once [`RaftService::attach`] gave it one. Until then, after
/// [`RaftService::detach`], when that `Raft` has stopped, or for a caller the fault hook cuts
/// off (the caller is the node named in the request's vote: the leader, or the candidate),
/// a call fails with [`NOT_SERVING`], which the calling side takes as an unreachable peer.
/// A request that does not decode fails with `java.io.IOException`.
pub struct RaftService<C: LogTypeConfig>
where
    C::D: EntryData + Clone,
{
    raft: RwLock<Option<Raft<C>>>,
    faults: Faults,
}

impl<C: LogTypeConfig> RaftService<C>
where
    C::D: EntryData + Clone,
{
    /// A service with no `Raft` yet; calls from the peers `faults` cuts are refused.
    pub fn new(faults: Faults) -> Self {
        RaftService {
            raft: RwLock::new(None),
            faults,
        }
    }

    /// Calls go to `raft` from now on.
    pub fn attach(&self, raft: Raft<C>) {
        *self.raft.write() = Some(raft);
    }

    /// The attached `Raft`, if any (the member is running).
    pub fn raft(&self) -> Option<Raft<C>> {
        self.raft.read().clone()
    }

    /// Calls are refused from now on (the member is stopping).
    pub fn detach(&self) {
        self.raft.write().take();
    }

    /// The attached `Raft`, if the call from `from` may reach it.
    fn raft_for(&self, from: u64) -> Result<Raft<C>, RpcError> {
        self.faults
            .check(from)
            .map_err(|e| RpcError::new(NOT_SERVING, e.to_string()))?;
        self.raft
            .read()
            .clone()
            .ok_or_else(|| RpcError::new(NOT_SERVING, "raft is not running on this member"))
    }
}

fn fatal<E: std::error::Error>(e: RaftError<u64, E>) -> RpcError {
    match e {
        RaftError::Fatal(f) => RpcError::new(NOT_SERVING, f.to_string()),
        RaftError::APIError(e) => RpcError::io(e.to_string()),
    }
}

fn bad_request(e: NetError) -> RpcError {
    RpcError::io(e.to_string())
}

#[async_trait]
impl<C: LogTypeConfig> RpcService for RaftService<C>
where
    C::D: EntryData + Clone,
{
    async fn call(&self, ctx: CallContext, body: Bytes) -> Result<Bytes, RpcError> {
        match ctx.method.as_str() {
            APPEND_ENTRIES => {
                let p: pb::AppendEntriesRequestProto = decode_request(&body)?;
                let raft = self.raft_for(p.vote.node_id)?;
                let req = wire::append_request_from::<C>(p).map_err(bad_request)?;
                let resp = raft.append_entries(req).await.map_err(fatal)?;
                Ok(encode_response(&wire::append_response_to(&resp)))
            }
            REQUEST_VOTE => {
                let p: pb::VoteRequestProto = decode_request(&body)?;
                let raft = self.raft_for(p.vote.node_id)?;
                let resp = raft
                    .vote(wire::vote_request_from(&p))
                    .await
                    .map_err(fatal)?;
                Ok(encode_response(&wire::vote_response_to(&resp)))
            }
            INSTALL_SNAPSHOT => {
                let p: pb::InstallSnapshotRequestProto = decode_request(&body)?;
                let raft = self.raft_for(p.vote.node_id)?;
                let answer = match raft
                    .install_snapshot(wire::snapshot_request_from::<C>(p))
                    .await
                {
                    Ok(resp) => Ok(resp),
                    Err(RaftError::APIError(InstallSnapshotError::SnapshotMismatch(m))) => Err(m),
                    Err(e) => return Err(fatal(e)),
                };
                Ok(encode_response(&wire::snapshot_response_to(&answer)))
            }
            other => Err(RpcError::no_such_method_on(other, &ctx.protocol)),
        }
    }
}
