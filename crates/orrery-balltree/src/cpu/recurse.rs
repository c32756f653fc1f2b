//! The recursive build and partition on records of `D` coordinates.
//!
//! A node computes its bounds, picks the split dimension ([`crate::split`]), selects the
//! median in place and recurses into the two halves of its record slice and of its
//! output slice. Parallelism comes from three places, all on rayon's pool:
//!
//! - batches: one task per batch;
//! - subtrees: a node of at least [`PAR_TASK_MIN`] records builds its children with
//!   `rayon::join`, so after `log2(threads)` levels every core owns subtrees;
//! - top levels: a node of at least [`select::PAR_SELECT_MIN`] records (the first levels
//!   of a large cloud, where there are fewer subtrees than cores) scans and selects in
//!   parallel across the whole node.
//!
//! Records of one batch only move inside that batch's slice, and each node writes only
//! its own output slice, so the tasks share nothing.

use rayon::prelude::*;

use super::select;
use crate::split::{Coord, Record};

/// Nodes with at least this many records build their children as two rayon tasks. A
/// subtree of 4096 records takes about 0.1 ms, a hundred times the cost of a join.
const PAR_TASK_MIN: usize = 1 << 12;

/// Records for points `0..n` of a row-major array, with indices `first + i`.
pub(crate) fn records<C: Coord, const D: usize>(points: &[C], first: u32) -> Vec<Record<C::Key, D>> {
    points
        .par_chunks_exact(D)
        .enumerate()
        .map(|(i, p)| Record { k: std::array::from_fn(|d| p[d].key()), i: first + i as u32 })
        .collect()
}

/// Splits `records` at the median of its split dimension; returns the two halves.
fn split<C: Coord, const D: usize>(
    records: &mut [Record<C::Key, D>],
) -> (&mut [Record<C::Key, D>], &mut [Record<C::Key, D>]) {
    let dim = select::bounds::<C, D>(records).split_dim::<C>();
    let k = records.len() / 2;
    select::select::<C, D>(records, k, dim);
    records.split_at_mut(k)
}

/// Builds the subtree of a node: `records` are its points, `indices` and `mask` its
/// slots, `levels` the number of splits down to its leaves.
pub(crate) fn build_node<C: Coord, const D: usize>(
    records: &mut [Record<C::Key, D>],
    indices: &mut [u32],
    mask: &mut [bool],
    levels: u32,
) {
    if levels == 0 {
        write_leaf(records, indices, mask);
        return;
    }
    let m = records.len();
    let (left, right) = split::<C, D>(records);
    let half = indices.len() / 2;
    let (il, ir) = indices.split_at_mut(half);
    let (ml, mr) = mask.split_at_mut(half);
    if m >= PAR_TASK_MIN {
        rayon::join(|| build_node::<C, D>(left, il, ml, levels - 1), || build_node::<C, D>(right, ir, mr, levels - 1));
    } else {
        build_node::<C, D>(left, il, ml, levels - 1);
        build_node::<C, D>(right, ir, mr, levels - 1);
    }
}

/// A leaf of one point (`[i, i]`, mask `[true, false]`) or two (ascending index).
fn write_leaf<K, const D: usize>(records: &[Record<K, D>], indices: &mut [u32], mask: &mut [bool]) {
    match records {
        [a] => {
            indices.copy_from_slice(&[a.i, a.i]);
            mask.copy_from_slice(&[true, false]);
        }
        [a, b] => {
            indices.copy_from_slice(&[a.i.min(b.i), a.i.max(b.i)]);
            mask.copy_from_slice(&[true, true]);
        }
        _ => unreachable!("a leaf holds one or two points (layout invariant)"),
    }
}

/// Partitions a node `levels` more times (or until it holds one point) and writes its
/// points to `out`, each final group by ascending index.
pub(crate) fn partition_node<C: Coord, const D: usize>(
    records: &mut [Record<C::Key, D>],
    out: &mut [u32],
    levels: u32,
) {
    let m = records.len();
    if levels == 0 || m <= 1 {
        for (o, r) in out.iter_mut().zip(records.iter()) {
            *o = r.i;
        }
        if m >= select::PAR_SELECT_MIN {
            out.par_sort_unstable();
        } else {
            out.sort_unstable();
        }
        return;
    }
    let (left, right) = split::<C, D>(records);
    let (ol, or) = out.split_at_mut(left.len());
    if m >= PAR_TASK_MIN {
        rayon::join(|| partition_node::<C, D>(left, ol, levels - 1), || partition_node::<C, D>(right, or, levels - 1));
    } else {
        partition_node::<C, D>(left, ol, levels - 1);
        partition_node::<C, D>(right, or, levels - 1);
    }
}

/// Cuts `v` into consecutive pieces of the given lengths.
pub(crate) fn cut<R>(mut v: &mut [R], lengths: impl Iterator<Item = usize>) -> Vec<&mut [R]> {
    let mut out = Vec::new();
    for len in lengths {
        let (head, tail) = std::mem::take(&mut v).split_at_mut(len);
        out.push(head);
        v = tail;
    }
    out
}
