//! A replica opened for a short-circuit read: the block and meta files a DataNode passed, the
//! meta header checked, reads of any range with the chunk CRCs verified from the meta file
//! (Hadoop's BlockReaderLocal). Blocking I/O: call from a blocking thread.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::{Bytes, BytesMut};
use rhdfs_transfer::checksum::{META_HEADER_LEN, MetaHeader};
use rhdfs_transfer::{DataChecksum, TransferError};

/// Why a short-circuit read did not give the bytes.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LocalReadError {
    /// A chunk's CRC does not match: the replica is corrupt (reported like the TCP path).
    #[error(transparent)]
    Corrupt(TransferError),
    /// The files are not what the block needs (gone, short, unreadable, bad header): read
    /// through the DataNode instead.
    #[error("{0}")]
    Unusable(String),
}

/// The open files of one finalized replica.
#[derive(Debug)]
pub(crate) struct LocalReplica {
    block: File,
    meta: File,
    checksum: DataChecksum,
    /// The block's length as the NameNode gave it.
    len: u64,
    /// The replica's shared-memory slot, when the DataNode gives them: not VALID once the
    /// DataNode invalidated the replica. Released when the replica is dropped.
    slot: Option<super::shm::Slot>,
    /// The kernel would not read these files with `RWF_NOWAIT`: no reads from the page cache on
    /// async threads.
    no_nowait: AtomicBool,
}

impl LocalReplica {
    /// Checks the meta header and that both files hold `len` bytes of block data.
    pub(crate) fn open(
        block: File,
        meta: File,
        len: u64,
        slot: Option<super::shm::Slot>,
    ) -> Result<Self, LocalReadError> {
        let unusable = |m: String| LocalReadError::Unusable(m);
        let mut head = [0u8; META_HEADER_LEN];
        meta.read_exact_at(&mut head, 0)
            .map_err(|e| unusable(format!("cannot read the meta header: {e}")))?;
        let header =
            MetaHeader::decode(&head).map_err(|e| unusable(format!("bad meta header: {e}")))?;
        let checksum = header.checksum;
        let on_disk = block
            .metadata()
            .map_err(|e| unusable(format!("cannot stat the block file: {e}")))?
            .len();
        if on_disk < len {
            return Err(unusable(format!(
                "the block file has {on_disk} bytes, fewer than the block's {len}"
            )));
        }
        let meta_len = meta
            .metadata()
            .map_err(|e| unusable(format!("cannot stat the meta file: {e}")))?
            .len();
        let need = META_HEADER_LEN as u64 + checksum.checksum_len(len as usize) as u64;
        if checksum.kind != rhdfs_transfer::ChecksumKind::Null && meta_len < need {
            return Err(unusable(format!(
                "the meta file has {meta_len} bytes, fewer than the {need} the block needs"
            )));
        }
        Ok(LocalReplica {
            block,
            meta,
            checksum,
            len,
            slot,
            no_nowait: AtomicBool::new(false),
        })
    }

    /// Another descriptor of the block file, for reading it plainly (a benchmark's limit).
    pub(crate) fn block_file(&self) -> std::io::Result<File> {
        self.block.try_clone()
    }

    /// The DataNode invalidated this replica (its slot is no longer VALID): do not read it.
    pub(crate) fn is_stale(&self) -> bool {
        self.slot.as_ref().is_some_and(|s| !s.is_valid())
    }

    /// Tells the kernel the block file is read sequentially from here on
    /// (`POSIX_FADV_SEQUENTIAL`: a larger read-ahead window). Advice only; failures are ignored.
    pub(crate) fn advise_sequential(&self) {
        let _ = rustix::fs::fadvise(&self.block, 0, None, rustix::fs::Advice::Sequential);
    }

    /// `[off, off + n)` of the block (clipped to its length), its chunks verified unless
    /// `skip_checksum`. The bytes are read into `buf` and handed out as a view of it: `buf`
    /// gets the memory back for the next read once the caller has dropped them. The file is
    /// read in steps of about [`STEP`], each verified while it is still in the CPU's cache.
    pub(crate) fn read(
        &self,
        off: u64,
        n: u64,
        skip_checksum: bool,
        buf: &mut PieceBuf,
    ) -> Result<Bytes, LocalReadError> {
        Ok(self
            .read_steps(off, n, skip_checksum, buf, Wait::ForDisk)?
            .unwrap_or_default())
    }

