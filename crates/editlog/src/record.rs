//! Record framing and the scanner that reads a segment file back.
//!
//! A segment file is an 8-byte header ([`SEGMENT_MAGIC`]) followed by records:
//!
//! ```text
//! [u32 BE payload length][u64 BE txid][u32 BE CRC32C of the 12 bytes before]
//! [payload][u32 BE CRC32C of txid (8 bytes BE) + payload]
//! ```
//!
//! The header carries its own checksum so that a damaged length field is recognised as
//! damage rather than mistaken for a record cut short by a crash. The scanner tells apart:
//! a clean end, a torn tail (the file ends inside a record, or with zeros), a damaged record
//! that is the very last thing in the file, and damage followed by more data.
//!
//! In-progress segments are preallocated with zeros, so a crash in the middle of a group
//! write can leave a record's first bytes followed by the reserved zeros rather than the end
//! of the file. A damaged record after which only zeros follow (from the end of its header
//! when the header itself is unreadable) is therefore a torn tail too, not damage.

/// First bytes of every segment file: name and format version.
pub const SEGMENT_MAGIC: [u8; 8] = *b"RHDFSED\x01";

/// Largest payload a record may carry (64 MiB).
pub const MAX_PAYLOAD: usize = 64 << 20;

/// Bytes of framing before the payload.
pub const RECORD_HEADER_LEN: usize = 16;

/// Bytes of framing per record (header plus trailing CRC).
pub const RECORD_OVERHEAD: usize = RECORD_HEADER_LEN + 4;

/// One logged transaction: its id and the opaque bytes the NameNode encoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditRecord {
    pub txid: u64,
    pub payload: Vec<u8>,
}

/// Appends the framed record to `out`. The caller checks `payload.len() <= MAX_PAYLOAD`.
pub fn encode_record(txid: u64, payload: &[u8], out: &mut Vec<u8>) {
    let len = u32::try_from(payload.len()).unwrap_or(u32::MAX);
    let start = out.len();
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&txid.to_be_bytes());
    let hcrc = crc32c::crc32c(&out[start..start + 12]);
    out.extend_from_slice(&hcrc.to_be_bytes());
    out.extend_from_slice(payload);
    let crc = crc32c::crc32c_append(crc32c::crc32c(&txid.to_be_bytes()), payload);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// How a scan of a segment file ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScanEnd {
    /// The file ends exactly after the last good record.
    Clean,
    /// The file ends inside a record (or with zero bytes): what a crash mid-write leaves.
    Torn { offset: u64, reason: String },
    /// The last record is complete but its checksum is wrong, and nothing follows it.
    BadLastRecord { offset: u64, reason: String },
    /// A damaged record (or a txid out of sequence) followed by more data.
    Corrupt { offset: u64, reason: String },
}

/// The result of scanning one segment file.
#[derive(Debug, Clone)]
pub struct Scan {
    /// The good records, in file order.
    pub records: Vec<EditRecord>,
    /// Length of the good prefix (header plus good records).
    pub valid_len: u64,
    /// Why the scan stopped.
    pub end: ScanEnd,
}

fn be_u32(b: &[u8]) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[..4]);
    u32::from_be_bytes(a)
}

fn be_u64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_be_bytes(a)
}

/// Whether every byte of `rest` from `from` on is zero (reserved space a crash left
/// unwritten).
fn zeros_after(rest: &[u8], from: usize) -> bool {
    rest.get(from..)
        .is_some_and(|tail| tail.iter().all(|b| *b == 0))
}

