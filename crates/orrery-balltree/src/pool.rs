//! Per-ball reductions: means of positions or features, centres and radii.
//!
//! A ball at a [`Level`] is a contiguous run of slots (see [`crate::layout`]). Its
//! mean can weigh the slots two ways ([`Weighting`]):
//!
//! - [`Weighting::Slots`]: every slot counts, so a padded point counts twice. This is
//!   Erwin: pooling is `reduce(x[tree_idx], "(n s) d -> n d", "mean")`, repeated, and a
//!   mean at height `h` equals `h` stride-2 poolings.
//! - [`Weighting::Points`]: every point of the ball counts once (the unmasked slots;
//!   at height 0 the ball is its one slot).
//!
//! Sums run in f64 in slot order, one ball per task, so the result does not depend on
//! the number of threads. Non-finite feature values propagate; positions are finite
//! by construction of the [`PointCloud`].
//!
//! Radii are the largest Euclidean distance, computed in f64, from the centre (as
//! returned, i.e. rounded to `T`) to a point of the ball, rounded up to `T`: every
//! point lies inside its ball exactly, not only up to rounding.
//!
//! # Finite input near the type's maximum
//! Finite input gives finite means: an f64 sum of f32 values cannot overflow, but one
//! of f64 values near `f64::MAX` can, and then that column is summed again with every
//! value scaled by a power of two `2^-k` (`2^k >= 2 * count`) and the mean scaled back.
//! Scaling by a power of two is exact, so such a mean is bit for bit the mean of the
//! scaled values, scaled back; columns whose sum does not overflow take the plain path,
//! so ordinary input gives the same bits as before. A squared distance that overflows
//! f64 (coordinates beyond about 1e154) is recomputed from halved differences scaled by
//! their largest component. A radius that exceeds `T::MAX` in exact arithmetic (points
//! near `±T::MAX` on both sides of the centre) has no finite upper bound in `T` and is
//! reported as [`Error::Overflow`] rather than returned as infinity.

use orrery_core::{DType, Error, Real, Result};
use rayon::prelude::*;

use crate::input::PointCloud;
use crate::layout::Level;
use crate::num::{narrow, wide};
use crate::permute::check_rows;
use crate::tree::BallTree;

/// Which slots a ball's mean counts; see the [module docs](self).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Weighting {
    /// Every slot, padding included (Erwin's pooling).
    Slots,
    /// Every point once.
    Points,
}

/// Centres and radii of the balls at one level.
#[derive(Debug, Clone, PartialEq)]
pub struct BallStats<T> {
    /// Ball centres, row-major (`num_balls * dim`).
    pub centres: Vec<T>,
    /// Ball radii (`num_balls`).
    pub radii: Vec<T>,
    /// Coordinates per centre.
    pub dim: usize,
}

impl BallTree {
    /// The mean of per-point rows (`values`: `num_points() * width`, original point
    /// order) over every ball at `level`; `num_balls * width` values, balls in the
    /// order of [`crate::TreeLayout::ball_offsets`].
    ///
    /// ```
    /// # use orrery_balltree::{build_balltree, Level, PointCloud, Weighting};
    /// let x = [0.4f64, 0.0, 0.3, 0.1, 0.2];
    /// let tree = build_balltree(&PointCloud::single(&x, 1)?)?;
    /// // Slots: indices 1 1 3 3 | 4 4 0 2 (leaves {1}, {3}, {4}, {0, 2}).
    /// let slots = tree.pool_mean(&x, 1, Level::Depth(1), Weighting::Slots)?;
    /// let points = tree.pool_mean(&x, 1, Level::Depth(1), Weighting::Points)?;
    /// assert!((slots[1] - 0.275).abs() < 1e-12); // (0.2 + 0.2 + 0.4 + 0.3) / 4
    /// assert!((points[1] - 0.3).abs() < 1e-12); // (0.2 + 0.4 + 0.3) / 3
    /// # Ok::<(), orrery_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for `width == 0`, [`Error::LengthMismatch`] for
    /// `values` of the wrong length, [`Error::LevelOutOfRange`] for a level deeper
    /// than [`crate::TreeLayout::max_level`].
    pub fn pool_mean<T: Real>(&self, values: &[T], width: usize, level: Level, weighting: Weighting) -> Result<Vec<T>> {
        check_rows("values", values.len(), self.num_points(), width)?;
        let balls = self.balls(level)?;
        let mut out = vec![T::ZERO; balls.len() * width];
        out.par_chunks_mut(width).zip(balls.par_iter()).for_each(|(row, ball)| {
            let mean = self.mean_of(ball, weighting, width, |s| {
                let i = self.indices()[s] as usize;
                &values[i * width..(i + 1) * width]
            });
            for (o, m) in row.iter_mut().zip(mean) {
                *o = narrow(m);
            }
        });
        Ok(out)
    }

