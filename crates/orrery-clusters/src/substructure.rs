//! The sub-structure family: does a cluster split in two? Definitions and sentinels:
//! docs/clusters/statistics.md.
//!
//! **Two-means, as orrery defines it.** Per cluster the two seeds are its first and its
//! last member (in CSR order; equal for one member). Then exactly
//! [`LLOYD_ITERATIONS`] = 3 Lloyd iterations, each an *assignment* (every member to the
//! nearer centroid by squared distance, a tie to side A, the first member's side) and an
//! *update* (each side's centroid becomes the `f64` mean of its members; a side without
//! members keeps its centroid). A final assignment to the final centroids gives the
//! labels that the split inertia and the silhouette use. The iteration count is part of
//! the definition, not a convergence cap: the result is that of three iterations even
//! where Lloyd would continue to move, so every executor computes the same function.
//!
//! Passes: 4 assignments and 3 updates (each a [`ChunkGrid`] pass over all clusters),
//! then the silhouette's row-tile pass: an item is a tile of [`PAIR_TILE`] rows of one
//! cluster, and every row sums its distances to all members of the cluster, column tile
//! after column tile, by label. A row's sums are therefore accumulated in one thread in
//! ascending member order (no atomics, deterministic), and nothing quadratic is stored.

use orrery_core::Result;
use rayon::prelude::*;

use crate::centroid::CentroidStats;
use crate::dist::{l2, sq_l2};
use crate::grid::{ChunkGrid, MEMBER_CHUNK, PAIR_TILE, reduce_chunks, reduce_chunks_write};
use crate::input::Clusters;

/// Lloyd iterations of the two-means split (part of the statistic's definition).
pub const LLOYD_ITERATIONS: usize = 3;

/// Label of side A, seeded at a cluster's first member.
pub const SIDE_A: u8 = 0;
/// Label of side B, seeded at a cluster's last member.
pub const SIDE_B: u8 = 1;

/// The result of [`two_means`]: final centroids and labels.
#[derive(Debug, Clone, PartialEq)]
pub struct TwoMeans {
    /// Values per vector.
    pub dim: usize,
    /// `clusters * 2 * dim` values: for cluster `c`, side A's centroid then side B's
    /// (NaN for empty clusters).
    pub centroids: Vec<f64>,
    /// Per row: [`SIDE_A`] or [`SIDE_B`], the final assignment.
    pub labels: Vec<u8>,
    /// Per row: the squared distance to its final centroid.
    pub sq_distance: Vec<f64>,
    /// Per cluster: members on side A and side B.
    pub sizes: Vec<[u32; 2]>,
}

impl TwoMeans {
    /// The centroid of `side` (0 or 1) of cluster `c`.
    ///
    /// # Panics
    /// When `c` or `side` is out of range.
    pub fn centroid(&self, c: usize, side: usize) -> &[f64] {
        let o = (2 * c + side) * self.dim;
        &self.centroids[o..o + self.dim]
    }
}

/// The sub-structure family of every cluster (one entry per cluster; NaN for empty
/// clusters).
#[derive(Debug, Clone, PartialEq)]
pub struct SubstructureStats {
    /// The two-means split behind the statistics.
    pub split: TwoMeans,
    /// `sum_i |x_i - c_label(i)|^2` after the split (input units squared).
    pub split_inertia: Vec<f64>,
    /// `split_inertia / inertia` in `[0, 1]`: small when the cluster is two groups; 1
    /// when the inertia is 0.
    pub inertia_ratio: Vec<f64>,
    /// Mean silhouette of the members over the two-means labels, in `[-1, 1]`; 0 when a
    /// side is empty.
    pub silhouette: Vec<f64>,
    /// `min(n_A, n_B) / n` in `[0, 1/2]`.
    pub split_balance: Vec<f64>,
    /// `|c_A - c_B|` (input units).
    pub split_separation: Vec<f64>,
}

