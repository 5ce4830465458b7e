//! Quota tests: enforcement, messages, and the usage cache against a full recount.

use std::time::Duration;

use proptest::prelude::*;

use super::*;
use crate::fsdir::{FileBlock, QUOTA_UNSET};

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
            min_block_size: 0,
            ..NamespaceConfig::default()
        },
        now(),
    )
}

fn args(src: &str) -> CreateArgs<'_> {
    CreateArgs {
        src,
        masked: 0o644,
        unmasked: None,
        client_name: "cl",
        client_machine: "127.0.0.1",
        flags: flags::CREATE | flags::OVERWRITE,
        create_parent: true,
        replication: 2,
        block_size: 100,
    }
}

/// Writes `len` bytes to a new file `src` in blocks of 100 and closes it.
fn write(n: &mut Namespace, src: &str, len: u64) -> FsResult<()> {
    let r = n.caller("root", vec![]);
    let (st, _) = n.create(&r, &args(src), now())?;
    let mut last: Option<FileBlock> = None;
    let mut left = len;
    while left > 0 {
        if let Some(b) = last {
            n.add_block_prepare(src, st.id, "cl", Some(b), now())?;
        }
        let (_, b, _) = n.add_block_allocate(src, st.id, "cl", last.map(|b| b.id), now())?;
        let k = left.min(100);
        last = Some(FileBlock { num_bytes: k, ..b });
        left -= k;
    }
    n.complete_prepare(src, st.id, "cl", last, now())?;
    n.complete_finish(src, st.id, "cl", now())?;
    Ok(())
}

/// Every cached usage equals a full recount.
fn assert_cache_right(n: &Namespace) {
    for (id, u) in &n.quota_usage {
        assert_eq!(
            *u,
            n.subtree_usage(*id),
            "cached usage of {}",
            n.dir.path_of(*id)
        );
    }
}

#[test]
fn namespace_and_space_quotas_enforced_before_logging() {
    let mut n = ns();
    let r = n.caller("root", vec![]);
    n.mkdirs(&r, "/q", 0o755, true, now()).unwrap();
    n.set_quota("/q", 2, QUOTA_DONT_SET, Duration::ZERO)
        .unwrap();
    n.mkdirs(&r, "/q/a", 0o755, true, now()).unwrap();
    let txid = n.last_txid();
    let e = n.mkdirs(&r, "/q/b", 0o755, true, now()).unwrap_err();
    assert_eq!(
        e,
        FsError::NsQuotaExceeded(
            "The NameSpace quota (directories and files) of directory /q is exceeded: quota=2 file count=3".into()
        )
    );
    assert_eq!(n.last_txid(), txid, "nothing logged");
    assert!(n.file_info(&r, "/q/b").unwrap().is_none());
    // Space: 2 replicas × 100-byte blocks; 1 KB allows 5 blocks.
    n.set_quota("/q", QUOTA_RESET, 1024, Duration::ZERO)
        .unwrap();
    write(&mut n, "/q/f", 450).unwrap();
    assert_eq!(
        n.cached_usage(n.resolve(&FsPath::parse("/q").unwrap()).last().unwrap()),
        Some(Usage { ns: 3, ds: 900 })
    );
    let e = write(&mut n, "/q/g", 100).unwrap_err();
    assert_eq!(
        e,
        FsError::DsQuotaExceeded(
            "The DiskSpace quota of /q is exceeded: quota = 1024 B = 1 KB but diskspace consumed = 1100 B = 1.07 KB".into()
        )
    );
    assert_cache_right(&n);
    // Rename into the full directory, setReplication and append are checked too.
    write(&mut n, "/other", 100).unwrap();
    let e = n.rename(&r, "/other", "/q/other", now()).unwrap_err();
    assert!(matches!(e, FsError::DsQuotaExceeded(_)), "{e:?}");
    assert!(n.file_info(&r, "/other").unwrap().is_some());
    let e = n.set_replication(&r, "/q/f", 3, now()).unwrap_err();
    assert!(matches!(e, FsError::DsQuotaExceeded(_)), "{e:?}");
    n.set_replication(&r, "/q/f", 1, now()).unwrap();
    assert_cache_right(&n);
    // Clearing both quotas drops the directory from the cache.
    n.set_quota("/q", QUOTA_RESET, QUOTA_RESET, Duration::ZERO)
        .unwrap();
    assert!(n.quota_usage.is_empty());
}

