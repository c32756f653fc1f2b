//! The median split of one node by a histogram of its split coordinate, out of place.
//!
//! `select_nth_unstable` on records of 16 to 68 bytes partitions with a branchy Hoare
//! loop (std keeps its branch-free partition for elements of at most 8 bytes) and ends
//! every selection in an insertion sort: on random points half of its comparisons
//! mispredict, and the selection was more than half of the build. This split moves every
//! record exactly once and branch-free instead:
//!
//! 1. **histogram**: the split coordinate's key, relative to the node's minimum and
//!    shifted to at most [`MAX_BUCKET_BITS`] bits, counts records per bucket. The
//!    bucket is a monotone function of the key, so every record of a lower bucket
//!    precedes every record of a higher bucket in the order (coordinate, index);
//! 2. **the median's bucket**: the prefix sum crossing rank `k`;
//! 3. **scatter**: each record goes to `dst` in one of three regions (buckets below,
//!    the median's bucket, above), its position chosen by conditional moves, so the
//!    loop has no data-dependent branch;
//! 4. **finish**: the median's bucket (a few records for points spread over the node)
//!    is selected exactly by packed key, in place in `dst`.
//!
//! Keys are order-preserving integers of the floating-point bits, so on a node whose
//! coordinates span many binades (the root of points in `[0, 1)`) the buckets are
//! uneven; the median's bucket then holds a few percent of the node, still finished by
//! the exact selection. Ties on the coordinate share a bucket and are ordered by index
//! there: the split is the same set as any other exact selection's.

use std::cell::Cell;
use std::hint::select_unpredictable;

use super::select;
use crate::split::{Coord, Record};

/// The largest histogram: 2^11 buckets (8 KiB of counters, in L1).
const MAX_BUCKET_BITS: u32 = 11;
/// Histograms up to 2^6 buckets live in a smaller array.
const SMALL_BUCKET_BITS: u32 = 6;
/// The smallest histogram.
const MIN_BUCKET_BITS: u32 = 3;

/// Buckets for a node of `m` records: about four records per bucket, so the counters
/// cost a fraction of the record passes and the median's bucket holds a few records.
fn bucket_bits(m: usize) -> u32 {
    (m.max(1).ilog2().saturating_sub(2)).clamp(MIN_BUCKET_BITS, MAX_BUCKET_BITS)
}

/// A median's bucket of more records than this is split again by its own histogram
/// (the root of points spanning many binades); smaller ones are selected directly.
const MID_SELECT_MAX: usize = 32;

/// Writes the records of `src` to `dst` (same length) so that `dst[..k]` holds the `k`
/// smallest in the order (coordinate `dim`, index) and `dst[k..]` the rest. `lo` and
/// `hi` are the smallest and largest key of dimension `dim` in `src`. `src` is left
/// in an unspecified order (it serves as scratch).
///
/// Inlined into each instruction-set level's recursion ([`super::level`]); the rare
/// second histogram of a crowded median's bucket is an ordinary call.
#[inline(always)]
pub(crate) fn split_into<C: Coord, const N: usize>(
    src: &mut [Record<C::Key, N>],
    dst: &mut [Record<C::Key, N>],
    dim: usize,
    k: usize,
    (lo, hi): (C::Key, C::Key),
) {
    let m = src.len();
    debug_assert_eq!(m, dst.len());
    debug_assert!(k < m);
    let bits = bucket_bits(m);
    let span_bits = u64::BITS - C::rel(hi, lo).leading_zeros();
    let shift = span_bits.saturating_sub(bits);
    let mut run = |counts: &mut [u32]| scatter::<C, N>(src, dst, dim, k, lo, shift, counts);

    // Zero only about the counters in use: most nodes are small, and zeroing 2^11
    // counters (or calling memset for 2^6) would cost more than their histogram. The
    // largest tier is this thread's [`LARGE_COUNTS`], zeroed after use over the buckets
    // used (a stack array would be zeroed whole: 8 KiB for a node of 512 records). It is
    // taken out of its cell rather than used inside `LocalKey::with`, whose closure
    // would be a function of its own, not inlined into the instruction-set level's
    // recursion (cachegrind showed it at 6% of a build, at the baseline level).
    let (below, mid) = if bits <= MIN_BUCKET_BITS {
        run(&mut [0u32; 1 << MIN_BUCKET_BITS])
    } else if bits <= SMALL_BUCKET_BITS {
        run(&mut [0u32; 1 << SMALL_BUCKET_BITS][..1 << bits])
    } else {
        let mut counts = LARGE_COUNTS.take().unwrap_or_else(|| Box::new([0; 1 << MAX_BUCKET_BITS]));
        let used = &mut counts[..1 << bits];
        let found = run(used);
        used.fill(0);
        LARGE_COUNTS.set(Some(counts));
        found
    };
    let (rank, range) = (k - below, below..below + mid);
    if mid > MID_SELECT_MAX && rank > 0 {
        let (mid_lo, mid_hi) = key_range::<C, N>(&dst[range.clone()], dim);
        if mid_lo < mid_hi {
            // Distinct keys fall into at least two of the next histogram's buckets, so
            // the recursion shrinks; the node's own slice of `src` is free scratch now.
            split_again::<C, N>(&mut dst[range.clone()], &mut src[range.clone()], dim, rank, (mid_lo, mid_hi));
            dst[range.clone()].copy_from_slice(&src[range]);
            return;
        }
    }
    select::select::<C, N>(&mut dst[range], rank, dim);
}

