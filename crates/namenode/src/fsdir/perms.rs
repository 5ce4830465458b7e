//! An inode's owner, group and mode as one pointer to a shared record.
//!
//! A namespace has few distinct (owner, group, mode) triples — millions of files share a
//! handful — so each distinct [`PermissionStatus`] is stored once, in a process-wide table
//! that never shrinks (as HDFS's `SerialNumberManager` keeps every user and group name it
//! has seen), and an inode holds a [`Perm`]: 8 bytes where the record itself (two
//! `Arc<str>` and the mode) took 40. Reads go through `Deref`, so `inode.perm.owner`,
//! `inode.perm.group` and `inode.perm.mode` read as before; a change makes a new `Perm`
//! ([`Perm::with_mode`], [`Perm::with_owner_group`]) and never touches the shared record,
//! so changing one inode's owner or mode leaves every other inode's as it was.

use std::collections::HashSet;
use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use super::PermissionStatus;

/// Every distinct record interned so far, each allocated once and kept for the process's
/// life (the table only grows, by one record per new triple).
static TABLE: LazyLock<Mutex<HashSet<&'static PermissionStatus>>> =
    LazyLock::new(|| Mutex::new(HashSet::new()));

/// An interned [`PermissionStatus`]; copying it copies a pointer.
#[derive(Clone, Copy)]
pub struct Perm(&'static PermissionStatus);

impl Perm {
    /// The shared record equal to `p`, added to the table if it is new.
    pub fn intern(p: PermissionStatus) -> Perm {
        let mut table = TABLE.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(&have) = table.get(&p) {
            return Perm(have);
        }
        let record: &'static PermissionStatus = Box::leak(Box::new(p));
        table.insert(record);
        Perm(record)
    }

    /// The same owner and group with `mode`.
    pub fn with_mode(self, mode: u16) -> Perm {
        if self.0.mode == mode {
            return self;
        }
        Perm::intern(PermissionStatus {
            mode,
            ..self.0.clone()
        })
    }

    /// The owner and/or group replaced where given.
    pub fn with_owner_group(self, owner: Option<&str>, group: Option<&str>) -> Perm {
        let changed = |new: Option<&str>, old: &Arc<str>| -> Arc<str> {
            match new {
                Some(n) if n != &**old => Arc::from(n),
                _ => Arc::clone(old),
            }
        };
        let next = PermissionStatus {
            owner: changed(owner, &self.0.owner),
            group: changed(group, &self.0.group),
            mode: self.0.mode,
        };
        if next == *self.0 {
            return self;
        }
        Perm::intern(next)
    }

    /// The shared record.
    pub fn status(self) -> &'static PermissionStatus {
        self.0
    }
}

impl From<PermissionStatus> for Perm {
    fn from(p: PermissionStatus) -> Perm {
        Perm::intern(p)
    }
}

impl Deref for Perm {
    type Target = PermissionStatus;
    fn deref(&self) -> &PermissionStatus {
        self.0
    }
}

impl PartialEq for Perm {
    fn eq(&self, other: &Perm) -> bool {
        std::ptr::eq(self.0, other.0) || *self.0 == *other.0
    }
}

impl Eq for Perm {}

impl fmt::Debug for Perm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn status(owner: &str, group: &str, mode: u16) -> PermissionStatus {
        PermissionStatus {
            owner: owner.into(),
            group: group.into(),
            mode,
        }
    }

    #[test]
    fn equal_records_share_one_allocation() {
        let a = Perm::intern(status("perms-alice", "perms-staff", 0o644));
        let b = Perm::intern(status("perms-alice", "perms-staff", 0o644));
        assert!(std::ptr::eq(a.status(), b.status()));
        let c = Perm::intern(status("perms-alice", "perms-staff", 0o600));
        assert!(!std::ptr::eq(a.status(), c.status()));
        assert_eq!(std::mem::size_of::<Perm>(), 8);
    }

    #[test]
    fn a_change_leaves_other_holders_alone() {
        let shared = Perm::intern(status("perms-bob", "perms-g", 0o755));
        let mut one = shared;
        let other = shared;
        one = one.with_owner_group(Some("perms-carol"), None);
        assert_eq!(&*one.owner, "perms-carol");
        assert_eq!(&*one.group, "perms-g");
        assert_eq!(&*other.owner, "perms-bob");
        one = one.with_mode(0o700);
        assert_eq!(one.mode, 0o700);
        assert_eq!(other.mode, 0o755);
        assert_eq!(*other, status("perms-bob", "perms-g", 0o755));
        assert!(std::ptr::eq(
            shared.with_mode(0o755).status(),
            shared.status()
        ));
        assert!(std::ptr::eq(
            shared
                .with_owner_group(Some("perms-bob"), Some("perms-g"))
                .status(),
            shared.status()
        ));
    }

    proptest! {
        #[test]
        fn lookup_returns_what_was_interned(
            recs in proptest::collection::vec((0u8..4, 0u8..3, 0u16..0o2000), 1..40),
        ) {
            let perms: Vec<(PermissionStatus, Perm)> = recs
                .iter()
                .map(|&(o, g, m)| {
                    let s = status(&format!("perms-u{o}"), &format!("perms-g{g}"), m);
                    (s.clone(), Perm::intern(s))
                })
                .collect();
            for (s, p) in &perms {
                prop_assert_eq!(&**p, s);
            }
            for (s1, p1) in &perms {
                for (s2, p2) in &perms {
                    prop_assert_eq!(s1 == s2, std::ptr::eq(p1.status(), p2.status()));
                }
            }
        }
    }
}
