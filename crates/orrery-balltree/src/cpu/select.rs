//! Exact median selection and node bounds, sequential and parallel.
//!
//! A node compares records by one integer, the packed key (coordinate key, index) of
//! [`crate::split::Coord`]. Up to [`SMALL`] records are sorted by rank counting
//! ([`rank_sort`]); larger nodes use `select_nth_unstable_by_key` (introselect,
//! expected O(m)) and one sequential scan for the bounds. Nodes of at least
//! [`PAR_SELECT_MIN`] records (the
//! top levels of a large cloud, where there are fewer subtrees than cores) spread the
//! same work over the pool:
//!
//! - bounds: a chunked parallel min/max reduction;
//! - selection: sample select. 1024 evenly spaced records are sorted; two of them that
//!   bracket rank `k` (±48 sample ranks, three standard deviations of a sample rank)
//!   split the node three ways in one parallel pass (each chunk classifies into three
//!   local vectors, which are then copied back in parallel into disjoint slices). The
//!   middle part, about 9% of the node, holds rank `k` with probability > 99.7%, and
//!   is finished sequentially; otherwise the loop continues on the part that holds it.
//!
//! Which records end up where inside each side differs between the two paths, but the
//! *set* on each side of rank `k` is the same: the order (coordinate, index) is total.

use rayon::prelude::*;

use crate::split::{Bounds, Coord, Record, rank_key};

/// Nodes with at least this many records select and scan in parallel. The parallel
/// selection allocates and copies every record once per round, so it only pays where
/// a node is large and there are fewer subtrees than threads: the first levels of a
/// cloud of a million points, never the batches of 16384 points.
pub(crate) const PAR_SELECT_MIN: usize = 1 << 17;

/// Slices of at most this many records are sorted by [`rank_sort`].
const SMALL: usize = 8;
/// Records per chunk of the parallel passes.
const CHUNK: usize = 1 << 14;
/// Records in the sample of the parallel selection.
const SAMPLE: usize = 1024;
/// Sample ranks on either side of the target rank.
const SAMPLE_MARGIN: usize = 48;

/// The bounds of `records`, in parallel for large inputs.
#[inline(always)]
pub(crate) fn bounds<C: Coord, const N: usize>(records: &[Record<C::Key, N>]) -> Bounds<C::Key, N> {
    if records.len() < PAR_SELECT_MIN {
        return Bounds::of::<C>(records);
    }
    par_bounds::<C, N>(records)
}

/// [`bounds`] of a large node: a chunked parallel reduction.
#[inline(never)]
fn par_bounds<C: Coord, const N: usize>(records: &[Record<C::Key, N>]) -> Bounds<C::Key, N> {
    records.par_chunks(CHUNK).map(Bounds::of::<C>).reduce(Bounds::empty::<C>, Bounds::merge)
}

/// Reorders `records` so that `records[..k]` are the `k` smallest in the order of
/// dimension `dim` (coordinate, index) and `records[k..]` the rest.
#[inline(always)]
pub(crate) fn select<C: Coord, const N: usize>(records: &mut [Record<C::Key, N>], k: usize, dim: usize) {
    if k == 0 || k >= records.len() {
        return;
    }
    if records.len() >= PAR_SELECT_MIN {
        par_select::<C, N>(records, k, dim);
    } else {
        finish::<C, N>(records, k, dim);
    }
}

/// [`select`] of a large node: sample-select rounds in parallel until the part holding
/// rank `k` is small, then [`finish`].
#[inline(never)]
fn par_select<C: Coord, const N: usize>(records: &mut [Record<C::Key, N>], k: usize, dim: usize) {
    let mut v = records;
    let mut k = k;
    while v.len() >= PAR_SELECT_MIN {
        let (lo, hi) = pivots::<C, N>(v, k, dim);
        let (n_lo, n_mid) = three_way::<C, N>(v, lo, hi, dim);
        let (start, end) = if k < n_lo {
            (0, n_lo)
        } else if k < n_lo + n_mid {
            (n_lo, n_lo + n_mid)
        } else {
            (n_lo + n_mid, v.len())
        };
        if end - start == v.len() {
            break; // no progress (cannot happen with distinct sample pivots): finish sequentially
        }
        k -= start;
        v = &mut v[start..end];
        if k == 0 || k >= v.len() {
            return; // the boundary falls between two parts: already selected
        }
    }
    finish::<C, N>(v, k, dim);
}

