//! Namespace tests: no sockets, no block manager.

use std::time::Duration;

use super::*;
use crate::edit::MemoryJournal;
use crate::fsdir::FileBlock;

fn now(s: u64) -> Now {
    Now {
        wall_ms: 1_700_000_000_000 + s * 1000,
        mono: Duration::from_secs(s),
    }
}

fn ns() -> Namespace {
    Namespace::new(
        NamespaceConfig {
            superuser: "root".into(),
            ls_limit: 3,
            ..NamespaceConfig::default()
        },
        now(0),
    )
}

fn root(n: &Namespace) -> Caller {
    n.caller("root", vec![])
}

fn alice(n: &Namespace) -> Caller {
    n.caller("alice", vec!["users".into()])
}

fn create_args<'a>(src: &'a str, client: &'a str, flags: u32) -> CreateArgs<'a> {
    CreateArgs {
        src,
        masked: 0o644,
        unmasked: None,
        client_name: client,
        client_machine: "127.0.0.1",
        flags,
        create_parent: true,
        replication: 3,
        block_size: 134_217_728,
    }
}

fn touch(n: &mut Namespace, c: &Caller, src: &str) -> u64 {
    let (st, _) = n
        .create(c, &create_args(src, "cl", flags::CREATE), now(1))
        .unwrap();
    n.complete_prepare(src, st.id, "cl", None, now(1)).unwrap();
    n.complete_finish(src, st.id, "cl", now(1)).unwrap();
    st.id
}

#[test]
fn fresh_namespace_is_just_root() {
    let n = ns();
    let st = n.file_info(&root(&n), "/").unwrap().unwrap();
    assert_eq!(st.id, ROOT_INODE_ID);
    assert!(st.is_dir);
    assert_eq!(&*st.perm.owner, "root");
    assert_eq!(&*st.perm.group, "supergroup");
    assert_eq!(st.perm.mode, 0o755);
    assert_eq!(st.children_num, 0);
    assert!(n.file_info(&root(&n), "/nope").unwrap().is_none());
}

#[test]
fn mkdirs_cases() {
    let mut n = ns();
    let r = root(&n);
    assert!(n.mkdirs(&r, "/a/b/c", 0o755, true, now(1)).unwrap());
    assert!(n.mkdirs(&r, "/a/b/c", 0o755, true, now(1)).unwrap());
    let e = n.mkdirs(&r, "/x/y", 0o755, false, now(1)).unwrap_err();
    assert_eq!(
        e,
        FsError::FileNotFound("Parent directory doesn't exist: /x".into())
    );
    touch(&mut n, &r, "/a/f");
    let e = n.mkdirs(&r, "/a/f", 0o755, true, now(2)).unwrap_err();
    assert_eq!(
        e,
        FsError::FileAlreadyExists("Path is not a directory: /a/f".into())
    );
    let e = n.mkdirs(&r, "/a/f/sub", 0o755, true, now(2)).unwrap_err();
    assert_eq!(
        e,
        FsError::ParentNotDirectory("/a/f (is not a directory)".into())
    );
    let e = n.mkdirs(&r, "/a/../b", 0o755, true, now(2)).unwrap_err();
    assert!(matches!(e, FsError::InvalidPath(_)));
    // getFileInfo through a file: "not found" for the superuser, AccessControlException for
    // anyone else (Hadoop's FSDirStatAndListingOp.getFileInfo); getListing and
    // getBlockLocations throw to everyone.
    assert_eq!(n.file_info(&r, "/a/f/sub").unwrap(), None);
    assert_eq!(n.located_file_info(&r, "/a/f/sub").unwrap(), None);
    let a = alice(&n);
    assert_eq!(
        n.file_info(&a, "/a/f/sub").unwrap_err(),
        FsError::AccessControl("/a/f (is not a directory)".into())
    );
    for e in [
        n.listing(&r, "/a/f/sub", b"", false).unwrap_err(),
        n.file_blocks(&r, "/a/f/sub").unwrap_err(),
        n.listing(&a, "/a/f/sub", b"", false).unwrap_err(),
    ] {
        assert_eq!(
            e,
            FsError::AccessControl("/a/f (is not a directory)".into())
        );
    }
    // checkAccess: the mode on the last inode, traverse first, "Path not found".
    n.check_access(&r, "/a/f", 0o7).unwrap();
    n.check_access(&a, "/a/f", 0o4).unwrap();
    assert!(matches!(
        n.check_access(&a, "/a/f", 0o2).unwrap_err(),
        FsError::AccessControl(m) if m.contains("access=WRITE")
    ));
    assert_eq!(
        n.check_access(&a, "/a/nope", 0o4).unwrap_err(),
        FsError::FileNotFound("Path not found".into())
    );
    // Group is inherited from the parent, ancestors get u+wx.
    n.set_owner(&r, "/a", None, Some("staff"), now(3)).unwrap();
    n.mkdirs(&r, "/a/p/q", 0o500, true, now(3)).unwrap();
    let p = n.file_info(&r, "/a/p").unwrap().unwrap();
    assert_eq!(&*p.perm.group, "staff");
    assert_eq!(p.perm.mode, 0o700);
    assert_eq!(n.file_info(&r, "/a/p/q").unwrap().unwrap().perm.mode, 0o500);
}

