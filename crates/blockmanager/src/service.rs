//! DatanodeProtocol served over Hadoop IPC (`org.apache.hadoop.hdfs.server.protocol.DatanodeProtocol`).

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, RpcService, decode_request, encode_response};
use rhdfs_proto::datanode::{
    BlockCommandProto, BlockReceivedAndDeletedRequestProto, BlockReceivedAndDeletedResponseProto,
    BlockReportRequestProto, BlockReportResponseProto, DatanodeCommandProto,
    ErrorReportRequestProto, ErrorReportResponseProto, HeartbeatRequestProto,
    HeartbeatResponseProto, RegisterCommandProto, RegisterDatanodeRequestProto,
    RegisterDatanodeResponseProto, ReportBadBlocksRequestProto, ReportBadBlocksResponseProto,
    block_command_proto, datanode_command_proto, received_deleted_block_info_proto::BlockStatus,
};
use rhdfs_proto::hdfs::{
    BlockProto, DatanodeInfosProto, NamespaceInfoProto, NnhaStatusHeartbeatProto, StorageInfoProto,
    StorageReportProto, StorageTypesProto, StorageUuidsProto, VersionRequestProto,
    VersionResponseProto, nnha_status_heartbeat_proto,
};

use crate::block::Block;
use crate::datanodes::StorageReport;
use crate::error::BlockManagerError;
use crate::manager::{BlockManager, Location};
use crate::render;
use crate::report::{decode_buffers, decode_longs};
use crate::reports::IncrementalItem;

/// Layout version this NameNode announces (Hadoop 3.4/3.5 NameNodeLayoutVersion: -67).
pub const NAMENODE_LAYOUT_VERSION: i32 = -67;
/// Software version announced to DataNodes.
pub const SOFTWARE_VERSION: &str = "3.5.0";
/// NamespaceInfo capability bit: the NameNode accepts `blocksBuffers` block reports.
pub const CAPABILITY_STORAGE_BLOCK_REPORT_BUFFERS: u64 = 1;
/// StorageTypeProto DISK.
const DISK: i32 = 1;

/// DatanodeProtocol handler; method names are Hadoop's.
#[derive(Clone, Debug)]
pub struct DatanodeProtocolService {
    bm: Arc<BlockManager>,
}

fn to_rpc(e: BlockManagerError) -> RpcError {
    RpcError::new(e.java_class(), e.to_string())
}

fn storage_report(r: &StorageReportProto) -> StorageReport {
    #[allow(deprecated)]
    let legacy_id = r.storage_uuid.clone();
    let (storage_id, storage_type) = match &r.storage {
        Some(s) => (s.storage_uuid.clone(), s.storage_type.unwrap_or(DISK)),
        None => (legacy_id, DISK),
    };
    StorageReport {
        storage_id,
        storage_type,
        failed: r.failed.unwrap_or(false),
        capacity: r.capacity.unwrap_or(0),
        dfs_used: r.dfs_used.unwrap_or(0),
        remaining: r.remaining.unwrap_or(0),
        block_pool_used: r.block_pool_used.unwrap_or(0),
        non_dfs_used: r.non_dfs_used,
    }
}

fn block_of(b: &BlockProto) -> Block {
    Block::new(b.block_id, b.gen_stamp, b.num_bytes.unwrap_or(0))
}

impl DatanodeProtocolService {
    pub fn new(bm: Arc<BlockManager>) -> Self {
        DatanodeProtocolService { bm }
    }

    pub fn namespace_info(&self) -> NamespaceInfoProto {
        let ns = self.bm.namespace_info();
        NamespaceInfoProto {
            build_version: format!("rhdfs-{}", env!("CARGO_PKG_VERSION")),
            unused: 0,
            block_pool_id: ns.block_pool_id.clone(),
            storage_info: StorageInfoProto {
                layout_version: NAMENODE_LAYOUT_VERSION as u32,
                namespce_id: ns.namespace_id,
                cluster_id: ns.cluster_id.clone(),
                c_time: ns.ctime,
            },
            software_version: SOFTWARE_VERSION.to_string(),
            capabilities: Some(CAPABILITY_STORAGE_BLOCK_REPORT_BUFFERS),
            state: Some(nnha_status_heartbeat_proto::State::Active as i32),
        }
    }

