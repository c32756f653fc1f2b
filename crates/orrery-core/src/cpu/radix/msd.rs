//! The MSD side of the sort: the parallel level that splits pairs in DRAM into
//! cache-sized buckets, and the sequential dispatcher that sorts one bucket in cache.
//!
//! Both work on the key bits that vary: an OR and an AND of the (range-masked) keys give
//! the bits that are not the same for every key, so a digit is never spent on bits that
//! are constant (Cornerstone keys of points in a small box share many high bits; a
//! bucket shares every bit above its parent's digit).
//!
//! Stability: a counting pass reads its source in index order and gives every
//! (digit, chunk) a run of the destination in digit-major, chunk-minor order, so pairs
//! of equal digit keep their order; each bucket is then sorted by a stable method on
//! lower bits only.

use std::ops::Range;

use rayon::prelude::*;

use super::store::{RawStore, Store};
use super::{Ctx, lsd};

/// `floor(log2(n))` for `n >= 1` (0 for 0).
fn floor_log2(n: usize) -> u32 {
    n.checked_ilog2().unwrap_or(0)
}

/// The chunk ranges of a parallel pass over `n` pairs.
fn chunks(n: usize, chunk: usize) -> impl IndexedParallelIterator<Item = Range<usize>> {
    (0..n.div_ceil(chunk)).into_par_iter().map(move |c| c * chunk..((c + 1) * chunk).min(n))
}

/// Copies `src` into `dst` (same length) in parallel chunks.
fn par_copy<D: Store, S: Store>(dst: D, src: S, chunk: usize) {
    let n = src.len();
    let lens = (0..n.div_ceil(chunk)).map(|c| chunk.min(n - c * chunk));
    let pieces: Vec<(D, S)> = dst.pieces(lens.clone()).into_iter().zip(src.pieces(lens)).collect();
    pieces.into_par_iter().for_each(|(mut d, s)| d.copy_from(&s));
}

/// A digit: `width` bits from bit `shift` up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Digit {
    shift: u32,
    width: u32,
}

impl Digit {
    /// The digit of `key`.
    #[inline]
    fn of(self, key: u64) -> usize {
        ((key >> self.shift) & ((1u64 << self.width) - 1)) as usize
    }
}

/// Counts of `digit` over `range` of `s`, with the OR and AND of the masked keys.
fn count_chunk<S: Store>(s: &S, range: Range<usize>, mask: u64, digit: Digit) -> (u64, u64, Vec<usize>) {
    let (mut or, mut and) = (0u64, u64::MAX);
    let mut counts = vec![0usize; 1 << digit.width];
    for i in range {
        let key = s.key(i);
        counts[digit.of(key)] += 1;
        or |= key & mask;
        and &= key & mask;
    }
    (or, and, counts)
}

/// Sorts the pairs of `x` with `y` as scratch (same length), the result in `y` when
/// `into_y`, else in `x`, where no key bit above `top` varies: one parallel counting
/// pass on the highest varying digit, then every bucket on its own in parallel, largest
/// first — by another parallel level when it is larger than [`Ctx::par_bucket`]
/// (clustered keys), else by [`sort_in_cache`].
///
/// The first read of the keys finds the varying bits and, in the same pass, counts the
/// digit that the level would use if bit `top` varies (the common case: a range's top
/// bit for uniform keys, the bit below the parent's digit in a bucket); only when that
/// guess is wrong are the keys read again to count the right digit.
pub(super) fn sort_parallel<X: Store, Y: Store>(x: X, mut y: Y, into_y: bool, top: u32, ctx: &Ctx) {
    let n = x.len();
    let policy = &ctx.policy;
    let chunk = policy.min_chunk.max(n.div_ceil(policy.chunks_per_thread * ctx.threads));
    let mask = ctx.mask;
    // Buckets of about `bucket_target` pairs, at least `min_parallel_bits` (a level of
    // few buckets barely shrinks clustered keys, and each level is a pass over DRAM)
    // and at most `max_parallel_bits` bits.
    let width_for_n = floor_log2(n / policy.bucket_target).clamp(policy.min_parallel_bits, policy.max_parallel_bits);
    let guess = Digit { shift: (top + 1).saturating_sub(width_for_n), width: width_for_n.min(top + 1) };
    let first: Vec<(u64, u64, Vec<usize>)> = chunks(n, chunk).map(|r| count_chunk(&x, r, mask, guess)).collect();
    let (or, and) = first.iter().fold((0, u64::MAX), |(o, a), &(o2, a2, _)| (o | o2, a & a2));
    let varying = or ^ and;
    if varying == 0 {
        // Every key is equal on the range: the input order is the sorted order.
        if into_y {
            par_copy(y, x, chunk);
        }
        return;
    }
    let (hi, lo) = (varying.ilog2(), varying.trailing_zeros());
    let span = hi - lo + 1;
    let width = width_for_n.min(span);
    let digit = Digit { shift: hi + 1 - width, width };
    let shift = digit.shift;
    let buckets = 1usize << width;
    // Per-chunk counts: each chunk counts into its own local array and hands it back
    // whole, so no two threads write one cache line.
    let counts: Vec<Vec<usize>> = if digit == guess {
        first.into_iter().map(|(_, _, c)| c).collect()
    } else {
        drop(first);
        chunks(n, chunk).map(|r| count_chunk(&x, r, mask, digit).2).collect()
    };
    // Start offsets, digit-major and chunk-minor (stable across chunks).
    let mut starts: Vec<Vec<usize>> = vec![vec![0; buckets]; counts.len()];
    let mut lens = vec![0usize; buckets];
    let mut running = 0usize;
    for d in 0..buckets {
        let before = running;
        for (c, count) in counts.iter().enumerate() {
            starts[c][d] = running;
            running += count[d];
        }
        lens[d] = running - before;
    }
    drop(counts);
    {
        let out = y.raw();
        chunks(n, chunk).zip(starts.into_par_iter()).for_each(|(r, mut next)| {
            for i in r {
                let pair = x.get(i);
                let d = digit.of(pair.0);
                // SAFETY: `next[d]` walks the run this chunk owns for digit `d` (its
                // count, starting at its digit-major chunk-minor offset); the runs of
                // all (digit, chunk) are disjoint and tile `0..n`, so each position of
                // `y` is written once, by one thread, and nothing reads `y` meanwhile.
                unsafe { out.put(next[d], pair) };
                next[d] += 1;
            }
        });
    }

    if shift == lo {
        // The digit covered every varying bit: each bucket holds one key value.
        if !into_y {
            par_copy(x, y, chunk);
        }
        return;
    }
    let mut tasks: Vec<(Y, X)> = y.pieces(lens.iter().copied()).into_iter().zip(x.pieces(lens)).collect();
    tasks.sort_by_key(|(b, _)| std::cmp::Reverse(b.len()));
    tasks.into_par_iter().for_each(|(b, scratch)| {
        if b.len() > ctx.par_bucket {
            sort_parallel(b, scratch, !into_y, shift - 1, ctx);
        } else {
            sort_in_cache(b, scratch, !into_y, shift - 1, ctx);
        }
    });
}

