//! Writing one replica: data at any offset not beyond its end, with the stored CRC of every
//! touched aligned chunk recomputed over old + new bytes. Blocking I/O.
//!
//! The block file's space is reserved ahead of the data, [`PREALLOCATION`] at a time, with
//! `fallocate(FALLOC_FL_KEEP_SIZE)`: the file's length stays the bytes written (readers,
//! short-circuit ones included, see nothing else), and the file system allocates a step's
//! extent at once instead of reserving and allocating it page by page as the writes come
//! (ext4's delayed allocation: about a fifth less system time per byte written, measured
//! here). What is reserved past the data is given back when the writer finishes (the file
//! cut to its length) or when the replica is truncated; a writer that dies leaves at most one
//! step reserved past an RBW file until its recovery cuts it or it is deleted. A file system
//! without `fallocate` is written as before.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::checksum::ChecksumSpec;
use crate::dataset::{Dataset, ReplicaGuard};
use crate::error::StorageError;
use crate::meta;
use crate::replica::{ReplicaInfo, ReplicaState};

/// An open replica being written (RBW or TEMPORARY). Every write holds the replica's guard
/// and first checks that the writer still owns the replica, so once a recovery or another
/// writer took the replica over, this one fails instead of touching the files.
#[derive(Debug)]
pub struct ReplicaWriter {
    ds: Arc<Dataset>,
    bpid: String,
    id: u64,
    gs: u64,
    epoch: u64,
    volume: usize,
    state: ReplicaState,
    spec: ChecksumSpec,
    block: File,
    meta: File,
    len: u64,
    /// How far the block file's space is reserved (see the module docs); `NOT_RESERVING` once
    /// the file system refused.
    reserved: AtomicU64,
    /// Whether space was reserved past the data, to give back when finishing.
    reserved_past: AtomicBool,
    guard: ReplicaGuard,
}

/// How much block-file space is reserved at a time, ahead of the data.
pub const PREALLOCATION: u64 = 8 << 20;
const NOT_RESERVING: u64 = u64::MAX;

impl ReplicaWriter {
    pub(crate) fn create(
        ds: Arc<Dataset>,
        bpid: &str,
        info: &ReplicaInfo,
        block: &Path,
        metap: &Path,
        guard: ReplicaGuard,
    ) -> Result<Self, StorageError> {
        let r = ds
            .volume_io_fault(info.volume)
            .map_err(StorageError::from)
            .and_then(|()| Ok(ds.metadata_op(info.volume, || Self::create_files(block, metap))?))
            .and_then(|(b, m)| {
                m.write_all_at(&meta::encode_header(&info.checksum), 0)?;
                Ok((b, m))
            });
        let files = ds.on_volume_io(info.volume, r)?;
        Ok(Self::new(ds, bpid, info, files, 0, guard))
    }

    /// Creates (or truncates) the block and meta files.
    fn create_files(block: &Path, metap: &Path) -> std::io::Result<(File, File)> {
        let b = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(block)?;
        let m = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(metap)?;
        Ok((b, m))
    }

    pub(crate) fn open(
        ds: Arc<Dataset>,
        bpid: &str,
        info: &ReplicaInfo,
        block: &Path,
        metap: &Path,
        guard: ReplicaGuard,
    ) -> Result<Self, StorageError> {
        let opened = (|| -> Result<_, StorageError> {
            ds.volume_io_fault(info.volume)?;
            let (b, m) = ds.metadata_op(info.volume, || {
                let b = OpenOptions::new().read(true).write(true).open(block)?;
                let m = OpenOptions::new().read(true).write(true).open(metap)?;
                Ok::<_, std::io::Error>((b, m))
            })?;
            let mut h = [0u8; 7];
            m.read_exact_at(&mut h, 0)?;
            let spec = meta::decode_header(&h)?;
            let len = b.metadata()?.len();
            Ok((b, m, spec, len))
        })();
        let (b, m, spec, file_len) = ds.on_volume_io(info.volume, opened)?;
        let mut info = info.clone();
        info.checksum = spec;
        let len = info.num_bytes.min(file_len);
        let w = Self::new(ds, bpid, &info, (b, m), len, guard);
        // Reserving starts past the bytes the file already has.
        w.reserved.store(file_len, Ordering::Relaxed);
        Ok(w)
    }