/// [`split_into`] as a call of its own: its recursion (an `#[inline(always)]` function
/// cannot call itself).
#[inline(never)]
fn split_again<C: Coord, const N: usize>(
    src: &mut [Record<C::Key, N>],
    dst: &mut [Record<C::Key, N>],
    dim: usize,
    k: usize,
    range: (C::Key, C::Key),
) {
    split_into::<C, N>(src, dst, dim, k, range);
}

thread_local! {
    /// This thread's counters for the largest histograms, all zero between uses; `None`
    /// before the first use (and while in use: a nested use would get fresh counters).
    static LARGE_COUNTS: Cell<Option<Box<[u32; 1 << MAX_BUCKET_BITS]>>> = const { Cell::new(None) };
}

/// Steps 1 to 3 of [`split_into`] with zeroed `counts` (one per bucket of
/// `rel(key, lo) >> shift`): returns the records below the median's bucket and in it,
/// which `dst` now holds in that order, followed by the rest.
#[inline(always)]
fn scatter<C: Coord, const N: usize>(
    src: &[Record<C::Key, N>],
    dst: &mut [Record<C::Key, N>],
    dim: usize,
    k: usize,
    lo: C::Key,
    shift: u32,
    counts: &mut [u32],
) -> (usize, usize) {
    let bucket = |r: &Record<C::Key, N>| (C::rel(r.k[dim], lo) >> shift) as usize;
    for r in src {
        counts[bucket(r)] += 1;
    }
    // The median's bucket: `below` records in lower buckets, `below <= k < below + mid`.
    let (mut median, mut below) = (0, 0);
    while below + counts[median] as usize <= k {
        below += counts[median] as usize;
        median += 1;
    }
    let mid = counts[median] as usize;

    let (mut n_lo, mut n_mid, mut n_hi) = (0, below, below + mid);
    for r in src {
        let b = bucket(r);
        let (is_lo, is_hi) = (b < median, b > median);
        let pos = select_unpredictable(is_lo, n_lo, select_unpredictable(is_hi, n_hi, n_mid));
        dst[pos] = *r;
        n_lo += usize::from(is_lo);
        n_hi += usize::from(is_hi);
        n_mid += usize::from(!is_lo && !is_hi);
    }
    debug_assert_eq!((n_lo, n_mid, n_hi), (below, below + mid, src.len()));
    (below, mid)
}

/// The smallest and largest key of dimension `dim` in `records`.
#[inline(always)]
fn key_range<C: Coord, const N: usize>(records: &[Record<C::Key, N>], dim: usize) -> (C::Key, C::Key) {
    records.iter().fold((C::KEY_MAX, C::KEY_MIN), |(lo, hi), r| (lo.min(r.k[dim]), hi.max(r.k[dim])))
}
