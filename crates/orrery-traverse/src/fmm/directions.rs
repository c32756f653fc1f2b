//! The common translation directions of an evaluation and their rotation matrices.
//!
//! Every translation vector is an integer offset between two nodes' integer centres
//! ([`crate::fmm::nodes`]). Its rotation depends only on its polar angle, and that only on
//! the reduced key `(|o_x|, |o_y|, o_z) / gcd` (signs of x and y only change the azimuth,
//! which the operators apply as phases; with equal x and y half-units the key also sorts
//! its first two entries).
//!
//! # Which directions get a table entry
//! Keys whose entries all lie within [`TABLE_KEY_BOUND`] get their own matrices, one
//! entry of a [`RotationTable`] each; every other translation rotates through the
//! quarter turn ([`crate::fmm::operators::Rotation::Quarter`]), which needs no table.
//! Measured on 100,000 bodies (Hilbert octree, LeafCount 64, theta 0.5): Plummer, 97.4%
//! of 1.68M M2L pairs have keys within 16 and use 575 directions, the other 2.6% use
//! 16,374 (pairs between leaves of very different depth); uniform cube and thin disk,
//! every pair within 16 (261 and 465 directions). The bound keeps the table at a few
//! MiB (p = 12: 11.5 KiB per direction) whatever the tree's depth range.
//!
//! # How keys get their indices
//! Two passes over the pairs, both parallel and both deterministic: *mark* sets an
//! integer flag per key in a dense array (order-independent), *finish* numbers the
//! marked keys in array order, and each pair looks its key up. So the table and every
//! pair's index depend on the tree only, not on threads.

use std::sync::atomic::{AtomicU32, Ordering};

use orrery_tree_build::view::NONE;

use crate::fmm::expansions::Order;
use crate::fmm::expansions::rotation::RotationTable;

/// Keys with `|entries| <= TABLE_KEY_BOUND` get a table entry
/// (`(B + 1)^2 (2B + 1)` slots: 9,537 flags).
pub const TABLE_KEY_BOUND: i64 = 16;

const SIDE: usize = TABLE_KEY_BOUND as usize + 1;
const DEPTH: usize = 2 * TABLE_KEY_BOUND as usize + 1;
const SLOTS: usize = SIDE * SIDE * DEPTH;

/// `gcd(a, b)` of non-negative integers (binary; `gcd(0, b) = b`).
fn gcd(mut a: u64, mut b: u64) -> u64 {
    if a == 0 {
        return b;
    }
    if b == 0 {
        return a;
    }
    let shift = (a | b).trailing_zeros();
    a >>= a.trailing_zeros();
    loop {
        b >>= b.trailing_zeros();
        if a > b {
            std::mem::swap(&mut a, &mut b);
        }
        b -= a;
        if b == 0 {
            return a << shift;
        }
    }
}

/// The reduced key of an offset (see the [module documentation](self)); the zero offset
/// maps to `[0, 0, 0]`.
#[inline]
pub fn reduced_key(o: [i64; 3], square_xy: bool) -> [i64; 3] {
    let (a, b, c) = (o[0].unsigned_abs(), o[1].unsigned_abs(), o[2].unsigned_abs());
    let g = gcd(gcd(a, b), c).max(1);
    let (mut x, mut y) = ((a / g).cast_signed(), (b / g).cast_signed());
    if square_xy && x > y {
        std::mem::swap(&mut x, &mut y);
    }
    [x, y, o[2] / g.cast_signed()]
}

/// The polar angle of a key with the given half-units.
pub fn polar_angle(key: [i64; 3], half_unit: [f64; 3]) -> f64 {
    let (x, y, z) = (key[0] as f64 * half_unit[0], key[1] as f64 * half_unit[1], key[2] as f64 * half_unit[2]);
    (x * x + y * y).sqrt().atan2(z)
}

/// The table slot of a key within the bound.
#[inline]
fn slot(key: [i64; 3]) -> Option<usize> {
    let b = TABLE_KEY_BOUND;
    (key[0] <= b && key[1] <= b && key[2].abs() <= b)
        .then(|| (key[0] as usize * SIDE + key[1] as usize) * DEPTH + (key[2] + b) as usize)
}

