//! The packets of a READ_BLOCK, sent on a blocking thread as Hadoop's BlockSender does: for each
//! packet the frame head (PLEN, HLEN, header) and the chunk CRCs (read from the meta file) are
//! written from one reused buffer, then the data goes from the block file to the socket with
//! sendfile (`dfs.datanode.transferTo.allowed`). When the replica's CRCs must be computed (a
//! replica still being written) or sendfile is unavailable, the data is read into a buffer
//! allocated once per read. The bytes on the wire are the same either way.

use std::os::unix::fs::FileExt;
use std::sync::Arc;

use rhdfs_transfer::PacketHeader;
use rhdfs_transfer::packet::{PKT_LENGTHS_LEN, PKT_MAX_HEADER_LEN};

use super::XceiverError;
use super::sock_io::{Sent, SockWriter};
use crate::checksum::ChecksumSpec;
use crate::dataset::Dataset;
use crate::metrics::{DataNodeMetrics, IoKind, IoSample};
use crate::reader::ReplicaReader;

/// Data bytes per read packet are the most whole chunks fitting in this (with their CRCs).
pub(crate) const READ_PACKET_SIZE: u64 = 64 * 1024;

/// The READ_BLOCK packet size for `io_buffer` = max(`io.file.buffer.size`,
/// `rhdfs.datanode.read.packet.size`): as Hadoop's BlockSender (TRANSFERTO_BUFFER_SIZE), never
/// below [`READ_PACKET_SIZE`]; never above what a reader accepts (a packet of at most 16 MiB
/// with its header).
pub(crate) fn read_packet_size(io_buffer: u64) -> u64 {
    let most = (rhdfs_transfer::packet::MAX_PACKET_SIZE - PKT_MAX_HEADER_LEN) as u64;
    io_buffer.clamp(READ_PACKET_SIZE, most)
}

/// One READ_BLOCK's packets: `[start, end)` with `start` chunk-aligned.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SendPlan {
    pub start: u64,
    pub end: u64,
    /// Send the chunk CRCs (sendChecksums); otherwise packets carry none.
    pub send_sums: bool,
    /// Use sendfile for the data when possible.
    pub transfer_to: bool,
    /// Data and checksum bytes per packet ([`read_packet_size`]).
    pub packet_size: u64,
}

/// Counters of one send, for logs and tests.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SendStats {
    pub packets: u64,
    pub zero_copy_bytes: u64,
    pub copied_bytes: u64,
}

/// Sends every packet of `plan`, then the empty last packet.
pub(crate) fn send_block(
    reader: &ReplicaReader,
    out: &SockWriter<'_>,
    plan: SendPlan,
    metrics: (&Option<Arc<DataNodeMetrics>>, &Dataset),
) -> Result<SendStats, XceiverError> {
    let spec: ChecksumSpec = reader.checksum();
    let bpc = spec.bpc();
    let csize = if plan.send_sums {
        spec.kind.size() as u64
    } else {
        0
    };
    let chunks_per_packet = (plan.packet_size / (bpc + csize)).max(1);
    let step = chunks_per_packet * bpc;
    // Computed CRCs need the data in memory; so does a kernel without sendfile.
    let mut zero_copy = plan.transfer_to && (csize == 0 || reader.sums_on_disk());
    let mut head = Vec::with_capacity(PKT_MAX_HEADER_LEN + (chunks_per_packet * csize) as usize);
    let mut data: Vec<u8> = Vec::new();
    let mut stats = SendStats::default();
    let mut pos = plan.start;
    let mut seqno = 0i64;
    while pos < plan.end {
        let upto = (pos + step).min(plan.end);
        let n = (upto - pos) as usize;
        let io = IoSample::start(metrics.0, metrics.1, reader.info().volume);
        if !zero_copy {
            data.resize(n, 0);
            reader.block_file().read_exact_at(&mut data[..n], pos)?;
        }
        let sums_len = (spec.chunks(upto - pos) * csize) as usize;
        frame_head(&mut head, pos, seqno, n, sums_len);
        let at = head.len();
        head.resize(at + sums_len, 0);
        if sums_len > 0 {
            if reader.sums_on_disk() {
                reader.read_stored_sums(pos, &mut head[at..])?;
            } else {
                for (i, chunk) in data[..n].chunks(bpc as usize).enumerate() {
                    head[at + i * 4..at + i * 4 + 4]
                        .copy_from_slice(&spec.crc(chunk).to_be_bytes());
                }
            }
        }
        out.send_all(&head, true)?;
        if zero_copy {
            match out.sendfile_all(reader.block_file(), pos, n as u64)? {
                Sent::All => stats.zero_copy_bytes += n as u64,
                Sent::Unsupported => {
                    tracing::info!("sendfile unavailable for block reads; copying instead");
                    zero_copy = false;
                    data.resize(n, 0);
                    reader.block_file().read_exact_at(&mut data[..n], pos)?;
                }
            }
        }
        if !zero_copy {
            out.send_all(&data[..n], false)?;
            stats.copied_bytes += n as u64;
        }
        io.finish(IoKind::Read);
        stats.packets += 1;
        seqno += 1;
        pos = upto;
    }
    // The last packet: no MSG_MORE, so everything is pushed out.
    let last = PacketHeader {
        offset_in_block: plan.end as i64,
        seqno,
        last_packet_in_block: true,
        data_len: 0,
        sync_block: false,
    };
    head.clear();
    put_head(&mut head, &last, 0);
    out.send_all(&head, false)?;
    Ok(stats)
}

