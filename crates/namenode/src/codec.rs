//! The byte-level encoding shared by edit-log records and image payloads: unsigned LEB128
//! varints, length-prefixed byte strings, 0/1-flagged options, blocks as (id, gs, num_bytes)
//! and permissions as (owner, group, mode). Reading never panics: bad input is a
//! [`CodecError`], which each payload kind turns into its own error.

use crate::fsdir::{BlockInfo, PermissionStatus};

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
    pub fn block(&mut self, b: &BlockInfo) {
        self.u(b.id);
        self.u(b.gs);
        self.u(b.num_bytes);
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

impl R<'_> {
    pub fn byte(&mut self) -> Result<u8, CodecError> {
        let v = *self.b.get(self.at).ok_or(CodecError::Truncated(self.at))?;
        self.at += 1;
        Ok(v)
    }
    pub fn u(&mut self) -> Result<u64, CodecError> {
        let start = self.at;
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
    pub fn block(&mut self) -> Result<BlockInfo, CodecError> {
        Ok(BlockInfo {
            id: self.u()?,
            gs: self.u()?,
            num_bytes: self.u()?,
        })
    }
    pub fn perm(&mut self) -> Result<PermissionStatus, CodecError> {
        Ok(PermissionStatus {
            owner: self.string()?,
            group: self.string()?,
            mode: self.u16()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