    /// As [`read`](Self::read), but only from the page cache and without ever waiting for the
    /// disk (`preadv2` with `RWF_NOWAIT`), so that it may run on an async thread: `None` when
    /// the first step's bytes or their checksums are not all cached (read them on a blocking
    /// thread); fewer bytes than asked when a later step's are not. A read the kernel cannot do
    /// this way (a file system without `RWF_NOWAIT`) is `None` too, and not tried again.
    pub(crate) fn read_cached(
        &self,
        off: u64,
        n: u64,
        skip_checksum: bool,
        buf: &mut PieceBuf,
    ) -> Result<Option<Bytes>, LocalReadError> {
        if self.no_nowait.load(Ordering::Relaxed) {
            return Ok(None);
        }
        self.read_steps(off, n, skip_checksum, buf, Wait::Never)
    }

    fn read_steps(
        &self,
        off: u64,
        n: u64,
        skip_checksum: bool,
        buf: &mut PieceBuf,
        wait: Wait,
    ) -> Result<Option<Bytes>, LocalReadError> {
        if self.is_stale() {
            return Err(LocalReadError::Unusable(
                "the DataNode invalidated the replica".into(),
            ));
        }
        let end = off.saturating_add(n).min(self.len);
        if off >= end {
            return Ok(Some(Bytes::new()));
        }
        let verify = !skip_checksum && self.checksum.kind != rhdfs_transfer::ChecksumKind::Null;
        let bpc = u64::from(self.checksum.bytes_per_checksum.max(1));
        // Verification needs whole chunks: read from the chunk start to the chunk end.
        let (start, stop) = if verify {
            (
                off - off % bpc,
                end.div_ceil(bpc).saturating_mul(bpc).min(self.len),
            )
        } else {
            (off, end)
        };
        let len = usize::try_from(stop - start)
            .map_err(|_| LocalReadError::Unusable(format!("a read of {} bytes", stop - start)))?;
        let PieceBuf { data, sums } = buf;
        data.clear();
        data.reserve(len);
        let sum_size = self.checksum.checksum_size();
        let not_cached = |e: std::io::Error| {
            if matches!(
                e.raw_os_error(),
                Some(libc::EOPNOTSUPP | libc::EINVAL | libc::ENOSYS)
            ) {
                // A read the kernel will not do without waiting (a file system or kernel
                // without RWF_NOWAIT): blocking threads from now on.
                self.no_nowait.store(true, Ordering::Relaxed);
            }
        };
        if verify {
            sums.clear();
            let count = self.checksum.checksum_len(len);
            sums.reserve(count);
            let at = META_HEADER_LEN as u64 + (start / bpc) * sum_size as u64;
            match read_spare(&self.meta, sums, count, at, wait) {
                Ok(true) => {}
                Ok(false) => return Ok(None),
                Err(e) if wait == Wait::Never => {
                    not_cached(e);
                    return Ok(None);
                }
                Err(e) => {
                    return Err(LocalReadError::Unusable(format!(
                        "meta file read failed: {e}"
                    )));
                }
            }
        }
        // A whole number of chunks per step (bpc is at most a u32).
        let step = (STEP / bpc).max(1) * bpc;
        let mut done = 0usize;
        while done < len {
            let k = (len - done).min(step as usize);
            let at = start + done as u64;
            match read_spare(&self.block, data, k, at, wait) {
                Ok(true) => {}
                Ok(false) => {
                    // Not all cached: the steps before this one are the answer.
                    data.truncate(done);
                    break;
                }
                Err(e) if wait == Wait::Never => {
                    not_cached(e);
                    data.truncate(done);
                    break;
                }
                Err(e) => {
                    return Err(LocalReadError::Unusable(format!(
                        "block file read failed: {e}"
                    )));
                }
            }
            if verify {
                let first = done / bpc as usize * sum_size;
                let count = self.checksum.checksum_len(k);
                self.checksum
                    .verify(&data[done..], &sums[first..first + count], at)
                    .map_err(|e| match e {
                        TransferError::Checksum { .. } => LocalReadError::Corrupt(e),
                        other => LocalReadError::Unusable(other.to_string()),
                    })?;
            }
            done += k;
        }
        if done == 0 {
            return Ok(None);
        }
        // Steps start at chunk boundaries and are at least a chunk long, so the first one
        // covers `off`.
        let got_end = (start + done as u64).min(end);
        let from = (off - start) as usize;
        let to = from + (got_end - off) as usize;
        Ok(Some(data.split().freeze().slice(from..to)))
    }
}