/// Sorts the pairs of `x` on one thread with `y` as scratch (same length), the result
/// in `y` when `into_y`, else in `x`, where no key bit above `top` varies.
///
/// Up to [`super::Policy::insertion_max`] pairs: an insertion sort. Otherwise, on the
/// bits that vary in this bucket: an LSD sort when it takes at most
/// [`super::Policy::lsd_max_passes`] passes of digits no wider than [`digit_bits`]
/// allows, else one MSD counting pass on the highest varying digit and each sub-bucket
/// again (a sub-bucket of one pair is done, copied when it is on the wrong side).
pub(super) fn sort_in_cache<X: Store, Y: Store>(mut x: X, mut y: Y, into_y: bool, top: u32, ctx: &Ctx) {
    let n = x.len();
    let policy = &ctx.policy;
    if n <= policy.insertion_max {
        if into_y {
            y.copy_from(&x);
            lsd::insertion_sort(&mut y, ctx.mask);
        } else {
            lsd::insertion_sort(&mut x, ctx.mask);
        }
        return;
    }
    // As in `sort_parallel`: the read that finds the varying bits also counts the
    // digit an MSD pass would use if bit `top` varies.
    let cap = digit_bits(n, ctx);
    let guess = Digit { shift: (top + 1).saturating_sub(cap), width: cap.min(top + 1) };
    let mut next = vec![0u32; 1 << guess.width];
    let (mut or, mut and) = (0u64, u64::MAX);
    for i in 0..n {
        let key = x.key(i);
        next[guess.of(key)] += 1;
        or |= key & ctx.mask;
        and &= key & ctx.mask;
    }
    let varying = or ^ and;
    if varying == 0 {
        if into_y {
            y.copy_from(&x);
        }
        return;
    }
    let (hi, lo) = (varying.ilog2(), varying.trailing_zeros());
    let span = hi - lo + 1;
    let passes = span.div_ceil(cap);
    if passes <= policy.lsd_max_passes {
        lsd::sort(x, y, into_y, lo, span, passes, ctx);
        return;
    }
    // One MSD pass on the top varying bits (`span > cap` unless LSD is turned off).
    let width = cap.min(span);
    let digit = Digit { shift: hi + 1 - width, width };
    if digit != guess {
        next = vec![0u32; 1 << width];
        for i in 0..n {
            next[digit.of(x.key(i))] += 1;
        }
    }
    let shift = digit.shift;
    let digit_mask = (1u64 << width) - 1;
    let lens: Vec<u32> = next.clone();
    lsd::counts_to_offsets(&mut next);
    lsd::scatter(&x, &mut y, u64::MAX, shift, digit_mask, &mut next);
    if shift == lo {
        // The digit covered every varying bit: each bucket holds one key value.
        if !into_y {
            x.copy_from(&y);
        }
        return;
    }
    let (mut rest_y, mut rest_x) = (y, x);
    for len in lens {
        let (b, tail_y) = rest_y.split_at(len as usize);
        let (mut scratch, tail_x) = rest_x.split_at(len as usize);
        (rest_y, rest_x) = (tail_y, tail_x);
        match len {
            0 => {}
            1 => {
                if !into_y {
                    scratch.copy_from(&b);
                }
            }
            _ => sort_in_cache(b, scratch, !into_y, shift - 1, ctx),
        }
    }
}

/// The widest digit worth a counting pass over `n` pairs in cache: `2^bits` buckets of
/// about [`super::Policy::child_target`] pairs, so the per-digit bookkeeping (`2^bits`
/// counters cleared and scanned) stays a small fraction of the pass; at least 1, at most
/// [`super::Policy::max_cache_bits`].
fn digit_bits(n: usize, ctx: &Ctx) -> u32 {
    floor_log2(n / ctx.policy.child_target).clamp(1, ctx.policy.max_cache_bits)
}
