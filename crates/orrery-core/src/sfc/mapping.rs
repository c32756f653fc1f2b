//! Positions in a box to keys: the one quantisation rule every executor reproduces.
//!
//! The rule is deliberately the plainest one a GPU can repeat bit for bit: per axis one
//! rounded subtraction, one rounded multiplication by a scale computed once on the host,
//! a floor, and a clamp done in floating point (see [`quantize`]). Everything
//! position-dependent goes through [`quantize`], so [`KeyMapper`], [`KeyMapper2D`] and
//! [`super::BinaryLayout`] cannot drift apart.

use rayon::prelude::*;

use super::{Curve, SfcKey};
use crate::element::Real;
use crate::error::{Axis, Error, Result};
use crate::geometry::{Aabb, Vec3};
use crate::particles::PositionsView;

/// The integer cell coordinate of `v` on an axis that starts at `min`, has `cells`
/// cells (a power of two, as a `T`) and `scale = cells / extent`:
/// `floor((v - min) * scale)` computed in `T`, then clamped to `0..=last` (with
/// `last = cells - 1`) in floating point before the conversion. NaN gives 0.
///
/// Implemented without a `floor` call (a libm call on baseline x86-64): once the value
/// `g` is known to lie in `(0, cells)`, `floor(g)` is the truncating conversion, and
/// every `g <= 0` (or NaN) clamps to 0 either way. Same integers, bit for bit.
#[inline]
pub(crate) fn quantize<T: Real>(v: T, min: T, scale: T, cells: T, last: u64) -> u64 {
    let g = (v - min) * scale;
    if g > T::ZERO {
        if g >= cells {
            last
        } else {
            // `g < cells <= 2^63`: the signed conversion is exact and, unlike the
            // saturating unsigned one, a single instruction on x86-64 (2x faster keys).
            let w: f64 = g.into();
            w as i64 as u64
        }
    } else {
        0
    }
}

/// `cells / extent` in `T`, or 0 for a zero extent (every point then lies in cell 0).
///
/// Finite and positive for every non-zero extent of an [`Aabb`] and `cells <= 2^63`:
/// the box rejects extents that overflow or lie below [`Aabb::min_extent`], the two
/// cases in which this quotient would be 0 or infinite.
pub(crate) fn axis_scale<T: Real>(cells: T, extent: T) -> T {
    let scale = if extent > T::ZERO { cells / extent } else { T::ZERO };
    debug_assert!(
        scale.finite() && (scale > T::ZERO) == (extent > T::ZERO),
        "scale {scale:?} of extent {extent:?}: Aabb::new admits only extents with a finite, positive scale"
    );
    scale
}

/// `2^bits` as a `T` (exact: a power of two up to `2^63`).
pub(crate) fn pow2<T: Real>(bits: u32) -> T {
    <T as Real>::from_f64((1u64 << bits) as f64)
}

/// Checks that `p` is finite and inside `bbox` (closed), reporting it as point 0.
///
/// # Errors
/// [`Error::NonFiniteCoordinate`] for NaN or infinity, [`Error::OutsideBox`] otherwise.
pub(crate) fn check_point<T: Real>(bbox: &Aabb<T>, p: &Vec3<T>) -> Result<()> {
    if let Some(a) = (0..3).find(|&a| !p[a].finite()) {
        return Err(Error::NonFiniteCoordinate { index: 0, axis: Axis::from_index(a), value: p[a].into() });
    }
    if !bbox.contains(p) {
        let (box_min, box_max) = bbox.to_f64();
        return Err(Error::OutsideBox { index: 0, position: [p.x.into(), p.y.into(), p.z.into()], box_min, box_max });
    }
    Ok(())
}

