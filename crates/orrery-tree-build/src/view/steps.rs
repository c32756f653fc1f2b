//! The construction of a view: per-boundary, per-node and per-particle steps around one
//! sort, each the CPU reference of one GPU kernel.
//!
//! | step | over | what | function |
//! |------|------|------|----------|
//! | 1 | leaves `i` | placeholder key of leaf `i` | [`leaf_node_key`] |
//! | 2 | boundaries `i in 1..L` | placeholder key of the internal node whose first boundary is `i`, if any; compacted (flag, exclusive scan, scatter) | [`internal_node_key`] |
//! | 3 | all `N` keys | one sort: level order, key order within a level | — |
//! | 4 | nodes | start and level, decoded from the placeholder key | [`placeholder_start`], [`placeholder_level`] |
//! | 5 | nodes | parent: `lower_bound(P, P[n] >> b)` | [`parent_of`] |
//! | 6 | nodes | leaf range: two `lower_bound`s in `K` | [`leaf_range`] |
//! | 7 | nodes | first child: `lower_bound(P, P[n] << b)` (internal nodes) | [`first_child_of`] |
//! | 8 | nodes | particle range, box, NF value, escape, DFS position | `lfp` gathers, [`super::Geometry::cell_box`], [`super::links`] |
//! | 9 | levels | level offsets: `lower_bound(P, 1 << b*level)` | [`level_offsets`] |
//! | 10 | leaves | leaf-to-node: `lower_bound(P, leaf key)` | [`leaf_node_key`] |
//! | 11 | particles | particle-to-leaf: `upper_bound(lfp[..L], p) - 1` | [`particle_leaf`] |
//! | 12 | nodes / positions | child-centric permutation and child indices | [`super::layouts`] |
//!
//! Every search is [`lower_bound_one`] / [`upper_bound_one`], the halving loop every
//! executor runs, so the indices are the same integers on every device. Only the DFS
//! order (the inverse of the DFS positions) is a scatter.
//!
//! The per-element functions are unchecked references, like the kernels they describe:
//! they take a validated leaf array, levels within the layout and indices in range
//! (out-of-range indices panic as slice indexing does). [`super::TreeView::from_leaves`]
//! validates once and then runs them.

use orrery_core::executor::{lower_bound_one, upper_bound_one};
use orrery_core::sfc::KeyLayout;
use orrery_core::{Error, Real, Result};
use rayon::prelude::*;

use super::geometry::BoxRule;
use super::{Geometry, NF_INTERNAL, NONE, TreeViewParts, layouts, links};
use crate::leaves::{Leaves, leaf_level};

/// Elements per rayon task: each step is a few searches per element.
const MIN_LEN: usize = 2048;

fn per(n: usize) -> rayon::iter::MinLen<rayon::range::Iter<usize>> {
    (0..n).into_par_iter().with_min_len(MIN_LEN)
}

/// The placeholder-bit key of the level-`level` cell that starts at `start`:
/// `(1 << b*level) | (start >> b*(levels - level))`. Its highest set bit says the level,
/// the bits below it the cell's digits, so sorting these keys orders cells by level and,
/// within a level, by key; the parent's key is `p >> b`, the first child's `p << b`.
/// For `level <= layout.levels()`.
#[inline]
pub const fn placeholder_key(start: u64, level: u32, layout: KeyLayout) -> u64 {
    let b = layout.bits_per_level();
    (1u64 << (b * level)) | (start >> (b * (layout.levels() - level)))
}

/// The level of a placeholder key (0 for the invalid key 0).
#[inline]
pub const fn placeholder_level(p: u64, layout: KeyLayout) -> u32 {
    match p.checked_ilog2() {
        Some(l) => l / layout.bits_per_level(),
        None => 0,
    }
}

/// The first key of the cell of a placeholder key.
#[inline]
pub const fn placeholder_start(p: u64, layout: KeyLayout) -> u64 {
    let level = placeholder_level(p, layout);
    let b = layout.bits_per_level();
    (p ^ (1u64 << (b * level))) << (b * (layout.levels() - level))
}