    fn register(
        &self,
        ctx: &CallContext,
        req: RegisterDatanodeRequestProto,
    ) -> Result<RegisterDatanodeResponseProto, RpcError> {
        let mut reg = req.registration;
        // Like Hadoop, trust the connection's address over the one the DataNode claims.
        let peer_ip = ctx.peer.ip();
        if !peer_ip.is_unspecified() {
            reg.datanode_id.ip_addr = peer_ip.to_string();
        }
        let id = render::datanode_id_from_proto(&reg.datanode_id);
        tracing::info!(
            uuid = %id.uuid, addr = %id.xfer_addr(),
            "BLOCK* registerDatanode: from DatanodeRegistration({})", id.xfer_addr()
        );
        if !self.bm.is_host_allowed(&id) {
            return Err(crate::redundancy::decommission::disallowed_error(&id));
        }
        self.bm
            .register_datanode(id, &reg.software_version)
            .map_err(to_rpc)?;
        Ok(RegisterDatanodeResponseProto { registration: reg })
    }

    fn heartbeat(&self, req: HeartbeatRequestProto) -> HeartbeatResponseProto {
        let uuid = req.registration.datanode_id.datanode_uuid.clone();
        let reports: Vec<StorageReport> = req.reports.iter().map(storage_report).collect();
        let out = self.bm.heartbeat_with_failures(
            &uuid,
            reports,
            req.xceiver_count.unwrap_or(0),
            req.xmits_in_progress.unwrap_or(0),
            req.request_full_block_report_lease.unwrap_or(false),
            req.failed_volumes.unwrap_or(0),
            req.volume_failure_summary
                .as_ref()
                .map(crate::volume_failures::VolumeFailureSummary::from),
        );
        if out.registered && (!req.slow_peers.is_empty() || !req.slow_disks.is_empty()) {
            let id = &req.registration.datanode_id;
            let reporting = format!("{}:{}", id.ip_addr, id.ipc_port);
            self.bm
                .slow_nodes()
                .on_heartbeat(&reporting, &req.slow_peers, &req.slow_disks);
        }
        let mut cmds = Vec::new();
        if !out.registered {
            cmds.push(DatanodeCommandProto {
                cmd_type: datanode_command_proto::Type::RegisterCommand as i32,
                register_cmd: Some(RegisterCommandProto {}),
                ..DatanodeCommandProto::default()
            });
        } else {
            if !out.transfers.is_empty() {
                cmds.push(self.transfer_command(&out.transfers));
            }
            if !out.invalidate.is_empty() {
                cmds.push(self.invalidate_command(&out.invalidate));
            }
        }
        HeartbeatResponseProto {
            cmds,
            ha_status: NnhaStatusHeartbeatProto {
                state: nnha_status_heartbeat_proto::State::Active as i32,
                txid: self.bm.last_txid.load(std::sync::atomic::Ordering::Relaxed),
            },
            rolling_upgrade_status: None,
            rolling_upgrade_status_v2: None,
            full_block_report_lease_id: Some(out.full_report_lease),
            is_slownode: Some(out.registered && self.bm.is_slow_node(&uuid)),
        }
    }

    /// DNA_INVALIDATE as Hadoop sends it: one (empty) DatanodeInfosProto target per block.
    pub fn invalidate_command(&self, blocks: &[Block]) -> DatanodeCommandProto {
        DatanodeCommandProto {
            cmd_type: datanode_command_proto::Type::BlockCommand as i32,
            blk_cmd: Some(BlockCommandProto {
                action: block_command_proto::Action::Invalidate as i32,
                block_pool_id: self.bm.block_pool_id().to_string(),
                blocks: blocks
                    .iter()
                    .map(|b| BlockProto {
                        block_id: b.id,
                        gen_stamp: b.gs,
                        num_bytes: Some(b.num_bytes),
                    })
                    .collect(),
                targets: blocks
                    .iter()
                    .map(|_| DatanodeInfosProto::default())
                    .collect(),
                target_storage_uuids: Vec::new(),
                target_storage_types: Vec::new(),
            }),
            ..DatanodeCommandProto::default()
        }
    }

