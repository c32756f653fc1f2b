//! One rebalance pass: decide an operation per leaf, scan the operations, scatter the
//! new boundaries.
//!
//! An *operation* is the number of leaves a leaf becomes: `0` (merged into its first
//! sibling), `1` (kept), or `2^(b*j)` (split `j` levels at once into that many
//! descendants of equal size). The exclusive scan of the operations is the new index of
//! each leaf's first descendant and, at `L`, the new leaf count; the scatter writes every
//! descendant's first key there. A merge needs no special case: the group's first
//! sibling keeps operation 1, and its key is the parent's first key, while the others
//! write nothing. The criterion only decides; this module is shared by LeafCount and
//! NFCount ([`crate::nfcount`]) and by octrees and binary trees (the layout carries `b`).
//!
//! LeafCount is Cornerstone's rule (Keller et al. 2023, `calculateNodeOp`): merge the
//! siblings of a complete group whose parent would hold at most `bucket` particles; split
//! a leaf of more than `bucket` particles by `j` levels when it holds more than
//! `bucket * 2^(b*(j-1))` of them, for `j` up to [`max_jump_levels`] (4 octree levels:
//! x8, x64, x512, x4096 at 1, 8, 64, 512 times the bucket) and only as deep as the keys
//! go.

use orrery_core::sfc::KeyLayout;
use orrery_core::{Error, Result};
use rayon::prelude::*;

use crate::leaves::{Leaves, check_leaf_array, leaf_level};

/// Key bits a multi-level split may descend at once: 4 octree levels, 12 binary levels.
pub const MAX_JUMP_BITS: u32 = 12;

/// Levels a split may descend at once in `layout`: `MAX_JUMP_BITS / b` (at least 1).
pub const fn max_jump_levels(layout: KeyLayout) -> u32 {
    let j = MAX_JUMP_BITS / layout.bits_per_level();
    if j == 0 { 1 } else { j }
}

/// Leaves per rayon task.
const CHUNK: usize = 2048;

/// The first leaf of the complete sibling group of leaf `i` (at `level`), and `i`'s slot
/// in it, when all `2^b` children of `i`'s parent are leaves; `None` otherwise (and for
/// the root). Cornerstone's `siblingAndLevel`: the group is complete when the boundary
/// `2^b` leaves after its first one is the parent's end.
#[inline]
pub fn sibling_group(keys: &[u64], i: usize, level: u32, layout: KeyLayout) -> Option<(usize, u32)> {
    if level == 0 {
        return None;
    }
    let slot = layout.child_slot_unchecked(keys[i], level);
    let first = i.checked_sub(slot as usize)?;
    let last = first + layout.children() as usize;
    let parent_size = layout.cell_size_unchecked::<u64>(level - 1);
    (last < keys.len() && keys[last] == keys[first].wrapping_add(parent_size)).then_some((first, slot))
}

/// The split operation for a leaf at `level` whose weight is `weight`: `2^(b*j)` for the
/// largest `j <= max_jump_levels` with `weight > threshold * growth^(j-1)` and
/// `level + j <= levels`, or 1 when there is none. LeafCount passes `growth = 2^b` (the
/// children's share of the particles), NFCount `growth = 4^b` (particles times
/// neighbours, both shrinking by `2^b` per level).
#[inline]
pub fn split_op(weight: u64, threshold: u64, growth: u64, level: u32, layout: KeyLayout) -> u32 {
    let jmax = max_jump_levels(layout);
    for j in (1..=jmax).rev() {
        let bar = threshold.saturating_mul(growth.saturating_pow(j - 1));
        if weight > bar && level + j <= layout.levels() {
            return 1u32 << (layout.bits_per_level() * j);
        }
    }
    1
}

/// The LeafCount operation of leaf `i` (Cornerstone's `calculateNodeOp`), the reference
/// of the GPU kernels `tb_leaf_count_ops`.
#[inline]
pub fn leaf_count_op(keys: &[u64], counts: &[u32], i: usize, bucket: u32, layout: KeyLayout) -> u32 {
    let level = leaf_level(keys, i, layout);
    if let Some((first, slot)) = sibling_group(keys, i, level, layout)
        && slot > 0
    {
        let parent: u64 = counts[first..first + layout.children() as usize].iter().map(|&c| u64::from(c)).sum();
        if parent <= u64::from(bucket) {
            return 0;
        }
    }
    split_op(u64::from(counts[i]), u64::from(bucket), u64::from(layout.children()), level, layout)
}

/// The LeafCount operations of every leaf.
///
/// # Errors
/// [`Error::LengthMismatch`] unless `counts` has one entry per leaf;
/// [`Error::InvalidArgument`] for `bucket == 0`.
pub fn leaf_count_ops(leaves: &Leaves, counts: &[u32], bucket: u32) -> Result<Vec<u32>> {
    check_bucket(bucket)?;
    orrery_core::executor::check_len("leaf counts", leaves.len(), counts.len())?;
    let (keys, layout) = (leaves.keys(), leaves.layout());
    let mut ops = vec![0u32; leaves.len()];
    ops.par_chunks_mut(CHUNK).enumerate().for_each(|(c, chunk)| {
        for (j, op) in chunk.iter_mut().enumerate() {
            *op = leaf_count_op(keys, counts, c * CHUNK + j, bucket, layout);
        }
    });
    Ok(ops)
}

