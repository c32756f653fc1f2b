//! Validated input: batches as CSR offsets and point clouds in row-major form.
//!
//! Every ball-tree operation takes a [`PointCloud`]: `n` points of `dim` coordinates
//! each (`points[i * dim + d]`), split into batches by [`Batches`] (CSR offsets, one
//! contiguous run of points per batch). Both are validated once, here, so the builders
//! and executors trust them:
//!
//! - `dim` is in `1..=`[`MAX_DIM`];
//! - there is at least one batch and no batch is empty;
//! - offsets start at 0, increase strictly and end at `n`;
//! - a batch index is sorted, starts at 0 and has no gaps;
//! - `n <= u32::MAX` (indices and permutations are `u32`);
//! - every coordinate is finite.

use std::fmt::Display;
use std::ops::Range;

use orrery_core::{Error, MAX_POINTS, Real, Result};

use crate::num::wide;
use rayon::prelude::*;

/// The largest number of coordinates per point.
pub const MAX_DIM: usize = 16;

/// Batches of a point cloud as CSR offsets: batch `b` holds points
/// `offsets[b]..offsets[b + 1]`.
///
/// Invariants (checked by every constructor): at least one batch, `offsets[0] == 0`,
/// strictly increasing (no empty batch), and the last offset (the number of points) at
/// most `u32::MAX`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Batches {
    offsets: Vec<u32>,
}

impl Batches {
    /// One batch of `n` points.
    ///
    /// # Errors
    /// [`Error::EmptyInput`] when `n == 0`; [`Error::TooManyPoints`] when
    /// `n > u32::MAX`.
    pub fn single(n: usize) -> Result<Self> {
        if n == 0 {
            return Err(Error::EmptyInput { what: "points", min: 1 });
        }
        Self::from_offsets(&[0, n])
    }

    /// Batches from CSR offsets (`len = batches + 1`), in any integer type.
    ///
    /// ```
    /// # use orrery_balltree::Batches;
    /// let b = Batches::from_offsets(&[0usize, 3, 8])?;
    /// assert_eq!((b.len(), b.num_points(), b.size(1)), (2, 8, 5));
    /// # Ok::<(), orrery_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::EmptyInput`] for fewer than two offsets (no batch);
    /// [`Error::InvalidArgument`] naming the first offset that is negative, not zero at
    /// the start, or not larger than its predecessor (an empty batch or offsets that are
    /// not monotone); [`Error::TooManyPoints`] when the last offset exceeds `u32::MAX`.
    pub fn from_offsets<I>(offsets: &[I]) -> Result<Self>
    where
        I: Copy + TryInto<u64> + Display,
    {
        if offsets.len() < 2 {
            return Err(Error::EmptyInput { what: "batch offsets", min: 2 });
        }
        let mut out = Vec::with_capacity(offsets.len());
        let mut prev = 0u64;
        for (b, &o) in offsets.iter().enumerate() {
            let Ok(v) = o.try_into() else {
                return Err(invalid("batch offsets", format!("offsets[{b}] = {o} is negative or too large")));
            };
            if b == 0 && v != 0 {
                return Err(invalid("batch offsets", format!("offsets[0] = {o}: offsets must start at 0")));
            }
            if b > 0 && v == prev {
                return Err(invalid(
                    "batch offsets",
                    format!("batch {} is empty: offsets[{}] = offsets[{b}] = {o}", b - 1, b - 1),
                ));
            }
            if b > 0 && v < prev {
                return Err(invalid(
                    "batch offsets",
                    format!("offsets[{b}] = {o} is smaller than offsets[{}] = {prev}: offsets must increase", b - 1),
                ));
            }
            if v > MAX_POINTS as u64 {
                return Err(Error::TooManyPoints {
                    count: usize::try_from(v).unwrap_or(usize::MAX),
                    max: MAX_POINTS,
                    what: "points",
                });
            }
            out.push(v as u32);
            prev = v;
        }
        Ok(Self { offsets: out })
    }

    /// Batches from a batch index: `batch_index[i]` is the batch of point `i`. The
    /// index must be sorted, start at 0 and have no gaps (`0, 0, 1, 1, 1, 2`), as Erwin
    /// and PyTorch Geometric produce it.
    ///
    /// ```
    /// # use orrery_balltree::Batches;
    /// let b = Batches::from_batch_index(&[0u32, 0, 1, 1, 1, 2])?;
    /// assert_eq!(b.offsets(), &[0, 2, 5, 6]);
    /// # Ok::<(), orrery_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::EmptyInput`] for an empty index; [`Error::TooManyPoints`] beyond
    /// `u32::MAX` points; [`Error::InvalidArgument`] naming the first entry that is
    /// negative, does not start at 0, decreases (unsorted) or skips a batch (gapped).
    pub fn from_batch_index<I>(batch_index: &[I]) -> Result<Self>
    where
        I: Copy + TryInto<u64> + Display,
    {
        if batch_index.is_empty() {
            return Err(Error::EmptyInput { what: "batch index", min: 1 });
        }
        if batch_index.len() > MAX_POINTS {
            return Err(Error::TooManyPoints { count: batch_index.len(), max: MAX_POINTS, what: "points" });
        }
        let mut offsets = vec![0u32];
        let mut prev = 0u64;
        for (i, &b) in batch_index.iter().enumerate() {
            let Ok(v) = b.try_into() else {
                return Err(invalid("batch index", format!("batch_index[{i}] = {b} is negative or too large")));
            };
            if i == 0 {
                if v != 0 {
                    return Err(invalid("batch index", format!("batch_index[0] = {b}: batches must start at 0")));
                }
                continue;
            }
            if v < prev {
                return Err(invalid(
                    "batch index",
                    format!("batch_index[{i}] = {b} follows {prev}: the batch index must be sorted"),
                ));
            }
            if v > prev + 1 {
                return Err(invalid(
                    "batch index",
                    format!("batch_index[{i}] = {b} follows {prev}: batches {}..{b} are missing (gap)", prev + 1),
                ));
            }
            if v == prev + 1 {
                offsets.push(i as u32);
            }
            prev = v;
        }
        offsets.push(batch_index.len() as u32);
        Ok(Self { offsets })
    }

