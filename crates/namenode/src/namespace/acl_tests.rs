//! ACL and xattr operations on a namespace: permission effects, inheritance, limits,
//! edit replay and the image.

use std::time::Duration;

use super::*;
use crate::edit::MemoryJournal;
use crate::fsdir::acl::{AclEntry, AclType};
use crate::fsdir::xattr::{XAttr, XAttrNs};

fn now() -> Now {
    Now {
        wall_ms: 1_700_000_000_000,
        mono: Duration::from_secs(1),
    }
}

fn ns() -> Namespace {
    Namespace::new(
        NamespaceConfig {
            superuser: "root".into(),
            max_xattrs_per_inode: 2,
            max_xattr_size: 16,
            ..NamespaceConfig::default()
        },
        now(),
    )
}

fn user(n: &Namespace, u: &str) -> Caller {
    n.caller(u, vec![format!("{u}-group")])
}

fn named(kind: AclType, name: &str, perm: u8) -> AclEntry {
    AclEntry::new(false, kind, Some(name), perm)
}

fn ux(name: &str, value: Option<&[u8]>) -> XAttr {
    XAttr {
        ns: XAttrNs::User,
        name: name.into(),
        value: value.map(<[u8]>::to_vec),
    }
}

/// /p owned by alice, 0750, with bob allowed rwx and eve denied.
fn setup() -> Namespace {
    let mut n = ns();
    let r = n.caller("root", vec![]);
    n.mkdirs(&r, "/p", 0o750, true, now()).unwrap();
    n.set_owner(&r, "/p", Some("alice"), Some("staff"), now())
        .unwrap();
    let a = user(&n, "alice");
    let spec = [
        named(AclType::User, "bob", 7),
        named(AclType::User, "eve", 0),
    ];
    n.change_acl(&a, "/p", AclChange::Modify, &spec, now())
        .unwrap();
    n
}

#[test]
fn named_entries_and_mask_decide_access() {
    let mut n = setup();
    let (bob, eve, amy) = (user(&n, "bob"), user(&n, "eve"), user(&n, "amy"));
    n.mkdirs(&bob, "/p/b", 0o755, false, now()).unwrap();
    assert!(matches!(
        n.mkdirs(&eve, "/p/e", 0o755, false, now()),
        Err(FsError::AccessControl(_))
    ));
    assert!(matches!(
        n.listing(&amy, "/p", b"", false),
        Err(FsError::AccessControl(_))
    ));
    let st = n.file_info(&bob, "/p").unwrap().unwrap();
    assert!(st.has_acl);
    assert_eq!(st.perm.mode & 0o777, 0o770);
    // chmod g-w narrows the mask: bob keeps r-x only.
    let a = user(&n, "alice");
    n.set_permission(&a, "/p", 0o750, now()).unwrap();
    assert!(matches!(
        n.mkdirs(&bob, "/p/b2", 0o755, false, now()),
        Err(FsError::AccessControl(_))
    ));
    assert!(n.listing(&bob, "/p", b"", false).is_ok());
    // Only the owner changes the ACL; removeAcl restores the group bits.
    assert!(matches!(
        n.change_acl(&bob, "/p", AclChange::RemoveAll, &[], now()),
        Err(FsError::AccessControl(_))
    ));
    n.change_acl(&a, "/p", AclChange::RemoveAll, &[], now())
        .unwrap();
    let st = n.get_acl_status(&a, "/p").unwrap();
    assert!(st.entries.is_empty());
    assert_eq!(st.mode & 0o777, 0o750);
}

#[test]
fn default_acls_are_inherited_and_files_refuse_them() {
    let mut n = setup();
    let a = user(&n, "alice");
    let spec = [AclEntry::new(true, AclType::User, Some("carl"), 6)];
    n.change_acl(&a, "/p", AclChange::Modify, &spec, now())
        .unwrap();
    n.mkdirs(&a, "/p/d", 0o755, false, now()).unwrap();
    let d = n.get_acl_status(&a, "/p/d").unwrap();
    assert!(
        d.entries
            .iter()
            .any(|e| !e.default && e.name.as_deref() == Some("carl"))
    );
    assert!(
        d.entries
            .iter()
            .any(|e| e.default && e.name.as_deref() == Some("carl"))
    );
    let (st, _) = n
        .create(
            &a,
            &CreateArgs {
                src: "/p/d/f",
                masked: 0o644,
                unmasked: None,
                client_name: "c",
                client_machine: "m",
                flags: flags::CREATE,
                create_parent: false,
                replication: 1,
                block_size: 1 << 20,
            },
            now(),
        )
        .unwrap();
    assert!(st.has_acl);
    let f = n.get_acl_status(&a, "/p/d/f").unwrap();
    assert!(f.entries.iter().all(|e| !e.default));
    let err = n
        .change_acl(&a, "/p/d/f", AclChange::Modify, &spec, now())
        .unwrap_err();
    assert_eq!(
        err,
        FsError::Acl("Invalid ACL: only directories may have a default ACL.".into())
    );
}

