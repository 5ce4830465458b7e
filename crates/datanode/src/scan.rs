//! Rebuilding the replica map of one block pool on one volume from its files at start.

use std::collections::HashMap;
use std::fs;
use std::io::Read;
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
        let (spec, meta_len) = match read_meta_header(&meta_path) {
            Ok(v) => v,
            Err(err) => {
                tracing::warn!(path = %meta_path.display(), %err, "unreadable meta file; replica ignored");
                continue;
            }
        };
        let mut num_bytes = len;
        if state != ReplicaState::Finalized && spec.kind.size() > 0 {
            // An interrupted writer: only bytes whose chunk CRC reached the meta file are valid.
            let crcs = meta_len.saturating_sub(meta::META_HEADER_LEN) / spec.kind.size() as u64;
            num_bytes = num_bytes.min(crcs * spec.bpc());
        }
        out.push(ReplicaInfo {
            id,
            gs,
            state,
            num_bytes,
            volume: vol.index,
            checksum: spec,
            writer_epoch: 0,
        });
    }
    for (id, gss) in metas {
        for gs in gss {
            tracing::warn!(dir = %dir.display(), id, gs, "meta file without block file; ignored");
        }
    }
    Ok(out)
}

pub fn read_meta_header(path: &Path) -> Result<(ChecksumSpec, u64), StorageError> {
    let mut f = fs::File::open(path)?;
    let len = f.metadata()?.len();
    let mut h = [0u8; 7];
    f.read_exact(&mut h)?;
    Ok((meta::decode_header(&h)?, len))
}