#[test]
fn permissions_enforced() {
    let mut n = ns();
    let r = root(&n);
    let a = alice(&n);
    let e = n.mkdirs(&a, "/x", 0o755, true, now(1)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Permission denied: user=alice, access=WRITE, inode=\"/\":root:supergroup:drwxr-xr-x"
    );
    n.mkdirs(&r, "/home/alice", 0o755, true, now(1)).unwrap();
    n.set_owner(&r, "/home/alice", Some("alice"), Some("users"), now(1))
        .unwrap();
    assert!(n.mkdirs(&a, "/home/alice/d", 0o755, true, now(2)).unwrap());
    // No x on an ancestor blocks traversal.
    n.mkdirs(&r, "/private/in", 0o755, true, now(2)).unwrap();
    n.set_permission(&r, "/private", 0o700, now(2)).unwrap();
    let e = n.file_info(&a, "/private/in").unwrap_err();
    assert!(e.to_string().contains("access=EXECUTE"), "{e}");
    // Only the owner sets permissions; only the superuser changes owners.
    let e = n.set_permission(&a, "/private", 0o777, now(3)).unwrap_err();
    assert!(matches!(e, FsError::AccessControl(_)));
    let e = n
        .set_owner(&a, "/home/alice", Some("bob"), None, now(3))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "User alice is not a super user (non-super user cannot change owner)."
    );
    let e = n
        .set_owner(&a, "/home/alice", None, Some("wheel"), now(3))
        .unwrap_err();
    assert_eq!(e.to_string(), "User alice does not belong to wheel");
    // Members of the supergroup are superusers.
    let s = n.caller("carol", vec!["supergroup".into()]);
    assert!(s.superuser);
    n.mkdirs(&s, "/carol", 0o755, true, now(3)).unwrap();
    // Sticky bit: alice cannot delete root's file in a sticky world-writable dir.
    n.mkdirs(&r, "/tmp", 0o1777, true, now(4)).unwrap();
    n.set_permission(&r, "/tmp", 0o1777, now(4)).unwrap();
    touch(&mut n, &r, "/tmp/rootfile");
    let e = n.delete(&a, "/tmp/rootfile", false, now(5)).unwrap_err();
    assert!(
        e.to_string().starts_with("Permission denied by sticky bit"),
        "{e}"
    );
    touch(&mut n, &a, "/tmp/alicefile");
    assert!(
        n.delete(&a, "/tmp/alicefile", false, now(5))
            .unwrap()
            .is_some()
    );
}

/// A recursive delete needs ALL on every non-empty directory of the subtree (Hadoop's
/// subAccess): the first one that does not grant it, in listing order, is named; an empty
/// one is not checked.
#[test]
fn recursive_delete_checks_the_subtree() {
    let mut n = ns();
    let r = root(&n);
    let a = alice(&n);
    n.mkdirs(&r, "/u", 0o777, true, now(1)).unwrap();
    n.set_permission(&r, "/u", 0o777, now(1)).unwrap();
    n.mkdirs(&a, "/u/a/b", 0o777, true, now(1)).unwrap();
    for d in ["/u/a/b/empty", "/u/a/b/full", "/u/a/c"] {
        n.mkdirs(&r, d, 0o755, true, now(2)).unwrap();
    }
    touch(&mut n, &r, "/u/a/b/full/f");
    touch(&mut n, &r, "/u/a/c/g");
    let e = n.delete(&a, "/u/a", true, now(3)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Permission denied: user=alice, access=ALL, inode=\"/u/a/b/full\":root:supergroup:drwxr-xr-x"
    );
    n.delete(&r, "/u/a/b/full", true, now(4)).unwrap();
    n.delete(&r, "/u/a/c", true, now(4)).unwrap();
    // Only the empty root-owned directory is left below: not checked.
    assert!(n.delete(&a, "/u/a", true, now(5)).unwrap().is_some());
}

#[test]
fn permissions_can_be_disabled() {
    let mut n = Namespace::new(
        NamespaceConfig {
            superuser: "root".into(),
            permissions_enabled: false,
            ..NamespaceConfig::default()
        },
        now(0),
    );
    let a = alice(&n);
    assert!(n.mkdirs(&a, "/x", 0o755, true, now(1)).unwrap());
}