#[test]
fn set_quota_argument_rules() {
    let mut n = ns();
    let r = n.caller("root", vec![]);
    write(&mut n, "/f", 1).unwrap();
    let e = n
        .set_quota("/", QUOTA_RESET, QUOTA_DONT_SET, Duration::ZERO)
        .unwrap_err();
    assert_eq!(
        e,
        FsError::JavaIllegalArgument("Cannot clear namespace quota on root.".into())
    );
    let e = n
        .set_quota("/f", 1, QUOTA_DONT_SET, Duration::ZERO)
        .unwrap_err();
    assert_eq!(e.to_string(), "`/f': Is not a directory");
    let e = n
        .set_quota("/nope", 1, QUOTA_DONT_SET, Duration::ZERO)
        .unwrap_err();
    assert_eq!(
        e,
        FsError::FileNotFound("Directory does not exist: /nope".into())
    );
    let e = n
        .set_quota("/", -5, QUOTA_DONT_SET, Duration::ZERO)
        .unwrap_err();
    assert!(matches!(e, FsError::JavaIllegalArgument(_)));
    // The root reports Long.MAX_VALUE as its namespace quota.
    assert_eq!(n.content_summary(&r, "/").unwrap().quota, i64::MAX);
}

#[test]
fn usage_survives_image_and_replay() {
    let mut n = ns();
    let j = crate::edit::MemoryJournal::default();
    n.set_journal(Box::new(j.clone()));
    let r = n.caller("root", vec![]);
    n.mkdirs(&r, "/a/b", 0o755, true, now()).unwrap();
    n.set_quota("/a", 100, 10_000, Duration::ZERO).unwrap();
    write(&mut n, "/a/b/f", 250).unwrap();
    let mut m = ns();
    for op in j.ops.lock().iter() {
        m.apply(op, Duration::ZERO).unwrap();
    }
    let a = n.resolve(&FsPath::parse("/a").unwrap()).last().unwrap();
    assert_eq!(m.cached_usage(a), Some(Usage { ns: 3, ds: 500 }));
    let (_, image) = n.encode_image();
    let mut k = ns();
    k.load_image(&image, Duration::ZERO).unwrap();
    assert_eq!(k.cached_usage(a), Some(Usage { ns: 3, ds: 500 }));
}

/// Quotas by storage type: DISK holds every replica and is enforced as space, SSD consumes
/// nothing; Hadoop's argument rules; the quotas survive edit replay and the image.
#[test]
fn quotas_by_storage_type() {
    const DISK: i32 = 1;
    const SSD: i32 = 2;
    const RAM_DISK: i32 = 4;
    let mut n = ns();
    let j = crate::edit::MemoryJournal::default();
    n.set_journal(Box::new(j.clone()));
    let r = n.caller("root", vec![]);
    n.mkdirs(&r, "/t", 0o755, true, now()).unwrap();
    n.set_type_quota("/t", QUOTA_DONT_SET, DISK, 1000, Duration::ZERO)
        .unwrap();
    n.set_type_quota("/t", QUOTA_DONT_SET, SSD, 10, Duration::ZERO)
        .unwrap();
    write(&mut n, "/t/f", 450).unwrap();
    let e = write(&mut n, "/t/g", 100).unwrap_err();
    assert_eq!(
        e,
        FsError::TypeQuotaExceeded(
            "Quota by storage type : DISK on path : /t is exceeded. quota = 1000 B = 1000 B but space consumed = 1100 B = 1.07 KB".into()
        )
    );
    assert_cache_right(&n);
    // The block past the quota was refused: /t/g stays empty.
    n.delete(&r, "/t/g", false, now()).unwrap();
    let cs = n.content_summary(&r, "/t").unwrap();
    let tq = cs.type_quotas.expect("type quotas reported");
    assert_eq!((tq.get(1), tq.get(2), tq.get(3)), (1000, 10, QUOTA_UNSET));
    // Argument rules, as FSDirAttrOp.
    let e = n
        .set_type_quota("/t", 5, DISK, 1000, Duration::ZERO)
        .unwrap_err();
    assert!(matches!(e, FsError::UnsupportedAction(_)), "{e:?}");
    let e = n
        .set_type_quota("/t", QUOTA_DONT_SET, RAM_DISK, 1000, Duration::ZERO)
        .unwrap_err();
    assert_eq!(
        e,
        FsError::UnsupportedAction(
            "Quota by storage type RAM_DISK on path : /t is not supported.".into()
        )
    );
    let e = n
        .set_type_quota("/t", QUOTA_DONT_SET, DISK, -7, Duration::ZERO)
        .unwrap_err();
    assert!(matches!(e, FsError::JavaIllegalArgument(_)), "{e:?}");
    let e = n
        .set_type_quota("/t/f", QUOTA_DONT_SET, DISK, 1, Duration::ZERO)
        .unwrap_err();
    assert_eq!(e.to_string(), "`/t/f': Is not a directory");
    // Replay and image keep the type quotas and the cache.
    let t = n.resolve(&FsPath::parse("/t").unwrap()).last().unwrap();
    let mut m = ns();
    for op in j.ops.lock().iter() {
        m.apply(op, Duration::ZERO).unwrap();
    }
    let (_, image) = n.encode_image();
    let mut k = ns();
    k.load_image(&image, Duration::ZERO).unwrap();
    for mut restored in [m, k] {
        let d = restored.dir.get(t).and_then(Inode::as_dir).unwrap();
        assert_eq!((d.type_quota(1), d.type_quota(2)), (1000, 10));
        assert_eq!(restored.cached_usage(t), Some(Usage { ns: 2, ds: 900 }));
        assert!(matches!(
            write(&mut restored, "/t/g", 100),
            Err(FsError::TypeQuotaExceeded(_))
        ));
    }
    // Clearing DISK keeps SSD's; clearing both drops the directory from the cache.
    n.set_type_quota("/t", QUOTA_DONT_SET, DISK, QUOTA_RESET, Duration::ZERO)
        .unwrap();
    write(&mut n, "/t/g", 100).unwrap();
    assert!(n.cached_usage(t).is_some());
    n.set_type_quota("/t", QUOTA_DONT_SET, SSD, QUOTA_RESET, Duration::ZERO)
        .unwrap();
    assert!(n.quota_usage.is_empty());
    assert!(n.content_summary(&r, "/t").unwrap().type_quotas.is_none());
    // Disabled by dfs.quota.by.storage.type.enabled=false.
    let mut off = Namespace::new(
        NamespaceConfig {
            superuser: "root".into(),
            type_quotas_enabled: false,
            ..NamespaceConfig::default()
        },
        now(),
    );
    let r = off.caller("root", vec![]);
    off.mkdirs(&r, "/t", 0o755, true, now()).unwrap();
    let e = off
        .set_type_quota("/t", QUOTA_DONT_SET, DISK, 1000, Duration::ZERO)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "Failed to set quota by storage type because either dfs.quota.by.storage.type.enabled is set to false or nsQuota value is illegal 9223372036854775807"
    );
}

