//! The diversity family: the distribution of the pairwise distances of a cluster's
//! members and how much information it carries. Definitions and sentinels:
//! docs/clusters/statistics.md.
//!
//! Two tiled passes over the upper triangle of member pairs ([`TileGrid`]):
//!
//! 1. **Moments**: per work item Welford moments of the distances (count, mean, `M2`,
//!    `M3`, min, max), merged per cluster by Chan's formulas in item order.
//! 2. **Histogram**: [`DIVERSITY_BINS`] = 20 equal bins over `[min, max]` of pass 1
//!    (integer counts). From it the Shannon entropy of the distance distribution,
//!    normalised by `log2 20`, and its perplexity `2^H`.

use orrery_core::Result;

use crate::dist::l2;
use crate::grid::{PAIR_TILE, TileGrid, reduce_tiles, upper_pairs};
use crate::input::Clusters;
use crate::moments::Moments;
use crate::scale::bin_of;

/// Bins of the diversity histogram.
pub const DIVERSITY_BINS: usize = 20;

/// The diversity family of every cluster (one entry per cluster). Clusters with one
/// member have no pairs: their distances, spread and entropy are 0 and their
/// perplexity 1; empty clusters hold NaN.
#[derive(Debug, Clone, PartialEq)]
pub struct DiversityStats {
    /// Pairs `n (n - 1) / 2`.
    pub pair_count: Vec<u64>,
    /// Mean pairwise distance (input units).
    pub mean_distance: Vec<f64>,
    /// Population standard deviation of the pairwise distances (input units).
    pub distance_std: Vec<f64>,
    /// Population skewness of the pairwise distances (0 when they are all equal).
    pub distance_skew: Vec<f64>,
    /// Coefficient of variation `distance_std / mean_distance` (0 when the mean is 0).
    pub distance_cv: Vec<f64>,
    /// Smallest pairwise distance.
    pub min_distance: Vec<f64>,
    /// Largest pairwise distance (the cluster's diameter).
    pub max_distance: Vec<f64>,
    /// Shannon entropy of the 20-bin histogram, in bits over `log2 20`: in `[0, 1]`.
    pub entropy: Vec<f64>,
    /// `2^H` with `H` the entropy in bits: the effective number of occupied bins, in
    /// `[1, 20]`.
    pub perplexity: Vec<f64>,
    /// The histograms: bin `b` of cluster `c` counts the distances in
    /// `[lo + b w, lo + (b + 1) w)` with `lo = min_distance`, `w = (max - min) / 20`
    /// (the last bin also holds `max`; every pair is in bin 0 when `max == min`).
    pub histogram: Vec<[u64; DIVERSITY_BINS]>,
}

/// The diversity family of every cluster.
///
/// # Errors
/// None today; the `Result` keeps the signature of the other families.
pub fn diversity_stats(clusters: &Clusters<'_>) -> Result<DiversityStats> {
    let v = clusters.vectors();
    let grid = TileGrid::new(clusters.offsets(), PAIR_TILE);
    let moments = reduce_tiles(
        &grid,
        || Moments::EMPTY,
        |p, acc| upper_pairs(&grid, p, |i, j| acc.push(l2(v.row(i), v.row(j)))),
        |a, b| a.merge(b),
    );
    let edges: Vec<(f64, f64)> = moments
        .iter()
        .map(|m| if m.count == 0 { (0.0, 0.0) } else { (m.min, (m.max - m.min) / DIVERSITY_BINS as f64) })
        .collect();
    let histogram = reduce_tiles(
        &grid,
        || [0u64; DIVERSITY_BINS],
        |p, acc| {
            let (lo, w) = edges[p.cluster];
            upper_pairs(&grid, p, |i, j| acc[bin_of(l2(v.row(i), v.row(j)), lo, w, DIVERSITY_BINS)] += 1);
        },
        |mut a, b| {
            a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
            a
        },
    );
    let k = clusters.len();
    let mut out = DiversityStats {
        pair_count: Vec::with_capacity(k),
        mean_distance: Vec::with_capacity(k),
        distance_std: Vec::with_capacity(k),
        distance_skew: Vec::with_capacity(k),
        distance_cv: Vec::with_capacity(k),
        min_distance: Vec::with_capacity(k),
        max_distance: Vec::with_capacity(k),
        entropy: Vec::with_capacity(k),
        perplexity: Vec::with_capacity(k),
        histogram,
    };
    for (c, m) in moments.iter().enumerate() {
        out.pair_count.push(m.count);
        let n = clusters.size(c);
        let fill = if n == 0 { f64::NAN } else { 0.0 };
        if m.count == 0 {
            for v in [
                &mut out.mean_distance,
                &mut out.distance_std,
                &mut out.distance_skew,
                &mut out.distance_cv,
                &mut out.min_distance,
                &mut out.max_distance,
                &mut out.entropy,
            ] {
                v.push(fill);
            }
            out.perplexity.push(if n == 0 { f64::NAN } else { 1.0 });
            continue;
        }
        let std = m.std_dev();
        out.mean_distance.push(m.mean);
        out.distance_std.push(std);
        out.distance_skew.push(m.skewness());
        out.distance_cv.push(if m.mean > 0.0 { std / m.mean } else { 0.0 });
        out.min_distance.push(m.min);
        out.max_distance.push(m.max);
        let total = m.count as f64;
        let h: f64 = out.histogram[c]
            .iter()
            .filter(|&&b| b > 0)
            .map(|&b| {
                let p = b as f64 / total;
                -p * p.log2()
            })
            .sum();
        out.entropy.push((h / (DIVERSITY_BINS as f64).log2()).clamp(0.0, 1.0));
        out.perplexity.push(h.exp2());
    }
    Ok(out)
}