#[test]
fn create_cases() {
    let mut n = ns();
    let r = root(&n);
    let (st, _) = n
        .create(&r, &create_args("/d/f", "c1", flags::CREATE), now(1))
        .unwrap();
    assert!(st.name.is_empty());
    assert_eq!(st.replication, 3);
    assert_eq!(st.block_size, 134_217_728);
    assert!(st.id > ROOT_INODE_ID);
    // Open by c1: c2 gets AlreadyBeingCreated, c1 gets "trying to recreate".
    let e = n
        .create(&r, &create_args("/d/f", "c2", flags::CREATE), now(2))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "Failed to CREATE_FILE /d/f for c2 on 127.0.0.1 because this file lease is currently owned by c1 on 127.0.0.1"
    );
    let e = n
        .create(&r, &create_args("/d/f", "c1", flags::CREATE), now(2))
        .unwrap_err();
    assert!(matches!(e, FsError::AlreadyBeingCreated(_)));
    n.complete_prepare("/d/f", st.id, "c1", None, now(2))
        .unwrap();
    n.complete_finish("/d/f", st.id, "c1", now(2)).unwrap();
    let e = n
        .create(&r, &create_args("/d/f", "c2", flags::CREATE), now(3))
        .unwrap_err();
    assert_eq!(
        e,
        FsError::FileAlreadyExists("/d/f for client 127.0.0.1 already exists".into())
    );
    let e = n
        .create(
            &r,
            &create_args("/d", "c2", flags::CREATE | flags::OVERWRITE),
            now(3),
        )
        .unwrap_err();
    assert_eq!(
        e,
        FsError::FileAlreadyExists("/d already exists as a directory".into())
    );
    // Overwrite: new inode id, old blocks reported.
    let (st2, _) = n
        .create(&r, &create_args("/d/g", "c2", flags::CREATE), now(3))
        .unwrap();
    let plan = n
        .add_block_prepare("/d/g", st2.id, "c2", None, now(3))
        .unwrap();
    assert!(matches!(plan, AddBlockPlan::New { .. }));
    let (_, b, off) = n
        .add_block_allocate("/d/g", st2.id, "c2", None, now(3))
        .unwrap();
    assert_eq!(
        (b.id, b.gs, off),
        (FIRST_BLOCK_ID, FIRST_GENERATION_STAMP, 0)
    );
    let (st3, removed) = n
        .create(
            &r,
            &create_args("/d/g", "c3", flags::CREATE | flags::OVERWRITE),
            now(4),
        )
        .unwrap();
    assert_ne!(st3.id, st2.id);
    assert_eq!(removed, vec![b.id]);
    assert!(n.block_owner(b.id).is_none());
    assert!(!n.leases().has_lease("c2"));
    // createParent=false with a missing parent.
    let mut a = create_args("/nodir/f", "c1", flags::CREATE);
    a.create_parent = false;
    let e = n.create(&r, &a, now(5)).unwrap_err();
    assert_eq!(
        e,
        FsError::FileNotFound("Parent directory doesn't exist: /nodir".into())
    );
    // Replication out of range.
    let mut a = create_args("/d/r", "c1", flags::CREATE);
    a.replication = 0;
    assert!(matches!(
        n.create(&r, &a, now(5)).unwrap_err(),
        FsError::Io(_)
    ));
}

#[test]
fn write_path_blocks_and_lengths() {
    let mut n = ns();
    let r = root(&n);
    let (st, _) = n
        .create(&r, &create_args("/f", "c", flags::CREATE), now(1))
        .unwrap();
    let (_, b1, _) = n
        .add_block_allocate("/f", st.id, "c", None, now(1))
        .unwrap();
    // A retried addBlock without previous returns the same empty block.
    match n.add_block_prepare("/f", st.id, "c", None, now(1)).unwrap() {
        AddBlockPlan::Existing { block, offset, .. } => assert_eq!((block, offset), (b1, 0)),
        p => panic!("{p:?}"),
    }
    let prev = FileBlock {
        num_bytes: 100,
        ..b1
    };
    let AddBlockPlan::New {
        offset, previous, ..
    } = n
        .add_block_prepare("/f", st.id, "c", Some(prev), now(2))
        .unwrap()
    else {
        panic!()
    };
    assert_eq!((offset, previous), (100, Some(prev)));
    let (_, b2, off) = n
        .add_block_allocate("/f", st.id, "c", Some(b1.id), now(2))
        .unwrap();
    assert_eq!((b2.id, b2.gs, off), (b1.id + 1, b1.gs + 1, 100));
    // Retried addBlock(previous=b1) returns b2 again.
    match n
        .add_block_prepare("/f", st.id, "c", Some(prev), now(2))
        .unwrap()
    {
        AddBlockPlan::Existing { block, offset, .. } => {
            assert_eq!((block.id, offset), (b2.id, 100))
        }
        p => panic!("{p:?}"),
    }
    // Wrong holder.
    let e = n
        .add_block_prepare("/f", st.id, "other", None, now(2))
        .unwrap_err();
    assert!(matches!(e, FsError::LeaseExpired(_)));
    // fsync makes the length visible.
    n.fsync("/f", st.id, "c", 42, now(3)).unwrap();
    assert_eq!(n.file_info(&r, "/f").unwrap().unwrap().length, 142);
    // Pipeline: new GS, then updatePipeline.
    let gs = n.update_block_for_pipeline(&b2, "c", now(3)).unwrap();
    assert_eq!(gs, b2.gs + 1);
    let newb = FileBlock {
        id: b2.id,
        gs,
        num_bytes: 50,
    };
    n.update_pipeline("c", &b2, &newb, now(3)).unwrap();
    let e = n.update_pipeline("c", &newb, &newb, now(3)).unwrap_err();
    assert!(e.to_string().contains("to an older state"), "{e}");
    // abandon of a non-last block is ignored; of the last drops it.
    assert!(!n.abandon_block("/f", st.id, "c", b1.id, now(4)).unwrap());
    let plan = n
        .complete_prepare(
            "/f",
            st.id,
            "c",
            Some(FileBlock {
                num_bytes: 60,
                ..newb
            }),
            now(4),
        )
        .unwrap();
    assert_eq!(
        plan,
        CompletePlan::Check {
            file: n.check_lease("/f", st.id, "c").unwrap(),
            blocks: vec![b1.id, b2.id]
        }
    );
    n.complete_finish("/f", st.id, "c", now(4)).unwrap();
    assert_eq!(n.file_info(&r, "/f").unwrap().unwrap().length, 160);
    assert!(n.is_file_closed(&r, "/f").unwrap());
    assert_eq!(
        n.complete_prepare("/f", st.id, "c", None, now(5)).unwrap(),
        CompletePlan::AlreadyClosed
    );
    // Append returns the partial last block at its offset.
    let ar = n.append(&r, "/f", "c9", "10.0.0.9", 0, now(6)).unwrap();
    let (lb, loff) = ar.last_block.unwrap();
    assert_eq!((lb.id, lb.num_bytes, loff), (b2.id, 60, 100));
    assert!(ar.status.name.is_empty());
    let e = n
        .append(&r, "/f", "c10", "10.0.0.10", 0, now(7))
        .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("Failed to APPEND_FILE /f for c10 on 10.0.0.10"),
        "{e}"
    );
    // After the soft limit another client gets RecoveryInProgress.
    let e = n
        .append(&r, "/f", "c10", "10.0.0.10", 0, now(70))
        .unwrap_err();
    assert!(matches!(e, FsError::RecoveryInProgress(_)));
    assert!(
        n.check_consistency().is_empty(),
        "{:?}",
        n.check_consistency()
    );
    let e = n.append(&r, "/nope", "c10", "m", 0, now(70)).unwrap_err();
    assert_eq!(
        e,
        FsError::FileNotFound("File does not exist: /nope".into())
    );
}

