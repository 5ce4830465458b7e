//! Issue 12: ACLs and extended attributes over ClientProtocol, with hdfs-native and the
//! rhdfs client: a user denied by an ACL entry, allowed by a named-user entry, limited by
//! the mask; default ACLs inherited; xattr namespace rules; Hadoop's exception classes; all
//! of it kept across a NameNode restart (edit replay). `rhdfs dfs` against the Java FsShell
//! is in crates/rhdfs/tests/acl_shell.rs.

use crate::common;

use hdfs_native::HdfsError;
use hdfs_native::acl::AclEntry;
use rhdfs_minicluster::MiniCluster;

/// An AclStatus as comparable text.
fn text(s: &hdfs_native::acl::AclStatus) -> String {
    format!(
        "{} {} {} {:o} {:?}",
        s.owner, s.group, s.sticky, s.permission, s.entries
    )
}

fn entry(t: &str, scope: &str, perm: &str, name: Option<&str>) -> AclEntry {
    AclEntry::new(t, scope, perm, name.map(str::to_string))
}

/// The Java class of a remote failure.
fn class_of<T: std::fmt::Debug>(r: Result<T, HdfsError>) -> String {
    match r {
        Err(HdfsError::RPCError(class, _)) => class,
        other => panic!("expected a remote exception, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acls_and_xattrs_end_to_end() -> anyhow::Result<()> {
    let mut cluster = MiniCluster::builder().datanodes(1).build().await?;
    let uri = cluster.uri();
    let admin = common::native_client(&uri)?;
    admin.mkdirs("/acl", 0o755, true).await?;
    admin.mkdirs("/acl/p", 0o750, false).await?;
    admin
        .modify_acl_entries(
            "/acl/p",
            vec![
                entry("user", "access", "rwx", Some("bob")),
                entry("user", "access", "---", Some("eve")),
            ],
        )
        .await?;
    let st = admin.get_acl_status("/acl/p").await?;
    assert_eq!(
        st.permission & 0o777,
        0o770,
        "the mask became the group bits"
    );
    assert_eq!(st.entries.len(), 3, "{:?}", st.entries);
    let info = admin.get_file_info("/acl/p").await?;
    assert_eq!(info.permission & 0o777, 0o770);

    let bob = common::native_client_as(&uri, "bob")?;
    let eve = common::native_client_as(&uri, "eve")?;
    let amy = common::native_client_as(&uri, "amy")?;
    // Allowed by the named-user entry; denied by eve's entry and, for amy, by `other`.
    bob.mkdirs("/acl/p/by-bob", 0o755, false).await?;
    bob.list_status("/acl/p", false).await?;
    let denied = "org.apache.hadoop.security.AccessControlException";
    assert_eq!(class_of(eve.list_status("/acl/p", false).await), denied);
    assert_eq!(class_of(amy.list_status("/acl/p", false).await), denied);
    // Limited by the mask: chmod 750 leaves bob r-x.
    admin.set_permission("/acl/p", 0o750).await?;
    assert_eq!(
        class_of(bob.mkdirs("/acl/p/again", 0o755, false).await),
        denied
    );
    bob.list_status("/acl/p", false).await?;

    // Default ACLs are inherited by new directories (access + default) and files.
    admin
        .modify_acl_entries(
            "/acl/p",
            vec![entry("user", "default", "r-x", Some("carl"))],
        )
        .await?;
    admin.mkdirs("/acl/p/child", 0o755, false).await?;
    let child = admin.get_acl_status("/acl/p/child").await?;
    let carl: Vec<_> = child
        .entries
        .iter()
        .filter(|e| e.name.as_deref() == Some("carl"))
        .collect();
    assert_eq!(carl.len(), 2, "{:?}", child.entries);

    // Hadoop's exception classes.
    common::native_write(
        &admin,
        "/acl/p/file",
        b"x",
        hdfs_native::WriteOptions::default(),
        1,
    )
    .await?;
    assert_eq!(
        class_of(
            admin
                .modify_acl_entries(
                    "/acl/p/file",
                    vec![entry("user", "default", "rwx", Some("x"))]
                )
                .await
        ),
        "org.apache.hadoop.hdfs.protocol.AclException"
    );
    assert_eq!(
        class_of(bob.remove_acl("/acl/p").await),
        denied,
        "only the owner changes an ACL"
    );

    // Extended attributes through the rhdfs client: namespaces and flags.
    let fs = rhdfs_client::FileSystem::connect(&uri).await?;
    fs.set_xattr("/acl/p", "user.colour", Some(b"blue".to_vec()), 1)
        .await?;
    fs.set_xattr("/acl/p", "trusted.t", None, 1).await?;
    let err = fs
        .set_xattr("/acl/p", "system.s", None, 1)
        .await
        .unwrap_err();
    assert_eq!(err.class_name(), denied);
    let err = fs
        .set_xattr("/acl/p", "user.colour", None, 1)
        .await
        .unwrap_err();
    assert!(err.message().contains("already exists"), "{err:?}");
    let got = fs.get_xattrs("/acl/p", &[]).await?;
    assert_eq!(
        got,
        vec![
            ("user.colour".to_string(), b"blue".to_vec()),
            ("trusted.t".to_string(), Vec::new())
        ]
    );

    // Everything survives a restart (edit-log replay).
    let before = (
        text(&admin.get_acl_status("/acl/p").await?),
        text(&admin.get_acl_status("/acl/p/child").await?),
    );
    drop(fs);
    cluster.restart_namenode(&[]).await?;
    let admin = common::native_client(&uri)?;
    let after = common::poll_until(
        "the NameNode answers after its restart",
        std::time::Duration::from_secs(30),
        || {
            let admin = &admin;
            async move {
                match (
                    admin.get_acl_status("/acl/p").await,
                    admin.get_acl_status("/acl/p/child").await,
                ) {
                    (Ok(a), Ok(b)) => Ok((text(&a), text(&b))),
                    (Err(e), _) | (_, Err(e)) => Err(e.to_string()),
                }
            }
        },
    )
    .await?;
    assert_eq!(after, before);
    let fs = rhdfs_client::FileSystem::connect(&uri).await?;
    assert_eq!(fs.get_xattrs("/acl/p", &[]).await?, got);
    Ok(())
}
