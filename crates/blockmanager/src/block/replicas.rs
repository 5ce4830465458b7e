//! A block's replicas: up to three held in the block record itself, 4 bytes each, with no
//! allocation; more, or any replica whose generation stamp or length differs from its
//! block's, in one boxed spill record.
//!
//! A replica's generation stamp and length are its block's unless the spill record holds
//! its own (`own`): the block's values change in one place (`BlockInfo::set_block`, which
//! first gives the replicas that had the old values those as their own), and a replica's
//! in another (`BlockInfo::set_replica_values`). Almost every replica of a COMPLETE block
//! was last reported with the block's values, so almost every block holds its replicas
//! inline. (A 24-byte replica with its own gs and length, three in a boxed slice, took 16
//! bytes in the record plus an 80-byte malloc chunk per block; three 8-byte replicas
//! inline, 24 bytes.)
//!
//! The spill record also holds the block's under-construction parts ([`Construction`]: its
//! pipeline and recovery), which only blocks being written or recovered have: they cost
//! the block record no word of its own.

use std::fmt;

use super::{Construction, CorruptReason, ReplicaState, StorageIdx};

/// The storage indexes a replica can name: 24 bits, the last of them [`VACANT`].
pub const STORAGE_IDX_BITS: u32 = 24;

/// One replica of a block on one storage (whose DataNode the storage table knows).
/// 4 bytes, `Copy`: the storage's index in 24 bits ([`STORAGE_IDX_BITS`]), the state in
/// the low 3 bits of the last byte and the corrupt reason (0 for none) in the next 3. Its
/// generation stamp and length: `BlockInfo::replica_block`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Replica {
    storage: [u8; 3],
    flags: u8,
}

/// `Replica::flags`: the state's bits.
const STATE_MASK: u8 = 0b111;
/// `Replica::flags`: where the corrupt reason's code starts.
const CORRUPT_SHIFT: u32 = 3;

const REASONS: [CorruptReason; 4] = [
    CorruptReason::GenstampMismatch,
    CorruptReason::SizeMismatch,
    CorruptReason::InvalidState,
    CorruptReason::CorruptionReported,
];

impl Replica {
    /// A replica on `storage` (an index below [`VACANT`]'s, as the storage table hands
    /// out), not corrupt.
    pub fn new(storage: StorageIdx, state: ReplicaState) -> Self {
        debug_assert!(
            storage.0 <= VACANT.0,
            "storage index {} past 24 bits",
            storage.0
        );
        let [a, b, c, _] = storage.0.to_le_bytes();
        Replica {
            storage: [a, b, c],
            flags: state as u8,
        }
    }

    /// The storage the replica is on.
    pub fn storage(&self) -> StorageIdx {
        let [a, b, c] = self.storage;
        StorageIdx(u32::from_le_bytes([a, b, c, 0]))
    }

    pub fn state(&self) -> ReplicaState {
        ReplicaState::from_value(u64::from(self.flags & STATE_MASK))
            .unwrap_or(ReplicaState::Finalized)
    }

    pub fn set_state(&mut self, state: ReplicaState) {
        self.flags = (self.flags & !STATE_MASK) | state as u8;
    }

    /// Why the replica is corrupt; None when it is not.
    pub fn corrupt(&self) -> Option<CorruptReason> {
        let code = usize::from(self.flags >> CORRUPT_SHIFT);
        code.checked_sub(1).and_then(|i| REASONS.get(i)).copied()
    }

    pub fn set_corrupt(&mut self, reason: Option<CorruptReason>) {
        let code = reason.map_or(0, |r| {
            REASONS
                .iter()
                .position(|&x| x == r)
                .map_or(0, |i| i as u8 + 1)
        });
        self.flags = (self.flags & STATE_MASK) | code << CORRUPT_SHIFT;
    }

    /// A finalized, non-corrupt replica: what counts towards minimum replication.
    pub fn is_good_finalized(&self) -> bool {
        self.state() == ReplicaState::Finalized && self.corrupt().is_none()
    }
}

impl fmt::Debug for Replica {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Replica")
            .field("storage", &self.storage())
            .field("state", &self.state())
            .field("corrupt", &self.corrupt())
            .finish()
    }
}

/// Marks an unused inline slot of `Replicas` (no storage table hands out this index): the
/// last index 24 bits hold.
pub const VACANT: StorageIdx = StorageIdx((1 << STORAGE_IDX_BITS) - 1);

