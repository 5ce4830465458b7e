//! truncate and concat in the namespace: the cut, the re-opened file, Hadoop's refusals,
//! replay of the journal and the image.

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
            ..NamespaceConfig::default()
        },
        now(0),
    )
}

/// A closed file at `src` with blocks of these lengths.
fn file(n: &mut Namespace, c: &Caller, src: &str, lens: &[u64]) -> u64 {
    let args = CreateArgs {
        src,
        masked: 0o644,
        unmasked: None,
        client_name: "w",
        client_machine: "127.0.0.1",
        flags: flags::CREATE,
        create_parent: true,
        replication: 2,
        block_size: 1 << 20,
    };
    let (st, _) = n.create(c, &args, now(1)).unwrap();
    for len in lens {
        let block = FileBlock {
            id: n.next_block_id(),
            gs: n.next_generation_stamp(),
            num_bytes: *len,
        };
        n.log_and_apply(EditOp::AddBlock { file: st.id, block }, Duration::ZERO)
            .unwrap();
    }
    let close = EditOp::CloseFile {
        file: st.id,
        mtime: 1,
        atime: 1,
    };
    n.log_and_apply(close, Duration::ZERO).unwrap();
    st.id
}

fn replayed(j: &MemoryJournal) -> Namespace {
    let mut m = ns();
    for op in j.ops.lock().iter() {
        let op = crate::edit_codec::decode(&crate::edit_codec::encode(op)).unwrap();
        m.apply(&op, Duration::ZERO).unwrap();
    }
    m
}

#[test]
fn truncate_cuts_reopens_and_refuses_as_hadoop() {
    let mut n = ns();
    let j = MemoryJournal::default();
    n.set_journal(Box::new(j.clone()));
    let r = n.caller("root", vec![]);
    let id = file(&mut n, &r, "/d/f", &[100, 100, 100]);
    let blocks = n.open_file_blocks(id);
    // On a boundary: the third block goes, the file stays closed.
    let t = n.truncate(&r, "/d/f", 200, "c1", "h", now(2)).unwrap();
    assert!(t.done && t.recover.is_none());
    assert_eq!(t.removed, vec![blocks[2]]);
    assert_eq!(n.block_owner(blocks[2]), None);
    // Unchanged length: nothing logged.
    let logged = j.ops.lock().len();
    assert!(n.truncate(&r, "/d/f", 200, "c1", "h", now(2)).unwrap().done);
    assert_eq!(j.ops.lock().len(), logged);
    // Inside the second block: re-opened for c1, the block to be cut to 50.
    let t = n.truncate(&r, "/d/f", 150, "c1", "h", now(3)).unwrap();
    assert!(!t.done && t.removed.is_empty());
    let of = t.recover.expect("recovery needed");
    assert_eq!((of.holder.as_str(), of.truncate_last_to), ("c1", Some(50)));
    assert_eq!(n.file_info(&r, "/d/f").unwrap().unwrap().length, 200);
    // Asked again for the same length: wait on; another length: being truncated.
    let again = n.truncate(&r, "/d/f", 150, "c2", "h2", now(3)).unwrap();
    assert!(!again.done && again.recover.is_none());
    let e = n.truncate(&r, "/d/f", 120, "c2", "h2", now(3)).unwrap_err();
    assert_eq!(
        e,
        FsError::AlreadyBeingCreated(
            "Failed to TRUNCATE_FILE /d/f for c2 on h2 because /d/f is being truncated.".into()
        )
    );
    let e = n.truncate(&r, "/d", 0, "c", "h", now(3)).unwrap_err();
    assert_eq!(e, FsError::FileNotFound("Path is not a file: /d".into()));
    let e = n.truncate(&r, "/d/x", 0, "c", "h", now(3)).unwrap_err();
    assert_eq!(e, FsError::not_found("/d/x"));
    let e = n.truncate(&r, "/d/f", -2, "c", "h", now(3)).unwrap_err();
    assert_eq!(
        e,
        FsError::IllegalArgument("Cannot truncate to a negative file size: -2.".into())
    );
    let g = file(&mut n, &r, "/d/g", &[10]);
    let e = n.truncate(&r, "/d/g", 11, "c", "h", now(3)).unwrap_err();
    assert_eq!(
        e,
        FsError::IllegalArgument(
            "Cannot truncate to a larger file size. Current size: 10, truncate size: 11.".into()
        )
    );
    assert!(
        n.check_consistency().is_empty(),
        "{:?}",
        n.check_consistency()
    );

    // The journal replays to the same state, and so does the image.
    let m = replayed(&j);
    assert_eq!(
        n.open_file_by_id(id)
            .map(|o| (o.holder, o.blocks, o.truncate_last_to)),
        m.open_file_by_id(id)
            .map(|o| (o.holder, o.blocks, o.truncate_last_to))
    );
    assert!(
        m.check_consistency().is_empty(),
        "{:?}",
        m.check_consistency()
    );
    let (_, image) = n.encode_image();
    let mut k = ns();
    k.load_image(&image, Duration::ZERO).unwrap();
    assert_eq!(
        k.open_file_by_id(id).and_then(|o| o.truncate_last_to),
        Some(50)
    );
    assert!(k.open_file_by_id(g).is_none());
}

