//! fsck: walks a subtree and reports in Hadoop's NamenodeFsck text format, as the
//! NameNode's `/fsck` HTTP endpoint serves it.
//!
//! The namespace lock is taken for one batch of directory entries at a time
//! (`LIST_BATCH`), and the block manager's for one chunk of blocks at a time (through
//! `BlockManager::block_views`), so a walk of a large namespace never holds either lock
//! for long.
//!
//! The caller's permissions are checked as Hadoop's fsck meets them through
//! getFileInfo/getListing/getBlockLocations (x on the ancestors, r-x on every directory
//! walked, r on every file checked); `-blockId` and `-list-corruptfileblocks` need the
//! superuser. `-move` copies the remains of corrupt files to /lost+found
//! ([`lost_found`]), `-storagepolicies` adds the summary of [`policy`].
//!
//! [`dfsadmin`] holds the client side of `dfsadmin -report` (the report text from
//! ClientProtocol answers).

pub mod dfsadmin;
pub mod format;
mod listings;
pub mod lost_found;
mod options;
pub mod policy;
pub mod slow_details;
mod walker;

pub use options::{
    CORRUPT_STATUS, DECOMMISSIONED_STATUS, DECOMMISSIONING_STATUS, FAILURE_STATUS, FsckOptions,
    FsckRequester, FsckSettings, HEALTHY_STATUS, LIST_BATCH, MAX_CORRUPT_FILE_BLOCKS_RETURNED,
    NONEXISTENT_STATUS,
};

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

use crate::fsdir::permission::{Caller, Check, READ, not_a_directory};
use crate::fsdir::{FsPath, InodeKind};
use crate::namesystem::Namesystem;
use format::{FsckResult, java_date};
use lost_found::{LostFoundTarget, MoveJob, MoveOutcome};
use policy::StoragePolicySummary;

use listings::{block_id_check, list_corrupt_file_blocks, list_orphans};
use walker::{Entry, Walker};

fn ended(fs: &Namesystem, started: Instant) -> String {
    format!(
        "FSCK ended at {} in {} milliseconds\n",
        java_date(fs.now().wall_ms),
        started.elapsed().as_millis()
    )
}

/// Hadoop's ending when fsck throws: the end line, the message, then FAILED.
fn fail(out: &mut String, fs: &Namesystem, started: Instant, path: &str, msg: &str) {
    out.push_str(&ended(fs, started));
    let _ = writeln!(out, "{msg}");
    let _ = write!(out, "\n\nFsck on path '{path}' {FAILURE_STATUS}");
}

/// The superuser check of checkSuperuserPrivilege (passes when permissions are off).
fn superuser_denied(fs: &Namesystem, caller: &Caller) -> Option<String> {
    (!caller.superuser && fs.with_ns(|ns| ns.config().permissions_enabled)).then(|| {
        format!(
            "Access denied for user {}. Superuser privilege is required",
            caller.user
        )
    })
}

/// What the path names.
enum Target {
    Dir(u64),
    File(Entry),
    Missing,
}

/// getFileInfo of the fsck path: traverse permission needed.
fn resolve(fs: &Namesystem, caller: &Caller, path: &str) -> Result<Target, String> {
    let p = FsPath::parse(path).map_err(|e| e.to_string())?;
    fs.with_ns_op("fsck", |ns| {
        let r = ns.resolve(&p);
        if let Some(e) = not_a_directory(&p, &r, false) {
            return Err(e.to_string());
        }
        let checker = ns.checker(caller);
        checker.check_traverse(&r).map_err(|e| e.to_string())?;
        let dir = ns.dir();
        let Some(id) = r.last() else {
            return Ok(Target::Missing);
        };
        Ok(match dir.get(id) {
            Some(inode) => match &inode.kind {
                InodeKind::Dir(_) => Target::Dir(id),
                InodeKind::File(f) => {
                    let read = Check {
                        access: Some(READ),
                        ..Check::default()
                    };
                    Target::File(Entry::File {
                        name: Vec::new(),
                        length: f.length(),
                        replication: f.replication(),
                        mode: inode.perm.mode,
                        blocks: f.blocks.to_vec(),
                        open: f.uc().is_some(),
                        denied: checker.check(&r, read).err().map(|e| e.to_string()),
                    })
                }
            },
            None => Target::Missing,
        })
    })
}