/// Maps positions in a box to 3D keys of type `K` on a curve.
///
/// The integer coordinate on axis `a` is `floor((p[a] - min[a]) * scale[a])`, computed
/// in `T`, clamped to `0..=2^levels - 1`, with `scale[a] = T(2^levels) / extent[a]`
/// (`0` for a zero extent) and `levels = K::LEVELS_3D`. So the lower face lies in cell
/// 0 and the upper face in the last cell, never in an out-of-range key. The
/// [module documentation](super) says how GPU kernels reproduce this bit for bit.
///
/// ```
/// use orrery_core::{sfc::{Curve, KeyMapper}, Aabb, Vec3};
/// let mapper = KeyMapper::<f64, u64>::new(Aabb::cube(0.0, 1.0)?, Curve::Morton);
/// assert_eq!(mapper.integer_coords(Vec3::new(0.0, 0.5, 1.0))?, [0, 1 << 20, (1 << 21) - 1]);
/// assert_eq!(mapper.key(Vec3::new(1.0, 1.0, 1.0))?, (1 << 63) - 1);
/// assert!(mapper.key(Vec3::new(1.5, 0.0, 0.0)).is_err());
/// assert_eq!(mapper.key_clamped(1.5, 0.0, 0.0), mapper.key(Vec3::new(1.0, 0.0, 0.0))?);
/// # Ok::<(), orrery_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KeyMapper<T: Real, K: SfcKey> {
    bbox: Aabb<T>,
    curve: Curve,
    scale: [T; 3],
    _key: std::marker::PhantomData<K>,
}

impl<T: Real, K: SfcKey> KeyMapper<T, K> {
    /// A mapper for `bbox` on `curve`. Any valid box works, including boxes with zero
    /// extent on some axes: [`Aabb::new`] has rejected every extent whose scale would be
    /// 0 or infinite (an overflowing or a sub-[`Aabb::min_extent`] extent), so the
    /// scale is finite, and positive on every axis of non-zero extent.
    pub fn new(bbox: Aabb<T>, curve: Curve) -> Self {
        let extent = bbox.extent();
        let cells = pow2::<T>(K::LEVELS_3D);
        let scale = [0, 1, 2].map(|a| axis_scale(cells, extent[a]));
        Self { bbox, curve, scale, _key: std::marker::PhantomData }
    }

    /// The curve.
    pub fn curve(&self) -> Curve {
        self.curve
    }

    /// The box.
    pub fn bbox(&self) -> &Aabb<T> {
        &self.bbox
    }

    /// Per-axis scale `T(2^levels) / extent` (0 for a zero extent), as GPU kernels must
    /// use it.
    pub fn scale(&self) -> [T; 3] {
        self.scale
    }

    /// Levels of the keys: [`SfcKey::LEVELS_3D`].
    pub const fn levels(&self) -> u32 {
        K::LEVELS_3D
    }

    /// Integer coordinates of any finite position, clamped into the box.
    #[inline]
    pub fn integer_coords_clamped(&self, x: T, y: T, z: T) -> [u32; 3] {
        let cells = pow2::<T>(K::LEVELS_3D);
        let last = (1u64 << K::LEVELS_3D) - 1;
        let min = self.bbox.min();
        let q = |v: T, a: usize| quantize(v, min[a], self.scale[a], cells, last) as u32;
        [q(x, 0), q(y, 1), q(z, 2)]
    }

    /// Integer coordinates of a position in the box.
    ///
    /// # Errors
    /// [`Error::OutsideBox`] (index 0) outside the closed box,
    /// [`Error::NonFiniteCoordinate`] for NaN or infinity.
    pub fn integer_coords(&self, p: Vec3<T>) -> Result<[u32; 3]> {
        check_point(&self.bbox, &p)?;
        Ok(self.integer_coords_clamped(p.x, p.y, p.z))
    }

    /// The key of any finite position; points outside the box are clamped to its faces.
    /// This is the per-element function of [`crate::Executor::sfc_keys`].
    #[inline]
    pub fn key_clamped(&self, x: T, y: T, z: T) -> K {
        let [ix, iy, iz] = self.integer_coords_clamped(x, y, z);
        self.curve.encode_3d_unchecked(ix, iy, iz)
    }

