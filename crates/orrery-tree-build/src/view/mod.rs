//! The TreeView: every node of a Cornerstone tree, internal and leaf, as flat `u32`-indexed
//! arrays, built from the leaf array alone, without a traversal.
//!
//! # Why it is shaped this way
//!
//! - **From `K`, not from a walk.** The internal nodes follow from the leaf boundaries:
//!   boundary `i` of `K[0..=L]` separates two consecutive children of the lowest common
//!   ancestor of leaves `i - 1` and `i`, and is that node's *first* boundary exactly when
//!   `K[i]` starts child slot 1. So there are `(L - 1) / (2^b - 1)` internal nodes, one
//!   per such boundary ([`steps::internal_node_key`]), and every other field is a
//!   per-node gather (a binary search or a formula). The construction is the pipeline of
//!   [`steps`]: per boundary, one sort, per node, per particle. The GPU build ports it
//!   kernel by kernel and is checked against this one array by array.
//! - **One sort, level order.** All nodes are sorted once by their placeholder-bit key
//!   `(1 << b*level) | (start >> b*(levels - level))` ([`steps::placeholder_key`]): the
//!   result is level by level and, within a level, in key order. Then a parent is
//!   `lower_bound(P, P[n] >> b)`, a first child `lower_bound(P, P[n] << b)`, the `2^b`
//!   children of a node are contiguous, and each level is one index range
//!   ([`TreeView::level_offsets`]), which is what level-by-level FMM passes (upward and
//!   downward sweeps) iterate over.
//! - **Two layouts of one tree.** Contiguous children (this layout) suit a tree walk;
//!   FMM codes such as FMSolvr address child `c` of parent `p` as
//!   `child_index[p] + c * M` (`M` parents on `p`'s level). That *child-centric* layout
//!   is a transpose within each level ([`layouts`]); the view stores the permutation both
//!   ways and the child indices in it.
//! - **Walk links computed here.** The escape index (next node in DFS preorder after a
//!   subtree, [`NONE`] at the end) is one search per node ([`links::escape_of`]); a
//!   stackless Barnes-Hut walk needs only `first_children` and `escapes`. DFS positions
//!   come from a closed formula ([`links::dfs_position`]), and the DFS order is their
//!   inverse.
//! - **Plain data.** [`TreeViewParts`] has public fields (structure of arrays, `u32`
//!   indices, [`NONE`] = `u32::MAX` for "no node", so node counts stay below `u32::MAX`)
//!   for upload and download; [`TreeView`] is the same arrays behind accessors, made
//!   only by [`TreeView::from_leaves`] or by [`TreeView::from_parts`], which runs the
//!   consistency checker [`TreeViewParts::check`] (the GPU tests' oracle-free check).
//!
//! # Particles, boxes, NF values
//!
//! Particle ranges index the *sorted* particles (the order of [`crate::SortedKeys`]):
//! leaf `i` holds `lfp[i]..lfp[i + 1]` for the leaf starts `lfp` of
//! [`crate::counts::leaf_starts`]; a node holds its leaves' union; the root holds every
//! active particle (removed ones, with key `key_end`, are in no leaf). Boxes are centre
//! and half-extent per axis, computed per node by the rule of [`Geometry::cell_box`].
//!
//! NF values (NFCount's per-leaf weights) are optional. They are given per leaf and
//! stored per node: a leaf carries its value, an internal node [`NF_INTERNAL`]
//! (`u64::MAX`): a leaf's weight `n * S` is defined by its own particles and neighbour
//! counts, which an internal node does not have, and any aggregate (a sum, a maximum)
//! would invite reading it as one. Codes that want an aggregate compute it level by
//! level from the leaves. A leaf value equal to the sentinel is rejected.

mod check;
mod geometry;
pub mod layouts;
pub mod links;
pub mod steps;

use std::ops::Range;

use orrery_core::sfc::KeyLayout;
use orrery_core::{Error, Real, Result};
use rayon::prelude::*;

pub use geometry::{CellBox, Geometry};