/// Step 1: the placeholder key of leaf `i` of a valid leaf array.
#[inline]
pub fn leaf_node_key(keys: &[u64], i: usize, layout: KeyLayout) -> u64 {
    placeholder_key(keys[i], leaf_level(keys, i, layout), layout)
}

/// Step 2: the internal node that boundary `i` (in `1..L`) is the first boundary of.
///
/// The lowest common ancestor of leaves `i - 1` and `i` is the level-`l` cell with
/// `l = common_level(K[i-1], K[i])`; `K[i]` is the start of one of its children, the
/// one after `K[i-1]`'s. Each internal node thus owns the `2^b - 1` boundaries between
/// consecutive children, and boundary `i` is its *first* exactly when `K[i]` starts child
/// slot 1. Returns that node's placeholder key, or `None` for the other boundaries; so
/// there are `(L - 1) / (2^b - 1)` internal nodes.
#[inline]
pub fn internal_node_key(keys: &[u64], i: usize, layout: KeyLayout) -> Option<u64> {
    let level = layout.common_level(keys[i - 1], keys[i]);
    (layout.child_slot_unchecked(keys[i], level + 1) == 1)
        .then(|| placeholder_key(layout.cell_start_unchecked(keys[i], level), level, layout))
}

/// Step 5: the parent of node `n` (not the root) in the sorted placeholder keys `p`.
#[inline]
pub fn parent_of(p: &[u64], n: usize, layout: KeyLayout) -> u32 {
    if n == 0 { NONE } else { lower_bound_one(p, p[n] >> layout.bits_per_level()) }
}

/// Step 7: the first child of internal node `n`; its `2^b` children are the nodes
/// `first..first + 2^b` (all of them exist, and nothing else lies between their keys).
#[inline]
pub fn first_child_of(p: &[u64], n: usize, layout: KeyLayout) -> u32 {
    lower_bound_one(p, p[n] << layout.bits_per_level())
}

/// Step 6: the leaves `first..first + count` of the cell `[start, start + size)`:
/// `first = lower_bound(K, start)`, `end = lower_bound(K, start + size)`. The cell is a
/// leaf exactly when `count == 1`.
#[inline]
pub fn leaf_range(keys: &[u64], start: u64, level: u32, layout: KeyLayout) -> (u32, u32) {
    let first = lower_bound_one(keys, start);
    let end = lower_bound_one(keys, start + layout.cell_size_unchecked::<u64>(level));
    (first, end - first)
}

/// Step 9: the first node of every level `0..=depth`, then the node count.
pub fn level_offsets(p: &[u64], layout: KeyLayout) -> Vec<u32> {
    let depth = p.last().map_or(0, |&last| placeholder_level(last, layout));
    let mut offsets: Vec<u32> =
        (0..=depth).map(|level| lower_bound_one(p, 1u64 << (layout.bits_per_level() * level))).collect();
    offsets.push(p.len() as u32);
    offsets
}

/// Step 11: the leaf holding sorted particle `particle`, from the first particle of
/// every leaf (`starts = lfp[..L]`, non-decreasing from 0): the last leaf starting at or
/// before it, which skips empty leaves.
#[inline]
pub fn particle_leaf(starts: &[u32], particle: u32) -> u32 {
    upper_bound_one(starts, particle) - 1
}

/// Steps 1-3: the sorted placeholder keys of all nodes, and how many are internal.
///
/// # Errors
/// [`Error::InvalidTree`] if the internal-node count is not `(L - 1) / (2^b - 1)`,
/// which no validated leaf array gives.
pub fn sorted_node_keys(leaves: &Leaves) -> Result<(Vec<u64>, usize)> {
    let (keys, layout) = (leaves.keys(), leaves.layout());
    let l = leaves.len();
    let mut p: Vec<u64> = per(l).map(|i| leaf_node_key(keys, i, layout)).collect();
    let internal: Vec<u64> =
        (1..l).into_par_iter().with_min_len(MIN_LEN).filter_map(|i| internal_node_key(keys, i, layout)).collect();
    let gaps = u64::from(layout.children() - 1);
    if internal.len() as u64 * gaps != (l - 1) as u64 {
        return Err(Error::InvalidTree {
            index: 0,
            reason: format!("{} internal nodes for {l} leaves: not (L - 1) / {gaps}", internal.len()),
        });
    }
    let count = internal.len();
    p.extend(internal);
    p.par_sort_unstable();
    Ok((p, count))
}

