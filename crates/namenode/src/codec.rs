//! The byte-level encoding shared by edit-log records and image payloads: unsigned LEB128
//! varints, length-prefixed byte strings, 0/1-flagged options, blocks as (id, gs, num_bytes)
//! and permissions as (owner, group, mode). Reading never panics: bad input is a
//! [`CodecError`], which each payload kind turns into its own error.

use crate::fsdir::acl::{AclEntry, AclType};
use crate::fsdir::xattr::{XAttr, XAttrNs};
use crate::fsdir::{FileBlock, PermissionStatus};

/// Why bytes could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CodecError {
    /// The input ends before the value at this byte.
    Truncated(usize),
    /// The value at byte `at` is not valid.
    Bad { at: usize, what: &'static str },
}

/// Appends encoded values to a buffer.
pub(crate) struct W(pub Vec<u8>);

impl W {
    pub fn u(&mut self, mut v: u64) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                self.0.push(b);
                return;
            }
            self.0.push(b | 0x80);
        }
    }
    pub fn bytes(&mut self, b: &[u8]) {
        self.u(b.len() as u64);
        self.0.extend_from_slice(b);
    }
    pub fn opt_u(&mut self, v: Option<u64>) {
        match v {
            Some(x) => {
                self.0.push(1);
                self.u(x);
            }
            None => self.0.push(0),
        }
    }
    pub fn opt_s(&mut self, v: &Option<String>) {
        match v {
            Some(x) => {
                self.0.push(1);
                self.bytes(x.as_bytes());
            }
            None => self.0.push(0),
        }
    }
    pub fn block(&mut self, b: &FileBlock) {
        self.u(b.id);
        self.u(b.gs);
        self.u(b.num_bytes);
    }
    /// ACL entries: a count, then per entry a byte (bit 2 = default scope, bits 0-1 = type),
    /// the permission bits and an optional name.
    pub fn acl(&mut self, entries: &[AclEntry]) {
        self.u(entries.len() as u64);
        for e in entries {
            self.0.push((u8::from(e.default) << 2) | e.kind as u8);
            self.0.push(e.perm);
            self.opt_s(&e.name);
        }
    }
    /// One xattr: namespace byte, name, optional value.
    pub fn xattr(&mut self, x: &XAttr) {
        self.0.push(x.ns as u8);
        self.bytes(x.name.as_bytes());
        match &x.value {
            Some(v) => {
                self.0.push(1);
                self.bytes(v);
            }
            None => self.0.push(0),
        }
    }
    pub fn perm(&mut self, p: &PermissionStatus) {
        self.bytes(p.owner.as_bytes());
        self.bytes(p.group.as_bytes());
        self.u(u64::from(p.mode));
    }
}

/// Reads encoded values from a slice, tracking the offset for error messages.
pub(crate) struct R<'a> {
    pub b: &'a [u8],
    pub at: usize,
}

