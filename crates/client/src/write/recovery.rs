//! Pipeline recovery with the Java client's semantics: drop the failed node, maybe add a
//! replacement (replace-datanode-on-failure policy, getAdditionalDatanode + TRANSFER_BLOCK),
//! bump the generation stamp (updateBlockForPipeline), reconnect with a recovery stage,
//! updatePipeline, and resend every unacknowledged packet.

use rhdfs_proto::hdfs::{
    DatanodeIdProto, GetAdditionalDatanodeRequestProto, GetAdditionalDatanodeResponseProto,
    UpdateBlockForPipelineRequestProto, UpdateBlockForPipelineResponseProto,
    UpdatePipelineRequestProto, UpdatePipelineResponseProto,
    op_write_block_proto::BlockConstructionStage,
};
use tracing::{info, warn};

use super::FileWriter;
use super::pipeline::{NodeFailure, Pipeline, STORAGE_DISK, Setup, transfer_block};
use crate::datanode::{block_name, display as dn_display, display_list, same_node, xfer_addr};
use crate::error::{ClientError, Result};

/// Attempts to find and fill a replacement node before giving up on it.
const REPLACEMENT_TRIES: u32 = 3;

impl FileWriter {
    /// Recovers the current block's pipeline after `f`.
    pub(super) async fn recover(&mut self, f: NodeFailure) -> Result<()> {
        self.rebuild_until_ok(Some(f)).await
    }

    /// Rebuilds the pipeline, dropping a node for every failure, until it works or no node
    /// (or no retry) is left. `first = None` sets up an append pipeline.
    pub(super) async fn rebuild_until_ok(&mut self, first: Option<NodeFailure>) -> Result<()> {
        let limit = self.fs.inner.conf.pipeline_recovery_max_retries + u32::from(self.replication);
        let mut failure = first;
        loop {
            let Some(cur) = self.cur.as_mut() else {
                return Err(ClientError::Failed("no block being written".into()));
            };
            cur.pipe = None;
            if let Some(f) = failure.take() {
                cur.recoveries += 1;
                let name = block_name(&cur.block);
                if cur.nodes.is_empty() {
                    return Err(ClientError::Failed(format!(
                        "All datanodes {} are bad. Aborting...",
                        display_list(&cur.failed)
                    )));
                }
                let idx = f.index.unwrap_or(0).min(cur.nodes.len() - 1);
                let bad = cur.nodes.remove(idx);
                let bad_sid = (idx < cur.storage_ids.len()).then(|| cur.storage_ids.remove(idx));
                if idx < cur.storage_types.len() {
                    cur.storage_types.remove(idx);
                }
                warn!(
                    "Error Recovery for {name} in pipeline {}: datanode {idx}({}) is bad: {}",
                    display_list(&cur.original),
                    dn_display(&bad, bad_sid.as_deref()),
                    f.cause
                );
                if cur.nodes.is_empty() {
                    cur.failed.push(bad.clone());
                    return Err(ClientError::Failed(format!(
                        "All datanodes [{}] are bad. Aborting...",
                        dn_display(&bad, bad_sid.as_deref())
                    )));
                }
                cur.failed.push(bad);
                if cur.recoveries > limit {
                    return Err(ClientError::Failed(format!(
                        "Error recovering pipeline for {name} of {}: gave up after {} attempts; last error: {}",
                        self.src, cur.recoveries, f.cause
                    )));
                }
                self.add_datanode_if_needed().await?;
            }
            match self.rebuild_pipeline().await? {
                Ok(()) => return Ok(()),
                Err(f) => failure = Some(f),
            }
        }
    }

