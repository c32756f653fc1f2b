//! The shape of a batched ball tree: a pure function of the batch sizes.
//!
//! A batch of `n` points gets a perfect binary tree of depth `L = ceil(log2 n) - 1`
//! (`L = 0` for `n = 1`) whose `2^L` leaves hold two *slots* each, so the batch
//! occupies `2^(L+1)` slots: the next power of two `>= n`, and 2 for `n = 1`. Batches
//! are concatenated in order. Everything here (slot offsets, depths, ball counts, the
//! ball of a slot, the sizes of the children of a node) follows from the batch sizes
//! alone, so every executor shares this code and only the point indices in the slots
//! are computed on a device.
//!
//! # Levels
//! A ball is a node of the tree: a contiguous, aligned run of slots. [`Level`] names a
//! set of balls in one of two ways:
//!
//! - [`Level::Depth`]`(k)` counts splits from the root: every batch has `2^k` balls,
//!   of `2^(L_b + 1 - k)` slots in batch `b`. `Depth(0)` is the root, `Depth(L_b)` the
//!   leaves, `Depth(L_b + 1)` single slots.
//! - [`Level::Height`]`(h)` counts from the slots up: every ball has `2^h` slots, so
//!   batch `b` has `2^(L_b + 1 - h)` balls. `Height(1)` is the leaves. This is Erwin's
//!   view: a ball of size `2^h` after `h` stride-2 coarsenings, the same size in every
//!   batch.
//!
//! Both are valid up to `min_b(L_b + 1)`. For batches of equal size they coincide with
//! `Height(h) = Depth(L + 1 - h)`.
//!
//! Worked example: batches of 5 and 2 points. Batch 0 has `L = 2` (8 slots), batch 1
//! `L = 0` (2 slots); slot offsets `[0, 8, 10]`. `Height(1)` has balls `[0, 4, 5]`
//! (4 leaves, then 1); `Depth(0)` has balls `[0, 1, 2]`; `Height(2)` is out of range
//! because batch 1 is a single leaf.

use orrery_core::{Error, Result};

use crate::input::Batches;

/// Which balls of a tree an operation works on; see the [module docs](self).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Level {
    /// `k` splits below the root: `2^k` balls per batch.
    Depth(u32),
    /// Balls of `2^h` slots (Erwin's coarsening by `h` stride-2 poolings).
    Height(u32),
}

/// Depth `L` of the tree of a batch of `n >= 1` points: `ceil(log2 n) - 1`, and 0 for
/// `n = 1` (which Erwin's reference rejects).
pub const fn tree_depth(n: usize) -> u32 {
    if n <= 2 { 0 } else { n.next_power_of_two().trailing_zeros() - 1 }
}

/// Slots of the tree of a batch of `n >= 1` points: `2^(tree_depth(n) + 1)`.
pub const fn tree_slots(n: usize) -> usize {
    1usize << (tree_depth(n) + 1)
}

/// Sizes of the two children of a node of `m` points: the left child gets
/// `floor(m / 2)`, the right the rest (as Erwin's `mid = (start + end) / 2`).
pub const fn child_sizes(m: usize) -> (usize, usize) {
    (m / 2, m - m / 2)
}

/// The slot layout of a batched ball tree.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TreeLayout {
    batches: Batches,
    slot_offsets: Vec<u32>,
    depths: Vec<u32>,
}

impl TreeLayout {
    /// The layout for `batches`.
    ///
    /// # Errors
    /// [`Error::TooManyPoints`] (`what = "tree slots"`) when the slots of all batches
    /// together exceed `u32::MAX` (slot indices are `u32`; this needs more than 2^31
    /// points).
    pub fn new(batches: &Batches) -> Result<Self> {
        let mut slot_offsets = Vec::with_capacity(batches.len() + 1);
        let mut depths = Vec::with_capacity(batches.len());
        slot_offsets.push(0u32);
        let mut total = 0usize;
        for b in 0..batches.len() {
            let n = batches.size(b);
            depths.push(tree_depth(n));
            total += tree_slots(n);
            if total > u32::MAX as usize {
                return Err(Error::TooManyPoints { count: total, max: u32::MAX as usize, what: "tree slots" });
            }
            slot_offsets.push(total as u32);
        }
        Ok(Self { batches: batches.clone(), slot_offsets, depths })
    }

    /// The batches the layout was made for.
    pub fn batches(&self) -> &Batches {
        &self.batches
    }

    /// Number of batches.
    pub fn num_batches(&self) -> usize {
        self.depths.len()
    }

    /// Number of points.
    pub fn num_points(&self) -> usize {
        self.batches.num_points()
    }

    /// Number of slots of all batches.
    pub fn num_slots(&self) -> usize {
        self.slot_offsets[self.slot_offsets.len() - 1] as usize
    }

    /// CSR offsets of the points of each batch (`num_batches() + 1` entries).
    pub fn point_offsets(&self) -> &[u32] {
        self.batches.offsets()
    }

    /// CSR offsets of the slots of each batch (`num_batches() + 1` entries).
    pub fn slot_offsets(&self) -> &[u32] {
        &self.slot_offsets
    }