#[test]
fn listing_pages_and_byte_order() {
    let mut n = ns();
    let r = root(&n);
    for name in ["b", "a", "C", "é", "aa"] {
        n.mkdirs(&r, &format!("/d/{name}"), 0o755, true, now(1))
            .unwrap();
    }
    let l = n.listing(&r, "/d", b"", false).unwrap().unwrap();
    let names: Vec<_> = l.entries.iter().map(|e| e.name.clone()).collect();
    assert_eq!(names, vec![b"C".to_vec(), b"a".to_vec(), b"aa".to_vec()]);
    assert_eq!(l.remaining, 2);
    let l = n.listing(&r, "/d", b"aa", false).unwrap().unwrap();
    let names: Vec<_> = l.entries.iter().map(|e| e.name.clone()).collect();
    assert_eq!(names, vec![b"b".to_vec(), "é".as_bytes().to_vec()]);
    assert_eq!(l.remaining, 0);
    assert!(n.listing(&r, "/missing", b"", false).unwrap().is_none());
    touch(&mut n, &r, "/d/file");
    let l = n.listing(&r, "/d/file", b"", false).unwrap().unwrap();
    assert_eq!(l.entries.len(), 1);
    assert!(l.entries[0].name.is_empty());
    assert!(!l.entries[0].is_dir);
}

#[test]
fn rename_cases() {
    let mut n = ns();
    let r = root(&n);
    n.mkdirs(&r, "/a", 0o755, true, now(1)).unwrap();
    n.mkdirs(&r, "/b", 0o755, true, now(1)).unwrap();
    let f = touch(&mut n, &r, "/a/f");
    touch(&mut n, &r, "/a/g");
    // Old rename: into an existing directory.
    assert!(n.rename(&r, "/a/f", "/b", now(2)).unwrap());
    assert_eq!(n.file_info(&r, "/b/f").unwrap().unwrap().id, f);
    // Failures are false.
    assert!(!n.rename(&r, "/a/missing", "/c", now(2)).unwrap());
    assert!(!n.rename(&r, "/a/g", "/b/f", now(2)).unwrap());
    assert!(!n.rename(&r, "/a/g", "/nodir/x", now(2)).unwrap());
    assert!(!n.rename(&r, "/a", "/a/sub", now(2)).unwrap());
    assert!(n.rename(&r, "/b/f", "/b/f", now(2)).unwrap());
    // rename2 throws.
    let e = n
        .rename2(&r, "/a/missing", "/c", false, now(3))
        .unwrap_err();
    assert_eq!(
        e,
        FsError::FileNotFound("rename source /a/missing is not found.".into())
    );
    let e = n.rename2(&r, "/a/g", "/b/f", false, now(3)).unwrap_err();
    assert_eq!(
        e,
        FsError::FileAlreadyExists("rename destination /b/f already exists".into())
    );
    let e = n
        .rename2(&r, "/a/g", "/nodir/x", false, now(3))
        .unwrap_err();
    assert!(matches!(e, FsError::FileNotFound(_)));
    let e = n.rename2(&r, "/a/g", "/b", true, now(3)).unwrap_err();
    assert!(e.to_string().contains("must both be directories"), "{e}");
    let e = n.rename2(&r, "/a", "/b", true, now(3)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "rename destination directory is not empty: /b"
    );
    let e = n.rename2(&r, "/a/g", "/b/f/x", false, now(3)).unwrap_err();
    assert!(matches!(e, FsError::ParentNotDirectory(_)));
    // rename2 with overwrite replaces the file and never moves into a directory.
    let g = n.file_info(&r, "/a/g").unwrap().unwrap().id;
    n.rename2(&r, "/a/g", "/b/f", true, now(4)).unwrap();
    assert_eq!(n.file_info(&r, "/b/f").unwrap().unwrap().id, g);
    assert!(n.file_info(&r, "/a/g").unwrap().is_none());
    n.rename2(&r, "/b/f", "/a/h", false, now(5)).unwrap();
    assert!(n.file_info(&r, "/a/h").unwrap().is_some());
    assert!(
        n.check_consistency().is_empty(),
        "{:?}",
        n.check_consistency()
    );
}