impl<'a> R<'a> {
    /// A length-prefixed byte string, borrowed from the input (no copy).
    pub fn slice(&mut self) -> Result<&'a [u8], CodecError> {
        let n = self.len()?;
        // `len` checked that n bytes are left.
        let s = self
            .b
            .get(self.at..self.at + n)
            .ok_or(CodecError::Truncated(self.b.len()))?;
        self.at += n;
        Ok(s)
    }
    pub fn byte(&mut self) -> Result<u8, CodecError> {
        let v = *self.b.get(self.at).ok_or(CodecError::Truncated(self.at))?;
        self.at += 1;
        Ok(v)
    }
    pub fn u(&mut self) -> Result<u64, CodecError> {
        let start = self.at;
        // With ten bytes left (the longest varint), no bounds check per byte.
        if let Some(bytes) = self.b.get(start..start.saturating_add(10)) {
            let mut v = 0u64;
            for (i, &b) in bytes.iter().enumerate() {
                v |= u64::from(b & 0x7f) << (7 * i);
                if b & 0x80 == 0 {
                    self.at = start + i + 1;
                    return Ok(v);
                }
            }
            return Err(CodecError::Bad {
                at: start,
                what: "varint too long",
            });
        }
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(CodecError::Bad {
            at: start,
            what: "varint too long",
        })
    }
    pub fn u16(&mut self) -> Result<u16, CodecError> {
        let at = self.at;
        u16::try_from(self.u()?).map_err(|_| CodecError::Bad {
            at,
            what: "value over 16 bits",
        })
    }
    /// A length or count that cannot exceed the bytes left (each item takes at least one).
    pub fn len(&mut self) -> Result<usize, CodecError> {
        let at = self.at;
        let n = usize::try_from(self.u()?).map_err(|_| CodecError::Bad { at, what: "length" })?;
        if n > self.b.len().saturating_sub(self.at) {
            return Err(CodecError::Truncated(self.b.len()));
        }
        Ok(n)
    }
    pub fn bytes(&mut self) -> Result<Vec<u8>, CodecError> {
        let n = self.len()?;
        let end = self.at + n;
        let s = self
            .b
            .get(self.at..end)
            .ok_or(CodecError::Truncated(self.b.len()))?;
        self.at = end;
        Ok(s.to_vec())
    }
    pub fn string(&mut self) -> Result<String, CodecError> {
        let at = self.at;
        String::from_utf8(self.bytes()?).map_err(|_| CodecError::Bad {
            at,
            what: "not UTF-8",
        })
    }
    pub fn flag(&mut self) -> Result<bool, CodecError> {
        let at = self.at;
        match self.byte()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(CodecError::Bad {
                at,
                what: "option flag",
            }),
        }
    }
    pub fn opt_u(&mut self) -> Result<Option<u64>, CodecError> {
        Ok(if self.flag()? { Some(self.u()?) } else { None })
    }
    pub fn opt_s(&mut self) -> Result<Option<String>, CodecError> {
        Ok(if self.flag()? {
            Some(self.string()?)
        } else {
            None
        })
    }
    pub fn block(&mut self) -> Result<FileBlock, CodecError> {
        Ok(FileBlock {
            id: self.u()?,
            gs: self.u()?,
            num_bytes: self.u()?,
        })
    }
    pub fn acl(&mut self) -> Result<Vec<AclEntry>, CodecError> {
        let n = self.len()?;
        let mut out = Vec::with_capacity(n.min(64));
        for _ in 0..n {
            let at = self.at;
            let tb = self.byte()?;
            let kind =
                AclType::from_u8(tb & 3)
                    .filter(|_| tb >> 3 == 0)
                    .ok_or(CodecError::Bad {
                        at,
                        what: "ACL entry type",
                    })?;
            let at = self.at;
            let perm = self.byte()?;
            if perm > 7 {
                return Err(CodecError::Bad {
                    at,
                    what: "ACL permission",
                });
            }
            out.push(AclEntry {
                default: tb & 4 != 0,
                kind,
                name: self.opt_s()?,
                perm,
            });
        }
        Ok(out)
    }
    pub fn xattr_ns(&mut self) -> Result<XAttrNs, CodecError> {
        let at = self.at;
        XAttrNs::from_u8(self.byte()?).ok_or(CodecError::Bad {
            at,
            what: "xattr namespace",
        })
    }
    pub fn xattr(&mut self) -> Result<XAttr, CodecError> {
        let ns = self.xattr_ns()?;
        let name = self.string()?;
        let value = if self.flag()? {
            Some(self.bytes()?)
        } else {
            None
        };
        Ok(XAttr { ns, name, value })
    }
    pub fn perm(&mut self) -> Result<PermissionStatus, CodecError> {
        Ok(PermissionStatus {
            owner: self.string()?.into(),
            group: self.string()?.into(),
            mode: self.u16()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// A varint reads the same with ten bytes or more after it (no check per byte) as
        /// at the very end of the input, and any bytes give the same value or error either
        /// way (within the ten bytes a varint can take).
        #[test]
        fn varints_read_alike_anywhere(v in any::<u64>(), junk in proptest::collection::vec(any::<u8>(), 0..12)) {
            let mut w = W(Vec::new());
            w.u(v);
            let n = w.0.len();
            w.0.extend_from_slice(&[0x80; 12]);
            let mut long = R { b: &w.0, at: 0 };
            prop_assert_eq!(long.u(), Ok(v));
            prop_assert_eq!(long.at, n);
            let mut end = R { b: &w.0[..n], at: 0 };
            prop_assert_eq!(end.u(), Ok(v));
            let mut padded = junk.clone();
            padded.extend_from_slice(&[0; 10]);
            let fast = R { b: &padded, at: 0 }.u();
            let mut slow_bytes = junk.clone();
            slow_bytes.push(0);
            let slow = R { b: &slow_bytes, at: 0 }.u();
            if junk.len() < 10 || junk[..10].iter().any(|b| b & 0x80 == 0) {
                prop_assert_eq!(fast, slow);
            } else {
                prop_assert!(fast.is_err() && slow.is_err());
            }
        }
    }

    #[test]
    fn round_trip_and_bad_input() {
        let mut w = W(Vec::new());
        w.u(0);
        w.u(300);
        w.u(u64::MAX);
        w.opt_s(&Some("héllo".to_string()));
        w.opt_u(None);
        let mut r = R { b: &w.0, at: 0 };
        assert_eq!(r.u(), Ok(0));
        assert_eq!(r.u(), Ok(300));
        assert_eq!(r.u(), Ok(u64::MAX));
        assert_eq!(r.opt_s(), Ok(Some("héllo".to_string())));
        assert_eq!(r.opt_u(), Ok(None));
        assert_eq!(r.at, w.0.len());
        assert_eq!(r.byte(), Err(CodecError::Truncated(w.0.len())));
        // A length longer than what is left is truncation, not a huge allocation.
        let mut r = R {
            b: &[0xff, 0xff, 0x03, b'a'],
            at: 0,
        };
        assert!(matches!(r.bytes(), Err(CodecError::Truncated(_))));
        let mut r = R { b: &[2], at: 0 };
        assert!(matches!(r.flag(), Err(CodecError::Bad { at: 0, .. })));
    }
}
