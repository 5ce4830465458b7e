//! Positioned vectored writes (`pwritev`): several buffers written as one run of a file in as
//! few system calls as the kernel allows. Blocking.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// Buffers per call; Linux's `IOV_MAX`.
const MAX_IOVECS: usize = 1024;

/// Writes `bufs` one after another at `offset` of `file`, all of them (a short write goes on
/// from where it stopped; `EINTR` is retried).
pub fn write_all_at(file: &File, bufs: &[&[u8]], mut offset: u64) -> io::Result<()> {
    // The first buffer not fully written, and how much of it was.
    let (mut i, mut done) = (0usize, 0usize);
    while i < bufs.len() {
        if bufs[i].len() == done {
            i += 1;
            done = 0;
            continue;
        }
        let iov: Vec<libc::iovec> = bufs[i..]
            .iter()
            .take(MAX_IOVECS)
            .enumerate()
            .map(|(k, b)| {
                let b = if k == 0 { &b[done..] } else { b };
                libc::iovec {
                    iov_base: b.as_ptr() as *mut libc::c_void,
                    iov_len: b.len(),
                }
            })
            .collect();
        let pos = libc::off_t::try_from(offset)
            .map_err(|_| io::Error::other(format!("offset {offset} too large")))?;
        let count = libc::c_int::try_from(iov.len()).unwrap_or(libc::c_int::MAX);
        // SAFETY: every iovec names the bytes of a live borrowed slice, which the kernel only
        // reads; `file` is open for the whole call.
        let n = unsafe { libc::pwritev(file.as_raw_fd(), iov.as_ptr(), count, pos) };
        let mut n = match usize::try_from(n) {
            Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero)),
            Ok(n) => n,
            Err(_) => {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
        };
        offset += n as u64;
        // Skip what was written.
        while n > 0 {
            let left = bufs[i].len() - done;
            if n < left {
                done += n;
                n = 0;
            } else {
                n -= left;
                i += 1;
                done = 0;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::FileExt;

    use super::*;

    #[test]
    fn buffers_land_in_order_at_the_offset() {
        let f = tempfile::tempfile().unwrap();
        f.write_all_at(b"0123456789", 0).unwrap();
        let bufs: [&[u8]; 4] = [b"ab", b"", b"cde", b"f"];
        write_all_at(&f, &bufs, 3).unwrap();
        let mut got = [0u8; 10];
        f.read_exact_at(&mut got, 0).unwrap();
        assert_eq!(&got, b"012abcdef9");
        // Past the end: the file grows.
        write_all_at(&f, &[b"xy".as_slice(), b"z"], 10).unwrap();
        assert_eq!(f.metadata().unwrap().len(), 13);
    }

    #[test]
    fn more_buffers_than_one_call_takes() {
        let f = tempfile::tempfile().unwrap();
        let data: Vec<u8> = (0..3000u32).map(|i| (i % 251) as u8).collect();
        let bufs: Vec<&[u8]> = data.chunks(1).collect();
        write_all_at(&f, &bufs, 0).unwrap();
        let mut got = vec![0u8; data.len()];
        f.read_exact_at(&mut got, 0).unwrap();
        assert_eq!(got, data);
    }

    #[test]
    fn nothing_to_write() {
        let f = tempfile::tempfile().unwrap();
        write_all_at(&f, &[], 5).unwrap();
        write_all_at(&f, &[b"".as_slice()], 5).unwrap();
        assert_eq!(f.metadata().unwrap().len(), 0);
    }
}