    fn new(
        ds: Arc<Dataset>,
        bpid: &str,
        info: &ReplicaInfo,
        (block, meta): (File, File),
        len: u64,
        guard: ReplicaGuard,
    ) -> Self {
        ReplicaWriter {
            ds,
            bpid: bpid.to_string(),
            id: info.id,
            gs: info.gs,
            epoch: info.writer_epoch,
            volume: info.volume,
            state: info.state,
            spec: info.checksum,
            block,
            meta,
            len,
            reserved: AtomicU64::new(0),
            reserved_past: AtomicBool::new(false),
            guard,
        }
    }

    pub fn id(&self) -> u64 {
        self.id
    }

    pub fn gs(&self) -> u64 {
        self.gs
    }

    /// Index of the volume holding the replica.
    pub fn volume(&self) -> usize {
        self.volume
    }

    pub fn state(&self) -> ReplicaState {
        self.state
    }

    pub fn bpid(&self) -> &str {
        &self.bpid
    }

    /// Bytes in the replica.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Checksum the replica is stored with.
    pub fn checksum(&self) -> ChecksumSpec {
        self.spec
    }

    /// Writes `data` at `offset` (≤ current length; overlapping bytes are overwritten) and
    /// recomputes the stored CRC of each aligned chunk it touches.
    pub fn write_at(&mut self, offset: u64, data: &[u8]) -> Result<(), StorageError> {
        let r = self.write_inner(offset, data, None);
        self.ds.on_volume_io(self.volume, r)
    }

    /// [`ReplicaWriter::write_at`] of a received packet: `sums` are the packet's CRCs of
    /// `data` chunked from `offset` under this replica's checksum. When the packet starts on a
    /// chunk boundary and ends on one (or at the replica's end) they are stored as received,
    /// as Hadoop's BlockReceiver stores them — no second CRC pass; a packet damaged on the way
    /// to a DataNode that does not verify then leaves a replica whose CRCs disagree with its
    /// data, which readers and the block scanner detect. Other packets are summed as by
    /// `write_at`.
    pub fn write_packet(
        &mut self,
        offset: u64,
        data: &[u8],
        sums: &[u8],
    ) -> Result<(), StorageError> {
        let r = self.write_inner(offset, data, Some(sums));
        self.ds.on_volume_io(self.volume, r)
    }

    /// A run of received packets that follow one another, each `(data, sums)` as for
    /// [`ReplicaWriter::write_packet`], written with one vectored write to each file when
    /// they can be: the run starts on a chunk boundary, every packet but the last ends on one
    /// and carries its CRCs. Else packet by packet. One write of the run lets the kernel back
    /// it with large page-cache folios, where a packet's 64,512 bytes at an offset that is
    /// not a multiple of a page leave a block's pages in folios of 4–32 KiB; reading such a
    /// replica from the page cache (short-circuit, or sendfile to a reader) runs at about
    /// 0.6 of the rate of one written in large writes, measured on Linux 6.18 and ext4.
    pub fn write_packets(
        &mut self,
        offset: u64,
        packets: &[(&[u8], &[u8])],
    ) -> Result<(), StorageError> {
        match packets {
            [] => return Ok(()),
            [(data, sums)] => return self.write_packet(offset, data, sums),
            _ => {}
        }
        if !self.whole_run(offset, packets) {
            let mut at = offset;
            for (data, sums) in packets {
                self.write_packet(at, data, sums)?;
                at += data.len() as u64;
            }
            return Ok(());
        }
        let r = self.write_run(offset, packets);
        self.ds.on_volume_io(self.volume, r)
    }

    /// Whether the run's stored CRCs can be taken as received (see `write_packets`).
    fn whole_run(&self, offset: u64, packets: &[(&[u8], &[u8])]) -> bool {
        let bpc = self.spec.bpc();
        let size = self.spec.kind.size();
        if offset > self.len || !offset.is_multiple_of(bpc) {
            return false;
        }
        let last = packets.len() - 1;
        let mut end = offset;
        for (i, (data, sums)) in packets.iter().enumerate() {
            let n = data.len() as u64;
            end += n;
            let chunks = data
                .len()
                .div_ceil(self.spec.bytes_per_checksum.max(1) as usize);
            // Every packet but the last ends on a chunk boundary; the last may end mid-chunk
            // only at or past the replica's end (nothing after it to sum with).
            let boundary = n.is_multiple_of(bpc) || (i == last && end >= self.len);
            if n == 0 || !boundary || sums.len() != chunks * size {
                return false;
            }
        }
        true
    }