/// The state a walk leaves for the steps that follow it (copies, deletes, summary).
struct Walked {
    out: String,
    res: FsckResult,
    total_dirs: u64,
    to_delete: Vec<String>,
    to_move: Vec<MoveJob>,
    storage: Option<StoragePolicySummary>,
}

/// Everything up to the end of the walk. `Err` is a finished report.
fn walk(
    fs: &Namesystem,
    opts: &FsckOptions,
    settings: FsckSettings,
    who: &FsckRequester,
    started: Instant,
) -> Result<Walked, String> {
    let mut out = String::new();
    if opts.show_progress {
        out.push_str("The fsck switch -showprogress is deprecated and no longer has any effect. Progress is now shown by default.\n");
        tracing::warn!(
            "The fsck switch -showprogress is deprecated and no longer has any effect. Progress is now shown by default."
        );
    }
    let user = &who.caller.user;
    if let Some(ids) = &opts.block_ids {
        if let Some(msg) = superuser_denied(fs, &who.caller) {
            fail(&mut out, fs, started, &opts.path, &msg);
            return Err(out);
        }
        let _ = writeln!(
            out,
            "FSCK started by {user} (auth:SIMPLE) from /{} at {}",
            who.remote_ip,
            java_date(fs.now().wall_ms)
        );
        for blk in ids {
            if !blk.contains("blk_") {
                let _ = writeln!(out, "Incorrect blockId format: {blk}");
                continue;
            }
            out.push('\n');
            block_id_check(fs, blk, &mut out);
        }
        tracing::info!(%user, from = %who.remote_ip, ids = ?ids, "FSCK started for blockIds");
        return Err(out);
    }
    let _ = writeln!(
        out,
        "FSCK started by {user} (auth:SIMPLE) from /{} for path {} at {}",
        who.remote_ip,
        opts.path,
        java_date(fs.now().wall_ms)
    );
    tracing::info!(%user, from = %who.remote_ip, path = %opts.path, "FSCK started");
    let target = match resolve(fs, &who.caller, &opts.path) {
        Ok(t) => t,
        Err(e) => {
            fail(&mut out, fs, started, &opts.path, &e);
            return Err(out);
        }
    };
    if matches!(target, Target::Missing) {
        let _ = write!(out, "\n\nPath '{}' {NONEXISTENT_STATUS}", opts.path);
        return Err(out);
    }
    if opts.list_orphans {
        if let Some(msg) = superuser_denied(fs, &who.caller) {
            fail(&mut out, fs, started, &opts.path, &msg);
            return Err(out);
        }
        list_orphans(fs, &mut out);
        return Err(out);
    }
    if opts.list_corrupt_file_blocks {
        if let Some(msg) = superuser_denied(fs, &who.caller) {
            fail(&mut out, fs, started, &opts.path, &msg);
            return Err(out);
        }
        list_corrupt_file_blocks(fs, opts, &mut out);
        return Err(out);
    }
    let mut w = Walker {
        fs,
        opts,
        caller: &who.caller,
        settings,
        pool: fs.block_pool_id().to_string(),
        out,
        res: FsckResult::default(),
        total_dirs: 0,
        to_delete: Vec::new(),
        to_move: Vec::new(),
        storage: opts.storage_policies.then(StoragePolicySummary::default),
        error: None,
    };
    match target {
        Target::Dir(id) => w.walk_dir(opts.path.clone(), id),
        Target::File(Entry::File {
            length,
            replication,
            mode,
            blocks,
            open,
            denied,
            ..
        }) => match denied {
            Some(e) => w.error = Some(e),
            None => {
                w.tick();
                w.check_file(&opts.path, length, replication, mode, &blocks, open);
            }
        },
        Target::File(Entry::Dir { .. }) | Target::Missing => {}
    }
    if let Some(e) = w.error.take() {
        let mut out = w.out;
        fail(&mut out, fs, started, &opts.path, &e);
        return Err(out);
    }
    Ok(Walked {
        out: w.out,
        res: w.res,
        total_dirs: w.total_dirs,
        to_delete: w.to_delete,
        to_move: w.to_move,
        storage: w.storage,
    })
}

