//! Rebuilding the replica map of one block pool on one volume from its files at start.

use std::collections::HashMap;
use std::fs;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::checksum::ChecksumSpec;
use crate::error::StorageError;
use crate::meta;
use crate::replica::{ReplicaInfo, ReplicaState};
use crate::volume::Volume;

/// Scans `finalized/` (→ FINALIZED) and `rbw/` (→ RWR: a writer that was cut off by the restart)
/// and empties `tmp/` (TEMPORARY replicas do not survive a restart).
pub fn scan_pool(vol: &Volume, bpid: &str) -> Result<Vec<ReplicaInfo>, StorageError> {
    vol.create_pool_dirs(bpid)?;
    let tmp = vol.state_dir(bpid, ReplicaState::Temporary);
    for e in fs::read_dir(&tmp)? {
        let e = e?;
        if let Err(err) = fs::remove_file(e.path()) {
            tracing::warn!(path = %e.path().display(), %err, "cannot remove temporary replica file");
        }
    }
    let mut out = scan_dir(
        vol,
        &vol.state_dir(bpid, ReplicaState::Finalized),
        ReplicaState::Finalized,
    )?;
    out.extend(scan_dir(
        vol,
        &vol.state_dir(bpid, ReplicaState::Rbw),
        ReplicaState::Rwr,
    )?);
    Ok(out)
}

fn scan_dir(
    vol: &Volume,
    dir: &Path,
    state: ReplicaState,
) -> Result<Vec<ReplicaInfo>, StorageError> {
    let mut blocks: HashMap<u64, u64> = HashMap::new();
    let mut metas: HashMap<u64, Vec<u64>> = HashMap::new();
    for e in fs::read_dir(dir)? {
        let e = e?;
        let Some(name) = e.file_name().to_str().map(str::to_string) else {
            continue;
        };
        if let Some(id) = meta::parse_block_file_name(&name) {
            blocks.insert(id, e.metadata()?.len());
        } else if let Some((id, gs)) = meta::parse_meta_file_name(&name) {
            metas.entry(id).or_default().push(gs);
        }
    }
    let mut out = Vec::new();
    for (id, len) in blocks {
        let Some(mut gss) = metas.remove(&id) else {
            tracing::warn!(dir = %dir.display(), id, "block file without meta file; ignored");
            continue;
        };
        gss.sort_unstable();
        let Some(gs) = gss.pop() else { continue };
        for stale in gss {
            let p = dir.join(meta::meta_file_name(id, stale));
            tracing::warn!(path = %p.display(), "removing stale meta file");
            let _ = fs::remove_file(p);
        }
        let meta_path = dir.join(meta::meta_file_name(id, gs));
        let read = if state == ReplicaState::Finalized {
            read_meta_header(&meta_path).map(|(spec, _)| (spec, len))
        } else {
            // An interrupted writer: only the bytes its meta file vouches for count.
            checksummed_length(&dir.join(meta::block_file_name(id)), &meta_path)
        };
        let (spec, num_bytes) = match read {
            Ok(v) => v,
            Err(err) => {
                tracing::warn!(path = %meta_path.display(), %err, "unreadable meta file; replica ignored");
                continue;
            }
        };
        out.push(ReplicaInfo {
            id,
            gs,
            state,
            num_bytes,
            volume: vol.index,
            checksum: spec,
            writer_epoch: 0,
            recovery: None,
        });
    }
    for (id, gss) in metas {
        for gs in gss {
            tracing::warn!(dir = %dir.display(), id, gs, "meta file without block file; ignored");
        }
    }
    Ok(out)
}

/// The length of an unfinished replica (RBW, RWR) that its meta file vouches for: at most the
/// bytes covered by the CRCs that reached the meta file, less the last chunk when its bytes
/// do not match its CRC (a write cut off between the data and its checksum). Used on restart
/// and by block recovery (initReplicaRecovery). Returns the replica's checksum too.
pub fn checksummed_length(block: &Path, meta: &Path) -> Result<(ChecksumSpec, u64), StorageError> {
    let (spec, meta_len) = read_meta_header(meta)?;
    let b = fs::File::open(block)?;
    let block_len = b.metadata()?.len();
    let size = spec.kind.size() as u64;
    if size == 0 {
        return Ok((spec, block_len));
    }
    let crcs = meta_len.saturating_sub(meta::META_HEADER_LEN) / size;
    let len = block_len.min(crcs.saturating_mul(spec.bpc()));
    if len == 0 {
        return Ok((spec, 0));
    }
    let last = (len - 1) / spec.bpc();
    let start = last * spec.bpc();
    let mut data = vec![0u8; (len - start) as usize];
    b.read_exact_at(&mut data, start)?;
    let mut stored = [0u8; 4];
    fs::File::open(meta)?.read_exact_at(&mut stored, meta::crc_offset(&spec, last))?;
    if spec.crc(&data).to_be_bytes() != stored {
        tracing::warn!(
            path = %block.display(),
            len,
            valid = start,
            "last chunk does not match its checksum; replica cut to the chunk before it"
        );
        return Ok((spec, start));
    }
    Ok((spec, len))
}

pub fn read_meta_header(path: &Path) -> Result<(ChecksumSpec, u64), StorageError> {
    let mut f = fs::File::open(path)?;
    let len = f.metadata()?.len();
    let mut h = [0u8; 7];
    f.read_exact(&mut h)?;
    Ok((meta::decode_header(&h)?, len))
}
