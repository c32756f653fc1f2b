//! The centroid family: how tight a cluster is around its mean, from the distances of
//! its members to it. Definitions, units and sentinels: docs/clusters/statistics.md.
//!
//! Three passes over all clusters, no atomics (each a [`ChunkGrid`] pass whose partials
//! are merged per cluster in item order):
//!
//! 1. **Sums**: per item the `f64` sum of its member vectors; per cluster the centroid
//!    `mu_c = S_c / n_c`; on the host the global centroid `G = sum_c S_c / N`.
//! 2. **Distances**: per member `r_i = |x_i - mu_c|` (written to
//!    [`CentroidStats::member_distance`]), Welford moments of `r` (count, mean, `M2`,
//!    `M3`, min, max), `sum |x_i - mu_c|^2` and `sum |x_i|`; Chan's merge per cluster.
//! 3. **Thresholds**: with the thresholds of pass 2 (`cohesion + outlier_sigmas *
//!    spread` and `core_scale * cohesion`) the counts of outliers and core members and
//!    the sums of `r` over core and periphery.

use orrery_core::Result;

use crate::dist::{l2, norm, sq_l2};
use crate::grid::{ChunkGrid, MEMBER_CHUNK, reduce_chunks, reduce_chunks_write};
use crate::input::{Clusters, check_family_len, check_finite_scalar, invalid};
use crate::moments::Moments;

/// The thresholds of the centroid family's third pass.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CentroidParams {
    /// A member is an outlier when `r_i > cohesion + outlier_sigmas * spread`
    /// (default 3).
    pub outlier_sigmas: f64,
    /// A member is in the core when `r_i <= core_scale * cohesion` (default 1: closer
    /// than the mean distance), in the periphery otherwise.
    pub core_scale: f64,
}

impl Default for CentroidParams {
    fn default() -> Self {
        Self { outlier_sigmas: 3.0, core_scale: 1.0 }
    }
}

impl CentroidParams {
    /// Checks both thresholds.
    ///
    /// # Errors
    /// [`orrery_core::Error::NonFiniteValue`] for a NaN or infinite threshold,
    /// [`orrery_core::Error::InvalidArgument`] for a negative one.
    pub fn validate(&self) -> Result<()> {
        check_finite_scalar("outlier_sigmas", self.outlier_sigmas)?;
        check_finite_scalar("core_scale", self.core_scale)?;
        for (what, v) in [("outlier_sigmas", self.outlier_sigmas), ("core_scale", self.core_scale)] {
            if v < 0.0 {
                return Err(invalid(what, format!("{v} is negative")));
            }
        }
        Ok(())
    }
}

/// The centroid family of every cluster (each `Vec` has one entry per cluster, except
/// where noted). Empty clusters hold NaN in every `f64` field.
#[derive(Debug, Clone, PartialEq)]
pub struct CentroidStats {
    /// Values per vector.
    pub dim: usize,
    /// Members per cluster.
    pub size: Vec<u32>,
    /// Centroids, `clusters * dim` values row-major (NaN rows for empty clusters).
    pub centroids: Vec<f64>,
    /// The mean of all vectors (`dim` values; NaN when there are none).
    pub global_centroid: Vec<f64>,
    /// `sqrt(sum_i |x_i - G|^2 / N)` over all vectors (NaN when there are none).
    pub global_rms_radius: f64,
    /// Per member (one entry per row): `r_i = |x_i - mu_c|`.
    pub member_distance: Vec<f64>,
    /// Mean distance to the centroid, `(1/n) sum r_i` (input units).
    pub cohesion: Vec<f64>,
    /// `sum r_i^2` (input units squared; k-means' inertia, not divided by `n`).
    pub inertia: Vec<f64>,
    /// `sqrt(inertia / n)` (input units).
    pub rms_radius: Vec<f64>,
    /// Population standard deviation of `r` (input units).
    pub spread: Vec<f64>,
    /// Population skewness of `r` (dimensionless; 0 when `spread == 0`).
    pub skew: Vec<f64>,
    /// Smallest `r_i`.
    pub min_radius: Vec<f64>,
    /// Largest `r_i`.
    pub max_radius: Vec<f64>,
    /// Mean vector norm `(1/n) sum |x_i|`.
    pub mean_norm: Vec<f64>,
    /// orrery's embedding quality: the mean resultant length `|mu| / mean_norm` in
    /// `[0, 1]` (0 when every member is the zero vector).
    pub embedding_quality: Vec<f64>,
    /// `|mu_c - G|` (input units).
    pub centroid_offset: Vec<f64>,
    /// orrery's novelty: `centroid_offset / global_rms_radius` (0 when the global RMS
    /// radius is 0).
    pub novelty: Vec<f64>,
    /// Fraction of members with `r_i > cohesion + outlier_sigmas * spread`.
    pub outlier_ratio: Vec<f64>,
    /// Fraction of members with `r_i <= core_scale * cohesion`.
    pub core_fraction: Vec<f64>,
    /// Mean `r` of the core over mean `r` of the periphery, in `[0, 1)`; 1 when the core
    /// or the periphery is empty (no contrast).
    pub core_periphery_ratio: Vec<f64>,
}