use crate::build::{Tree, check_sorted_keys};
use crate::counts::leaf_starts;
use crate::input::{Shape, SortedKeys};
use crate::leaves::Leaves;

/// "No node": the parent of the root, the first child of a leaf, the escape at the end
/// of the preorder, the child index of a leaf.
pub const NONE: u32 = u32::MAX;

/// The NF value of an internal node (see the [module documentation](self)).
pub const NF_INTERNAL: u64 = u64::MAX;

/// The arrays of a [`TreeView`], public for upload, download and comparison.
///
/// `N` nodes in level order (see the [module documentation](self)); per-node arrays
/// have `N` entries and are indexed by node, unless said otherwise.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeViewParts<T: Real> {
    /// The box and key map of the keys; its [`Geometry::key_layout`] is the tree's.
    pub geometry: Geometry<T>,
    /// First key of each node's cell.
    pub keys: Vec<u64>,
    /// Level of each node (0 = root).
    pub levels: Vec<u32>,
    /// Parent of each node; [`NONE`] for the root.
    pub parents: Vec<u32>,
    /// First child of each node (its `2^b` children are `first..first + 2^b`); [`NONE`]
    /// for leaves, which is the leaf flag.
    pub first_children: Vec<u32>,
    /// Index of each node's first leaf in the leaf array.
    pub leaf_begins: Vec<u32>,
    /// Leaves under each node (1 for a leaf).
    pub leaf_counts: Vec<u32>,
    /// Each node's first sorted particle.
    pub particle_begins: Vec<u32>,
    /// Particles under each node.
    pub particle_counts: Vec<u32>,
    /// Each node's box centre.
    pub centres: Vec<[T; 3]>,
    /// Each node's box half-extents.
    pub half_extents: Vec<[T; 3]>,
    /// NF value of each node when given: the leaf's value, [`NF_INTERNAL`] for internal
    /// nodes.
    pub nf: Option<Vec<u64>>,
    /// First node of each level `0..=depth`, then `N` (`depth + 2` entries).
    pub level_offsets: Vec<u32>,
    /// Node of each leaf (`L` entries, by leaf index).
    pub leaf_nodes: Vec<u32>,
    /// Leaf of each active sorted particle (one entry per particle of the root).
    pub particle_leaves: Vec<u32>,
    /// Next node in DFS preorder after each node's subtree; [`NONE`] at the end.
    pub escapes: Vec<u32>,
    /// Each node's position in DFS preorder (children in key order).
    pub dfs_positions: Vec<u32>,
    /// The node at each DFS position (by position).
    pub dfs_order: Vec<u32>,
    /// Internal nodes (`M`) on each level `0..=depth` (`depth + 1` entries).
    pub parents_per_level: Vec<u32>,
    /// Each node's position in the child-centric layout (same level ranges).
    pub child_centric_positions: Vec<u32>,
    /// The node at each child-centric position (by position).
    pub child_centric_nodes: Vec<u32>,
    /// By child-centric position: the child-centric position of the node's child 0;
    /// child `c` is at `child_indices[q] + c * parents_per_level[level]`. [`NONE`] for
    /// leaves.
    pub child_indices: Vec<u32>,
}

impl<T: Real> TreeViewParts<T> {
    /// Checks every invariant of a view, so that arrays made elsewhere (a GPU build) can
    /// be trusted without an oracle: lengths and counts (`N = L + (L - 1) / (2^b - 1)`);
    /// level order (placeholder keys strictly increasing); each node a cell, its parent
    /// one level up containing it with this node in the right child slot, its children
    /// contiguous and pointing back; leaf and particle ranges of children contiguous and
    /// summing to the parent's, from 0 at the root; leaves tiling the key range in leaf
    /// order; the leaf-to-node and particle-to-leaf maps; boxes equal, bit for bit, to
    /// [`Geometry::cell_box`]; level offsets and parents per level; DFS positions a
    /// preorder (first child right after its parent, siblings after each other's
    /// subtrees) with the DFS order its inverse; escapes equal to the node after the
    /// subtree; the child-centric permutation and child indices; NF sentinels.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] for an array of the wrong length,
    /// [`Error::InvalidArgument`] for a geometry without a tree layout,
    /// [`Error::InvalidTree`] naming the first offending node (or leaf, particle,
    /// position) and the invariant it breaks.
    pub fn check(&self) -> Result<()> {
        check::check(self)
    }

