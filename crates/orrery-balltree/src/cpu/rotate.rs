//! Rotated re-partitions on the CPU; see [`crate::rotate`] for the semantics.

use orrery_core::{Error, Real, Result};
use rayon::prelude::*;

use super::partition_rows;
use crate::input::PointCloud;
use crate::num::{narrow, wide};
use crate::permute::inverse_by_batches;
use crate::rotate::{RotatedPartition, RotationPlan};
use crate::tree::BallTree;

/// The rotated partition of every layer of an Erwin encoder: rotate the slot-ordered
/// points by `rotation` (row-major `dim x dim`, `p' = p R`), partition into balls of
/// `ball_sizes[i]`, coarsen by `strides[i]` between layers.
///
/// ```
/// # use orrery_balltree::{build_balltree, cpu, erwin_rotation_matrix, PointCloud};
/// let points: Vec<f32> = (0..64).map(|i| ((i * 37) % 64) as f32 / 64.0).collect();
/// let cloud = PointCloud::single(&points, 2)?; // 32 points, 32 slots
/// let tree = build_balltree(&cloud)?;
/// let r = erwin_rotation_matrix(45.0, 2)?;
/// let layers = cpu::rotated_partitions(&tree, &cloud, &r, &[8, 4], &[2])?;
/// assert_eq!((layers[0].len(), layers[0].num_balls()), (32, 4));
/// assert_eq!((layers[1].len(), layers[1].num_balls()), (16, 4));
/// # Ok::<(), orrery_core::Error>(())
/// ```
///
/// # Errors
/// [`Error::InvalidArgument`] when `cloud` has other batches than the tree, or a stride
/// or ball size is not a power of two or does not fit the smallest batch of its layer;
/// [`Error::LengthMismatch`] for a rotation that is not `dim x dim` or
/// `strides.len() != ball_sizes.len() - 1`; [`Error::EmptyInput`] for no ball sizes;
/// [`Error::NonFiniteValue`] for a non-finite rotation entry.
pub fn rotated_partitions<T: Real>(
    tree: &BallTree,
    cloud: &PointCloud<'_, T>,
    rotation: &[f64],
    ball_sizes: &[usize],
    strides: &[usize],
) -> Result<Vec<RotatedPartition>> {
    if cloud.batches() != tree.layout().batches() {
        return Err(Error::InvalidArgument {
            what: "cloud",
            reason: "its batches differ from those the tree was built for".into(),
        });
    }
    let plan = RotationPlan::new(tree.layout(), cloud.dim(), rotation, ball_sizes, strides)?;
    let dim = cloud.dim();
    let mut coords = rotate_slots(cloud, tree.indices(), rotation);
    let mut out = Vec::with_capacity(plan.layers.len());
    for (i, (offsets, levels)) in plan.layers.iter().enumerate() {
        let permutation = partition_rows(&coords, dim, offsets, levels);
        let inverse = inverse_by_batches(&permutation, offsets);
        out.push(RotatedPartition {
            ball_size: plan.ball_sizes[i],
            batch_offsets: offsets.clone(),
            permutation,
            inverse,
        });
        if let Some(&stride) = plan.strides.get(i) {
            coords = mean_rows(&coords, dim, stride);
        }
    }
    Ok(out)
}

/// `p' = p R` for the point of every slot, in f64, rounded to `T`.
fn rotate_slots<T: Real>(cloud: &PointCloud<'_, T>, slots: &[u32], rotation: &[f64]) -> Vec<T> {
    let dim = cloud.dim();
    let mut out = vec![T::ZERO; slots.len() * dim];
    out.par_chunks_mut(dim).zip(slots.par_iter()).for_each(|(row, &i)| {
        let p = cloud.point(i as usize);
        for (c, o) in row.iter_mut().enumerate() {
            let v: f64 = p.iter().enumerate().map(|(d, &x)| wide(x) * rotation[d * dim + c]).sum();
            *o = narrow(v);
        }
    });
    out
}

/// Means of `stride` consecutive rows, in f64, rounded to `T`.
fn mean_rows<T: Real>(rows: &[T], dim: usize, stride: usize) -> Vec<T> {
    let mut out = vec![T::ZERO; rows.len() / stride];
    out.par_chunks_mut(dim).zip(rows.par_chunks(dim * stride)).for_each(|(o, group)| {
        for (c, v) in o.iter_mut().enumerate() {
            let sum: f64 = (0..stride).map(|k| wide(group[k * dim + c])).sum();
            *v = narrow(sum / stride as f64);
        }
    });
    out
}
