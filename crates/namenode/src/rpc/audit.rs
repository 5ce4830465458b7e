//! Auditing at the ClientProtocol edge: which methods Hadoop's FSNamesystem audits, under
//! which `cmd=` name, with which `src`/`dst`, when (allowed on success, denied on
//! AccessControlException, other failures not logged) and whether `perm=` shows the path's
//! status after the operation. The `client_protocol!` table names a spec per audited method;
//! `ClientProtocolService::call` records one line per call through [`record`].

use std::borrow::Cow;

use bytes::Bytes;
use prost::Message;
use rhdfs_ipc::{CallContext, RpcError};
use rhdfs_proto::hdfs::*;

use crate::audit::{AuditEvent, AuditLog};
use crate::fsdir::permission::{Caller, mode_string};
use crate::namespace::{QUOTA_DONT_SET, QUOTA_RESET};
use crate::namesystem::Namesystem;

/// How one ClientProtocol method is audited.
#[derive(Clone, Copy)]
pub struct AuditSpec {
    cmd: Cmd,
    /// src and dst from the request; None when it does not decode (no line).
    paths: fn(&Bytes) -> Option<Paths>,
    /// From a successful answer: Some(allowed) to log, None to log nothing.
    outcome: fn(&Bytes) -> Option<bool>,
    /// Whose status goes in `perm=` after a success.
    stat: Stat,
}

