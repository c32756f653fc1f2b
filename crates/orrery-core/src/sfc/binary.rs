//! Binary keys: one bit per level, each level halving the currently longest side.
//!
//! The tree-build crate's binary tree splits a rectangular box so that its cells stay
//! as close to cubes as powers of two allow. The split sequence depends on the box
//! alone, not on the points: at every level the axis whose current cell extent is
//! longest is halved (ties go to the lowest axis index). A key concatenates one bit per
//! level, most significant first, each taken from the split axis' integer coordinate
//! (its next bit from the top). So the level-`l` cells are exactly the key intervals of
//! length `2^(levels - l)`, and [`super::KeyLayout::binary_levels`] does their
//! arithmetic. For a cube the axes cycle x, y, z and the key is the Morton key.
//!
//! [`BinaryLayout`] computes the sequence once (exactly, comparing extents as
//! mantissa and exponent so no rounding can reorder two axes) and keeps the per-axis bit
//! counts; positions are quantised per axis with the rule of [`super::KeyMapper`] at a
//! resolution of `2^bits_per_axis[a]` cells. An axis can get up to 63 bits (a needle-
//! shaped box), more than a float resolves: such keys are valid and reproducible, but
//! the upper face then maps to a cell near, not at, the end of the axis.

use rayon::prelude::*;

use super::mapping::{axis_scale, check_point, pow2, quantize};
use super::{KeyLayout, SfcKey, validate};
use crate::element::Real;
use crate::error::{Axis, Result};
use crate::geometry::{Aabb, Vec3};
use crate::particles::PositionsView;

/// The curve name of binary keys in errors.
pub const NAME: &str = "binary";

/// The deepest binary layout any key type holds.
const MAX_LEVELS: usize = 63;

/// The split sequence, per-axis resolution and scales of binary keys of type `K` for
/// one box.
///
/// ```
/// use orrery_core::{sfc::BinaryLayout, error::Axis, Aabb, Vec3};
/// // A 4 x 2 x 1 box: x is halved twice before y and z join the cycle.
/// let bbox = Aabb::new(Vec3::zeros(), Vec3::new(4.0f64, 2.0, 1.0))?;
/// let layout = BinaryLayout::<f64, u64>::new(bbox, 6)?;
/// assert_eq!(layout.axes(), [Axis::X, Axis::X, Axis::Y, Axis::X, Axis::Y, Axis::Z]);
/// assert_eq!(layout.bits_per_axis(), [3, 2, 1]);
/// // Key bits, most significant first: x2 x1 y1 x0 y0 z0.
/// assert_eq!(layout.encode([0b101, 0b10, 0b1])?, 0b101101);
/// # Ok::<(), orrery_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BinaryLayout<T: Real, K: SfcKey = u64> {
    bbox: Aabb<T>,
    levels: u32,
    axes: [Axis; MAX_LEVELS],
    bits: [u32; 3],
    scale: [T; 3],
    _key: std::marker::PhantomData<K>,
}

/// An extent as `mantissa * 2^exponent` with the mantissa in `[2^52, 2^53)`, or `None`
/// for zero. Exact for every finite f64 (subnormals are normalised).
fn split_float(e: f64) -> Option<(i64, u64)> {
    if e <= 0.0 {
        return None;
    }
    let bits = e.to_bits();
    let exponent_field = ((bits >> 52) & 0x7ff).cast_signed();
    let fraction = bits & ((1u64 << 52) - 1);
    if exponent_field == 0 {
        let shift = fraction.leading_zeros() - 11;
        Some((-1074 - i64::from(shift), fraction << shift))
    } else {
        Some((exponent_field - 1075, fraction | (1u64 << 52)))
    }
}

/// Whether `e_a / 2^k_a > e_b / 2^k_b`, exactly.
fn longer(e_a: f64, k_a: u32, e_b: f64, k_b: u32) -> bool {
    match (split_float(e_a), split_float(e_b)) {
        (None, _) => false,
        (Some(_), None) => true,
        (Some((x_a, m_a)), Some((x_b, m_b))) => (x_a - i64::from(k_a), m_a) > (x_b - i64::from(k_b), m_b),
    }
}