    /// DNA_TRANSFER: copy each block to its targets (with their storages and types).
    pub fn transfer_command(&self, transfers: &[(Block, Vec<Location>)]) -> DatanodeCommandProto {
        DatanodeCommandProto {
            cmd_type: datanode_command_proto::Type::BlockCommand as i32,
            blk_cmd: Some(BlockCommandProto {
                action: block_command_proto::Action::Transfer as i32,
                block_pool_id: self.bm.block_pool_id().to_string(),
                blocks: transfers
                    .iter()
                    .map(|(b, _)| BlockProto {
                        block_id: b.id,
                        gen_stamp: b.gs,
                        num_bytes: Some(b.num_bytes),
                    })
                    .collect(),
                targets: transfers
                    .iter()
                    .map(|(_, t)| DatanodeInfosProto {
                        datanodes: t.iter().map(|l| l.info.clone()).collect(),
                    })
                    .collect(),
                target_storage_uuids: transfers
                    .iter()
                    .map(|(_, t)| StorageUuidsProto {
                        storage_uuids: t.iter().map(|l| l.storage_id.clone()).collect(),
                    })
                    .collect(),
                target_storage_types: transfers
                    .iter()
                    .map(|(_, t)| StorageTypesProto {
                        storage_types: t.iter().map(|l| l.storage_type).collect(),
                    })
                    .collect(),
            }),
            ..DatanodeCommandProto::default()
        }
    }

    fn block_report(
        &self,
        req: BlockReportRequestProto,
    ) -> Result<BlockReportResponseProto, RpcError> {
        let uuid = req.registration.datanode_id.datanode_uuid.clone();
        if let Some(c) = &req.context
            && let Err(why) = self.bm.check_report_lease(&uuid, c.lease_id.unwrap_or(0))
        {
            // Hadoop ignores the report; the DataNode asks for a lease again later.
            tracing::warn!(
                dn = %uuid, lease = format!("0x{:x}", c.lease_id.unwrap_or(0)), reason = ?why,
                "BR lease is not valid; the full block report is ignored"
            );
            return Ok(BlockReportResponseProto { cmd: None });
        }
        for r in &req.reports {
            if let Some(c) = &req.context
                && !self
                    .bm
                    .first_sight_of_storage(&uuid, c.id, &r.storage.storage_uuid)
            {
                tracing::info!(
                    dn = %uuid, storage = %r.storage.storage_uuid, report = c.id,
                    "storage already processed in this full block report; skipped"
                );
                continue;
            }
            let replicas = if !r.blocks_buffers.is_empty() {
                decode_buffers(r.number_of_blocks.unwrap_or(0), &r.blocks_buffers)
            } else {
                decode_longs(&r.blocks)
            }
            .map_err(to_rpc)?;
            let storage_type = r.storage.storage_type.unwrap_or(DISK);
            let sum = self
                .bm
                .full_report(&uuid, &r.storage.storage_uuid, storage_type, &replicas)
                .map_err(to_rpc)?;
            tracing::info!(
                dn = %uuid, storage = %r.storage.storage_uuid,
                blocks = sum.reported, added = sum.added, removed = sum.removed,
                invalidated = sum.invalidated, corrupt = sum.corrupt, chunks = sum.chunks,
                "BLOCK* processReport"
            );
        }
        let last = req
            .context
            .as_ref()
            .is_none_or(|c| c.cur_rpc + 1 >= c.total_rpcs);
        if last {
            self.bm.full_report_done(&uuid);
        }
        Ok(BlockReportResponseProto { cmd: None })
    }