/// The assignment pass: every member's side and squared distance to that side's
/// centroid (ties to side A).
fn assign(clusters: &Clusters<'_>, grid: &ChunkGrid<'_>, centroids: &[f64], out: &mut [(u8, f64)]) {
    let dim = clusters.dim();
    let v = clusters.vectors();
    reduce_chunks_write(
        grid,
        out,
        || (),
        |chunk, out, ()| {
            let o = 2 * chunk.cluster * dim;
            let (ca, cb) = (&centroids[o..o + dim], &centroids[o + dim..o + 2 * dim]);
            for (p, i) in out.iter_mut().zip(chunk.rows.clone()) {
                let (da, db) = (sq_l2(v.row(i), ca), sq_l2(v.row(i), cb));
                *p = if db < da { (SIDE_B, db) } else { (SIDE_A, da) };
            }
        },
        |(), ()| (),
    );
}

/// The update pass: each side's centroid becomes the mean of its members (a side without
/// members keeps its centroid).
fn update(clusters: &Clusters<'_>, grid: &ChunkGrid<'_>, centroids: &mut [f64], labels: &[(u8, f64)]) {
    let dim = clusters.dim();
    let v = clusters.vectors();
    let sums = reduce_chunks(
        grid,
        || (vec![0.0f64; 2 * dim], [0u64; 2]),
        |chunk, (sum, count)| {
            for i in chunk.rows.clone() {
                let side = labels[i].0 as usize;
                count[side] += 1;
                for (a, x) in sum[side * dim..(side + 1) * dim].iter_mut().zip(v.row(i)) {
                    *a += f64::from(*x);
                }
            }
        },
        |(mut s, mut n), (t, m)| {
            s.iter_mut().zip(t).for_each(|(a, b)| *a += b);
            n[0] += m[0];
            n[1] += m[1];
            (s, n)
        },
    );
    centroids.par_chunks_mut(2 * dim).zip(sums.par_iter()).for_each(|(c, (s, n))| {
        for side in 0..2 {
            if n[side] > 0 {
                let count = n[side] as f64;
                for d in 0..dim {
                    c[side * dim + d] = s[side * dim + d] / count;
                }
            }
        }
    });
}

/// orrery's two-means split of every cluster: seeds at the first and last member,
/// exactly [`LLOYD_ITERATIONS`] assignment-and-update iterations, a final assignment.
///
/// ```
/// # use orrery_clusters::{substructure::two_means, Clusters};
/// let data = [0.0, 1.0, 10.0, 11.0]; // 1-D: two groups
/// let split = two_means(&Clusters::new(&data, 1, &[0, 4])?);
/// assert_eq!(split.labels, [0, 0, 1, 1]);
/// assert_eq!((split.centroid(0, 0), split.centroid(0, 1)), (&[0.5][..], &[10.5][..]));
/// # Ok::<(), orrery_core::Error>(())
/// ```
pub fn two_means(clusters: &Clusters<'_>) -> TwoMeans {
    let dim = clusters.dim();
    let k = clusters.len();
    let rows = clusters.num_vectors();
    let v = clusters.vectors();
    let mut centroids = vec![f64::NAN; 2 * k * dim];
    for c in 0..k {
        let r = clusters.range(c);
        if r.is_empty() {
            continue;
        }
        let o = 2 * c * dim;
        for (d, (a, b)) in v.row(r.start).iter().zip(v.row(r.end - 1)).enumerate() {
            centroids[o + d] = f64::from(*a);
            centroids[o + dim + d] = f64::from(*b);
        }
    }
    let grid = ChunkGrid::new(clusters.offsets(), MEMBER_CHUNK);
    let mut assignment = vec![(SIDE_A, 0.0f64); rows];
    for _ in 0..LLOYD_ITERATIONS {
        assign(clusters, &grid, &centroids, &mut assignment);
        update(clusters, &grid, &mut centroids, &assignment);
    }
    assign(clusters, &grid, &centroids, &mut assignment);
    let (labels, sq_distance): (Vec<u8>, Vec<f64>) = assignment.into_par_iter().unzip();
    let sizes = (0..k)
        .map(|c| {
            let b: u32 = labels[clusters.range(c)].iter().map(|&l| u32::from(l)).sum();
            [clusters.size(c) as u32 - b, b]
        })
        .collect();
    TwoMeans { dim, centroids, labels, sq_distance, sizes }
}

