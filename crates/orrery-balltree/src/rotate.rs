//! Rotated re-partitions for cross-ball attention (Erwin's
//! `build_balltree_with_rotations`).
//!
//! Erwin alternates attention inside the balls of the tree with attention inside the
//! balls of a second partition, made on a rotated copy of the points, so information
//! crosses ball boundaries. Per layer `i` of the encoder (ball size `b_i`, then a
//! coarsening by `stride_i`):
//!
//! 1. layer 0 takes the points in slot order, padding included (`x[tree_idx]`), and
//!    rotates them: `p' = p R` (row vector times the `dim x dim` matrix `R`);
//! 2. every batch of layer `i` is partitioned ([`crate::partition`]) until its groups
//!    hold `b_i` entries: `log2(entries_b / b_i)` times. The result is a permutation of
//!    the layer's entries (indices into the layer's slot-ordered array), grouped in
//!    balls of exactly `b_i`, and its inverse;
//! 3. the next layer's entries are the means of `stride_i` consecutive entries in slot
//!    order (the rotated coordinates are pooled like the features).
//!
//! Erwin computes one partition depth for all batches from the *total* number of slots,
//! which partitions further than `b_i` inside each ball; the further splits only reorder
//! points inside a ball, so the balls of `b_i` consecutive entries are the same. Here the
//! depth is per batch and each ball lists its entries by ascending index.
//!
//! Rotation and pooling are computed in f64 and rounded to `T` once; Erwin's float32
//! `matmul` and `mean` may round differently in the last bit, which can move a point
//! across a split only where two coordinates are within an ulp of each other at the
//! median.

use orrery_core::{Error, Result};

use crate::input::{check_finite, invalid};
use crate::layout::TreeLayout;

/// Erwin's rotation matrix (`generate_rotation_matrix`) for `angle_degrees`, row-major,
/// applied as `p' = p R`. In 2D a rotation by the angle; in 3D the composition of three
/// rotations by the same angle about the three axes.
///
/// # Errors
/// [`Error::InvalidArgument`] for `dim` other than 2 or 3 (pass your own matrix to
/// [`crate::cpu::rotated_partitions`] there); [`Error::NonFiniteValue`] for a
/// non-finite angle.
pub fn erwin_rotation_matrix(angle_degrees: f64, dim: usize) -> Result<Vec<f64>> {
    if !angle_degrees.is_finite() {
        return Err(Error::NonFiniteValue { what: "angle", index: 0, value: angle_degrees });
    }
    let (s, c) = angle_degrees.to_radians().sin_cos();
    match dim {
        2 => Ok(vec![c, -s, s, c]),
        3 => Ok(vec![
            c * c,
            s * c * (s - 1.0),
            s * (s + c * c),
            s * c,
            s * s * s + c * c,
            s * c * (s - 1.0),
            -s,
            s * c,
            c * c,
        ]),
        _ => Err(invalid("dim", format!("Erwin's rotation matrix exists for 2 and 3 dimensions, not {dim}"))),
    }
}

/// One layer's rotated partition: a permutation of the layer's entries into balls of
/// `ball_size`, and its inverse.
///
/// Layer `i` has `num_slots / (stride_0 * ... * stride_{i-1})` entries (the tree's
/// slots after `i` coarsenings), batch after batch. Erwin's use:
/// `x = block(x[permutation], pos[permutation])[inverse]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RotatedPartition {
    pub(crate) ball_size: u32,
    pub(crate) batch_offsets: Vec<u32>,
    pub(crate) permutation: Vec<u32>,
    pub(crate) inverse: Vec<u32>,
}

impl RotatedPartition {
    /// Entries per ball.
    pub fn ball_size(&self) -> usize {
        self.ball_size as usize
    }

    /// CSR offsets of each batch's entries in this layer.
    pub fn batch_offsets(&self) -> &[u32] {
        &self.batch_offsets
    }

