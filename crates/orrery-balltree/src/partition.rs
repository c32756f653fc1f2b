//! [`Partition`]: a ball tree cut at a target level, without padding.
//!
//! Erwin's `partition_balltree(data, batch_idx, target_level)` applies the split rule
//! of [`crate::split`] to every batch `target_level` times (a node of one point is not
//! split further) and lists the points group by group, with no padding slots. Erwin
//! uses it for the rotated trees of cross-ball attention: a tree built only down to the
//! ball size of a layer.
//!
//! The groups are the balls at depth `target_level` of the recursion: contiguous in
//! [`Partition::order`], left (smaller) child first, each by ascending point index.
//! Their sizes depend only on the batch sizes ([`group_sizes`]). For a batch of `n`
//! points and `target_level = ceil(log2 n) - 1`, the order is the tree order of
//! [`crate::BallTree::permutation`]; for a batch of `2^p` points every group at level
//! `t <= p` has `2^(p - t)` points.

use orrery_core::Result;

use crate::input::Batches;
use crate::layout::child_sizes;
use crate::permute::invert_permutation;

/// The points of every batch, cut into groups at a target level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    order: Vec<u32>,
    group_offsets: Vec<u32>,
    batch_group_offsets: Vec<u32>,
}

impl Partition {
    /// Assembles a partition from its point order; the groups follow from the batch
    /// sizes.
    pub(crate) fn new(order: Vec<u32>, batches: &Batches, target_level: u32) -> Self {
        let mut group_offsets = vec![0u32];
        let mut batch_group_offsets = vec![0u32];
        let mut sizes = Vec::new();
        for b in 0..batches.len() {
            sizes.clear();
            group_sizes(batches.size(b), target_level, &mut sizes);
            for &s in &sizes {
                group_offsets.push(group_offsets[group_offsets.len() - 1] + s);
            }
            batch_group_offsets.push((group_offsets.len() - 1) as u32);
        }
        Self { order, group_offsets, batch_group_offsets }
    }

    /// The global point indices, group after group (Erwin's output).
    pub fn order(&self) -> &[u32] {
        &self.order
    }

    /// CSR offsets of the groups into [`Partition::order`].
    pub fn group_offsets(&self) -> &[u32] {
        &self.group_offsets
    }

    /// CSR offsets of each batch's groups into [`Partition::group_offsets`].
    pub fn batch_group_offsets(&self) -> &[u32] {
        &self.batch_group_offsets
    }

    /// Number of groups.
    pub fn num_groups(&self) -> usize {
        self.group_offsets.len() - 1
    }

    /// The points of group `g`.
    ///
    /// # Panics
    /// When `g >= num_groups()`.
    pub fn group(&self, g: usize) -> &[u32] {
        &self.order[self.group_offsets[g] as usize..self.group_offsets[g + 1] as usize]
    }

    /// The position of every point in [`Partition::order`] (O(n), no sort).
    ///
    /// # Errors
    /// Never for a partition made by this crate (the order is a permutation).
    pub fn inverse(&self) -> Result<Vec<u32>> {
        invert_permutation(&self.order)
    }

    /// The point order, taking it out.
    pub fn into_order(self) -> Vec<u32> {
        self.order
    }
}

/// Appends the sizes of the groups of a batch of `m` points partitioned
/// `target_level` times, in order (a group of one point is not split further).
pub fn group_sizes(m: usize, target_level: u32, out: &mut Vec<u32>) {
    if target_level == 0 || m <= 1 {
        out.push(m as u32);
        return;
    }
    // Sizes at one depth take at most two values (floor and ceiling of m / 2^t), but
    // their order is not simple; recursion is O(groups).
    let (l, r) = child_sizes(m);
    group_sizes(l, target_level - 1, out);
    group_sizes(r, target_level - 1, out);
}
