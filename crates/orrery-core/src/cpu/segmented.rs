//! The CPU executor's searches, histogram and segmented (CSR) primitives: the references the GPU kernels are tested against.
//!
//! Segments come from [`segment_bounds`] (the same clamping rule on every executor). A
//! segmented scan assigns each element to `seg(i) = upper_bound(offsets, i) - 1` (the
//! shared search) when `i` lies in that segment's bounds, and to no segment otherwise,
//! so even non-monotone offsets give one defined answer; reductions and top-k read each
//! segment's range.

use rayon::prelude::*;

use super::{CHUNK, CpuExecutor};
use crate::element::Element;
use crate::error::Result;
use crate::executor::{
    Order, ReduceOp, SEGMENT_TILE, ScanKind, check_bounds, check_histogram, check_segmented_reduce,
    check_segmented_scan, check_top_k, segment_bounds, upper_bound_one,
};

/// Lower or upper bounds of every query.
pub(crate) fn bounds<T: Element>(
    exec: &CpuExecutor,
    sorted: &[T],
    queries: &[T],
    output: &mut [u32],
    one: fn(&[T], T) -> u32,
) -> Result<()> {
    check_bounds(sorted.len(), queries.len(), output.len())?;
    exec.install(|| output.par_iter_mut().zip(queries.par_iter()).for_each(|(o, &q)| *o = one(sorted, q)));
    Ok(())
}

/// Histogram of `values` into `output.len()` bins.
pub(crate) fn histogram(exec: &CpuExecutor, values: &[u32], output: &mut [u32]) -> Result<()> {
    check_histogram(output.len())?;
    let bins = output.len();
    let partial = exec.install(|| {
        values
            .par_chunks(CHUNK)
            .map(|chunk| {
                let mut counts = vec![0u32; bins];
                for &v in chunk {
                    if let Some(c) = counts.get_mut(v as usize) {
                        *c = c.wrapping_add(1);
                    }
                }
                counts
            })
            .reduce(
                || vec![0u32; bins],
                |mut a, b| {
                    a.iter_mut().zip(b).for_each(|(x, y)| *x = x.wrapping_add(y));
                    a
                },
            )
    });
    output.copy_from_slice(&partial);
    Ok(())
}

/// The segment element `i` belongs to under the segmented-scan rule, or `None`.
fn segment_of(offsets: &[u32], i: usize, n: usize) -> Option<usize> {
    let s = (upper_bound_one(offsets, i as u32) as usize).checked_sub(1)?;
    if s + 1 >= offsets.len() {
        return None;
    }
    let (start, end) = segment_bounds(offsets, s, n);
    (start <= i && i < end).then_some(s)
}

/// Segmented scan: element `i` of segment `s` (by the search rule) gets the sum of the
/// elements of `s` before it (and itself, inclusive), in index order; elements of no
/// segment get 0. For CSR offsets this is the usual segmented scan.
pub(crate) fn scan(
    exec: &CpuExecutor,
    input: &[u32],
    offsets: &[u32],
    kind: ScanKind,
    output: &mut [u32],
) -> Result<()> {
    let segments = check_segmented_scan(input.len(), offsets.len(), output.len())?;
    let n = input.len();
    let seg: Vec<Option<usize>> = exec.install(|| (0..n).into_par_iter().map(|i| segment_of(offsets, i, n)).collect());
    let mut acc = vec![0u32; segments];
    for i in 0..n {
        let Some(s) = seg[i] else {
            output[i] = 0;
            continue;
        };
        let before = acc[s];
        acc[s] = before.wrapping_add(input[i]);
        output[i] = match kind {
            ScanKind::Exclusive => before,
            ScanKind::Inclusive => acc[s],
        };
    }
    Ok(())
}

/// Segmented reduction in the fixed order of [`SEGMENT_TILE`] tiles.
pub(crate) fn reduce<T: Element>(
    exec: &CpuExecutor,
    input: &[T],
    offsets: &[u32],
    op: ReduceOp,
    output: &mut [T],
) -> Result<()> {
    check_segmented_reduce(input.len(), offsets.len(), output.len())?;
    let n = input.len();
    exec.install(|| {
        output.par_iter_mut().enumerate().for_each(|(s, out)| {
            let (start, end) = segment_bounds(offsets, s, n);
            *out = input[start..end]
                .chunks(SEGMENT_TILE)
                .map(|tile| tile.iter().fold(op.identity::<T>(), |a, &v| op.apply(a, v)))
                .fold(op.identity::<T>(), |a, v| op.apply(a, v));
        });
    });
    Ok(())
}

/// Segmented top-k by [`Element::order_key`], ties by position.
pub(crate) fn top_k<T: Element>(
    exec: &CpuExecutor,
    keys: &[T],
    offsets: &[u32],
    k: u32,
    order: Order,
    indices: &mut [u32],
    top_keys: &mut [T],
) -> Result<()> {
    check_top_k(keys.len(), offsets.len(), k, indices.len(), top_keys.len())?;
    let k = k as usize;
    let n = keys.len();
    let pad = match order {
        Order::Smallest => T::HIGHEST,
        Order::Largest => T::LOWEST,
    };
    exec.install(|| {
        indices.par_chunks_mut(k).zip(top_keys.par_chunks_mut(k)).enumerate().for_each(|(s, (idx, tk))| {
            let (start, end) = segment_bounds(offsets, s, n);
            // Sort key: the order key (complemented for Largest), then the position.
            let mut cand: Vec<(u64, u32)> = (start..end)
                .map(|p| {
                    let key = keys[p].order_key();
                    (if order == Order::Largest { !key } else { key }, p as u32)
                })
                .collect();
            if cand.len() > k {
                cand.select_nth_unstable(k - 1);
                cand.truncate(k);
            }
            cand.sort_unstable();
            for j in 0..k {
                if let Some(&(_, p)) = cand.get(j) {
                    idx[j] = p;
                    tk[j] = keys[p as usize];
                } else {
                    idx[j] = u32::MAX;
                    tk[j] = pad;
                }
            }
        });
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_segments_follow_the_search_rule() {
        let exec = CpuExecutor::new();
        let input = [1u32, 2, 3, 4, 5, 6];
        let mut out = [9u32; 6];
        // Segments [0, 2), [2, 2) (empty), [2, 5); element 5 is in none.
        scan(&exec, &input, &[0, 2, 2, 5], ScanKind::Exclusive, &mut out).unwrap();
        assert_eq!(out, [0, 1, 0, 3, 7, 0]);
        scan(&exec, &input, &[0, 2, 2, 5], ScanKind::Inclusive, &mut out).unwrap();
        assert_eq!(out, [1, 3, 3, 7, 12, 0]);
    }

    #[test]
    fn top_k_breaks_ties_by_position_and_pads() {
        let exec = CpuExecutor::new();
        let keys = [5.0f32, 1.0, 1.0, -0.0, 0.0, 7.0];
        let (mut idx, mut tk) = ([0u32; 6], [0f32; 6]);
        top_k(&exec, &keys, &[0, 5, 6], 3, Order::Smallest, &mut idx, &mut tk).unwrap();
        assert_eq!(idx, [3, 4, 1, 5, u32::MAX, u32::MAX]);
        assert_eq!(tk[..4], [-0.0, 0.0, 1.0, 7.0]);
        assert!(tk[4] == f32::INFINITY && tk[5] == f32::INFINITY);
        top_k(&exec, &keys, &[0, 5, 6], 3, Order::Largest, &mut idx, &mut tk).unwrap();
        assert_eq!(idx[..3], [0, 1, 2]);
    }
}