/// Silhouette sums of every cluster over `labels` (the row-tile pass).
fn silhouette_sums(clusters: &Clusters<'_>, split: &TwoMeans) -> Vec<f64> {
    let v = clusters.vectors();
    let labels = &split.labels;
    let grid = ChunkGrid::new(clusters.offsets(), PAIR_TILE);
    reduce_chunks(
        &grid,
        || 0.0f64,
        |chunk, acc| {
            let sizes = split.sizes[chunk.cluster];
            if sizes[0] == 0 || sizes[1] == 0 {
                return;
            }
            let members = clusters.range(chunk.cluster);
            let rows = chunk.rows.clone();
            let mut sums = vec![[0.0f64; 2]; rows.len()];
            let mut col = members.start;
            while col < members.end {
                let cols = col..(col + PAIR_TILE).min(members.end);
                for (s, i) in sums.iter_mut().zip(rows.clone()) {
                    let xi = v.row(i);
                    for j in cols.clone() {
                        if j != i {
                            s[labels[j] as usize] += l2(xi, v.row(j));
                        }
                    }
                }
                col = cols.end;
            }
            for (s, i) in sums.iter().zip(rows) {
                let own = labels[i] as usize;
                let (n_own, n_other) = (f64::from(sizes[own]), f64::from(sizes[1 - own]));
                if n_own < 2.0 {
                    continue; // a member alone on its side has silhouette 0
                }
                let a = s[own] / (n_own - 1.0);
                let b = s[1 - own] / n_other;
                let m = a.max(b);
                if m > 0.0 {
                    *acc += (b - a) / m;
                }
            }
        },
        |a, b| a + b,
    )
}

/// The sub-structure family of every cluster; `centroid` supplies the inertia of the
/// unsplit cluster.
///
/// # Errors
/// [`orrery_core::Error::LengthMismatch`] when `centroid` belongs to other clusters.
pub fn substructure_stats(clusters: &Clusters<'_>, centroid: &CentroidStats) -> Result<SubstructureStats> {
    centroid.check_matches(clusters)?;
    let split = two_means(clusters);
    let sil = silhouette_sums(clusters, &split);
    let grid = ChunkGrid::new(clusters.offsets(), MEMBER_CHUNK);
    let split_sq = reduce_chunks(
        &grid,
        || 0.0f64,
        |chunk, acc| {
            for &s in &split.sq_distance[chunk.rows.clone()] {
                *acc += s;
            }
        },
        |a, b| a + b,
    );
    let k = clusters.len();
    let mut out = SubstructureStats {
        split_inertia: Vec::with_capacity(k),
        inertia_ratio: Vec::with_capacity(k),
        silhouette: Vec::with_capacity(k),
        split_balance: Vec::with_capacity(k),
        split_separation: Vec::with_capacity(k),
        split,
    };
    for c in 0..k {
        let n = clusters.size(c);
        if n == 0 {
            for v in [
                &mut out.split_inertia,
                &mut out.inertia_ratio,
                &mut out.silhouette,
                &mut out.split_balance,
                &mut out.split_separation,
            ] {
                v.push(f64::NAN);
            }
            continue;
        }
        let inertia = centroid.inertia[c];
        let [na, nb] = out.split.sizes[c];
        out.split_inertia.push(split_sq[c]);
        out.inertia_ratio.push(if inertia > 0.0 { (split_sq[c] / inertia).clamp(0.0, 1.0) } else { 1.0 });
        out.silhouette.push(sil[c] / n as f64);
        out.split_balance.push(f64::from(na.min(nb)) / n as f64);
        out.split_separation.push(l2(out.split.centroid(c, 0), out.split.centroid(c, 1)));
    }
    Ok(out)
}
