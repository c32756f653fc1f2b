//! The Gaussian-potential family at width `sigma` (the cluster's own scale): every member
//! is a Gaussian `K(u) = exp(-u^2 / (2 sigma^2))` and the cluster is their mean
//! potential `Phi(y) = (1/n) sum_i K(|y - x_i|)`. Definitions and sentinels (these are
//! orrery's definitions; the issue leaves them open): docs/clusters/statistics.md.
//!
//! - **depth** `Phi(mu) = (1/n) sum_i exp(-r_i^2 / (2 sigma^2))`, in `(0, 1]`;
//! - **curvature** `kappa = -(sigma^2 / D) tr Hess Phi(mu)
//!   = (1/n) sum_i K(r_i) (1 - r_i^2 / (D sigma^2))`, dimensionless: positive when the
//!   centroid sits in a well, negative when the members form a shell around it;
//! - **escape probability** `exp(-delta^2 / (8 sigma^2))`, the kernel's value at the
//!   barrier midway (`delta / 2`) to the nearest other centroid at distance `delta`;
//! - **entanglement**, the normalised linear entropy of the kernel density operator
//!   `rho = G / n`, `G_ij = K(|x_i - x_j|)` (so `tr rho = 1`): purity
//!   `P = tr rho^2 = (n + 2 sum_{i<j} G_ij^2) / n^2`, entanglement
//!   `(1 - P) / (1 - 1/n)` in `[0, 1]`, summed over the upper triangle of member pairs
//!   (a tiled pass; the Gram matrix is never formed).
//!
//! Passes: one [`ChunkGrid`] pass over the member distances of the centroid family
//! (depth, curvature), a row pass over the centroids for the nearest other cluster
//! (ties to the lower index), and the tiled upper-triangle pass for the entanglement.

use orrery_core::Result;
use rayon::prelude::*;

use crate::centroid::CentroidStats;
use crate::dist::sq_l2;
use crate::grid::{ChunkGrid, MEMBER_CHUNK, PAIR_TILE, TileGrid, reduce_chunks, reduce_tiles, upper_pairs};
use crate::input::{Clusters, check_family_len};
use crate::scale::ScaleStats;

/// Marks "no other cluster" in [`PotentialStats::nearest_cluster`].
pub const NO_CLUSTER: u32 = u32::MAX;

/// The Gaussian-potential family of every cluster (one entry per cluster; NaN in every
/// `f64` field of an empty cluster).
#[derive(Debug, Clone, PartialEq)]
pub struct PotentialStats {
    /// `Phi(mu)` in `(0, 1]` (1 when all members coincide with the centroid).
    pub depth: Vec<f64>,
    /// `kappa`, dimensionless (1 when all members coincide with the centroid).
    pub curvature: Vec<f64>,
    /// The nearest other non-empty cluster by centroid distance ([`NO_CLUSTER`] when
    /// there is none or this one is empty).
    pub nearest_cluster: Vec<u32>,
    /// `delta`, the distance to that cluster's centroid (`+inf` when there is no other
    /// non-empty cluster; NaN for an empty cluster).
    pub nearest_distance: Vec<f64>,
    /// `exp(-delta^2 / (8 sigma^2))` in `[0, 1]`.
    pub escape_probability: Vec<f64>,
    /// Normalised linear entropy of the kernel density operator, in `[0, 1]`.
    pub entanglement: Vec<f64>,
}

/// `exp(-d2 / s2)` with the convention `exp(-0 / 0) = 1` (a zero-width kernel is 1 at
/// distance 0 and 0 elsewhere).
#[inline]
fn kernel(d2: f64, s2: f64) -> f64 {
    if s2 > 0.0 {
        (-d2 / s2).exp()
    } else if d2 == 0.0 {
        1.0
    } else {
        0.0
    }
}

/// Clusters per row tile of the nearest-centroid pass.
const ROW_TILE: usize = 16;
/// Centroids per column tile of the nearest-centroid pass (64 centroids of 1,024 `f64`
/// dims: 512 KB, reused by the 16 rows of a tile while it sits in L2).
const COL_TILE: usize = 64;

