//! READ_BLOCK packets parsed out of large socket reads. A reader taking one frame at a time
//! (lengths, then the rest) makes two or more `recv` calls per 64 KiB packet and is woken for
//! every segment the DataNode sends; here each read takes whatever the socket holds, up to
//! [`READ_SIZE`], and whole frames are split off the buffer without copying. On a TCP socket
//! the receive low-water mark (`SO_RCVLOWAT`) is raised to the bytes certain to come (the rest
//! of the frame being read, or the requested range's data not yet received), up to
//! [`LOW_WATER_CAP`], so the reader is woken once per that many bytes, not per segment; it is
//! set back to 1 before the connection carries another op.
//!
//! The DataNode's WRITE_BLOCK receiver uses it too ([`PacketRx::for_pipeline`]): no
//! low-water mark (a writer's next packet may be long in coming), each read taking up to
//! [`PIPELINE_READ_SIZE`], and [`PacketRx::next_frames`] giving every whole packet one read
//! brought as one run of frames to forward in one write.

use std::os::fd::RawFd;

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::error::{Result, TransferError};
use crate::packet::{PKT_LENGTHS_LEN, Packet, frame_header, frame_lens, packet_of_frame};
use crate::slabs::Slabs;

/// Bytes one read may take.
pub(crate) const READ_SIZE: usize = 1 << 20;
/// Highest receive low-water mark set.
pub(crate) const LOW_WATER_CAP: usize = 256 << 10;
/// Room a write pipeline's receiver leaves for each read: above a `BufReader`'s usual
/// capacity, so a read of an emptied `BufReader` goes straight to the socket (no copy
/// through its buffer), and several 64 KiB packets come in one `recv`.
pub const PIPELINE_READ_SIZE: usize = 256 << 10;
/// A pipeline receiver's buffers: this size, at most [`SPARE_BUFFERS`] of them kept for reuse.
const PIPELINE_BUFFER: usize = 2 * PIPELINE_READ_SIZE;
const SPARE_BUFFERS: usize = 8;

/// The receive buffer of one connection's READ_BLOCK, or of a WRITE_BLOCK's packets.
#[derive(Debug, Default)]
pub struct PacketRx {
    /// Bytes received; a pipeline receiver's frames keep their slab until dropped.
    buf: Slabs,
    /// The socket whose low-water mark is raised (a TCP stream this reader owns).
    fd: Option<RawFd>,
    /// The low-water mark last set.
    low_water: usize,
    /// Least room left for each read.
    min_read: usize,
}

impl PacketRx {
    /// `fd`: the TCP socket read from, when there is one (others are read without a
    /// low-water mark).
    pub(crate) fn new(fd: Option<RawFd>) -> Self {
        PacketRx {
            buf: Slabs::default(),
            fd,
            low_water: 1,
            min_read: 0,
        }
    }

    /// The receiver of a WRITE_BLOCK's packets: no low-water mark, reads of up to
    /// [`PIPELINE_READ_SIZE`]. Frames handed out keep their memory until dropped; the buffer
    /// is reused once every frame of it was.
    pub fn for_pipeline() -> Self {
        let mut buf = Slabs::new(PIPELINE_BUFFER, SPARE_BUFFERS);
        buf.room(PIPELINE_BUFFER);
        PacketRx {
            buf,
            min_read: PIPELINE_READ_SIZE,
            ..PacketRx::new(None)
        }
    }

