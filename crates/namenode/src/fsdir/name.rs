//! An inode's name in 16 bytes: up to [`INLINE`] bytes held in the inode itself, longer
//! ones in one heap block of a few fixed sizes (its first byte the length), and names
//! longer than the largest of those in a boxed slice behind a box.
//!
//! Short names, which most files have, cost no allocation. A longer name's block is one
//! of 24, 40, 56, 88, 120 or 248 bytes — malloc chunks of 32, 48, 64, 96, 128 and 256 —
//! where an exact `Box<[u8]>` took a chunk of its length rounded up to 16 plus 8: at most
//! one chunk size more. (A `Vec<u8>` or a `Box<[u8]>` is a pointer and a length, 24 or
//! 16 bytes, and leaves no room for a tag beside an inline name of useful length.)

use std::fmt;
use std::ops::Deref;

/// The longest name kept inline.
pub const INLINE: usize = 15;

/// An inline name's length: an enum so that the values above [`INLINE`] are the tags of
/// the heap forms.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
#[rustfmt::skip]
enum Len { L0, L1, L2, L3, L4, L5, L6, L7, L8, L9, L10, L11, L12, L13, L14, L15 }

const LENS: [Len; INLINE + 1] = [
    Len::L0,
    Len::L1,
    Len::L2,
    Len::L3,
    Len::L4,
    Len::L5,
    Len::L6,
    Len::L7,
    Len::L8,
    Len::L9,
    Len::L10,
    Len::L11,
    Len::L12,
    Len::L13,
    Len::L14,
    Len::L15,
];

/// 16 bytes: the length byte's spare values tell the heap forms apart, whose pointer sits
/// in the first 8 bytes.
#[derive(Clone, PartialEq, Eq)]
enum Repr {
    Inline([u8; INLINE], Len),
    /// Byte 0 the length, the name after it.
    S24(Box<[u8; 24]>),
    S40(Box<[u8; 40]>),
    S56(Box<[u8; 56]>),
    S88(Box<[u8; 88]>),
    S120(Box<[u8; 120]>),
    S248(Box<[u8; 248]>),
    /// Longer than 247 bytes.
    Big(Box<Box<[u8]>>),
}

#[derive(Clone, PartialEq, Eq)]
pub struct Name(Repr);

/// A block of `N` bytes holding `b` (shorter than `N`) after its length.
fn block<const N: usize>(b: &[u8]) -> Box<[u8; N]> {
    let mut a = Box::new([0u8; N]);
    a[0] = b.len() as u8;
    a[1..=b.len()].copy_from_slice(b);
    a
}

/// The name in a block made by [`block`].
fn in_block(a: &[u8]) -> &[u8] {
    let len = usize::from(a[0]);
    a.get(1..=len).unwrap_or(&[])
}

impl Name {
    pub fn new(b: &[u8]) -> Self {
        Name(match b.len() {
            n @ 0..=INLINE => {
                let mut bytes = [0u8; INLINE];
                bytes[..n].copy_from_slice(b);
                Repr::Inline(bytes, LENS[n])
            }
            16..=23 => Repr::S24(block(b)),
            24..=39 => Repr::S40(block(b)),
            40..=55 => Repr::S56(block(b)),
            56..=87 => Repr::S88(block(b)),
            88..=119 => Repr::S120(block(b)),
            120..=247 => Repr::S248(block(b)),
            _ => Repr::Big(Box::new(b.into())),
        })
    }

    /// Whether the name is held in the inode, with no allocation.
    pub fn is_inline(&self) -> bool {
        matches!(self.0, Repr::Inline(..))
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
        match &self.0 {
            Repr::Inline(bytes, len) => &bytes[..usize::from(*len as u8).min(INLINE)],
            Repr::S24(a) => in_block(&a[..]),
            Repr::S40(a) => in_block(&a[..]),
            Repr::S56(a) => in_block(&a[..]),
            Repr::S88(a) => in_block(&a[..]),
            Repr::S120(a) => in_block(&a[..]),
            Repr::S248(a) => in_block(&a[..]),
            Repr::Big(b) => b,
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
        if v.len() < 248 {
            Name::new(&v)
        } else {
            Name(Repr::Big(Box::new(v.into_boxed_slice())))
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
    fn sixteen_bytes() {
        assert_eq!(std::mem::size_of::<Name>(), 16);
        assert_eq!(std::mem::size_of::<Option<Name>>(), 16);
    }

    /// Every length at and around each form's bounds reads back, in the form it fits.
    #[test]
    fn every_form_round_trips_at_its_bounds() {
        for len in 0..=300usize {
            let b: Vec<u8> = (0..len).map(|i| (i * 7 + len) as u8).collect();
            let n = Name::new(&b);
            assert_eq!(&*n, &b[..], "length {len}");
            assert_eq!(&*Name::from(b.clone()), &b[..], "length {len} from a Vec");
            assert_eq!(n.is_inline(), len <= INLINE, "length {len}");
            let form = match n.0 {
                Repr::Inline(..) => 0,
                Repr::S24(_) => 24,
                Repr::S40(_) => 40,
                Repr::S56(_) => 56,
                Repr::S88(_) => 88,
                Repr::S120(_) => 120,
                Repr::S248(_) => 248,
                Repr::Big(_) => usize::MAX,
            };
            let want = [INLINE, 23, 39, 55, 87, 119, 247]
                .iter()
                .zip([0, 24, 40, 56, 88, 120, 248])
                .find(|(max, _)| len <= **max)
                .map_or(usize::MAX, |(_, f)| f);
            assert_eq!(form, want, "length {len}");
        }
    }

    proptest! {
        /// Whatever its length, a name reads back as the bytes it was made of, and two
        /// names are equal exactly when their bytes are.
        #[test]
        fn round_trips(
            a in proptest::collection::vec(any::<u8>(), 0..300),
            b in proptest::collection::vec(any::<u8>(), 0..300),
        ) {
            let n = Name::new(&a);
            prop_assert_eq!(&*n, &a[..]);
            prop_assert_eq!(&*Name::from(a.clone()), &a[..]);
            prop_assert!(n == a);
            prop_assert_eq!(n == Name::new(&b), a == b);
            prop_assert_eq!(n.clone(), Name::from(a.clone()));
        }
    }
}