/// The nearest other non-empty cluster of every cluster by centroid distance, ties to
/// the lower index: `(index, distance)`, `(NO_CLUSTER, +inf)` when there is none
/// (empty clusters get `(NO_CLUSTER, +inf)` too).
///
/// A tiled row pass: a task takes 16 clusters and walks the non-empty centroids in
/// column tiles of 64, each row keeping its best in ascending column order (so the tie
/// rule holds without atomics).
pub fn nearest_centroids(centroid: &CentroidStats) -> Vec<(u32, f64)> {
    let k = centroid.len();
    let live: Vec<usize> = (0..k).filter(|&c| centroid.size[c] > 0).collect();
    let mut out = vec![(NO_CLUSTER, f64::INFINITY); k];
    out.par_chunks_mut(ROW_TILE).enumerate().for_each(|(t, rows)| {
        let first = t * ROW_TILE;
        for cols in live.chunks(COL_TILE) {
            for (i, best) in rows.iter_mut().enumerate() {
                let c = first + i;
                if centroid.size[c] == 0 {
                    continue;
                }
                let mu = centroid.centroid(c);
                for &o in cols {
                    if o != c {
                        let d = sq_l2(mu, centroid.centroid(o));
                        if d < best.1 {
                            *best = (o as u32, d);
                        }
                    }
                }
            }
        }
        for best in rows.iter_mut() {
            best.1 = best.1.sqrt();
        }
    });
    out
}

/// The Gaussian-potential family of every cluster at the width of `scale`.
///
/// # Errors
/// [`orrery_core::Error::LengthMismatch`] when `centroid` or `scale` belong to other
/// clusters.
pub fn potential_stats(
    clusters: &Clusters<'_>,
    centroid: &CentroidStats,
    scale: &ScaleStats,
) -> Result<PotentialStats> {
    centroid.check_matches(clusters)?;
    check_family_len("scale statistics (clusters)", clusters.len(), scale.sigma.len())?;
    let dim = clusters.dim() as f64;
    let k = clusters.len();
    let v = clusters.vectors();
    let s2: Vec<f64> = scale.sigma.iter().map(|s| 2.0 * s * s).collect();

    let grid = ChunkGrid::new(clusters.offsets(), MEMBER_CHUNK);
    let wells = reduce_chunks(
        &grid,
        || [0.0f64; 2],
        |chunk, acc| {
            let (sigma, s2) = (scale.sigma[chunk.cluster], s2[chunk.cluster]);
            for &r in &centroid.member_distance[chunk.rows.clone()] {
                let r2 = r * r;
                let w = kernel(r2, s2);
                acc[0] += w;
                acc[1] += if sigma > 0.0 { w * (1.0 - r2 / (dim * sigma * sigma)) } else { w };
            }
        },
        |a, b| [a[0] + b[0], a[1] + b[1]],
    );

    let tiles = TileGrid::new(clusters.offsets(), PAIR_TILE);
    // G_ij^2 = exp(-d^2 / sigma^2).
    let sq_sigma: Vec<f64> = scale.sigma.iter().map(|s| s * s).collect();
    let gram = reduce_tiles(
        &tiles,
        || 0.0f64,
        |p, acc| {
            let s = sq_sigma[p.cluster];
            upper_pairs(&tiles, p, |i, j| *acc += kernel(sq_l2(v.row(i), v.row(j)), s));
        },
        |a, b| a + b,
    );

    let nearest = nearest_centroids(centroid);
    let mut out = PotentialStats {
        depth: Vec::with_capacity(k),
        curvature: Vec::with_capacity(k),
        nearest_cluster: nearest.iter().map(|n| n.0).collect(),
        nearest_distance: nearest.iter().map(|n| n.1).collect(),
        escape_probability: Vec::with_capacity(k),
        entanglement: Vec::with_capacity(k),
    };
    for c in 0..k {
        let n = clusters.size(c) as f64;
        if n == 0.0 {
            out.depth.push(f64::NAN);
            out.curvature.push(f64::NAN);
            out.nearest_distance[c] = f64::NAN;
            out.escape_probability.push(f64::NAN);
            out.entanglement.push(f64::NAN);
            continue;
        }
        out.depth.push(wells[c][0] / n);
        out.curvature.push(wells[c][1] / n);
        let delta = out.nearest_distance[c];
        let sigma = scale.sigma[c];
        out.escape_probability.push(if delta.is_infinite() { 0.0 } else { kernel(delta * delta, 8.0 * sigma * sigma) });
        out.entanglement.push(if n < 2.0 {
            0.0
        } else {
            let purity = (n + 2.0 * gram[c]) / (n * n);
            ((1.0 - purity) * n / (n - 1.0)).clamp(0.0, 1.0)
        });
    }
    Ok(out)
}
