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

use std::cmp::Ordering;

use orrery_core::Real;

use crate::num::wide;

/// One point as the builders move it: its coordinates and its index.
///
/// Records keep the coordinates next to the index so a node's scans and selections
/// stream through memory instead of gathering coordinates through indices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Record<T, const D: usize> {
    pub c: [T; D],
    pub i: u32,
}

/// Per-dimension bounds of a set of points.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bounds<T, const D: usize> {
    pub lo: [T; D],
    pub hi: [T; D],
}

impl<T: Real, const D: usize> Bounds<T, D> {
    /// The bounds of nothing (identity of [`Bounds::merge`]).
    pub fn empty() -> Self {
        Self { lo: [T::HIGHEST; D], hi: [T::LOWEST; D] }
    }

    /// The bounds of `records`.
    pub fn of(records: &[Record<T, D>]) -> Self {
        let mut b = Self::empty();
        for r in records {
            for d in 0..D {
                let v = r.c[d];
                if v < b.lo[d] {
                    b.lo[d] = v;
                }
                if v > b.hi[d] {
                    b.hi[d] = v;
                }
            }
        }
        b
    }

    /// The bounds of the union.
    pub fn merge(mut self, other: Self) -> Self {
        for d in 0..D {
            if other.lo[d] < self.lo[d] {
                self.lo[d] = other.lo[d];
            }
            if other.hi[d] > self.hi[d] {
                self.hi[d] = other.hi[d];
            }
        }
        self
    }

    /// The split dimension: largest f64 spread, ties to the lowest dimension.
    pub fn split_dim(&self) -> usize {
        split_dim_of((0..D).map(|d| (wide(self.lo[d]), wide(self.hi[d]))))
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

/// The total order of the split: coordinate `dim`, then index.
#[inline]
pub(crate) fn order<T: Real, const D: usize>(a: &Record<T, D>, b: &Record<T, D>, dim: usize) -> Ordering {
    // Coordinates are validated finite, so `partial_cmp` never fails; -0.0 and 0.0
    // compare equal, as with Erwin's `<`, and fall through to the index.
    match a.c[dim].partial_cmp(&b.c[dim]) {
        Some(Ordering::Equal) | None => a.i.cmp(&b.i),
        Some(o) => o,
    }
}

/// Whether `a` precedes `b` in the order of dimension `dim`.
#[inline]
pub(crate) fn precedes<T: Real, const D: usize>(a: &Record<T, D>, b: &Record<T, D>, dim: usize) -> bool {
    a.c[dim] < b.c[dim] || (a.c[dim] == b.c[dim] && a.i < b.i)
}