    /// New generation stamp, reconnect, updatePipeline, resend. An `Ok(Err(_))` names the
    /// node that failed the new pipeline.
    async fn rebuild_pipeline(&mut self) -> Result<Result<(), NodeFailure>> {
        let fs = self.fs.clone();
        let host = fs.inner.conf.use_datanode_hostname;
        let Some(cur) = self.cur.as_mut() else {
            return Err(ClientError::Failed("no block being written".into()));
        };
        let stage = if cur.closing {
            BlockConstructionStage::PipelineCloseRecovery
        } else if cur.append_setup && cur.recoveries == 0 {
            BlockConstructionStage::PipelineSetupAppend
        } else if cur.append_setup {
            BlockConstructionStage::PipelineSetupAppendRecovery
        } else {
            BlockConstructionStage::PipelineSetupStreamingRecovery
        };
        let mut old = cur.block.clone();
        old.num_bytes = Some(cur.bytes_acked);
        let resp: UpdateBlockForPipelineResponseProto = fs
            .call(
                "updateBlockForPipeline",
                &UpdateBlockForPipelineRequestProto {
                    block: old.clone(),
                    client_name: fs.client_name().to_string(),
                },
            )
            .await?;
        let new_gs = resp.block.b.generation_stamp;
        if resp.block.block_token != Default::default() {
            cur.token = resp.block.block_token.clone();
        }
        let addrs: Vec<String> = cur.nodes.iter().map(|d| xfer_addr(d, host)).collect();
        let setup = Setup {
            block: &old,
            token: &cur.token,
            client_name: fs.client_name(),
            nodes: &cur.nodes,
            addrs: &addrs,
            storage_ids: &cur.storage_ids,
            storage_types: &cur.storage_types,
            stage,
            min_bytes: cur.bytes_acked,
            max_bytes: cur.bytes_sent,
            latest_gs: new_gs,
            checksum: self.checksum,
        };
        let mut pipe = match Pipeline::connect(&setup, &fs.inner.conf.transfer).await {
            Ok(p) => p,
            Err(f) => return Ok(Err(f)),
        };
        let mut new_block = old.clone();
        new_block.generation_stamp = new_gs;
        let new_nodes: Vec<DatanodeIdProto> = cur.nodes.iter().map(|d| d.id.clone()).collect();
        let _: UpdatePipelineResponseProto = fs
            .call(
                "updatePipeline",
                &UpdatePipelineRequestProto {
                    client_name: fs.client_name().to_string(),
                    old_block: old.clone(),
                    new_block: new_block.clone(),
                    new_nodes,
                    storage_i_ds: cur.storage_ids.clone(),
                },
            )
            .await?;
        info!(
            "pipeline of {} rebuilt as {} ({stage:?}), resending {} packet(s)",
            block_name(&new_block),
            display_list(&cur.nodes),
            cur.unacked.len()
        );
        cur.block = new_block;
        for p in &cur.unacked {
            if let Err(f) = pipe.send(p).await {
                return Ok(Err(f));
            }
        }
        cur.pipe = Some(pipe);
        Ok(Ok(()))
    }

    fn replacement_error(&self, detail: &str) -> ClientError {
        let policy = self.fs.inner.conf.replace.policy_name();
        let (current, original) = self
            .cur
            .as_ref()
            .map(|c| (display_list(&c.nodes), display_list(&c.original)))
            .unwrap_or_default();
        ClientError::Failed(format!(
            "Failed to replace a bad datanode on the existing pipeline due to no more good datanodes \
             being available to try. (Nodes: current={current}, original={original}). The current failed \
             datanode replacement policy is {policy}, and a client may configure this via \
             'dfs.client.block.write.replace-datanode-on-failure.policy' in its configuration.{detail}"
        ))
    }