    /// Bytes received and not yet returned as a packet.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// The next packets: every whole frame already buffered — or, when none is, those the
    /// reads bringing the next one brought along —, up to and including a last packet of a
    /// block (bytes after it are left buffered), as one run of contiguous frames (forwarded
    /// downstream unchanged in one write) and the packets parsed out of it, in order, sharing
    /// its memory. A frame whose lengths are bad ends the run before it; the next call
    /// returns its error.
    pub async fn next_frames<R: AsyncRead + Unpin>(
        &mut self,
        r: &mut R,
        max_packet_size: usize,
    ) -> Result<(Bytes, Vec<Packet>)> {
        // No data promised beyond the frame: reads as large as the pipeline receiver's.
        self.fill_frame(r, max_packet_size, 0).await?;
        // (start, frame length, HLEN, header, end of checksums) of each whole frame of the run.
        let mut frames = Vec::new();
        let mut end = 0;
        while let Some(lens) = self.buf[end..].first_chunk::<PKT_LENGTHS_LEN>() {
            let parsed = frame_lens(lens, max_packet_size).and_then(|(hlen, plen, total)| {
                if self.buf.len() - end < total {
                    return Ok(None);
                }
                let frame = &self.buf[end..end + total];
                Ok(Some((total, hlen, frame_header(frame, hlen, plen)?)))
            });
            let (total, hlen, (header, sums_end)) = match parsed {
                Ok(Some(f)) => f,
                Ok(None) => break,
                // The first frame's error is this call's; a later one's the next call's.
                Err(e) if frames.is_empty() => return Err(e),
                Err(_) => break,
            };
            let last = header.last_packet_in_block;
            frames.push((end, total, hlen, header, sums_end));
            end += total;
            if last {
                break;
            }
        }
        let run = self.buf.split_to(end).freeze();
        let packets = frames
            .into_iter()
            .map(|(start, total, hlen, header, sums_end)| Packet {
                header,
                checksums: run.slice(start + PKT_LENGTHS_LEN + hlen..start + sums_end),
                data: run.slice(start + sums_end..start + total),
            })
            .collect();
        Ok((run, packets))
    }

    /// The next packet and its frame's length; `data_left` is a lower bound on the data bytes
    /// the sender has still to send from the start of this packet (the requested range's rest).
    pub(crate) async fn next<R: AsyncRead + Unpin>(
        &mut self,
        r: &mut R,
        max_packet_size: usize,
        data_left: u64,
    ) -> Result<Packet> {
        let frame = self.frame(r, max_packet_size, data_left).await?;
        self.packet(&frame, max_packet_size)
    }

    /// The next whole frame (see [`PacketRx::next`]).
    async fn frame<R: AsyncRead + Unpin>(
        &mut self,
        r: &mut R,
        max_packet_size: usize,
        data_left: u64,
    ) -> Result<Bytes> {
        let total = self.fill_frame(r, max_packet_size, data_left).await?;
        Ok(self.buf.split_to(total).freeze())
    }

