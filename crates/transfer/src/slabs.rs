//! A buffer that packets are split off and that takes memory back once they are dropped.
//!
//! Packets split off a [`Slabs`] buffer (`split`, `split_to`) keep its memory until every one
//! of them is dropped — on the write path, until they were written to disk or acknowledged.
//! When the buffer runs out of room it moves on to an earlier slab all of whose packets were
//! dropped before it allocates a new one: a new allocation of this size came from memory the
//! allocator had given back to the kernel, so filling it page-faulted and zeroed each page
//! again (a sixth of the client's CPU in a profile of `bench dfsio -write`, 4-5 % of a
//! DataNode's). Used by the client's packet writer and the DataNode's pipeline receiver.

use std::collections::VecDeque;
use std::ops::{Deref, DerefMut};

use bytes::BytesMut;

#[derive(Debug, Default)]
pub struct Slabs {
    cur: BytesMut,
    spare: VecDeque<BytesMut>,
    /// Bytes of a new slab (more when a request is larger).
    slab: usize,
    /// Earlier slabs kept for reuse at most.
    keep: usize,
    /// Slabs allocated so far.
    allocated: usize,
}

impl Slabs {
    /// Slabs of `slab` bytes, `keep` earlier ones kept for reuse; nothing allocated yet.
    pub fn new(slab: usize, keep: usize) -> Self {
        Slabs {
            slab,
            keep,
            ..Slabs::default()
        }
    }

    /// Slabs allocated so far (tests bound it).
    pub fn allocated(&self) -> usize {
        self.allocated
    }

    /// Earlier slabs held for reuse.
    pub fn spare(&self) -> usize {
        self.spare.len()
    }

    /// Room for `want` more bytes after those buffered: the current slab's rest, the current
    /// slab again when everything split off it was dropped, an earlier slab whose packets were
    /// all dropped, or a new one. Buffered bytes (a partial packet) move along.
    pub fn room(&mut self, want: usize) {
        if self.cur.capacity() - self.cur.len() >= want || self.cur.try_reclaim(want) {
            return;
        }
        let need = self.cur.len() + want;
        let reused = match self.spare.iter_mut().position(|b| b.try_reclaim(need)) {
            Some(i) => self.spare.remove(i),
            None => None,
        };
        let mut next = reused.unwrap_or_else(|| {
            self.allocated += 1;
            BytesMut::with_capacity(need.max(self.slab))
        });
        next.extend_from_slice(&self.cur);
        let mut old = std::mem::replace(&mut self.cur, next);
        old.clear();
        if self.spare.len() >= self.keep {
            self.spare.pop_front();
        }
        if self.keep > 0 {
            self.spare.push_back(old);
        }
    }
}

/// The bytes buffered; splitting and filling go through `BytesMut`'s own methods.
impl Deref for Slabs {
    type Target = BytesMut;
    fn deref(&self) -> &BytesMut {
        &self.cur
    }
}

impl DerefMut for Slabs {
    fn deref_mut(&mut self) -> &mut BytesMut {
        &mut self.cur
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A slab with live packets is left for a new one; once its packets are dropped it is
    /// taken again instead of new memory, and live packets keep their bytes.
    #[test]
    fn a_slab_is_reused_once_its_packets_are_dropped() {
        let mut s = Slabs::new(64, 2);
        s.room(40);
        s.extend_from_slice(&[1; 40]);
        let p1 = s.split().freeze();
        s.room(40);
        assert_eq!(
            s.allocated(),
            2,
            "24 bytes left and a live packet: a new slab"
        );
        s.extend_from_slice(&[2; 40]);
        let p2 = s.split().freeze();
        drop(p1);
        s.room(40);
        assert_eq!(s.allocated(), 2, "the first slab taken again");
        s.extend_from_slice(&[3; 40]);
        let p3 = s.split().freeze();
        assert_eq!((&p2[..], &p3[..]), (&[2; 40][..], &[3; 40][..]));
        drop((p2, p3));
        // Everything dropped: the current slab is reclaimed in place.
        s.room(64);
        assert_eq!(s.allocated(), 2);
    }

    /// A request larger than a slab gets memory of its own size; with nothing kept, no
    /// spare is held.
    #[test]
    fn a_request_larger_than_a_slab_fits() {
        let mut s = Slabs::new(16, 0);
        s.extend_from_slice(b"abc");
        s.room(100);
        assert!(s.capacity() - s.len() >= 100);
        assert_eq!(&s[..], b"abc");
        assert_eq!(s.spare(), 0);
    }
}
