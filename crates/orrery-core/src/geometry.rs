//! Vectors and axis-aligned boxes.

use crate::element::Real;
use crate::error::{Axis, Error, Result};

/// A 3D vector (nalgebra's `Vector3`).
pub type Vec3<T> = nalgebra::Vector3<T>;

/// An axis-aligned box `[min, max]` on every axis, with finite bounds and `min <= max`.
///
/// A box whose extent is zero on an axis is allowed (all points in a plane); key
/// mappers then put every point in cell 0 on that axis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Aabb<T: Real> {
    min: Vec3<T>,
    max: Vec3<T>,
}

impl<T: Real> Aabb<T> {
    /// A box from its corners.
    ///
    /// # Errors
    /// [`Error::InvalidBox`] when a bound is not finite or `min > max` on some axis.
    pub fn new(min: Vec3<T>, max: Vec3<T>) -> Result<Self> {
        for a in 0..3 {
            let (lo, hi) = (min[a], max[a]);
            let reason = if !lo.finite() || !hi.finite() {
                Some("bounds must be finite")
            } else if lo > hi {
                Some("min must not exceed max")
            } else {
                None
            };
            if let Some(reason) = reason {
                return Err(Error::InvalidBox { axis: Axis::from_index(a), min: lo.into(), max: hi.into(), reason });
            }
        }
        Ok(Self { min, max })
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