/// The longest-side split sequence of `levels` levels for a box of these extents.
fn split_sequence(extent: [f64; 3], levels: u32) -> ([Axis; MAX_LEVELS], [u32; 3]) {
    let mut axes = [Axis::X; MAX_LEVELS];
    let mut bits = [0u32; 3];
    for slot in axes.iter_mut().take(levels as usize) {
        let mut best = 0;
        for a in 1..3 {
            if longer(extent[a], bits[a], extent[best], bits[best]) {
                best = a;
            }
        }
        *slot = Axis::from_index(best);
        bits[best] += 1;
    }
    (axes, bits)
}

impl<T: Real, K: SfcKey> BinaryLayout<T, K> {
    /// The layout of `levels`-level keys for `bbox`.
    ///
    /// # Errors
    /// [`crate::Error::LevelOutOfRange`] for `levels > K::LEVELS_BINARY`.
    pub fn new(bbox: Aabb<T>, levels: u32) -> Result<Self> {
        validate::level(levels, K::LEVELS_BINARY, "a binary key")?;
        let extent = bbox.extent();
        let (axes, bits) = split_sequence([extent.x.into(), extent.y.into(), extent.z.into()], levels);
        let scale = [0, 1, 2].map(|a| axis_scale(pow2::<T>(bits[a]), extent[a]));
        Ok(Self { bbox, levels, axes, bits, scale, _key: std::marker::PhantomData })
    }

    /// The layout of the deepest keys `K` holds ([`SfcKey::LEVELS_BINARY`] levels).
    pub fn full_depth(bbox: Aabb<T>) -> Self {
        match Self::new(bbox, K::LEVELS_BINARY) {
            Ok(layout) => layout,
            Err(_) => unreachable!("LEVELS_BINARY is within range by definition"),
        }
    }

    /// The box.
    pub fn bbox(&self) -> &Aabb<T> {
        &self.bbox
    }

    /// Levels of the keys (bits per key).
    pub const fn levels(&self) -> u32 {
        self.levels
    }

    /// The key-range arithmetic of these keys.
    pub const fn key_layout(&self) -> KeyLayout {
        KeyLayout::binary_levels(self.levels)
    }

    /// The split axes: `axes()[l]` is the axis halved to go from level `l` to level
    /// `l + 1`, whose bit is key bit `levels - 1 - l`.
    pub fn axes(&self) -> &[Axis] {
        &self.axes[..self.levels as usize]
    }

    /// The axis halved to make the level-`level` cells, for `level` in `1..=levels`.
    pub fn split_axis(&self, level: u32) -> Option<Axis> {
        level.checked_sub(1).and_then(|l| self.axes().get(l as usize).copied())
    }

    /// Coordinate bits per axis: how often each axis is split in all levels. Integer
    /// coordinates on axis `a` lie in `0..2^bits_per_axis()[a]`.
    pub const fn bits_per_axis(&self) -> [u32; 3] {
        self.bits
    }

    /// Coordinate bits per axis fixed by the first `level` splits: a level-`level` cell
    /// spans `extent[a] / 2^cell_bits(level)[a]` on axis `a`.
    ///
    /// # Errors
    /// [`crate::Error::LevelOutOfRange`] for `level > levels`.
    pub fn cell_bits(&self, level: u32) -> Result<[u32; 3]> {
        validate::level(level, self.levels, "a binary key")?;
        let mut bits = [0u32; 3];
        for &axis in &self.axes[..level as usize] {
            bits[axis as usize] += 1;
        }
        Ok(bits)
    }

    /// Per-axis scale `T(2^bits_per_axis[a]) / extent[a]` (0 for a zero extent), as GPU
    /// kernels must use it.
    pub fn scale(&self) -> [T; 3] {
        self.scale
    }

    /// The key of integer coordinates, `c[a] < 2^bits_per_axis()[a]`.
    ///
    /// # Errors
    /// [`crate::Error::CoordinateOverflow`] (curve "binary") for the first coordinate
    /// out of range.
    pub fn encode(&self, c: [u64; 3]) -> Result<K> {
        for (a, &value) in c.iter().enumerate() {
            validate::coord(Axis::from_index(a), value, self.bits[a], K::BITS, NAME)?;
        }
        Ok(self.encode_unchecked(c))
    }

    /// The key of integer coordinates; coordinate bits at and above
    /// `bits_per_axis()[a]` are ignored.
    #[inline]
    pub fn encode_unchecked(&self, c: [u64; 3]) -> K {
        let mut remaining = self.bits;
        let mut key = 0u64;
        for &axis in self.axes() {
            let a = axis as usize;
            remaining[a] -= 1;
            key = (key << 1) | ((c[a] >> remaining[a]) & 1);
        }
        K::from_u64(key)
    }

