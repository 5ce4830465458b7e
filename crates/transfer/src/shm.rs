//! The shared-memory slots of short-circuit reads (Hadoop's ShortCircuitShm): a DataNode creates
//! a segment per client connection that asks (REQUEST_SHORT_CIRCUIT_SHM, op 89) as an unlinked
//! file of [`SEGMENT_SIZE`] bytes, maps it and passes its descriptor; the client maps it too.
//! The segment is an array of [`SLOT_SIZE`]-byte slots; a slot's first 8 bytes are its flag
//! word: [`VALID`] (the replica the slot was registered for may be read through the client's
//! descriptors), [`ANCHORABLE`] (the replica is mlocked, so reads may skip checksums) and an
//! anchor count in the low 31 bits. The client marks a slot VALID when it allocates it and sends
//! its id with REQUEST_SHORT_CIRCUIT_FDS; the DataNode clears VALID when the replica is
//! invalidated; the client checks VALID before each use of its descriptors.
//!
//! Both sides only ever touch the flag words, through `AtomicU64` (the same memory is mapped in
//! two processes; 8-byte aligned atomics on shared mappings are what Hadoop's Unsafe calls are).

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::mm::{MapFlags, ProtFlags};

/// Bytes per slot (Hadoop's BYTES_PER_SLOT).
pub const SLOT_SIZE: usize = 64;
/// Bytes per segment (Hadoop's DataNode: 8192).
pub const SEGMENT_SIZE: usize = 8192;
/// Slots per segment.
pub const SLOTS: usize = SEGMENT_SIZE / SLOT_SIZE;
/// The replica may be read through the descriptors.
pub const VALID: u64 = 1 << 63;
/// The replica is mlocked by the DataNode (anchors may be taken).
pub const ANCHORABLE: u64 = 1 << 62;
/// The anchor count.
pub const ANCHOR_MASK: u64 = 0x7fff_ffff;

/// A segment's id, chosen by the DataNode (ShortCircuitShmIdProto).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ShmId {
    pub hi: i64,
    pub lo: i64,
}

/// A mapped segment. Only the flag words are accessed, always atomically.
#[derive(Debug)]
pub struct Segment {
    base: NonNull<u8>,
    len: usize,
    fd: OwnedFd,
}

// SAFETY: the mapping is owned by the Segment and only accessed through `AtomicU64`s (`flags`),
// which are safe to share between threads.
unsafe impl Send for Segment {}
// SAFETY: as above.
unsafe impl Sync for Segment {}

