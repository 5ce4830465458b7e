//! The calling side: [`IpcNetwork`] (openraft's `RaftNetworkFactory`) and [`IpcConnection`]
//! (its `RaftNetwork` to one peer), over one lazily connected `RpcClient` per peer.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use openraft::BasicNode;
use openraft::error::{InstallSnapshotError, RPCError, RaftError, RemoteError};
use openraft::network::{Backoff, RPCOption, RPCTypes, RaftNetwork, RaftNetworkFactory};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, InstallSnapshotRequest, InstallSnapshotResponse,
    VoteRequest, VoteResponse,
};
use parking_lot::Mutex;
use prost::Message;
use rhdfs_ipc::{ClientConfig, RpcClient, decode_response};
use rhdfs_proto::protocols::RAFT_PROTOCOL;
use rhdfs_proto::raft as pb;

use crate::codec::EntryData;
use crate::net::error::NetError;
use crate::net::fault::Faults;
use crate::net::wire::{self, APPEND_ENTRIES, INSTALL_SNAPSHOT, REQUEST_VOTE};
use crate::split_vote::SplitSeen;
use crate::store::LogTypeConfig;

/// The user Raft calls are made as (the connection context's effective user).
const DEFAULT_USER: &str = "raft";
/// How long openraft waits before it tries an unreachable peer again.
const DEFAULT_BACKOFF: Duration = Duration::from_millis(200);

/// openraft's network factory for member `me`: a connection to a peer is a call of
/// `org.apache.rhdfs.raft.RaftProtocol` through an `RpcClient` to the peer's address
/// (`BasicNode::addr`, `host:port` of its RPC port). The clients are kept per peer across
/// openraft's `new_client` calls (it asks for one per replication stream and election) and
/// connect on first use; a client whose connection died reconnects on its next call.
/// Clones share the clients.
#[derive(Debug, Clone)]
pub struct IpcNetwork {
    me: u64,
    user: String,
    cfg: ClientConfig,
    faults: Faults,
    backoff: Duration,
    clients: Arc<Mutex<HashMap<u64, RpcClient>>>,
    split: SplitSeen,
}

impl IpcNetwork {
    /// The network of member `me`, with the IPC client's default limits.
    pub fn new(me: u64) -> Self {
        IpcNetwork {
            me,
            user: DEFAULT_USER.to_owned(),
            cfg: ClientConfig::default(),
            faults: Faults::default(),
            backoff: DEFAULT_BACKOFF,
            clients: Arc::default(),
            split: SplitSeen::default(),
        }
    }

    /// Calls are made as `user`.
    pub fn with_user(mut self, user: &str) -> Self {
        user.clone_into(&mut self.user);
        self
    }

    /// The IPC client's limits (connect timeout, response size, idle time). Each call is
    /// also bounded by openraft's time limit for it.
    pub fn with_client_config(mut self, cfg: ClientConfig) -> Self {
        self.cfg = cfg;
        self
    }

    /// Calls to the peers `faults` cuts fail as unreachable.
    pub fn with_faults(mut self, faults: Faults) -> Self {
        self.faults = faults;
        self
    }

    /// Notes split votes in `split` (see [`crate::split_vote`]).
    pub fn with_split_seen(mut self, split: SplitSeen) -> Self {
        self.split = split;
        self
    }

    /// How long openraft waits before trying an unreachable peer again.
    pub fn with_backoff(mut self, backoff: Duration) -> Self {
        self.backoff = backoff;
        self
    }

    /// The client for `target` at `addr`: the one kept for it, unless its address changed.
    fn client(&self, target: u64, addr: &str) -> RpcClient {
        let mut clients = self.clients.lock();
        if let Some(c) = clients.get(&target)
            && c.addr() == addr
        {
            return c.clone();
        }
        let c = RpcClient::lazy(
            addr,
            RAFT_PROTOCOL,
            &self.user,
            self.cfg.clone(),
            RpcClient::new_client_id(),
        );
        if let Some(old) = clients.insert(target, c.clone()) {
            tokio::spawn(async move { old.close().await });
        }
        c
    }
}

