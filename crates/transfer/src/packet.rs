//! Data packets, both directions:
//! `int32 PLEN (4 + checksums + data) | int16 HLEN | PacketHeaderProto | checksums | data`.

use bytes::{BufMut, Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::checksum::DataChecksum;
use crate::error::{Result, TransferError};

/// Largest header: PLEN (4) + HLEN (2) + a header proto with syncBlock (27).
pub const PKT_MAX_HEADER_LEN: usize = 33;

impl DataChecksum {
    /// Largest data length that, with its checksums, fits in `packet_size` bytes of packet body
    /// after the maximum header: whole chunks only, at least one chunk.
    /// For 65536 and CRC32C/512 this is 126 chunks = 64512 bytes, as the Java writer sends.
    pub fn chunks_per_packet(&self, packet_size: usize) -> usize {
        let body = packet_size.saturating_sub(PKT_MAX_HEADER_LEN);
        let per_chunk = self.bpc() + self.checksum_size();
        (body / per_chunk).max(1)
    }
}
/// Prefix before the header proto: PLEN + HLEN.
pub const PKT_LENGTHS_LEN: usize = 6;
/// `dfs.data.transfer.max.packet.size` default: cap on PLEN + HLEN.
pub const MAX_PACKET_SIZE: usize = 16 * 1024 * 1024;
/// `dfs.client-write-packet-size` default.
pub const DEFAULT_WRITE_PACKET_SIZE: usize = 64 * 1024;
/// Seqno of heartbeat packets (and of their acks).
pub const HEARTBEAT_SEQNO: i64 = -1;

/// `PacketHeaderProto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PacketHeader {
    pub offset_in_block: i64,
    pub seqno: i64,
    pub last_packet_in_block: bool,
    pub data_len: i32,
    pub sync_block: bool,
}

// Protobuf keys (field << 3 | wire type) of PacketHeaderProto.
const KEY_OFFSET: u8 = 1 << 3 | 1; // sfixed64
const KEY_SEQNO: u8 = 2 << 3 | 1; // sfixed64
const KEY_LAST: u8 = 3 << 3; // bool (varint)
const KEY_DATA_LEN: u8 = 4 << 3 | 5; // sfixed32
const KEY_SYNC: u8 = 5 << 3; // bool (varint)

impl PacketHeader {
    /// A heartbeat: seqno -1, offset 0, no data, not last.
    pub fn heartbeat() -> Self {
        PacketHeader {
            seqno: HEARTBEAT_SEQNO,
            ..Default::default()
        }
    }

    pub fn is_heartbeat(&self) -> bool {
        self.seqno == HEARTBEAT_SEQNO
    }

    /// Encoded proto length: 25, or 27 with syncBlock (written only when true, as Java does).
    pub fn encoded_len(&self) -> usize {
        if self.sync_block { 27 } else { 25 }
    }

    /// Appends the header proto (not length-delimited).
    pub fn encode<B: BufMut>(&self, out: &mut B) {
        out.put_u8(KEY_OFFSET);
        out.put_i64_le(self.offset_in_block);
        out.put_u8(KEY_SEQNO);
        out.put_i64_le(self.seqno);
        out.put_u8(KEY_LAST);
        out.put_u8(u8::from(self.last_packet_in_block));
        out.put_u8(KEY_DATA_LEN);
        out.put_i32_le(self.data_len);
        if self.sync_block {
            out.put_u8(KEY_SYNC);
            out.put_u8(1);
        }
    }

    /// Decodes a header proto; accepts any field order and skips unknown fields.
    pub fn decode(buf: &[u8]) -> Result<Self> {
        let mut r = ProtoCursor { buf, pos: 0 };
        let mut h = PacketHeader::default();
        let mut seen = 0u8;
        while !r.done() {
            let key = r.varint()?;
            let field = key >> 3;
            let wire = (key & 7) as u8;
            match (field, wire) {
                (1, 1) => {
                    h.offset_in_block = r.fixed64()? as i64;
                    seen |= 1;
                }
                (2, 1) => {
                    h.seqno = r.fixed64()? as i64;
                    seen |= 2;
                }
                (3, 0) => {
                    h.last_packet_in_block = r.varint()? != 0;
                    seen |= 4;
                }
                (4, 5) => {
                    h.data_len = r.fixed32()? as i32;
                    seen |= 8;
                }
                (5, 0) => h.sync_block = r.varint()? != 0,
                (1..=5, _) => {
                    return Err(TransferError::protocol(format!(
                        "packet header field {field} has wire type {wire}"
                    )));
                }
                _ => r.skip(wire)?,
            }
        }
        if seen != 0x0f {
            return Err(TransferError::protocol(
                "packet header is missing a required field",
            ));
        }
        if h.data_len < 0 {
            return Err(TransferError::protocol(format!(
                "negative packet dataLen {}",
                h.data_len
            )));
        }
        Ok(h)
    }
}

