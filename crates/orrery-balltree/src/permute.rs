//! Moving data between the original point order and the tree's orders.
//!
//! Three maps, all O(n) (no argsort; Erwin recovers the original order with
//! `argsort(tree_idx[tree_mask])`):
//!
//! - [`BallTree::permutation`]: tree order without padding, `perm[j]` = the point at
//!   position `j` (the unmasked slots, in slot order);
//! - [`BallTree::inverse_permutation`]: `inv[perm[j]] = j`;
//! - [`BallTree::slot_of_point`]: the unmasked slot of every point, to read a point's
//!   row back out of slot-ordered data ([`BallTree::scatter_to_points`]).
//!
//! Points of batch `b` appear only in batch `b`'s slots, so the scatters run one task
//! per batch on disjoint output ranges.

use orrery_core::{Error, Result};
use rayon::prelude::*;

use crate::cpu::cut;
use crate::tree::BallTree;

impl BallTree {
    /// The points in tree order without padding: the indices of the unmasked slots.
    pub fn permutation(&self) -> Vec<u32> {
        self.indices().par_iter().zip(self.mask().par_iter()).filter(|(_, m)| **m).map(|(i, _)| *i).collect()
    }

    /// The position of every point in [`BallTree::permutation`].
    pub fn inverse_permutation(&self) -> Vec<u32> {
        inverse_by_batches(&self.permutation(), self.layout().point_offsets())
    }

    /// The slot that holds every point (its unmasked slot).
    pub fn slot_of_point(&self) -> Vec<u32> {
        let points = self.layout().point_offsets();
        let slots = self.layout().slot_offsets();
        let mut out = vec![0u32; self.num_points()];
        let parts = cut(&mut out, points.windows(2).map(|w| (w[1] - w[0]) as usize));
        parts.into_par_iter().enumerate().for_each(|(b, out)| {
            let first = points[b];
            for s in slots[b]..slots[b + 1] {
                if self.mask()[s as usize] {
                    out[(self.indices()[s as usize] - first) as usize] = s;
                }
            }
        });
        out
    }

    /// Rows of per-point data in slot order, padding slots repeating their point
    /// (Erwin's `x[tree_idx]`): `values` has `num_points() * width` entries, the result
    /// `num_slots() * width`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for `width == 0` or `num_points() * width` beyond
    /// `usize`; [`Error::LengthMismatch`] when `values.len() != num_points() * width`.
    pub fn gather_to_slots<V: Copy + Send + Sync>(&self, values: &[V], width: usize) -> Result<Vec<V>> {
        check_rows("values", values.len(), self.num_points(), width)?;
        Ok(gather_rows(values, self.indices(), width))
    }

    /// Rows of slot-ordered data back in the original point order, read from each
    /// point's unmasked slot (Erwin's `x[tree_mask][argsort(tree_idx[tree_mask])]`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for `width == 0` or `num_slots() * width` beyond
    /// `usize`; [`Error::LengthMismatch`] when `slot_values.len() != num_slots() * width`.
    pub fn scatter_to_points<V: Copy + Send + Sync>(&self, slot_values: &[V], width: usize) -> Result<Vec<V>> {
        check_rows("slot values", slot_values.len(), self.num_slots(), width)?;
        Ok(gather_rows(slot_values, &self.slot_of_point(), width))
    }
}

/// The inverse of a permutation of `0..perm.len()`: `inv[perm[j]] = j`, in O(n).
///
/// # Errors
/// [`Error::IndexOutOfBounds`] for an entry `>= perm.len()`;
/// [`Error::InvalidArgument`] when an entry repeats.
pub fn invert_permutation(perm: &[u32]) -> Result<Vec<u32>> {
    let n = perm.len();
    let mut inv = vec![u32::MAX; n];
    for (j, &p) in perm.iter().enumerate() {
        let Some(slot) = inv.get_mut(p as usize) else {
            return Err(Error::IndexOutOfBounds { what: "permutation", position: j, index: p as u64, len: n });
        };
        if *slot != u32::MAX {
            return Err(Error::InvalidArgument {
                what: "permutation",
                reason: format!("{p} appears at positions {} and {j}", *slot),
            });
        }
        *slot = j as u32;
    }
    Ok(inv)
}

/// The inverse of a permutation that maps every batch range `offsets[b]..offsets[b+1]`
/// onto itself, one task per batch.
pub(crate) fn inverse_by_batches(perm: &[u32], offsets: &[u32]) -> Vec<u32> {
    let mut inv = vec![0u32; perm.len()];
    let parts = cut(&mut inv, offsets.windows(2).map(|w| (w[1] - w[0]) as usize));
    parts.into_par_iter().enumerate().for_each(|(b, out)| {
        let first = offsets[b];
        for j in first..offsets[b + 1] {
            out[(perm[j as usize] - first) as usize] = j;
        }
    });
    inv
}

/// `out[j] = values[rows[j]]`, row by row.
pub(crate) fn gather_rows<V: Copy + Send + Sync>(values: &[V], rows: &[u32], width: usize) -> Vec<V> {
    let mut out = Vec::with_capacity(rows.len() * width);
    out.par_extend(
        rows.par_iter().flat_map_iter(|&r| values[r as usize * width..(r as usize + 1) * width].iter().copied()),
    );
    out
}

pub(crate) fn check_rows(what: &'static str, len: usize, rows: usize, width: usize) -> Result<()> {
    if width == 0 {
        return Err(Error::InvalidArgument { what: "width", reason: "rows need at least one column".into() });
    }
    let Some(expected) = rows.checked_mul(width) else {
        return Err(Error::InvalidArgument {
            what: "width",
            reason: format!("{rows} rows of {width} columns overflow usize ({what} has {len})"),
        });
    };
    if len != expected {
        return Err(Error::LengthMismatch { what, expected, actual: len });
    }
    Ok(())
}
