//! Image store: save, load, retention, fallback to an older or another copy.

use crate::common;

use common::formatted_roots;
use rhdfs_conf::Configuration;
use rhdfs_editlog::layout::image_name;
use rhdfs_editlog::{EditLogError, ImageStore, StorageDirs};

fn image(txid: u64) -> Vec<u8> {
    format!("namespace as of {txid}").repeat(50).into_bytes()
}

fn image_files(root: &std::path::Path) -> Vec<String> {
    common::files(root, "fsimage")
}

#[test]
fn save_load_and_retention() {
    let t = tempfile::tempdir().unwrap();
    let roots = formatted_roots(t.path(), 2);
    let dirs = StorageDirs::new(roots.clone()).unwrap();
    let store = ImageStore::from_conf(dirs, &Configuration::new()).unwrap();
    assert_eq!(store.load_latest_image().unwrap(), None);
    store.save_image(0, b"").unwrap();
    assert_eq!(store.load_latest_image().unwrap(), Some((0, Vec::new())));
    for txid in [10, 25, 40] {
        store.save_image(txid, &image(txid)).unwrap();
    }
    for root in &roots {
        assert_eq!(image_files(root), vec![image_name(25), image_name(40)]);
    }
    assert_eq!(store.image_txids(), vec![40, 25]);
    assert_eq!(store.oldest_retained_txid(), Some(25));
    assert_eq!(store.load_latest_image().unwrap(), Some((40, image(40))));
}

#[test]
fn corrupt_newest_falls_back() {
    let t = tempfile::tempdir().unwrap();
    let roots = formatted_roots(t.path(), 1);
    let store = ImageStore::new(StorageDirs::new(roots.clone()).unwrap(), 2);
    store.save_image(5, &image(5)).unwrap();
    store.save_image(9, &image(9)).unwrap();
    let newest = roots[0].join("current").join(image_name(9));
    let mut bytes = std::fs::read(&newest).unwrap();
    bytes[100] ^= 0x20;
    std::fs::write(&newest, &bytes).unwrap();
    assert_eq!(store.load_latest_image().unwrap(), Some((5, image(5))));
    // A truncated older one as well: nothing usable is an error, not an empty namespace.
    let older = roots[0].join("current").join(image_name(5));
    let bytes = std::fs::read(&older).unwrap();
    std::fs::write(&older, &bytes[..bytes.len() - 3]).unwrap();
    match store.load_latest_image() {
        Err(EditLogError::NoValidImage { detail }) => {
            assert!(detail.contains(&image_name(9)), "{detail}");
            assert!(detail.contains(&image_name(5)), "{detail}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn corrupt_copy_in_one_directory_uses_the_other() {
    let t = tempfile::tempdir().unwrap();
    let roots = formatted_roots(t.path(), 2);
    let store = ImageStore::new(StorageDirs::new(roots.clone()).unwrap(), 2);
    store.save_image(3, &image(3)).unwrap();
    store.save_image(7, &image(7)).unwrap();
    std::fs::write(roots[0].join("current").join(image_name(7)), b"garbage").unwrap();
    assert_eq!(store.load_latest_image().unwrap(), Some((7, image(7))));
}

#[test]
fn leftover_checkpoint_files_are_ignored_and_cleaned() {
    let t = tempfile::tempdir().unwrap();
    let roots = formatted_roots(t.path(), 1);
    let store = ImageStore::new(StorageDirs::new(roots.clone()).unwrap(), 2);
    store.save_image(1, &image(1)).unwrap();
    // A crash in the middle of a save leaves fsimage.ckpt_<txid>.
    let ckpt = roots[0]
        .join("current")
        .join(rhdfs_editlog::layout::image_ckpt_name(8));
    std::fs::write(&ckpt, b"half an ima").unwrap();
    assert_eq!(store.load_latest_image().unwrap(), Some((1, image(1))));
    store.save_image(2, &image(2)).unwrap();
    assert!(!ckpt.exists());
    assert_eq!(image_files(&roots[0]), vec![image_name(1), image_name(2)]);
}