/// `head` = PLEN | HLEN | header of a data packet at `pos`.
fn frame_head(head: &mut Vec<u8>, pos: u64, seqno: i64, data_len: usize, sums_len: usize) {
    head.clear();
    let h = PacketHeader {
        offset_in_block: pos as i64,
        seqno,
        last_packet_in_block: false,
        data_len: data_len as i32,
        sync_block: false,
    };
    put_head(head, &h, sums_len + data_len);
}

fn put_head(head: &mut Vec<u8>, h: &PacketHeader, body: usize) {
    head.extend_from_slice(&((4 + body) as u32).to_be_bytes());
    head.extend_from_slice(&(h.encoded_len() as u16).to_be_bytes());
    h.encode(head);
    debug_assert!(head.len() <= PKT_LENGTHS_LEN + PKT_MAX_HEADER_LEN);
}

#[cfg(test)]
mod tests {
    use std::io::Read;
    use std::os::fd::AsFd;
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;

    use super::*;
    use crate::checksum::ChecksumType;

    #[test]
    fn finalized_replica_data_goes_through_sendfile() {
        let dir = tempfile::tempdir().unwrap();
        let ds = Dataset::open(&[dir.path().to_path_buf()], 0).unwrap();
        let bp = "BP-1-127.0.0.1-1";
        let spec = ChecksumSpec::new(ChecksumType::Crc32c, 512);
        let data: Vec<u8> = (0..150_000u32).map(|i| (i % 251) as u8).collect();
        let mut w = ds.create_rbw(bp, 5, 1001, spec, 0).unwrap();
        w.write_at(0, &data).unwrap();
        w.finalize().unwrap();
        let reader = ReplicaReader::open(&ds, bp, 5, 1001).unwrap();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let tx = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        tx.set_nonblocking(true).unwrap();
        let (mut rx, _) = listener.accept().unwrap();
        let drain = std::thread::spawn(move || {
            let mut v = Vec::new();
            rx.read_to_end(&mut v).unwrap();
            v.len()
        });
        let cancel = AtomicBool::new(false);
        let fd = tx.as_fd().try_clone_to_owned().unwrap();
        let out = SockWriter::new(fd, Duration::from_secs(60), &cancel);
        let plan = SendPlan {
            start: 0,
            end: 150_000,
            send_sums: true,
            transfer_to: true,
            packet_size: READ_PACKET_SIZE,
        };
        let stats = send_block(&reader, &out, plan, (&None, &ds)).unwrap();
        drop(out);
        drop(tx);
        assert_eq!(stats.zero_copy_bytes, 150_000);
        assert_eq!(stats.copied_bytes, 0);
        let chunks = 150_000usize.div_ceil(512);
        // Every packet's head is 31 bytes; data and 4-byte CRCs; and the empty last packet.
        let want = stats.packets as usize * 31 + 150_000 + chunks * 4 + 31;
        assert_eq!(drain.join().unwrap(), want);
    }

    #[test]
    fn packet_size_follows_io_file_buffer_size() {
        assert_eq!(read_packet_size(4096), READ_PACKET_SIZE, "Hadoop's default");
        assert_eq!(read_packet_size(1 << 20), 1 << 20);
        assert!(read_packet_size(u64::MAX) as usize + PKT_MAX_HEADER_LEN <= 16 << 20);
    }
}
