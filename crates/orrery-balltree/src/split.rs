//! The split rule of one node, written once: every builder (the CPU recursion, the
//! invariant checker, and the GPU kernels that mirror it) follows exactly this.
//!
//! A node of `m >= 2` points splits
//!
//! 1. along the dimension of largest spread `max - min`, spreads compared exactly (see
//!    `split_dim_of`: equal to Erwin's f64 rule whenever its f64 subtraction is exact,
//!    and computable on GPUs without f64); ties go to the lowest dimension, and a node
//!    whose points all coincide splits along dimension 0;
//! 2. at the median of the total order *(coordinate on that dimension, point index)*:
//!    the left child gets the `floor(m / 2)` smallest points, the right the rest.
//!
//! The index in the order makes the split a function of the input even where
//! coordinates tie (Erwin's reference leaves ties to `std::nth_element`). Inside a final
//! group (a leaf of the tree, a group of a partition) points are listed by ascending
//! index; the reference leaves that order to `nth_element` too.

use std::fmt::Debug;

use orrery_core::Real;

/// A coordinate type seen through an order-preserving signed integer key, so the
/// builders compare integers: `key(a) < key(b)` exactly when `a < b`, and `-0.0` maps to
/// the key of `0.0` (they compare equal, as with Erwin's `<`). Keys widen back to the
/// coordinate's exact value for the spread. Signed keys, because x86-64's baseline
/// SIMD (SSE2) has signed but not unsigned integer comparisons.
pub(crate) trait Coord: Real {
    /// The key: `i32` for f32, `i64` for f64.
    type Key: bytemuck::Pod + Ord + Send + Sync + Debug + Default + 'static;
    /// A key with an index appended: the total order (coordinate, index) as one integer.
    type Packed: Copy + Ord + Send + Sync + Default;
    /// The smallest key.
    const KEY_MIN: Self::Key;
    /// The largest key.
    const KEY_MAX: Self::Key;
    /// The key of a finite value.
    fn key(self) -> Self::Key;
    /// The value of a key, widened to f64.
    fn widen(key: Self::Key) -> f64;
    /// A point index stored in a key lane (bit for bit).
    fn lane(index: u32) -> Self::Key;
    /// The point index stored in a key lane.
    fn index(lane: Self::Key) -> u32;
    /// `(key, index lane)` as one integer, ordered as the pair.
    fn pack(key: Self::Key, lane: Self::Key) -> Self::Packed;
    /// `key - lo` for `key >= lo`, exact (keys of f32 differ by less than 2^32).
    fn rel(key: Self::Key, lo: Self::Key) -> u64;
}

impl Coord for f32 {
    type Key = i32;
    type Packed = i64;
    const KEY_MIN: i32 = i32::MIN;
    const KEY_MAX: i32 = i32::MAX;
    #[inline]
    fn key(self) -> i32 {
        let bits = (self + 0.0).to_bits().cast_signed(); // -0.0 + 0.0 = +0.0
        if bits < 0 { bits ^ i32::MAX } else { bits }
    }
    #[inline]
    fn widen(key: i32) -> f64 {
        let bits = if key < 0 { key ^ i32::MAX } else { key };
        f64::from(f32::from_bits(bits.cast_unsigned()))
    }
    #[inline]
    fn lane(index: u32) -> i32 {
        index.cast_signed()
    }
    #[inline]
    fn index(lane: i32) -> u32 {
        lane.cast_unsigned()
    }
    #[inline]
    fn pack(key: i32, lane: i32) -> i64 {
        (i64::from(key) << 32) | i64::from(lane.cast_unsigned())
    }
    #[inline]
    fn rel(key: i32, lo: i32) -> u64 {
        u64::from(key.wrapping_sub(lo).cast_unsigned())
    }
}