/// The sequential selection of rank `k` (`0 < k < v.len()`).
#[inline(always)]
fn finish<C: Coord, const N: usize>(v: &mut [Record<C::Key, N>], k: usize, dim: usize) {
    if v.len() <= SMALL {
        rank_sort::<C, N>(v, dim);
    } else {
        v.select_nth_unstable_by_key(k, |r| rank_key::<C, N>(r, dim));
    }
}

/// Sorts a small slice by rank counting: each record's rank is the number of keys below
/// its own (`m^2` branch-free integer comparisons), then one move per record. For
/// `m <= 8` this beats the insertion sort that `select_nth_unstable` runs on short
/// slices (record shifts and mispredicted branches); at 16 the quadratic count costs
/// more instructions than it saves (259 M against 241 M per build of 16 x 16384).
#[inline(always)]
fn rank_sort<C: Coord, const N: usize>(v: &mut [Record<C::Key, N>], dim: usize) {
    let m = v.len();
    let mut keys = [C::Packed::default(); SMALL];
    for (key, r) in keys.iter_mut().zip(v.iter()) {
        *key = rank_key::<C, N>(r, dim);
    }
    let mut sorted = [v[0]; SMALL];
    for j in 0..m {
        let rank = keys[..m].iter().map(|&other| usize::from(other < keys[j])).sum::<usize>();
        sorted[rank] = v[j];
    }
    v.copy_from_slice(&sorted[..m]);
}

/// Two records of an evenly spaced sample that bracket rank `k`.
fn pivots<C: Coord, const N: usize>(v: &[Record<C::Key, N>], k: usize, dim: usize) -> (C::Packed, C::Packed) {
    let n = v.len();
    let mut sample: Vec<C::Packed> = (0..SAMPLE).map(|j| rank_key::<C, N>(&v[j * n / SAMPLE], dim)).collect();
    sample.sort_unstable();
    let r = k * SAMPLE / n;
    (sample[r.saturating_sub(SAMPLE_MARGIN)], sample[(r + SAMPLE_MARGIN).min(SAMPLE - 1)])
}

/// Partitions `v` into `< lo`, `[lo, hi]`, `> hi`; returns the sizes of the first two.
fn three_way<C: Coord, const N: usize>(
    v: &mut [Record<C::Key, N>],
    lo: C::Packed,
    hi: C::Packed,
    dim: usize,
) -> (usize, usize) {
    type Parts<R> = [Vec<R>; 3];
    let parts: Vec<Parts<Record<C::Key, N>>> = v
        .par_chunks(CHUNK)
        .map(|chunk| {
            let mut p: Parts<Record<C::Key, N>> = [Vec::new(), Vec::with_capacity(chunk.len() / 8), Vec::new()];
            for r in chunk {
                let key = rank_key::<C, N>(r, dim);
                let class = if key < lo {
                    0
                } else if key > hi {
                    2
                } else {
                    1
                };
                p[class].push(*r);
            }
            p
        })
        .collect();
    let n_lo = parts.iter().map(|p| p[0].len()).sum();
    let n_mid = parts.iter().map(|p| p[1].len()).sum();
    // Cut `v` into one destination slice per (class, chunk), in class-major order.
    let mut rest = v;
    let mut copies = Vec::with_capacity(parts.len() * 3);
    for class in 0..3 {
        for p in &parts {
            let (dst, tail) = std::mem::take(&mut rest).split_at_mut(p[class].len());
            copies.push((dst, &p[class]));
            rest = tail;
        }
    }
    copies.into_par_iter().for_each(|(dst, src)| dst.copy_from_slice(src));
    (n_lo, n_mid)
}
