//! Block report formats (BlockListAsLongs) and the per-replica classification of
//! reportDiff: add, under construction, invalidate, corrupt, or nothing to do.

use bytes::{Buf, Bytes, BytesMut};

use crate::block::{Block, BlockInfo, BlockUcState, CorruptReason, ReplicaState, StorageIdx};
use crate::error::BlockManagerError;

/// One replica as a DataNode reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReportedReplica {
    pub block: Block,
    pub state: ReplicaState,
}

const DELIMITER: u64 = u64::MAX; // -1 as a Java long
const NUM_BYTES_MASK: u64 = (1 << 48) - 1;
const REPLICA_STATE_MASK: u64 = 0xF;

fn malformed(msg: impl Into<String>) -> BlockManagerError {
    BlockManagerError::MalformedReport(msg.into())
}

/// Decodes the long-list format (`StorageBlockReportProto.blocks`):
/// `[numFinalized, numUc, (id, len, gs) × numFinalized, -1, -1, -1, (id, len, gs, state) × numUc]`.
/// The delimiter may be absent when there are no under-construction replicas.
pub fn decode_longs(longs: &[u64]) -> Result<Vec<ReportedReplica>, BlockManagerError> {
    if longs.is_empty() {
        return Ok(Vec::new());
    }
    if longs.len() < 2 {
        return Err(malformed("block list shorter than its header"));
    }
    let nf = usize::try_from(longs[0]).map_err(|_| malformed("finalized count too large"))?;
    let nuc =
        usize::try_from(longs[1]).map_err(|_| malformed("under-construction count too large"))?;
    let fin_end = nf
        .checked_mul(3)
        .and_then(|x| x.checked_add(2))
        .ok_or_else(|| malformed("finalized count too large"))?;
    let uc_len = nuc
        .checked_mul(4)
        .ok_or_else(|| malformed("under-construction count too large"))?;
    let needed = if nuc == 0 && longs.len() == fin_end {
        fin_end
    } else {
        fin_end
            .checked_add(3)
            .and_then(|x| x.checked_add(uc_len))
            .ok_or_else(|| malformed("block counts too large"))?
    };
    if longs.len() < needed {
        return Err(malformed(format!(
            "{} longs for {nf} finalized and {nuc} under-construction replicas",
            longs.len()
        )));
    }
    let mut out = Vec::with_capacity(nf + nuc);
    for t in longs[2..fin_end].chunks_exact(3) {
        out.push(ReportedReplica {
            block: Block::new(t[0], t[2], t[1]),
            state: ReplicaState::Finalized,
        });
    }
    if needed > fin_end {
        if longs[fin_end..fin_end + 3] != [DELIMITER; 3] {
            return Err(malformed("Invalid delimiter block"));
        }
        for q in longs[fin_end + 3..needed].chunks_exact(4) {
            let state = ReplicaState::from_value(q[3])
                .ok_or_else(|| malformed(format!("replica state {}", q[3])))?;
            out.push(ReportedReplica {
                block: Block::new(q[0], q[2], q[1]),
                state,
            });
        }
    }
    Ok(out)
}

/// Encodes replicas in the long-list format (what our DataNode sends).
pub fn encode_longs(replicas: &[ReportedReplica]) -> Vec<u64> {
    let fin: Vec<&ReportedReplica> = replicas
        .iter()
        .filter(|r| r.state == ReplicaState::Finalized)
        .collect();
    let uc: Vec<&ReportedReplica> = replicas
        .iter()
        .filter(|r| r.state != ReplicaState::Finalized)
        .collect();
    let mut v = Vec::with_capacity(2 + 3 * (fin.len() + 1) + 4 * uc.len());
    v.push(fin.len() as u64);
    v.push(uc.len() as u64);
    for r in fin {
        v.extend([r.block.id, r.block.num_bytes, r.block.gs]);
    }
    v.extend([DELIMITER; 3]);
    for r in uc {
        v.extend([r.block.id, r.block.num_bytes, r.block.gs, r.state as u64]);
    }
    v
}

fn read_varint(buf: &mut Bytes) -> Result<u64, BlockManagerError> {
    prost::encoding::decode_varint(buf).map_err(|e| malformed(e.to_string()))
}

/// Decodes the buffer format (`StorageBlockReportProto.blocksBuffers`, `numberOfBlocks`):
/// the buffers concatenated hold, per replica, zig-zag varint id, varint length (low 48
/// bits), varint generation stamp, varint state (low 4 bits).
pub fn decode_buffers(
    num_blocks: u64,
    buffers: &[Bytes],
) -> Result<Vec<ReportedReplica>, BlockManagerError> {
    let mut buf = if buffers.len() == 1 {
        buffers[0].clone()
    } else {
        let mut all = BytesMut::with_capacity(buffers.iter().map(|b| b.len()).sum());
        for b in buffers {
            all.extend_from_slice(b);
        }
        all.freeze()
    };
    // Each replica takes at least 4 bytes; a count beyond that is a lie.
    if num_blocks > (buf.len() as u64) / 4 + 1 {
        return Err(malformed(format!(
            "{num_blocks} blocks claimed in {} bytes",
            buf.len()
        )));
    }
    let mut out = Vec::with_capacity(num_blocks as usize);
    for _ in 0..num_blocks {
        let zz = read_varint(&mut buf)?;
        let id = ((zz >> 1) as i64 ^ -((zz & 1) as i64)) as u64;
        let len = read_varint(&mut buf)? & NUM_BYTES_MASK;
        let gs = read_varint(&mut buf)?;
        let st = read_varint(&mut buf)? & REPLICA_STATE_MASK;
        let state =
            ReplicaState::from_value(st).ok_or_else(|| malformed(format!("replica state {st}")))?;
        out.push(ReportedReplica {
            block: Block::new(id, gs, len),
            state,
        });
    }
    if buf.has_remaining() {
        tracing::debug!(
            extra = buf.remaining(),
            "trailing bytes after block report buffer"
        );
    }
    Ok(out)
}

