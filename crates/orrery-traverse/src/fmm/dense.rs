//! Uniform-depth ("dense") trees: every leaf at one level, the classic FMM's tree, for
//! comparison with the adaptive Cornerstone trees. A dense tree is a leaf array like any
//! other, so it gets a TreeView and runs through the same lists and passes; only its
//! leaves hold very different particle counts on clustered inputs.

use orrery_core::sfc::KeyLayout;
use orrery_core::{Error, Real, Result};
use orrery_tree_build::counts::leaf_starts;
use orrery_tree_build::view::{Geometry, TreeView};
use orrery_tree_build::{Leaves, Shape, SortedKeys};

/// The most leaves a dense tree may have (`2^24`: an octree of depth 8).
pub const MAX_DENSE_LEAVES: u64 = 1 << 24;

/// The leaf array of the complete tree of `layout` with every leaf at `depth`.
///
/// # Errors
/// [`Error::LevelOutOfRange`] for a depth beyond the layout's levels;
/// [`Error::InvalidArgument`] for more than [`MAX_DENSE_LEAVES`] leaves.
pub fn uniform_leaves(layout: KeyLayout, depth: u32) -> Result<Leaves> {
    if depth > layout.levels() {
        return Err(Error::LevelOutOfRange { level: depth, max: layout.levels(), what: "a dense tree" });
    }
    let bits = layout.bits_per_level() * depth;
    if bits > MAX_DENSE_LEAVES.trailing_zeros() {
        return Err(Error::InvalidArgument {
            what: "dense tree depth",
            reason: format!(
                "depth {depth} makes 2^{bits} leaves, more than the {MAX_DENSE_LEAVES} a dense tree may have"
            ),
        });
    }
    let shift = layout.key_bits() - bits;
    Leaves::from_keys((0..=1u64 << bits).map(|i| i << shift).collect(), layout)
}

/// The smallest depth whose dense tree of `layout` has at least `n / per_leaf` leaves
/// (at most the layout's levels).
pub fn depth_for(layout: KeyLayout, n: usize, per_leaf: usize) -> u32 {
    let want = n.div_ceil(per_leaf.max(1)) as u64;
    let b = layout.bits_per_level();
    (0..=layout.levels())
        .find(|&d| 1u64.checked_shl(b * d).is_none_or(|leaves| leaves >= want))
        .unwrap_or(layout.levels())
}

/// The view of the dense tree of `depth` over sorted keys made for `shape`.
///
/// # Errors
/// As [`uniform_leaves`] and [`TreeView::from_leaves`]; [`Error::InvalidArgument`] when
/// the keys' layout is not `shape`'s.
pub fn uniform_view<T: Real>(sorted: &SortedKeys<T>, shape: Shape, depth: u32) -> Result<TreeView<T>> {
    if sorted.layout != shape.layout() {
        return Err(Error::InvalidArgument {
            what: "dense tree shape",
            reason: "the sorted keys were made for another tree shape".into(),
        });
    }
    let leaves = uniform_leaves(sorted.layout, depth)?;
    let starts = leaf_starts(leaves.keys(), &sorted.keys[..sorted.active]);
    TreeView::from_leaves(&leaves, &starts, Geometry::new(shape, sorted.bbox), None)
}
