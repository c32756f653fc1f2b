//! [`BallTree`]: the output of a build, independent of the executor that made it.
//!
//! The tree is Erwin's `(tree_idx, tree_mask)` pair over the [`TreeLayout`]: for every
//! slot, the global index of the point in it and whether the slot is real. Slot `s` of
//! batch `b` lies in the leaf `s / 2`; a leaf of two points holds both (ascending
//! index), a leaf of one point holds it twice with the second slot masked `false`.
//! A batch of one point is `[i, i]` with mask `[true, false]`.
//!
//! Worked example (one batch of 5 points on a line, `x = [0.4, 0.0, 0.3, 0.1, 0.2]`):
//! the root splits 2 | 3 (`{1, 3}` | `{4, 2, 0}`), the left node 1 | 1, the right node
//! 1 | 2 (`{4}` | `{2, 0}`), so
//!
//! ```text
//! slot    0  1  2  3  4  5  6  7
//! index   1  1  3  3  4  4  0  2
//! mask    T  F  T  F  T  F  T  T
//! ```

use orrery_core::{Error, Result};

use crate::invariants::check_slots;
use crate::layout::TreeLayout;

/// A batched ball tree in Erwin's layout (the crate documentation; a worked example in
/// `src/tree.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BallTree {
    layout: TreeLayout,
    indices: Vec<u32>,
    mask: Vec<bool>,
}

impl BallTree {
    /// Assembles a tree from its parts (e.g. downloaded from a device).
    ///
    /// Checks that the parts are a ball tree of the layout's batches, which is what
    /// every operation on the tree relies on (invariants 2 and 3 of
    /// [`crate::invariants`]): every slot holds a point of its batch, the unmasked slots
    /// hold each point of the batch exactly once, and a masked slot is the second slot
    /// of a leaf and repeats its unmasked first slot. Whether it is *the* tree of some
    /// points (leaf order, the split rule) is [`crate::check_tree`]'s to check. Cost:
    /// one pass over the slots, parallel across batches (1.3 ms for one batch of 2^20
    /// points on the 2-core development machine).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `indices` or `mask` do not have
    /// `layout.num_slots()` entries; [`Error::IndexOutOfBounds`] (`what = "tree
    /// indices"`, `position` = the slot) for an index `>= layout.num_points()`;
    /// [`Error::InvalidArgument`] (`what = "tree indices"` or `"tree mask"`) naming the
    /// first slot and value that break the rest.
    pub fn from_parts(layout: TreeLayout, indices: Vec<u32>, mask: Vec<bool>) -> Result<Self> {
        let slots = layout.num_slots();
        if indices.len() != slots {
            return Err(Error::LengthMismatch { what: "tree indices", expected: slots, actual: indices.len() });
        }
        if mask.len() != slots {
            return Err(Error::LengthMismatch { what: "tree mask", expected: slots, actual: mask.len() });
        }
        check_slots(&layout, &indices, &mask)?;
        Ok(Self { layout, indices, mask })
    }

    /// A tree from parts that a builder of this crate made (correct by construction:
    /// [`crate::check_tree`] verifies the builds in the tests), without the O(slots)
    /// pass of [`BallTree::from_parts`] (about 1.5% of a CPU build of 2^20 points),
    /// which debug builds still run.
    pub(crate) fn from_built_parts(layout: TreeLayout, indices: Vec<u32>, mask: Vec<bool>) -> Self {
        debug_assert_eq!((indices.len(), mask.len()), (layout.num_slots(), layout.num_slots()));
        debug_assert_eq!(check_slots(&layout, &indices, &mask), Ok(()));
        Self { layout, indices, mask }
    }

    /// The parts: layout, indices, mask.
    pub fn into_parts(self) -> (TreeLayout, Vec<u32>, Vec<bool>) {
        (self.layout, self.indices, self.mask)
    }

    /// The slot layout (offsets, sizes and depths of the batches).
    pub fn layout(&self) -> &TreeLayout {
        &self.layout
    }

    /// The global point index in every slot (Erwin's `tree_idx`).
    pub fn indices(&self) -> &[u32] {
        &self.indices
    }

    /// Whether every slot holds a real point rather than a duplicate (Erwin's
    /// `tree_mask`).
    pub fn mask(&self) -> &[bool] {
        &self.mask
    }

    /// Number of points.
    pub fn num_points(&self) -> usize {
        self.layout.num_points()
    }

    /// Number of slots.
    pub fn num_slots(&self) -> usize {
        self.layout.num_slots()
    }

    /// Number of batches.
    pub fn num_batches(&self) -> usize {
        self.layout.num_batches()
    }

    /// The indices and mask of batch `b`'s slots.
    ///
    /// # Panics
    /// When `b >= num_batches()`.
    pub fn batch(&self, b: usize) -> (&[u32], &[bool]) {
        let o = self.layout.slot_offsets();
        let r = o[b] as usize..o[b + 1] as usize;
        (&self.indices[r.clone()], &self.mask[r])
    }

    /// Fraction of slots that are padding; see [`TreeLayout::padding_ratio`].
    pub fn padding_ratio(&self) -> f64 {
        self.layout.padding_ratio()
    }
}
