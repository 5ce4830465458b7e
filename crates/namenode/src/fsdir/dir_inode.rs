//! A directory's record: its children, and one box for what few directories have — its
//! quotas and its extension (ACL entries, xattrs) — present exactly when one of them is.
//!
//! Memory: 16 bytes, two words, so that the directory fits around a file's tag byte in
//! the inode; the box only for directories with a quota, an ACL or an xattr.

use super::{Children, InodeExt, QUOTA_UNSET};

#[derive(Debug, Clone, Default)]
pub struct DirInode {
    /// Children ids in byte order of their names (HDFS's listing order); the names are
    /// the children's own ([`super::FsDirectory::child`] and
    /// [`super::FsDirectory::children_after`] search them).
    pub children: Children,
    /// `None` (the common case, one word) when no quota, ACL or xattr is set.
    extra: Option<Box<DirExtra>>,
}

/// A directory's rare parts, boxed.
#[derive(Debug, Clone, PartialEq, Eq)]
struct DirExtra {
    ns: i64,
    ds: i64,
    /// Storage-space quotas by storage type (`dfsadmin -setSpaceQuota -storageType`).
    types: Option<TypeQuotas>,
    ext: Option<Box<InodeExt>>,
}

impl DirExtra {
    fn is_empty(&self) -> bool {
        self.ns == QUOTA_UNSET
            && self.ds == QUOTA_UNSET
            && self.types.is_none()
            && self.ext.is_none()
    }
}

/// The storage types, indexed by `StorageTypeProto` value − 1: DISK, SSD, ARCHIVE, RAM_DISK,
/// PROVIDED, NVDIMM.
pub const STORAGE_TYPES: [&str; 6] = ["DISK", "SSD", "ARCHIVE", "RAM_DISK", "PROVIDED", "NVDIMM"];
/// `StorageTypeProto` value of DISK, the only type rhdfs DataNodes store on.
pub const DISK: u8 = 1;

/// One quota per storage type (`QUOTA_UNSET` where none), indexed by proto value − 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TypeQuotas(pub [i64; 6]);

impl TypeQuotas {
    /// The quota of `storage_type` (a `StorageTypeProto` value), `QUOTA_UNSET` if none.
    pub fn get(&self, storage_type: u8) -> i64 {
        usize::from(storage_type)
            .checked_sub(1)
            .and_then(|i| self.0.get(i).copied())
            .unwrap_or(QUOTA_UNSET)
    }

    /// Whether every type is unset.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&q| q == QUOTA_UNSET)
    }
}

impl DirInode {
    /// The namespace quota (`QUOTA_UNSET` if none).
    pub fn ns_quota(&self) -> i64 {
        self.extra.as_ref().map_or(QUOTA_UNSET, |q| q.ns)
    }

    /// The storage-space quota (`QUOTA_UNSET` if none).
    pub fn ds_quota(&self) -> i64 {
        self.extra.as_ref().map_or(QUOTA_UNSET, |q| q.ds)
    }

    /// The quotas by storage type; `None` when none is set.
    pub fn type_quotas(&self) -> Option<&TypeQuotas> {
        self.extra.as_ref().and_then(|q| q.types.as_ref())
    }

    /// The quota of `storage_type`, `QUOTA_UNSET` if none.
    pub fn type_quota(&self, storage_type: u8) -> i64 {
        self.type_quotas()
            .map_or(QUOTA_UNSET, |t| t.get(storage_type))
    }

    /// Whether any quota (namespace, space, or by storage type) is set here.
    pub fn has_quota(&self) -> bool {
        self.ns_quota() != QUOTA_UNSET
            || self.ds_quota() != QUOTA_UNSET
            || self.type_quotas().is_some()
    }

    /// Sets the namespace and storage-space quotas (`QUOTA_UNSET` clears one).
    pub fn set_quota(&mut self, ns: i64, ds: i64) {
        self.change(|e| (e.ns, e.ds) = (ns, ds));
    }

    /// Takes every quota of `src` (its extension stays its own).
    pub fn set_quotas_from(&mut self, src: &DirInode) {
        let types = src.type_quotas().copied();
        let (ns, ds) = (src.ns_quota(), src.ds_quota());
        self.change(|e| (e.ns, e.ds, e.types) = (ns, ds, types));
    }

    /// Sets (or with `QUOTA_UNSET` clears) the quota of `storage_type`.
    pub fn set_type_quota(&mut self, storage_type: u8, quota: i64) {
        let Some(i) = usize::from(storage_type).checked_sub(1).filter(|&i| i < 6) else {
            return;
        };
        self.change(|e| {
            let mut t = e.types.unwrap_or(TypeQuotas([QUOTA_UNSET; 6]));
            t.0[i] = quota;
            e.types = (!t.is_empty()).then_some(t);
        });
    }

    /// ACL entries and xattrs, if the directory has any.
    pub fn ext(&self) -> Option<&InodeExt> {
        self.extra.as_ref().and_then(|e| e.ext.as_deref())
    }

    /// Removes and returns the extension.
    pub fn take_ext(&mut self) -> Option<Box<InodeExt>> {
        let mut ext = None;
        self.change(|e| ext = e.ext.take());
        ext
    }

    /// Replaces the extension (None, or an empty one, drops it).
    pub fn set_ext(&mut self, ext: Option<Box<InodeExt>>) {
        let ext = ext.filter(|e| !e.is_empty());
        self.change(|e| e.ext = ext);
    }

    /// Changes the rare parts; the box is there exactly when one of them is set.
    fn change(&mut self, f: impl FnOnce(&mut DirExtra)) {
        let mut e = self.extra.take().unwrap_or_else(|| {
            Box::new(DirExtra {
                ns: QUOTA_UNSET,
                ds: QUOTA_UNSET,
                types: None,
                ext: None,
            })
        });
        f(&mut e);
        if !e.is_empty() {
            self.extra = Some(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Quotas and the extension share the box, which goes once both are cleared.
    #[test]
    fn quotas_and_ext_share_one_box() {
        let mut d = DirInode::default();
        assert!(d.extra.is_none());
        d.set_quota(5, QUOTA_UNSET);
        d.set_ext(Some(Box::new(InodeExt {
            acl: Vec::new(),
            xattrs: vec![crate::fsdir::xattr::XAttr {
                ns: crate::fsdir::xattr::XAttrNs::User,
                name: "a".into(),
                value: Some(vec![1]),
            }],
            far_parent: None,
        })));
        d.set_type_quota(2, 9);
        assert_eq!(
            (d.ns_quota(), d.ds_quota(), d.type_quota(2)),
            (5, QUOTA_UNSET, 9)
        );
        assert_eq!(d.ext().map(|e| e.xattrs.len()), Some(1));
        let mut other = DirInode::default();
        other.set_quotas_from(&d);
        assert!(other.ext().is_none(), "quotas copied, not the extension");
        assert_eq!(other.type_quota(2), 9);
        d.set_quota(QUOTA_UNSET, QUOTA_UNSET);
        d.set_type_quota(2, QUOTA_UNSET);
        assert!(!d.has_quota());
        assert!(d.ext().is_some());
        d.set_ext(None);
        assert!(d.extra.is_none(), "nothing set, no box");
    }
}
