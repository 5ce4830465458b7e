//! Parameters of a WRITE_BLOCK request, shared by [`crate::BlockWriter`] and
//! [`crate::transfer_replica`].

use rhdfs_proto::common::TokenProto;
use rhdfs_proto::hdfs::op_write_block_proto::BlockConstructionStage;
use rhdfs_proto::hdfs::{
    CachingStrategyProto, DatanodeInfoProto, ExtendedBlockProto, OpWriteBlockProto,
    StorageTypeProto,
};

use crate::checksum::DataChecksum;
use crate::error::TransferError;
use crate::headers::{client_header, xfer_addr};

/// Everything a WRITE_BLOCK op carries, with the pipeline given in full.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteBlockParams {
    pub block: ExtendedBlockProto,
    /// Block token; `None` sends an empty token.
    pub token: Option<TokenProto>,
    /// Empty for DataNode-to-DataNode transfers (then no acks at all).
    pub client_name: String,
    /// The whole pipeline, index 0 being the node this request goes to. The op's `targets`
    /// are `pipeline[1..]`.
    pub pipeline: Vec<DatanodeInfoProto>,
    /// Storage type per pipeline node (`StorageTypeProto` values); missing entries are DISK.
    pub storage_types: Vec<i32>,
    /// Storage id per pipeline node; missing entries are left out.
    pub storage_ids: Vec<String>,
    pub stage: BlockConstructionStage,
    pub min_bytes_rcvd: u64,
    pub max_bytes_rcvd: u64,
    pub latest_generation_stamp: u64,
    /// `source` (set by DataNodes for transfers).
    pub source: Option<DatanodeInfoProto>,
    pub checksum: DataChecksum,
    /// Block offset of the first byte this request will send (the replica length for append
    /// and recovery, 0 for a new block or a transfer).
    pub start_offset: u64,
    /// Seqno of the first packet (seqnos are per output stream, not per block).
    pub first_seqno: i64,
}

impl WriteBlockParams {
    /// A request with the given pipeline and stage, default checksum, no storage ids, zero
    /// byte counts and GS, offset 0, seqno 0.
    pub fn new(
        block: ExtendedBlockProto,
        client_name: impl Into<String>,
        pipeline: Vec<DatanodeInfoProto>,
        stage: BlockConstructionStage,
    ) -> Self {
        WriteBlockParams {
            block,
            token: None,
            client_name: client_name.into(),
            pipeline,
            storage_types: Vec::new(),
            storage_ids: Vec::new(),
            stage,
            min_bytes_rcvd: 0,
            max_bytes_rcvd: 0,
            latest_generation_stamp: 0,
            source: None,
            checksum: DataChecksum::default(),
            start_offset: 0,
            first_seqno: 0,
        }
    }

    /// True for TRANSFER_RBW / TRANSFER_FINALIZED.
    pub fn is_transfer(&self) -> bool {
        matches!(
            self.stage,
            BlockConstructionStage::TransferRbw | BlockConstructionStage::TransferFinalized
        )
    }

    /// True if the receiver sends a connect ack and per-packet acks: a client (non-empty
    /// clientName) doing anything but a transfer.
    pub fn expects_acks(&self) -> bool {
        !self.client_name.is_empty() && !self.is_transfer()
    }

    /// The pipeline index a failed write blames, the way the Java client reads it: a connect
    /// ack's firstBadLink names a node by "ip:xferPort" (empty means node 0), a pipeline ack
    /// names the index directly. `None` for other errors (connection failures: the caller
    /// decides, Java blames the first node).
    pub fn failed_node_index(&self, err: &TransferError) -> Option<usize> {
        match err {
            TransferError::Remote { first_bad_link, .. } => {
                if first_bad_link.is_empty() {
                    return Some(0);
                }
                self.pipeline
                    .iter()
                    .position(|dn| xfer_addr(dn) == *first_bad_link)
            }
            TransferError::Pipeline { index, .. } => Some(*index),
            _ => None,
        }
    }

    fn storage_type(&self, i: usize) -> i32 {
        self.storage_types
            .get(i)
            .copied()
            .unwrap_or(StorageTypeProto::Disk as i32)
    }

    /// The `OpWriteBlockProto` for `pipeline[0]`.
    pub fn to_proto(&self) -> OpWriteBlockProto {
        let n = self.pipeline.len();
        OpWriteBlockProto {
            header: client_header(&self.block, self.token.as_ref(), &self.client_name),
            targets: self.pipeline.iter().skip(1).cloned().collect(),
            source: self.source.clone(),
            stage: self.stage as i32,
            pipeline_size: n as u32,
            min_bytes_rcvd: self.min_bytes_rcvd,
            max_bytes_rcvd: self.max_bytes_rcvd,
            latest_generation_stamp: self.latest_generation_stamp,
            requested_checksum: self.checksum.to_proto(),
            caching_strategy: Some(CachingStrategyProto::default()),
            storage_type: Some(self.storage_type(0)),
            target_storage_types: (1..n).map(|i| self.storage_type(i)).collect(),
            allow_lazy_persist: None,
            pinning: Some(false),
            target_pinnings: vec![false; n.saturating_sub(1).max(1)],
            storage_id: self.storage_ids.first().cloned(),
            target_storage_ids: self.storage_ids.iter().skip(1).cloned().collect(),
        }
    }
}