impl<C: LogTypeConfig> RaftNetworkFactory<C> for IpcNetwork
where
    C::D: EntryData + Clone,
{
    type Network = IpcConnection;

    async fn new_client(&mut self, target: u64, node: &BasicNode) -> IpcConnection {
        IpcConnection {
            me: self.me,
            target,
            client: self.client(target, &node.addr),
            faults: self.faults.clone(),
            backoff: self.backoff,
            split: self.split.clone(),
        }
    }
}

/// openraft's network to one peer.
#[derive(Debug)]
pub struct IpcConnection {
    me: u64,
    target: u64,
    client: RpcClient,
    faults: Faults,
    backoff: Duration,
    split: SplitSeen,
}

impl IpcConnection {
    /// Calls `method` with `req`, waiting at most `ttl` (connecting included).
    async fn call<Resp: Message + Default>(
        &self,
        method: &'static str,
        req: &impl Message,
        ttl: Duration,
    ) -> Result<Resp, NetError> {
        self.faults.check(self.target)?;
        let body = req.encode_to_vec();
        let addr = self.client.addr();
        let answer = tokio::time::timeout(ttl, self.client.call_raw(method, &body))
            .await
            .map_err(|_| NetError::Timeout {
                target: self.target,
                method,
                after: ttl,
            })?
            .and_then(|bytes| decode_response::<Resp>(method, bytes))
            .map_err(|e| NetError::from_ipc(self.target, addr, method, e))?;
        // An answer that arrives after the traffic was cut is not delivered either.
        self.faults.check(self.target)?;
        Ok(answer)
    }

    fn rpc_err<E: std::error::Error>(
        &self,
        action: RPCTypes,
    ) -> impl Fn(NetError) -> RPCError<u64, BasicNode, E> {
        let (me, target) = (self.me, self.target);
        move |e| {
            tracing::debug!("raft {action} from {me} to {target}: {e}");
            e.into_rpc(me, target, action)
        }
    }
}

impl<C: LogTypeConfig> RaftNetwork<C> for IpcConnection
where
    C::D: EntryData + Clone,
{
    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<C>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<u64>, RPCError<u64, BasicNode, RaftError<u64>>> {
        let req = wire::append_request_to(&rpc);
        let err = self.rpc_err(RPCTypes::AppendEntries);
        let resp: pb::AppendEntriesResponseProto = self
            .call(APPEND_ENTRIES, &req, option.hard_ttl())
            .await
            .map_err(&err)?;
        wire::append_response_from(&resp).map_err(err)
    }

    async fn install_snapshot(
        &mut self,
        rpc: InstallSnapshotRequest<C>,
        option: RPCOption,
    ) -> Result<
        InstallSnapshotResponse<u64>,
        RPCError<u64, BasicNode, RaftError<u64, InstallSnapshotError>>,
    > {
        let req = wire::snapshot_request_to(rpc);
        let err = self.rpc_err(RPCTypes::InstallSnapshot);
        let resp: pb::InstallSnapshotResponseProto = self
            .call(INSTALL_SNAPSHOT, &req, option.hard_ttl())
            .await
            .map_err(&err)?;
        match wire::snapshot_response_from(&resp).map_err(err)? {
            Ok(r) => Ok(r),
            Err(mismatch) => Err(RPCError::RemoteError(RemoteError::new(
                self.target,
                RaftError::APIError(InstallSnapshotError::SnapshotMismatch(mismatch)),
            ))),
        }
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<u64>,
        option: RPCOption,
    ) -> Result<VoteResponse<u64>, RPCError<u64, BasicNode, RaftError<u64>>> {
        let req = wire::vote_request_to(&rpc);
        let resp: pb::VoteResponseProto = self
            .call(REQUEST_VOTE, &req, option.hard_ttl())
            .await
            .map_err(self.rpc_err(RPCTypes::Vote))?;
        let resp = wire::vote_response_from(&resp);
        self.split.note(&rpc, &resp);
        Ok(resp)
    }

    fn backoff(&self) -> Backoff {
        Backoff::new(std::iter::repeat(self.backoff))
    }
}