#[test]
fn delete_cases() {
    let mut n = ns();
    let r = root(&n);
    n.mkdirs(&r, "/d/e", 0o755, true, now(1)).unwrap();
    let (st, _) = n
        .create(&r, &create_args("/d/e/f", "c", flags::CREATE), now(1))
        .unwrap();
    let (_, b, _) = n
        .add_block_allocate("/d/e/f", st.id, "c", None, now(1))
        .unwrap();
    assert!(n.delete(&r, "/missing", true, now(2)).unwrap().is_none());
    assert!(n.delete(&r, "/", true, now(2)).unwrap().is_none());
    let e = n.delete(&r, "/d", false, now(2)).unwrap_err();
    assert_eq!(e.to_string(), "/d is non empty");
    let removed = n.delete(&r, "/d", true, now(2)).unwrap().unwrap();
    assert_eq!(removed.blocks, vec![b.id]);
    assert_eq!(removed.inodes, 3);
    assert_eq!(removed.open_files, vec![(st.id, "c".to_string())]);
    assert!(n.leases().is_empty());
    assert_eq!(n.total_blocks(), 0);
    assert_eq!(n.total_files_and_dirs(), 1);
    assert!(
        n.check_consistency().is_empty(),
        "{:?}",
        n.check_consistency()
    );
}

#[test]
fn content_summary_counts() {
    let mut n = ns();
    let r = root(&n);
    n.mkdirs(&r, "/s/x", 0o755, true, now(1)).unwrap();
    let (st, _) = n
        .create(&r, &create_args("/s/x/f", "c", flags::CREATE), now(1))
        .unwrap();
    let (_, b, _) = n
        .add_block_allocate("/s/x/f", st.id, "c", None, now(1))
        .unwrap();
    n.complete_prepare(
        "/s/x/f",
        st.id,
        "c",
        Some(FileBlock { num_bytes: 10, ..b }),
        now(1),
    )
    .unwrap();
    n.complete_finish("/s/x/f", st.id, "c", now(1)).unwrap();
    let cs = n.content_summary(&r, "/s").unwrap();
    assert_eq!((cs.length, cs.file_count, cs.directory_count), (10, 1, 2));
    assert_eq!((cs.space_consumed, cs.quota, cs.space_quota), (30, -1, -1));
    let cs = n.content_summary(&r, "/s/x/f").unwrap();
    assert_eq!((cs.file_count, cs.directory_count), (1, 0));
    let e = n.content_summary(&r, "/zz").unwrap_err();
    assert_eq!(e.to_string(), "File does not exist: /zz");
    assert_eq!(
        n.set_replication(&r, "/s/x/f", 2, now(2)).unwrap(),
        Some(vec![b.id])
    );
    assert_eq!(n.content_summary(&r, "/s").unwrap().space_consumed, 20);
    assert_eq!(n.set_replication(&r, "/s", 2, now(2)).unwrap(), None);
    assert_eq!(n.set_replication(&r, "/none", 2, now(2)).unwrap(), None);
}

/// A namespace whose content summaries count one inode per step.
fn one_inode_summary_steps() -> Namespace {
    Namespace::new(
        NamespaceConfig {
            superuser: "root".into(),
            content_summary_limit: 1,
            ..NamespaceConfig::default()
        },
        now(0),
    )
}