    /// The key layout (from the geometry).
    pub fn layout(&self) -> KeyLayout {
        self.geometry.key_layout()
    }
}

/// Every node of a tree, with its relations, ranges, box and walk links (see the
/// [module documentation](self)).
///
/// ```
/// use orrery_core::{sfc::Curve, Aabb};
/// use orrery_tree_build::view::{Geometry, TreeView, NONE};
/// use orrery_tree_build::{counts::leaf_starts, Leaves, Shape};
///
/// // The root split once: 8 leaves, 1 internal node.
/// let layout = Shape::Octree(Curve::Morton).layout();
/// let leaves = Leaves::from_keys((0..=8).map(|i| i << 60).collect(), layout)?;
/// let particles: Vec<u64> = vec![5, 1 << 61, 1 << 62, (1 << 62) + 7];
/// let lfp = leaf_starts(leaves.keys(), &particles);
/// let geometry = Geometry::new(Shape::Octree(Curve::Morton), Aabb::cube(-1.0, 1.0)?);
/// let view = TreeView::from_leaves(&leaves, &lfp, geometry, None)?;
/// assert_eq!((view.num_nodes(), view.num_internal()), (9, 1));
/// assert_eq!(view.children(0), Some(1..9));
/// assert_eq!(view.particles(0), 0..4);
/// assert_eq!(view.escapes()[8], NONE);
/// assert_eq!(view.cell_box(0).half, [1.0; 3]);
/// view.check()?;
/// # Ok::<(), orrery_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct TreeView<T: Real> {
    parts: TreeViewParts<T>,
}

impl<T: Real> TreeView<T> {
    /// The view of `leaves`, whose leaf `i` holds the sorted particles
    /// `leaf_first_particle[i]..leaf_first_particle[i + 1]` (the output of
    /// [`leaf_starts`]), in the box and key map `geometry`, with optional per-leaf NF
    /// values.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a geometry that does not fit the leaves' layout
    /// ([`Geometry::check_fits`]), leaf starts that do not begin at 0 or decrease, or an
    /// NF value equal to [`NF_INTERNAL`]; [`Error::LengthMismatch`] unless there are
    /// `L + 1` leaf starts and `L` NF values; [`Error::TooManyPoints`] for `u32::MAX`
    /// nodes or more.
    pub fn from_leaves(
        leaves: &Leaves,
        leaf_first_particle: &[u32],
        geometry: Geometry<T>,
        nf: Option<&[u64]>,
    ) -> Result<Self> {
        let layout = leaves.layout();
        geometry.check_fits(layout)?;
        let l = leaves.len();
        let lfp = leaf_first_particle;
        orrery_core::executor::check_len("leaf first particles", l + 1, lfp.len())?;
        if lfp[0] != 0 {
            return Err(Error::InvalidArgument {
                what: "leaf first particles",
                reason: format!("must start at particle 0, got {}", lfp[0]),
            });
        }
        if let Some(i) = lfp.par_windows(2).position_first(|w| w[0] > w[1]) {
            return Err(Error::InvalidArgument {
                what: "leaf first particles",
                reason: format!("decrease at leaf {i}: {} > {}", lfp[i], lfp[i + 1]),
            });
        }
        if let Some(values) = nf {
            orrery_core::executor::check_len("NF values", l, values.len())?;
            if let Some(i) = values.par_iter().position_first(|&v| v == NF_INTERNAL) {
                return Err(Error::InvalidArgument {
                    what: "NF values",
                    reason: format!("leaf {i} has u64::MAX, the internal-node sentinel NF_INTERNAL"),
                });
            }
        }
        let nodes = l as u64 + (l as u64 - 1) / u64::from(layout.children() - 1);
        if nodes >= u64::from(NONE) {
            return Err(Error::TooManyPoints { count: nodes as usize, max: NONE as usize - 1, what: "tree nodes" });
        }
        Ok(Self { parts: steps::construct(leaves, lfp, geometry, nf)? })
    }

