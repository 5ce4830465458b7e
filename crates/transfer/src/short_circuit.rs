//! Short-circuit local reads over a UNIX domain socket: the DataNode's `dfs.domain.socket.path`
//! (with `_PORT` replaced by its transfer port), REQUEST_SHORT_CIRCUIT_FDS (op 87,
//! `OpRequestShortCircuitAccessProto` → `BlockOpResponseProto`), and the block and meta file
//! descriptors that follow a SUCCESS as SCM_RIGHTS on a one-byte message (the byte is
//! `ShortCircuitFdResponse`: whether the client must send a receipt byte back).
//!
//! Both sides use this module: the DataNode sends with [`send_fds`], the client asks with
//! [`request_fds`] (with a shared-memory slot when the client has one, `crate::shm`), asks for a
//! segment with [`request_shm`] and gives a slot back with [`release_slot`]. Receipt
//! verification is not requested.

use std::fs::File;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{BorrowedFd, OwnedFd};

use rhdfs_proto::common::TokenProto;
use rhdfs_proto::hdfs::{
    BlockOpResponseProto, ExtendedBlockProto, OpRequestShortCircuitAccessProto,
    ReleaseShortCircuitAccessRequestProto, ReleaseShortCircuitAccessResponseProto,
    ShortCircuitShmRequestProto, ShortCircuitShmResponseProto, ShortCircuitShmSlotProto, Status,
};
use rustix::net::{
    RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags,
};
use tokio::io::Interest;
use tokio::net::UnixStream;

use crate::error::{Result, TransferError};
use crate::headers::base_header;
use crate::op::{DEFAULT_MAX_MESSAGE_LEN, Op, read_delimited, write_op};

/// `DataNode.CURRENT_BLOCK_FORMAT_VERSION`: the block format a short-circuit reader must
/// understand (sent as `maxVersion` and answered as `shortCircuitAccessVersion`).
pub const CURRENT_BLOCK_FORMAT_VERSION: u32 = 1;

/// `DomainSocket.getEffectivePath`: `_PORT` in the configured path becomes the port.
pub fn effective_path(template: &str, port: u16) -> String {
    template.replace("_PORT", &port.to_string())
}

/// Sends `fds` as SCM_RIGHTS on a one-byte message carrying `byte`.
pub async fn send_fds(sock: &UnixStream, fds: &[BorrowedFd<'_>], byte: u8) -> io::Result<()> {
    let data = [byte];
    let sent = sock
        .async_io(Interest::WRITABLE, || {
            let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(2))];
            let mut control = SendAncillaryBuffer::new(&mut space);
            if !control.push(SendAncillaryMessage::ScmRights(fds)) {
                return Err(io::Error::other("too many descriptors for one message"));
            }
            let iov = [io::IoSlice::new(&data)];
            rustix::net::sendmsg(sock, &iov, &mut control, SendFlags::NOSIGNAL)
                .map_err(io::Error::from)
        })
        .await?;
    if sent == 1 {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::WriteZero,
            "the descriptors' message was not sent",
        ))
    }
}

/// Receives the one-byte message carrying descriptors; at most `max` are kept (more are
/// closed). EOF before the byte is an error.
pub async fn recv_fds(sock: &UnixStream, max: usize) -> io::Result<(u8, Vec<OwnedFd>)> {
    let mut byte = [0u8; 1];
    let mut fds = Vec::new();
    let n = sock
        .async_io(Interest::READABLE, || {
            let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(4))];
            let mut control = RecvAncillaryBuffer::new(&mut space);
            let mut iov = [io::IoSliceMut::new(&mut byte)];
            let msg = rustix::net::recvmsg(sock, &mut iov, &mut control, RecvFlags::CMSG_CLOEXEC)
                .map_err(io::Error::from)?;
            for m in control.drain() {
                if let RecvAncillaryMessage::ScmRights(got) = m {
                    fds.extend(got);
                }
            }
            Ok(msg.bytes)
        })
        .await?;
    if n == 0 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the DataNode closed the domain socket before passing descriptors",
        ));
    }
    fds.truncate(max);
    Ok((byte[0], fds))
}

/// What a DataNode answered to REQUEST_SHORT_CIRCUIT_FDS.
#[derive(Debug)]
pub enum FdsAnswer {
    /// SUCCESS: the block file and the meta file, opened by the DataNode.
    Granted { block: File, meta: File },
    /// Any other status, with the DataNode's message. `has_version`: the answer carried
    /// `shortCircuitAccessVersion` (Hadoop's client then disables short-circuit for this
    /// file only, otherwise for the whole DataNode).
    Refused {
        status: i32,
        message: String,
        has_version: bool,
    },
}

