//! Depth-first links without a traversal: the escape index and the DFS (preorder)
//! position of every node, each from the node's own key, level and first leaf.
//!
//! A stackless Barnes-Hut walk needs two moves from node `n`: *descend* (to
//! `first_child(n)`, the next node in preorder) and *skip* (to `escape(n)`, the first
//! node in preorder after `n`'s subtree). Both are node indices of the level-ordered
//! view, so the walk never touches the DFS order itself; the DFS positions are there for
//! codes that want preorder storage, and for checking the escapes.

use orrery_core::executor::lower_bound_one;
use orrery_core::sfc::KeyLayout;

use super::NONE;
use super::steps::placeholder_key;

/// The escape index of the level-`level` node starting at `key`, in the sorted
/// placeholder keys `p`: the next node in DFS preorder after its subtree, or [`NONE`]
/// when the subtree reaches the end of the key range.
///
/// That node is the next sibling of the lowest ancestor-or-self of `n` that is not a
/// last child; it starts at `end = key + size`, and it is the *coarsest* node starting
/// there (its parent starts before `end`). Its level is one below the lowest common
/// ancestor of the keys `end - 1` and `end`, so it is one `lower_bound` away:
/// `lower_bound(p, placeholder(end, common_level(end - 1, end) + 1))`.
#[inline]
pub fn escape_of(p: &[u64], key: u64, level: u32, layout: KeyLayout) -> u32 {
    let end = key + layout.cell_size_unchecked::<u64>(level);
    if end == layout.key_end::<u64>() {
        return NONE;
    }
    let up = layout.common_level(end - 1, end) + 1;
    lower_bound_one(p, placeholder_key(end, up, layout))
}

/// Nodes in the subtree of a node with `leaves` leaves: `leaves + (leaves - 1) / (2^b - 1)`.
#[inline]
pub const fn subtree_size(leaves: u32, layout: KeyLayout) -> u32 {
    leaves + (leaves - 1) / (layout.children() - 1)
}

/// The DFS preorder position of the level-`level` node starting at `key` whose first
/// leaf is `first_leaf` (children in key order).
///
/// The nodes before it in preorder are its `level` ancestors and the complete subtrees
/// of the left siblings of it and of each ancestor. Those subtrees hold exactly the
/// `f = first_leaf` leaves before `key`; there are `t = sum of the key's digits of levels
/// 1..=level` of them, and a subtree of `k` leaves has `(k - 1) / (2^b - 1)` internal
/// nodes, so the position is `level + f + (f - t) / (2^b - 1)`.
#[inline]
pub fn dfs_position(key: u64, level: u32, first_leaf: u32, layout: KeyLayout) -> u32 {
    let t: u64 = (1..=level).map(|l| u64::from(layout.child_slot_unchecked(key, l))).sum();
    let f = u64::from(first_leaf);
    (u64::from(level) + f + (f - t) / u64::from(layout.children() - 1)) as u32
}

/// The inverse of a permutation of `0..len` (a scatter): `out[perm[i]] = i`.
pub fn invert(perm: &[u32]) -> Vec<u32> {
    let mut out = vec![NONE; perm.len()];
    for (i, &q) in perm.iter().enumerate() {
        out[q as usize] = i as u32;
    }
    out
}
