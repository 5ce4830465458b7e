//! Giving memory back after a burst of connections. A closed connection's buffers and task
//! are freed, but glibc's malloc keeps freed pages in its arenas, so a web port that once
//! held thousands of idle connections would keep that RSS for good (a crawler or a client
//! leaking keep-alive connections leaves the daemon larger ever after). When the number of
//! open connections falls to a quarter of a peak of at least [`TRIM_PEAK`], the free pages
//! are handed back to the kernel (`malloc_trim`), once per burst.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Peaks below this are not worth a trim: a few hundred connections cost well under a MB.
pub const TRIM_PEAK: usize = 512;

/// Open connections of one web port and the peak since the last trim.
#[derive(Debug, Default)]
pub(crate) struct Bursts {
    open: AtomicUsize,
    peak: AtomicUsize,
}

impl Bursts {
    pub(crate) fn opened(&self) {
        let n = self.open.fetch_add(1, Ordering::Relaxed) + 1;
        self.peak.fetch_max(n, Ordering::Relaxed);
    }

    /// Counts a closed connection; true when this close ends a burst and memory should be
    /// trimmed (exactly one close per burst gets true: it resets the peak).
    pub(crate) fn closed(&self) -> bool {
        let n = self.open.fetch_sub(1, Ordering::Relaxed).saturating_sub(1);
        let peak = self.peak.load(Ordering::Relaxed);
        peak >= TRIM_PEAK
            && n <= peak / 4
            && self
                .peak
                .compare_exchange(peak, n, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }
}

/// Returns the allocator's free pages to the kernel. Blocking (it walks every arena): call
/// it off the async workers, or once at start-up (the NameNode after loading its image).
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases memory malloc holds free; it has no preconditions.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_trim_per_burst_and_none_for_small_ones() {
        let b = Bursts::default();
        for _ in 0..100 {
            b.opened();
        }
        assert!(
            (0..100).all(|_| !b.closed()),
            "a small burst is not trimmed"
        );
        for _ in 0..1000 {
            b.opened();
        }
        let trims: usize = (0..1000).map(|_| usize::from(b.closed())).sum();
        assert_eq!(trims, 1, "one trim when 1,000 fall to 250");
        // The next burst is measured from what was left open then (0 here).
        for _ in 0..600 {
            b.opened();
        }
        let trims: usize = (0..600).map(|_| usize::from(b.closed())).sum();
        assert_eq!(trims, 1);
    }
}