/// Rejects a zero bucket: no leaf could ever hold "at most 0" particles and stop
/// splitting before the key resolution.
pub(crate) fn check_bucket(bucket: u32) -> Result<()> {
    if bucket == 0 {
        return Err(Error::InvalidArgument { what: "bucket", reason: "must be at least 1 particle".to_owned() });
    }
    Ok(())
}

/// The result of applying one pass of operations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rebalanced {
    /// The new tree.
    pub leaves: Leaves,
    /// The exclusive scan of the operations (`L + 1` entries): leaf `i`'s first
    /// descendant is new leaf `offsets[i]`; a kept leaf (operation 1) is exactly new leaf
    /// `offsets[i]`.
    pub offsets: Vec<u32>,
    /// Whether any operation was not 1 (the tree changed).
    pub changed: bool,
}

/// Applies `ops` (one per leaf, each 0, 1 or a power of `2^b` of at most
/// `2^MAX_JUMP_BITS`) to `leaves`: the scan and the scatter of a pass.
///
/// # Errors
/// [`Error::LengthMismatch`] unless there is one operation per leaf;
/// [`Error::InvalidArgument`] for an operation that is not one of those values or that
/// splits below the deepest level; [`Error::TooManyPoints`] when the new tree would have
/// more leaves than 32-bit indices hold.
pub fn rebalance(leaves: &Leaves, ops: &[u32]) -> Result<Rebalanced> {
    let (keys, layout) = (leaves.keys(), leaves.layout());
    orrery_core::executor::check_len("rebalance operations", leaves.len(), ops.len())?;
    let bad = (0..ops.len())
        .into_par_iter()
        .find_first(|&i| check_op(ops[i], leaf_level(keys, i, layout), layout, i).is_err());
    if let Some(i) = bad {
        check_op(ops[i], leaf_level(keys, i, layout), layout, i)?;
    }
    let next = rebalance_decided(leaves, ops)?;
    // A merge without its leader, or a leader without its group, breaks the array.
    check_leaf_array(next.leaves.keys(), layout)?;
    Ok(next)
}

/// [`rebalance`] of operations from a criterion of this crate (valid values, whole
/// sibling groups merged): the scan and the scatter without revalidating the result.
///
/// # Errors
/// [`Error::TooManyPoints`] when the new tree would have more leaves than 32-bit indices
/// hold; [`Error::InvalidArgument`] when every leaf was merged away.
pub(crate) fn rebalance_decided(leaves: &Leaves, ops: &[u32]) -> Result<Rebalanced> {
    let (keys, layout) = (leaves.keys(), leaves.layout());
    let (offsets, total) = exclusive_scan(ops);
    if total > u64::from(u32::MAX) {
        return Err(Error::TooManyPoints { count: total as usize, max: u32::MAX as usize, what: "leaves" });
    }
    if total == 0 {
        return Err(Error::InvalidArgument {
            what: "rebalance operations",
            reason: "every leaf was merged away".into(),
        });
    }
    let changed = ops.par_iter().any(|&op| op != 1);
    let new_keys: Vec<u64> = ops
        .par_iter()
        .enumerate()
        .with_min_len(CHUNK)
        .flat_map_iter(|(i, &op)| {
            let level = leaf_level(keys, i, layout);
            let step = if op <= 1 {
                0
            } else {
                layout.cell_size_unchecked::<u64>(level + op.trailing_zeros() / layout.bits_per_level())
            };
            (0..u64::from(op)).map(move |n| keys[i] + n * step)
        })
        .chain(rayon::iter::once(layout.key_end::<u64>()))
        .collect();
    Ok(Rebalanced { leaves: Leaves::from_checked(new_keys, layout), offsets, changed })
}

/// The exclusive scan of `ops` (`L + 1` entries, wrapping in u32) and its exact total:
/// per-chunk sums in parallel, the chunk offsets in order, then the chunks again.
fn exclusive_scan(ops: &[u32]) -> (Vec<u32>, u64) {
    let sums: Vec<u64> = ops.par_chunks(CHUNK).map(|c| c.iter().map(|&v| u64::from(v)).sum()).collect();
    let mut bases = Vec::with_capacity(sums.len());
    let mut total = 0u64;
    for s in sums {
        bases.push(total);
        total += s;
    }
    let mut offsets = vec![0u32; ops.len() + 1];
    offsets[..ops.len()].par_chunks_mut(CHUNK).zip(ops.par_chunks(CHUNK)).zip(bases).for_each(|((out, c), base)| {
        let mut acc = base;
        for (o, &v) in out.iter_mut().zip(c) {
            *o = acc as u32;
            acc += u64::from(v);
        }
    });
    offsets[ops.len()] = total as u32;
    (offsets, total)
}

fn check_op(op: u32, level: u32, layout: KeyLayout, i: usize) -> Result<()> {
    let b = layout.bits_per_level();
    let levels = op.checked_ilog2().map(|l| l / b);
    let valid = op == 0
        || (op.is_power_of_two()
            && op.trailing_zeros().is_multiple_of(b)
            && levels.is_some_and(|j| j <= max_jump_levels(layout) && level + j <= layout.levels()));
    if valid {
        Ok(())
    } else {
        Err(Error::InvalidArgument {
            what: "rebalance operations",
            reason: format!("leaf {i} (level {level}) has operation {op}: not 0, 1 or a split within the key depth"),
        })
    }
}