/// The deletes and the summary after the walk (and the copies of `-move`).
fn finish(
    fs: &Namesystem,
    opts: &FsckOptions,
    settings: FsckSettings,
    who: &FsckRequester,
    started: Instant,
    w: Walked,
    moved: MoveOutcome,
) -> String {
    let mut internal_error = moved.internal_error;
    for p in &w.to_delete {
        // Never lose data: with -move, a file is deleted only once its remains are in
        // /lost+found.
        if opts.move_ && !moved.copied.contains(p) {
            tracing::warn!("Fsck: not deleting {p}: its remains were not copied to /lost+found");
            continue;
        }
        // On a blocking thread: the delete's blocks go once its edit is durable.
        let deleted = fs
            .delete(&who.caller, p, true)
            .and_then(|a| tokio::runtime::Handle::current().block_on(fs.commit(a)));
        match deleted {
            Ok(_) => tracing::info!("Fsck: deleted corrupt file {p}"),
            Err(e) => {
                tracing::error!("Fsck: error deleting corrupted file {p}: {e}");
                internal_error = true;
            }
        }
    }
    let nodes = fs.block_manager().node_counts();
    let healthy = w.res.is_healthy();
    let mut out = w.out;
    let _ = write!(
        out,
        "\nStatus: {}\n",
        if healthy { "HEALTHY" } else { "CORRUPT" }
    );
    let _ = writeln!(out, " Number of data-nodes:\t{}", nodes.live);
    let _ = writeln!(out, " Number of racks:\t\t{}", nodes.racks);
    let _ = writeln!(out, " Total dirs:\t\t\t{}", w.total_dirs);
    let _ = writeln!(out, " Total symlinks:\t\t0");
    // rhdfs's held orphans, only when there are some (the report reads as Hadoop's
    // otherwise): replicas the namespace does not know, kept on the DataNodes.
    let orphans = fs.orphan_counts();
    if orphans.replicas > 0 {
        let _ = writeln!(
            out,
            " Held orphan replicas:\t\t{} ({} B), {} with generation stamps in future (rhdfs fsck / -list-orphans)",
            orphans.replicas, orphans.bytes, orphans.future_replicas
        );
    }
    // rhdfs: decommissions that cannot finish, with the reason and the fix.
    for note in fs.block_manager().decommission_notes() {
        let _ = writeln!(out, " Decommission blocked:\t{note}");
    }
    let _ = writeln!(out, "\nReplicated Blocks:");
    let _ = writeln!(
        out,
        "{}",
        w.res
            .replicated_text(settings.default_replication, settings.min_replication)
    );
    let _ = writeln!(out, "\nErasure Coded Block Groups:");
    let _ = writeln!(out, "{}", FsckResult::default().erasure_coded_text());
    if let Some(s) = &w.storage {
        out.push_str(&s.text());
    }
    out.push_str(&ended(fs, started));
    if internal_error {
        fail(
            &mut out,
            fs,
            started,
            &opts.path,
            "fsck encountered internal errors!",
        );
        return out;
    }
    let _ = write!(
        out,
        "\n\nThe filesystem under path '{}' {}",
        opts.path,
        if healthy {
            HEALTHY_STATUS
        } else {
            CORRUPT_STATUS
        }
    );
    out
}