impl CentroidStats {
    /// Number of clusters.
    pub fn len(&self) -> usize {
        self.size.len()
    }

    /// Whether there are no clusters (never, for statistics of validated clusters).
    pub fn is_empty(&self) -> bool {
        self.size.is_empty()
    }

    /// The centroid of cluster `c`.
    ///
    /// # Panics
    /// When `c >= self.len()`.
    pub fn centroid(&self, c: usize) -> &[f64] {
        &self.centroids[c * self.dim..(c + 1) * self.dim]
    }

    /// Checks that these statistics were computed for `clusters` (and have not been cut
    /// since: every per-cluster field has one entry per cluster).
    ///
    /// # Errors
    /// [`orrery_core::Error::LengthMismatch`] when the cluster count, the row count or
    /// the dimension differ.
    pub fn check_matches(&self, clusters: &Clusters<'_>) -> Result<()> {
        let k = clusters.len();
        check_family_len("centroid statistics (clusters)", k, self.len())?;
        check_family_len("centroid statistics (rows)", clusters.num_vectors(), self.member_distance.len())?;
        check_family_len("centroid statistics (dim)", clusters.dim(), self.dim)?;
        check_family_len("centroid statistics (centroids)", k * self.dim, self.centroids.len())?;
        check_family_len("centroid statistics (global centroid)", self.dim, self.global_centroid.len())?;
        for v in [
            &self.cohesion,
            &self.inertia,
            &self.rms_radius,
            &self.spread,
            &self.skew,
            &self.min_radius,
            &self.max_radius,
            &self.mean_norm,
            &self.embedding_quality,
            &self.centroid_offset,
            &self.novelty,
            &self.outlier_ratio,
            &self.core_fraction,
            &self.core_periphery_ratio,
        ] {
            check_family_len("centroid statistics (a per-cluster field)", k, v.len())?;
        }
        Ok(())
    }
}

fn add_into(mut a: Vec<f64>, b: &Vec<f64>) -> Vec<f64> {
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
    a
}

/// Pass 1: the `f64` member sums of every cluster (`clusters * dim`).
pub(crate) fn cluster_sums(clusters: &Clusters<'_>) -> Vec<Vec<f64>> {
    let dim = clusters.dim();
    let v = clusters.vectors();
    let grid = ChunkGrid::new(clusters.offsets(), MEMBER_CHUNK);
    reduce_chunks(
        &grid,
        || vec![0.0f64; dim],
        |chunk, acc| {
            for i in chunk.rows.clone() {
                for (a, x) in acc.iter_mut().zip(v.row(i)) {
                    *a += f64::from(*x);
                }
            }
        },
        add_into,
    )
}

/// The centroid of every cluster (`clusters * dim` values row-major, NaN for empty
/// clusters): the centroid family's first pass.
pub fn centroids(clusters: &Clusters<'_>) -> Vec<f64> {
    centroids_from_sums(clusters, &cluster_sums(clusters))
}

