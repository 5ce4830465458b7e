//! Building the messages the actor sends: the registration, storage reports, full block
//! reports in the long-list format, and incremental reports.

use std::collections::BTreeMap;

use rhdfs_proto::datanode::{
    BlockReportContextProto, DatanodeRegistrationProto, ExportedBlockKeysProto,
    ReceivedDeletedBlockInfoProto, StorageBlockReportProto, StorageInfoProto,
    StorageReceivedDeletedBlocksProto, VolumeFailureSummaryProto,
};
use rhdfs_proto::hdfs::{
    BlockKeyProto, BlockProto, DatanodeIdProto, DatanodeStorageProto, StorageReportProto,
};

use crate::dataset::{Dataset, StorageStats};
use crate::notify::BlockEvent;
use crate::replica::{ReplicaInfo, ReplicaState};

/// How this DataNode identifies itself to NameNodes and clients.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub ip_addr: String,
    pub host_name: String,
    pub datanode_uuid: String,
    pub xfer_port: u16,
    pub info_port: u16,
    pub ipc_port: u16,
}

impl Identity {
    pub fn datanode_id(&self) -> DatanodeIdProto {
        DatanodeIdProto {
            ip_addr: self.ip_addr.clone(),
            host_name: self.host_name.clone(),
            datanode_uuid: self.datanode_uuid.clone(),
            xfer_port: u32::from(self.xfer_port),
            info_port: u32::from(self.info_port),
            ipc_port: u32::from(self.ipc_port),
            info_secure_port: Some(0),
        }
    }
}

/// DatanodeRegistrationProto with the NameNode's storage info and empty block keys.
pub fn registration(
    id: &Identity,
    storage_info: &StorageInfoProto,
    software_version: &str,
) -> DatanodeRegistrationProto {
    DatanodeRegistrationProto {
        datanode_id: id.datanode_id(),
        storage_info: storage_info.clone(),
        keys: ExportedBlockKeysProto {
            is_block_token_enabled: false,
            key_update_interval: 0,
            token_life_time: 0,
            current_key: BlockKeyProto {
                key_id: 0,
                expiry_date: 0,
                key_bytes: None,
            },
            all_keys: Vec::new(),
        },
        software_version: software_version.to_string(),
    }
}

pub fn storage_proto(storage_id: &str) -> DatanodeStorageProto {
    DatanodeStorageProto {
        storage_uuid: storage_id.to_string(),
        state: Some(0),
        storage_type: Some(1),
    }
}

/// One StorageReportProto per volume.
#[allow(deprecated)] // storageUuid is required on the wire
/// Volumes out of service are left out, as Hadoop's dataset no longer lists them.
pub fn storage_reports(stats: &[StorageStats]) -> Vec<StorageReportProto> {
    stats
        .iter()
        .filter(|s| !s.failed)
        .map(|s| {
            let non_dfs = s
                .space
                .capacity
                .saturating_sub(s.space.available)
                .saturating_sub(s.dfs_used);
            StorageReportProto {
                storage_uuid: s.storage_id.clone(),
                failed: Some(false),
                capacity: Some(s.space.capacity),
                dfs_used: Some(s.dfs_used),
                remaining: Some(s.space.available),
                block_pool_used: Some(s.dfs_used),
                storage: Some(storage_proto(&s.storage_id)),
                non_dfs_used: Some(non_dfs),
                mount: None,
            }
        })
        .collect()
}

/// The long-list encoding: numFinalized, numUC, finalized (id, len, gs) triplets, a delimiter
/// triplet of -1s, then under-construction (id, len, gs, state) quads. TEMPORARY replicas are
/// not reported. A replica under recovery (RUR) is reported as the replica it was before the
/// recovery took it (FINALIZED, RBW or RWR), as Hadoop's DataNode does: the NameNode treats a
/// reported RUR as corrupt.
pub fn encode_block_list(replicas: &[ReplicaInfo]) -> (Vec<u64>, u64) {
    let finalized: Vec<&ReplicaInfo> = replicas
        .iter()
        .filter(|r| r.original_state() == ReplicaState::Finalized)
        .collect();
    let uc: Vec<&ReplicaInfo> = replicas
        .iter()
        .filter(|r| matches!(r.original_state(), ReplicaState::Rbw | ReplicaState::Rwr))
        .collect();
    let mut v = Vec::with_capacity(2 + 3 * finalized.len() + 3 + 4 * uc.len());
    v.push(finalized.len() as u64);
    v.push(uc.len() as u64);
    for r in &finalized {
        v.extend_from_slice(&[r.id, r.num_bytes, r.gs]);
    }
    v.extend_from_slice(&[u64::MAX; 3]);
    for r in &uc {
        v.extend_from_slice(&[r.id, r.num_bytes, r.gs, r.original_state().code()]);
    }
    (v, (finalized.len() + uc.len()) as u64)
}

