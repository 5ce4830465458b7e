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
pub mod lost_found;
pub mod policy;
pub mod slow_details;

use std::fmt::Write as _;
use std::ops::Bound;
use std::sync::Arc;
use std::time::Instant;

use rhdfs_blockmanager::views::{BlockView, ReplicaStatus, ReplicaView};
use rhdfs_blockmanager::{BlockUcState, CorruptReason, views::VIEW_CHUNK};

use crate::fsdir::permission::{Caller, Check, EXECUTE, READ, not_a_directory};
use crate::fsdir::{FsPath, InodeKind, Resolved};
use crate::namesystem::Namesystem;
use format::{FsckResult, java_date};
use lost_found::{LostFoundTarget, MoveJob, MoveOutcome};
use policy::{DEFAULT_POLICY, StoragePolicySummary};

/// Directory entries read per namespace lock hold.
pub const LIST_BATCH: usize = 1_000;

/// Hadoop's status strings (the fsck client scans the last line for them).
pub const HEALTHY_STATUS: &str = "is HEALTHY";
pub const CORRUPT_STATUS: &str = "is CORRUPT";
pub const DECOMMISSIONING_STATUS: &str = "is DECOMMISSIONING";
pub const DECOMMISSIONED_STATUS: &str = "is DECOMMISSIONED";
pub const NONEXISTENT_STATUS: &str = "does not exist";
pub const FAILURE_STATUS: &str = "FAILED";

/// `dfs.corruptfilesreturned.max`'s default: corrupt blocks listed per request.
pub const MAX_CORRUPT_FILE_BLOCKS_RETURNED: usize = 500;

/// The `/fsck` query parameters (NamenodeFsck's names).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FsckOptions {
    pub path: String,
    pub files: bool,
    pub blocks: bool,
    pub locations: bool,
    pub racks: bool,
    pub replica_details: bool,
    pub open_for_write: bool,
    pub list_corrupt_file_blocks: bool,
    /// `listorphans` (rhdfs's `-list-orphans`): the held orphan replicas.
    pub list_orphans: bool,
    pub start_block_after: Option<String>,
    pub delete: bool,
    pub move_: bool,
    pub storage_policies: bool,
    /// `showprogress`: deprecated in Hadoop (progress is always shown); only noted.
    pub show_progress: bool,
    /// `blockId`: the ids given to `-blockId`, as Hadoop splits them (on spaces).
    pub block_ids: Option<Vec<String>>,
    /// The user: `user.name`, else the first name of `ugi` (JspHelper's order).
    pub user: Option<String>,
}

impl FsckOptions {
    /// From decoded query parameters; unknown ones are ignored, as in Hadoop.
    pub fn from_params<'a>(params: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut o = FsckOptions {
            path: "/".into(),
            ..FsckOptions::default()
        };
        let (mut user_name, mut ugi) = (None, None);
        for (k, v) in params {
            match k {
                "path" => o.path = v.to_string(),
                "move" => o.move_ = true,
                "delete" => o.delete = true,
                "files" => o.files = true,
                "blocks" => o.blocks = true,
                "locations" => o.locations = true,
                "racks" => o.racks = true,
                "replicadetails" => o.replica_details = true,
                "storagepolicies" => o.storage_policies = true,
                "showprogress" => o.show_progress = true,
                "openforwrite" => o.open_for_write = true,
                "listcorruptfileblocks" => o.list_corrupt_file_blocks = true,
                "listorphans" => o.list_orphans = true,
                "startblockafter" => o.start_block_after = Some(v.to_string()),
                "blockId" => {
                    // Java's String.split(" "): trailing empty strings dropped.
                    let mut ids: Vec<String> = v.split(' ').map(str::to_string).collect();
                    while ids.last().is_some_and(String::is_empty) {
                        ids.pop();
                    }
                    o.block_ids = Some(ids);
                }
                "user.name" => user_name = Some(v.to_string()),
                "ugi" => ugi = v.split(',').next().map(str::to_string),
                _ => {}
            }
        }
        o.user = user_name.or(ugi).filter(|u| !u.is_empty());
        o
    }
}