fn centroids_from_sums(clusters: &Clusters<'_>, sums: &[Vec<f64>]) -> Vec<f64> {
    let mut out = Vec::with_capacity(clusters.len() * clusters.dim());
    for (c, s) in sums.iter().enumerate() {
        let n = clusters.size(c) as f64;
        out.extend(s.iter().map(|v| if n > 0.0 { v / n } else { f64::NAN }));
    }
    out
}

#[derive(Clone, Copy)]
struct DistancePartial {
    moments: Moments,
    sum_sq: f64,
    sum_norm: f64,
}

#[derive(Clone, Copy, Default)]
struct ThresholdPartial {
    outliers: u64,
    core: u64,
    core_sum: f64,
    periphery_sum: f64,
}

/// Pass 2: every member's distance to its centroid and the per-cluster moments.
fn distance_pass(clusters: &Clusters<'_>, grid: &ChunkGrid<'_>, centroids: &[f64]) -> (Vec<f64>, Vec<DistancePartial>) {
    let dim = clusters.dim();
    let v = clusters.vectors();
    let mut member_distance = vec![0.0f64; clusters.num_vectors()];
    let p2 = reduce_chunks_write(
        grid,
        &mut member_distance,
        || DistancePartial { moments: Moments::EMPTY, sum_sq: 0.0, sum_norm: 0.0 },
        |chunk, out, acc| {
            let mu = &centroids[chunk.cluster * dim..(chunk.cluster + 1) * dim];
            for (o, i) in out.iter_mut().zip(chunk.rows.clone()) {
                let x = v.row(i);
                let sq = sq_l2(x, mu);
                let r = sq.sqrt();
                *o = r;
                acc.moments.push(r);
                acc.sum_sq += sq;
                acc.sum_norm += norm(x);
            }
        },
        |a, b| DistancePartial {
            moments: a.moments.merge(&b.moments),
            sum_sq: a.sum_sq + b.sum_sq,
            sum_norm: a.sum_norm + b.sum_norm,
        },
    );
    (member_distance, p2)
}

/// Pass 3: counts and sums against the per-cluster thresholds.
fn threshold_pass(
    grid: &ChunkGrid<'_>,
    member_distance: &[f64],
    outlier_threshold: &[f64],
    core_radius: &[f64],
) -> Vec<ThresholdPartial> {
    reduce_chunks(
        grid,
        ThresholdPartial::default,
        |chunk, acc| {
            let (out_t, core_t) = (outlier_threshold[chunk.cluster], core_radius[chunk.cluster]);
            for &r in &member_distance[chunk.rows.clone()] {
                acc.outliers += u64::from(r > out_t);
                if r <= core_t {
                    acc.core += 1;
                    acc.core_sum += r;
                } else {
                    acc.periphery_sum += r;
                }
            }
        },
        |a, b| ThresholdPartial {
            outliers: a.outliers + b.outliers,
            core: a.core + b.core,
            core_sum: a.core_sum + b.core_sum,
            periphery_sum: a.periphery_sum + b.periphery_sum,
        },
    )
}