impl Coord for f64 {
    type Key = i64;
    type Packed = i128;
    const KEY_MIN: i64 = i64::MIN;
    const KEY_MAX: i64 = i64::MAX;
    #[inline]
    fn key(self) -> i64 {
        let bits = (self + 0.0).to_bits().cast_signed();
        if bits < 0 { bits ^ i64::MAX } else { bits }
    }
    #[inline]
    fn widen(key: i64) -> f64 {
        f64::from_bits((if key < 0 { key ^ i64::MAX } else { key }).cast_unsigned())
    }
    #[inline]
    fn lane(index: u32) -> i64 {
        i64::from(index)
    }
    #[inline]
    fn index(lane: i64) -> u32 {
        lane as u32
    }
    #[inline]
    fn pack(key: i64, lane: i64) -> i128 {
        (i128::from(key) << 32) | i128::from(lane)
    }
    #[inline]
    fn rel(key: i64, lo: i64) -> u64 {
        key.wrapping_sub(lo).cast_unsigned()
    }
}

/// One point as the builders move it: the keys of its `N - 1` coordinates, then its
/// index in the last lane.
///
/// Records keep the coordinates next to the index so a node's scans and selections
/// stream through memory instead of gathering coordinates through indices; one key
/// type for all lanes lets the bounds scan treat a record as one vector (for 3D f32,
/// exactly 16 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, bytemuck::TransparentWrapper)]
#[repr(transparent)]
pub(crate) struct Record<K, const N: usize> {
    pub k: [K; N],
}

impl<K: Copy, const N: usize> Record<K, N> {
    /// A record from coordinate keys and an index.
    #[inline]
    pub fn new<C: Coord<Key = K>>(coords: impl Fn(usize) -> K, index: u32) -> Self {
        Self { k: std::array::from_fn(|d| if d + 1 == N { C::lane(index) } else { coords(d) }) }
    }

    /// The point index.
    #[inline]
    pub fn index<C: Coord<Key = K>>(&self) -> u32 {
        C::index(self.k[N - 1])
    }
}

/// Per-lane bounds (as keys) of a set of records; the last lane (the index) is never
/// read (see [`Bounds::of`] for when it is computed).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bounds<K, const N: usize> {
    pub lo: [K; N],
    pub hi: [K; N],
}

impl<K: Copy + Ord, const N: usize> Bounds<K, N> {
    /// The bounds of nothing (identity of [`Bounds::merge`]).
    pub fn empty<C: Coord<Key = K>>() -> Self {
        Self { lo: [C::KEY_MAX; N], hi: [C::KEY_MIN; N] }
    }

    /// The bounds of `records`. The index lane is skipped for 64-bit keys (scalar
    /// min/max: a quarter of a 3D scan, 5% of a 16 x 1024 f64 build) and kept for 32-bit
    /// keys, whose whole-record min/max the compiler vectorises (skipping the lane there
    /// breaks that and cost 5%).
    #[inline(always)]
    pub fn of<C: Coord<Key = K>>(records: &[Record<K, N>]) -> Self {
        let lanes = if size_of::<K>() >= 8 { N - 1 } else { N };
        let mut b = Self::empty::<C>();
        for r in records {
            for d in 0..lanes {
                b.lo[d] = b.lo[d].min(r.k[d]);
                b.hi[d] = b.hi[d].max(r.k[d]);
            }
        }
        b
    }

    /// The bounds of the union.
    pub fn merge(mut self, other: Self) -> Self {
        for d in 0..N {
            self.lo[d] = self.lo[d].min(other.lo[d]);
            self.hi[d] = self.hi[d].max(other.hi[d]);
        }
        self
    }