struct ProtoCursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl ProtoCursor<'_> {
    fn done(&self) -> bool {
        self.pos >= self.buf.len()
    }

    fn take(&mut self, n: usize) -> Result<&[u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or_else(|| TransferError::protocol("truncated packet header"))?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn varint(&mut self) -> Result<u64> {
        let mut v = 0u64;
        for i in 0..10 {
            let b = self.take(1)?[0];
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(TransferError::protocol("varint too long in packet header"))
    }

    fn fixed64(&mut self) -> Result<u64> {
        let s = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(s);
        Ok(u64::from_le_bytes(a))
    }

    fn fixed32(&mut self) -> Result<u32> {
        let s = self.take(4)?;
        let mut a = [0u8; 4];
        a.copy_from_slice(s);
        Ok(u32::from_le_bytes(a))
    }

    fn skip(&mut self, wire: u8) -> Result<()> {
        match wire {
            0 => self.varint().map(|_| ()),
            1 => self.take(8).map(|_| ()),
            2 => {
                let n = usize::try_from(self.varint()?)
                    .map_err(|_| TransferError::protocol("bad length in packet header"))?;
                self.take(n).map(|_| ())
            }
            5 => self.take(4).map(|_| ()),
            w => Err(TransferError::protocol(format!(
                "unsupported wire type {w} in packet header"
            ))),
        }
    }
}

/// One packet: header, checksum bytes (4-byte BE per chunk) and data.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Packet {
    pub header: PacketHeader,
    pub checksums: Bytes,
    pub data: Bytes,
}

impl Packet {
    /// A data packet whose checksums are computed from `data` (chunked from its start).
    pub fn with_data(
        checksum: &DataChecksum,
        offset_in_block: i64,
        seqno: i64,
        data: Bytes,
        last_packet_in_block: bool,
        sync_block: bool,
    ) -> Result<Self> {
        let data_len = i32::try_from(data.len())
            .map_err(|_| TransferError::protocol("packet data too large"))?;
        Ok(Packet {
            header: PacketHeader {
                offset_in_block,
                seqno,
                last_packet_in_block,
                data_len,
                sync_block,
            },
            checksums: Bytes::from(checksum.compute_bytes(&data)),
            data,
        })
    }

    /// An empty packet (e.g. the last packet of a block at `offset_in_block`).
    pub fn empty(offset_in_block: i64, seqno: i64, last_packet_in_block: bool) -> Self {
        Packet {
            header: PacketHeader {
                offset_in_block,
                seqno,
                last_packet_in_block,
                data_len: 0,
                sync_block: false,
            },
            ..Default::default()
        }
    }

    /// A heartbeat packet.
    pub fn heartbeat() -> Self {
        Packet {
            header: PacketHeader::heartbeat(),
            ..Default::default()
        }
    }

    /// PLEN: 4 + checksums + data.
    pub fn payload_len(&self) -> usize {
        4 + self.checksums.len() + self.data.len()
    }

    /// Whole frame length on the wire.
    pub fn frame_len(&self) -> usize {
        PKT_LENGTHS_LEN + self.header.encoded_len() + self.checksums.len() + self.data.len()
    }

    /// Checks the header's dataLen against the data and the checksum byte count against the
    /// chunking of the data (from its start) under `checksum`.
    pub fn validate(&self, checksum: &DataChecksum) -> Result<()> {
        if usize::try_from(self.header.data_len).ok() != Some(self.data.len()) {
            return Err(TransferError::protocol(format!(
                "packet dataLen {} but {} data bytes",
                self.header.data_len,
                self.data.len()
            )));
        }
        let want = checksum.checksum_len(self.data.len());
        if self.checksums.len() != want {
            return Err(TransferError::protocol(format!(
                "packet at offset {} has {} checksum bytes for {} data bytes, expected {want}",
                self.header.offset_in_block,
                self.checksums.len(),
                self.data.len()
            )));
        }
        Ok(())
    }

    /// [`Packet::validate`] plus CRC verification of every chunk.
    pub fn verify(&self, checksum: &DataChecksum) -> Result<()> {
        self.validate(checksum)?;
        let offset = u64::try_from(self.header.offset_in_block).unwrap_or(0);
        checksum.verify(&self.data, &self.checksums, offset)
    }

    /// Appends the whole frame.
    pub fn encode<B: BufMut>(&self, out: &mut B) {
        out.put_u32(self.payload_len() as u32);
        out.put_u16(self.header.encoded_len() as u16);
        self.header.encode(out);
        out.put_slice(&self.checksums);
        out.put_slice(&self.data);
    }

    /// The whole frame as bytes.
    pub fn to_bytes(&self) -> Bytes {
        let mut b = BytesMut::with_capacity(self.frame_len());
        self.encode(&mut b);
        b.freeze()
    }
}

/// Writes a packet frame and flushes.
pub async fn write_packet<W: AsyncWrite + Unpin>(w: &mut W, packet: &Packet) -> Result<()> {
    write_frame(w, packet).await?;
    w.flush().await?;
    Ok(())
}

