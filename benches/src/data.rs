//! Deterministic benchmark inputs (seeded, so every executor and run sees the same data).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Uniform points in the unit cube, structure of arrays.
pub fn uniform_points(n: usize, seed: u64) -> [Vec<f32>; 3] {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut axis = || (0..n).map(|_| rng.random::<f32>()).collect::<Vec<f32>>();
    [axis(), axis(), axis()]
}

/// Uniformly random 64-bit keys.
pub fn random_keys(n: usize, seed: u64) -> Vec<u64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| rng.random::<u64>()).collect()
}

/// Random u32 values below `bound` (scan inputs: small counts, like leaf counts).
pub fn random_counts(n: usize, bound: u32, seed: u64) -> Vec<u32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| rng.random_range(0..bound)).collect()
}

/// Uniform points in the unit cube `[0, 1)^dim`, row-major (`points[i * dim + d]`).
pub fn uniform_rows(n: usize, dim: usize, seed: u64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n * dim).map(|_| rng.random::<f64>()).collect()
}

/// Number of clusters of [`clustered_rows`].
pub const CLUSTERS: usize = 32;

/// Points of a Gaussian mixture, row-major (`points[i * dim + d]`): [`CLUSTERS`]
/// isotropic clusters with centres uniform in `[0.1, 0.9)^dim`, standard deviations
/// log-uniform in `[0.002, 0.05)` (tight and loose clusters side by side, 25x apart)
/// and weights uniform in `[0.2, 1.8)` before normalising; every point picks its
/// cluster by weight. Unbounded tails: a few points leave the unit cube.
/// `benches/python/balltree_peer.py` draws the same distribution with numpy.
pub fn clustered_rows(n: usize, dim: usize, seed: u64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let centres: Vec<f64> = (0..CLUSTERS * dim).map(|_| rng.random_range(0.1..0.9)).collect();
    let sigmas: Vec<f64> = (0..CLUSTERS).map(|_| (rng.random_range(0.002f64.ln()..0.05f64.ln())).exp()).collect();
    let weights: Vec<f64> = (0..CLUSTERS).map(|_| rng.random_range(0.2..1.8)).collect();
    let mut cumulative: Vec<f64> = weights
        .iter()
        .scan(0.0, |acc, w| {
            *acc += w;
            Some(*acc)
        })
        .collect();
    let total = *cumulative.last().expect("at least one cluster");
    for c in &mut cumulative {
        *c /= total;
    }
    let mut normal = || {
        // Box-Muller; `1 - u` keeps the logarithm's argument in (0, 1].
        let (u, v) = (1.0 - rng.random::<f64>(), rng.random::<f64>());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    };
    let mut out = Vec::with_capacity(n * dim);
    let mut pick = ChaCha8Rng::seed_from_u64(seed ^ 0x9e37_79b9_7f4a_7c15);
    for _ in 0..n {
        let u = pick.random::<f64>();
        let c = cumulative.partition_point(|&x| x <= u).min(CLUSTERS - 1);
        for d in 0..dim {
            out.push(centres[c * dim + d] + sigmas[c] * normal());
        }
    }
    out
}

/// "1M", "16M", "256M" for powers of two of mebi-elements, else the number.
pub fn size_label(n: usize) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) { format!("{}M", n >> 20) } else { n.to_string() }
}
