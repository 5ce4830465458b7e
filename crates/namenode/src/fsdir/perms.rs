//! An inode's owner, group and mode as a 4-byte index of a shared record.
//!
//! A namespace has few distinct (owner, group, mode) triples — millions of files share a
//! handful — so each distinct [`PermissionStatus`] is stored once, in a process-wide table
//! that never shrinks (as HDFS's `SerialNumberManager` keeps every user and group name it
//! has seen), and an inode holds a [`Perm`]: the record's 4-byte index in that table where
//! the record itself (two `Arc<str>` and the mode) took 40, and a pointer to it 8. Reads
//! go through `Deref`, so `inode.perm.owner`, `inode.perm.group` and `inode.perm.mode`
//! read as before; a change makes a new `Perm` ([`Perm::with_mode`],
//! [`Perm::with_owner_group`]) and never touches the shared record, so changing one
//! inode's owner or mode leaves every other inode's as it was.
//!
//! The table: records by index in segments of doubling size (segment `k` holds indexes
//! `2^k - 1 ..= 2^(k+1) - 2`), each segment and each entry set once (`OnceLock`), so a
//! read takes no lock and an entry never moves; interning a record takes the lock of the
//! map from records to their indexes.

use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, LazyLock, Mutex, OnceLock, PoisonError};

use super::PermissionStatus;

/// Segments of the table: 2^32 - 1 indexes in all, every `u32` but `u32::MAX`.
const SEGMENTS: usize = 32;

type Segment = Box<[OnceLock<&'static PermissionStatus>]>;

/// The records by index (see the module docs).
static RECORDS: [OnceLock<Segment>; SEGMENTS] = [const { OnceLock::new() }; SEGMENTS];

/// Every distinct record interned so far, each allocated once and kept for the process's
/// life (the table only grows, by one record per new triple), with its index.
static INDEXES: LazyLock<Mutex<HashMap<&'static PermissionStatus, u32>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// Segment and position in it of index `i`.
fn slot(i: u32) -> (usize, usize) {
    let n = u64::from(i) + 1;
    let k = n.ilog2();
    (k as usize, (n - (1u64 << k)) as usize)
}

/// An interned [`PermissionStatus`]: 4 bytes, `Copy`. Equal records have equal indexes.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Perm(u32);

impl Perm {
    /// The shared record equal to `p`, added to the table if it is new.
    pub fn intern(p: PermissionStatus) -> Perm {
        let mut indexes = INDEXES.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(&i) = indexes.get(&p) {
            return Perm(i);
        }
        // Every record is at least 40 bytes of memory: 2^32 - 1 of them cannot be held.
        let i = u32::try_from(indexes.len())
            .ok()
            .filter(|&i| i != u32::MAX)
            .expect("fewer than 2^32 - 1 distinct owner, group and mode triples");
        let record: &'static PermissionStatus = Box::leak(Box::new(p));
        let (k, at) = slot(i);
        let segment =
            RECORDS[k].get_or_init(|| (0..1usize << k).map(|_| OnceLock::new()).collect());
        // Set only here, under the lock, for an index not handed out before.
        let _ = segment[at].set(record);
        indexes.insert(record, i);
        Perm(i)
    }

    /// The same owner and group with `mode`.
    pub fn with_mode(self, mode: u16) -> Perm {
        let s = self.status();
        if s.mode == mode {
            return self;
        }
        Perm::intern(PermissionStatus { mode, ..s.clone() })
    }

    /// The owner and/or group replaced where given.
    pub fn with_owner_group(self, owner: Option<&str>, group: Option<&str>) -> Perm {
        let changed = |new: Option<&str>, old: &Arc<str>| -> Arc<str> {
            match new {
                Some(n) if n != &**old => Arc::from(n),
                _ => Arc::clone(old),
            }
        };
        let s = self.status();
        let next = PermissionStatus {
            owner: changed(owner, &s.owner),
            group: changed(group, &s.group),
            mode: s.mode,
        };
        if next == *s {
            return self;
        }
        Perm::intern(next)
    }

    /// The shared record.
    pub fn status(self) -> &'static PermissionStatus {
        let (k, at) = slot(self.0);
        RECORDS[k]
            .get()
            .and_then(|s| s[at].get())
            .copied()
            .expect("a Perm's record is set before the Perm is made")
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
        self.status()
    }
}

impl fmt::Debug for Perm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.status().fmt(f)
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
        assert_eq!(std::mem::size_of::<Perm>(), 4);
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

    /// Every index has its own place, segment `k` holding 2^k of them.
    #[test]
    fn indexes_map_to_distinct_slots() {
        assert_eq!(slot(0), (0, 0));
        assert_eq!(slot(1), (1, 0));
        assert_eq!(slot(2), (1, 1));
        assert_eq!(slot(3), (2, 0));
        assert_eq!(slot(6), (2, 3));
        assert_eq!(slot(7), (3, 0));
        assert_eq!(slot(u32::MAX - 1), (SEGMENTS - 1, (1 << 31) - 1));
        let mut seen = std::collections::HashSet::new();
        for i in 0..5000 {
            let (k, at) = slot(i);
            assert!(at < 1 << k);
            assert!(seen.insert((k, at)));
        }
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