    /// The integer coordinates of a key.
    ///
    /// # Errors
    /// [`crate::Error::KeyOutOfRange`] for `key >= 1 << levels`.
    pub fn decode(&self, key: K) -> Result<[u64; 3]> {
        validate::key(key.to_u64(), self.levels, K::BITS, NAME)?;
        Ok(self.decode_unchecked(key))
    }

    /// The integer coordinates of a key; key bits at and above `levels` are ignored.
    #[inline]
    pub fn decode_unchecked(&self, key: K) -> [u64; 3] {
        let key = key.to_u64();
        let mut c = [0u64; 3];
        for (l, &axis) in self.axes().iter().enumerate() {
            let bit = (key >> (self.levels as usize - 1 - l)) & 1;
            let a = axis as usize;
            c[a] = (c[a] << 1) | bit;
        }
        c
    }

    /// Integer coordinates of any finite position, clamped into the box.
    #[inline]
    pub fn integer_coords_clamped(&self, x: T, y: T, z: T) -> [u64; 3] {
        let min = self.bbox.min();
        let q = |v: T, a: usize| {
            let bits = self.bits[a];
            quantize(v, min[a], self.scale[a], pow2::<T>(bits), (1u64 << bits) - 1)
        };
        [q(x, 0), q(y, 1), q(z, 2)]
    }

    /// Integer coordinates of a position in the box.
    ///
    /// # Errors
    /// [`crate::Error::OutsideBox`] (index 0) outside the closed box,
    /// [`crate::Error::NonFiniteCoordinate`] for NaN or infinity.
    pub fn integer_coords(&self, p: Vec3<T>) -> Result<[u64; 3]> {
        check_point(&self.bbox, &p)?;
        Ok(self.integer_coords_clamped(p.x, p.y, p.z))
    }

    /// The key of any finite position; points outside the box are clamped to its faces.
    #[inline]
    pub fn key_clamped(&self, x: T, y: T, z: T) -> K {
        self.encode_unchecked(self.integer_coords_clamped(x, y, z))
    }

    /// The key of a position in the box.
    ///
    /// # Errors
    /// As [`BinaryLayout::integer_coords`].
    pub fn key(&self, p: Vec3<T>) -> Result<K> {
        check_point(&self.bbox, &p)?;
        Ok(self.key_clamped(p.x, p.y, p.z))
    }

    /// The keys of all points, in parallel.
    ///
    /// # Errors
    /// [`crate::Error::OutsideBox`] naming the lowest-index point outside the box.
    pub fn keys_of(&self, view: PositionsView<'_, T>) -> Result<Vec<K>> {
        view.check_inside(&self.bbox)?;
        Ok(view.x().par_iter().zip(view.y()).zip(view.z()).map(|((&x, &y), &z)| self.key_clamped(x, y, z)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extents_compare_exactly_across_halvings() {
        assert!(longer(2.0, 0, 1.0, 0));
        assert!(!longer(2.0, 1, 1.0, 0)); // equal after one halving
        assert!(!longer(1.0, 0, 2.0, 1));
        assert!(longer(3.0, 1, 1.0, 0));
        assert!(!longer(0.0, 0, 0.0, 0));
        assert!(longer(f64::from_bits(1), 0, 0.0, 0)); // the smallest subnormal beats zero
        assert!(longer(f64::from_bits(3), 1, f64::from_bits(1), 0));
        assert!(!longer(f64::from_bits(2), 1, f64::from_bits(1), 0));
        assert!(longer(f64::MIN_POSITIVE, 0, f64::from_bits((1 << 52) - 1), 0));
    }

    #[test]
    fn split_sequence_halves_the_longest_side_with_ties_to_x() {
        let (axes, bits) = split_sequence([1.0, 1.0, 1.0], 6);
        assert_eq!(axes[..6], [Axis::X, Axis::Y, Axis::Z, Axis::X, Axis::Y, Axis::Z]);
        assert_eq!(bits, [2, 2, 2]);
        let (axes, bits) = split_sequence([1.0, 0.0, 3.0], 4);
        assert_eq!(axes[..4], [Axis::Z, Axis::Z, Axis::X, Axis::Z]);
        assert_eq!(bits, [1, 0, 3]);
        let (_, bits) = split_sequence([0.0, 0.0, 0.0], 63);
        assert_eq!(bits, [63, 0, 0]);
    }
}
