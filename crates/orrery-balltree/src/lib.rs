//! # orrery-balltree
//!
//! Batched perfect ball trees in the layout of the Erwin transformer (Zhdanov et al.
//! 2025), built in parallel, and the operations a point-cloud model needs on them.
//!
//! - Input: a [`PointCloud`]: `n` points of 1 to 16 coordinates (f32 or f64,
//!   row-major) in [`Batches`] (CSR offsets or a sorted batch index), validated once.
//! - The tree ([`BallTree`]): per batch, `2^(L+1)` slots with `L = ceil(log2 n) - 1`
//!   (the next power of two `>= n`; 2 for a batch of one point), holding global point
//!   indices (`u32`) and a mask that is `false` on padding. Nodes split at the median
//!   of the dimension of largest spread; see [`split`] for the exact rule and
//!   [`check_tree`] for the invariants that determine the tree.
//! - Its shape ([`TreeLayout`], [`Level`]): batch offsets, sizes, depths, ball ids,
//!   the coarsened batch index and the padding ratio, all pure functions of the batch
//!   sizes.
//! - Operations: the permutation into tree order and its O(n) inverse
//!   ([`BallTree::permutation`], [`BallTree::inverse_permutation`],
//!   [`BallTree::slot_of_point`]), per-ball means, centres and radii
//!   ([`BallTree::pool_mean`], [`BallTree::ball_stats`]), Erwin's partition without
//!   padding ([`partition_balltree`]) and the rotated re-partitions of cross-ball
//!   attention ([`cpu::rotated_partitions`], [`build_balltree_with_rotations`]).
//!
//! ```
//! use orrery_balltree::{build_balltree, Batches, Level, PointCloud, Weighting};
//!
//! // Two batches in 2D: 5 points and 2 points.
//! let points = [0.0f32, 0.0, 1.0, 0.0, 2.0, 0.1, 3.0, 0.0, 4.0, 0.2, 0.0, 5.0, 0.0, 6.0];
//! let cloud = PointCloud::new(&points, 2, Batches::from_batch_index(&[0u32, 0, 0, 0, 0, 1, 1])?)?;
//! let tree = build_balltree(&cloud)?;
//! assert_eq!(tree.layout().slot_offsets(), &[0, 8, 10]);
//! assert_eq!(tree.indices(), &[0, 0, 1, 1, 2, 2, 3, 4, 5, 6]);
//! assert_eq!(tree.mask(), &[true, false, true, false, true, false, true, true, true, true]);
//! assert_eq!(tree.permutation(), vec![0, 1, 2, 3, 4, 5, 6]);
//! // Leaf centres (Erwin's first pooling): 5 balls of 2 slots.
//! let centres = tree.pool_mean(&points, 2, Level::Height(1), Weighting::Slots)?;
//! assert_eq!(&centres[6..8], &[3.5, 0.1]);
//! # Ok::<(), orrery_core::Error>(())
//! ```
//!
//! # Executors
//! [`cpu`] builds on rayon: in parallel across batches, across subtrees, and across
//! the whole cloud at the top levels. The output types ([`BallTree`], [`Partition`],
//! [`RotatedPartition`]) and the shape ([`TreeLayout`]) do not depend on the executor;
//! a GPU build produces the same indices, bit for bit, and [`check_tree`] verifies any
//! of them against the points.
//!
//! # Compatibility with Erwin's `balltree-erwin`
//! On input without tied coordinates, every ball at every level holds the same points
//! as the reference's (golden tests in `tests/balltree/golden.rs`). Where the reference leaves
//! things to `std::nth_element` this crate fixes them: ties break by point index, and
//! the points of a leaf (or of a final partition group) are listed by ascending index.
//! A batch of one point, which the reference rejects, gives `[i, i]` with mask
//! `[true, false]`.

#[allow(
    clippy::inline_always,
    reason = "hot paths are compiled per instruction-set level only by being inlined into it (cpu::level)"
)]
pub mod cpu;
pub mod gpu;
mod input;
pub mod invariants;
pub mod layout;
mod num;
pub mod partition;
mod permute;
pub mod pool;
pub mod rotate;
#[allow(
    clippy::inline_always,
    reason = "hot paths are compiled per instruction-set level only by being inlined into it (cpu::level)"
)]
pub mod split;
mod tree;

pub use input::{Batches, MAX_DIM, PointCloud};
pub use invariants::check_tree;
pub use layout::{Level, TreeLayout, child_sizes, tree_depth, tree_slots};
pub use partition::Partition;
pub use permute::invert_permutation;
pub use pool::{BallStats, Weighting};
pub use rotate::{RotatedPartition, erwin_rotation_matrix};
pub use tree::BallTree;

use orrery_core::{Real, Result};

/// Builds the ball tree of every batch on the CPU ([`cpu::build`]).
///
/// # Errors
/// As [`cpu::build`].
pub fn build_balltree<T: Real>(cloud: &PointCloud<'_, T>) -> Result<BallTree> {
    cpu::build(cloud)
}

/// Erwin's `partition_balltree` on the CPU ([`cpu::partition`]).
///
/// # Errors
/// As [`cpu::partition`].
pub fn partition_balltree<T: Real>(cloud: &PointCloud<'_, T>, target_level: u32) -> Result<Partition> {
    cpu::partition(cloud, target_level)
}

/// Erwin's `build_balltree_with_rotations` on the CPU: the tree, and for an angle other
/// than 0 the rotated partition of every layer ([`cpu::rotated_partitions`] with
/// [`erwin_rotation_matrix`]`(angle_degrees, dim)`). With angle 0 the list is empty.
///
/// # Errors
/// As [`cpu::build`] and [`cpu::rotated_partitions`]; [`orrery_core::Error::InvalidArgument`]
/// for a non-zero angle in other than 2 or 3 dimensions.
pub fn build_balltree_with_rotations<T: Real>(
    cloud: &PointCloud<'_, T>,
    angle_degrees: f64,
    ball_sizes: &[usize],
    strides: &[usize],
) -> Result<(BallTree, Vec<RotatedPartition>)> {
    let tree = cpu::build(cloud)?;
    let identity: Vec<f64> =
        (0..cloud.dim() * cloud.dim()).map(|k| if k % (cloud.dim() + 1) == 0 { 1.0 } else { 0.0 }).collect();
    if angle_degrees == 0.0 {
        // Validate the layer shapes all the same, as the reference asserts them.
        rotate::RotationPlan::new(tree.layout(), cloud.dim(), &identity, ball_sizes, strides)?;
        return Ok((tree, Vec::new()));
    }
    let rotation = erwin_rotation_matrix(angle_degrees, cloud.dim())?;
    let rotated = cpu::rotated_partitions(&tree, cloud, &rotation, ball_sizes, strides)?;
    Ok((tree, rotated))
}
