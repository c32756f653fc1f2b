//! The in-cache end of the sort: an LSD radix sort for buckets whose varying bits fit in
//! a few digits, a stable insertion sort for tiny buckets, and the sequential counting
//! pass both radix sorts are made of.
//!
//! All of it runs on one thread over one bucket that the parallel MSD level has made
//! small enough for the core's cache, so its passes cost cache bandwidth, not DRAM's.

use super::Ctx;
use super::store::Store;

/// Stable insertion sort of `s` by `key & mask`: each pair moves left past strictly
/// greater keys only, so equal keys keep their order. For buckets of up to
/// [`super::Policy::insertion_max`] pairs.
pub(super) fn insertion_sort<S: Store>(s: &mut S, mask: u64) {
    for i in 1..s.len() {
        let cur = s.get(i);
        let key = cur.0 & mask;
        let mut j = i;
        while j > 0 && s.key(j - 1) & mask > key {
            s.set(j, s.get(j - 1));
            j -= 1;
        }
        if j != i {
            s.set(j, cur);
        }
    }
}

/// Turns digit counts into exclusive start offsets in place.
pub(super) fn counts_to_offsets(counts: &mut [u32]) {
    let mut sum = 0u32;
    for c in counts {
        let n = *c;
        *c = sum;
        sum += n;
    }
}

/// One stable counting pass: pair `i` of `src` goes to `dst[next[d]]` with
/// `d = (key & key_mask) >> shift & digit_mask`, `next[d]` then advancing. `next` holds
/// each digit's start offset on entry (from [`counts_to_offsets`]) and its end on
/// return. `key_mask` is the sort's bit range: a digit that reaches past it must not see
/// the bits beyond.
#[inline]
pub(super) fn scatter<S: Store, D: Store>(
    src: &S,
    dst: &mut D,
    key_mask: u64,
    shift: u32,
    digit_mask: u64,
    next: &mut [u32],
) {
    for i in 0..src.len() {
        let pair = src.get(i);
        let d = (((pair.0 & key_mask) >> shift) & digit_mask) as usize;
        dst.set(next[d] as usize, pair);
        next[d] += 1;
    }
}

/// LSD radix sort of the pairs of `x` whose varying key bits (within the sort's range)
/// lie in `lo..lo + span`, in `passes` digits of `ceil(span / passes)` bits, `y` the
/// scratch; the result ends in `y` when `into_y`, else in `x`.
///
/// One read pass counts every digit at once. An inner digit can be constant although
/// bits on both sides of it vary; its pass is skipped. When the passes leave the pairs on
/// the other side than asked, one copy moves them.
pub(super) fn sort<X: Store, Y: Store>(mut x: X, mut y: Y, into_y: bool, lo: u32, span: u32, passes: u32, ctx: &Ctx) {
    let n = x.len();
    debug_assert!(u32::try_from(n).is_ok() && passes >= 1 && span >= 1);
    let width = span.div_ceil(passes);
    let buckets = 1usize << width;
    let digit_mask = (1u64 << width) - 1;
    let mut counts = vec![0u32; buckets * passes as usize];
    for i in 0..n {
        let key = x.key(i) & ctx.mask;
        for p in 0..passes {
            let d = ((key >> (lo + p * width)) & digit_mask) as usize;
            counts[p as usize * buckets + d] += 1;
        }
    }
    let mut in_x = true;
    for (p, next) in counts.chunks_exact_mut(buckets).enumerate() {
        if next.contains(&(n as u32)) {
            continue;
        }
        counts_to_offsets(next);
        let shift = lo + p as u32 * width;
        if in_x {
            scatter(&x, &mut y, ctx.mask, shift, digit_mask, next);
        } else {
            scatter(&y, &mut x, ctx.mask, shift, digit_mask, next);
        }
        in_x = !in_x;
    }
    match (in_x, into_y) {
        (true, true) => y.copy_from(&x),
        (false, false) => x.copy_from(&y),
        _ => {}
    }
}