impl Segment {
    /// Maps `len` bytes of `fd` shared and read-write. `len` must be a positive multiple of
    /// [`SLOT_SIZE`] no larger than the file (a short file is an error, not a SIGBUS later).
    pub fn map(fd: OwnedFd, len: usize) -> io::Result<Self> {
        if len == 0 || !len.is_multiple_of(SLOT_SIZE) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("a shared memory segment of {len} bytes is not whole slots"),
            ));
        }
        let size = rustix::fs::fstat(&fd).map_err(io::Error::from)?.st_size;
        if u64::try_from(size).unwrap_or(0) < len as u64 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("the shared memory file has {size} bytes, not {len}"),
            ));
        }
        // SAFETY: a fresh mapping chosen by the kernel (null hint), of a file at least `len`
        // bytes long; nothing else refers to that address range.
        let p = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                len,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::SHARED,
                fd.as_fd(),
                0,
            )
        }
        .map_err(io::Error::from)?;
        let base = NonNull::new(p.cast::<u8>())
            .ok_or_else(|| io::Error::other("mmap returned a null address"))?;
        Ok(Segment { base, len, fd })
    }

    /// Slots in this segment.
    pub fn slots(&self) -> usize {
        self.len / SLOT_SIZE
    }

    /// The segment's file descriptor (to pass it on).
    pub fn fd(&self) -> &OwnedFd {
        &self.fd
    }

    /// The flag word of slot `idx`, or None past the end.
    pub fn flags(&self, idx: usize) -> Option<&AtomicU64> {
        if idx >= self.slots() {
            return None;
        }
        // SAFETY: `idx * SLOT_SIZE + 8 <= len`, the mapping is page-aligned so the word is
        // 8-byte aligned, it lives as long as `self`, and it is only ever accessed atomically.
        Some(unsafe { AtomicU64::from_ptr(self.base.as_ptr().add(idx * SLOT_SIZE).cast()) })
    }

    /// Whether slot `idx` is VALID.
    pub fn is_valid(&self, idx: usize) -> bool {
        self.flags(idx)
            .is_some_and(|f| f.load(Ordering::Acquire) & VALID != 0)
    }

    /// Sets slot `idx`'s flags to exactly `bits` (the client's allocation: VALID; its release: 0).
    pub fn set(&self, idx: usize, bits: u64) {
        if let Some(f) = self.flags(idx) {
            f.store(bits, Ordering::Release);
        }
    }

    /// Sets `bits` in slot `idx`, keeping the rest.
    pub fn add(&self, idx: usize, bits: u64) {
        if let Some(f) = self.flags(idx) {
            f.fetch_or(bits, Ordering::AcqRel);
        }
    }

    /// Clears `bits` in slot `idx`, keeping the rest (the DataNode's invalidation: VALID).
    pub fn clear(&self, idx: usize, bits: u64) {
        if let Some(f) = self.flags(idx) {
            f.fetch_and(!bits, Ordering::AcqRel);
        }
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        // SAFETY: the range was mapped by `map` and no reference into it outlives `self`.
        if let Err(e) = unsafe { rustix::mm::munmap(self.base.as_ptr().cast(), self.len) } {
            tracing::warn!(error = %e, "munmap of a shared memory segment failed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(len: u64) -> std::fs::File {
        let p = std::env::temp_dir().join(format!(
            "rhdfs-shm-test-{}-{len}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(&p)
            .expect("create");
        std::fs::remove_file(&p).expect("unlink");
        f.set_len(len).expect("size");
        f
    }

    #[test]
    fn layout_and_flags() {
        assert_eq!((SLOT_SIZE, SEGMENT_SIZE, SLOTS), (64, 8192, 128));
        assert_eq!(VALID, 0x8000_0000_0000_0000);
        assert_eq!(ANCHORABLE, 0x4000_0000_0000_0000);
        assert_eq!(VALID & ANCHOR_MASK, 0);
        assert_eq!(ANCHORABLE & ANCHOR_MASK, 0);
    }

    #[test]
    fn two_mappings_share_the_flag_words() {
        let f = file(SEGMENT_SIZE as u64);
        let fd: OwnedFd = f.into();
        let other = fd.try_clone().expect("dup");
        let a = Segment::map(fd, SEGMENT_SIZE).expect("map a");
        let b = Segment::map(other, SEGMENT_SIZE).expect("map b");
        assert_eq!(a.slots(), 128);
        assert!(a.flags(128).is_none() && !a.is_valid(128));
        assert!(!b.is_valid(5));
        a.set(5, VALID);
        assert!(b.is_valid(5) && !b.is_valid(4) && !b.is_valid(6));
        b.add(5, ANCHORABLE);
        assert_eq!(
            a.flags(5).map(|f| f.load(Ordering::Acquire)),
            Some(VALID | ANCHORABLE)
        );
        // The word is the slot's first 8 bytes: the file shows it (little-endian on x86).
        let mut bytes = [0u8; 8];
        std::os::unix::fs::FileExt::read_exact_at(
            &std::fs::File::from(b.fd().try_clone().expect("dup")),
            &mut bytes,
            5 * 64,
        )
        .expect("read");
        assert_eq!(u64::from_ne_bytes(bytes), VALID | ANCHORABLE);
        b.clear(5, VALID);
        assert!(!a.is_valid(5));
        assert_eq!(
            a.flags(5).map(|f| f.load(Ordering::Acquire)),
            Some(ANCHORABLE)
        );
    }

    #[test]
    fn short_or_ragged_segments_are_refused() {
        let f: OwnedFd = file(100).into();
        assert!(Segment::map(f.try_clone().expect("dup"), SEGMENT_SIZE).is_err());
        assert!(Segment::map(f.try_clone().expect("dup"), 65).is_err());
        assert!(Segment::map(f, 64).is_ok());
    }
}
