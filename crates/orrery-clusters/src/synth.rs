//! A seeded generator of Gaussian clusters with log-normal sizes, for tests and the
//! benchmarks.
//!
//! Cluster `c` has size `max(min_size, round(median_size * exp(size_sigma * z_c)))`
//! (log-normal with median `median_size`), a centre `center_spread * z` (one standard
//! normal per dimension) and members `centre + cluster_std * z`. The normals come from
//! `ChaCha8Rng::seed_from_u64(seed)` by the Box-Muller transform: stream 0 draws the
//! sizes, stream `c + 1` the centre and the members of cluster `c`. Clusters are
//! generated in parallel, each from its own stream, so the output is the same for a
//! seed on any thread count (and on any machine whose `ln`, `sin` and `cos` round alike;
//! std's may differ in the last bit across platforms).

use orrery_core::{Error, MAX_POINTS, Result};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::input::{Clusters, Vectors, check_finite_scalar, invalid};

/// Parameters of [`gaussian_clusters`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SynthParams {
    /// Number of clusters.
    pub clusters: usize,
    /// Values per vector.
    pub dim: usize,
    /// Median cluster size.
    pub median_size: f64,
    /// Standard deviation of `ln(size)`: 0 gives equal sizes, 1 sizes that span about
    /// two orders of magnitude.
    pub size_sigma: f64,
    /// Smallest cluster size (0 allows empty clusters).
    pub min_size: usize,
    /// Standard deviation of the centres around the origin, per dimension.
    pub center_spread: f64,
    /// Standard deviation of the members around their centre, per dimension.
    pub cluster_std: f64,
    /// The seed.
    pub seed: u64,
}

impl SynthParams {
    /// `clusters` clusters in `dim` dimensions, median size 100, `size_sigma` 1, at
    /// least 1 member, centres of spread 1, members of spread 0.1, seed 0.
    pub fn new(clusters: usize, dim: usize) -> Self {
        Self {
            clusters,
            dim,
            median_size: 100.0,
            size_sigma: 1.0,
            min_size: 1,
            center_spread: 1.0,
            cluster_std: 0.1,
            seed: 0,
        }
    }
}

/// The generated data: vectors in CSR order with their offsets and the true centres.
#[derive(Debug, Clone, PartialEq)]
pub struct SynthData {
    /// Values per vector.
    pub dim: usize,
    /// All members, cluster after cluster, row-major.
    pub vectors: Vec<f32>,
    /// CSR offsets (`clusters + 1`).
    pub offsets: Vec<u32>,
    /// The centres the members were drawn around, `clusters * dim`.
    pub centers: Vec<f32>,
}

impl SynthData {
    /// The data as validated clusters.
    ///
    /// # Errors
    /// None for generated data (the validation runs again).
    pub fn clusters(&self) -> Result<Clusters<'_>> {
        Clusters::new(&self.vectors, self.dim, &self.offsets)
    }

    /// All members as validated vectors.
    ///
    /// # Errors
    /// None for generated data (the validation runs again).
    pub fn vectors(&self) -> Result<Vectors<'_>> {
        Vectors::new(&self.vectors, self.dim)
    }
}

/// Standard normals by Box-Muller, two per pair of uniforms.
struct Normals {
    rng: ChaCha8Rng,
    spare: Option<f64>,
}

impl Normals {
    fn new(seed: u64, stream: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(stream);
        Self { rng, spare: None }
    }

    fn next(&mut self) -> f64 {
        if let Some(z) = self.spare.take() {
            return z;
        }
        let u1 = 1.0 - self.rng.random::<f64>(); // (0, 1]
        let u2 = self.rng.random::<f64>();
        let r = (-2.0 * u1.ln()).sqrt();
        let (s, c) = (std::f64::consts::TAU * u2).sin_cos();
        self.spare = Some(r * s);
        r * c
    }
}

