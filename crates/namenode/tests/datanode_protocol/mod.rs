//! DatanodeProtocol as the NameNode serves it (`rpc/datanode/`), called through its
//! RpcService interface over a block manager on a manual clock.

mod calls;
mod ha_status;
mod report_leases;
mod slow_nodes;
mod support;
mod topology;