/// REQUEST_SHORT_CIRCUIT_FDS on a connected domain socket, with the client's shared-memory
/// slot for the replica if it has one; no receipt verification.
pub async fn request_fds(
    sock: &mut UnixStream,
    block: &ExtendedBlockProto,
    token: Option<&TokenProto>,
    slot: Option<ShortCircuitShmSlotProto>,
) -> Result<FdsAnswer> {
    let req = OpRequestShortCircuitAccessProto {
        header: base_header(block, token),
        max_version: CURRENT_BLOCK_FORMAT_VERSION,
        slot_id: slot,
        supports_receipt_verification: Some(false),
    };
    write_op(sock, Op::RequestShortCircuitFds, &req).await?;
    // Unbuffered: the descriptors ride on the byte right after this message.
    let resp: BlockOpResponseProto = read_delimited(sock, DEFAULT_MAX_MESSAGE_LEN).await?;
    if resp.status != Status::Success as i32 {
        return Ok(FdsAnswer::Refused {
            status: resp.status,
            message: resp.message.unwrap_or_default(),
            has_version: resp.short_circuit_access_version.is_some(),
        });
    }
    let (_receipt, fds) = recv_fds(sock, 2).await?;
    let mut it = fds.into_iter();
    match (it.next(), it.next()) {
        (Some(b), Some(m)) => Ok(FdsAnswer::Granted {
            block: File::from(b),
            meta: File::from(m),
        }),
        _ => Err(TransferError::protocol(
            "REQUEST_SHORT_CIRCUIT_FDS succeeded without two file descriptors",
        )),
    }
}

/// What a DataNode answered to REQUEST_SHORT_CIRCUIT_SHM.
#[derive(Debug)]
pub enum ShmAnswer {
    /// SUCCESS: the segment's id and its descriptor (to be mapped with `shm::Segment::map`).
    Granted { id: crate::shm::ShmId, fd: OwnedFd },
    /// Any other status (ERROR_UNSUPPORTED: the DataNode has no shared memory; read without
    /// slots), with the DataNode's message.
    Refused { status: i32, message: String },
}

/// REQUEST_SHORT_CIRCUIT_SHM on a connected domain socket. After a grant the connection belongs
/// to the segment: the DataNode frees the segment's slots when it closes, so the caller keeps
/// it open (and sends nothing more on it) for as long as it uses the segment.
pub async fn request_shm(sock: &mut UnixStream, client_name: &str) -> Result<ShmAnswer> {
    let req = ShortCircuitShmRequestProto {
        client_name: client_name.to_string(),
        trace_info: None,
    };
    write_op(sock, Op::RequestShortCircuitShm, &req).await?;
    let resp: ShortCircuitShmResponseProto = read_delimited(sock, DEFAULT_MAX_MESSAGE_LEN).await?;
    if resp.status != Status::Success as i32 {
        return Ok(ShmAnswer::Refused {
            status: resp.status,
            message: resp.error.unwrap_or_default(),
        });
    }
    let id = resp.id.ok_or_else(|| {
        TransferError::protocol("REQUEST_SHORT_CIRCUIT_SHM succeeded without a segment id")
    })?;
    let (_, fds) = recv_fds(sock, 1).await?;
    let fd = fds.into_iter().next().ok_or_else(|| {
        TransferError::protocol("REQUEST_SHORT_CIRCUIT_SHM succeeded without a file descriptor")
    })?;
    Ok(ShmAnswer::Granted {
        id: crate::shm::ShmId {
            hi: id.hi,
            lo: id.lo,
        },
        fd,
    })
}

/// The wire form of slot `idx` of segment `id`.
pub fn slot_proto(id: crate::shm::ShmId, idx: usize) -> ShortCircuitShmSlotProto {
    ShortCircuitShmSlotProto {
        shm_id: rhdfs_proto::hdfs::ShortCircuitShmIdProto {
            hi: id.hi,
            lo: id.lo,
        },
        slot_idx: i32::try_from(idx).unwrap_or(i32::MAX),
    }
}

/// RELEASE_SHORT_CIRCUIT_FDS: gives `slot` back to the DataNode. Ok(Err(message)) when the
/// DataNode refused.
pub async fn release_slot(
    sock: &mut UnixStream,
    slot: ShortCircuitShmSlotProto,
) -> Result<std::result::Result<(), String>> {
    let req = ReleaseShortCircuitAccessRequestProto {
        slot_id: slot,
        trace_info: None,
    };
    write_op(sock, Op::ReleaseShortCircuitFds, &req).await?;
    let resp: ReleaseShortCircuitAccessResponseProto =
        read_delimited(sock, DEFAULT_MAX_MESSAGE_LEN).await?;
    if resp.status == Status::Success as i32 {
        Ok(Ok(()))
    } else {
        Ok(Err(format!(
            "status {}: {}",
            resp.status,
            resp.error.unwrap_or_default()
        )))
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Seek, Write};
    use std::os::fd::AsFd;

    use super::*;

    #[test]
    fn port_in_path() {
        assert_eq!(
            effective_path("/var/run/dn._PORT.sock", 9866),
            "/var/run/dn.9866.sock"
        );
        assert_eq!(effective_path("/s", 1), "/s");
    }

    #[tokio::test]
    async fn descriptors_cross_a_socket_pair() -> std::io::Result<()> {
        let (a, b) = UnixStream::pair()?;
        let mut f = tempfile_in_tmp()?;
        f.write_all(b"block bytes")?;
        f.rewind()?;
        send_fds(&a, &[f.as_fd(), f.as_fd()], 0).await?;
        let (byte, fds) = recv_fds(&b, 2).await?;
        assert_eq!((byte, fds.len()), (0, 2));
        let mut got = String::new();
        File::from(fds.into_iter().next().expect("fd")).read_to_string(&mut got)?;
        assert_eq!(got, "block bytes");
        drop(a);
        assert!(recv_fds(&b, 2).await.is_err());
        Ok(())
    }

    fn tempfile_in_tmp() -> std::io::Result<File> {
        let p = std::env::temp_dir().join(format!("rhdfs-sc-{}", std::process::id()));
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(&p)?;
        std::fs::remove_file(&p)?;
        Ok(f)
    }
}
