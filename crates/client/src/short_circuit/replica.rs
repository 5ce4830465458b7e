//! A replica opened for a short-circuit read: the block and meta files a DataNode passed, the
//! meta header checked, reads of any range with the chunk CRCs verified from the meta file
//! (Hadoop's BlockReaderLocal). Blocking I/O: call from a blocking thread.

use std::fs::File;
use std::os::unix::fs::FileExt;

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
        })
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
        if self.is_stale() {
            return Err(LocalReadError::Unusable(
                "the DataNode invalidated the replica".into(),
            ));
        }
        let end = off.saturating_add(n).min(self.len);
        if off >= end {
            return Ok(Bytes::new());
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
        if verify {
            sums.clear();
            sums.resize(self.checksum.checksum_len(len), 0);
            let at = META_HEADER_LEN as u64 + (start / bpc) * sum_size as u64;
            self.meta
                .read_exact_at(sums, at)
                .map_err(|e| LocalReadError::Unusable(format!("meta file read failed: {e}")))?;
        }
        // A whole number of chunks per step (bpc is at most a u32).
        let step = (STEP / bpc).max(1) * bpc;
        let mut done = 0usize;
        while done < len {
            let k = (len - done).min(step as usize);
            let at = start + done as u64;
            pread_append(&self.block, data, k, at)
                .map_err(|e| LocalReadError::Unusable(format!("block file read failed: {e}")))?;
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
        let from = (off - start) as usize;
        let to = from + (end - off) as usize;
        Ok(data.split().freeze().slice(from..to))
    }
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

/// Appends `n` bytes of `file` at `off` to `buf`, reading into its spare capacity without
/// zeroing it first (the memory is written over by the read).
fn pread_append(file: &File, buf: &mut BytesMut, n: usize, off: u64) -> std::io::Result<()> {
    buf.reserve(n);
    let want = buf.len() + n;
    while buf.len() < want {
        let left = want - buf.len();
        let at = off + (n - left) as u64;
        let spare = &mut buf.spare_capacity_mut()[..left];
        let k = match rustix::io::pread(file, spare, at) {
            Ok((got, _)) => got.len(),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        };
        if k == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("the file ends at {at}"),
            ));
        }
        // SAFETY: `pread` wrote the first `k` bytes of the spare capacity.
        unsafe { buf.set_len(buf.len() + k) };
    }
    Ok(())
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