/// Pass 1 of the numbering: the flags of the keys within the bound.
#[derive(Debug)]
pub struct DirectionMarks {
    square_xy: bool,
    flags: Vec<AtomicU32>,
}

impl DirectionMarks {
    /// No key marked.
    pub fn new(square_xy: bool) -> Self {
        Self { square_xy, flags: (0..SLOTS).map(|_| AtomicU32::new(0)).collect() }
    }

    /// Marks the key of `offset` when it is within the bound.
    #[inline]
    pub fn mark(&self, offset: [i64; 3]) {
        if let Some(s) = slot(reduced_key(offset, self.square_xy)) {
            // Relaxed: the flags are read only after the parallel pass has joined.
            if self.flags[s].load(Ordering::Relaxed) == 0 {
                self.flags[s].store(1, Ordering::Relaxed);
            }
        }
    }

    /// Pass 2: numbers the marked keys in slot order and computes their rotations at
    /// `order`.
    pub fn finish(self, half_unit: [f64; 3], order: Order) -> Directions {
        let mut index = vec![NONE; SLOTS];
        let mut keys = Vec::new();
        for (s, flag) in self.flags.iter().enumerate() {
            if flag.load(Ordering::Relaxed) != 0 {
                index[s] = keys.len() as u32;
                let (xy, z) = ((s / DEPTH) as u64, (s % DEPTH) as u64);
                let side = SIDE as u64;
                keys.push([(xy / side).cast_signed(), (xy % side).cast_signed(), z.cast_signed() - TABLE_KEY_BOUND]);
            }
        }
        let betas = keys.iter().map(|&k| polar_angle(k, half_unit)).collect();
        Directions { square_xy: self.square_xy, index, keys, table: RotationTable::new(order, betas) }
    }
}

/// The numbered directions of an evaluation and their rotations.
#[derive(Debug, Clone)]
pub struct Directions {
    square_xy: bool,
    index: Vec<u32>,
    keys: Vec<[i64; 3]>,
    /// The rotation blocks, by direction index.
    pub table: RotationTable,
}

impl Directions {
    /// The table index of `offset`'s direction, [`NONE`] for a key beyond the bound.
    ///
    /// # Panics
    /// When a key within the bound was not marked (a planning bug, never user input).
    #[inline]
    pub fn index(&self, offset: [i64; 3]) -> u32 {
        match slot(reduced_key(offset, self.square_xy)) {
            None => NONE,
            Some(s) => {
                let i = self.index[s];
                assert!(i != NONE, "direction of offset {offset:?} was not marked");
                i
            }
        }
    }

    /// The reduced key of direction `i`.
    pub fn key(&self, i: usize) -> [i64; 3] {
        self.keys[i]
    }

    /// Directions.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_reduced_and_symmetric() {
        assert_eq!(gcd(12, 18), 6);
        assert_eq!(gcd(0, 7), 7);
        assert_eq!(reduced_key([4, -6, 8], false), [2, 3, 4]);
        assert_eq!(reduced_key([-6, 4, -8], true), [2, 3, -4]);
        assert_eq!(reduced_key([-6, 4, -8], false), [3, 2, -4]);
        assert_eq!(reduced_key([0, 0, -5], true), [0, 0, -1]);
        // Every key of the dense array round-trips through its slot.
        let marks = DirectionMarks::new(false);
        for o in [[1, 1, 1], [16, 0, -16], [0, 16, 3], [3, 5, 0]] {
            marks.mark(o);
        }
        marks.mark([17, 1, 0]);
        let d = marks.finish([1.0; 3], Order::new(2).unwrap());
        assert_eq!(d.len(), 4);
        for o in [[1, 1, 1], [16, 0, -16], [0, 16, 3], [3, 5, 0]] {
            assert_eq!(d.key(d.index(o) as usize), reduced_key(o, false));
        }
        assert_eq!(d.index([17, 1, 0]), NONE);
        assert!((d.table.beta(d.index([0, 16, 3]) as usize) - 16f64.atan2(3.0)).abs() < 1e-15);
    }
}
