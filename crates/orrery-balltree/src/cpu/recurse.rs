//! The recursive build and partition on records of `D` coordinates.
//!
//! A node, given its bounds, picks the split dimension ([`crate::split`]), splits its
//! records at the median (out of place by [`histogram::split_into`], or in place by
//! [`select::select`] for the smallest and the largest nodes), computes the bounds of
//! both halves and recurses into them and into the two halves of its output slice.
//! Parallelism comes from three places, all on rayon's pool:
//!
//! - batches: one task per batch (see `build_each_batch` in the parent module);
//! - subtrees: a node of at least [`PAR_TASK_MIN`] records builds its children with
//!   `rayon::join`, so after `log2(threads)` levels every core owns subtrees, and a
//!   thread without a batch of its own steals subtrees of another's;
//! - top levels: a node of at least [`select::PAR_SELECT_MIN`] records (the first levels
//!   of a large cloud, where there are fewer subtrees than cores) scans and selects in
//!   parallel across the whole node.
//!
//! Records of one batch only move inside that batch's slice of the two record buffers,
//! and each node writes only its own output slice, so the tasks share nothing.

use rayon::prelude::*;

use super::level::Level;
use super::{histogram, select};
use crate::split::{Bounds, Coord, Record, rank_key};

/// Nodes with at least this many records build their children as two rayon tasks. A
/// subtree of 256 records takes about 15 us, a hundred times the cost of a join that is
/// not stolen. Small tasks matter where every thread builds its own batch: threads that
/// run out of batches steal subtrees from the slowest ones. Against 4096, measured on
/// the H200 host (16 threads, f64, builds of the two values interleaved): 16 x 4096
/// 3D 0.85 -> 0.76 ms, 2D 0.73 -> 0.65 ms, 16 x 1024 3D -4%, 8D -10%, 16 x 16384 -4%,
/// 64 x 16384 and 1M -1 to -4%.
const PAR_TASK_MIN: usize = 1 << 8;

/// Records for points `0..n` of a row-major array of `N - 1` coordinates, with indices
/// `first + i`.
pub(crate) fn records<C: Coord, const N: usize>(points: &[C], first: u32) -> Vec<Record<C::Key, N>> {
    points
        .par_chunks_exact(N - 1)
        .enumerate()
        .map(|(i, p)| Record::new::<C>(|d| p[d].key(), first + i as u32))
        .collect()
}

/// [`records`] into `out`, on the calling thread (for one batch of many, each already a
/// task).
#[inline(always)]
pub(crate) fn fill_records<C: Coord, const N: usize>(out: &mut [Record<C::Key, N>], points: &[C], first: u32) {
    for (i, (r, p)) in out.iter_mut().zip(points.chunks_exact(N - 1)).enumerate() {
        *r = Record::new::<C>(|d| p[d].key(), first + i as u32);
    }
}

/// Scratch records for a build of `n` points (contents unspecified), filled in parallel
/// (a serial fill of a million f64 records costs several milliseconds).
pub(crate) fn spare<C: Coord, const N: usize>(n: usize) -> Vec<Record<C::Key, N>> {
    (0..n).into_par_iter().map(|_| Record { k: [C::Key::default(); N] }).collect()
}

/// The two children of a node, as halves of its records.
type Halves<'a, K, const N: usize> = (&'a mut [Record<K, N>], &'a mut [Record<K, N>]);

/// Splits `records` at the median of its split dimension; returns the two halves.
fn split<C: Coord, const N: usize>(records: &mut [Record<C::Key, N>]) -> Halves<'_, C::Key, N> {
    let dim = select::bounds::<C, N>(records).split_dim::<C>();
    let k = records.len() / 2;
    select::select::<C, N>(records, k, dim);
    records.split_at_mut(k)
}

/// Nodes of more than this many records split out of place by a histogram
/// ([`histogram::split_into`]); smaller ones select in place.
const HISTOGRAM_MIN: usize = 8;

/// A node of a build and where it goes: its records, as many records of scratch
/// (`spare`), its output slots, and the number of splits down to its leaves.
pub(crate) struct Node<'a, K, const N: usize> {
    /// The node's points.
    pub records: &'a mut [Record<K, N>],
    /// Scratch of the same length.
    pub spare: &'a mut [Record<K, N>],
    /// The node's index slots.
    pub indices: &'a mut [u32],
    /// The node's mask slots.
    pub mask: &'a mut [bool],
    /// Splits down to the leaves.
    pub levels: u32,
}

/// Builds one batch: fills `node.records` from `points` (row-major, `N - 1` coordinates,
/// global indices from `first`), then builds it.
#[inline(always)]
pub(crate) fn build_batch<C: Coord, const N: usize, L: Level>(
    level: L,
    node: Node<'_, C::Key, N>,
    points: &[C],
    first: u32,
) {
    fill_records::<C, N>(node.records, points, first);
    let bounds = level.bounds::<C, N>(node.records);
    build_node::<C, N, L>(level, node, &bounds);
}