/// Writes a packet's whole frame with vectored writes — its lengths and header, then its
/// checksums and data from where they are — so the data is not first copied into a frame
/// buffer (a writer's 64 KiB copy per packet).
pub async fn write_frame<W: AsyncWrite + Unpin>(w: &mut W, packet: &Packet) -> std::io::Result<()> {
    let mut head = Vec::with_capacity(PKT_LENGTHS_LEN + packet.header.encoded_len());
    head.put_u32(packet.payload_len() as u32);
    head.put_u16(packet.header.encoded_len() as u16);
    packet.header.encode(&mut head);
    let mut slices = [
        std::io::IoSlice::new(&head),
        std::io::IoSlice::new(&packet.checksums),
        std::io::IoSlice::new(&packet.data),
    ];
    let mut bufs = &mut slices[..];
    std::io::IoSlice::advance_slices(&mut bufs, 0);
    while !bufs.is_empty() {
        let n = w.write_vectored(bufs).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        std::io::IoSlice::advance_slices(&mut bufs, n);
    }
    Ok(())
}

/// Reads one packet frame, refusing PLEN + HLEN above `max_packet_size`. Returns the packet
/// and the exact bytes of its frame (for forwarding downstream unchanged); the packet's
/// `checksums` and `data` share that buffer.
pub async fn read_packet_raw<R: AsyncRead + Unpin>(
    r: &mut R,
    max_packet_size: usize,
) -> Result<(Packet, Bytes)> {
    read_packet_into(r, max_packet_size, &mut BytesMut::new()).await
}

/// [`read_packet_raw`] into `buf`'s memory: a receiver that keeps `buf` from packet to packet
/// reads every frame into the same memory once the previous frame's bytes were dropped, with
/// no allocation and no zeroing per packet.
pub async fn read_packet_into<R: AsyncRead + Unpin>(
    r: &mut R,
    max_packet_size: usize,
    buf: &mut BytesMut,
) -> Result<(Packet, Bytes)> {
    let mut lens = [0u8; PKT_LENGTHS_LEN];
    r.read_exact(&mut lens).await?;
    let (hlen, plen, total) = frame_lens(&lens, max_packet_size)?;
    buf.clear();
    buf.reserve(total);
    buf.put_slice(&lens);
    while buf.len() < total {
        let left = (total - buf.len()) as u64;
        if (&mut *r).take(left).read_buf(buf).await? == 0 {
            return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into());
        }
    }
    let frame = buf.split().freeze();
    let packet = packet_of_frame(&frame, hlen, plen)?;
    Ok((packet, frame))
}

/// HLEN, PLEN and the whole frame's length from a frame's first [`PKT_LENGTHS_LEN`] bytes,
/// refusing PLEN + HLEN above `max_packet_size`.
pub(crate) fn frame_lens(
    lens: &[u8; PKT_LENGTHS_LEN],
    max_packet_size: usize,
) -> Result<(usize, usize, usize)> {
    let plen = i32::from_be_bytes([lens[0], lens[1], lens[2], lens[3]]);
    let hlen = usize::from(u16::from_be_bytes([lens[4], lens[5]]));
    if plen < 4 {
        return Err(TransferError::protocol(format!(
            "invalid packet length {plen}"
        )));
    }
    let plen = plen as usize;
    if plen + hlen > max_packet_size {
        return Err(TransferError::protocol(format!(
            "packet of {} bytes exceeds the maximum of {max_packet_size}",
            plen + hlen
        )));
    }
    Ok((hlen, plen, PKT_LENGTHS_LEN + hlen + plen - 4))
}

/// The packet in `frame` (PLEN | HLEN | header | checksums | data, exactly `6 + hlen + plen -
/// 4` bytes, lengths already checked against the maximum); its checksums and data share
/// `frame`'s memory.
pub(crate) fn packet_of_frame(frame: &Bytes, hlen: usize, plen: usize) -> Result<Packet> {
    let (header, sums_end) = frame_header(frame, hlen, plen)?;
    Ok(Packet {
        header,
        checksums: frame.slice(PKT_LENGTHS_LEN + hlen..sums_end),
        data: frame.slice(sums_end..),
    })
}

/// The header of the packet in `frame` (see [`packet_of_frame`]) and where its checksums end
/// (its data starts) in the frame.
pub(crate) fn frame_header(
    frame: &[u8],
    hlen: usize,
    plen: usize,
) -> Result<(PacketHeader, usize)> {
    let header = PacketHeader::decode(&frame[PKT_LENGTHS_LEN..PKT_LENGTHS_LEN + hlen])?;
    let body_start = PKT_LENGTHS_LEN + hlen;
    let body_len = plen - 4;
    let data_len = header.data_len as usize;
    if data_len > body_len {
        return Err(TransferError::protocol(format!(
            "packet dataLen {data_len} exceeds its payload of {body_len} bytes"
        )));
    }
    Ok((header, body_start + body_len - data_len))
}

/// Reads one packet frame (see [`read_packet_raw`]).
pub async fn read_packet<R: AsyncRead + Unpin>(
    r: &mut R,
    max_packet_size: usize,
) -> Result<Packet> {
    Ok(read_packet_raw(r, max_packet_size).await?.0)
}
