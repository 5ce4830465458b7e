//! CRC32C of a run of equal-sized chunks, several chunks at once.
//!
//! One chunk's CRC is a chain of dependent `crc32` instructions: three cycles of latency each on
//! current x86-64 cores, which can start one per cycle. A 512-byte chunk on its own (too short
//! for the `crc32c` crate's three-way split) therefore runs at a third of the instruction's rate.
//! Four chunks interleaved keep the unit busy, making bulk verification of a block's data about
//! three times faster. Other targets, and CPUs without SSE 4.2, use the `crc32c` crate chunk by
//! chunk.
//!
//! Faster still, where the CPU has AVX-512 with VPCLMULQDQ and chunks are a multiple of 64
//! bytes (Hadoop's 512 included): a chunk is folded 64 bytes at a time by carry-less
//! multiplication, four 128-bit lanes per instruction, and only its last 16 bytes go through the
//! `crc32` instruction (about 1.5 times the four-lane `crc32` rate on the machine it was
//! measured on, as the vector unit is not limited to one 8-byte step per cycle).

/// Chunks computed together.
const LANES: usize = 4;

/// CRC32C of each `bpc`-byte chunk of `data` in order (the last chunk may be short), handed to
/// `each(index, crc)`; stops at the first chunk for which `each` returns false and returns its
/// index.
pub(crate) fn crc32c_chunks(
    data: &[u8],
    bpc: usize,
    mut each: impl FnMut(usize, u32) -> bool,
) -> Option<usize> {
    let bpc = bpc.max(1);
    let mut i = 0;
    let mut rest = data;
    #[cfg(target_arch = "x86_64")]
    if bpc.is_multiple_of(64) && fold::available() {
        while rest.len() >= bpc {
            let n = if rest.len() >= LANES * bpc { LANES } else { 1 };
            let (group, tail) = rest.split_at(n * bpc);
            let mut crcs = [0u32; LANES];
            // SAFETY: `fold::available` found AVX-512F, VPCLMULQDQ, PCLMULQDQ and SSE 4.2.
            unsafe { fold::chunks(group, bpc, &mut crcs[..n]) };
            for c in &crcs[..n] {
                if !each(i, *c) {
                    return Some(i);
                }
                i += 1;
            }
            rest = tail;
        }
    }
    if lanes_available() {
        while rest.len() >= LANES * bpc {
            let (group, tail) = rest.split_at(LANES * bpc);
            let crcs = lanes(group, bpc);
            for c in crcs {
                if !each(i, c) {
                    return Some(i);
                }
                i += 1;
            }
            rest = tail;
        }
    }
    for chunk in rest.chunks(bpc) {
        if !each(i, crc32c::crc32c(chunk)) {
            return Some(i);
        }
        i += 1;
    }
    None
}

#[cfg(target_arch = "x86_64")]
fn lanes_available() -> bool {
    std::arch::is_x86_feature_detected!("sse4.2")
}

#[cfg(not(target_arch = "x86_64"))]
fn lanes_available() -> bool {
    false
}

/// The CRCs of the `LANES` chunks of `group` (`LANES * bpc` bytes).
#[cfg(target_arch = "x86_64")]
fn lanes(group: &[u8], bpc: usize) -> [u32; LANES] {
    // SAFETY: called only after `lanes_available` found SSE 4.2 on this CPU.
    unsafe { x86::lanes(group, bpc) }
}

#[cfg(not(target_arch = "x86_64"))]
fn lanes(group: &[u8], bpc: usize) -> [u32; LANES] {
    let mut out = [0; LANES];
    for (o, c) in out.iter_mut().zip(group.chunks(bpc)) {
        *o = crc32c::crc32c(c);
    }
    out
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::{_mm_crc32_u8, _mm_crc32_u64};

    use super::LANES;

    #[target_feature(enable = "sse4.2")]
    pub(super) fn lanes(group: &[u8], bpc: usize) -> [u32; LANES] {
        let (a, rest) = group.split_at(bpc);
        let (b, rest) = rest.split_at(bpc);
        let (c, d) = rest.split_at(bpc);
        let (aw, at) = a.as_chunks::<8>();
        let (bw, bt) = b.as_chunks::<8>();
        let (cw, ct) = c.as_chunks::<8>();
        let (dw, dt) = d.as_chunks::<8>();
        let mut s = [u64::from(u32::MAX); LANES];
        for (((wa, wb), wc), wd) in aw.iter().zip(bw).zip(cw).zip(dw) {
            s[0] = _mm_crc32_u64(s[0], u64::from_le_bytes(*wa));
            s[1] = _mm_crc32_u64(s[1], u64::from_le_bytes(*wb));
            s[2] = _mm_crc32_u64(s[2], u64::from_le_bytes(*wc));
            s[3] = _mm_crc32_u64(s[3], u64::from_le_bytes(*wd));
        }
        let mut out = [0u32; LANES];
        for ((o, st), tail) in out.iter_mut().zip(s).zip([at, bt, ct, dt]) {
            // A chunk's state is 32 bits; the instruction only widens it.
            let mut v = st as u32;
            for &byte in tail {
                v = _mm_crc32_u8(v, byte);
            }
            *o = !v;
        }
        out
    }
}