    /// The view of a built tree over `sorted` (the keys it was built from, made for
    /// `shape`): the leaf starts are recomputed from the keys, the geometry is `shape`
    /// in `sorted.bbox`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the tree, the keys and `shape` disagree on the
    /// layout or the keys are not sorted; otherwise as [`TreeView::from_leaves`].
    pub fn from_tree(tree: &Tree, sorted: &SortedKeys<T>, shape: Shape, nf: Option<&[u64]>) -> Result<Self> {
        let layout = tree.leaves().layout();
        if sorted.layout != layout || shape.layout() != layout {
            return Err(Error::InvalidArgument {
                what: "shape",
                reason: format!(
                    "the tree's layout {layout:?}, the keys' {:?} and {shape:?}'s {:?} must agree",
                    sorted.layout,
                    shape.layout()
                ),
            });
        }
        check_sorted_keys(&sorted.keys, layout)?;
        let lfp = leaf_starts(tree.leaves().keys(), &sorted.keys);
        Self::from_leaves(tree.leaves(), &lfp, Geometry::new(shape, sorted.bbox), nf)
    }

    /// A view from arrays made elsewhere, checked by [`TreeViewParts::check`].
    ///
    /// # Errors
    /// As [`TreeViewParts::check`].
    pub fn from_parts(parts: TreeViewParts<T>) -> Result<Self> {
        parts.check()?;
        Ok(Self { parts })
    }

    /// The arrays, by value.
    pub fn into_parts(self) -> TreeViewParts<T> {
        self.parts
    }

    /// The arrays.
    pub fn parts(&self) -> &TreeViewParts<T> {
        &self.parts
    }

    /// Runs [`TreeViewParts::check`] (always `Ok` for a view made here; a test of the
    /// checker and of the construction at once).
    ///
    /// # Errors
    /// As [`TreeViewParts::check`].
    pub fn check(&self) -> Result<()> {
        self.parts.check()
    }

    /// The box and key map.
    pub fn geometry(&self) -> &Geometry<T> {
        &self.parts.geometry
    }

    /// The key layout.
    pub fn layout(&self) -> KeyLayout {
        self.parts.layout()
    }

    /// Nodes `N`.
    pub fn num_nodes(&self) -> usize {
        self.parts.keys.len()
    }

    /// Leaves `L`.
    pub fn num_leaves(&self) -> usize {
        self.parts.leaf_nodes.len()
    }

    /// Internal nodes: `(L - 1) / (2^b - 1)`.
    pub fn num_internal(&self) -> usize {
        self.num_nodes() - self.num_leaves()
    }

    /// Active particles (the root's).
    pub fn num_particles(&self) -> usize {
        self.parts.particle_leaves.len()
    }

    /// The deepest level.
    pub fn depth(&self) -> u32 {
        self.parts.level_offsets.len() as u32 - 2
    }

    /// First key of each node's cell.
    pub fn keys(&self) -> &[u64] {
        &self.parts.keys
    }

    /// Level of each node.
    pub fn levels(&self) -> &[u32] {
        &self.parts.levels
    }

    /// Parent of each node ([`NONE`] for the root).
    pub fn parents(&self) -> &[u32] {
        &self.parts.parents
    }

    /// First child of each node ([`NONE`] for leaves).
    pub fn first_children(&self) -> &[u32] {
        &self.parts.first_children
    }

    /// First leaf (leaf-array index) of each node.
    pub fn leaf_begins(&self) -> &[u32] {
        &self.parts.leaf_begins
    }

    /// Leaves under each node.
    pub fn leaf_counts(&self) -> &[u32] {
        &self.parts.leaf_counts
    }

    /// First sorted particle of each node.
    pub fn particle_begins(&self) -> &[u32] {
        &self.parts.particle_begins
    }

    /// Particles under each node.
    pub fn particle_counts(&self) -> &[u32] {
        &self.parts.particle_counts
    }

