//! The previous sort (until issue 18), kept for the tests: a chunk-parallel LSD radix
//! sort of `(u64 key, u32 value)` pairs, one DRAM pass per 8-bit digit. The new sort
//! must give exactly its permutation, and `timing_against_legacy` compares the two.
//!
//! Each pass sorts by one 8-bit digit: every chunk of [`CHUNK`] pairs counts its digits
//! in parallel, one sequential pass turns the `256 x chunks` counts into stable output
//! offsets (digit-major, chunk-minor), and every chunk scatters its pairs in order.
//! Passes whose digit is equal for all keys are skipped (their histogram has one full
//! bucket) — with Cornerstone keys in a small box many high digits are. The bit range
//! restricts which digits are looked at; the last digit is masked to the range's end.
//! Pairs are kept packed as 16-byte `(key, value)` during the passes so each scatter
//! writes one cache line fragment per element instead of two.

use std::ops::Range;

use rayon::prelude::*;

const RADIX_BITS: u32 = 8;
const BUCKETS: usize = 1 << RADIX_BITS;
const CHUNK: usize = 1 << 16;

#[derive(Clone, Copy, Default)]
#[repr(C)]
struct Pair {
    key: u64,
    value: u32,
}

/// A raw pointer that may cross threads: each chunk writes a disjoint set of slots.
#[derive(Clone, Copy)]
struct SharedMut(*mut Pair);
// SAFETY: used only to scatter into provably disjoint positions (see `scatter_pass`).
unsafe impl Send for SharedMut {}
// SAFETY: as above.
unsafe impl Sync for SharedMut {}

/// Sorts pairs stably by key bits `bits` (validated by the caller: `start <= end <= 64`).
pub(super) fn sort_pairs(keys: &mut [u64], values: &mut [u32], bits: Range<u32>) {
    let n = keys.len();
    if n < 2 || bits.start >= bits.end {
        return;
    }
    let mut src: Vec<Pair> = keys.par_iter().zip(values.par_iter()).map(|(&key, &value)| Pair { key, value }).collect();
    let mut dst: Vec<Pair> = vec![Pair::default(); n];
    let mut shift = bits.start;
    while shift < bits.end {
        let width = (bits.end - shift).min(RADIX_BITS);
        let mask = (1u64 << width) - 1;
        if scatter_pass(&src, &mut dst, shift, mask) {
            std::mem::swap(&mut src, &mut dst);
        }
        shift += width;
    }
    keys.par_iter_mut().zip(values.par_iter_mut()).zip(src.par_iter()).for_each(|((k, v), p)| {
        *k = p.key;
        *v = p.value;
    });
}

/// One stable counting pass on digit `(key >> shift) & mask`. Returns false (and
/// writes nothing) when every key has the same digit.
fn scatter_pass(src: &[Pair], dst: &mut [Pair], shift: u32, mask: u64) -> bool {
    let digit = |p: &Pair| ((p.key >> shift) & mask) as usize;
    let histograms: Vec<[usize; BUCKETS]> = src
        .par_chunks(CHUNK)
        .map(|chunk| {
            let mut h = [0usize; BUCKETS];
            for p in chunk {
                h[digit(p)] += 1;
            }
            h
        })
        .collect();
    let mut totals = [0usize; BUCKETS];
    for h in &histograms {
        for (t, c) in totals.iter_mut().zip(h) {
            *t += c;
        }
    }
    if totals.contains(&src.len()) {
        return false;
    }
    // Offsets digit-major, chunk-minor: stability across chunks.
    let mut offsets = vec![[0usize; BUCKETS]; histograms.len()];
    let mut running = 0usize;
    for d in 0..BUCKETS {
        for (c, h) in histograms.iter().enumerate() {
            offsets[c][d] = running;
            running += h[d];
        }
    }
    let out = SharedMut(dst.as_mut_ptr());
    src.par_chunks(CHUNK).zip(offsets.into_par_iter()).for_each(|(chunk, mut next)| {
        let out = &out;
        for p in chunk {
            let d = digit(p);
            // SAFETY: `next[d]` walks the half-open range this chunk owns for digit `d`
            // (its count in `histograms`), ranges of different (digit, chunk) are
            // disjoint and all lie in `0..dst.len()`, so every slot is written by exactly
            // one thread exactly once.
            unsafe { out.0.add(next[d]).write(*p) };
            next[d] += 1;
        }
    });
    true
}