/// CRC32C by folding: a chunk's 64-byte blocks are carried forward over the next block with
/// carry-less multiplications by `x^k mod P` (four 128-bit lanes in one 512-bit register), the
/// four lanes then folded into one and its 16 bytes finished with the `crc32` instruction.
#[cfg(target_arch = "x86_64")]
mod fold {
    use std::arch::x86_64::{
        __m128i, _mm_clmulepi64_si128, _mm_crc32_u64, _mm_cvtsi128_si64, _mm_extract_epi64,
        _mm_set_epi64x, _mm_xor_si128, _mm512_castsi512_si128, _mm512_clmulepi64_epi128,
        _mm512_extracti32x4_epi32, _mm512_loadu_si512, _mm512_set_epi64, _mm512_ternarylogic_epi64,
        _mm512_xor_si512,
    };

    /// CRC32C's polynomial, x^32 included, most significant bit first.
    const POLY: u64 = 0x1_1EDC_6F41;

    /// `x^e mod POLY`, bit-reflected as the `crc32` instruction and the folds read it.
    const fn x_pow_mod(e: u32) -> u64 {
        let mut r: u64 = 1;
        let mut i = 0;
        while i < e {
            r <<= 1;
            if r & (1 << 32) != 0 {
                r ^= POLY;
            }
            i += 1;
        }
        (r as u32).reverse_bits() as u64
    }

    /// The multipliers carrying a 128-bit lane `bits` forward: for its low and its high 64 bits.
    const fn over(bits: u32) -> (i64, i64) {
        (x_pow_mod(bits + 31) as i64, x_pow_mod(bits - 33) as i64)
    }

    const K512: (i64, i64) = over(512);
    const K384: (i64, i64) = over(384);
    const K256: (i64, i64) = over(256);
    const K128: (i64, i64) = over(128);

    pub(super) fn available() -> bool {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("vpclmulqdq")
            && std::arch::is_x86_feature_detected!("pclmulqdq")
            && std::arch::is_x86_feature_detected!("sse4.2")
    }