    fn write_run(&mut self, offset: u64, packets: &[(&[u8], &[u8])]) -> Result<(), StorageError> {
        let _held = self.guard.lock();
        let (data, sums): (Vec<&[u8]>, Vec<&[u8]>) = packets.iter().copied().unzip();
        let len: u64 = data.iter().map(|d| d.len() as u64).sum();
        self.store(offset, &data, &sums, offset / self.spec.bpc())?;
        self.len = self.len.max(offset + len);
        self.ds
            .update_len(&self.bpid, self.id, self.epoch, self.len)
    }

    fn write_inner(
        &mut self,
        offset: u64,
        data: &[u8],
        received: Option<&[u8]>,
    ) -> Result<(), StorageError> {
        if offset > self.len {
            return Err(StorageError::Gap {
                id: self.id,
                offset,
                len: self.len,
            });
        }
        if data.is_empty() {
            return Ok(());
        }
        let _held = self.guard.lock();
        let bpc = self.spec.bpc();
        let end = offset + data.len() as u64;
        let first_chunk = offset / bpc;
        let chunk_start = first_chunk * bpc;
        let head_len = (offset - chunk_start) as usize;
        let tail_end = end.div_ceil(bpc).saturating_mul(bpc).min(self.len).max(end);
        let tail_len = (tail_end - end) as usize;
        let whole = head_len == 0 && tail_len == 0;
        let chunks = data
            .len()
            .div_ceil(self.spec.bytes_per_checksum.max(1) as usize);
        let stored = received.filter(|s| whole && s.len() == chunks * self.spec.kind.size());
        let computed;
        let sums: &[u8] = if self.spec.kind.size() == 0 {
            &[]
        } else if let Some(s) = stored {
            s
        } else if whole {
            computed = self.spec.compute(data);
            &computed
        } else {
            let mut buf = vec![0u8; head_len + data.len() + tail_len];
            self.block
                .read_exact_at(&mut buf[..head_len], chunk_start)?;
            buf[head_len..head_len + data.len()].copy_from_slice(data);
            self.block
                .read_exact_at(&mut buf[head_len + data.len()..], end)?;
            computed = self.spec.compute(&buf);
            &computed
        };
        self.store(offset, &[data], &[sums], first_chunk)?;
        self.len = self.len.max(end);
        self.ds
            .update_len(&self.bpid, self.id, self.epoch, self.len)
    }

    /// Writes `data` one buffer after another at `offset` of the block file and `sums` as the
    /// stored CRCs from chunk `first_chunk` on (none when empty), each file with one call,
    /// once this writer is found to still own the replica. The caller holds its guard.
    fn store(
        &self,
        offset: u64,
        data: &[&[u8]],
        sums: &[&[u8]],
        first_chunk: u64,
    ) -> Result<(), StorageError> {
        // A writer superseded by a recovery must not touch the files any more.
        self.ds.check_epoch(&self.bpid, self.id, self.epoch)?;
        self.ds.volume_io_fault(self.volume)?;
        let len: u64 = data.iter().map(|d| d.len() as u64).sum();
        self.reserve(offset.saturating_add(len));
        crate::vectored::write_all_at(&self.block, data, offset)?;
        if sums.iter().any(|s| !s.is_empty()) {
            let at = meta::crc_offset(&self.spec, first_chunk);
            crate::vectored::write_all_at(&self.meta, sums, at)?;
        }
        Ok(())
    }

    /// Reserves the block file's space up to the step past `end` (see the module docs). A
    /// refusal stops reserving for this writer: the write that follows reports a full disk.
    fn reserve(&self, end: u64) {
        let from = self.reserved.load(Ordering::Relaxed);
        if end <= from {
            return;
        }
        let to = end.div_ceil(PREALLOCATION).saturating_mul(PREALLOCATION);
        let (Ok(off), Ok(len)) = (
            libc::off64_t::try_from(from),
            libc::off64_t::try_from(to - from),
        ) else {
            self.reserved.store(NOT_RESERVING, Ordering::Relaxed);
            return;
        };
        // SAFETY: a plain system call on an open descriptor; it reads no memory of ours.
        let r = unsafe {
            libc::fallocate64(self.block.as_raw_fd(), libc::FALLOC_FL_KEEP_SIZE, off, len)
        };
        if r == 0 {
            self.reserved.store(to, Ordering::Relaxed);
            self.reserved_past.store(true, Ordering::Relaxed);
        } else {
            let e = std::io::Error::last_os_error();
            tracing::debug!(block = self.id, "block file space not reserved: {e}");
            self.reserved.store(NOT_RESERVING, Ordering::Relaxed);
        }
    }