    /// Number of points per batch.
    pub fn sizes(&self) -> Vec<u32> {
        self.point_offsets().windows(2).map(|w| w[1] - w[0]).collect()
    }

    /// Depth `L_b` of every batch's tree (leaves are at depth `L_b`).
    pub fn depths(&self) -> &[u32] {
        &self.depths
    }

    /// The deepest [`Level`] value valid for every batch: `min_b(L_b + 1)`.
    pub fn max_level(&self) -> u32 {
        self.depths.iter().map(|d| d + 1).min().unwrap_or(0)
    }

    /// Slots per ball of batch `b` at `level`, as a power of two (the ball's height).
    ///
    /// # Errors
    /// [`Error::LevelOutOfRange`] when `level` exceeds [`TreeLayout::max_level`].
    pub fn height(&self, b: usize, level: Level) -> Result<u32> {
        let top = self.depths[b] + 1;
        match level {
            Level::Depth(k) if k <= self.max_level() => Ok(top - k),
            Level::Height(h) if h <= self.max_level() => Ok(h),
            Level::Depth(k) => Err(out_of_range(k, self.max_level(), "ball tree depth")),
            Level::Height(h) => Err(out_of_range(h, self.max_level(), "ball tree height")),
        }
    }

    /// CSR offsets of the balls of each batch at `level` (`num_batches() + 1` entries).
    ///
    /// # Errors
    /// As [`TreeLayout::height`].
    pub fn ball_offsets(&self, level: Level) -> Result<Vec<u32>> {
        let mut out = Vec::with_capacity(self.num_batches() + 1);
        out.push(0u32);
        let mut total = 0u32;
        for b in 0..self.num_batches() {
            total += self.batch_slots(b) >> self.height(b, level)?;
            out.push(total);
        }
        Ok(out)
    }

    /// Number of balls at `level`, over all batches.
    ///
    /// # Errors
    /// As [`TreeLayout::height`].
    pub fn num_balls(&self, level: Level) -> Result<usize> {
        Ok(*self.ball_offsets(level)?.last().unwrap_or(&0) as usize)
    }

    /// The batch a slot belongs to.
    ///
    /// # Errors
    /// [`Error::IndexOutOfBounds`] when `slot >= num_slots()`.
    pub fn batch_of_slot(&self, slot: usize) -> Result<usize> {
        if slot >= self.num_slots() {
            return Err(Error::IndexOutOfBounds {
                what: "slot",
                position: 0,
                index: slot as u64,
                len: self.num_slots(),
            });
        }
        Ok(self.slot_offsets.partition_point(|&o| o as usize <= slot) - 1)
    }

    /// The global id of the ball at `level` that holds `slot` (balls are numbered
    /// batch after batch, as by [`TreeLayout::ball_offsets`]).
    ///
    /// ```
    /// # use orrery_balltree::{Batches, Level, TreeLayout};
    /// let layout = TreeLayout::new(&Batches::from_offsets(&[0u32, 5, 7])?)?;
    /// assert_eq!(layout.slot_offsets(), &[0, 8, 10]);
    /// assert_eq!(layout.ball_of_slot(5, Level::Depth(1))?, 1); // right half of batch 0
    /// assert_eq!(layout.ball_of_slot(9, Level::Depth(1))?, 3); // slot 9 of batch 1
    /// assert_eq!(layout.ball_of_slot(9, Level::Height(1))?, 4); // batch 1 is one leaf
    /// # Ok::<(), orrery_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`TreeLayout::batch_of_slot`] and [`TreeLayout::height`].
    pub fn ball_of_slot(&self, slot: usize, level: Level) -> Result<u32> {
        let b = self.batch_of_slot(slot)?;
        let h = self.height(b, level)?;
        let first_ball = self.ball_offsets(level)?[b];
        Ok(first_ball + ((slot as u32 - self.slot_offsets[b]) >> h))
    }

    /// The batch of every ball at `level`: Erwin's coarsened batch index
    /// (`batch_idx[tree_idx][::2^h]` for `Level::Height(h)`).
    ///
    /// # Errors
    /// As [`TreeLayout::height`].
    pub fn coarse_batch_index(&self, level: Level) -> Result<Vec<u32>> {
        let offsets = self.ball_offsets(level)?;
        let mut out = Vec::with_capacity(offsets[offsets.len() - 1] as usize);
        for b in 0..self.num_batches() {
            out.resize(offsets[b + 1] as usize, b as u32);
        }
        Ok(out)
    }

    /// Fraction of slots that are padding: `(slots - points) / slots`, in `[0, 1/2]`
    /// (1/2 only for batches of one point).
    pub fn padding_ratio(&self) -> f64 {
        (self.num_slots() - self.num_points()) as f64 / self.num_slots() as f64
    }

    /// Slots of batch `b`.
    pub(crate) fn batch_slots(&self, b: usize) -> u32 {
        self.slot_offsets[b + 1] - self.slot_offsets[b]
    }
}

fn out_of_range(level: u32, max: u32, what: &'static str) -> Error {
    Error::LevelOutOfRange { level, max, what }
}