/// Settings fsck reads from the NameNode's configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FsckSettings {
    /// `dfs.replication`.
    pub default_replication: u16,
    /// `dfs.namenode.replication.min`.
    pub min_replication: u16,
}

/// Who asked: the caller (user, groups, superuser) and the remote IP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsckRequester {
    pub caller: Caller,
    pub remote_ip: String,
}

/// One directory entry read under the namespace lock.
enum Entry {
    Dir {
        name: Vec<u8>,
        id: u64,
    },
    File {
        name: Vec<u8>,
        length: u64,
        replication: u16,
        mode: u16,
        blocks: Vec<crate::fsdir::FileBlock>,
        open: bool,
        /// The caller may not read the file (getBlockLocations' AccessControlException).
        denied: Option<String>,
    },
}

struct Frame {
    path: String,
    id: u64,
    after: Option<Vec<u8>>,
}

fn child_path(parent: &str, name: &[u8]) -> String {
    let name = String::from_utf8_lossy(name);
    if parent.ends_with('/') {
        format!("{parent}{name}")
    } else {
        format!("{parent}/{name}")
    }
}

/// `Resolved` of a child of the directory resolved as `dir`.
fn child_resolved(dir: &Resolved, id: u64) -> Resolved {
    let mut ids = dir.ids.clone();
    ids.push(Some(id));
    Resolved {
        ids,
        not_dir_at: None,
    }
}

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

struct Walker<'a> {
    fs: &'a Namesystem,
    opts: &'a FsckOptions,
    caller: &'a Caller,
    settings: FsckSettings,
    pool: String,
    out: String,
    res: FsckResult,
    total_dirs: u64,
    to_delete: Vec<String>,
    to_move: Vec<MoveJob>,
    storage: Option<StoragePolicySummary>,
    /// The AccessControlException that stopped the walk.
    error: Option<String>,
}