    /// Reads until the next whole frame is buffered; its length. `data_left` as for
    /// [`PacketRx::next`] (0: nothing known beyond this frame).
    async fn fill_frame<R: AsyncRead + Unpin>(
        &mut self,
        r: &mut R,
        max_packet_size: usize,
        data_left: u64,
    ) -> Result<usize> {
        loop {
            let missing = match self.frame_len(max_packet_size)? {
                Some(total) if self.buf.len() >= total => return Ok(total),
                Some(total) => total - self.buf.len(),
                None => PKT_LENGTHS_LEN - self.buf.len(),
            };
            // Certain to come: the rest of this frame, and the range's data not yet here.
            let left = usize::try_from(data_left).unwrap_or(usize::MAX);
            let coming = missing.max(left.saturating_sub(self.buf.len()));
            self.set_low_water(coming.clamp(1, LOW_WATER_CAP));
            self.make_room(missing.max(READ_SIZE.min(coming)).max(self.min_read));
            if r.read_buf(&mut *self.buf).await? == 0 {
                return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into());
            }
        }
    }

    /// Room for `want` more bytes. A pipeline receiver, whose frames are held elsewhere for
    /// a while (queued for the disk), takes an earlier buffer every frame of which was dropped
    /// rather than new memory ([`Slabs`]).
    fn make_room(&mut self, want: usize) {
        if self.min_read == 0 {
            self.buf.reserve(want);
        } else {
            self.buf.room(want);
        }
    }

    /// The whole frame's length once its lengths are buffered.
    fn frame_len(&self, max_packet_size: usize) -> Result<Option<usize>> {
        let Some(lens) = self.buf.first_chunk::<PKT_LENGTHS_LEN>() else {
            return Ok(None);
        };
        Ok(Some(frame_lens(lens, max_packet_size)?.2))
    }

    fn packet(&self, frame: &Bytes, max_packet_size: usize) -> Result<Packet> {
        let lens = frame
            .first_chunk::<PKT_LENGTHS_LEN>()
            .ok_or_else(|| TransferError::protocol("short packet frame"))?;
        let (hlen, plen, _) = frame_lens(lens, max_packet_size)?;
        packet_of_frame(frame, hlen, plen)
    }

    /// Sets the socket's receive low-water mark (no call when it is already `n`).
    fn set_low_water(&mut self, n: usize) {
        let Some(fd) = self.fd else { return };
        if n == self.low_water {
            return;
        }
        let v = libc::c_int::try_from(n).unwrap_or(libc::c_int::MAX);
        // SAFETY: `fd` is the open socket of the stream this reader owns; the option value is
        // a c_int of the size passed.
        let rc = unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_RCVLOWAT,
                (&v as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if rc == 0 {
            self.low_water = n;
        } else {
            // Not a socket that takes it: read without.
            self.fd = None;
        }
    }

    /// Back to the default low-water mark, before the connection carries another op.
    pub(crate) fn reset_low_water(&mut self) {
        self.set_low_water(1);
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncWriteExt;

    use super::*;
    use crate::checksum::DataChecksum;
    use crate::packet::MAX_PACKET_SIZE;

    /// Frames arriving split across reads, several in one read, and a last empty packet come
    /// out whole and in order, with nothing left buffered.
    #[tokio::test]
    async fn frames_split_and_joined_across_reads() {
        let sum = DataChecksum::default();
        let sizes = [70_000usize, 1, 512, 300_000, 0];
        let mut wire = Vec::new();
        let mut off = 0i64;
        for (i, n) in sizes.iter().enumerate() {
            let data: Vec<u8> = (0..*n).map(|b| (b % 253) as u8 ^ i as u8).collect();
            let p = Packet::with_data(&sum, off, i as i64, data.into(), *n == 0, false).unwrap();
            wire.extend_from_slice(&p.to_bytes());
            off += *n as i64;
        }
        let (mut tx, mut rx_end) = tokio::io::duplex(4096);
        let feed = wire.clone();
        let writer = tokio::spawn(async move {
            // Odd pieces, so frames and even their lengths straddle reads.
            for piece in feed.chunks(3_001) {
                tx.write_all(piece).await.unwrap();
            }
        });
        let mut rx = PacketRx::new(None);
        let mut left = sizes.iter().sum::<usize>() as u64;
        for (i, n) in sizes.iter().enumerate() {
            let p = rx.next(&mut rx_end, MAX_PACKET_SIZE, left).await.unwrap();
            assert_eq!(p.header.seqno, i as i64);
            assert_eq!(p.data.len(), *n);
            p.verify(&sum).unwrap();
            left -= *n as u64;
        }
        writer.await.unwrap();
        assert_eq!(rx.buffered(), 0);
    }

    /// A pipeline receiver whose earlier frames are held goes on with new memory and, once
    /// they are dropped, reuses its earlier buffers: every frame comes out whole and in order.
    #[tokio::test]
    async fn pipeline_receiver_reuses_buffers_once_frames_are_dropped() {
        let sum = DataChecksum::default();
        let mut wire = Vec::new();
        let n = 64;
        for i in 0..n {
            let data: Vec<u8> = (0..64_512usize)
                .map(|b| (b % 251) as u8 ^ i as u8)
                .collect();
            let p = Packet::with_data(&sum, i * 64_512, i, data.into(), false, false).unwrap();
            wire.extend_from_slice(&p.to_bytes());
        }
        let mut src = &wire[..];
        let mut rx = PacketRx::for_pipeline();
        let mut held = Vec::new();
        let mut i = 0;
        while i < n {
            let (run, packets) = rx.next_frames(&mut src, MAX_PACKET_SIZE).await.unwrap();
            let end = i + packets.len() as i64;
            assert_eq!(&run[..], &wire[frame_start(i)..frame_start(end)]);
            drop(run);
            for p in packets {
                assert_eq!(p.header.seqno, i);
                p.verify(&sum).unwrap();
                held.push(p);
                // The disk side drops packets in order, a few behind.
                if held.len() > 6 {
                    held.remove(0);
                }
                i += 1;
            }
        }
        assert_eq!(rx.buffered(), 0);
        // 4 MiB of frames, at most 7 of them (450 KiB) held at a time: a few 512 KiB buffers
        // taken in turn, not a new one per 512 KiB.
        assert!(rx.buf.spare() <= SPARE_BUFFERS);
        assert!(
            rx.buf.allocated() <= 4,
            "{} buffers allocated",
            rx.buf.allocated()
        );

        fn frame_start(i: i64) -> usize {
            i as usize * (64_512 + 126 * 4 + 6 + 25)
        }
    }

    /// A pipeline receiver's runs: every whole frame one read brought, contiguous as sent, up
    /// to a block's last packet (the bytes after it stay buffered); a bad frame ends the run
    /// before it and is the next call's error.
    #[tokio::test]
    async fn runs_of_whole_frames_end_at_the_last_packet_and_before_a_bad_frame() {
        let sum = DataChecksum::default();
        let frame = |i: i64, n: usize, last: bool| {
            let data: Vec<u8> = (0..n).map(|b| (b % 251) as u8 ^ i as u8).collect();
            Packet::with_data(&sum, i * 1000, i, data.into(), last, false)
                .unwrap()
                .to_bytes()
        };
        let frames = [
            frame(0, 1000, false),
            frame(1, 1000, false),
            Packet::heartbeat().to_bytes(),
            frame(2, 1000, false),
            Packet::empty(3000, 3, true).to_bytes(),
            frame(4, 10, false),
        ];
        let mut wire: Vec<u8> = frames.iter().flat_map(|f| f.to_vec()).collect();
        // A frame too large, then half a frame: never part of a run.
        wire.extend_from_slice(&[0x7f, 0, 0, 0, 0, 25]);
        let mut src = &wire[..];
        let mut rx = PacketRx::for_pipeline();
        let (run, packets) = rx.next_frames(&mut src, MAX_PACKET_SIZE).await.unwrap();
        let first: Vec<u8> = frames[..5].iter().flat_map(|f| f.to_vec()).collect();
        assert_eq!(&run[..], &first[..]);
        let seqnos: Vec<i64> = packets.iter().map(|p| p.header.seqno).collect();
        assert_eq!(seqnos, vec![0, 1, -1, 2, 3]);
        for p in &packets {
            p.verify(&sum).unwrap();
        }
        assert!(packets[4].header.last_packet_in_block);
        // The packet after the last one is left; then the bad frame is refused.
        let (run, packets) = rx.next_frames(&mut src, MAX_PACKET_SIZE).await.unwrap();
        assert_eq!(&run[..], &frames[5][..]);
        assert_eq!(packets.len(), 1);
        let err = rx.next_frames(&mut src, MAX_PACKET_SIZE).await.unwrap_err();
        assert!(err.to_string().contains("exceeds the maximum"), "{err}");
    }

    /// A frame written with vectored writes through a pipe that takes a few bytes at a time
    /// arrives as the frame's bytes.
    #[tokio::test]
    async fn vectored_frame_write_sends_the_frame() {
        let sum = DataChecksum::default();
        let data: Vec<u8> = (0..70_000usize).map(|b| (b % 241) as u8).collect();
        let p = Packet::with_data(&sum, 512, 9, data.into(), false, true).unwrap();
        let (mut tx, mut rx_end) = tokio::io::duplex(777);
        let sent = p.clone();
        let writer = tokio::spawn(async move {
            crate::packet::write_frame(&mut tx, &sent).await.unwrap();
        });
        let mut got = Vec::new();
        tokio::io::AsyncReadExt::read_to_end(&mut rx_end, &mut got)
            .await
            .unwrap();
        writer.await.unwrap();
        assert_eq!(&got[..], &p.to_bytes()[..]);
    }

    /// A frame announcing more than the maximum is refused before it is read.
    #[tokio::test]
    async fn oversized_frame_is_refused() {
        let (mut tx, mut rx_end) = tokio::io::duplex(64);
        tx.write_all(&[0x7f, 0, 0, 0, 0, 25]).await.unwrap();
        let err = PacketRx::new(None)
            .next(&mut rx_end, MAX_PACKET_SIZE, 0)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("exceeds the maximum"), "{err}");
    }
}