/// Runs fsck and returns the whole report text. The walk and the deletes run on
/// blocking threads (short lock holds, but a long walk); `-move` copies run here.
/// `lost_found` says how to reach the NameNode's own RPC server (needed by `-move`).
pub async fn run(
    fs: Arc<Namesystem>,
    opts: FsckOptions,
    settings: FsckSettings,
    who: FsckRequester,
    lost_found: Option<LostFoundTarget>,
) -> String {
    let started = Instant::now();
    let opts = Arc::new(opts);
    let who = Arc::new(who);
    let walked = {
        let (fs, opts, who) = (fs.clone(), opts.clone(), who.clone());
        tokio::task::spawn_blocking(move || walk(&fs, &opts, settings, &who, started)).await
    };
    let w = match walked {
        Ok(Ok(w)) => w,
        Ok(Err(report)) => return report,
        Err(e) => {
            let mut out = String::new();
            fail(
                &mut out,
                &fs,
                started,
                &opts.path,
                &format!("fsck failed: {e}"),
            );
            return out;
        }
    };
    let moved = if w.to_move.is_empty() {
        MoveOutcome::default()
    } else {
        match &lost_found {
            Some(t) => lost_found::copy_to_lost_found(&fs, &who.caller, t, &w.to_move).await,
            None => {
                tracing::error!("copyBlocksToLostFound: the NameNode's RPC address is unknown");
                MoveOutcome {
                    internal_error: true,
                    copied: Vec::new(),
                }
            }
        }
    };
    let done = {
        let (fs, opts, who) = (fs.clone(), opts.clone(), who.clone());
        tokio::task::spawn_blocking(move || finish(&fs, &opts, settings, &who, started, w, moved))
            .await
    };
    match done {
        Ok(report) => report,
        Err(e) => {
            let mut out = String::new();
            fail(
                &mut out,
                &fs,
                started,
                &opts.path,
                &format!("fsck failed: {e}"),
            );
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::listings::{is_parent_entry, parse_block_id};
    use super::walker::child_path;
    use super::*;

    #[test]
    fn options_from_params() {
        let o = FsckOptions::from_params([
            ("ugi", "alice"),
            ("files", "1"),
            ("blocks", "1"),
            ("replicadetails", "1"),
            ("path", "/a b"),
        ]);
        assert_eq!(o.path, "/a b");
        assert!(o.files && o.blocks && o.replica_details && !o.locations);
        assert_eq!(o.user.as_deref(), Some("alice"));
        assert_eq!(FsckOptions::from_params([]).path, "/");
        // user.name wins over ugi; ugi's first name only.
        let o = FsckOptions::from_params([("ugi", "bob,staff"), ("user.name", "carol")]);
        assert_eq!(o.user.as_deref(), Some("carol"));
        let o = FsckOptions::from_params([("ugi", "bob,staff")]);
        assert_eq!(o.user.as_deref(), Some("bob"));
        let o = FsckOptions::from_params([
            ("blockId", "blk_1 blk_2 "),
            ("storagepolicies", "1"),
            ("move", "1"),
        ]);
        assert_eq!(
            o.block_ids,
            Some(vec!["blk_1".to_string(), "blk_2".to_string()])
        );
        assert!(o.storage_policies && o.move_ && !o.delete);
    }

    #[test]
    fn child_paths() {
        assert_eq!(child_path("/", b"a"), "/a");
        assert_eq!(child_path("/a", b"b"), "/a/b");
    }

    #[test]
    fn block_ids_parse_as_hadoop() {
        assert_eq!(parse_block_id("blk_1073741825"), 1_073_741_825);
        assert_eq!(parse_block_id("blk_1073741825_1001.meta"), 1_073_741_825);
        assert_eq!(
            parse_block_id("blk_-9223372036854775792"),
            9_223_372_036_854_775_824
        );
        assert_eq!(parse_block_id("blk_12x"), 0);
        assert_eq!(parse_block_id("blk_12_1001"), 0);
        assert_eq!(parse_block_id("blk_"), 0);
        assert_eq!(parse_block_id("12"), 0);
    }

    #[test]
    fn parent_entries() {
        assert!(is_parent_entry("/a/b", "/"));
        assert!(is_parent_entry("/a/b", "/a"));
        assert!(is_parent_entry("/a", "/a"));
        assert!(!is_parent_entry("/ab", "/a"));
        assert!(!is_parent_entry("/b", "/a"));
    }
}