#[derive(Debug, Clone)]
enum Op {
    Mkdir(u8),
    Write(u8, u16),
    Delete(u8),
    Rename(u8, u8),
    SetRep(u8, u8),
    Quota(u8, i64, i64),
    Append(u8),
}

const PATHS: [&str; 6] = ["/a", "/a/b", "/a/b/c", "/d", "/d/e", "/a/x"];

fn op() -> impl Strategy<Value = Op> {
    let p = 0u8..6;
    prop_oneof![
        p.clone().prop_map(Op::Mkdir),
        (p.clone(), 0u16..400).prop_map(|(a, b)| Op::Write(a, b)),
        p.clone().prop_map(Op::Delete),
        (p.clone(), p.clone()).prop_map(|(a, b)| Op::Rename(a, b)),
        (p.clone(), 1u8..4).prop_map(|(a, b)| Op::SetRep(a, b)),
        (p.clone(), -1i64..8, -1i64..3000).prop_map(|(a, b, c)| Op::Quota(a, b, c)),
        p.prop_map(Op::Append),
    ]
}

proptest! {
    #[test]
    fn cached_usage_equals_a_recount(ops in proptest::collection::vec(op(), 1..40)) {
        let mut n = ns();
        let r = n.caller("root", vec![]);
        for op in ops {
            // Failures (quota, missing paths) are part of the sequence.
            let _ = match op {
                Op::Mkdir(p) => n.mkdirs(&r, PATHS[p as usize], 0o755, true, now()).map(|_| ()),
                Op::Write(p, len) => write(&mut n, &format!("{}/f", PATHS[p as usize]), len.into()),
                Op::Delete(p) => n.delete(&r, PATHS[p as usize], true, now()).map(|_| ()),
                Op::Rename(a, b) => n.rename(&r, PATHS[a as usize], PATHS[b as usize], now()).map(|_| ()),
                Op::SetRep(p, k) => n
                    .set_replication(&r, &format!("{}/f", PATHS[p as usize]), k.into(), now())
                    .map(|_| ()),
                Op::Quota(p, q, s) => n.set_quota(PATHS[p as usize], q, s, Duration::ZERO),
                Op::Append(p) => n
                    .append(&r, &format!("{}/f", PATHS[p as usize]), "ap", "h", 0, now())
                    .map(|_| ()),
            };
            assert_cache_right(&n);
        }
    }
}