    /// Cuts the replica to `len` bytes, recomputing the CRC of a now partial last chunk.
    pub fn truncate(&mut self, len: u64) -> Result<(), StorageError> {
        if len >= self.len {
            return Ok(());
        }
        let _held = self.guard.lock();
        self.ds.check_epoch(&self.bpid, self.id, self.epoch)?;
        truncate_files(&self.block, &self.meta, &self.spec, len)?;
        // The cut also gave back whatever was reserved past the data.
        if self.reserved.load(Ordering::Relaxed) != NOT_RESERVING {
            self.reserved.store(len, Ordering::Relaxed);
        }
        self.reserved_past.store(false, Ordering::Relaxed);
        self.len = len;
        self.ds.update_len(&self.bpid, self.id, self.epoch, len)
    }

    /// Starts the write-back of the block file's bytes `[from, to)` without waiting for it
    /// (`sync_file_range` with `SYNC_FILE_RANGE_WRITE`, as Hadoop's sync-behind-writes).
    pub fn start_write_back(&self, from: u64, to: u64) -> Result<(), StorageError> {
        if to <= from {
            return Ok(());
        }
        let (Ok(off), Ok(len)) = (
            libc::off64_t::try_from(from),
            libc::off64_t::try_from(to - from),
        ) else {
            return Ok(());
        };
        // SAFETY: a plain system call on an open descriptor; it reads no memory of ours.
        let r = unsafe {
            libc::sync_file_range(
                self.block.as_raw_fd(),
                off,
                len,
                libc::SYNC_FILE_RANGE_WRITE,
            )
        };
        if r == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error().into())
        }
    }

    /// fsync of data and meta (syncBlock).
    pub fn sync(&self) -> Result<(), StorageError> {
        self.block.sync_data()?;
        self.meta.sync_data()?;
        Ok(())
    }

    /// Moves the replica to finalized.
    pub fn finalize(self) -> Result<ReplicaInfo, StorageError> {
        self.finish(ReplicaState::Finalized)
    }

    /// TRANSFER_RBW target: the temporary replica becomes RBW.
    pub fn into_rbw(self) -> Result<ReplicaInfo, StorageError> {
        self.finish(ReplicaState::Rbw)
    }

    fn finish(self, to: ReplicaState) -> Result<ReplicaInfo, StorageError> {
        let ReplicaWriter {
            ds,
            bpid,
            id,
            epoch,
            volume,
            len,
            block,
            meta,
            reserved_past,
            guard,
            ..
        } = self;
        let _held = guard.lock();
        if reserved_past.into_inner() {
            // Give back the space reserved past the data; only while this writer still owns
            // the replica (a recovery may have cut it shorter).
            ds.check_epoch(&bpid, id, epoch)?;
            ds.on_volume_io(volume, block.set_len(len).map_err(StorageError::from))?;
        }
        drop(block);
        drop(meta);
        ds.finish(&bpid, id, epoch, len, to)
    }
}

/// Cuts a replica's files to `len` bytes: the block file, the meta file to the CRCs of the
/// chunks left, and the CRC of a now partial last chunk recomputed from its bytes.
pub(crate) fn truncate_files(
    block: &File,
    meta: &File,
    spec: &ChecksumSpec,
    len: u64,
) -> Result<(), StorageError> {
    block.set_len(len)?;
    let chunks = spec.chunks(len);
    meta.set_len(meta::crc_offset(spec, chunks))?;
    let bpc = spec.bpc();
    if !len.is_multiple_of(bpc) && spec.kind.size() > 0 {
        let start = (len / bpc) * bpc;
        let mut buf = vec![0u8; (len - start) as usize];
        block.read_exact_at(&mut buf, start)?;
        let crc = spec.crc(&buf).to_be_bytes();
        meta.write_all_at(&crc, meta::crc_offset(spec, len / bpc))?;
    }
    Ok(())
}