/// What an inline block's `uc()` reads.
static NO_CONSTRUCTION: Construction = Construction::NONE;

/// Replicas held inline.
pub const INLINE: usize = 3;

/// The most slots reserved ahead of replicas once spilled (a block of replication 512
/// grows as it goes).
const MAX_RESERVED: usize = 8;

const EMPTY_SLOT: Replica = Replica {
    storage: [0xff; 3],
    flags: ReplicaState::Finalized as u8,
};

/// A replica's generation stamp and length where they differ from its block's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Own {
    storage: StorageIdx,
    gs: u64,
    num_bytes: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Spilled {
    replicas: Vec<Replica>,
    /// At most one per replica, only for replicas present.
    own: Vec<Own>,
    /// The block's pipeline and recovery.
    uc: Construction,
}

/// 16 bytes: a tag byte beside the 12 bytes of inline slots or the 8-byte spill box.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Repr {
    /// Replicas first, `VACANT` slots after.
    Inline([Replica; INLINE]),
    Spilled(Box<Spilled>),
}

/// A block's replicas. Reads as a slice of them; order is the order they were added.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replicas(Repr);

impl Default for Replicas {
    fn default() -> Self {
        Replicas(Repr::Inline([EMPTY_SLOT; INLINE]))
    }
}

impl Replicas {
    /// How many replicas.
    fn count(&self) -> usize {
        match &self.0 {
            Repr::Inline(a) => a
                .iter()
                .position(|r| r.storage() == VACANT)
                .unwrap_or(INLINE),
            Repr::Spilled(s) => s.replicas.len(),
        }
    }

    /// The spill record, made from the inline replicas if there is none yet.
    fn spill(&mut self, room: usize) -> &mut Spilled {
        if let Repr::Inline(a) = &self.0 {
            let n = self.count();
            let mut replicas = Vec::with_capacity(room.max(n));
            replicas.extend_from_slice(&a[..n]);
            self.0 = Repr::Spilled(Box::new(Spilled {
                replicas,
                own: Vec::new(),
                uc: Construction::NONE,
            }));
        }
        match &mut self.0 {
            Repr::Spilled(s) => s,
            Repr::Inline(_) => unreachable!("spilled above"),
        }
    }

    /// Back inline when the spill record is no longer needed.
    fn unspill_if_small(&mut self) {
        if let Repr::Spilled(s) = &self.0
            && s.own.is_empty()
            && s.uc.is_empty()
            && s.replicas.len() <= INLINE
        {
            let mut a = [EMPTY_SLOT; INLINE];
            a[..s.replicas.len()].copy_from_slice(&s.replicas);
            self.0 = Repr::Inline(a);
        }
    }

    /// The block's pipeline and recovery (none unless spilled).
    pub fn uc(&self) -> &Construction {
        match &self.0 {
            Repr::Inline(_) => &NO_CONSTRUCTION,
            Repr::Spilled(s) => &s.uc,
        }
    }

    /// Changes the block's pipeline and recovery: in the spill record, made when they
    /// become non-empty and dropped when nothing needs it any more.
    pub fn change_uc<T>(&mut self, f: impl FnOnce(&mut Construction) -> T) -> T {
        if let Repr::Spilled(s) = &mut self.0 {
            let out = f(&mut s.uc);
            self.unspill_if_small();
            return out;
        }
        let mut uc = Construction::NONE;
        let out = f(&mut uc);
        if !uc.is_empty() {
            let n = self.count();
            self.spill(n).uc = uc;
        }
        out
    }

    /// Whether the replicas live in a spill record (more than `INLINE`, or some with
    /// their own generation stamp or length).
    pub fn is_spilled(&self) -> bool {
        matches!(self.0, Repr::Spilled(_))
    }

    /// Adds a replica (with its block's generation stamp and length until
    /// `set_own`). Past the inline slots, the spill record is made with room for
    /// `expected` replicas in all (at most `MAX_RESERVED`), or for just this one more.
    pub fn push_expecting(&mut self, r: Replica, expected: usize) {
        let n = self.count();
        if let Repr::Inline(a) = &mut self.0
            && n < INLINE
        {
            a[n] = r;
            return;
        }
        let room = (n + 1).max(expected.min(MAX_RESERVED));
        let s = self.spill(room);
        if s.replicas.len() == s.replicas.capacity() {
            s.replicas.reserve_exact(room - s.replicas.len());
        }
        s.replicas.push(r);
    }