#[test]
fn content_summary_in_steps_counts_what_one_walk_counts() {
    let mut n = one_inode_summary_steps();
    let r = root(&n);
    for d in ["/s/a", "/s/b/c", "/s/d"] {
        n.mkdirs(&r, d, 0o755, true, now(1)).unwrap();
    }
    for f in ["/s/a/f1", "/s/b/c/f2", "/s/f3"] {
        touch(&mut n, &r, f);
    }
    let mut walk = n.summary_walk(&r, "/s").unwrap();
    // The first step counts /s alone and lists its children.
    assert!(!n.summary_step(&r, &mut walk).unwrap());
    // Between steps the namespace may change: a child removed meanwhile is skipped.
    n.delete(&r, "/s/d", true, now(2)).unwrap();
    let mut steps = 1;
    while !n.summary_step(&r, &mut walk).unwrap() {
        steps += 1;
    }
    // One inode per step: a, b, c, the removed d, f1, f2, f3.
    assert_eq!(steps, 7);
    let stepped = walk.summary();
    assert_eq!((stepped.directory_count, stepped.file_count), (4, 3));
    assert_eq!(stepped, n.content_summary(&r, "/s").unwrap());
    // A file is one step; an unknown path fails before any.
    let mut file = n.summary_walk(&r, "/s/f3").unwrap();
    assert!(n.summary_step(&r, &mut file).unwrap());
    assert_eq!(
        (file.summary().file_count, file.summary().directory_count),
        (1, 0)
    );
    assert!(n.summary_walk(&r, "/zz").is_err());
}

/// The subtree's READ_EXECUTE check runs with the steps: a directory the caller may not read,
/// met after several steps, fails the summary with Hadoop's message; the superuser and a
/// caller who may read everything get the counts.
#[test]
fn content_summary_checks_each_directory_as_it_steps() {
    let mut n = one_inode_summary_steps();
    let r = root(&n);
    for d in ["/p/a", "/p/b", "/p/z/secret/deeper"] {
        n.mkdirs(&r, d, 0o755, true, now(1)).unwrap();
    }
    n.set_permission(&r, "/p/z/secret", 0o700, now(1)).unwrap();
    let a = alice(&n);
    let mut walk = n.summary_walk(&a, "/p").unwrap();
    let mut steps = 0;
    let e = loop {
        match n.summary_step(&a, &mut walk) {
            Ok(done) => {
                assert!(!done, "the walk ended without meeting /p/z/secret");
                steps += 1;
            }
            Err(e) => break e,
        }
    };
    assert!(steps >= 2, "denied after {steps} steps");
    assert_eq!(
        e.to_string(),
        "Permission denied: user=alice, access=READ_EXECUTE, \
         inode=\"/p/z/secret\":root:supergroup:drwx------"
    );
    assert!(n.content_summary(&a, "/p").is_err());
    assert!(n.content_summary(&a, "/p/a").is_ok());
    assert_eq!(n.content_summary(&r, "/p").unwrap().directory_count, 6);
    n.set_permission(&r, "/p/z/secret", 0o755, now(2)).unwrap();
    assert_eq!(n.content_summary(&a, "/p").unwrap().directory_count, 6);
}

#[test]
fn set_times_and_blocks_view() {
    let mut n = ns();
    let r = root(&n);
    touch(&mut n, &r, "/t");
    n.set_times(&r, "/t", Some(5), None, now(2)).unwrap();
    let st = n.file_info(&r, "/t").unwrap().unwrap();
    assert_eq!(st.mtime, 5);
    assert_ne!(st.atime, 5);
    let e = n.set_times(&r, "/x", Some(1), Some(1), now(2)).unwrap_err();
    assert_eq!(e.to_string(), "File/Directory /x does not exist.");
    let e = n.file_blocks(&r, "/").unwrap_err();
    assert_eq!(e.to_string(), "Path is not a file: /");
    let e = n.file_blocks(&r, "/x").unwrap_err();
    assert_eq!(e.to_string(), "File does not exist: /x");
}

#[test]
fn manual_safe_mode_blocks_mutations() {
    let mut n = ns();
    let r = root(&n);
    n.set_manual_safe_mode(true);
    let e = n.mkdirs(&r, "/x", 0o755, true, now(1)).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("Cannot create directory /x. Name node is in safe mode.")
    );
    assert!(n.file_info(&r, "/").unwrap().is_some());
    n.set_manual_safe_mode(false);
    assert!(n.mkdirs(&r, "/x", 0o755, true, now(1)).unwrap());
}

#[test]
fn leases_expire_and_release() {
    let mut n = ns();
    let r = root(&n);
    let (st, _) = n
        .create(&r, &create_args("/l", "c", flags::CREATE), now(0))
        .unwrap();
    n.renew_lease("c", Duration::from_secs(1000)).unwrap();
    assert!(n.hard_expired_leases(Duration::from_secs(2000)).is_empty());
    let exp = n.hard_expired_leases(Duration::from_secs(2201));
    assert_eq!(exp, vec![("c".to_string(), vec![st.id])]);
    let of = n.open_file_by_id(st.id).unwrap();
    assert!(n.release_lease(&of, None, false, now(2201)).unwrap());
    assert!(n.is_file_closed(&r, "/l").unwrap());
    assert!(n.leases().is_empty());
    assert!(n.recover_lease_prepare(&r, "/l").unwrap().is_none());
}

