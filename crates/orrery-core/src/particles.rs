//! Particle sets in structure-of-arrays form, owned and borrowed.
//!
//! Structure of arrays (one slice per coordinate) is what GPU kernels read coalesced
//! and what N-body codes already keep, so a caller's arrays are used as they are:
//! [`PositionsView`] and [`ParticlesView`] borrow them without a copy and validate
//! them once (lengths, finiteness, the 32-bit index limit).

use rayon::prelude::*;

use crate::element::Real;
use crate::error::{Axis, Error, Result};
use crate::geometry::{Aabb, Vec3};

/// The largest number of points orrery indexes: indices and permutations are `u32`.
pub const MAX_POINTS: usize = u32::MAX as usize;

/// Checks that `len` points can be addressed with 32-bit indices.
///
/// # Errors
/// [`Error::TooManyPoints`] when `len > u32::MAX`.
pub fn check_index_range(len: usize, what: &'static str) -> Result<()> {
    if len > MAX_POINTS {
        return Err(Error::TooManyPoints { count: len, max: MAX_POINTS, what });
    }
    Ok(())
}

fn check_finite<T: Real>(values: &[T], axis: Axis) -> Result<()> {
    // Parallel find of the first offender; `position_first` keeps the lowest index so
    // the error is deterministic.
    match values.par_iter().position_first(|v| !v.finite()) {
        None => Ok(()),
        Some(index) => Err(Error::NonFiniteCoordinate { index, axis, value: values[index].into() }),
    }
}

/// Borrowed positions: three coordinate slices of equal length, all finite.
#[derive(Debug, Clone, Copy)]
pub struct PositionsView<'a, T: Real> {
    x: &'a [T],
    y: &'a [T],
    z: &'a [T],
}

impl<'a, T: Real> PositionsView<'a, T> {
    /// Borrows three coordinate slices.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `y` or `z` differ in length from `x`,
    /// [`Error::TooManyPoints`] beyond `u32::MAX` points,
    /// [`Error::NonFiniteCoordinate`] for the first NaN or infinity (lowest index, x before y before z).
    pub fn new(x: &'a [T], y: &'a [T], z: &'a [T]) -> Result<Self> {
        if y.len() != x.len() {
            return Err(Error::LengthMismatch { what: "y", expected: x.len(), actual: y.len() });
        }
        if z.len() != x.len() {
            return Err(Error::LengthMismatch { what: "z", expected: x.len(), actual: z.len() });
        }
        check_index_range(x.len(), "points")?;
        check_finite(x, Axis::X)?;
        check_finite(y, Axis::Y)?;
        check_finite(z, Axis::Z)?;
        Ok(Self { x, y, z })
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.x.len()
    }

    /// Whether there are no points.
    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }

    /// The x coordinates.
    pub fn x(&self) -> &'a [T] {
        self.x
    }

    /// The y coordinates.
    pub fn y(&self) -> &'a [T] {
        self.y
    }

    /// The z coordinates.
    pub fn z(&self) -> &'a [T] {
        self.z
    }

    /// Position of point `i`.
    pub fn point(&self, i: usize) -> Vec3<T> {
        Vec3::new(self.x[i], self.y[i], self.z[i])
    }

    /// The tightest box around the points.
    ///
    /// # Errors
    /// [`Error::EmptyInput`] when there are no points.
    pub fn bounding_box(&self) -> Result<Aabb<T>> {
        if self.is_empty() {
            return Err(Error::EmptyInput { what: "positions", min: 1 });
        }
        let range = |s: &[T]| {
            s.par_iter()
                .fold(|| (T::HIGHEST, T::LOWEST), |(lo, hi), &v| (lo.min(v), hi.max(v)))
                .reduce(|| (T::HIGHEST, T::LOWEST), |a, b| (a.0.min(b.0), a.1.max(b.1)))
        };
        let (rx, ry, rz) = (range(self.x), range(self.y), range(self.z));
        Aabb::new(Vec3::new(rx.0, ry.0, rz.0), Vec3::new(rx.1, ry.1, rz.1))
    }

    /// Checks that every point lies inside `bbox` (closed box).
    ///
    /// # Errors
    /// [`Error::OutsideBox`] naming the lowest-index point outside.
    pub fn check_inside(&self, bbox: &Aabb<T>) -> Result<()> {
        let (lo, hi) = (bbox.min(), bbox.max());
        let outside = (0..self.len()).into_par_iter().position_first(|i| {
            let p = self.point(i);
            (0..3).any(|a| p[a] < lo[a] || p[a] > hi[a])
        });
        match outside {
            None => Ok(()),
            Some(index) => {
                let p = self.point(index);
                let (box_min, box_max) = bbox.to_f64();
                Err(Error::OutsideBox { index, position: [p.x.into(), p.y.into(), p.z.into()], box_min, box_max })
            }
        }
    }
}

