//! The limit the issue sets short-circuit reads against: a plain read of the very block files
//! the client reads, as the DataNodes passed them over their domain sockets, by as many
//! concurrent readers as the benchmark has files, each on a blocking thread with a 1 MiB buffer
//! and no checks (as `cat` of the block files). The plain pass reads files the benchmark wrote
//! itself, whose page-cache layout differs from replicas written packet by packet (a replica's
//! pages copy out at 9–19 GB/s here, a file written in 1 MiB writes at about 18); this pass
//! reads the same pages the short-circuit reader does.

use std::os::unix::fs::FileExt;
use std::sync::Arc;

use rhdfs_client::FileSystem;

use super::{BUF, DIR};

/// Each benchmark file's block files in block order.
pub(super) type BlockFiles = Arc<Vec<Vec<std::fs::File>>>;

/// Opens the block files of the benchmark's `files` files; `None` when short-circuit reads are
/// off or some block has no local replica.
pub(super) async fn open(fs: &FileSystem, files: usize) -> anyhow::Result<Option<BlockFiles>> {
    let mut all = Vec::with_capacity(files);
    for i in 0..files {
        match fs.local_block_files(&format!("{DIR}/test_io_{i}")).await? {
            Some(f) => all.push(f),
            None => return Ok(None),
        }
    }
    Ok(Some(Arc::new(all)))
}

/// Reads every block file to its end, one reader per benchmark file, all at once; the bytes
/// read.
pub(super) async fn read(files: &BlockFiles) -> anyhow::Result<u64> {
    let mut readers = Vec::new();
    for i in 0..files.len() {
        let files = files.clone();
        readers.push(tokio::task::spawn_blocking(
            move || -> std::io::Result<u64> {
                let mut rb = vec![0u8; BUF];
                let mut n = 0u64;
                for f in files.get(i).into_iter().flatten() {
                    let mut at = 0u64;
                    loop {
                        match f.read_at(&mut rb, at)? {
                            0 => break,
                            k => at += k as u64,
                        }
                    }
                    n += at;
                }
                Ok(n)
            },
        ));
    }
    let mut total = 0;
    for r in readers {
        total += r.await??;
    }
    Ok(total)
}