/// One StorageBlockReportProto per volume in service for pool `bpid`.
pub fn storage_block_reports(ds: &Dataset, bpid: &str) -> Vec<StorageBlockReportProto> {
    let all = ds.replicas(bpid);
    ds.volumes()
        .iter()
        .filter(|v| !v.is_failed())
        .map(|v| {
            let mine: Vec<ReplicaInfo> = all
                .iter()
                .filter(|r| r.volume == v.index)
                .cloned()
                .collect();
            let (blocks, n) = encode_block_list(&mine);
            StorageBlockReportProto {
                storage: storage_proto(&v.storage_id),
                blocks,
                number_of_blocks: Some(n),
                blocks_buffers: Vec::new(),
            }
        })
        .collect()
}

pub fn report_context(id: i64, lease_id: u64) -> BlockReportContextProto {
    BlockReportContextProto {
        total_rpcs: 1,
        cur_rpc: 0,
        id,
        lease_id: Some(lease_id),
        sorted: Some(false),
    }
}

/// Groups events by (pool, storage); the latest event per block wins.
#[allow(deprecated)] // storageUuid is required on the wire
pub fn group_events(
    events: Vec<BlockEvent>,
) -> BTreeMap<String, Vec<StorageReceivedDeletedBlocksProto>> {
    let mut by: BTreeMap<(String, String), Vec<BlockEvent>> = BTreeMap::new();
    for ev in events {
        let list = by
            .entry((ev.bpid.clone(), ev.storage_id.clone()))
            .or_default();
        list.retain(|e| e.block_id != ev.block_id);
        list.push(ev);
    }
    let mut out: BTreeMap<String, Vec<StorageReceivedDeletedBlocksProto>> = BTreeMap::new();
    for ((bpid, storage), evs) in by {
        let blocks = evs
            .iter()
            .map(|e| ReceivedDeletedBlockInfoProto {
                block: BlockProto {
                    block_id: e.block_id,
                    gen_stamp: e.gs,
                    num_bytes: Some(e.num_bytes),
                },
                delete_hint: None,
                status: e.status.code(),
            })
            .collect();
        out.entry(bpid)
            .or_default()
            .push(StorageReceivedDeletedBlocksProto {
                storage_uuid: storage.clone(),
                blocks,
                storage: Some(storage_proto(&storage)),
            });
    }
    out
}

/// The heartbeat's VolumeFailureSummaryProto; None while no volume failed.
pub fn volume_failure_summary(ds: &Dataset) -> Option<VolumeFailureSummaryProto> {
    ds.failure_summary().map(|f| VolumeFailureSummaryProto {
        failed_storage_locations: f.locations,
        last_volume_failure_date: f.last_date_ms,
        estimated_capacity_lost_total: f.capacity_lost,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checksum::ChecksumSpec;
    use crate::notify::BlockStatus;

    fn r(id: u64, state: ReplicaState) -> ReplicaInfo {
        ReplicaInfo {
            id,
            gs: 1000 + id,
            state,
            num_bytes: 10 * id,
            volume: 0,
            checksum: ChecksumSpec::default(),
            writer_epoch: 0,
            recovery: None,
        }
    }

    #[test]
    fn long_list_layout() {
        let reps = vec![
            r(1, ReplicaState::Finalized),
            r(2, ReplicaState::Rbw),
            r(3, ReplicaState::Temporary),
            r(4, ReplicaState::Finalized),
            r(5, ReplicaState::Rwr),
        ];
        let (v, n) = encode_block_list(&reps);
        assert_eq!(n, 4);
        let m = u64::MAX;
        assert_eq!(
            v,
            vec![
                2, 2, 1, 10, 1001, 4, 40, 1004, m, m, m, 2, 20, 1002, 1, 5, 50, 1005, 2
            ]
        );
    }

    #[test]
    #[allow(deprecated)]
    fn events_grouped_latest_wins() {
        let ev = |id, status| BlockEvent {
            bpid: "BP-1".into(),
            storage_id: "DS-a".into(),
            block_id: id,
            gs: 1001,
            num_bytes: 5,
            status,
        };
        let g = group_events(vec![
            ev(1, BlockStatus::Receiving),
            ev(2, BlockStatus::Deleted),
            ev(1, BlockStatus::Received),
        ]);
        let s = &g["BP-1"][0];
        assert_eq!(s.storage_uuid, "DS-a");
        let got: Vec<_> = s
            .blocks
            .iter()
            .map(|b| (b.block.block_id, b.status))
            .collect();
        assert_eq!(got, vec![(2, 3), (1, 2)]);
    }
}
