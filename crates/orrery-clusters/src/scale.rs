//! The scale of every cluster: `sigma`, the median pairwise distance of its members,
//! from a [`SIGMA_BINS`]-bin histogram of all of them. Definitions and sentinels:
//! docs/clusters/statistics.md.
//!
//! One tiled pairwise pass over all clusters ([`TileGrid`]: a flat grid of tile pairs
//! decoded through the prefix sum of `T_c^2`; pairs below the diagonal are skipped). The
//! histogram of cluster `c` covers `[0, 2 r_max]` (`r_max` its largest distance to the
//! centroid, so every pairwise distance lies inside by the triangle inequality) in bins of
//! width `h = 2 r_max / 256`; counts are integers, so their merge order is free.
//!
//! **The approximation.** `sigma` is the *lower median* `v_k`, `k = ceil(M / 2)` of the
//! `M = n (n - 1) / 2` pairwise distances in ascending order. The pass finds the bin `b`
//! that holds rank `k` and interpolates inside it:
//! `sigma = h (b + (k - C_{b-1} - 1/2) / count_b)` with `C_{b-1}` the pairs below bin `b`.
//! Both `v_k` and the estimate lie in bin `b`, so `|sigma - v_k| < h` (one bin width, up
//! to the rounding of a distance that falls on a bin edge); [`ScaleStats::bin_width`]
//! reports `h`.

use orrery_core::Result;

use crate::centroid::CentroidStats;
use crate::dist::l2;
use crate::grid::{PAIR_TILE, TileGrid, reduce_tiles, upper_pairs};
use crate::input::Clusters;

/// Bins of the pairwise-distance histogram behind `sigma`.
pub const SIGMA_BINS: usize = 256;

/// The scale of every cluster (one entry per cluster).
#[derive(Debug, Clone, PartialEq)]
pub struct ScaleStats {
    /// The median pairwise distance as estimated from the histogram (input units): 0
    /// for fewer than two members or when all members coincide; NaN when empty.
    pub sigma: Vec<f64>,
    /// The histogram's bin width `h = 2 r_max / 256`, the bound on `sigma`'s error
    /// (0 when all members coincide; NaN when empty).
    pub bin_width: Vec<f64>,
    /// Pairs `n (n - 1) / 2`.
    pub pair_count: Vec<u64>,
    /// The histograms, `clusters * 256` counts (bin `b` holds distances in
    /// `[b h, (b + 1) h)`, the last bin also `2 r_max`).
    pub histogram: Vec<u64>,
}

impl ScaleStats {
    /// The histogram of cluster `c`.
    ///
    /// # Panics
    /// When `c` is out of range.
    pub fn histogram_of(&self, c: usize) -> &[u64] {
        &self.histogram[c * SIGMA_BINS..(c + 1) * SIGMA_BINS]
    }
}

/// The bin of distance `d` in a histogram of `bins` bins of width `h` starting at `lo`
/// (bin 0 when `h == 0`; distances at or beyond the top edge go to the last bin).
#[inline]
pub fn bin_of(d: f64, lo: f64, h: f64, bins: usize) -> usize {
    if h > 0.0 { (((d - lo) / h) as usize).min(bins - 1) } else { 0 }
}

/// The estimate of the `k`-th smallest value (1-based) from `counts` of width `h`
/// starting at 0: the bin holding rank `k`, interpolated at the middle of the ranks in
/// it. `None` for `k == 0` or when `counts` hold fewer than `k` values.
pub fn ranked_value(counts: &[u64], h: f64, k: u64) -> Option<f64> {
    if k == 0 {
        return None;
    }
    let mut below = 0u64;
    for (b, &n) in counts.iter().enumerate() {
        if below + n >= k && n > 0 {
            return Some(h * (b as f64 + ((k - below) as f64 - 0.5) / n as f64));
        }
        below += n;
    }
    None
}

/// `sigma` of every cluster; `centroid` supplies `r_max`.
///
/// # Errors
/// [`orrery_core::Error::LengthMismatch`] when `centroid` belongs to other clusters.
pub fn scale_stats(clusters: &Clusters<'_>, centroid: &CentroidStats) -> Result<ScaleStats> {
    centroid.check_matches(clusters)?;
    let v = clusters.vectors();
    let k = clusters.len();
    let bin_width: Vec<f64> = centroid.max_radius.iter().map(|r| 2.0 * r / SIGMA_BINS as f64).collect();
    let grid = TileGrid::new(clusters.offsets(), PAIR_TILE);
    let hist = reduce_tiles(
        &grid,
        || vec![0u64; SIGMA_BINS],
        |p, acc| {
            let h = bin_width[p.cluster];
            upper_pairs(&grid, p, |i, j| acc[bin_of(l2(v.row(i), v.row(j)), 0.0, h, SIGMA_BINS)] += 1);
        },
        |mut a, b| {
            a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
            a
        },
    );
    let mut sigma = Vec::with_capacity(k);
    let mut pair_count = Vec::with_capacity(k);
    for (c, counts) in hist.iter().enumerate() {
        let n = clusters.size(c) as u64;
        let m = n * n.saturating_sub(1) / 2;
        pair_count.push(m);
        sigma.push(if n == 0 {
            f64::NAN
        } else if m == 0 || bin_width[c] == 0.0 {
            0.0
        } else {
            ranked_value(counts, bin_width[c], m.div_ceil(2)).unwrap_or(0.0)
        });
    }
    Ok(ScaleStats { sigma, bin_width, pair_count, histogram: hist.concat() })
}
