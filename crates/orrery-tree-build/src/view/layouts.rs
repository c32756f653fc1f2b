//! The child-centric layout: the same nodes, permuted within each level so that child
//! `c` of parent `p` sits at `child_index[p] + c * M`.
//!
//! In the view's own (contiguous) layout the `2^b` children of a parent are consecutive,
//! and the sibling groups of a level follow their parents' key order. So level `l + 1`
//! (`l` has `M` internal nodes) is an `M x 2^b` matrix, row `g` the children of the
//! `g`-th parent of level `l` in key order. The child-centric layout (FMSolvr's) is its
//! transpose: `2^b` rows of `M`, row `c` every parent's child `c`. Both are pure index
//! arithmetic per node, so each is one gather:
//!
//! - node `o + j` (`o` the level's first node, `j = g * 2^b + c`) goes to position
//!   `o + c * M + g` ([`child_centric_position`]);
//! - position `o + r` holds node `o + (r % M) * 2^b + r / M` ([`child_centric_node`]);
//! - a parent at position `q` has `child_index[q]` = the position of its child 0,
//!   `o' + g` on the next level, and child `c` at `child_index[q] + c * M`.
//!
//! Level 0 (the root alone) is the same in both layouts; level offsets are shared.

/// Internal nodes per level (`M`), from the level offsets: level `l` has
/// `(count(l + 1)) / 2^b` parents; the deepest level has none.
pub fn parents_per_level(level_offsets: &[u32], children: u32) -> Vec<u32> {
    let depth = level_offsets.len().saturating_sub(2);
    (0..=depth).map(|l| if l < depth { (level_offsets[l + 2] - level_offsets[l + 1]) / children } else { 0 }).collect()
}

/// The child-centric position of node `node` on level `level`.
#[inline]
pub fn child_centric_position(
    node: u32,
    level: u32,
    level_offsets: &[u32],
    parents_per_level: &[u32],
    children: u32,
) -> u32 {
    if level == 0 {
        return node;
    }
    let base = level_offsets[level as usize];
    let m = parents_per_level[level as usize - 1];
    let j = node - base;
    base + (j % children) * m + j / children
}

/// The node at child-centric position `position`, which lies on level `level`.
#[inline]
pub fn child_centric_node(
    position: u32,
    level: u32,
    level_offsets: &[u32],
    parents_per_level: &[u32],
    children: u32,
) -> u32 {
    if level == 0 {
        return position;
    }
    let base = level_offsets[level as usize];
    let m = parents_per_level[level as usize - 1];
    let r = position - base;
    base + (r % m) * children + r / m
}