    /// The CRCs of the `out.len()` (at most four) `bpc`-byte chunks of `group`; `bpc` is a
    /// multiple of 64 and `group` holds `out.len() * bpc` bytes.
    ///
    /// # Safety
    /// The CPU has AVX-512F, VPCLMULQDQ, PCLMULQDQ and SSE 4.2 ([`available`]).
    #[target_feature(enable = "avx512f,vpclmulqdq,pclmulqdq,sse4.2")]
    pub(super) unsafe fn chunks(group: &[u8], bpc: usize, out: &mut [u32]) {
        const MAX: usize = super::LANES;
        let n = out.len().min(MAX);
        assert!(bpc >= 64 && bpc.is_multiple_of(64) && group.len() >= n * bpc);
        let blocks = bpc / 64;
        let k512 = _mm512_set_epi64(
            K512.1, K512.0, K512.1, K512.0, K512.1, K512.0, K512.1, K512.0,
        );
        // The CRC's initial all-ones state enters as the first four bytes flipped.
        let init = _mm512_set_epi64(0, 0, 0, 0, 0, 0, 0, 0xFFFF_FFFF);
        let load = |at: usize| {
            let block = &group[at..at + 64];
            // SAFETY: `block` is 64 readable bytes; the load is unaligned.
            unsafe { _mm512_loadu_si512(block.as_ptr().cast()) }
        };
        let mut acc = [init; MAX];
        for (l, a) in acc.iter_mut().enumerate().take(n) {
            *a = _mm512_xor_si512(load(l * bpc), init);
        }
        for b in 1..blocks {
            for (l, a) in acc.iter_mut().enumerate().take(n) {
                let lo = _mm512_clmulepi64_epi128(*a, k512, 0x00);
                let hi = _mm512_clmulepi64_epi128(*a, k512, 0x11);
                // lo ^ hi ^ next block
                *a = _mm512_ternarylogic_epi64(lo, hi, load(l * bpc + b * 64), 0x96);
            }
        }
        let carry = |v: __m128i, k: (i64, i64)| {
            let k = _mm_set_epi64x(k.1, k.0);
            _mm_xor_si128(
                _mm_clmulepi64_si128(v, k, 0x00),
                _mm_clmulepi64_si128(v, k, 0x11),
            )
        };
        for (o, a) in out.iter_mut().zip(acc) {
            let l0 = _mm512_castsi512_si128(a);
            let l1 = _mm512_extracti32x4_epi32(a, 1);
            let l2 = _mm512_extracti32x4_epi32(a, 2);
            let l3 = _mm512_extracti32x4_epi32(a, 3);
            let x = _mm_xor_si128(
                _mm_xor_si128(carry(l0, K384), carry(l1, K256)),
                _mm_xor_si128(carry(l2, K128), l3),
            );
            let lo = _mm_cvtsi128_si64(x) as u64;
            let hi = _mm_extract_epi64(x, 1) as u64;
            *o = !(_mm_crc32_u64(_mm_crc32_u64(0, lo), hi) as u32);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_as_one_chunk_at_a_time() {
        let data: Vec<u8> = (0..20_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for bpc in [1, 3, 7, 8, 100, 512, 513, 4096, 30_000] {
            for len in [0, 1, bpc, 4 * bpc, 4 * bpc + 1, 9 * bpc - 1, data.len()] {
                let d = &data[..len.min(data.len())];
                let want: Vec<u32> = d.chunks(bpc).map(crc32c::crc32c).collect();
                let mut got = Vec::new();
                assert_eq!(
                    crc32c_chunks(d, bpc, |i, c| {
                        assert_eq!(i, got.len());
                        got.push(c);
                        true
                    }),
                    None
                );
                assert_eq!(got, want, "bpc {bpc}, len {len}");
            }
        }
    }

    #[test]
    fn folded_chunks_match_the_crc32c_crate() {
        // Lengths around the four-chunk groups and the single-chunk rest, for chunk sizes the
        // fold takes (multiples of 64) and some it leaves to the crc32 lanes.
        let data: Vec<u8> = (0..70_000u32)
            .map(|i| (i.wrapping_mul(2_246_822_519) >> 11) as u8)
            .collect();
        for bpc in [64, 128, 512, 576, 1024, 4096, 65_536, 520] {
            for chunks in [0usize, 1, 2, 3, 4, 5, 7, 8, 9] {
                for extra in [0usize, 1, 63, 64, 100] {
                    let len = (chunks * bpc + extra.min(bpc - 1)).min(data.len());
                    let d = &data[..len];
                    let want: Vec<u32> = d.chunks(bpc).map(crc32c::crc32c).collect();
                    let mut got = Vec::new();
                    crc32c_chunks(d, bpc, |_, c| {
                        got.push(c);
                        true
                    });
                    assert_eq!(got, want, "bpc {bpc}, {chunks} chunks + {extra}");
                }
            }
        }
        // The fold itself, where this CPU has it (the dispatcher above may have used it too).
        #[cfg(target_arch = "x86_64")]
        if fold::available() {
            for n in 1..=LANES {
                let d = &data[..n * 512];
                let mut got = [0u32; LANES];
                // SAFETY: `fold::available` said the CPU has what it needs.
                unsafe { fold::chunks(d, 512, &mut got[..n]) };
                let want: Vec<u32> = d.chunks(512).map(crc32c::crc32c).collect();
                assert_eq!(&got[..n], &want[..], "{n} chunks");
            }
        }
        // Every bit of a chunk matters, in each of the four lanes.
        let mut d = vec![0u8; 4 * 512 + 512];
        for bit in (0..d.len() * 8).step_by(61) {
            d[bit / 8] ^= 1 << (bit % 8);
            let want: Vec<u32> = d.chunks(512).map(crc32c::crc32c).collect();
            let mut got = Vec::new();
            crc32c_chunks(&d, 512, |_, c| {
                got.push(c);
                true
            });
            assert_eq!(got, want, "bit {bit}");
            d[bit / 8] ^= 1 << (bit % 8);
        }
    }

    #[test]
    fn stops_where_asked() {
        let data = vec![7u8; 512 * 10];
        assert_eq!(crc32c_chunks(&data, 512, |i, _| i != 5), Some(5));
        assert_eq!(crc32c_chunks(&data, 512, |i, _| i != 9), Some(9));
    }
}
