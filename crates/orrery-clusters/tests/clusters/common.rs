//! Straightforward sequential `f64` references of every statistic and search, and small
//! inputs. Nothing here is tiled, chunked or merged: each formula is written as in
//! docs/clusters/statistics.md.

#![allow(dead_code)]

use orrery_clusters::synth::{SynthData, SynthParams, gaussian_clusters};
use orrery_clusters::{Clusters, Metric, NO_ROW};

/// Relative tolerance of the comparisons against the references: the references sum
/// sequentially, the crate in lanes and in merged chunks; both in `f64`, so the sums
/// agree to about `n * 1e-16`. 1e-9 leaves room for sums over ~1e5 values and for the
/// cancellation in centred moments.
pub const TOL: f64 = 1e-9;

/// `|a - b| <= tol * max(1, |a|, |b|)`, or both NaN, or both the same infinity.
pub fn close(a: f64, b: f64, tol: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= tol * 1f64.max(a.abs()).max(b.abs())
}

#[track_caller]
pub fn assert_close(what: &str, c: usize, got: f64, want: f64, tol: f64) {
    assert!(close(got, want, tol), "{what} of cluster {c}: got {got}, want {want}");
}

/// Synthetic clusters with a fixed seed.
pub fn synth(clusters: usize, dim: usize, median: f64, seed: u64) -> SynthData {
    gaussian_clusters(&SynthParams { median_size: median, size_sigma: 0.7, seed, ..SynthParams::new(clusters, dim) })
        .unwrap()
}

pub fn members(clusters: &Clusters<'_>, c: usize) -> Vec<Vec<f64>> {
    let v = clusters.vectors();
    clusters.range(c).map(|i| v.row(i).iter().map(|&x| f64::from(x)).collect()).collect()
}

pub fn all_rows(clusters: &Clusters<'_>) -> Vec<Vec<f64>> {
    let v = clusters.vectors();
    (0..v.len()).map(|i| v.row(i).iter().map(|&x| f64::from(x)).collect()).collect()
}

pub fn sq(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

pub fn dist(a: &[f64], b: &[f64]) -> f64 {
    sq(a, b).sqrt()
}

pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

pub fn mean(xs: &[Vec<f64>], dim: usize) -> Vec<f64> {
    let mut m = vec![0.0; dim];
    for x in xs {
        for d in 0..dim {
            m[d] += x[d];
        }
    }
    m.iter().map(|s| s / xs.len() as f64).collect()
}

/// Population mean, standard deviation and skewness by the two-pass formulas.
pub fn mean_std_skew(v: &[f64]) -> (f64, f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let m2 = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n;
    let m3 = v.iter().map(|x| (x - m).powi(3)).sum::<f64>() / n;
    let skew = if m2 > 0.0 { m3 / m2.powf(1.5) } else { 0.0 };
    (m, m2.sqrt(), skew)
}

/// All pairwise distances `i < j`.
pub fn pair_distances(xs: &[Vec<f64>]) -> Vec<f64> {
    let mut out = Vec::new();
    for i in 0..xs.len() {
        for j in i + 1..xs.len() {
            out.push(dist(&xs[i], &xs[j]));
        }
    }
    out
}

/// The reference of orrery's two-means: seeds at the first and last member, `iters`
/// Lloyd iterations (ties to side A), a final assignment. Returns labels and centroids.
pub fn two_means_ref(xs: &[Vec<f64>], iters: usize) -> (Vec<u8>, [Vec<f64>; 2]) {
    let dim = xs[0].len();
    let mut c = [xs[0].clone(), xs[xs.len() - 1].clone()];
    let assign = |c: &[Vec<f64>; 2]| -> Vec<u8> { xs.iter().map(|x| u8::from(sq(x, &c[1]) < sq(x, &c[0]))).collect() };
    for _ in 0..iters {
        let labels = assign(&c);
        for side in 0..2 {
            let m: Vec<Vec<f64>> =
                xs.iter().zip(&labels).filter(|(_, l)| **l as usize == side).map(|(x, _)| x.clone()).collect();
            if !m.is_empty() {
                c[side] = mean(&m, dim);
            }
        }
    }
    (assign(&c), c)
}

/// The mean silhouette over `labels` (0 for a member alone on its side, 0 for the whole
/// cluster when a side is empty).
pub fn silhouette_ref(xs: &[Vec<f64>], labels: &[u8]) -> f64 {
    let b: usize = labels.iter().map(|&l| usize::from(l)).sum();
    let n = [labels.len() - b, b];
    if n[0] == 0 || n[1] == 0 {
        return 0.0;
    }
    let mut total = 0.0;
    for i in 0..xs.len() {
        let own = labels[i] as usize;
        if n[own] < 2 {
            continue;
        }
        let mut s = [0.0; 2];
        for j in 0..xs.len() {
            if j != i {
                s[labels[j] as usize] += dist(&xs[i], &xs[j]);
            }
        }
        let a = s[own] / (n[own] - 1) as f64;
        let b = s[1 - own] / n[1 - own] as f64;
        if a.max(b) > 0.0 {
            total += (b - a) / a.max(b);
        }
    }
    total / xs.len() as f64
}

/// The exact `k` best rows by a brute-force sequential `f64` ranking, ties by row,
/// padded with `NO_ROW`.
pub fn brute_force(rows: &[Vec<f64>], candidates: &[usize], q: &[f64], k: usize, metric: Metric) -> Vec<(u32, f64)> {
    let mut scored: Vec<(f64, usize)> = candidates
        .iter()
        .map(|&r| match metric {
            Metric::L2 => (sq(q, &rows[r]), r),
            Metric::InnerProduct => (-dot(q, &rows[r]), r),
        })
        .collect();
    scored.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut out: Vec<(u32, f64)> =
        scored.iter().take(k).map(|&(key, r)| (r as u32, if metric == Metric::L2 { key } else { -key })).collect();
    let pad = if metric == Metric::L2 { f64::INFINITY } else { f64::NEG_INFINITY };
    out.resize(k, (NO_ROW, pad));
    out
}

/// Debug text of a value: equal text means equal bits for our floats (shortest
/// round-trip printing; NaN compares equal to NaN here, as the bitwise tests want).
pub fn bits<T: std::fmt::Debug>(v: &T) -> String {
    format!("{v:?}")
}