    /// The key of a position in the box.
    ///
    /// # Errors
    /// As [`KeyMapper::integer_coords`].
    pub fn key(&self, p: Vec3<T>) -> Result<K> {
        check_point(&self.bbox, &p)?;
        Ok(self.key_clamped(p.x, p.y, p.z))
    }

    /// The keys of all points, in parallel.
    ///
    /// # Errors
    /// [`Error::OutsideBox`] naming the lowest-index point outside the box.
    pub fn keys_of(&self, view: PositionsView<'_, T>) -> Result<Vec<K>> {
        view.check_inside(&self.bbox)?;
        Ok(view.x().par_iter().zip(view.y()).zip(view.z()).map(|((&x, &y), &z)| self.key_clamped(x, y, z)).collect())
    }
}

/// Maps positions in the x-y rectangle of a box to 2D keys of type `K`: the rule of
/// [`KeyMapper`] on two axes, with `levels = K::LEVELS_2D`. The box's z range is
/// ignored.
///
/// With f32 positions and `u64` keys the 2^31 cells per axis are finer than the float
/// spacing: keys stay valid and reproducible, but not every cell is reachable and a
/// point one ULP inside the upper edge may land a few cells before the last one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KeyMapper2D<T: Real, K: SfcKey> {
    bbox: Aabb<T>,
    curve: Curve,
    scale: [T; 2],
    _key: std::marker::PhantomData<K>,
}

impl<T: Real, K: SfcKey> KeyMapper2D<T, K> {
    /// A mapper for the x-y rectangle of `bbox` on `curve`.
    pub fn new(bbox: Aabb<T>, curve: Curve) -> Self {
        let extent = bbox.extent();
        let cells = pow2::<T>(K::LEVELS_2D);
        let scale = [0, 1].map(|a| axis_scale(cells, extent[a]));
        Self { bbox, curve, scale, _key: std::marker::PhantomData }
    }

    /// The curve.
    pub fn curve(&self) -> Curve {
        self.curve
    }

    /// The box (its z range is ignored).
    pub fn bbox(&self) -> &Aabb<T> {
        &self.bbox
    }

    /// Per-axis scale `T(2^levels) / extent` (0 for a zero extent).
    pub fn scale(&self) -> [T; 2] {
        self.scale
    }

    /// Levels of the keys: [`SfcKey::LEVELS_2D`].
    pub const fn levels(&self) -> u32 {
        K::LEVELS_2D
    }

    /// Integer coordinates of any finite position, clamped into the rectangle.
    #[inline]
    pub fn integer_coords_clamped(&self, x: T, y: T) -> [u32; 2] {
        let cells = pow2::<T>(K::LEVELS_2D);
        let last = (1u64 << K::LEVELS_2D) - 1;
        let min = self.bbox.min();
        [quantize(x, min[0], self.scale[0], cells, last) as u32, quantize(y, min[1], self.scale[1], cells, last) as u32]
    }

    /// Integer coordinates of a position in the rectangle.
    ///
    /// # Errors
    /// [`Error::OutsideBox`] (index 0, z reported as the box's lower z bound) outside
    /// the closed rectangle, [`Error::NonFiniteCoordinate`] for NaN or infinity.
    pub fn integer_coords(&self, x: T, y: T) -> Result<[u32; 2]> {
        check_point(&self.bbox, &Vec3::new(x, y, self.bbox.min().z))?;
        Ok(self.integer_coords_clamped(x, y))
    }

    /// The key of any finite position; points outside are clamped to the edges.
    #[inline]
    pub fn key_clamped(&self, x: T, y: T) -> K {
        let [ix, iy] = self.integer_coords_clamped(x, y);
        self.curve.encode_2d_unchecked(ix, iy)
    }

    /// The key of a position in the rectangle.
    ///
    /// # Errors
    /// As [`KeyMapper2D::integer_coords`].
    pub fn key(&self, x: T, y: T) -> Result<K> {
        let [ix, iy] = self.integer_coords(x, y)?;
        Ok(self.curve.encode_2d_unchecked(ix, iy))
    }
}