/// Whether a read may wait for the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wait {
    /// A blocking thread's read.
    ForDisk,
    /// Only what is in the page cache now (`RWF_NOWAIT`).
    Never,
}

/// Bytes read (and verified) from the block file at a time: a small multiple of the chunk size
/// that stays in a core's cache between the read and the CRC pass.
const STEP: u64 = 256 * 1024;

/// Where a replica's bytes are read into, kept from one read to the next so that a sequential
/// reader allocates nothing per piece: the block bytes (handed out as `Bytes` views; the memory
/// is reused once those are dropped) and the chunk checksums.
#[derive(Debug, Default)]
pub(crate) struct PieceBuf {
    data: BytesMut,
    sums: Vec<u8>,
}

impl PieceBuf {
    /// Whether the memory of the last read can be reused for one of `n` bytes (its bytes were
    /// dropped by whoever held them) without allocating.
    pub(crate) fn reusable(&mut self, n: usize) -> bool {
        self.data.clear();
        self.data.try_reclaim(n)
    }
}

/// Something bytes are read into, behind its length: the block bytes or the checksums.
trait Spare {
    fn reserve_more(&mut self, n: usize);
    fn filled(&self) -> usize;
    /// The first `n` bytes of the spare capacity (at least `n` were reserved).
    fn spare_ptr(&mut self, n: usize) -> *mut u8;
    /// # Safety
    /// The first `k` bytes of the spare capacity were written.
    unsafe fn grow(&mut self, k: usize);
}

impl Spare for BytesMut {
    fn reserve_more(&mut self, n: usize) {
        self.reserve(n);
    }
    fn filled(&self) -> usize {
        self.len()
    }
    fn spare_ptr(&mut self, n: usize) -> *mut u8 {
        self.spare_capacity_mut()[..n].as_mut_ptr().cast()
    }
    unsafe fn grow(&mut self, k: usize) {
        // SAFETY: the caller wrote the first `k` bytes of the spare capacity.
        unsafe { self.set_len(self.len() + k) }
    }
}

impl Spare for Vec<u8> {
    fn reserve_more(&mut self, n: usize) {
        self.reserve(n);
    }
    fn filled(&self) -> usize {
        self.len()
    }
    fn spare_ptr(&mut self, n: usize) -> *mut u8 {
        self.spare_capacity_mut()[..n].as_mut_ptr().cast()
    }
    unsafe fn grow(&mut self, k: usize) {
        // SAFETY: the caller wrote the first `k` bytes of the spare capacity.
        unsafe { self.set_len(self.len() + k) }
    }
}