    pub fn push(&mut self, r: Replica) {
        self.push_expecting(r, 0);
    }

    /// Removes and returns the replica at `pos` (panics if out of range, as `Vec::remove`),
    /// with its own generation stamp and length if it had them.
    pub fn remove(&mut self, pos: usize) -> Replica {
        let n = self.count();
        let r = self[pos];
        match &mut self.0 {
            Repr::Inline(a) => {
                a.copy_within(pos + 1..n, pos);
                a[n - 1] = EMPTY_SLOT;
            }
            Repr::Spilled(s) => {
                s.replicas.remove(pos);
                s.own.retain(|o| o.storage != r.storage());
                self.unspill_if_small();
            }
        }
        r
    }

    pub fn position(&self, storage: StorageIdx) -> Option<usize> {
        self.iter().position(|r| r.storage() == storage)
    }

    /// Slots allocated (inline slots, or the spill record's capacity).
    pub fn slots(&self) -> usize {
        match &self.0 {
            Repr::Inline(_) => INLINE,
            Repr::Spilled(s) => s.replicas.capacity(),
        }
    }

    /// The generation stamp and length of the replica on `storage` where they differ from
    /// its block's.
    pub fn own(&self, storage: StorageIdx) -> Option<(u64, u64)> {
        match &self.0 {
            Repr::Inline(_) => None,
            Repr::Spilled(s) => s
                .own
                .iter()
                .find(|o| o.storage == storage)
                .map(|o| (o.gs, o.num_bytes)),
        }
    }

    /// Sets (or with None drops) the own generation stamp and length of the replica on
    /// `storage`, which must be present.
    pub fn set_own(&mut self, storage: StorageIdx, values: Option<(u64, u64)>) {
        debug_assert!(self.position(storage).is_some());
        match values {
            None => {
                if let Repr::Spilled(s) = &mut self.0 {
                    s.own.retain(|o| o.storage != storage);
                    self.unspill_if_small();
                }
            }
            Some((gs, num_bytes)) => {
                let n = self.count();
                let s = self.spill(n);
                match s.own.iter_mut().find(|o| o.storage == storage) {
                    Some(o) => (o.gs, o.num_bytes) = (gs, num_bytes),
                    None => s.own.push(Own {
                        storage,
                        gs,
                        num_bytes,
                    }),
                }
            }
        }
    }

    /// The block's generation stamp and length change from `old` to `new`: the replicas
    /// that had the block's values keep `old` as their own, and those whose own values
    /// are `new` have the block's again.
    pub fn rebase(&mut self, old: (u64, u64), new: (u64, u64)) {
        if old == new {
            return;
        }
        let plain: Vec<StorageIdx> = self
            .iter()
            .map(Replica::storage)
            .filter(|&st| self.own(st).is_none())
            .collect();
        if !plain.is_empty() {
            let n = self.count();
            let s = self.spill(n);
            s.own.extend(plain.into_iter().map(|storage| Own {
                storage,
                gs: old.0,
                num_bytes: old.1,
            }));
        }
        if let Repr::Spilled(s) = &mut self.0 {
            s.own.retain(|o| (o.gs, o.num_bytes) != new);
        }
        self.unspill_if_small();
    }
}

impl std::ops::Deref for Replicas {
    type Target = [Replica];
    fn deref(&self) -> &[Replica] {
        match &self.0 {
            Repr::Inline(a) => &a[..self.count()],
            Repr::Spilled(s) => &s.replicas,
        }
    }
}

impl std::ops::DerefMut for Replicas {
    fn deref_mut(&mut self) -> &mut [Replica] {
        let n = self.count();
        match &mut self.0 {
            Repr::Inline(a) => &mut a[..n],
            Repr::Spilled(s) => &mut s.replicas,
        }
    }
}

impl<'a> IntoIterator for &'a Replicas {
    type Item = &'a Replica;
    type IntoIter = std::slice::Iter<'a, Replica>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a> IntoIterator for &'a mut Replicas {
    type Item = &'a mut Replica;
    type IntoIter = std::slice::IterMut<'a, Replica>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

#[cfg(test)]
#[path = "replicas_tests.rs"]
mod tests;
