//! The same-run limit of `dfsio`: the benchmark's bytes written and read with plain file I/O
//! on the disk that holds the DataNodes' volumes, with as many concurrent writers or readers
//! as the benchmark has files, each on a blocking thread with a 1 MiB buffer (as `cat`).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::BUF;

/// The plain file `i` of the limit's files under `dir`.
pub(super) fn file(dir: &Path, i: u64) -> PathBuf {
    dir.join(format!("f{i}"))
}

/// Writes `files × copies` new files of `size` bytes, `copies` by each of `files` writers at
/// once, each file's data written to the disk (`fdatasync`) before its writer goes on: the
/// disk's limit, which the rhdfs pass is measured to as well (`sync` after its files close).
/// Files left by a previous pass must be gone first ([`remove`]): rewriting a file in place
/// first frees its old pages and blocks, which took longer than writing it anew here.
pub(super) async fn write(dir: &Path, files: u64, copies: u64, size: u64) -> anyhow::Result<()> {
    let mut writers = Vec::new();
    for w in 0..files {
        let paths: Vec<PathBuf> = (0..copies).map(|c| file(dir, c * files + w)).collect();
        writers.push(tokio::task::spawn_blocking(
            move || -> std::io::Result<()> {
                let buf = vec![0x5au8; BUF];
                for p in paths {
                    let mut f = std::fs::File::create(p)?;
                    let mut left = size;
                    while left > 0 {
                        let k = left.min(BUF as u64) as usize;
                        f.write_all(&buf[..k])?;
                        left -= k as u64;
                    }
                    f.sync_data()?;
                }
                Ok(())
            },
        ));
    }
    for w in writers {
        w.await??;
    }
    Ok(())
}

/// Removes the files a [`write`] of `files × copies` made, if they are there.
pub(super) async fn remove(dir: &Path, files: u64, copies: u64) -> anyhow::Result<()> {
    for i in 0..files * copies {
        match tokio::fs::remove_file(file(dir, i)).await {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
            _ => {}
        }
    }
    Ok(())
}

/// Reads files `0..files` to their ends, one reader each, all at once; the bytes read.
pub(super) async fn read(dir: &Path, files: u64) -> anyhow::Result<u64> {
    let mut readers = Vec::new();
    for i in 0..files {
        let p = file(dir, i);
        readers.push(tokio::task::spawn_blocking(
            move || -> std::io::Result<u64> {
                let mut f = std::fs::File::open(p)?;
                let mut rb = vec![0u8; BUF];
                let mut n = 0u64;
                loop {
                    match f.read(&mut rb)? {
                        0 => return Ok(n),
                        k => n += k as u64,
                    }
                }
            },
        ));
    }
    let mut total = 0;
    for r in readers {
        total += r.await??;
    }
    Ok(total)
}