    fn block_received_and_deleted(
        &self,
        req: BlockReceivedAndDeletedRequestProto,
    ) -> Result<BlockReceivedAndDeletedResponseProto, RpcError> {
        let uuid = &req.registration.datanode_id.datanode_uuid;
        for s in &req.blocks {
            #[allow(deprecated)]
            let legacy = s.storage_uuid.clone();
            let (storage_id, storage_type) = match &s.storage {
                Some(st) => (st.storage_uuid.clone(), st.storage_type.unwrap_or(DISK)),
                None => (legacy, DISK),
            };
            let items: Vec<IncrementalItem> = s
                .blocks
                .iter()
                .filter_map(|b| {
                    let block = block_of(&b.block);
                    match BlockStatus::try_from(b.status) {
                        Ok(BlockStatus::Receiving) => Some(IncrementalItem::Receiving(block)),
                        Ok(BlockStatus::Received) => Some(IncrementalItem::Received(block)),
                        Ok(BlockStatus::Deleted) => Some(IncrementalItem::Deleted(block)),
                        Err(_) => {
                            tracing::warn!(
                                status = b.status,
                                "unknown block status in incremental report"
                            );
                            None
                        }
                    }
                })
                .collect();
            self.bm
                .incremental_report(uuid, &storage_id, storage_type, &items)
                .map_err(to_rpc)?;
        }
        Ok(BlockReceivedAndDeletedResponseProto {})
    }

    fn report_bad_blocks(&self, req: ReportBadBlocksRequestProto) -> ReportBadBlocksResponseProto {
        for lb in &req.blocks {
            let b = Block::new(
                lb.b.block_id,
                lb.b.generation_stamp,
                lb.b.num_bytes.unwrap_or(0),
            );
            for (i, loc) in lb.locs.iter().enumerate() {
                let storage = lb
                    .storage_i_ds
                    .get(i)
                    .map(String::as_str)
                    .filter(|s| !s.is_empty());
                self.bm.report_bad_block(b, &loc.id.datanode_uuid, storage);
            }
        }
        ReportBadBlocksResponseProto {}
    }
}

#[async_trait]
impl RpcService for DatanodeProtocolService {
    async fn call(&self, ctx: CallContext, body: Bytes) -> Result<Bytes, RpcError> {
        match ctx.method.as_str() {
            "versionRequest" => {
                let _: VersionRequestProto = decode_request(&body)?;
                Ok(encode_response(&VersionResponseProto {
                    info: self.namespace_info(),
                }))
            }
            "registerDatanode" => {
                let req: RegisterDatanodeRequestProto = decode_request(&body)?;
                self.register(&ctx, req).map(|r| encode_response(&r))
            }
            "sendHeartbeat" => {
                let req: HeartbeatRequestProto = decode_request(&body)?;
                if self
                    .bm
                    .is_disallowed(&req.registration.datanode_id.datanode_uuid)
                {
                    let id = render::datanode_id_from_proto(&req.registration.datanode_id);
                    return Err(crate::redundancy::decommission::disallowed_error(&id));
                }
                Ok(encode_response(&self.heartbeat(req)))
            }
            "blockReport" => {
                let req: BlockReportRequestProto = decode_request(&body)?;
                // Large reports are processed in chunks; keep them off the async workers.
                let this = self.clone();
                let resp = tokio::task::spawn_blocking(move || this.block_report(req))
                    .await
                    .map_err(|e| RpcError::io(format!("block report processing failed: {e}")))??;
                Ok(encode_response(&resp))
            }
            "blockReceivedAndDeleted" => {
                let req: BlockReceivedAndDeletedRequestProto = decode_request(&body)?;
                Ok(encode_response(&self.block_received_and_deleted(req)?))
            }
            "errorReport" => {
                let req: ErrorReportRequestProto = decode_request(&body)?;
                let id = &req.registartion.datanode_id;
                let name = format!("{}:{}", id.ip_addr, id.xfer_port);
                self.bm
                    .error_report(&id.datanode_uuid, &name, req.error_code, &req.msg);
                Ok(encode_response(&ErrorReportResponseProto {}))
            }
            "reportBadBlocks" => {
                let req: ReportBadBlocksRequestProto = decode_request(&body)?;
                Ok(encode_response(&self.report_bad_blocks(req)))
            }
            other => Err(RpcError::no_such_method_on(
                other,
                rhdfs_proto::protocols::DATANODE_PROTOCOL,
            )),
        }
    }
}
