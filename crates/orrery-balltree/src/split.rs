//! The split rule of one node, written once: every builder (the CPU recursion, the
//! invariant checker, and the GPU kernels that mirror it) follows exactly this.
//!
//! A node of `m >= 2` points splits
//!
//! 1. along the dimension of largest spread `max - min`, with the spread computed in
//!    f64 from the coordinates widened to f64 (as Erwin's reference, which converts
//!    its input to f64 first, so f32 input splits identically); ties go to the lowest
//!    dimension, and a node whose points all coincide splits along dimension 0;
//! 2. at the median of the total order *(coordinate on that dimension, point index)*:
//!    the left child gets the `floor(m / 2)` smallest points, the right the rest.
//!
//! The index in the order makes the split a function of the input even where
//! coordinates tie (Erwin's reference leaves ties to `std::nth_element`). Inside a final
//! group (a leaf of the tree, a group of a partition) points are listed by ascending
//! index; the reference leaves that order to `nth_element` too.

use std::fmt::Debug;

use orrery_core::Real;

/// A coordinate type seen through an order-preserving integer key, so the builders
/// compare integers: `key(a) < key(b)` exactly when `a < b`, and `-0.0` maps to the key
/// of `0.0` (they compare equal, as with Erwin's `<`). Keys widen back to the
/// coordinate's exact value for the spread.
pub(crate) trait Coord: Real {
    /// The key: `u32` for f32, `u64` for f64.
    type Key: Copy + Ord + Send + Sync + Debug + 'static;
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
    /// `(key, index)` as one integer.
    fn pack(key: Self::Key, index: u32) -> Self::Packed;
}

impl Coord for f32 {
    type Key = u32;
    type Packed = u64;
    const KEY_MIN: u32 = 0;
    const KEY_MAX: u32 = u32::MAX;
    #[inline]
    fn key(self) -> u32 {
        let bits = (self + 0.0).to_bits(); // -0.0 + 0.0 = +0.0
        if bits >> 31 == 1 { !bits } else { bits | 1 << 31 }
    }
    #[inline]
    fn widen(key: u32) -> f64 {
        let bits = if key >> 31 == 1 { key & !(1 << 31) } else { !key };
        f64::from(f32::from_bits(bits))
    }
    #[inline]
    fn pack(key: u32, index: u32) -> u64 {
        (u64::from(key) << 32) | u64::from(index)
    }
}

impl Coord for f64 {
    type Key = u64;
    type Packed = u128;
    const KEY_MIN: u64 = 0;
    const KEY_MAX: u64 = u64::MAX;
    #[inline]
    fn key(self) -> u64 {
        let bits = (self + 0.0).to_bits();
        if bits >> 63 == 1 { !bits } else { bits | 1 << 63 }
    }
    #[inline]
    fn widen(key: u64) -> f64 {
        f64::from_bits(if key >> 63 == 1 { key & !(1 << 63) } else { !key })
    }
    #[inline]
    fn pack(key: u64, index: u32) -> u128 {
        (u128::from(key) << 32) | u128::from(index)
    }
}

/// One point as the builders move it: the keys of its coordinates and its index.
///
/// Records keep the coordinates next to the index so a node's scans and selections
/// stream through memory instead of gathering coordinates through indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Record<K, const D: usize> {
    pub k: [K; D],
    pub i: u32,
}

/// Per-dimension bounds (as keys) of a set of points.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bounds<K, const D: usize> {
    pub lo: [K; D],
    pub hi: [K; D],
}

impl<K: Copy + Ord, const D: usize> Bounds<K, D> {
    /// The bounds of nothing (identity of [`Bounds::merge`]).
    pub fn empty<C: Coord<Key = K>>() -> Self {
        Self { lo: [C::KEY_MAX; D], hi: [C::KEY_MIN; D] }
    }

    /// The bounds of `records`.
    pub fn of<C: Coord<Key = K>>(records: &[Record<K, D>]) -> Self {
        let mut b = Self::empty::<C>();
        for r in records {
            for d in 0..D {
                b.lo[d] = b.lo[d].min(r.k[d]);
                b.hi[d] = b.hi[d].max(r.k[d]);
            }
        }
        b
    }

    /// The bounds of the union.
    pub fn merge(mut self, other: Self) -> Self {
        for d in 0..D {
            self.lo[d] = self.lo[d].min(other.lo[d]);
            self.hi[d] = self.hi[d].max(other.hi[d]);
        }
        self
    }

    /// The split dimension: largest f64 spread, ties to the lowest dimension.
    pub fn split_dim<C: Coord<Key = K>>(&self) -> usize {
        split_dim_of((0..D).map(|d| (C::widen(self.lo[d]), C::widen(self.hi[d]))))
    }
}

/// The split dimension from per-dimension `(min, max)` pairs in f64: the first
/// dimension whose spread is strictly larger than every earlier one (Erwin's
/// `spread > max_spread` with `max_spread = 0` to start).
pub(crate) fn split_dim_of(bounds: impl Iterator<Item = (f64, f64)>) -> usize {
    let mut best = 0;
    let mut best_spread = 0.0f64;
    for (d, (lo, hi)) in bounds.enumerate() {
        let spread = hi - lo;
        if spread > best_spread {
            best_spread = spread;
            best = d;
        }
    }
    best
}

/// The position of a record in the total order of dimension `dim`.
#[inline]
pub(crate) fn rank_key<C: Coord, const D: usize>(r: &Record<C::Key, D>, dim: usize) -> C::Packed {
    C::pack(r.k[dim], r.i)
}