/// Borrowed particles: positions plus masses.
#[derive(Debug, Clone, Copy)]
pub struct ParticlesView<'a, T: Real> {
    positions: PositionsView<'a, T>,
    mass: &'a [T],
}

impl<'a, T: Real> ParticlesView<'a, T> {
    /// Borrows four slices (x, y, z, mass).
    ///
    /// # Errors
    /// As [`PositionsView::new`], plus [`Error::LengthMismatch`] for `mass` and
    /// [`Error::NonFiniteValue`] for a NaN or infinite mass.
    pub fn new(x: &'a [T], y: &'a [T], z: &'a [T], mass: &'a [T]) -> Result<Self> {
        let positions = PositionsView::new(x, y, z)?;
        if mass.len() != x.len() {
            return Err(Error::LengthMismatch { what: "mass", expected: x.len(), actual: mass.len() });
        }
        if let Some(index) = mass.par_iter().position_first(|m| !m.finite()) {
            return Err(Error::NonFiniteValue { what: "mass", index, value: mass[index].into() });
        }
        Ok(Self { positions, mass })
    }

    /// The positions.
    pub fn positions(&self) -> PositionsView<'a, T> {
        self.positions
    }

    /// The masses.
    pub fn mass(&self) -> &'a [T] {
        self.mass
    }

    /// Number of particles.
    pub fn len(&self) -> usize {
        self.mass.len()
    }

    /// Whether there are no particles.
    pub fn is_empty(&self) -> bool {
        self.mass.is_empty()
    }
}

/// Owned particles in structure-of-arrays form.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParticleSet<T: Real> {
    /// x coordinates.
    pub x: Vec<T>,
    /// y coordinates.
    pub y: Vec<T>,
    /// z coordinates.
    pub z: Vec<T>,
    /// Masses.
    pub mass: Vec<T>,
}

impl<T: Real> ParticleSet<T> {
    /// An empty set with room for `n` particles.
    pub fn with_capacity(n: usize) -> Self {
        Self {
            x: Vec::with_capacity(n),
            y: Vec::with_capacity(n),
            z: Vec::with_capacity(n),
            mass: Vec::with_capacity(n),
        }
    }

    /// Appends one particle.
    pub fn push(&mut self, p: Vec3<T>, mass: T) {
        self.x.push(p.x);
        self.y.push(p.y);
        self.z.push(p.z);
        self.mass.push(mass);
    }

    /// Number of particles (the length of `mass`).
    pub fn len(&self) -> usize {
        self.mass.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.mass.is_empty()
    }

    /// A validated view of the set.
    ///
    /// # Errors
    /// As [`ParticlesView::new`]: the public fields may have been edited inconsistently.
    pub fn view(&self) -> Result<ParticlesView<'_, T>> {
        ParticlesView::new(&self.x, &self.y, &self.z, &self.mass)
    }

    /// A validated view of the positions.
    ///
    /// # Errors
    /// As [`PositionsView::new`].
    pub fn positions(&self) -> Result<PositionsView<'_, T>> {
        PositionsView::new(&self.x, &self.y, &self.z)
    }
}