/// Generates Gaussian clusters (see the module docs).
///
/// ```
/// # use orrery_clusters::synth::{gaussian_clusters, SynthParams};
/// let data = gaussian_clusters(&SynthParams { seed: 7, ..SynthParams::new(20, 16) })?;
/// assert_eq!(data.offsets.len(), 21);
/// assert_eq!(data, gaussian_clusters(&SynthParams { seed: 7, ..SynthParams::new(20, 16) })?);
/// # Ok::<(), orrery_core::Error>(())
/// ```
///
/// # Errors
/// [`Error::InvalidArgument`] for no clusters, `dim == 0` or negative parameters;
/// [`Error::NonFiniteValue`] for non-finite ones; [`Error::TooManyPoints`] when the
/// sizes add up to more than `u32::MAX` rows.
pub fn gaussian_clusters(params: &SynthParams) -> Result<SynthData> {
    if params.clusters == 0 {
        return Err(invalid("clusters", "0 clusters; generate at least 1".into()));
    }
    if params.dim == 0 {
        return Err(invalid("dim", "0 values per vector; dim must be at least 1".into()));
    }
    for (what, v) in [
        ("median_size", params.median_size),
        ("size_sigma", params.size_sigma),
        ("center_spread", params.center_spread),
        ("cluster_std", params.cluster_std),
    ] {
        check_finite_scalar(what, v)?;
        if v < 0.0 {
            return Err(invalid(what, format!("{v} is negative")));
        }
    }
    let mut sizes = Normals::new(params.seed, 0);
    let mut offsets = Vec::with_capacity(params.clusters + 1);
    offsets.push(0u32);
    let mut total = 0usize;
    for _ in 0..params.clusters {
        let s = (params.median_size * (params.size_sigma * sizes.next()).exp()).round();
        let s = if s.is_finite() && s < MAX_POINTS as f64 { s as usize } else { MAX_POINTS };
        total += s.max(params.min_size);
        if total > MAX_POINTS {
            return Err(Error::TooManyPoints { count: total, max: MAX_POINTS, what: "generated vectors" });
        }
        offsets.push(total as u32);
    }
    let dim = params.dim;
    let mut vectors = vec![0.0f32; total * dim];
    let mut centers = vec![0.0f32; params.clusters * dim];
    let mut slices = Vec::with_capacity(params.clusters);
    let mut rest = vectors.as_mut_slice();
    for w in offsets.windows(2) {
        let (head, tail) = rest.split_at_mut((w[1] - w[0]) as usize * dim);
        slices.push(head);
        rest = tail;
    }
    slices.into_par_iter().zip(centers.par_chunks_mut(dim)).enumerate().for_each(|(c, (members, center))| {
        let mut z = Normals::new(params.seed, c as u64 + 1);
        let mu: Vec<f64> = (0..dim).map(|_| params.center_spread * z.next()).collect();
        for (dst, m) in center.iter_mut().zip(&mu) {
            *dst = *m as f32;
        }
        for row in members.chunks_mut(dim) {
            for (dst, m) in row.iter_mut().zip(&mu) {
                *dst = (m + params.cluster_std * z.next()) as f32;
            }
        }
    });
    Ok(SynthData { dim, vectors, offsets, centers })
}

/// `count` query vectors drawn like members of uniformly chosen clusters of `data`
/// (from their true centres with `cluster_std`), from stream `u64::MAX` of `seed`
/// (none for data without clusters or centres).
pub fn gaussian_queries(data: &SynthData, count: usize, cluster_std: f64, seed: u64) -> Vec<f32> {
    let clusters = data.offsets.len().saturating_sub(1);
    if clusters == 0 || data.centers.len() < clusters * data.dim {
        return Vec::new();
    }
    let mut z = Normals::new(seed, u64::MAX);
    let mut out = Vec::with_capacity(count * data.dim);
    for _ in 0..count {
        let c = z.rng.random_range(0..clusters as u64) as usize;
        for d in 0..data.dim {
            out.push((f64::from(data.centers[c * data.dim + d]) + cluster_std * z.next()) as f32);
        }
    }
    out
}