/// Under a default ACL the client's unmasked mode, not the umasked one, filters the
/// inherited entries (POSIX ACL inheritance, Hadoop's default); elsewhere, without an
/// unmasked mode, or with dfs.namenode.posix.acl.inheritance.enabled=false, the umask holds.
#[test]
fn unmasked_mode_applies_under_a_default_acl() {
    fn run(posix: bool) -> (u16, u16, u16, u16) {
        let mut n = setup();
        n.cfg.posix_acl_inheritance = posix;
        let a = user(&n, "alice");
        let spec = [AclEntry::new(true, AclType::User, Some("carl"), 6)];
        n.change_acl(&a, "/p", AclChange::Modify, &spec, now())
            .unwrap();
        let r = n.caller("root", vec![]);
        n.mkdirs(&r, "/plain", 0o755, false, now()).unwrap();
        n.set_owner(&r, "/plain", Some("alice"), None, now())
            .unwrap();
        let file = |n: &mut Namespace, src: &str, unmasked: Option<u16>| {
            let args = CreateArgs {
                src,
                masked: 0o644,
                unmasked,
                client_name: "c",
                client_machine: "m",
                flags: flags::CREATE,
                create_parent: false,
                replication: 1,
                block_size: 1 << 20,
            };
            n.create(&a, &args, now()).unwrap().0.perm.mode & 0o777
        };
        let under = file(&mut n, "/p/f", Some(0o666));
        let old_client = file(&mut n, "/p/g", None);
        let plain = file(&mut n, "/plain/f", Some(0o666));
        n.mkdirs_with_modes(&a, "/p/d", 0o755, Some(0o777), false, now())
            .unwrap();
        let dir = n.file_info(&a, "/p/d").unwrap().unwrap().perm.mode & 0o777;
        (under, old_client, plain, dir)
    }
    // Default ACL of /p (mode 750): user::rwx, user:carl:rw-, group::r-x, mask::rwx,
    // other::---. The group bits are the mask filtered by the mode's group bits.
    assert_eq!(run(true), (0o660, 0o640, 0o644, 0o770));
    assert_eq!(run(false), (0o640, 0o640, 0o644, 0o750));
}

#[test]
fn acls_disabled_fail_with_the_key() {
    let mut n = Namespace::new(
        NamespaceConfig {
            acls_enabled: false,
            ..NamespaceConfig::default()
        },
        now(),
    );
    let r = n.caller("hdfs", vec![]);
    let err = n.get_acl_status(&r, "/").unwrap_err();
    assert!(matches!(&err, FsError::Acl(m) if m.contains("dfs.namenode.acls.enabled")));
    assert!(
        n.change_acl(&r, "/", AclChange::RemoveAll, &[], now())
            .is_err()
    );
}

#[test]
fn xattr_rules_flags_and_limits() {
    let mut n = setup();
    let (a, bob, amy) = (user(&n, "alice"), user(&n, "bob"), user(&n, "amy"));
    n.set_xattr(&bob, "/p", ux("a", Some(b"1")), 1, now())
        .unwrap();
    assert!(matches!(
        n.set_xattr(&amy, "/p", ux("b", None), 1, now()),
        Err(FsError::AccessControl(_))
    ));
    assert!(
        matches!(n.set_xattr(&a, "/p", ux("a", None), 1, now()), Err(FsError::Io(m)) if m.contains("already exists"))
    );
    n.set_xattr(&a, "/p", ux("a", Some(b"2")), 2, now())
        .unwrap();
    n.set_xattr(&a, "/p", ux("b", None), 1, now()).unwrap();
    assert!(
        matches!(n.set_xattr(&a, "/p", ux("c", None), 1, now()), Err(FsError::Io(m)) if m.contains("exceed limit of 2"))
    );
    assert!(matches!(
        n.set_xattr(&a, "/p", ux("big", Some(&[0; 20])), 1, now()),
        Err(FsError::IllegalArgument(_))
    ));
    let trusted = XAttr {
        ns: XAttrNs::Trusted,
        name: "t".into(),
        value: None,
    };
    assert!(matches!(
        n.set_xattr(&a, "/p", trusted.clone(), 1, now()),
        Err(FsError::AccessControl(_))
    ));
    let got = n.get_xattrs(&a, "/p", &[]).unwrap();
    assert_eq!(got, vec![ux("a", Some(b"2")), ux("b", None)]);
    assert!(matches!(
        n.get_xattrs(&a, "/p", &[ux("zz", None)]),
        Err(FsError::Io(_))
    ));
    assert_eq!(n.list_xattrs(&a, "/p").unwrap().len(), 2);
    n.remove_xattr(&a, "/p", ux("b", None), now()).unwrap();
    assert!(matches!(
        n.remove_xattr(&a, "/p", ux("b", None), now()),
        Err(FsError::Io(_))
    ));
}

#[test]
fn acls_and_xattrs_survive_replay_and_the_image() {
    let mut n = ns();
    let j = MemoryJournal::default();
    n.set_journal(Box::new(j.clone()));
    let r = n.caller("root", vec![]);
    n.mkdirs(&r, "/p", 0o755, true, now()).unwrap();
    let spec = [
        named(AclType::User, "bob", 7),
        AclEntry::new(true, AclType::Group, Some("g"), 5),
    ];
    n.change_acl(&r, "/p", AclChange::Modify, &spec, now())
        .unwrap();
    n.mkdirs(&r, "/p/child", 0o755, true, now()).unwrap();
    n.set_xattr(&r, "/p", ux("k", Some(b"v")), 1, now())
        .unwrap();
    n.set_xattr(&r, "/", ux("r", None), 1, now()).unwrap();
    let dump = |n: &Namespace| {
        (
            n.get_acl_status(&r, "/p").unwrap(),
            n.get_acl_status(&r, "/p/child").unwrap(),
            n.get_xattrs(&r, "/p", &[]).unwrap(),
            n.get_xattrs(&r, "/", &[]).unwrap(),
        )
    };
    let mut m = ns();
    for op in j.ops.lock().iter() {
        let op = crate::edit_codec::decode(&crate::edit_codec::encode(op)).unwrap();
        m.apply(&op, Duration::ZERO).unwrap();
    }
    assert_eq!(dump(&m), dump(&n));
    let (_, image) = n.encode_image();
    let mut loaded = ns();
    loaded.load_image(&image, Duration::ZERO).unwrap();
    assert_eq!(dump(&loaded), dump(&n));
}
