//! Vectors and axis-aligned boxes.

use crate::element::{DType, Real};
use crate::error::{Axis, Error, Result};

/// A 3D vector (nalgebra's `Vector3`).
pub type Vec3<T> = nalgebra::Vector3<T>;

/// An axis-aligned box `[min, max]` on every axis, with finite bounds and `min <= max`.
///
/// A box whose extent is zero on an axis is allowed (all points in a plane); key
/// mappers then put every point in cell 0 on that axis. Every other extent is finite and
/// at least [`Aabb::min_extent`] (about 5.4e-20 for f32, 1.0e-289 for f64), so that the
/// scale `2^levels / extent` of every key mapper (at most 2^63 cells per axis) is finite
/// and positive: a box of `[-f64::MAX, f64::MAX]`, whose extent overflows to infinity,
/// would otherwise map every point to key 0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Aabb<T: Real> {
    min: Vec3<T>,
    max: Vec3<T>,
}

impl<T: Real> Aabb<T> {
    /// A box from its corners.
    ///
    /// # Errors
    /// [`Error::InvalidBox`] when, on some axis, a bound is not finite, `min > max`, the
    /// extent `max - min` overflows `T`, or the extent is non-zero but below
    /// [`Aabb::min_extent`].
    pub fn new(min: Vec3<T>, max: Vec3<T>) -> Result<Self> {
        for a in 0..3 {
            let (lo, hi) = (min[a], max[a]);
            let extent = hi - lo;
            let reason = if !lo.finite() || !hi.finite() {
                Some("bounds must be finite")
            } else if lo > hi {
                Some("min must not exceed max")
            } else if !extent.finite() {
                Some("the extent max - min overflows")
            } else if extent > T::ZERO && extent < Self::min_extent() {
                Some("the extent is non-zero but too small for a key mapper's finite scale")
            } else {
                None
            };
            if let Some(reason) = reason {
                return Err(Error::InvalidBox { axis: Axis::from_index(a), min: lo.into(), max: hi.into(), reason });
            }
        }
        Ok(Self { min, max })
    }

    /// The smallest non-zero extent of a box: `2^63 / T::MAX` rounded up to a power of
    /// two (`2^-64` for f32, about 5.4e-20; `2^-960` for f64, about 1.0e-289), so that
    /// `2^63 / extent`, the scale of the finest key mapper, is at most `2^(emax)` and
    /// finite.
    pub fn min_extent() -> T {
        // T::MAX = (2 - eps) * 2^emax with emax = MAX_EXP - 1: the smallest power of two
        // `e` with 2^63 / e <= T::MAX is 2^(63 - emax).
        match T::DTYPE {
            DType::F32 => <T as Real>::from_f64(2f64.powi(63 - f32::MAX_EXP + 1)),
            _ => <T as Real>::from_f64(2f64.powi(63 - f64::MAX_EXP + 1)),
        }
    }

    /// A cube `[lo, hi]^3`.
    ///
    /// # Errors
    /// As [`Aabb::new`].
    pub fn cube(lo: T, hi: T) -> Result<Self> {
        Self::new(Vec3::new(lo, lo, lo), Vec3::new(hi, hi, hi))
    }

    /// The tightest box around the given points (SoA slices of equal length).
    ///
    /// # Errors
    /// [`Error::EmptyInput`] for no points, [`Error::LengthMismatch`] for slices of
    /// different lengths, [`Error::NonFiniteCoordinate`] for NaN or infinity.
    pub fn from_points(x: &[T], y: &[T], z: &[T]) -> Result<Self> {
        let view = crate::particles::PositionsView::new(x, y, z)?;
        view.bounding_box()
    }

    /// Lower corner.
    pub fn min(&self) -> Vec3<T> {
        self.min
    }

    /// Upper corner.
    pub fn max(&self) -> Vec3<T> {
        self.max
    }

    /// `max - min` per axis.
    pub fn extent(&self) -> Vec3<T> {
        self.max - self.min
    }

    /// Whether `p` lies in the closed box.
    pub fn contains(&self, p: &Vec3<T>) -> bool {
        (0..3).all(|a| p[a] >= self.min[a] && p[a] <= self.max[a])
    }

    /// Corners widened to f64 (for error messages and mixed-precision code).
    pub fn to_f64(&self) -> ([f64; 3], [f64; 3]) {
        (
            [self.min.x.into(), self.min.y.into(), self.min.z.into()],
            [self.max.x.into(), self.max.y.into(), self.max.z.into()],
        )
    }
}