/// Encodes replicas in the buffer format (for tests and DataNodes that prefer it).
pub fn encode_buffer(replicas: &[ReportedReplica]) -> Bytes {
    let mut out = BytesMut::new();
    for r in replicas {
        let id = r.block.id as i64;
        prost::encoding::encode_varint(((id << 1) ^ (id >> 63)) as u64, &mut out);
        prost::encoding::encode_varint(r.block.num_bytes, &mut out);
        prost::encoding::encode_varint(r.block.gs, &mut out);
        prost::encoding::encode_varint(r.state as u64, &mut out);
    }
    out.freeze()
}

/// What to do with one reported replica.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReportAction {
    /// A good finalized replica not yet recorded on this node: add it.
    Add,
    /// A replica of a block still being written: record it with its state.
    UnderConstruction,
    /// The block is unknown (no longer in the namespace): delete the replica.
    Invalidate,
    /// Wrong generation stamp, length or state for the block's state.
    Corrupt(CorruptReason, String),
    /// Already known and fine, or already scheduled for deletion.
    Keep,
}

/// Hadoop's corruption rules by reported replica state and stored block state.
pub fn check_corrupt(
    reported: &ReportedReplica,
    stored: &BlockInfo,
) -> Option<(CorruptReason, String)> {
    let sb = &stored.block(reported.block.id);
    let rb = &reported.block;
    match reported.state {
        ReplicaState::Finalized => match stored.state {
            BlockUcState::Complete | BlockUcState::Committed => {
                if sb.gs != rb.gs {
                    Some((
                        CorruptReason::GenstampMismatch,
                        format!(
                            "block is {} and reported genstamp {} does not match genstamp in block map {}",
                            stored.state, rb.gs, sb.gs
                        ),
                    ))
                } else if sb.num_bytes != rb.num_bytes {
                    Some((
                        CorruptReason::SizeMismatch,
                        format!(
                            "block is {} and reported length {} does not match length in block map {}",
                            stored.state, rb.num_bytes, sb.num_bytes
                        ),
                    ))
                } else {
                    None
                }
            }
            BlockUcState::UnderConstruction | BlockUcState::UnderRecovery => {
                if sb.gs > rb.gs {
                    Some((
                        CorruptReason::GenstampMismatch,
                        format!(
                            "block is {} and reported genstamp {} is older than genstamp in block map {}",
                            stored.state, rb.gs, sb.gs
                        ),
                    ))
                } else {
                    None
                }
            }
        },
        ReplicaState::Rbw | ReplicaState::Rwr => {
            if !stored.is_complete() {
                None
            } else if sb.gs != rb.gs {
                Some((
                    CorruptReason::GenstampMismatch,
                    format!(
                        "reported {} replica with genstamp {} does not match COMPLETE block's genstamp in block map {}",
                        reported.state, rb.gs, sb.gs
                    ),
                ))
            } else if reported.state == ReplicaState::Rbw {
                // A late RBW of a just-completed block: a FINALIZED report will follow.
                None
            } else {
                Some((
                    CorruptReason::InvalidState,
                    format!("reported replica has invalid state {}", reported.state),
                ))
            }
        }
        ReplicaState::Rur | ReplicaState::Temporary => Some((
            CorruptReason::InvalidState,
            format!(
                "Unexpected replica state {} for block: {}",
                reported.state, sb
            ),
        )),
    }
}

/// Hadoop's isBlockUnderConstruction: does this replica belong to the write in progress?
pub fn is_under_construction(reported: ReplicaState, stored: &BlockInfo) -> bool {
    match reported {
        ReplicaState::Finalized => matches!(
            stored.state,
            BlockUcState::UnderConstruction | BlockUcState::UnderRecovery
        ),
        ReplicaState::Rbw | ReplicaState::Rwr => !stored.is_complete(),
        ReplicaState::Rur | ReplicaState::Temporary => false,
    }
}

/// Classifies one reported replica from a DataNode; `on_node` tells whether a storage is
/// one of that node's (`BlocksMap::on_node`).
pub fn classify(
    reported: &ReportedReplica,
    stored: Option<&BlockInfo>,
    on_node: &dyn Fn(StorageIdx) -> bool,
    scheduled_for_deletion: bool,
) -> ReportAction {
    let Some(stored) = stored else {
        return ReportAction::Invalidate;
    };
    if scheduled_for_deletion {
        return ReportAction::Keep;
    }
    if let Some((reason, msg)) = check_corrupt(reported, stored) {
        return ReportAction::Corrupt(reason, msg);
    }
    if is_under_construction(reported.state, stored) {
        return ReportAction::UnderConstruction;
    }
    if reported.state == ReplicaState::Finalized {
        let known_good = stored.replicas.iter().any(|r| {
            r.corrupt().is_none() && r.state() == ReplicaState::Finalized && on_node(r.storage())
        });
        if !known_good {
            return ReportAction::Add;
        }
    }
    ReportAction::Keep
}