    /// The CSR offsets (`len() + 1` entries, starting at 0, ending at the number of
    /// points).
    pub fn offsets(&self) -> &[u32] {
        &self.offsets
    }

    /// Number of batches (at least 1).
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Always `false`: a validated `Batches` holds at least one batch.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Total number of points.
    pub fn num_points(&self) -> usize {
        self.offsets[self.offsets.len() - 1] as usize
    }

    /// Number of points in batch `b`.
    ///
    /// # Panics
    /// When `b >= self.len()`.
    pub fn size(&self, b: usize) -> usize {
        (self.offsets[b + 1] - self.offsets[b]) as usize
    }

    /// The points of batch `b`.
    ///
    /// # Panics
    /// When `b >= self.len()`.
    pub fn range(&self, b: usize) -> Range<usize> {
        self.offsets[b] as usize..self.offsets[b + 1] as usize
    }

    /// The batch index: the batch of every point (`num_points()` entries).
    pub fn batch_index(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.num_points());
        for b in 0..self.len() {
            out.resize(out.len() + self.size(b), b as u32);
        }
        out
    }
}

/// A validated, borrowed point cloud: `points` holds `n` rows of `dim` coordinates
/// (row-major, `points[i * dim + d]`), split into [`Batches`].
#[derive(Debug, Clone)]
pub struct PointCloud<'a, T: Real> {
    points: &'a [T],
    dim: usize,
    batches: Batches,
}

impl<'a, T: Real> PointCloud<'a, T> {
    /// Borrows `points` (`n * dim` coordinates) split into `batches`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for `dim` outside `1..=16`;
    /// [`Error::LengthMismatch`] when `points.len() != batches.num_points() * dim` (so
    /// offsets that do not end at `n` are caught here);
    /// [`Error::NonFiniteValue`] (`what = "points"`) for the first NaN or infinite
    /// coordinate, at flat index `point * dim + coordinate`.
    pub fn new(points: &'a [T], dim: usize, batches: Batches) -> Result<Self> {
        check_dim(dim)?;
        let expected = batches.num_points() * dim;
        if points.len() != expected {
            return Err(Error::LengthMismatch { what: "points", expected, actual: points.len() });
        }
        check_finite(points, "points")?;
        Ok(Self { points, dim, batches })
    }

    /// One batch holding all of `points` (`points.len() / dim` points).
    ///
    /// # Errors
    /// As [`PointCloud::new`], plus [`Error::LengthMismatch`] when `points.len()` is
    /// not a multiple of `dim`, [`Error::EmptyInput`] for no points.
    pub fn single(points: &'a [T], dim: usize) -> Result<Self> {
        check_dim(dim)?;
        if !points.len().is_multiple_of(dim) {
            return Err(Error::LengthMismatch {
                what: "points (a multiple of dim)",
                expected: points.len().next_multiple_of(dim),
                actual: points.len(),
            });
        }
        Self::new(points, dim, Batches::single(points.len() / dim)?)
    }

    /// The coordinates, row-major.
    pub fn points(&self) -> &'a [T] {
        self.points
    }

    /// Coordinates per point.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The batches.
    pub fn batches(&self) -> &Batches {
        &self.batches
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.batches.num_points()
    }

    /// Always `false`: a validated cloud holds at least one point.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The coordinates of point `i`.
    ///
    /// # Panics
    /// When `i >= self.len()`.
    pub fn point(&self, i: usize) -> &'a [T] {
        &self.points[i * self.dim..(i + 1) * self.dim]
    }
}

pub(crate) fn check_dim(dim: usize) -> Result<()> {
    if dim == 0 || dim > MAX_DIM {
        return Err(invalid("dim", format!("{dim} coordinates per point; supported are 1..={MAX_DIM}")));
    }
    Ok(())
}

/// Values per task of the finiteness check: a branch-free scan of a chunk costs about
/// as much as one rayon split, so chunks keep the scan vectorised and the splits rare.
const FINITE_CHUNK: usize = 1 << 14;

/// The first non-finite value (lowest index), as [`Error::NonFiniteValue`].
pub(crate) fn check_finite<T: Real>(values: &[T], what: &'static str) -> Result<()> {
    let all_finite = |c: &[T]| c.iter().fold(true, |ok, v| ok & v.finite());
    match values.par_chunks(FINITE_CHUNK).position_first(|c| !all_finite(c)) {
        None => Ok(()),
        Some(chunk) => {
            let start = chunk * FINITE_CHUNK;
            let index = start + values[start..].iter().position(|v| !v.finite()).unwrap_or(0);
            Err(Error::NonFiniteValue { what, index, value: wide(values[index]) })
        }
    }
}

pub(crate) fn invalid(what: &'static str, reason: String) -> Error {
    Error::InvalidArgument { what, reason }
}
