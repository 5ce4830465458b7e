//! Blocking writes to a non-blocking socket from a blocking thread: `send` and `sendfile`
//! (Linux) with `poll` for writability, a deadline and a cancel flag. Used by the block sender
//! so block data goes from the page cache to the socket without passing through user space.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Longest single wait in `poll`, so a cancel is noticed.
const POLL_SLICE: Duration = Duration::from_millis(500);

/// A socket written from a blocking thread.
#[derive(Debug)]
pub(crate) struct SockWriter<'a> {
    fd: OwnedFd,
    /// No progress for this long fails the write.
    timeout: Duration,
    cancel: &'a AtomicBool,
}

/// What a sendfile attempt did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Sent {
    All,
    /// The kernel cannot sendfile from this file to this socket; nothing was sent.
    Unsupported,
}

impl<'a> SockWriter<'a> {
    /// `fd` is a duplicate of the connection's socket (still non-blocking, owned here so the
    /// thread never writes to a closed or reused descriptor).
    pub(crate) fn new(fd: OwnedFd, timeout: Duration, cancel: &'a AtomicBool) -> Self {
        SockWriter {
            fd,
            timeout,
            cancel,
        }
    }

    fn wait_writable(&self) -> io::Result<()> {
        let deadline = Instant::now() + self.timeout;
        loop {
            if self.cancel.load(Ordering::Relaxed) {
                return Err(io::Error::new(io::ErrorKind::Interrupted, "read cancelled"));
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("socket not writable for {:?}", self.timeout),
                ));
            }
            let wait = (deadline - now).min(POLL_SLICE);
            let mut pfd = libc::pollfd {
                fd: self.fd.as_raw_fd(),
                events: libc::POLLOUT,
                revents: 0,
            };
            // SAFETY: one valid pollfd, count 1.
            let n = unsafe { libc::poll(&mut pfd, 1, wait.as_millis() as libc::c_int) };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            if n > 0 {
                // POLLERR/POLLHUP too: the next write reports the error.
                return Ok(());
            }
        }
    }

    /// Writes all of `buf`; `more` tells the kernel more data follows at once (MSG_MORE), so
    /// a packet's header and its data leave in the same segments.
    pub(crate) fn send_all(&self, mut buf: &[u8], more: bool) -> io::Result<()> {
        let flags = libc::MSG_NOSIGNAL | if more { libc::MSG_MORE } else { 0 };
        while !buf.is_empty() {
            // SAFETY: buf is a valid readable slice for its length.
            let n =
                unsafe { libc::send(self.fd.as_raw_fd(), buf.as_ptr().cast(), buf.len(), flags) };
            if n < 0 {
                let e = io::Error::last_os_error();
                match e.kind() {
                    io::ErrorKind::WouldBlock => self.wait_writable()?,
                    io::ErrorKind::Interrupted => {}
                    _ => return Err(e),
                }
                continue;
            }
            buf = &buf[n as usize..];
        }
        Ok(())
    }

    /// Sends `count` bytes of `file` from `offset` with sendfile(2).
    pub(crate) fn sendfile_all(&self, file: &File, offset: u64, count: u64) -> io::Result<Sent> {
        let mut off = libc::off_t::try_from(offset)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "offset too large"))?;
        let mut left = count;
        while left > 0 {
            let want = usize::try_from(left).unwrap_or(usize::MAX).min(1 << 30);
            // SAFETY: both descriptors are open for the call; `off` is a valid off_t.
            let n =
                unsafe { libc::sendfile(self.fd.as_raw_fd(), file.as_raw_fd(), &mut off, want) };
            if n < 0 {
                let e = io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EAGAIN) => self.wait_writable()?,
                    Some(libc::EINTR) => {}
                    Some(libc::EINVAL | libc::ENOSYS | libc::EOPNOTSUPP) if left == count => {
                        return Ok(Sent::Unsupported);
                    }
                    _ => return Err(e),
                }
                continue;
            }
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("block file ended at {off}, {left} bytes short"),
                ));
            }
            left -= n as u64;
        }
        Ok(Sent::All)
    }
}