impl Walker<'_> {
    /// Reads up to LIST_BATCH entries of directory `path` (inode `id`) after `after`,
    /// checking the caller's r-x on it as getListing does.
    fn list(&self, path: &str, id: u64, after: Option<&[u8]>) -> Result<Vec<Entry>, String> {
        let p = FsPath::parse(path).map_err(|e| e.to_string())?;
        self.fs.with_ns_op("fsck", |ns| {
            let r = ns.resolve(&p);
            let checker = ns.checker(self.caller);
            checker
                .check(
                    &r,
                    Check {
                        access: Some(READ | EXECUTE),
                        ..Check::default()
                    },
                )
                .map_err(|e| e.to_string())?;
            let dir = ns.dir();
            let Some(d) = dir.get(id).and_then(|i| i.as_dir()) else {
                return Ok(Vec::new());
            };
            let lower = match after {
                Some(a) => Bound::Excluded(a),
                None => Bound::Unbounded,
            };
            Ok(d.children
                .range::<[u8], _>((lower, Bound::Unbounded))
                .take(LIST_BATCH)
                .filter_map(|(name, cid)| {
                    let inode = dir.get(*cid)?;
                    Some(match &inode.kind {
                        InodeKind::Dir(_) => Entry::Dir {
                            name: name.clone(),
                            id: *cid,
                        },
                        InodeKind::File(f) => {
                            let read = Check {
                                access: Some(READ),
                                ..Check::default()
                            };
                            Entry::File {
                                name: name.clone(),
                                length: f.length(),
                                replication: f.replication,
                                mode: inode.perm.mode,
                                blocks: f.blocks.clone(),
                                open: f.uc.is_some(),
                                denied: checker
                                    .check(&child_resolved(&r, *cid), read)
                                    .err()
                                    .map(|e| e.to_string()),
                            }
                        }
                    })
                })
                .collect())
        })
    }

    /// Hadoop prints an empty line every 1000 entries checked (progress).
    fn tick(&mut self) {
        if (self.total_dirs + self.res.total_files).is_multiple_of(1000) {
            self.out.push('\n');
        }
    }

    fn enter_dir(&mut self, path: &str) {
        self.tick();
        if self.opts.files {
            let _ = writeln!(self.out, "{path} <dir>");
        }
        self.total_dirs += 1;
    }

    /// Depth-first, in listing order, as Hadoop's recursive checkDir.
    fn walk_dir(&mut self, path: String, id: u64) {
        self.enter_dir(&path);
        let mut stack = vec![Frame {
            path,
            id,
            after: None,
        }];
        while let Some(top) = stack.last() {
            let entries = match self.list(&top.path, top.id, top.after.as_deref()) {
                Ok(e) => e,
                Err(e) => {
                    self.error = Some(e);
                    return;
                }
            };
            if entries.is_empty() {
                stack.pop();
                continue;
            }
            let parent = top.path.clone();
            let mut descend = None;
            let mut last = None;
            for e in entries {
                match e {
                    Entry::Dir { name, id } => {
                        let p = child_path(&parent, &name);
                        last = Some(name);
                        descend = Some((p, id));
                        break;
                    }
                    Entry::File {
                        name,
                        length,
                        replication,
                        mode,
                        blocks,
                        open,
                        denied,
                    } => {
                        if let Some(e) = denied {
                            self.error = Some(e);
                            return;
                        }
                        let p = child_path(&parent, &name);
                        self.tick();
                        self.check_file(&p, length, replication, mode, &blocks, open);
                        last = Some(name);
                    }
                }
            }
            if let Some(top) = stack.last_mut() {
                top.after = last;
            }
            if let Some((p, id)) = descend {
                self.enter_dir(&p);
                stack.push(Frame {
                    path: p,
                    id,
                    after: None,
                });
            }
        }
    }

    fn views(&self, blocks: &[crate::fsdir::FileBlock]) -> Vec<Option<BlockView>> {
        let ids: Vec<u64> = blocks.iter().map(|b| b.id).collect();
        let bm = self.fs.block_manager();
        let mut out = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(VIEW_CHUNK) {
            out.extend(bm.block_views(chunk));
        }
        out
    }

    fn replica_info(&self, reps: &[ReplicaView]) -> String {
        let o = self.opts;
        if !(o.locations || o.racks || o.replica_details) {
            return String::new();
        }
        let mut s = String::from(" [");
        for (i, r) in reps.iter().enumerate() {
            if o.racks {
                let _ = write!(s, "{}/{}", r.rack, r.xfer_addr);
            } else {
                let _ = write!(
                    s,
                    "DatanodeInfoWithStorage[{},{},{}]",
                    r.xfer_addr,
                    r.storage_id,
                    rhdfs_proto::storage_type_name(r.storage_type)
                );
            }
            if o.replica_details {
                let _ = write!(s, "({})", r.status.label());
            }
            if i + 1 < reps.len() {
                s.push_str(", ");
            }
        }
        s.push(']');
        s
    }

    /// The block's located replicas, as getBlockLocations gives them.
    fn locations(&self, id: u64) -> Vec<rhdfs_blockmanager::Location> {
        self.fs
            .block_manager()
            .block_locations(id)
            .map(|l| l.locations)
            .unwrap_or_default()
    }

    fn check_file(
        &mut self,
        path: &str,
        length: u64,
        replication: u16,
        mode: u16,
        blocks: &[crate::fsdir::FileBlock],
        open: bool,
    ) {
        let nblocks = blocks.len() as u64;
        if open && !self.opts.open_for_write {
            self.res.total_open_files_size += length;
            self.res.total_open_files_blocks += nblocks;
            self.res.total_open_files += 1;
            return;
        }
        self.res.total_files += 1;
        self.res.total_size += length;
        self.res.total_blocks += nblocks;
        let policy = format!("replicated: replication={replication},");
        if self.opts.open_for_write && open {
            let _ = write!(
                self.out,
                "{path} {length} bytes, {policy} {nblocks} block(s), OPENFORWRITE: "
            );
        } else if self.opts.files {
            let _ = write!(
                self.out,
                "{path} {length} bytes, {policy} {nblocks} block(s): "
            );
        } else if self.res.total_files.is_multiple_of(100) {
            self.out.push('.');
        }
        let views = self.views(blocks);
        let last_incomplete = open
            && views
                .last()
                .is_some_and(|v| v.as_ref().is_none_or(|v| v.state != BlockUcState::Complete));
        let (mut missing, mut corrupt, mut missize, mut corrupt_size, mut under) =
            (0u64, 0u64, 0u64, 0u64, 0u64);
        let mut mis_replicated = 0u64;
        let mut report = String::new();
        let min = u64::from(self.settings.min_replication);
        let target = u64::from(replication);
        let mut number = 0usize;
        let n = blocks.len();
        for (i, (b, v)) in blocks.iter().zip(&views).enumerate() {
            if last_incomplete && i + 1 == n {
                continue;
            }
            let (live, decommissioned, decommissioning, reps, is_corrupt, gs, len) = match v {
                Some(v) => (
                    v.live as u64,
                    v.decommissioned as u64,
                    v.decommissioning as u64,
                    v.replicas.as_slice(),
                    v.is_corrupt,
                    v.block.gs,
                    v.block.num_bytes,
                ),
                None => (0, 0, 0, &[][..], false, b.gs, b.num_bytes),
            };
            let ext = format!("{}:blk_{}_{}", self.pool, b.id, gs);
            self.res.decommissioned_replicas += decommissioned;
            self.res.decommissioning_replicas += decommissioning;
            let total = live + decommissioned + decommissioning;
            self.res.total_replicas += total;
            let is_missing = total == 0;
            self.res.num_expected_replicas += target;
            if total < min {
                self.res.num_under_min_replicated_blocks += 1;
            }
            if live > target {
                self.res.excessive_replicas += live - target;
                self.res.num_over_replicated_blocks += 1;
            }
            if is_corrupt {
                self.res.add_corrupt(len);
                corrupt += 1;
                corrupt_size += len;
                let _ = write!(
                    self.out,
                    "\n{path}: CORRUPT blockpool {} block blk_{}\n",
                    self.pool, b.id
                );
            }
            if total >= min {
                self.res.num_min_replicated_blocks += 1;
            }
            if total < target && !is_missing {
                self.res.missing_replicas += target - total;
                self.res.num_under_replicated_blocks += 1;
                under += 1;
                if !self.opts.files {
                    let _ = write!(self.out, "\n{path}: ");
                }
                let _ = writeln!(
                    self.out,
                    " Under replicated {ext}. Target Replicas is {target} but found {live} live replica(s), {decommissioned} decommissioned replica(s), {decommissioning} decommissioning replica(s)."
                );
            }
            // Rack spread (the block manager's RackSpread, Hadoop's verifyBlockPlacement).
            if let Some(why) = v
                .as_ref()
                .and_then(|v| v.rack_spread.violation(replication))
            {
                self.res.num_mis_replicated_blocks += 1;
                mis_replicated += 1;
                if !self.opts.files {
                    if under == 0 {
                        self.out.push('\n');
                    }
                    let _ = write!(self.out, "{path}: ");
                }
                let _ = writeln!(
                    self.out,
                    " Replica placement policy is violated for {ext}. {why}"
                );
            }
            if self.storage.is_some() {
                let types: Vec<i32> = self
                    .locations(b.id)
                    .iter()
                    .map(|l| l.storage_type)
                    .collect();
                if let Some(s) = self.storage.as_mut() {
                    s.add(&types, DEFAULT_POLICY);
                }
            }
            let _ = write!(report, "{number}. {ext} len={len}");
            if is_missing && !is_corrupt {
                report.push_str(" MISSING!");
                self.res.add_missing(ext.clone(), len);
                missing += 1;
                missize += len;
            } else {
                let _ = write!(report, " Live_repl={live}");
                let info = self.replica_info(reps);
                if !info.is_empty() {
                    report.push(' ');
                    report.push_str(&info);
                }
            }
            report.push('\n');
            number += 1;
        }
        if last_incomplete && let (Some(b), Some(v)) = (blocks.last(), views.last()) {
            let (reps, gs, len) = match v {
                Some(v) => (v.replicas.as_slice(), v.block.gs, v.block.num_bytes),
                None => (&[][..], b.gs, b.num_bytes),
            };
            let _ = write!(
                report,
                "\nUnder Construction Block:\n{number}. {}:blk_{}_{} len={len} Expected_repl={}",
                self.pool,
                b.id,
                gs,
                reps.len()
            );
            let info = self.replica_info(reps);
            if !info.is_empty() {
                report.push(' ');
                report.push_str(&info);
            }
        }
        if missing > 0 || corrupt > 0 {
            if !self.opts.files {
                if missing > 0 {
                    let _ = write!(
                        self.out,
                        "\n{path}: MISSING {missing} blocks of total size {missize} B."
                    );
                }
                if corrupt > 0 {
                    let _ = write!(
                        self.out,
                        "\n{path}: CORRUPT {corrupt} blocks of total size {corrupt_size} B."
                    );
                }
            }
            self.res.corrupt_files += 1;
            if open {
                tracing::info!("Fsck: ignoring open file {path}");
            } else {
                if self.opts.move_ {
                    let blocks = blocks.iter().map(|b| (*b, self.locations(b.id))).collect();
                    self.to_move.push(MoveJob {
                        path: path.to_string(),
                        mode,
                        blocks,
                    });
                }
                if self.opts.delete {
                    self.to_delete.push(path.to_string());
                }
            }
        }
        if self.opts.files {
            if missing > 0 || corrupt > 0 {
                if missing > 0 {
                    let _ = writeln!(
                        self.out,
                        " MISSING {missing} blocks of total size {missize} B"
                    );
                }
                if corrupt > 0 {
                    let _ = writeln!(
                        self.out,
                        " CORRUPT {corrupt} blocks of total size {corrupt_size} B"
                    );
                }
            } else if under == 0 && mis_replicated == 0 {
                self.out.push_str(" OK\n");
            }
            if self.opts.blocks {
                let _ = writeln!(self.out, "{report}");
            }
        }
    }
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
                        replication: f.replication,
                        mode: inode.perm.mode,
                        blocks: f.blocks.clone(),
                        open: f.uc.is_some(),
                        denied: checker.check(&r, read).err().map(|e| e.to_string()),
                    })
                }
            },
            None => Target::Missing,
        })
    })
}