#[test]
fn every_mutation_reaches_the_journal_and_replays() {
    let mut n = ns();
    let r = root(&n);
    let j = MemoryJournal::default();
    n.set_journal(Box::new(j.clone()));
    n.mkdirs(&r, "/j/k", 0o755, true, now(1)).unwrap();
    let (st, _) = n
        .create(&r, &create_args("/j/k/f", "c", flags::CREATE), now(1))
        .unwrap();
    let (_, b, _) = n
        .add_block_allocate("/j/k/f", st.id, "c", None, now(1))
        .unwrap();
    n.complete_prepare(
        "/j/k/f",
        st.id,
        "c",
        Some(FileBlock { num_bytes: 7, ..b }),
        now(1),
    )
    .unwrap();
    n.complete_finish("/j/k/f", st.id, "c", now(1)).unwrap();
    n.rename(&r, "/j/k/f", "/j/g", now(2)).unwrap();
    n.set_permission(&r, "/j/g", 0o600, now(2)).unwrap();
    n.mkdirs(&r, "/gone", 0o755, true, now(2)).unwrap();
    n.delete(&r, "/gone", true, now(3)).unwrap();
    let ops = j.ops.lock().clone();
    assert_eq!(ops.len(), 10);
    assert_eq!(n.last_txid(), 10);
    // The ops survive the edit-log encoding.
    let ops: Vec<_> = ops
        .iter()
        .map(|op| crate::edit_codec::decode(&crate::edit_codec::encode(op)).unwrap())
        .collect();
    let mut m = ns();
    for op in &ops {
        m.apply(op, Duration::ZERO).unwrap();
    }
    let dump = |n: &Namespace| {
        let l = n.listing(&r, "/j", b"", false).unwrap().unwrap();
        (
            l,
            n.file_info(&r, "/j/g").unwrap(),
            n.last_block_id(),
            n.last_generation_stamp(),
        )
    };
    assert_eq!(dump(&n), dump(&m));
    assert_eq!(m.file_info(&r, "/j/g").unwrap().unwrap().length, 7);
    assert!(
        n.check_consistency().is_empty(),
        "{:?}",
        n.check_consistency()
    );
    assert!(
        m.check_consistency().is_empty(),
        "{:?}",
        m.check_consistency()
    );
    assert!(m.file_info(&r, "/gone").unwrap().is_none());
}

#[test]
fn consistency_check_finds_damage() {
    let mut n = ns();
    let r = root(&n);
    touch(&mut n, &r, "/x/f");
    assert!(n.check_consistency().is_empty());
    n.block_owner.insert(FIRST_BLOCK_ID + 99, 1);
    n.leases.add("ghost", 424242, Duration::ZERO);
    let bad = n.check_consistency();
    assert_eq!(bad.len(), 2, "{bad:?}");
}

#[test]
fn open_files_page_in_id_order_under_a_path() {
    let mut n = ns();
    let r = root(&n);
    let mut ids = Vec::new();
    for (path, client) in [
        ("/o/a", "c1"),
        ("/o/b", "c2"),
        ("/p/c", "c1"),
        ("/o/d", "c3"),
    ] {
        let (st, _) = n
            .create(&r, &create_args(path, client, flags::CREATE), now(0))
            .unwrap();
        ids.push(st.id);
    }
    // A closed file is not listed.
    touch(&mut n, &r, "/o/closed");
    let (page, more) = n.open_files_after(0, "/", 2);
    let got: Vec<_> = page
        .iter()
        .map(|e| (e.path.as_str(), e.client_name.as_str()))
        .collect();
    assert_eq!(got, vec![("/o/a", "c1"), ("/o/b", "c2")]);
    assert!(more);
    let (page, more) = n.open_files_after(page[1].id, "/", 2);
    let got: Vec<_> = page.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(got, vec!["/p/c", "/o/d"]);
    assert!(!more);
    let (page, more) = n.open_files_after(0, "/o", 10);
    let got: Vec<_> = page.iter().map(|e| e.id).collect();
    assert_eq!(got, vec![ids[0], ids[1], ids[3]]);
    assert!(!more);
    assert_eq!(n.open_files_after(ids[3], "", 10), (Vec::new(), false));
}