    /// The mean of slot-ordered rows (`slot_values`: `num_slots() * width`, e.g.
    /// features after attention) over every ball at `level`, every slot counting
    /// (Erwin's `reduce(x, "(n s) c -> n c", "mean")` for `s = 2^h`).
    ///
    /// # Errors
    /// As [`BallTree::pool_mean`].
    pub fn pool_slots_mean<T: Real>(&self, slot_values: &[T], width: usize, level: Level) -> Result<Vec<T>> {
        check_rows("slot values", slot_values.len(), self.num_slots(), width)?;
        let balls = self.balls(level)?;
        let mut out = vec![T::ZERO; balls.len() * width];
        out.par_chunks_mut(width).zip(balls.par_iter()).for_each(|(row, ball)| {
            let mean = self.mean_of(ball, Weighting::Slots, width, |s| &slot_values[s * width..(s + 1) * width]);
            for (o, m) in row.iter_mut().zip(mean) {
                *o = narrow(m);
            }
        });
        Ok(out)
    }

    /// Centre (mean position, by `weighting`) and radius of every ball at `level`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when `cloud` has other batches than the tree;
    /// [`Error::Overflow`] (`what = "ball radius"`, `index` = the ball) for the first
    /// ball whose radius exceeds `T::MAX` (see the [module docs](self)); as
    /// [`BallTree::pool_mean`] otherwise.
    pub fn ball_stats<T: Real>(
        &self,
        cloud: &PointCloud<'_, T>,
        level: Level,
        weighting: Weighting,
    ) -> Result<BallStats<T>> {
        if cloud.batches() != self.layout().batches() {
            return Err(Error::InvalidArgument {
                what: "cloud",
                reason: "its batches differ from those the tree was built for".into(),
            });
        }
        let dim = cloud.dim();
        let centres = self.pool_mean(cloud.points(), dim, level, weighting)?;
        let balls = self.balls(level)?;
        let mut radii = vec![T::ZERO; balls.len()];
        let mut exact = vec![0.0f64; balls.len()];
        radii.par_iter_mut().zip(&mut exact).zip(balls.par_iter()).zip(centres.par_chunks(dim)).for_each(
            |(((r, e), ball), c)| {
                let mut max = 0.0f64;
                for s in ball.start..ball.start + ball.len {
                    max = max.max(distance(cloud.point(self.indices()[s] as usize), c));
                }
                (*r, *e) = (round_up(max), max);
            },
        );
        if let Some(ball) = radii.par_iter().position_first(|r| !r.finite()) {
            let (dtype, max) = match T::DTYPE {
                DType::F32 => ("f32", f64::from(f32::MAX)),
                _ => ("f64", f64::MAX),
            };
            return Err(Error::Overflow { what: "ball radius", index: ball, value: exact[ball], dtype, max });
        }
        Ok(BallStats { centres, radii, dim })
    }