    /// The split dimension: largest exact spread, ties to the lowest dimension.
    ///
    /// Rounding is monotone, so a rounded spread strictly larger than all others belongs
    /// to the strictly largest exact spread: only when the largest rounded spreads tie
    /// (or overflow) does the exact comparison of [`split_dim_of`] have to decide. Most
    /// nodes take the short path, a subtraction per dimension.
    #[inline(always)]
    pub fn split_dim<C: Coord<Key = K>>(&self) -> usize {
        let (mut best, mut best_dim, mut tie) = (0.0f64, 0, false);
        for d in 0..N - 1 {
            let spread = C::widen(self.hi[d]) - C::widen(self.lo[d]);
            if spread > best {
                (best, best_dim, tie) = (spread, d, false);
            } else if spread == best {
                tie = true;
            }
        }
        if tie || !best.is_finite() {
            return split_dim_of((0..N - 1).map(|d| (C::widen(self.lo[d]), C::widen(self.hi[d]))));
        }
        best_dim
    }
}

/// The split dimension from per-dimension `(min, max)` pairs in f64: the first
/// dimension whose spread is strictly larger than every earlier one (Erwin's
/// `spread > max_spread` with `max_spread = 0` to start), with the spreads compared
/// **exactly** (an error-free TwoSum pair per spread), not after rounding.
///
/// Erwin's reference compares f64-rounded spreads; the two rules differ only when an f64
/// subtraction is inexact (bounds more than 2^29 apart in magnitude for f32 input) and
/// the rounding flips a comparison. The exact rule is what every GPU kernel computes
/// without f64 arithmetic (`gpu::spread`), so all executors agree by construction.
/// f32 bounds widened to f64 are exact, so one f64 implementation serves both widths.
pub(crate) fn split_dim_of(bounds: impl Iterator<Item = (f64, f64)>) -> usize {
    crate::gpu::spread::split_dim_exact::<f64>(bounds)
}

/// The position of a record in the total order of dimension `dim`.
#[inline(always)]
pub(crate) fn rank_key<C: Coord, const N: usize>(r: &Record<C::Key, N>, dim: usize) -> C::Packed {
    C::pack(r.k[dim], r.k[N - 1])
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;

    /// Bounds from per-dimension pairs of values, as the builders hold them.
    fn bounds_of<C: Coord>(pairs: &[(C, C)]) -> Bounds<C::Key, 4> {
        let mut b = Bounds::<C::Key, 4>::empty::<C>();
        for (d, &(x, y)) in pairs.iter().enumerate() {
            b.lo[d] = x.min(y).key();
            b.hi[d] = x.max(y).key();
        }
        b
    }

    /// The short path of `split_dim` agrees with the exact rule, also where rounded
    /// spreads tie (`1 + 1e-20` and `1 + 2e-20` both round to 1) or overflow (f64 bounds of opposite sign near the largest value).
    #[test]
    fn split_dim_matches_the_exact_rule() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let exact = |b: &Bounds<i64, 4>| split_dim_of((0..3).map(|d| (f64::widen(b.lo[d]), f64::widen(b.hi[d]))));
        let exact32 = |b: &Bounds<i32, 4>| split_dim_of((0..3).map(|d| (f32::widen(b.lo[d]), f32::widen(b.hi[d]))));
        for case in 0..20_000 {
            let value = |rng: &mut ChaCha8Rng| -> f64 {
                match case % 4 {
                    0 => rng.random_range(-1.0..1.0),
                    1 => f64::from(rng.random_range(-4i32..4)) * 0.25,
                    2 => [1.0, 0.0, -1.0e-20, 1.0e-20, -2.0e-20][rng.random_range(0..5)],
                    _ => f64::MAX * rng.random_range(-1.0..1.0),
                }
            };
            let pairs: Vec<(f64, f64)> = (0..3).map(|_| (value(&mut rng), value(&mut rng))).collect();
            let b = bounds_of::<f64>(&pairs);
            assert_eq!(b.split_dim::<f64>(), exact(&b), "f64 {pairs:?}");
            let narrow: Vec<(f32, f32)> = pairs.iter().map(|&(x, y)| (x as f32, y as f32)).collect();
            if narrow.iter().all(|&(x, y)| x.is_finite() && y.is_finite()) {
                let b = bounds_of::<f32>(&narrow);
                assert_eq!(b.split_dim::<f32>(), exact32(&b), "f32 {narrow:?}");
            }
        }
    }
}