/// Hadoop's isParentEntry: `src` is `parent` or below it.
fn is_parent_entry(src: &str, parent: &str) -> bool {
    if !src.starts_with(parent) {
        return false;
    }
    src.len() == parent.len() || parent == "/" || src.as_bytes().get(parent.len()) == Some(&b'/')
}

/// `-list-orphans` (rhdfs, superuser only): one line per held replica of a block the
/// namespace does not know — "blk_<id>_<gs>", its length, the DataNode, the storage, why
/// it is held (FUTURE: generation stamp newer than the namespace's, kept until
/// `dfsadmin -releaseOrphans`; STARTUP: in a storage's first report, deleted after the
/// start-up delay) and for how long — then the totals.
fn list_orphans(fs: &Namesystem, out: &mut String) {
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
fn list_corrupt_file_blocks(fs: &Namesystem, opts: &FsckOptions, out: &mut String) {
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
                    .map(|(b, inode)| {
                        let dir = ns.dir();
                        let path = dir.contains(*inode).then(|| dir.path_of(*inode));
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
fn parse_block_id(s: &str) -> u64 {
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
fn block_id_check(fs: &Namesystem, blk: &str, out: &mut String) {
    let id = parse_block_id(blk);
    let view = fs.block_manager().block_views(&[id]).pop().flatten();
    let owner = view.as_ref().and_then(|v| {
        fs.with_ns_op("fsck", |ns| {
            let dir = ns.dir();
            if !dir.contains(v.inode_id) {
                return None;
            }
            let repl = dir
                .get(v.inode_id)
                .and_then(|i| i.as_file())
                .map_or(v.replication, |f| f.replication);
            Some((dir.path_of(v.inode_id), repl))
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
