//! The superuser listings that replace a walk: `-list-orphans`, `-list-corruptfileblocks`
//! and `-blockId`.

use std::fmt::Write as _;

use rhdfs_blockmanager::CorruptReason;
use rhdfs_blockmanager::views::ReplicaStatus;

use super::options::*;
use crate::namesystem::Namesystem;

/// `-list-orphans` (rhdfs, superuser only): one line per held replica of a block the
/// namespace does not know — "blk_<id>_<gs>", its length, the DataNode, the storage, why
/// it is held (FUTURE: generation stamp newer than the namespace's, kept until
/// `dfsadmin -releaseOrphans`; STARTUP: in a storage's first report, deleted after the
/// start-up delay) and for how long — then the totals.
pub(super) fn list_orphans(fs: &Namesystem, out: &mut String) {
    let bm = fs.block_manager();
    let held = bm.held_orphans();
    let now = fs.clock().monotonic();
    let names = bm.datanode_names();
    for r in &held {
        let node = names
            .get(&*r.dn_uuid)
            .cloned()
            .unwrap_or_else(|| r.dn_uuid.to_string());
        let _ = writeln!(
            out,
            "{}:blk_{}_{}\tlen={}\t{node}\t{}\t{}\theld {}s",
            fs.block_pool_id(),
            r.block.id,
            r.block.gs,
            r.block.num_bytes,
            r.storage_id,
            r.class.name(),
            now.saturating_sub(r.since).as_secs()
        );
    }
    let c = bm.orphan_counts();
    let _ = writeln!(
        out,
        "The NameNode holds {} orphan replica(s) ({} B), {} with generation stamps in future ({} B).",
        c.replicas, c.bytes, c.future_replicas, c.future_bytes
    );
}

/// `-list-corruptfileblocks` (superuser only): "Cookie:\t<n>", one "blk_<id>\t<path>"
/// line per block with no good replica under `path` (at most
/// [`MAX_CORRUPT_FILE_BLOCKS_RETURNED`] per request), then the count line. The cookie is
/// the number of corrupt blocks looked at so far, as Hadoop's listCorruptFileBlocks.
pub(super) fn list_corrupt_file_blocks(fs: &Namesystem, opts: &FsckOptions, out: &mut String) {
    let blocks = fs.block_manager().corrupt_or_missing_blocks();
    let mut lines = Vec::new();
    let cookie = if blocks.is_empty() {
        opts.start_block_after.clone().unwrap_or_else(|| "0".into())
    } else {
        let skip: usize = opts
            .start_block_after
            .as_deref()
            .and_then(|c| c.trim().parse::<i64>().ok())
            .map_or(0, |c| c.max(0) as usize);
        let mut seen = skip.min(blocks.len());
        'outer: for chunk in blocks[seen..].chunks(LIST_BATCH) {
            let found: Vec<(u64, Option<String>)> = fs.with_ns_op("fsck", |ns| {
                chunk
                    .iter()
                    .map(|b| {
                        let dir = ns.dir();
                        let path = ns
                            .block_owner(b.id)
                            .filter(|&inode| dir.contains(inode))
                            .map(|inode| dir.path_of(inode));
                        (b.id, path)
                    })
                    .collect()
            });
            for (id, path) in found {
                seen += 1;
                let Some(path) = path else { continue };
                if is_parent_entry(&path, &opts.path) {
                    lines.push(format!("blk_{id}\t{path}"));
                    if lines.len() >= MAX_CORRUPT_FILE_BLOCKS_RETURNED {
                        break 'outer;
                    }
                }
            }
        }
        seen.to_string()
    };
    let filler = if !lines.is_empty() {
        lines.len().to_string()
    } else if cookie == "0" {
        "no".to_string()
    } else {
        "no more".to_string()
    };
    let _ = writeln!(out, "Cookie:\t{cookie}");
    for l in &lines {
        let _ = writeln!(out, "{l}");
    }
    let _ = writeln!(
        out,
        "\n\nThe filesystem under path '{}' has {filler} CORRUPT files",
        opts.path
    );
    out.push('\n');
}

/// Block.getBlockId: `blk_<id>` or `blk_<id>_<gs>.meta`, else 0.
pub(super) fn parse_block_id(s: &str) -> u64 {
    let Some(rest) = s.strip_prefix("blk_") else {
        return 0;
    };
    let (id, tail) = match rest.find('_') {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let tail_ok = tail.is_none_or(|t| {
        t.strip_suffix(".meta")
            .is_some_and(|gs| !gs.is_empty() && gs.bytes().all(|c| c.is_ascii_digit()))
    });
    let digits = id.strip_prefix('-').unwrap_or(id);
    if !tail_ok || digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return 0;
    }
    id.parse::<i64>().map_or(0, |v| v as u64)
}

/// One block of `-blockId` (Hadoop's blockIdCK).
pub(super) fn block_id_check(fs: &Namesystem, blk: &str, out: &mut String) {
    let id = parse_block_id(blk);
    let view = fs.block_manager().block_views(&[id]).pop().flatten();
    let owner = view.as_ref().and_then(|v| {
        fs.with_ns_op("fsck", |ns| {
            let dir = ns.dir();
            let inode = ns.block_owner(v.block.id).filter(|&i| dir.contains(i))?;
            let repl = dir
                .get(inode)
                .and_then(|i| i.as_file())
                .map_or(v.replication, |f| f.replication());
            Some((dir.path_of(inode), repl))
        })
    });
    let (Some(v), Some((path, expected))) = (view, owner) else {
        let _ = writeln!(out, "Block {blk} {NONEXISTENT_STATUS}");
        tracing::warn!("Block {blk} {NONEXISTENT_STATUS}");
        return;
    };
    let _ = writeln!(out, "Block Id: {blk}");
    let _ = writeln!(out, "Block belongs to: {path}");
    let _ = writeln!(out, "No. of Expected Replica: {expected}");
    let _ = writeln!(out, "No. of live Replica: {}", v.live);
    let _ = writeln!(out, "No. of excess Replica: {}", v.excess);
    let _ = writeln!(out, "No. of stale Replica: {}", v.stale);
    let _ = writeln!(out, "No. of decommissioned Replica: {}", v.decommissioned);
    let _ = writeln!(out, "No. of decommissioning Replica: {}", v.decommissioning);
    let _ = writeln!(out, "No. of corrupted Replica: {}", v.corrupt);
    for r in v.replicas.iter().rev() {
        let status = match r.status {
            ReplicaStatus::Corrupt => format!(
                "{CORRUPT_STATUS}\t ReasonCode: {}",
                r.corrupt_reason
                    .unwrap_or(CorruptReason::CorruptionReported)
                    .label()
            ),
            ReplicaStatus::Decommissioned => DECOMMISSIONED_STATUS.to_string(),
            ReplicaStatus::Decommissioning => DECOMMISSIONING_STATUS.to_string(),
            _ => HEALTHY_STATUS.to_string(),
        };
        let _ = writeln!(
            out,
            "Block replica on datanode/rack: {}{} {status}",
            r.host_name, r.rack
        );
    }
}

/// Hadoop's isParentEntry: `src` is `parent` or below it.
pub(super) fn is_parent_entry(src: &str, parent: &str) -> bool {
    if !src.starts_with(parent) {
        return false;
    }
    src.len() == parent.len() || parent == "/" || src.as_bytes().get(parent.len()) == Some(&b'/')
}
