//! Reading one replica: data plus the CRC of each chunk (from the meta file of a finalized
//! replica, computed from the data of one still being written). Blocking I/O.

use std::fs::File;
use std::os::unix::fs::FileExt;

use crate::checksum::ChecksumSpec;
use crate::dataset::Dataset;
use crate::error::StorageError;
use crate::meta;
use crate::replica::{ReplicaInfo, ReplicaState};

/// A replica opened for reading, with the length visible when it was opened.
#[derive(Debug)]
pub struct ReplicaReader {
    info: ReplicaInfo,
    block: File,
    meta: File,
}

impl ReplicaReader {
    /// Opens replica `id`; fails if it is missing or older than `min_gs`.
    pub fn open(ds: &Dataset, bpid: &str, id: u64, min_gs: u64) -> Result<Self, StorageError> {
        // A replica may be finalized (its files renamed) between the lookup and the open: retry.
        let mut last_err = None;
        for _ in 0..3 {
            let info = ds.get(bpid, id).ok_or(StorageError::ReplicaNotFound(id))?;
            if info.gs < min_gs {
                return Err(StorageError::BadReplicaState {
                    id,
                    msg: format!(
                        "replica generation stamp {} is older than the requested {min_gs}",
                        info.gs
                    ),
                });
            }
            if info.state == ReplicaState::Temporary {
                return Err(StorageError::BadReplicaState {
                    id,
                    msg: "a temporary replica cannot be read".into(),
                });
            }
            let opened = ds.volume_io_fault(info.volume).and_then(|()| {
                ds.metadata_op(info.volume, || {
                    let b = File::open(ds.block_path(bpid, &info))?;
                    Ok((b, File::open(ds.meta_path(bpid, &info))?))
                })
            });
            match opened {
                Ok((block, meta)) => return Ok(ReplicaReader { info, block, meta }),
                Err(e) => last_err = Some(e),
            }
        }
        let err = last_err
            .map(StorageError::Io)
            .unwrap_or(StorageError::ReplicaNotFound(id));
        if let (StorageError::Io(e), Some(info)) = (&err, ds.get(bpid, id)) {
            if e.kind() == std::io::ErrorKind::NotFound {
                // The map holds a replica the disk lost: drop it and tell the NameNode.
                ds.recheck_unreadable(bpid, &info);
            }
            ds.suspect_volume(info.volume);
        }
        Err(err)
    }

    pub fn info(&self) -> &ReplicaInfo {
        &self.info
    }

    /// Visible length at open.
    pub fn len(&self) -> u64 {
        self.info.num_bytes
    }

    pub fn is_empty(&self) -> bool {
        self.info.num_bytes == 0
    }

    pub fn checksum(&self) -> ChecksumSpec {
        self.info.checksum
    }

    /// The open block and meta files (handed to a short-circuit reader).
    pub fn into_files(self) -> (File, File) {
        (self.block, self.meta)
    }

    /// The open block file (for sendfile).
    pub fn block_file(&self) -> &File {
        &self.block
    }

    /// Whether the stored CRCs of every chunk up to [`ReplicaReader::len`] can be trusted
    /// (a finalized replica); otherwise they are computed from the data.
    pub fn sums_on_disk(&self) -> bool {
        self.info.state == ReplicaState::Finalized
    }

    /// Reads the stored CRCs of the chunks covering `[start, end)` (start chunk-aligned) into
    /// `out`, which must be exactly their size. Only for a finalized replica.
    pub fn read_stored_sums(&self, start: u64, out: &mut [u8]) -> Result<(), StorageError> {
        let spec = self.info.checksum;
        self.meta
            .read_exact_at(out, meta::crc_offset(&spec, start / spec.bpc()))?;
        Ok(())
    }

    /// Data in `[start, end)` (start chunk-aligned, end ≤ len) and its chunk CRCs, big-endian.
    pub fn read(&self, start: u64, end: u64) -> Result<(Vec<u8>, Vec<u8>), StorageError> {
        let end = end.min(self.len());
        if start >= end {
            return Ok((Vec::new(), Vec::new()));
        }
        let mut data = vec![0u8; (end - start) as usize];
        self.block.read_exact_at(&mut data, start)?;
        let spec = self.info.checksum;
        if spec.kind.size() == 0 {
            return Ok((data, Vec::new()));
        }
        let bpc = spec.bpc();
        let first = start / bpc;
        let finalized = self.info.state == ReplicaState::Finalized;
        let sums = if finalized && start.is_multiple_of(bpc) {
            let mut sums = vec![0u8; (spec.chunks(end - start) * 4) as usize];
            self.meta
                .read_exact_at(&mut sums, meta::crc_offset(&spec, first))?;
            sums
        } else {
            spec.compute(&data)
        };
        Ok((data, sums))
    }

    /// CRCs of the chunks covering `[0, len)` as stored; the last partial chunk is recomputed
    /// when `len` cuts a chunk of the replica (BLOCK_CHECKSUM).
    pub fn block_crcs(&self, len: u64) -> Result<Vec<u8>, StorageError> {
        let spec = self.info.checksum;
        let len = len.min(self.len());
        if spec.kind.size() == 0 || len == 0 {
            return Ok(Vec::new());
        }
        let bpc = spec.bpc();
        if self.info.state != ReplicaState::Finalized {
            let (_, sums) = self.read(0, len)?;
            return Ok(sums);
        }
        let chunks = spec.chunks(len);
        let mut sums = vec![0u8; (chunks * 4) as usize];
        self.meta
            .read_exact_at(&mut sums, meta::crc_offset(&spec, 0))?;
        if !len.is_multiple_of(bpc) && len < self.len() {
            let start = (len / bpc) * bpc;
            let mut buf = vec![0u8; (len - start) as usize];
            self.block.read_exact_at(&mut buf, start)?;
            let at = ((chunks - 1) * 4) as usize;
            sums[at..at + 4].copy_from_slice(&spec.crc(&buf).to_be_bytes());
        }
        Ok(sums)
    }
}