/// Every step, on validated input (`lfp`: `L + 1` non-decreasing starts from 0, `nf`:
/// `L` values other than [`NF_INTERNAL`], a geometry of the leaves' layout, fewer than
/// `u32::MAX` nodes).
pub(crate) fn construct<T: Real>(
    leaves: &Leaves,
    lfp: &[u32],
    geometry: Geometry<T>,
    nf: Option<&[u64]>,
) -> Result<TreeViewParts<T>> {
    let (k, layout) = (leaves.keys(), leaves.layout());
    let l = leaves.len();
    let c = layout.children();
    let (p, _) = sorted_node_keys(leaves)?;
    let n = p.len();

    let (keys, levels): (Vec<u64>, Vec<u32>) =
        per(n).map(|i| (placeholder_start(p[i], layout), placeholder_level(p[i], layout))).unzip();
    let parents: Vec<u32> = per(n).map(|i| parent_of(&p, i, layout)).collect();
    let (leaf_begins, leaf_counts): (Vec<u32>, Vec<u32>) =
        per(n).map(|i| leaf_range(k, keys[i], levels[i], layout)).unzip();
    let first_children: Vec<u32> =
        per(n).map(|i| if leaf_counts[i] == 1 { NONE } else { first_child_of(&p, i, layout) }).collect();
    let (particle_begins, particle_counts): (Vec<u32>, Vec<u32>) = per(n)
        .map(|i| {
            let (first, end) = (leaf_begins[i] as usize, (leaf_begins[i] + leaf_counts[i]) as usize);
            (lfp[first], lfp[end] - lfp[first])
        })
        .unzip();
    let rule = BoxRule::new(&geometry);
    let (centres, half_extents): (Vec<[T; 3]>, Vec<[T; 3]>) = per(n)
        .map(|i| {
            let b = rule.cell_box(keys[i], levels[i]);
            (b.centre, b.half)
        })
        .unzip();
    let nf = nf
        .map(|v| per(n).map(|i| if leaf_counts[i] == 1 { v[leaf_begins[i] as usize] } else { NF_INTERNAL }).collect());
    let escapes: Vec<u32> = per(n).map(|i| links::escape_of(&p, keys[i], levels[i], layout)).collect();
    let dfs_positions: Vec<u32> =
        per(n).map(|i| links::dfs_position(keys[i], levels[i], leaf_begins[i], layout)).collect();
    let dfs_order = links::invert(&dfs_positions);

    let level_offsets = level_offsets(&p, layout);
    let leaf_nodes: Vec<u32> = per(l).map(|i| lower_bound_one(&p, leaf_node_key(k, i, layout))).collect();
    let particle_leaves: Vec<u32> = per(lfp[l] as usize).map(|q| particle_leaf(&lfp[..l], q as u32)).collect();

    let parents_per_level = layouts::parents_per_level(&level_offsets, c);
    let child_centric_positions: Vec<u32> = per(n)
        .map(|i| layouts::child_centric_position(i as u32, levels[i], &level_offsets, &parents_per_level, c))
        .collect();
    // Child-centric positions permute nodes within their level, so position `q` lies on
    // level `levels[q]`.
    let child_centric_nodes: Vec<u32> = per(n)
        .map(|q| layouts::child_centric_node(q as u32, levels[q], &level_offsets, &parents_per_level, c))
        .collect();
    let child_indices: Vec<u32> = per(n)
        .map(|q| {
            let node = child_centric_nodes[q] as usize;
            match first_children[node] {
                NONE => NONE,
                first => child_centric_positions[first as usize],
            }
        })
        .collect();

    Ok(TreeViewParts {
        geometry,
        keys,
        levels,
        parents,
        first_children,
        leaf_begins,
        leaf_counts,
        particle_begins,
        particle_counts,
        centres,
        half_extents,
        nf,
        level_offsets,
        leaf_nodes,
        particle_leaves,
        escapes,
        dfs_positions,
        dfs_order,
        parents_per_level,
        child_centric_positions,
        child_centric_nodes,
        child_indices,
    })
}
