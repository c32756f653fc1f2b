//! The distinct translation directions of an evaluation and their rotation matrices.
//!
//! Every translation vector is an integer offset between two nodes' integer centres
//! ([`crate::fmm::nodes`]). Its rotation depends only on its polar angle, and that only on
//! the reduced key `(|o_x|, |o_y|, o_z) / gcd` (signs of x and y only change the azimuth,
//! which the operators apply as phases; with equal x and y half-units the key also sorts
//! its first two entries). An evaluation sees a few hundred to a few thousand keys, and
//! each M2L pair names one by a `u32` index into a [`RotationTable`]: a flat table that a
//! GPU kernel reads the same way.
//!
//! # How keys get their indices
//! Two passes over the pairs, both parallel and both deterministic:
//! 1. *mark*: keys whose entries are all within [`DENSE`] set a flag in a dense array
//!    (integer flags, order-independent); larger keys, rare, are collected, sorted and
//!    deduplicated;
//! 2. *index*: dense keys are numbered in array order, then the large ones in sorted
//!    order, and each pair looks its key up (an array read, or a binary search for a
//!    large key).
//!
//! So the table and every pair's index depend on the tree only, not on threads.

use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;

use crate::fmm::expansions::Order;
use crate::fmm::expansions::rotation::RotationTable;

/// Keys with `|entries| <= DENSE` are indexed through a dense array
/// (`(DENSE + 1)^2 (2 DENSE + 1)` slots; 31 gives 64,512, 252 KiB of flags).
pub const DENSE: i64 = 31;

const SIDE: usize = DENSE as usize + 1;
const SLOTS: usize = SIDE * SIDE * (2 * DENSE as usize + 1);
const UNSET: u32 = u32::MAX;

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

#[inline]
fn dense_slot(key: [i64; 3]) -> Option<usize> {
    (key[0] <= DENSE && key[1] <= DENSE && key[2].abs() <= DENSE)
        .then(|| (key[0] as usize * SIDE + key[1] as usize) * (2 * DENSE as usize + 1) + (key[2] + DENSE) as usize)
}

/// Pass 1 of the numbering: the flags of dense keys.
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

    /// Marks the key of `offset`; returns it when it is too large for the dense array
    /// (the caller collects those).
    #[inline]
    pub fn mark(&self, offset: [i64; 3]) -> Option<[i64; 3]> {
        let key = reduced_key(offset, self.square_xy);
        match dense_slot(key) {
            Some(slot) => {
                // Relaxed: the flags are read only after the parallel pass has joined.
                if self.flags[slot].load(Ordering::Relaxed) == 0 {
                    self.flags[slot].store(1, Ordering::Relaxed);
                }
                None
            }
            None => Some(key),
        }
    }

    /// Pass 2: numbers the marked keys and the large ones (`large`, any order, repeats
    /// allowed) and computes their rotations at `order`.
    pub fn finish(self, mut large: Vec<[i64; 3]>, half_unit: [f64; 3], order: Order) -> Directions {
        large.par_sort_unstable();
        large.dedup();
        let mut dense = vec![UNSET; SLOTS];
        let mut keys = Vec::new();
        for (slot, flag) in self.flags.iter().enumerate() {
            if flag.load(Ordering::Relaxed) != 0 {
                dense[slot] = keys.len() as u32;
                let z = (slot % (2 * DENSE as usize + 1)) as u64;
                let xy = (slot / (2 * DENSE as usize + 1)) as u64;
                let side = SIDE as u64;
                keys.push([(xy / side).cast_signed(), (xy % side).cast_signed(), z.cast_signed() - DENSE]);
            }
        }
        let first_large = keys.len() as u32;
        keys.extend_from_slice(&large);
        let betas = keys.iter().map(|&k| polar_angle(k, half_unit)).collect();
        Directions {
            square_xy: self.square_xy,
            dense,
            large,
            first_large,
            keys,
            table: RotationTable::new(order, betas),
        }
    }
}

/// The numbered directions of an evaluation and their rotations.
#[derive(Debug, Clone)]
pub struct Directions {
    square_xy: bool,
    dense: Vec<u32>,
    large: Vec<[i64; 3]>,
    first_large: u32,
    keys: Vec<[i64; 3]>,
    /// The rotation blocks, by direction index.
    pub table: RotationTable,
}

impl Directions {
    /// The index of `offset`'s direction.
    ///
    /// # Panics
    /// When the direction was not marked (a planning bug, never user input).
    #[inline]
    pub fn index(&self, offset: [i64; 3]) -> u32 {
        let key = reduced_key(offset, self.square_xy);
        let i = match dense_slot(key) {
            Some(slot) => self.dense[slot],
            None => self.large.binary_search(&key).map_or(UNSET, |i| self.first_large + i as u32),
        };
        assert!(i != UNSET, "direction {key:?} was not marked");
        i
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