    /// The layer's entries in rotated-ball order: `permutation[j]` is the entry at
    /// position `j`; positions `b * ball_size .. (b + 1) * ball_size` form ball `b`.
    pub fn permutation(&self) -> &[u32] {
        &self.permutation
    }

    /// `inverse[permutation[j]] = j`.
    pub fn inverse(&self) -> &[u32] {
        &self.inverse
    }

    /// Number of entries in this layer.
    pub fn len(&self) -> usize {
        self.permutation.len()
    }

    /// Always `false` (a layer holds at least one ball).
    pub fn is_empty(&self) -> bool {
        self.permutation.is_empty()
    }

    /// Number of balls.
    pub fn num_balls(&self) -> usize {
        self.permutation.len() / self.ball_size as usize
    }

    /// The entries of ball `b`.
    ///
    /// # Panics
    /// When `b >= num_balls()`.
    pub fn ball(&self, b: usize) -> &[u32] {
        let s = self.ball_size as usize;
        &self.permutation[b * s..(b + 1) * s]
    }
}

/// The validated shape of the rotated partitions of a tree.
#[derive(Debug, Clone)]
pub(crate) struct RotationPlan {
    /// Per layer: entries per batch (CSR offsets), and partition depth per batch.
    pub layers: Vec<(Vec<u32>, Vec<u32>)>,
    /// Ball size per layer.
    pub ball_sizes: Vec<u32>,
    /// Strides between layers.
    pub strides: Vec<usize>,
}

impl RotationPlan {
    /// Checks the rotation and the layer shapes against the tree layout.
    pub fn new(
        layout: &TreeLayout,
        dim: usize,
        rotation: &[f64],
        ball_sizes: &[usize],
        strides: &[usize],
    ) -> Result<Self> {
        if rotation.len() != dim * dim {
            return Err(Error::LengthMismatch { what: "rotation", expected: dim * dim, actual: rotation.len() });
        }
        check_finite(rotation, "rotation")?;
        if ball_sizes.is_empty() {
            return Err(Error::EmptyInput { what: "ball sizes", min: 1 });
        }
        if strides.len() + 1 != ball_sizes.len() {
            return Err(Error::LengthMismatch {
                what: "strides (one fewer than ball sizes)",
                expected: ball_sizes.len() - 1,
                actual: strides.len(),
            });
        }
        let smallest = (0..layout.num_batches()).map(|b| layout.batch_slots(b) as usize).min().unwrap_or(0);
        let mut scale = 1usize;
        let mut layers = Vec::with_capacity(ball_sizes.len());
        for (i, &bs) in ball_sizes.iter().enumerate() {
            if i > 0 {
                let stride = strides[i - 1];
                let product = scale.checked_mul(stride);
                match product {
                    Some(p) if stride.is_power_of_two() && p <= smallest => scale = p,
                    _ => {
                        let product =
                            product.map_or_else(|| format!("{scale} * {stride} overflows usize"), |p| p.to_string());
                        return Err(invalid(
                            "strides",
                            format!(
                                "stride {stride} of layer {i}: strides must be powers of two whose product \
                                 ({product}) fits the smallest batch ({smallest} slots)"
                            ),
                        ));
                    }
                }
            }
            if !bs.is_power_of_two() || bs > smallest / scale {
                return Err(invalid(
                    "ball sizes",
                    format!(
                        "ball size {bs} of layer {i}: must be a power of two no larger than the smallest \
                         batch of the layer ({} entries)",
                        smallest / scale
                    ),
                ));
            }
            let offsets: Vec<u32> = layout.slot_offsets().iter().map(|&o| o / scale as u32).collect();
            let depths = offsets.windows(2).map(|w| ((w[1] - w[0]) as usize / bs).trailing_zeros()).collect();
            layers.push((offsets, depths));
        }
        Ok(Self { layers, ball_sizes: ball_sizes.iter().map(|&b| b as u32).collect(), strides: strides.to_vec() })
    }
}