    /// The balls at `level` as slot ranges, in global ball order.
    pub(crate) fn balls(&self, level: Level) -> Result<Vec<Ball>> {
        let layout = self.layout();
        let slots = layout.slot_offsets();
        let mut out = Vec::with_capacity(layout.num_balls(level)?);
        for b in 0..layout.num_batches() {
            let h = layout.height(b, level)?;
            let len = 1usize << h;
            out.extend((slots[b] as usize..slots[b + 1] as usize).step_by(len).map(|start| Ball { start, len }));
        }
        Ok(out)
    }

    /// The f64 mean of the rows `row(s)` of a ball's slots; a column whose sum
    /// overflows is summed again scaled (see the [module docs](self)).
    fn mean_of<'v, T: Real>(
        &self,
        ball: &Ball,
        weighting: Weighting,
        width: usize,
        row: impl Fn(usize) -> &'v [T],
    ) -> Vec<f64> {
        let counted = || {
            (ball.start..ball.start + ball.len)
                .filter(move |&s| weighting == Weighting::Slots || ball.len == 1 || self.mask()[s])
        };
        let mut sum = vec![0.0f64; width];
        let mut count = 0usize;
        for s in counted() {
            count += 1;
            for (acc, &v) in sum.iter_mut().zip(row(s)) {
                *acc += wide(v);
            }
        }
        let n = count as f64;
        for (col, v) in sum.iter_mut().enumerate() {
            if v.is_finite() {
                *v /= n;
            } else {
                *v = scaled_mean(counted().map(|s| wide(row(s)[col])), count);
            }
        }
        sum
    }
}

/// The mean of `count` values whose plain f64 sum overflowed: summed scaled by `2^-k`
/// with `2^k >= 2 * count` (so the scaled sum of finite values stays below
/// `f64::MAX / 2`), divided, scaled back. The exact mean of finite values lies between
/// their extremes, so a result past `±f64::MAX` can only be rounding and is clamped.
/// Non-finite values propagate as in the plain sum.
fn scaled_mean(values: impl Iterator<Item = f64>, count: usize) -> f64 {
    // A power of two (count <= 2^32 slots), so both scalings are exact.
    let up = (2 * count.next_power_of_two()) as f64;
    let sum: f64 = values.map(|v| v / up).sum();
    let mean = sum / count as f64 * up;
    if sum.is_finite() { mean.clamp(-f64::MAX, f64::MAX) } else { mean }
}

/// The Euclidean distance between `p` and `c` in f64. When the plain sum of squares
/// overflows (differences beyond about 1e154), recomputed from the halved differences
/// (finite for finite `p` and `c`) scaled by their largest magnitude; infinite only
/// when the distance itself exceeds `f64::MAX`.
fn distance<T: Real>(p: &[T], c: &[T]) -> f64 {
    let d2: f64 = p
        .iter()
        .zip(c)
        .map(|(&x, &y)| {
            let d = wide(x) - wide(y);
            d * d
        })
        .sum();
    if d2.is_finite() {
        return d2.sqrt();
    }
    let half = |(&x, &y): (&T, &T)| 0.5 * wide(x) - 0.5 * wide(y);
    let m = p.iter().zip(c).map(half).fold(0.0f64, |m, d| m.max(d.abs()));
    let s: f64 = p
        .iter()
        .zip(c)
        .map(|pc| {
            let d = half(pc) / m;
            d * d
        })
        .sum();
    2.0 * (m * s.sqrt())
}

/// A ball as a run of slots.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ball {
    pub start: usize,
    pub len: usize,
}

/// The smallest `T` not below `x`.
fn round_up<T: Real>(x: f64) -> T {
    let r: T = narrow(x);
    if wide(r) >= x {
        return r;
    }
    match T::DTYPE {
        DType::F32 => bytemuck::cast(bytemuck::cast::<T, f32>(r).next_up()),
        _ => bytemuck::cast(bytemuck::cast::<T, f64>(r).next_up()),
    }
}