    /// Applies the replace-datanode-on-failure policy to the current pipeline.
    async fn add_datanode_if_needed(&mut self) -> Result<()> {
        let fs = self.fs.clone();
        let cc = fs.inner.conf.clone();
        let host = cc.use_datanode_hostname;
        let flushed = self.flushed || self.appended;
        let live = self.cur.as_ref().map(|c| c.nodes.len()).unwrap_or(0);
        if !cc
            .replace
            .should_replace(u32::from(self.replication), live, flushed)
        {
            return Ok(());
        }
        for attempt in 1..=REPLACEMENT_TRIES {
            let Some(cur) = self.cur.as_ref() else {
                return Ok(());
            };
            let req = GetAdditionalDatanodeRequestProto {
                src: self.src.clone(),
                blk: cur.block.clone(),
                existings: cur.nodes.clone(),
                excludes: cur.failed.clone(),
                num_additional_nodes: 1,
                client_name: fs.client_name().to_string(),
                existing_storage_uuids: cur.storage_ids.clone(),
                file_id: Some(self.file_id),
            };
            let lb = match fs
                .call::<_, GetAdditionalDatanodeResponseProto>("getAdditionalDatanode", &req)
                .await
            {
                Ok(r) => r.block,
                Err(e) => {
                    if cc.replace.continues_without_replacement(live) {
                        warn!(
                            "no replacement datanode ({e}); continuing with {live} (best-effort or min-replication)"
                        );
                        return Ok(());
                    }
                    return Err(self.replacement_error(&format!(" ({})", e.message())));
                }
            };
            let new_idx = lb.locs.iter().position(|d| {
                !cur.nodes.iter().any(|n| same_node(n, d))
                    && !cur.failed.iter().any(|n| same_node(n, d))
            });
            let Some(ni) = new_idx else {
                if cc.replace.continues_without_replacement(live) {
                    warn!(
                        "the NameNode offered no replacement datanode; continuing with {live} (best-effort or min-replication)"
                    );
                    return Ok(());
                }
                return Err(self.replacement_error(""));
            };
            let target = lb.locs[ni].clone();
            let t_sid = lb.storage_i_ds.get(ni).cloned().unwrap_or_default();
            let t_type = lb.storage_types.get(ni).copied().unwrap_or(STORAGE_DISK);
            if cur.bytes_acked > 0 {
                let mut copied = false;
                let mut copy_block = cur.block.clone();
                copy_block.num_bytes = Some(cur.bytes_acked);
                for srcdn in &cur.nodes {
                    let addr = xfer_addr(srcdn, host);
                    match transfer_block(
                        &addr,
                        &copy_block,
                        &cur.token,
                        fs.client_name(),
                        &target,
                        t_type,
                        &t_sid,
                        &cc.transfer,
                    )
                    .await
                    {
                        Ok(()) => {
                            copied = true;
                            break;
                        }
                        Err(e) => warn!(
                            "TRANSFER_BLOCK of {} from {addr} to {} failed: {e}",
                            block_name(&copy_block),
                            xfer_addr(&target, host)
                        ),
                    }
                }
                if !copied {
                    if let Some(c) = self.cur.as_mut() {
                        c.failed.push(target);
                    }
                    if attempt == REPLACEMENT_TRIES {
                        if cc.replace.continues_without_replacement(live) {
                            return Ok(());
                        }
                        return Err(self
                            .replacement_error(" (copying the block to the new datanode failed)"));
                    }
                    continue;
                }
            }
            // Adopt the NameNode's order for existing + new nodes.
            let Some(cur) = self.cur.as_mut() else {
                return Ok(());
            };
            let mut nodes = Vec::new();
            let mut sids = Vec::new();
            let mut types = Vec::new();
            for (i, d) in lb.locs.iter().enumerate() {
                let existing = cur.nodes.iter().position(|n| same_node(n, d));
                if i != ni && existing.is_none() {
                    continue;
                }
                let sid = match existing {
                    Some(e) => cur.storage_ids.get(e).cloned(),
                    None => Some(t_sid.clone()),
                }
                .or_else(|| lb.storage_i_ds.get(i).cloned())
                .unwrap_or_default();
                let ty = match existing {
                    Some(e) => cur.storage_types.get(e).copied(),
                    None => Some(t_type),
                }
                .unwrap_or(STORAGE_DISK);
                nodes.push(d.clone());
                sids.push(sid);
                types.push(ty);
            }
            if nodes.len() <= cur.nodes.len() {
                // The NameNode's list dropped some of ours: keep ours and append the new node.
                nodes = cur.nodes.clone();
                nodes.push(target.clone());
                sids = cur.storage_ids.clone();
                sids.push(t_sid.clone());
                types = cur.storage_types.clone();
                types.push(t_type);
            }
            info!(
                "added datanode {} to the pipeline of {}",
                xfer_addr(&target, host),
                block_name(&cur.block)
            );
            cur.nodes = nodes;
            cur.storage_ids = sids;
            cur.storage_types = types;
            return Ok(());
        }
        Ok(())
    }
}
