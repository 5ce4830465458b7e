//! A replica opened for a short-circuit read: the block and meta files a DataNode passed, the
//! meta header checked, reads of any range with the chunk CRCs verified from the meta file
//! (Hadoop's BlockReaderLocal). Blocking I/O: call from a blocking thread.

use std::fs::File;
use std::os::unix::fs::FileExt;

use bytes::Bytes;
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
}

impl LocalReplica {
    /// Checks the meta header and that both files hold `len` bytes of block data.
    pub(crate) fn open(block: File, meta: File, len: u64) -> Result<Self, LocalReadError> {
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
        })
    }

    /// `[off, off + n)` of the block (clipped to its length), its chunks verified unless
    /// `skip_checksum`.
    pub(crate) fn read(
        &self,
        off: u64,
        n: u64,
        skip_checksum: bool,
    ) -> Result<Bytes, LocalReadError> {
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
        let mut data = vec![0u8; (stop - start) as usize];
        self.block
            .read_exact_at(&mut data, start)
            .map_err(|e| LocalReadError::Unusable(format!("block file read failed: {e}")))?;
        if verify {
            let mut sums = vec![0u8; self.checksum.checksum_len(data.len())];
            let at = META_HEADER_LEN as u64 + (start / bpc) * self.checksum.checksum_size() as u64;
            self.meta
                .read_exact_at(&mut sums, at)
                .map_err(|e| LocalReadError::Unusable(format!("meta file read failed: {e}")))?;
            self.checksum
                .verify(&data, &sums, start)
                .map_err(|e| match e {
                    TransferError::Checksum { .. } => LocalReadError::Corrupt(e),
                    other => LocalReadError::Unusable(other.to_string()),
                })?;
        }
        let from = (off - start) as usize;
        let to = from + (end - off) as usize;
        Ok(Bytes::from(data).slice(from..to))
    }
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
        LocalReplica::open(b.reopen().expect("b"), m.reopen().expect("m"), len)
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
            let got = r.read(off, n, false).expect("read");
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
        assert!(r.read(0, 100, false).is_ok());
        match r.read(120, 10, false) {
            Err(LocalReadError::Corrupt(TransferError::Checksum { offset, .. })) => {
                assert_eq!(offset, 100)
            }
            other => panic!("expected a checksum error, got {other:?}"),
        }
        assert!(r.read(120, 10, true).is_ok(), "skip.checksum reads it");
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
}
