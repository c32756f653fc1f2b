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

/// A standard normal sample (Box-Muller; `1 - u` keeps the logarithm's argument in (0, 1]).
fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let (u, v) = (1.0 - rng.random::<f64>(), rng.random::<f64>());
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// The particle sets of the tree suite, all inside the box `[-1, 1]^3` (a dyadic box: our
/// quantisation and Cornerstone's give the same keys in it, so the peer's leaf arrays
/// can be compared byte for byte; see docs/performance/tree.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeSet {
    /// Uniform in the cube.
    Uniform,
    /// Plummer sphere of scale radius 0.05, radii cut at 0.99 (redrawn beyond).
    Plummer,
    /// A thin disk: radius 0.9 (uniform in area), Gaussian thickness 1e-3.
    ThinDisk,
    /// Two Gaussian clusters (sigma 0.02) at (-0.5, -0.5, -0.5) and (0.5, 0.4, 0.3).
    TwoClusters,
    /// A uniform sphere of radius 0.1 expanding homologously (radius `0.1 * (1 + 0.08 t)`
    /// at step `t`, 0.9 at step 100): a Coulomb-explosion stand-in.
    Expanding,
}

impl TreeSet {
    /// Every set.
    pub const ALL: [TreeSet; 5] =
        [TreeSet::Uniform, TreeSet::Plummer, TreeSet::ThinDisk, TreeSet::TwoClusters, TreeSet::Expanding];

    /// Short name for workload labels.
    pub fn name(self) -> &'static str {
        match self {
            TreeSet::Uniform => "uniform",
            TreeSet::Plummer => "plummer",
            TreeSet::ThinDisk => "disk",
            TreeSet::TwoClusters => "clusters",
            TreeSet::Expanding => "expanding",
        }
    }

    /// `n` particles (f64, structure of arrays), seeded.
    pub fn generate(self, n: usize, seed: u64) -> [Vec<f64>; 3] {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut out = [Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n)];
        for i in 0..n {
            let p = match self {
                TreeSet::Uniform => [0; 3].map(|_| rng.random_range(-1.0..1.0)),
                TreeSet::Plummer => loop {
                    let m: f64 = rng.random_range(1e-9..1.0);
                    let r = 0.05 / (m.powf(-2.0 / 3.0) - 1.0).sqrt();
                    if r < 0.99 {
                        break direction(&mut rng).map(|d| r * d);
                    }
                },
                TreeSet::ThinDisk => {
                    let (r, phi) = (0.9 * rng.random::<f64>().sqrt(), rng.random_range(0.0..std::f64::consts::TAU));
                    [r * phi.cos(), r * phi.sin(), (1e-3 * normal(&mut rng)).clamp(-0.5, 0.5)]
                }
                TreeSet::TwoClusters => {
                    let c = if i % 2 == 0 { [-0.5, -0.5, -0.5] } else { [0.5, 0.4, 0.3] };
                    c.map(|c| (c + 0.02 * normal(&mut rng)).clamp(-0.999, 0.999))
                }
                TreeSet::Expanding => {
                    let r = 0.1 * rng.random::<f64>().cbrt();
                    direction(&mut rng).map(|d| r * d)
                }
            };
            for a in 0..3 {
                out[a].push(p[a]);
            }
        }
        out
    }
}

/// A uniformly random unit vector.
fn direction(rng: &mut ChaCha8Rng) -> [f64; 3] {
    let (cz, phi): (f64, f64) = (rng.random_range(-1.0..1.0), rng.random_range(0.0..std::f64::consts::TAU));
    let s = (1.0 - cz * cz).sqrt();
    [s * phi.cos(), s * phi.sin(), cz]
}

/// Adds Gaussian noise of `sigma` to every coordinate, clamped into `[-1, 1]` (the tree
/// suite's incremental steps: sigma = 1e-3 of the box edge).
pub fn jitter(points: &mut [Vec<f64>; 3], sigma: f64, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for axis in points.iter_mut() {
        for v in axis.iter_mut() {
            *v = (*v + sigma * normal(&mut rng)).clamp(-1.0, 1.0);
        }
    }
}

/// Writes particles in the peer drivers' format (`u64 n`, then `x y z m` as f64), for
/// `../shared/peers/bin/cstone_octree_driver` and `ryoanji_driver`; masses `1 / n` when
/// `mass` is `None`.
///
/// # Errors
/// I/O errors.
pub fn write_peer_file(path: &std::path::Path, points: &[Vec<f64>; 3], mass: Option<&[f64]>) -> std::io::Result<()> {
    let n = points[0].len();
    let mut bytes = Vec::with_capacity(8 + 32 * n);
    bytes.extend_from_slice(&(n as u64).to_le_bytes());
    let unit = 1.0 / n as f64;
    for i in 0..n {
        let m = mass.map_or(unit, |m| m[i]);
        for v in [points[0][i], points[1][i], points[2][i], m] {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
    }
    std::fs::write(path, bytes)
}
