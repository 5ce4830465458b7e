//! An inode's name: up to [`INLINE`] bytes held in the inode itself, longer ones in one
//! exact allocation. The same 24 bytes as a `Vec<u8>`, but the short names most files
//! have cost no allocation (a `Vec` of a ten-byte name is a 32-byte malloc chunk).

use std::fmt;
use std::ops::Deref;

/// The longest name kept inline.
pub const INLINE: usize = 22;

#[derive(Clone, PartialEq, Eq)]
pub enum Name {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Box<[u8]>),
}

impl Name {
    pub fn new(b: &[u8]) -> Self {
        if b.len() <= INLINE {
            let mut bytes = [0u8; INLINE];
            bytes[..b.len()].copy_from_slice(b);
            Name::Inline {
                len: b.len() as u8,
                bytes,
            }
        } else {
            Name::Heap(b.into())
        }
    }
}

impl Default for Name {
    fn default() -> Self {
        Name::new(&[])
    }
}

impl Deref for Name {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Name::Inline { len, bytes } => &bytes[..usize::from(*len).min(INLINE)],
            Name::Heap(b) => b,
        }
    }
}

impl AsRef<[u8]> for Name {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl From<&[u8]> for Name {
    fn from(b: &[u8]) -> Self {
        Name::new(b)
    }
}

impl From<Vec<u8>> for Name {
    fn from(v: Vec<u8>) -> Self {
        if v.len() <= INLINE {
            Name::new(&v)
        } else {
            Name::Heap(v.into_boxed_slice())
        }
    }
}

impl PartialEq<[u8]> for Name {
    fn eq(&self, other: &[u8]) -> bool {
        **self == *other
    }
}

impl PartialEq<Vec<u8>> for Name {
    fn eq(&self, other: &Vec<u8>) -> bool {
        **self == other[..]
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn as_large_as_a_vec() {
        assert_eq!(std::mem::size_of::<Name>(), std::mem::size_of::<Vec<u8>>());
    }

    proptest! {
        /// Whatever its length, a name reads back as the bytes it was made of.
        #[test]
        fn round_trips(b in proptest::collection::vec(any::<u8>(), 0..40)) {
            let n = Name::new(&b);
            prop_assert_eq!(&*n, &b[..]);
            prop_assert_eq!(&*Name::from(b.clone()), &b[..]);
            prop_assert_eq!(matches!(n, Name::Inline { .. }), b.len() <= INLINE);
            prop_assert!(n == b);
        }
    }
}