/// Builds the subtree of `node`, whose records have `bounds`. Children are built through
/// `level` (see [`super::level`]: the whole subtree runs at one instruction-set level).
///
/// A node splits its records into `spare` (or in place, for the smallest and the
/// largest nodes) and computes its children's bounds, so each child starts with its
/// bounds known and the two buffers trade roles level by level.
#[inline(always)]
pub(crate) fn build_node<C: Coord, const N: usize, L: Level>(
    level: L,
    node: Node<'_, C::Key, N>,
    bounds: &Bounds<C::Key, N>,
) {
    let Node { records, spare, indices, mask, levels } = node;
    if levels == 0 {
        write_leaf::<C, N>(records, indices, mask);
        return;
    }
    if levels == 1 {
        leaf_parent::<C, N>(records, bounds, indices, mask);
        return;
    }
    let m = records.len();
    let dim = bounds.split_dim::<C>();
    let k = m / 2;
    let (split, other) = if m > HISTOGRAM_MIN && m < select::PAR_SELECT_MIN {
        histogram::split_into::<C, N>(records, spare, dim, k, (bounds.lo[dim], bounds.hi[dim]));
        (spare, records)
    } else {
        select::select::<C, N>(records, k, dim);
        (records, spare)
    };
    let (left, right) = split.split_at_mut(k);
    let (spare_left, spare_right) = other.split_at_mut(k);
    let (left_bounds, right_bounds) = (level.bounds::<C, N>(left), level.bounds::<C, N>(right));
    let half = indices.len() / 2;
    let (il, ir) = indices.split_at_mut(half);
    let (ml, mr) = mask.split_at_mut(half);
    let levels = levels - 1;
    let left = Node { records: left, spare: spare_left, indices: il, mask: ml, levels };
    let right = Node { records: right, spare: spare_right, indices: ir, mask: mr, levels };
    if m >= PAR_TASK_MIN {
        rayon::join(|| level.build_node::<C, N>(left, &left_bounds), || level.build_node::<C, N>(right, &right_bounds));
    } else {
        level.build_node::<C, N>(left, &left_bounds);
        level.build_node::<C, N>(right, &right_bounds);
    }
}

/// The parent of two leaves (2 to 4 points), split by ranks without moving records:
/// half of all internal nodes are such, so their per-node overhead matters.
#[inline(always)]
fn leaf_parent<C: Coord, const N: usize>(
    records: &[Record<C::Key, N>],
    bounds: &Bounds<C::Key, N>,
    indices: &mut [u32],
    mask: &mut [bool],
) {
    let m = records.len();
    debug_assert!((2..=4).contains(&m), "a leaf parent holds 2 to 4 points");
    let dim = bounds.split_dim::<C>();
    let mut keys = [C::Packed::default(); 4];
    for (key, r) in keys.iter_mut().zip(records) {
        *key = rank_key::<C, N>(r, dim);
    }
    let (mut left, mut right) = ([0u32; 2], [0u32; 2]);
    let (mut nl, mut nr) = (0, 0);
    for (j, r) in records.iter().enumerate() {
        let rank = keys[..m].iter().filter(|&&other| other < keys[j]).count();
        if rank < m / 2 {
            left[nl] = r.index::<C>();
            nl += 1;
        } else {
            right[nr] = r.index::<C>();
            nr += 1;
        }
    }
    write_leaf_indices(&left[..nl], &mut indices[..2], &mut mask[..2]);
    write_leaf_indices(&right[..nr], &mut indices[2..], &mut mask[2..]);
}

/// A leaf of one point (`[i, i]`, mask `[true, false]`) or two (ascending index).
#[inline(always)]
fn write_leaf_indices(points: &[u32], indices: &mut [u32], mask: &mut [bool]) {
    match *points {
        [a] => {
            indices.copy_from_slice(&[a, a]);
            mask.copy_from_slice(&[true, false]);
        }
        [a, b] => {
            indices.copy_from_slice(&[a.min(b), a.max(b)]);
            mask.copy_from_slice(&[true, true]);
        }
        _ => unreachable!("a leaf holds one or two points (layout invariant)"),
    }
}

/// A leaf of one point (`[i, i]`, mask `[true, false]`) or two (ascending index).
#[inline(always)]
fn write_leaf<C: Coord, const N: usize>(records: &[Record<C::Key, N>], indices: &mut [u32], mask: &mut [bool]) {
    match records {
        [a] => write_leaf_indices(&[a.index::<C>()], indices, mask),
        [a, b] => write_leaf_indices(&[a.index::<C>(), b.index::<C>()], indices, mask),
        _ => unreachable!("a leaf holds one or two points (layout invariant)"),
    }
}

/// Partitions a node `levels` more times (or until it holds one point) and writes its
/// points to `out`, each final group by ascending index.
pub(crate) fn partition_node<C: Coord, const N: usize>(
    records: &mut [Record<C::Key, N>],
    out: &mut [u32],
    levels: u32,
) {
    let m = records.len();
    if levels == 0 || m <= 1 {
        for (o, r) in out.iter_mut().zip(records.iter()) {
            *o = r.index::<C>();
        }
        if m >= select::PAR_SELECT_MIN {
            out.par_sort_unstable();
        } else {
            out.sort_unstable();
        }
        return;
    }
    let (left, right) = split::<C, N>(records);
    let (ol, or) = out.split_at_mut(left.len());
    if m >= PAR_TASK_MIN {
        rayon::join(|| partition_node::<C, N>(left, ol, levels - 1), || partition_node::<C, N>(right, or, levels - 1));
    } else {
        partition_node::<C, N>(left, ol, levels - 1);
        partition_node::<C, N>(right, or, levels - 1);
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
