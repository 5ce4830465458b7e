//! Issue 15, "What must work" 4: the NameNode's `hdfs-audit.log` has exactly one line, in
//! Hadoop's format, per audited operation of a scripted sequence: allowed ones with the
//! path's status after the operation where Hadoop logs it, denied ones
//! (AccessControlException) with `allowed=false`, `delete` of nothing with `allowed=false`,
//! and nothing for an operation that failed otherwise or that Hadoop does not audit.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::rpc::authority;
use rhdfs_ipc::{IpcError, RpcClient};
use rhdfs_minicluster::MiniCluster;
use rhdfs_proto::hdfs::*;
use rhdfs_proto::protocols::CLIENT_PROTOCOL;

const OTHER: &str = "mallory";

fn perm(mode: u32) -> FsPermissionProto {
    FsPermissionProto { perm: mode }
}

fn class(r: Result<impl std::fmt::Debug, IpcError>) -> String {
    match r {
        Err(IpcError::Remote { class_name, .. }) => class_name,
        other => format!("not a remote error: {other:?}"),
    }
}

/// The audit file's lines without their `date time ` prefix (checked to be log4j's ISO8601).
fn audit_lines(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("hdfs-audit.log")).unwrap_or_default();
    text.lines()
        .map(|l| {
            let (stamp, rest) = l.split_at(l.len().min(24));
            let b = stamp.as_bytes();
            assert!(
                b.len() == 24 && b[4] == b'-' && b[10] == b' ' && b[19] == b',',
                "not an ISO8601 stamp: {l:?}"
            );
            rest.trim_start().to_string()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_line_per_operation_allowed_and_denied() -> anyhow::Result<()> {
    let logs = tempfile::tempdir()?;
    let cluster = MiniCluster::builder()
        .datanodes(0)
        .conf("hadoop.log.dir", logs.path().to_string_lossy())
        .conf(
            "dfs.namenode.audit.log.debug.cmdlist",
            "getServerDefaults,listStatus",
        )
        .build()
        .await?;
    let addr = authority(&cluster.uri());
    let su = common::current_user();
    let me = RpcClient::connect(&addr, CLIENT_PROTOCOL, &su).await?;
    let other = RpcClient::connect(&addr, CLIENT_PROTOCOL, OTHER).await?;

    let _: MkdirsResponseProto = me
        .call(
            "mkdirs",
            &MkdirsRequestProto {
                src: "/audit/d".into(),
                masked: perm(0o755),
                create_parent: true,
                unmasked: None,
            },
        )
        .await?;
    let _: SetPermissionResponseProto = me
        .call(
            "setPermission",
            &SetPermissionRequestProto {
                src: "/audit/d".into(),
                permission: perm(0o700),
            },
        )
        .await?;
    // Denied: no EXECUTE on /audit/d.
    let denied = other
        .call::<_, GetFileInfoResponseProto>(
            "getFileInfo",
            &GetFileInfoRequestProto {
                src: "/audit/d/x".into(),
            },
        )
        .await;
    assert!(class(denied).ends_with("AccessControlException"));
    let denied = other
        .call::<_, MkdirsResponseProto>(
            "mkdirs",
            &MkdirsRequestProto {
                src: "/audit/d/m".into(),
                masked: perm(0o755),
                create_parent: true,
                unmasked: None,
            },
        )
        .await;
    assert!(class(denied).ends_with("AccessControlException"));
    // Superuser only.
    let denied = other
        .call::<_, SetQuotaResponseProto>(
            "setQuota",
            &SetQuotaRequestProto {
                path: "/audit".into(),
                namespace_quota: 10,
                storagespace_quota: i64::MAX as u64,
                storage_type: None,
            },
        )
        .await;
    assert!(class(denied).ends_with("AccessControlException"));
    // Allowed, but listed in dfs.namenode.audit.log.debug.cmdlist: no line.
    let _: GetListingResponseProto = other
        .call(
            "getListing",
            &GetListingRequestProto {
                src: "/".into(),
                start_after: Default::default(),
                need_location: false,
            },
        )
        .await?;
    // A missing path is still an allowed getfileinfo.
    let _: GetFileInfoResponseProto = other
        .call(
            "getFileInfo",
            &GetFileInfoRequestProto {
                src: "/missing".into(),
            },
        )
        .await?;
    let _: Rename2ResponseProto = me
        .call(
            "rename2",
            &Rename2RequestProto {
                src: "/audit/d".into(),
                dst: "/audit/e".into(),
                overwrite_dest: false,
                move_to_trash: None,
            },
        )
        .await?;
    let created: CreateResponseProto = me
        .call(
            "create",
            &CreateRequestProto {
                src: "/audit/f".into(),
                masked: perm(0o644),
                client_name: "audit-test".into(),
                create_flag: 1,
                create_parent: false,
                replication: 1,
                block_size: 1024 * 1024,
                ..Default::default()
            },
        )
        .await?;
    let id = created.fs.as_ref().and_then(|s| s.file_id);
    // Not audited by Hadoop: complete.
    let done: CompleteResponseProto = me
        .call(
            "complete",
            &CompleteRequestProto {
                src: "/audit/f".into(),
                client_name: "audit-test".into(),
                last: None,
                file_id: id,
            },
        )
        .await?;
    assert!(done.result);
    // Failed with something other than AccessControlException: no line.
    let failed = me
        .call::<_, MkdirsResponseProto>(
            "mkdirs",
            &MkdirsRequestProto {
                src: "/audit/f/sub".into(),
                masked: perm(0o755),
                create_parent: true,
                unmasked: None,
            },
        )
        .await;
    assert!(class(failed).ends_with("ParentNotDirectoryException"));
    // delete of nothing: allowed=false, as Hadoop logs the answer.
    let gone: DeleteResponseProto = me
        .call(
            "delete",
            &DeleteRequestProto {
                src: "/audit/nope".into(),
                recursive: false,
            },
        )
        .await?;
    assert!(!gone.result);
    let gone: DeleteResponseProto = me
        .call(
            "delete",
            &DeleteRequestProto {
                src: "/audit/e".into(),
                recursive: true,
            },
        )
        .await?;
    assert!(gone.result);

    let ip = "ip=/127.0.0.1";
    let g = "supergroup";
    let expected = vec![
        format!(
            "INFO FSNamesystem.audit: allowed=true\tugi={su} (auth:SIMPLE)\t{ip}\tcmd=mkdirs\tsrc=/audit/d\tdst=null\tperm={su}:{g}:rwxr-xr-x\tproto=rpc"
        ),
        format!(
            "INFO FSNamesystem.audit: allowed=true\tugi={su} (auth:SIMPLE)\t{ip}\tcmd=setPermission\tsrc=/audit/d\tdst=null\tperm={su}:{g}:rwx------\tproto=rpc"
        ),
        format!(
            "INFO FSNamesystem.audit: allowed=false\tugi={OTHER} (auth:SIMPLE)\t{ip}\tcmd=getfileinfo\tsrc=/audit/d/x\tdst=null\tperm=null\tproto=rpc"
        ),
        format!(
            "INFO FSNamesystem.audit: allowed=false\tugi={OTHER} (auth:SIMPLE)\t{ip}\tcmd=mkdirs\tsrc=/audit/d/m\tdst=null\tperm=null\tproto=rpc"
        ),
        format!(
            "INFO FSNamesystem.audit: allowed=false\tugi={OTHER} (auth:SIMPLE)\t{ip}\tcmd=setQuota\tsrc=/audit\tdst=null\tperm=null\tproto=rpc"
        ),
        format!(
            "INFO FSNamesystem.audit: allowed=true\tugi={OTHER} (auth:SIMPLE)\t{ip}\tcmd=getfileinfo\tsrc=/missing\tdst=null\tperm=null\tproto=rpc"
        ),
        format!(
            "INFO FSNamesystem.audit: allowed=true\tugi={su} (auth:SIMPLE)\t{ip}\tcmd=rename (options=[NONE])\tsrc=/audit/d\tdst=/audit/e\tperm={su}:{g}:rwx------\tproto=rpc"
        ),
        format!(
            "INFO FSNamesystem.audit: allowed=true\tugi={su} (auth:SIMPLE)\t{ip}\tcmd=create\tsrc=/audit/f\tdst=null\tperm={su}:{g}:rw-r--r--\tproto=rpc"
        ),
        format!(
            "INFO FSNamesystem.audit: allowed=false\tugi={su} (auth:SIMPLE)\t{ip}\tcmd=delete\tsrc=/audit/nope\tdst=null\tperm=null\tproto=rpc"
        ),
        format!(
            "INFO FSNamesystem.audit: allowed=true\tugi={su} (auth:SIMPLE)\t{ip}\tcmd=delete\tsrc=/audit/e\tdst=null\tperm=null\tproto=rpc"
        ),
    ];
    // The writer thread appends off the request path: wait for the last line.
    let lines = common::poll_until("the audit lines", Duration::from_secs(60), || async {
        let lines = audit_lines(logs.path());
        if lines.len() >= expected.len() {
            Ok(lines)
        } else {
            Err(format!("{} lines so far: {lines:#?}", lines.len()))
        }
    })
    .await?;
    assert_eq!(lines, expected);
    cluster.shutdown().await;
    Ok(())
}