/// Scans a whole segment file whose first record must carry `first_txid`; txids must then
/// follow one by one.
pub fn scan_segment(data: &[u8], first_txid: u64) -> Scan {
    let mut records = Vec::new();
    let hdr = SEGMENT_MAGIC.len();
    if data.len() < hdr {
        let prefix_ok = data.iter().zip(SEGMENT_MAGIC.iter()).all(|(a, b)| a == b)
            || data.iter().all(|b| *b == 0);
        let end = if data.is_empty() {
            ScanEnd::Torn {
                offset: 0,
                reason: "empty file without a segment header".into(),
            }
        } else if prefix_ok {
            ScanEnd::Torn {
                offset: 0,
                reason: "incomplete segment header".into(),
            }
        } else {
            ScanEnd::Corrupt {
                offset: 0,
                reason: "bad segment header".into(),
            }
        };
        return Scan {
            records,
            valid_len: 0,
            end,
        };
    }
    if data[..hdr] != SEGMENT_MAGIC {
        let end = if data.iter().all(|b| *b == 0) {
            ScanEnd::Torn {
                offset: 0,
                reason: "zero-filled file".into(),
            }
        } else {
            ScanEnd::Corrupt {
                offset: 0,
                reason: "bad segment header (not an rhdfs edit log)".into(),
            }
        };
        return Scan {
            records,
            valid_len: 0,
            end,
        };
    }
    let mut off = hdr;
    let mut expected = first_txid;
    let end = loop {
        if off == data.len() {
            break ScanEnd::Clean;
        }
        let rest = &data[off..];
        let offset = off as u64;
        if rest.iter().all(|b| *b == 0) {
            break ScanEnd::Torn {
                offset,
                reason: "zero-filled tail".into(),
            };
        }
        if rest.len() < RECORD_HEADER_LEN {
            break ScanEnd::Torn {
                offset,
                reason: format!("incomplete record header ({} bytes)", rest.len()),
            };
        }
        let len = be_u32(&rest[0..4]) as usize;
        let txid = be_u64(&rest[4..12]);
        let hcrc = be_u32(&rest[12..16]);
        if crc32c::crc32c(&rest[..12]) != hcrc {
            let reason = "record header checksum mismatch".to_string();
            if zeros_after(rest, RECORD_HEADER_LEN) {
                break ScanEnd::Torn {
                    offset,
                    reason: format!("{reason}, then only zeros"),
                };
            }
            break ScanEnd::Corrupt { offset, reason };
        }
        if len > MAX_PAYLOAD {
            break ScanEnd::Corrupt {
                offset,
                reason: format!("record length {len} exceeds the limit {MAX_PAYLOAD}"),
            };
        }
        if txid != expected {
            break ScanEnd::Corrupt {
                offset,
                reason: format!("txid {txid} where {expected} was expected"),
            };
        }
        let total = RECORD_OVERHEAD + len;
        if rest.len() < total {
            break ScanEnd::Torn {
                offset,
                reason: format!("record of {total} bytes cut short at {} bytes", rest.len()),
            };
        }
        let payload = &rest[RECORD_HEADER_LEN..RECORD_HEADER_LEN + len];
        let crc = be_u32(&rest[RECORD_HEADER_LEN + len..total]);
        let want = crc32c::crc32c_append(crc32c::crc32c(&txid.to_be_bytes()), payload);
        if crc != want {
            let reason = format!("checksum mismatch in record txid {txid}");
            if total == rest.len() {
                break ScanEnd::BadLastRecord { offset, reason };
            }
            if zeros_after(rest, total) {
                break ScanEnd::Torn {
                    offset,
                    reason: format!("{reason}, then only zeros"),
                };
            }
            break ScanEnd::Corrupt { offset, reason };
        }
        records.push(EditRecord {
            txid,
            payload: payload.to_vec(),
        });
        off += total;
        expected += 1;
    };
    let valid_len = match &end {
        ScanEnd::Clean => data.len() as u64,
        ScanEnd::Torn { offset, .. }
        | ScanEnd::BadLastRecord { offset, .. }
        | ScanEnd::Corrupt { offset, .. } => *offset,
    };
    Scan {
        records,
        valid_len,
        end,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segment(first: u64, payloads: &[&[u8]]) -> (Vec<u8>, Vec<usize>) {
        let mut out = SEGMENT_MAGIC.to_vec();
        let mut starts = Vec::new();
        for (i, p) in payloads.iter().enumerate() {
            starts.push(out.len());
            encode_record(first + i as u64, p, &mut out);
        }
        (out, starts)
    }

    #[test]
    fn clean_scan() {
        let (data, _) = segment(5, &[b"a", b"", b"ccc"]);
        let s = scan_segment(&data, 5);
        assert_eq!(s.end, ScanEnd::Clean);
        assert_eq!(s.records.len(), 3);
        assert_eq!(s.records[2].txid, 7);
        assert_eq!(s.records[2].payload, b"ccc");
        assert_eq!(s.valid_len, data.len() as u64);
    }

    #[test]
    fn every_cut_of_last_record_is_torn() {
        let (data, starts) = segment(1, &[b"first", b"second record", b"third!"]);
        let last = starts[2];
        for cut in last..data.len() {
            let s = scan_segment(&data[..cut], 1);
            assert_eq!(s.records.len(), 2, "cut at {cut}");
            assert_eq!(s.valid_len, last as u64, "cut at {cut}");
            if cut > last {
                assert!(
                    matches!(s.end, ScanEnd::Torn { .. }),
                    "cut at {cut}: {:?}",
                    s.end
                );
            } else {
                assert_eq!(s.end, ScanEnd::Clean);
            }
        }
    }

    #[test]
    fn flipped_bit_in_middle_is_corrupt() {
        let (data, starts) = segment(1, &[b"first", b"second record", b"third!"]);
        for pos in starts[1]..starts[2] {
            for bit in 0..8 {
                let mut d = data.clone();
                d[pos] ^= 1 << bit;
                let s = scan_segment(&d, 1);
                assert_eq!(s.records.len(), 1, "flip at {pos}.{bit}");
                match s.end {
                    ScanEnd::Corrupt { offset, .. } => assert_eq!(offset, starts[1] as u64),
                    other => panic!("flip at {pos}.{bit}: {other:?}"),
                }
            }
        }
    }

    #[test]
    fn wrong_first_txid_is_corrupt() {
        let (data, _) = segment(3, &[b"x"]);
        let s = scan_segment(&data, 4);
        assert!(matches!(s.end, ScanEnd::Corrupt { offset: 8, .. }));
    }

    #[test]
    fn a_torn_write_into_reserved_zeros_is_torn_not_corrupt() {
        let (mut data, starts) = segment(1, &[b"first", b"second record", b"third!"]);
        let last = starts[2];
        let full = data.len();
        data.extend_from_slice(&[0u8; 4096]);
        // Every prefix of the last record persisted, the rest of it still reserved zeros.
        for cut in last + 1..full {
            let mut d = data.clone();
            d[cut..full].fill(0);
            let s = scan_segment(&d, 1);
            assert_eq!(s.records.len(), 2, "cut at {cut}");
            assert_eq!(s.valid_len, last as u64, "cut at {cut}");
            assert!(
                matches!(s.end, ScanEnd::Torn { .. }),
                "cut at {cut}: {:?}",
                s.end
            );
        }
        // Damage with data after it is still damage.
        let mut d = data.clone();
        d[starts[1] + RECORD_HEADER_LEN] ^= 1;
        assert!(matches!(scan_segment(&d, 1).end, ScanEnd::Corrupt { .. }));
    }

    #[test]
    fn short_header_and_zeros_are_torn() {
        assert!(matches!(scan_segment(b"RHD", 1).end, ScanEnd::Torn { .. }));
        assert!(matches!(
            scan_segment(b"XYZ", 1).end,
            ScanEnd::Corrupt { .. }
        ));
        let (mut data, _) = segment(1, &[b"a"]);
        let good = data.len() as u64;
        data.extend_from_slice(&[0u8; 100]);
        let s = scan_segment(&data, 1);
        assert_eq!(s.records.len(), 1);
        assert_eq!(s.valid_len, good);
        assert!(matches!(s.end, ScanEnd::Torn { .. }));
    }
}