#[test]
fn concat_moves_blocks_removes_sources_and_checks_as_hadoop() {
    let mut n = ns();
    let j = MemoryJournal::default();
    n.set_journal(Box::new(j.clone()));
    let r = n.caller("root", vec![]);
    let t = file(&mut n, &r, "/c/t", &[100, 30]);
    let a = file(&mut n, &r, "/c/a", &[7]);
    let b = file(&mut n, &r, "/c/b", &[100, 100, 1]);
    let want: Vec<u64> = [t, a, b]
        .iter()
        .flat_map(|f| n.open_file_blocks(*f))
        .collect();
    let srcs = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let e = n.concat(&r, "/c/t", &srcs(&["/c/a", "/c/a"]), now(2));
    assert_eq!(
        e.unwrap_err(),
        FsError::IllegalArgument("concat: at least two of the source files are the same".into())
    );
    let e = n.concat(&r, "/c/t", &srcs(&["/c/t"]), now(2));
    assert_eq!(
        e.unwrap_err(),
        FsError::IllegalArgument(
            "concat: the src file /c/t is the same with the target file /c/t".into()
        )
    );
    file(&mut n, &r, "/o/x", &[1]);
    let e = n.concat(&r, "/c/t", &srcs(&["/o/x"]), now(2));
    assert_eq!(
        e.unwrap_err(),
        FsError::IllegalArgument(
            "Source file /o/x is not in the same directory with the target /c/t".into()
        )
    );
    file(&mut n, &r, "/c/empty", &[]);
    let e = n.concat(&r, "/c/t", &srcs(&["/c/empty"]), now(2));
    assert_eq!(
        e.unwrap_err(),
        FsError::IllegalArgument(
            "concat: source file /c/empty is invalid or empty or underConstruction".into()
        )
    );
    let c = n
        .concat(&r, "/c/t", &srcs(&["/c/a", "/c/b"]), now(3))
        .unwrap();
    assert_eq!((c.target, c.replication), (t, 2));
    assert_eq!(c.moved, want[2..].to_vec());
    assert_eq!(n.open_file_blocks(t), want);
    assert_eq!(n.file_info(&r, "/c/t").unwrap().unwrap().length, 338);
    assert!(n.file_info(&r, "/c/a").unwrap().is_none());
    assert!(want.iter().all(|b| n.block_owner(*b) == Some(t)));
    assert!(
        n.check_consistency().is_empty(),
        "{:?}",
        n.check_consistency()
    );
    let m = replayed(&j);
    assert_eq!(m.open_file_blocks(t), want);
    assert!(m.file_info(&r, "/c/b").unwrap().is_none());
    assert!(
        m.check_consistency().is_empty(),
        "{:?}",
        m.check_consistency()
    );
}

impl Namespace {
    /// The block ids of file `id` (open or not).
    fn open_file_blocks(&self, id: u64) -> Vec<u64> {
        self.dir
            .get(id)
            .and_then(|i| i.as_file())
            .map(|f| f.blocks.iter().map(|b| b.id).collect())
            .unwrap_or_default()
    }
}