/// The centroid family of every cluster.
///
/// ```
/// # use orrery_clusters::{centroid_stats, CentroidParams, Clusters};
/// let data = [0.0, 0.0, 2.0, 0.0, 10.0, 10.0];
/// let c = Clusters::new(&data, 2, &[0, 2, 3])?;
/// let s = centroid_stats(&c, &CentroidParams::default())?;
/// assert_eq!((s.centroid(0), s.cohesion[0], s.inertia[0]), (&[1.0, 0.0][..], 1.0, 2.0));
/// assert_eq!((s.cohesion[1], s.skew[1]), (0.0, 0.0)); // one member
/// # Ok::<(), orrery_core::Error>(())
/// ```
///
/// # Errors
/// [`orrery_core::Error::NonFiniteValue`] or [`orrery_core::Error::InvalidArgument`] for bad thresholds
/// ([`CentroidParams::validate`]).
pub fn centroid_stats(clusters: &Clusters<'_>, params: &CentroidParams) -> Result<CentroidStats> {
    params.validate()?;
    let dim = clusters.dim();
    let k = clusters.len();
    let rows = clusters.num_vectors();
    let size: Vec<u32> = (0..k).map(|c| clusters.size(c) as u32).collect();

    // Pass 1.
    let sums = cluster_sums(clusters);
    let centroids = centroids_from_sums(clusters, &sums);
    let global_centroid: Vec<f64> = (0..dim)
        .map(|d| if rows == 0 { f64::NAN } else { sums.iter().map(|s| s[d]).sum::<f64>() / rows as f64 })
        .collect();

    // Pass 2.
    let grid = ChunkGrid::new(clusters.offsets(), MEMBER_CHUNK);
    let (member_distance, p2) = distance_pass(clusters, &grid, &centroids);

    let cohesion: Vec<f64> = p2.iter().map(|p| if p.moments.count == 0 { f64::NAN } else { p.moments.mean }).collect();
    let spread: Vec<f64> = p2.iter().map(|p| p.moments.std_dev()).collect();
    let outlier_threshold: Vec<f64> =
        cohesion.iter().zip(&spread).map(|(m, s)| m + params.outlier_sigmas * s).collect();
    let core_radius: Vec<f64> = cohesion.iter().map(|m| params.core_scale * m).collect();

    // Pass 3.
    let p3 = threshold_pass(&grid, &member_distance, &outlier_threshold, &core_radius);

    // Per-cluster values and the global radius (Huygens: the global second moment is the
    // sum of every cluster's inertia plus n_c times its squared offset).
    let nan_if_empty = |c: usize, v: f64| if size[c] == 0 { f64::NAN } else { v };
    let centroid_offset: Vec<f64> =
        (0..k).map(|c| nan_if_empty(c, l2(&centroids[c * dim..(c + 1) * dim], &global_centroid))).collect();
    let global_rms_radius = if rows == 0 {
        f64::NAN
    } else {
        let total: f64 = (0..k)
            .filter(|&c| size[c] > 0)
            .map(|c| p2[c].sum_sq + f64::from(size[c]) * centroid_offset[c] * centroid_offset[c])
            .sum();
        (total / rows as f64).sqrt()
    };

    let mut s = CentroidStats {
        dim,
        size: size.clone(),
        global_centroid,
        global_rms_radius,
        member_distance,
        cohesion,
        spread,
        inertia: Vec::with_capacity(k),
        rms_radius: Vec::with_capacity(k),
        skew: Vec::with_capacity(k),
        min_radius: Vec::with_capacity(k),
        max_radius: Vec::with_capacity(k),
        mean_norm: Vec::with_capacity(k),
        embedding_quality: Vec::with_capacity(k),
        novelty: Vec::with_capacity(k),
        outlier_ratio: Vec::with_capacity(k),
        core_fraction: Vec::with_capacity(k),
        core_periphery_ratio: Vec::with_capacity(k),
        centroid_offset,
        centroids,
    };
    for c in 0..k {
        let n = f64::from(size[c]);
        let (p, t) = (&p2[c], &p3[c]);
        let mean_norm = p.sum_norm / n;
        let quality = if mean_norm > 0.0 { (norm(s.centroid(c)) / mean_norm).min(1.0) } else { 0.0 };
        let novelty = if global_rms_radius > 0.0 { s.centroid_offset[c] / global_rms_radius } else { 0.0 };
        let periphery = size[c] as u64 - t.core;
        let cp = if t.core == 0 || periphery == 0 {
            1.0
        } else {
            (t.core_sum / t.core as f64) / (t.periphery_sum / periphery as f64)
        };
        s.inertia.push(nan_if_empty(c, p.sum_sq));
        s.rms_radius.push((p.sum_sq / n).sqrt());
        s.skew.push(p.moments.skewness());
        s.min_radius.push(nan_if_empty(c, p.moments.min));
        s.max_radius.push(nan_if_empty(c, p.moments.max));
        s.mean_norm.push(mean_norm);
        s.embedding_quality.push(nan_if_empty(c, quality));
        s.novelty.push(nan_if_empty(c, novelty));
        s.outlier_ratio.push(t.outliers as f64 / n);
        s.core_fraction.push(t.core as f64 / n);
        s.core_periphery_ratio.push(nan_if_empty(c, cp));
    }
    Ok(s)
}