/// Appends `n` bytes of `file` at `off` to `buf`, reading into its spare capacity without
/// zeroing it first (the memory is written over by the read). With [`Wait::Never`] the reads
/// take only what the page cache holds now: `Ok(false)` when that is not all `n` bytes (what
/// was read stays appended), an error other than a miss (`WouldBlock`) when the kernel cannot
/// read so.
fn read_spare(
    file: &File,
    buf: &mut impl Spare,
    n: usize,
    off: u64,
    wait: Wait,
) -> std::io::Result<bool> {
    buf.reserve_more(n);
    let want = buf.filled() + n;
    while buf.filled() < want {
        let left = want - buf.filled();
        let at = off + (n - left) as u64;
        let ptr = buf.spare_ptr(left);
        let pos = libc::off_t::try_from(at)
            .map_err(|_| std::io::Error::other(format!("offset {at} too large")))?;
        let flags = match wait {
            Wait::ForDisk => 0,
            Wait::Never => libc::RWF_NOWAIT,
        };
        let iov = libc::iovec {
            iov_base: ptr.cast(),
            iov_len: left,
        };
        // SAFETY: `iov` names `left` bytes of `buf`'s reserved spare capacity, which the
        // kernel only writes; `file` is an open descriptor for the whole call.
        let k = unsafe { libc::preadv2(file.as_raw_fd(), &iov, 1, pos, flags) };
        let k = match usize::try_from(k) {
            Ok(k) => k,
            Err(_) => {
                let e = std::io::Error::last_os_error();
                match e.kind() {
                    std::io::ErrorKind::Interrupted => continue,
                    std::io::ErrorKind::WouldBlock if wait == Wait::Never => {
                        return Ok(false);
                    }
                    _ => return Err(e),
                }
            }
        };
        if k == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("the file ends at {at}"),
            ));
        }
        // SAFETY: `preadv2` wrote the first `k` bytes of the spare capacity.
        unsafe { buf.grow(k) };
        if wait == Wait::Never && k < left {
            // The rest is not in the page cache (a short read with RWF_NOWAIT).
            return Ok(false);
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use rhdfs_transfer::ChecksumKind;

    use super::*;

    fn files(data: &[u8], bpc: u32) -> (tempfile::NamedTempFile, tempfile::NamedTempFile) {
        let sum = DataChecksum::new(ChecksumKind::Crc32c, bpc);
        let mut b = tempfile::NamedTempFile::new().expect("block");
        b.write_all(data).expect("write");
        let mut m = tempfile::NamedTempFile::new().expect("meta");
        m.write_all(&MetaHeader::new(sum).encode()).expect("header");
        m.write_all(&sum.compute_bytes(data)).expect("sums");
        (b, m)
    }

    fn open(
        b: &tempfile::NamedTempFile,
        m: &tempfile::NamedTempFile,
        len: u64,
    ) -> Result<LocalReplica, LocalReadError> {
        LocalReplica::open(b.reopen().expect("b"), m.reopen().expect("m"), len, None)
    }

    #[test]
    fn reads_any_range_verified() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7) as u8).collect();
        let (b, m) = files(&data, 64);
        let r = open(&b, &m, 1000).expect("open");
        for (off, n) in [
            (0u64, 1000u64),
            (1, 1),
            (63, 2),
            (100, 500),
            (999, 10),
            (1000, 5),
        ] {
            let got = r
                .read(off, n, false, &mut PieceBuf::default())
                .expect("read");
            let end = (off + n).min(1000) as usize;
            assert_eq!(
                &got[..],
                &data[off.min(1000) as usize..end],
                "[{off}, +{n})"
            );
        }
    }

    #[test]
    fn corrupt_chunk_and_short_file() {
        let mut data = vec![5u8; 300];
        let (b, m) = files(&data, 100);
        data[150] ^= 1;
        std::fs::write(b.path(), &data).expect("corrupt");
        let r = open(&b, &m, 300).expect("open");
        assert!(r.read(0, 100, false, &mut PieceBuf::default()).is_ok());
        match r.read(120, 10, false, &mut PieceBuf::default()) {
            Err(LocalReadError::Corrupt(TransferError::Checksum { offset, .. })) => {
                assert_eq!(offset, 100)
            }
            other => panic!("expected a checksum error, got {other:?}"),
        }
        assert!(
            r.read(120, 10, true, &mut PieceBuf::default()).is_ok(),
            "skip.checksum reads it"
        );
        assert!(matches!(
            open(&b, &m, 301),
            Err(LocalReadError::Unusable(_))
        ));
        std::fs::write(m.path(), b"\0\x02").expect("bad header");
        assert!(matches!(
            open(&b, &m, 300),
            Err(LocalReadError::Unusable(_))
        ));
    }

    /// Drops `[off, off + len)` of `f` from the page cache where the kernel allows it (it may
    /// keep pages: callers accept either outcome).
    fn evict(f: &tempfile::NamedTempFile, off: u64, len: Option<u64>) {
        let file = f.reopen().expect("reopen");
        file.sync_all().expect("sync");
        let len = len.and_then(std::num::NonZeroU64::new);
        let _ = rustix::fs::fadvise(&file, off, len, rustix::fs::Advice::DontNeed);
    }

    #[test]
    fn cached_reads_same_bytes_fewer_when_not_cached() {
        let bpc = 512;
        let len = 3 * STEP as usize + 777;
        let mut data: Vec<u8> = (0..len as u32).map(|i| (i * 13 + i / 5) as u8).collect();
        let (b, m) = files(&data, bpc);
        let r = open(&b, &m, len as u64).expect("open");
        let mut buf = PieceBuf::default();
        let whole = || {
            r.read(0, len as u64, false, &mut PieceBuf::default())
                .expect("read")
        };
        assert_eq!(&whole()[..], &data[..], "cached by the read");
        for (off, n) in [
            (0u64, len as u64),
            (1, 10),
            (STEP - 3, STEP + 9),
            (len as u64, 4),
        ] {
            let got = r
                .read_cached(off, n, false, &mut buf)
                .expect("read")
                .expect("cached");
            let end = (off + n).min(len as u64) as usize;
            assert_eq!(&got[..], &data[off as usize..end], "[{off}, +{n})");
        }
        // The bytes after the first step dropped from the cache: whole steps, at least the
        // first (more when the kernel kept pages or its read-ahead, started by the miss, was
        // quick); the blocking read still gives everything.
        evict(&b, STEP, None);
        match r.read_cached(0, len as u64, false, &mut buf).expect("read") {
            Some(got) => {
                let steps = got.len() % STEP as usize == 0 && got.len() >= STEP as usize;
                assert!(steps || got.len() == len, "{}", got.len());
                assert_eq!(&got[..], &data[..got.len()]);
            }
            None => panic!("the first step is cached"),
        }
        evict(&b, 0, None);
        if let Some(got) = r.read_cached(10, 100, false, &mut buf).expect("read") {
            assert_eq!(&got[..], &data[10..110]);
        }
        assert_eq!(&whole()[..], &data[..]);

        // A corrupt chunk read from the cache is corruption, not a miss.
        data[STEP as usize + 3] ^= 0x04;
        std::fs::write(b.path(), &data).expect("corrupt");
        let r = open(&b, &m, len as u64).expect("open");
        assert!(
            r.read(0, len as u64, false, &mut buf).is_err(),
            "cached now"
        );
        match r.read_cached(0, len as u64, false, &mut buf) {
            Err(LocalReadError::Corrupt(TransferError::Checksum { offset, .. })) => {
                assert_eq!(offset, STEP)
            }
            other => panic!("expected a checksum error, got {other:?}"),
        }
    }

    #[test]
    fn steps_verified_and_buffer_reused() {
        let bpc = 512;
        let len = 3 * STEP as usize + 1234;
        let mut data: Vec<u8> = (0..len as u32).map(|i| (i * 31 + i / 7) as u8).collect();
        let (b, m) = files(&data, bpc);
        let r = open(&b, &m, len as u64).expect("open");
        let mut buf = PieceBuf::default();
        let whole = r.read(0, len as u64, false, &mut buf).expect("read");
        assert_eq!(&whole[..], &data[..]);
        let first = whole.as_ptr();
        drop(whole);
        let again = r.read(10, STEP + 20, false, &mut buf).expect("read");
        assert_eq!(&again[..], &data[10..STEP as usize + 30]);
        assert_eq!(
            again.as_ptr(),
            first.wrapping_add(10),
            "the memory was reused"
        );
        // Still held by the caller: the next read takes other memory and both stay intact.
        let other = r.read(5, 5, false, &mut buf).expect("read");
        assert_eq!(&other[..], &data[5..10]);
        assert_eq!(&again[..], &data[10..STEP as usize + 30]);

        // A corrupt byte in the second step is found, named by its chunk's block offset.
        let bad = STEP as usize + 700;
        data[bad] ^= 0x10;
        std::fs::write(b.path(), &data).expect("corrupt");
        let r = open(&b, &m, len as u64).expect("open");
        match r.read(0, len as u64, false, &mut buf) {
            Err(LocalReadError::Corrupt(TransferError::Checksum { offset, .. })) => {
                assert_eq!(offset, (bad - bad % 512) as u64)
            }
            other => panic!("expected a checksum error, got {other:?}"),
        }
        assert!(r.read(STEP, 600, true, &mut buf).is_ok());
    }
}