#[derive(Clone, Copy)]
enum Cmd {
    Fixed(&'static str),
    /// Named after the request (rename options, quota kind, safe mode action).
    Of(fn(&Bytes) -> Option<String>),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Stat {
    None,
    Src,
    Dst,
}

type Paths = (Option<String>, Option<String>);

/// A request that names the path it works on.
trait Target: Message + Default {
    fn src(self) -> Option<String>;
}

macro_rules! target {
    ($($t:ty => |$r:ident| $e:expr;)*) => {
        $(impl Target for $t {
            fn src(self) -> Option<String> {
                let $r = self;
                $e
            }
        })*
    };
}

target! {
    GetFileInfoRequestProto => |r| Some(r.src);
    GetLocatedFileInfoRequestProto => |r| r.src;
    IsFileClosedRequestProto => |r| Some(r.src);
    GetLinkTargetRequestProto => |r| Some(r.path);
    GetListingRequestProto => |r| Some(r.src);
    GetContentSummaryRequestProto => |r| Some(r.path);
    GetQuotaUsageRequestProto => |r| Some(r.path);
    GetBlockLocationsRequestProto => |r| Some(r.src);
    GetAclStatusRequestProto => |r| Some(r.src);
    GetXAttrsRequestProto => |r| Some(r.src);
    ListXAttrsRequestProto => |r| Some(r.src);
    CheckAccessRequestProto => |r| Some(r.path);
    MkdirsRequestProto => |r| Some(r.src);
    SetReplicationRequestProto => |r| Some(r.src);
    SetPermissionRequestProto => |r| Some(r.src);
    SetOwnerRequestProto => |r| Some(r.src);
    SetTimesRequestProto => |r| Some(r.src);
    SetQuotaRequestProto => |r| Some(r.path);
    ModifyAclEntriesRequestProto => |r| Some(r.src);
    RemoveAclEntriesRequestProto => |r| Some(r.src);
    RemoveDefaultAclRequestProto => |r| Some(r.src);
    RemoveAclRequestProto => |r| Some(r.src);
    SetAclRequestProto => |r| Some(r.src);
    CreateRequestProto => |r| Some(r.src);
    AppendRequestProto => |r| Some(r.src);
    DeleteRequestProto => |r| Some(r.src);
    SetXAttrRequestProto => |r| Some(r.src);
    RemoveXAttrRequestProto => |r| Some(r.src);
    TruncateRequestProto => |r| Some(r.src);
}

fn src<M: Target>(b: &Bytes) -> Option<Paths> {
    Some((M::decode(b.clone()).ok()?.src(), None))
}

/// concat: the sources as Java prints an array, the target as dst (Hadoop's audit line).
fn concat_paths(b: &Bytes) -> Option<Paths> {
    let r = ConcatRequestProto::decode(b.clone()).ok()?;
    Some((Some(format!("[{}]", r.srcs.join(", "))), Some(r.trg)))
}

fn no_paths(_: &Bytes) -> Option<Paths> {
    Some((None, None))
}

fn rename_paths(b: &Bytes) -> Option<Paths> {
    let r = RenameRequestProto::decode(b.clone()).ok()?;
    Some((Some(r.src), Some(r.dst)))
}

fn rename2_paths(b: &Bytes) -> Option<Paths> {
    let r = Rename2RequestProto::decode(b.clone()).ok()?;
    Some((Some(r.src), Some(r.dst)))
}

fn ok(_: &Bytes) -> Option<bool> {
    Some(true)
}

/// delete: allowed=false when nothing was deleted, as Hadoop logs `ret`.
fn delete_result(b: &Bytes) -> Option<bool> {
    Some(DeleteResponseProto::decode(b.clone()).ok()?.result)
}

/// Logged only when the answer is true (setReplication, isFileClosed, rename).
fn only_if_true<M: Message + Default>(result: fn(M) -> bool) -> impl Fn(&Bytes) -> Option<bool> {
    move |b: &Bytes| M::decode(b.clone()).ok().map(result).filter(|r| *r)
}

fn set_replication_outcome(b: &Bytes) -> Option<bool> {
    only_if_true(|r: SetReplicationResponseProto| r.result)(b)
}

fn is_file_closed_outcome(b: &Bytes) -> Option<bool> {
    only_if_true(|r: IsFileClosedResponseProto| r.result)(b)
}

fn rename_outcome(b: &Bytes) -> Option<bool> {
    only_if_true(|r: RenameResponseProto| r.result)(b)
}

/// `rename (options=[NONE])`, as Hadoop prints its `Options.Rename...` array.
fn rename2_cmd(b: &Bytes) -> Option<String> {
    let r = Rename2RequestProto::decode(b.clone()).ok()?;
    let mut opts = Vec::new();
    if r.overwrite_dest {
        opts.push("OVERWRITE");
    }
    if r.move_to_trash == Some(true) {
        opts.push("TO_TRASH");
    }
    if opts.is_empty() {
        opts.push("NONE");
    }
    Some(format!("rename (options=[{}])", opts.join(", ")))
}

/// Hadoop's getQuotaCommand.
fn set_quota_cmd(b: &Bytes) -> Option<String> {
    let r = SetQuotaRequestProto::decode(b.clone()).ok()?;
    let (ns, ds) = (r.namespace_quota as i64, r.storagespace_quota as i64);
    Some(
        if ns == QUOTA_RESET && ds == QUOTA_DONT_SET {
            "clearQuota"
        } else if ns == QUOTA_DONT_SET && ds == QUOTA_RESET {
            "clearSpaceQuota"
        } else if ds == QUOTA_DONT_SET {
            "setQuota"
        } else {
            "setSpaceQuota"
        }
        .to_string(),
    )
}

/// The SafeModeAction's name in lower case (`safemode_get`, `safemode_leave`, ...).
fn safe_mode_cmd(b: &Bytes) -> Option<String> {
    let r = SetSafeModeRequestProto::decode(b.clone()).ok()?;
    let action = SafeModeActionProto::try_from(r.action).ok()?;
    Some(action.as_str_name().to_ascii_lowercase())
}

const fn spec(cmd: &'static str, paths: fn(&Bytes) -> Option<Paths>) -> AuditSpec {
    AuditSpec {
        cmd: Cmd::Fixed(cmd),
        paths,
        outcome: ok,
        stat: Stat::None,
    }
}

const fn with_stat(mut s: AuditSpec, stat: Stat) -> AuditSpec {
    s.stat = stat;
    s
}

const fn with_outcome(mut s: AuditSpec, outcome: fn(&Bytes) -> Option<bool>) -> AuditSpec {
    s.outcome = outcome;
    s
}

pub const GET_FILE_INFO: AuditSpec = spec("getfileinfo", src::<GetFileInfoRequestProto>);
pub const GET_LOCATED_FILE_INFO: AuditSpec =
    spec("getfileinfo", src::<GetLocatedFileInfoRequestProto>);
pub const IS_FILE_CLOSED: AuditSpec = with_outcome(
    spec("isFileClosed", src::<IsFileClosedRequestProto>),
    is_file_closed_outcome,
);
pub const GET_LINK_TARGET: AuditSpec = spec("getfileinfo", src::<GetLinkTargetRequestProto>);
pub const GET_LISTING: AuditSpec = spec("listStatus", src::<GetListingRequestProto>);
pub const GET_CONTENT_SUMMARY: AuditSpec =
    spec("contentSummary", src::<GetContentSummaryRequestProto>);
pub const GET_QUOTA_USAGE: AuditSpec = spec("quotaUsage", src::<GetQuotaUsageRequestProto>);
pub const GET_BLOCK_LOCATIONS: AuditSpec = spec("open", src::<GetBlockLocationsRequestProto>);
pub const GET_DATANODE_REPORT: AuditSpec = spec("datanodeReport", no_paths);
pub const LIST_OPEN_FILES: AuditSpec = spec("listOpenFiles", no_paths);
pub const META_SAVE: AuditSpec = spec("metaSave", no_paths);
pub const GET_ACL_STATUS: AuditSpec = spec("getAclStatus", src::<GetAclStatusRequestProto>);
pub const GET_XATTRS: AuditSpec = spec("getXAttrs", src::<GetXAttrsRequestProto>);
pub const LIST_XATTRS: AuditSpec = spec("listXAttrs", src::<ListXAttrsRequestProto>);
pub const CHECK_ACCESS: AuditSpec = spec("checkAccess", src::<CheckAccessRequestProto>);
pub const MKDIRS: AuditSpec = with_stat(spec("mkdirs", src::<MkdirsRequestProto>), Stat::Src);
pub const SET_REPLICATION: AuditSpec = with_outcome(
    spec("setReplication", src::<SetReplicationRequestProto>),
    set_replication_outcome,
);
pub const SET_PERMISSION: AuditSpec = with_stat(
    spec("setPermission", src::<SetPermissionRequestProto>),
    Stat::Src,
);
pub const SET_OWNER: AuditSpec =
    with_stat(spec("setOwner", src::<SetOwnerRequestProto>), Stat::Src);
pub const SET_TIMES: AuditSpec =
    with_stat(spec("setTimes", src::<SetTimesRequestProto>), Stat::Src);
pub const REFRESH_NODES: AuditSpec = spec("refreshNodes", no_paths);
pub const SET_SAFE_MODE: AuditSpec = AuditSpec {
    cmd: Cmd::Of(safe_mode_cmd),
    ..spec("", no_paths)
};
pub const SAVE_NAMESPACE: AuditSpec = spec("saveNamespace", no_paths);
pub const ROLL_EDITS: AuditSpec = spec("rollEditLog", no_paths);
pub const RELEASE_ORPHANS: AuditSpec = spec("releaseOrphans", no_paths);
pub const SET_QUOTA: AuditSpec = AuditSpec {
    cmd: Cmd::Of(set_quota_cmd),
    ..spec("", src::<SetQuotaRequestProto>)
};
pub const MODIFY_ACL_ENTRIES: AuditSpec = with_stat(
    spec("modifyAclEntries", src::<ModifyAclEntriesRequestProto>),
    Stat::Src,
);
pub const REMOVE_ACL_ENTRIES: AuditSpec = with_stat(
    spec("removeAclEntries", src::<RemoveAclEntriesRequestProto>),
    Stat::Src,
);
pub const REMOVE_DEFAULT_ACL: AuditSpec = with_stat(
    spec("removeDefaultAcl", src::<RemoveDefaultAclRequestProto>),
    Stat::Src,
);
pub const REMOVE_ACL: AuditSpec =
    with_stat(spec("removeAcl", src::<RemoveAclRequestProto>), Stat::Src);
pub const SET_ACL: AuditSpec = with_stat(spec("setAcl", src::<SetAclRequestProto>), Stat::Src);
pub const CREATE: AuditSpec = with_stat(spec("create", src::<CreateRequestProto>), Stat::Src);
pub const APPEND: AuditSpec = spec("append", src::<AppendRequestProto>);
pub const DELETE: AuditSpec =
    with_outcome(spec("delete", src::<DeleteRequestProto>), delete_result);
pub const RENAME: AuditSpec = with_outcome(
    with_stat(spec("rename", rename_paths), Stat::Dst),
    rename_outcome,
);
pub const RENAME2: AuditSpec = AuditSpec {
    cmd: Cmd::Of(rename2_cmd),
    ..with_stat(spec("", rename2_paths), Stat::Dst)
};
pub const SET_XATTR: AuditSpec =
    with_stat(spec("setXAttr", src::<SetXAttrRequestProto>), Stat::Src);
pub const REMOVE_XATTR: AuditSpec = with_stat(
    spec("removeXAttr", src::<RemoveXAttrRequestProto>),
    Stat::Src,
);

/// Records the audit line of one call, if Hadoop would write one.
pub fn record(
    log: &AuditLog,
    fs: &Namesystem,
    spec: &AuditSpec,
    ctx: &CallContext,
    body: &Bytes,
    answer: &Result<Bytes, RpcError>,
) {
    let allowed = match answer {
        Ok(resp) => match (spec.outcome)(resp) {
            Some(a) => a,
            None => return,
        },
        Err(e) if e.class_name == rhdfs_ipc::exceptions::ACCESS_CONTROL => false,
        Err(_) => return,
    };
    let Some((src, dst)) = (spec.paths)(body) else {
        return;
    };
    let cmd: Cow<'_, str> = match spec.cmd {
        Cmd::Fixed(c) => Cow::Borrowed(c),
        Cmd::Of(f) => match f(body) {
            Some(c) => Cow::Owned(c),
            None => return,
        },
    };
    let stat_path = match spec.stat {
        Stat::Src if allowed => src.as_deref(),
        Stat::Dst if allowed => dst.as_deref(),
        _ => None,
    };
    let perm = stat_path.and_then(|p| perm_of(fs, p));
    log.log(&AuditEvent {
        allowed,
        user: &ctx.user,
        ip: Some(ctx.client_ip()),
        cmd,
        src: src.as_deref(),
        dst: dst.as_deref(),
        perm,
        proto: ctx.via(),
    });
}

/// `owner:group:rwxr-xr-x` of `path` now, as Hadoop's audit `perm=` (FsPermission's text:
/// no type letter).
fn perm_of(fs: &Namesystem, path: &str) -> Option<String> {
    let st = fs.with_ns_op("audit", |ns| {
        let su = Caller::new(&ns.config().superuser.clone(), Vec::new(), true);
        ns.file_info(&su, path)
    });
    let st = st.ok().flatten()?;
    let mode = mode_string(st.is_dir, st.perm.mode);
    Some(format!(
        "{}:{}:{}",
        st.perm.owner,
        st.perm.group,
        mode.get(1..).unwrap_or_default()
    ))
}

pub const TRUNCATE: AuditSpec = spec("truncate", src::<TruncateRequestProto>);
pub const CONCAT: AuditSpec = spec("concat", concat_paths);