/// Inode ids far from the root's (below it, and 2^32 and more above it) — a parent then
/// kept whole in the inode's extension — load from an image and are written back byte
/// for byte, with no extension section for them.
#[test]
fn an_image_with_far_inode_ids_reads_back_identically() {
    use crate::codec::W;
    use crate::fsdir::{DirInode, FileInode, Inode, InodeKind, Name, Perm, PermissionStatus};
    let mut n = ns();
    let perm = Perm::intern(PermissionStatus {
        owner: "root".into(),
        group: "supergroup".into(),
        mode: 0o755,
    });
    let dir = |parent: u64, name: &[u8]| {
        Inode::new(
            parent,
            Name::new(name),
            perm,
            5,
            5,
            InodeKind::Dir(DirInode::default()),
        )
    };
    let file = |parent: u64, name: &[u8], id: u64| {
        let block = FileBlock {
            id,
            gs: FIRST_GENERATION_STAMP,
            num_bytes: 10,
        };
        let f = FileInode::new(3, 1024, vec![block], None);
        Inode::new(parent, Name::new(name), perm, 6, 6, InodeKind::File(f))
    };
    let (far, low) = (u64::MAX - 7, 9);
    let near = ROOT_INODE_ID + u64::from(u32::MAX) - 1;
    let mut w = W(IMAGE_PAYLOAD_MAGIC.to_vec());
    for v in [0, near, FIRST_BLOCK_ID + 1, FIRST_GENERATION_STAMP, 6] {
        w.u(v);
    }
    let root = n.dir.get(ROOT_INODE_ID).unwrap().clone();
    // Parent first, each directory's children by name: the order encode_image writes.
    for (id, inode) in [
        (ROOT_INODE_ID, root),
        (far, dir(ROOT_INODE_ID, b"a")),
        (
            near,
            file(far, b"f-with-a-name-longer-than-inline", FIRST_BLOCK_ID),
        ),
        (low, dir(ROOT_INODE_ID, b"b")),
        (ROOT_INODE_ID + 1, dir(low, b"c")),
        (
            u64::from(u32::MAX) * 2,
            file(ROOT_INODE_ID + 1, b"g", FIRST_BLOCK_ID + 1),
        ),
    ] {
        super::image::encode_inode(&mut w, id, &inode);
    }
    n.load_image(&w.0, Duration::ZERO).unwrap();
    assert_eq!(n.check_consistency(), Vec::<String>::new());
    assert_eq!(n.dir.path_of(u64::from(u32::MAX) * 2), "/b/c/g");
    assert_eq!(n.dir.get(near).map(Inode::parent), Some(far));
    assert_eq!(n.encode_image().1, w.0);
}

/// An image of several decoding batches (the inodes are decoded on a thread of their own
/// and placed in batches) loads whole; damage in a later batch is the error returned — an
/// inode under an unknown parent, or a cut anywhere — never a panic, and the first damage
/// in image order is the one reported.
#[test]
fn an_image_of_many_batches_reports_its_first_damage() {
    use crate::codec::W;
    use crate::fsdir::{DirInode, FileInode, Inode, InodeKind, Name, Perm, PermissionStatus};
    let perm = Perm::intern(PermissionStatus {
        owner: "root".into(),
        group: "supergroup".into(),
        mode: 0o644,
    });
    let files = 10_000u64;
    // The inodes: root, /d, its files; `bad` files (by position) name a parent nobody has.
    let image = |bad: &[u64]| {
        let mut w = W(IMAGE_PAYLOAD_MAGIC.to_vec());
        let last_inode = ROOT_INODE_ID + 1 + files;
        for v in [
            0,
            last_inode,
            FIRST_BLOCK_ID + files,
            FIRST_GENERATION_STAMP,
            files + 2,
        ] {
            w.u(v);
        }
        let root = ns().dir.get(ROOT_INODE_ID).unwrap().clone();
        super::image::encode_inode(&mut w, ROOT_INODE_ID, &root);
        let d = ROOT_INODE_ID + 1;
        let dir = Inode::new(
            ROOT_INODE_ID,
            Name::new(b"d"),
            perm,
            5,
            5,
            InodeKind::Dir(DirInode::default()),
        );
        super::image::encode_inode(&mut w, d, &dir);
        for k in 0..files {
            let block = FileBlock {
                id: FIRST_BLOCK_ID + k,
                gs: FIRST_GENERATION_STAMP,
                num_bytes: 10,
            };
            let parent = if bad.contains(&k) {
                last_inode + 100 + k
            } else {
                d
            };
            let f = FileInode::new(3, 1024, vec![block], None);
            let name = format!("f{k:05}");
            let inode = Inode::new(
                parent,
                Name::new(name.as_bytes()),
                perm,
                6,
                6,
                InodeKind::File(f),
            );
            super::image::encode_inode(&mut w, d + 1 + k, &inode);
        }
        w.0
    };
    let good = image(&[]);
    let mut n = ns();
    n.load_image(&good, Duration::ZERO).unwrap();
    assert_eq!(n.total_blocks() as u64, files);
    assert_eq!(n.check_consistency(), Vec::<String>::new());
    assert_eq!(n.encode_image().1, good);
    // Two unknown parents in later batches: the first one is reported.
    let d = ROOT_INODE_ID + 1;
    let err = ns()
        .load_image(&image(&[9_000, 6_000]), Duration::ZERO)
        .unwrap_err();
    assert_eq!(
        err,
        ImageDecodeError::Orphan {
            id: d + 1 + 6_000,
            parent: ROOT_INODE_ID + 1 + files + 100 + 6_000
        }
    );
    // An unknown parent before a cut: the parent, as one pass would find it first.
    let orphan_then_cut = image(&[7_000]);
    let cut = orphan_then_cut.len() - 40;
    assert!(matches!(
        ns().load_image(&orphan_then_cut[..cut], Duration::ZERO),
        Err(ImageDecodeError::Orphan { id, .. }) if id == d + 1 + 7_000
    ));
    // Cut anywhere: an error.
    for cut in (IMAGE_PAYLOAD_MAGIC.len()..good.len()).step_by(good.len() / 101) {
        assert!(
            ns().load_image(&good[..cut], Duration::ZERO).is_err(),
            "cut at {cut}"
        );
    }
}