    /// Box centre of each node.
    pub fn centres(&self) -> &[[T; 3]] {
        &self.parts.centres
    }

    /// Box half-extents of each node.
    pub fn half_extents(&self) -> &[[T; 3]] {
        &self.parts.half_extents
    }

    /// NF value of each node, when given ([`NF_INTERNAL`] for internal nodes).
    pub fn nf(&self) -> Option<&[u64]> {
        self.parts.nf.as_deref()
    }

    /// First node of each level, then `N`.
    pub fn level_offsets(&self) -> &[u32] {
        &self.parts.level_offsets
    }

    /// Node of each leaf.
    pub fn leaf_nodes(&self) -> &[u32] {
        &self.parts.leaf_nodes
    }

    /// Leaf of each active sorted particle.
    pub fn particle_leaves(&self) -> &[u32] {
        &self.parts.particle_leaves
    }

    /// Escape index of each node ([`NONE`] at the end of the preorder).
    pub fn escapes(&self) -> &[u32] {
        &self.parts.escapes
    }

    /// DFS preorder position of each node.
    pub fn dfs_positions(&self) -> &[u32] {
        &self.parts.dfs_positions
    }

    /// The nodes in DFS preorder.
    pub fn dfs_order(&self) -> &[u32] {
        &self.parts.dfs_order
    }

    /// Internal nodes per level.
    pub fn parents_per_level(&self) -> &[u32] {
        &self.parts.parents_per_level
    }

    /// Child-centric position of each node.
    pub fn child_centric_positions(&self) -> &[u32] {
        &self.parts.child_centric_positions
    }

    /// Node at each child-centric position.
    pub fn child_centric_nodes(&self) -> &[u32] {
        &self.parts.child_centric_nodes
    }

    /// Child-centric position of child 0, by child-centric position ([`NONE`] for
    /// leaves).
    pub fn child_indices(&self) -> &[u32] {
        &self.parts.child_indices
    }

    /// Whether node `n` is a leaf.
    ///
    /// # Panics
    /// For `n >= num_nodes()`, as every per-node accessor.
    pub fn is_leaf(&self, n: u32) -> bool {
        self.parts.first_children[n as usize] == NONE
    }

    /// The children of node `n`, or `None` for a leaf.
    pub fn children(&self, n: u32) -> Option<Range<u32>> {
        match self.parts.first_children[n as usize] {
            NONE => None,
            first => Some(first..first + self.layout().children()),
        }
    }

    /// The next sibling of node `n`, or `None` for the root and last children.
    pub fn next_sibling(&self, n: u32) -> Option<u32> {
        let parent = self.parts.parents[n as usize];
        if parent == NONE {
            return None;
        }
        let slot = n - self.parts.first_children[parent as usize];
        (slot + 1 < self.layout().children()).then_some(n + 1)
    }

    /// The sorted particles of node `n`.
    pub fn particles(&self, n: u32) -> Range<u32> {
        let begin = self.parts.particle_begins[n as usize];
        begin..begin + self.parts.particle_counts[n as usize]
    }

    /// The box of node `n`.
    pub fn cell_box(&self, n: u32) -> CellBox<T> {
        CellBox { centre: self.parts.centres[n as usize], half: self.parts.half_extents[n as usize] }
    }

    /// The nodes of `level`, or `None` below the deepest level.
    pub fn level_range(&self, level: u32) -> Option<Range<u32>> {
        let o = &self.parts.level_offsets;
        let l = level as usize;
        (l + 1 < o.len()).then(|| o[l]..o[l + 1])
    }

    /// The child-centric position of child `c` of the node at child-centric position
    /// `q`, or `None` for a leaf or `c >= 2^b`.
    pub fn child_centric_child(&self, q: u32, c: u32) -> Option<u32> {
        let first = self.parts.child_indices[q as usize];
        if first == NONE || c >= self.layout().children() {
            return None;
        }
        // Positions keep their level: position q lies on the level of node q.
        let m = self.parts.parents_per_level[self.parts.levels[q as usize] as usize];
        Some(first + c * m)
    }
}
