//! The sub-structure, scale, Gaussian-potential and diversity families on the GPU
//! ([`orrery_clusters::gpu::cluster_statistics`] and the engines) against the CPU reference,
//! on every available executor: CUDA (`gpu_families::cuda::<case>`; `ORRERY_REQUIRE_CUDA=1`
//! makes a missing device a failure) and wgpu (`gpu_families::wgpu::<case>`, lavapipe in CI;
//! `ORRERY_REQUIRE_WGPU=1`).
//!
//! # What is compared, and why these tolerances
//! The device computes in f32 (with compensated sums), the CPU in f64. Every f64 statistic
//! is compared within a relative [`REL`] (1e-4) *or* an absolute floor of `REL` times its
//! scale: `L` (the largest coordinate magnitude) for lengths, `n L^2` for inertias, 1 for
//! dimensionless values, [`SKEW_FLOOR`] for skews. The floor is needed because several
//! statistics are differences that can be 0 (a skew, `1 - purity`, `b_i - a_i`), where a
//! relative bound means nothing, and because the f32 centroid moves every member distance
//! of a cluster together by about `2^-24 |mu|`.
//!
//! Discrete results cannot have a tolerance, so they are compared where the CPU's own
//! margins make them unambiguous, and the rest is stated:
//! - **Two-means labels** are the comparison of two squared distances. A cluster's labels
//!   must equal the CPU's when, in each of the four assignments (three iterations and the
//!   final one), every member's two CPU distances differ by more than [`MARGIN`] of their
//!   sum; such clusters must then match in every statistic. Clusters closer to a tie are
//!   counted, and allowed to differ (an f32 rounding flips a label, then the iterations
//!   move apart).
//! - **Histograms** (sigma's 256 bins, the diversity's 20) count f32 distances: a pair
//!   within `EDGE` (1e-5 of the histogram's range) of a bin edge may fall into the
//!   neighbouring bin. The totals must equal `M`, and the pairs that moved (half the L1
//!   difference) must not exceed the CPU's pairs that near an edge. **Sigma** then equals
//!   the CPU's within `REL` where the histograms agree and within one bin width `h` (plus
//!   `REL L`) where they do not: the estimate interpolates inside the bin that holds the
//!   lower median, and moving a pair across the edge of that bin moves the estimate by at
//!   most `h`. The CPU's sigma has the same one-bin bound against the exact median.
//! - **Entropy and perplexity** are compared with the CPU where the histograms agree, and
//!   with the f64 entropy of the GPU's own histogram everywhere.
//! - **The potential family** depends on sigma, so it is compared with the CPU's formulas
//!   evaluated at the GPU's sigma (the CPU's `potential_stats` with a `ScaleStats` holding
//!   it). `nearest_cluster` must equal the CPU's unless the CPU's two nearest distances are
//!   within `REL`.

use orrery_clusters::gpu::{
    self, DeviceClusters, GpuCentroidStats, GpuDiversityStats, GpuPotentialStats, GpuScaleStats, GpuSubstructureStats,
};
use orrery_clusters::scale::ScaleStats;
use orrery_clusters::synth::{SynthParams, gaussian_clusters};
use orrery_clusters::{CentroidParams, ClusterStatistics, Clusters, cluster_statistics, potential::potential_stats};
use orrery_core::{Error, GpuExecutor};

use crate::common::{dist, members, pair_distances, sq, synth, two_means_ref};

/// Relative tolerance (and the floors' factor).
const REL: f64 = 1e-4;
/// The skews' absolute floor (dimensionless): a skew divides a third centred moment by
/// the spread cubed, so an error `e` in the values becomes about `3 e / spread`.
const SKEW_FLOOR: f64 = 2e-3;
/// Smallest relative margin `|d_A - d_B| / (d_A + d_B)` of a CPU assignment at which the
/// labels must equal the CPU's (f32 squared distances are within about `dim * 2^-24`).
const MARGIN: f64 = 1e-4;
/// Distance from a bin edge, as a fraction of the histogram's range, within which a pair
/// may be binned differently (f32 distances and f32 edges; about 100 times their rounding).
const EDGE: f64 = 1e-5;

// ---- executors: crate::executors -------------------------------------------------------

// ---- comparisons --------------------------------------------------------------------------

fn near(got: f64, want: f64, floor: f64) -> bool {
    (got.is_nan() && want.is_nan()) || got == want || (got - want).abs() <= REL * want.abs().max(floor)
}

#[track_caller]
fn check(label: &str, what: &str, c: usize, got: f64, want: f64, floor: f64) {
    assert!(near(got, want, floor), "{label}: {what} of cluster {c}: GPU {got}, CPU {want} (floor {floor})");
}

fn length_scale(clusters: &Clusters<'_>) -> f64 {
    clusters.vectors().data().iter().fold(0.0f64, |m, &x| m.max(f64::from(x).abs())).max(f64::MIN_POSITIVE)
}

/// The smallest relative margin of the CPU's four two-means assignments of `xs`.
fn label_margin(xs: &[Vec<f64>]) -> f64 {
    let mut m = f64::INFINITY;
    for iters in 0..=3 {
        let (_, c) = two_means_ref(xs, iters);
        for x in xs {
            let (a, b) = (sq(x, &c[0]), sq(x, &c[1]));
            if a + b > 0.0 {
                m = m.min((a - b).abs() / (a + b));
            }
        }
    }
    m
}

/// Pairs of `d` (the CPU's distances) within `EDGE * range` of an edge `lo + b w`.
fn near_edges(d: &[f64], lo: f64, w: f64, bins: usize, range: f64) -> u64 {
    if w <= 0.0 {
        return 0;
    }
    let eps = EDGE * range.max(f64::MIN_POSITIVE);
    d.iter()
        .filter(|&&x| {
            let q = (x - lo) / w;
            let b = q.round().clamp(1.0, (bins - 1) as f64);
            (x - (lo + b * w)).abs() <= eps
        })
        .count() as u64
}

/// Pairs that moved between two histograms of the same total.
fn moved(a: &[u64], b: &[u64]) -> u64 {
    a.iter().zip(b).map(|(x, y)| x.abs_diff(*y)).sum::<u64>() / 2
}

fn entropy_of(h: &[u64], total: u64) -> (f64, f64) {
    let e: f64 = h
        .iter()
        .filter(|&&b| b > 0)
        .map(|&b| {
            let p = b as f64 / total as f64;
            -p * p.log2()
        })
        .sum();
    ((e / (h.len() as f64).log2()).clamp(0.0, 1.0), e.exp2())
}

/// Every family of `g` (the GPU's) against the CPU's; returns the clusters whose labels were
/// allowed to differ (near ties).
#[allow(clippy::too_many_lines)] // one block per family, in the module docs' order
fn compare(label: &str, clusters: &Clusters<'_>, g: &ClusterStatistics) -> usize {
    let p = CentroidParams::default();
    let cpu = cluster_statistics(clusters, &p).unwrap();
    let l = length_scale(clusters);
    let k = clusters.len();
    let mut ties = 0;
    // Sub-structure.
    let (gs, cs) = (&g.substructure, &cpu.substructure);
    assert_eq!(gs.split.labels.len(), cs.split.labels.len(), "{label}");
    for c in 0..k {
        let n = clusters.size(c);
        if n == 0 {
            for v in [gs.split_inertia[c], gs.inertia_ratio[c], gs.silhouette[c], gs.split_balance[c]] {
                assert!(v.is_nan(), "{label}: empty cluster {c}: {v}");
            }
            assert_eq!(gs.split.sizes[c], [0, 0], "{label}");
            continue;
        }
        let r = clusters.range(c);
        if gs.split.labels[r.clone()] != cs.split.labels[r.clone()] {
            let m = label_margin(&members(clusters, c));
            assert!(m <= MARGIN, "{label}: labels of cluster {c} differ though the CPU's margin is {m}");
            ties += 1;
            continue;
        }
        assert_eq!(gs.split.sizes[c], cs.split.sizes[c], "{label}: sizes of cluster {c}");
        let nl2 = n as f64 * l * l;
        for (what, gv, cv, floor) in [
            ("split inertia", gs.split_inertia[c], cs.split_inertia[c], nl2),
            ("inertia ratio", gs.inertia_ratio[c], cs.inertia_ratio[c], 1.0),
            ("silhouette", gs.silhouette[c], cs.silhouette[c], 1.0),
            ("split balance", gs.split_balance[c], cs.split_balance[c], 1.0),
            ("split separation", gs.split_separation[c], cs.split_separation[c], l),
        ] {
            check(label, what, c, gv, cv, floor);
        }
        for side in 0..2 {
            for (d, (&a, &b)) in gs.split.centroid(c, side).iter().zip(cs.split.centroid(c, side)).enumerate() {
                check(label, "two-means centroid", d, a, b, l);
            }
        }
    }
    // Scale.
    let (gc, cc) = (&g.scale, &cpu.scale);
    assert_eq!(gc.pair_count, cc.pair_count, "{label}");
    for c in 0..k {
        let xs = members(clusters, c);
        let d = pair_distances(&xs);
        let (gh, ch) = (gc.histogram_of(c), cc.histogram_of(c));
        assert_eq!(gh.iter().sum::<u64>(), cc.pair_count[c], "{label}: sigma histogram total of cluster {c}");
        let h = cc.bin_width[c];
        check(label, "bin width", c, gc.bin_width[c], h, l);
        let mv = moved(gh, ch);
        let allowed = near_edges(&d, 0.0, h, 256, 256.0 * h);
        assert!(mv <= allowed, "{label}: {mv} pairs of cluster {c} changed bins, {allowed} lie near an edge");
        let (gsig, csig) = (gc.sigma[c], cc.sigma[c]);
        if mv == 0 {
            check(label, "sigma", c, gsig, csig, l);
        } else {
            assert!((gsig - csig).abs() <= h + REL * l, "{label}: sigma of cluster {c}: GPU {gsig}, CPU {csig}, h {h}");
        }
    }
    // Potential, at the GPU's sigma.
    let at_gpu_sigma = ScaleStats { sigma: gc.sigma.clone(), ..cc.clone() };
    let cp = potential_stats(clusters, &cpu.centroid, &at_gpu_sigma).unwrap();
    let gp = &g.potential;
    for c in 0..k {
        for (what, gv, cv, floor) in [
            ("depth", gp.depth[c], cp.depth[c], 1.0),
            ("curvature", gp.curvature[c], cp.curvature[c], 1.0),
            ("nearest distance", gp.nearest_distance[c], cp.nearest_distance[c], l),
            ("escape probability", gp.escape_probability[c], cp.escape_probability[c], 1.0),
            ("entanglement", gp.entanglement[c], cp.entanglement[c], 1.0),
        ] {
            check(label, what, c, gv, cv, floor);
        }
        if gp.nearest_cluster[c] != cp.nearest_cluster[c] {
            let mu = cpu.centroid.centroid(c);
            let other = cpu.centroid.centroid(gp.nearest_cluster[c] as usize);
            let dd = dist(mu, other);
            assert!(
                (dd - cp.nearest_distance[c]).abs() <= REL * dd.max(l),
                "{label}: nearest cluster of {c}: GPU {} at {dd}, CPU {} at {}",
                gp.nearest_cluster[c],
                cp.nearest_cluster[c],
                cp.nearest_distance[c]
            );
        }
    }
    // Diversity.
    let (gd, cd) = (&g.diversity, &cpu.diversity);
    assert_eq!(gd.pair_count, cd.pair_count, "{label}");
    for c in 0..k {
        for (what, gv, cv, floor) in [
            ("mean distance", gd.mean_distance[c], cd.mean_distance[c], l),
            ("distance std", gd.distance_std[c], cd.distance_std[c], l),
            ("distance skew", gd.distance_skew[c], cd.distance_skew[c], SKEW_FLOOR / REL),
            ("distance cv", gd.distance_cv[c], cd.distance_cv[c], 1.0),
            ("min distance", gd.min_distance[c], cd.min_distance[c], l),
            ("max distance", gd.max_distance[c], cd.max_distance[c], l),
        ] {
            check(label, what, c, gv, cv, floor);
        }
        let total = cd.pair_count[c];
        assert_eq!(gd.histogram[c].iter().sum::<u64>(), total, "{label}: diversity histogram total of cluster {c}");
        if total == 0 {
            check(label, "entropy", c, gd.entropy[c], cd.entropy[c], 1.0);
            check(label, "perplexity", c, gd.perplexity[c], cd.perplexity[c], 1.0);
            continue;
        }
        let d = pair_distances(&members(clusters, c));
        let (lo, hi) = (cd.min_distance[c], cd.max_distance[c]);
        let mv = moved(&gd.histogram[c], &cd.histogram[c]);
        let allowed = near_edges(&d, lo, (hi - lo) / 20.0, 20, hi - lo);
        assert!(mv <= allowed, "{label}: {mv} pairs of cluster {c} changed diversity bins, {allowed} near an edge");
        let (e, p) = entropy_of(&gd.histogram[c], total);
        check(label, "entropy (of the GPU's histogram)", c, gd.entropy[c], e, 1.0);
        check(label, "perplexity (of the GPU's histogram)", c, gd.perplexity[c], p, 1.0);
        if mv == 0 {
            check(label, "entropy", c, gd.entropy[c], cd.entropy[c], 1.0);
        }
    }
    ties
}

fn gpu_all<E: GpuExecutor>(exec: &E, clusters: &Clusters<'_>) -> ClusterStatistics {
    gpu::cluster_statistics(exec, clusters, &CentroidParams::default())
        .unwrap_or_else(|e| panic!("{}: {e}", exec.name()))
}

fn concat(parts: &[&orrery_clusters::synth::SynthData]) -> (Vec<f32>, Vec<u32>) {
    let mut v = Vec::new();
    let mut offsets = vec![0u32];
    for d in parts {
        let base = *offsets.last().unwrap();
        v.extend_from_slice(&d.vectors);
        offsets.extend(d.offsets[1..].iter().map(|o| o + base));
    }
    (v, offsets)
}

// ---- cases ----------------------------------------------------------------------------------

/// Synthetic clusters of varied sizes (1 to a few hundred members) in dimensions below one
/// shared-memory stage (3, 7), of several stages (16, 40) and 130: every family.
pub fn families_match_the_cpu<E: GpuExecutor>(exec: &E) {
    let mut ties = 0;
    for (clusters, dim, median, seed) in
        [(30usize, 3usize, 30.0, 1u64), (20, 7, 60.0, 2), (16, 16, 80.0, 3), (8, 40, 50.0, 4), (5, 130, 40.0, 5)]
    {
        let data = synth(clusters, dim, median, seed);
        let c = data.clusters().unwrap();
        ties += compare(&format!("{} dim {dim}", exec.name()), &c, &gpu_all(exec, &c));
    }
    assert!(ties <= 3, "{ties} clusters had near-tie labels: the data should be far from ties");
}

/// A cluster of 4,200 members (66 tiles: 4,356 tile pairs, two per pairwise item, and 33
/// silhouette row tiles that each walk 66 column tiles) beside clusters of 1 to 3 members
/// and a 700-member one: "no sampling, no caps" on both sides of the item grouping.
pub fn large_and_tiny_clusters_match_the_cpu<E: GpuExecutor>(exec: &E) {
    let big =
        gaussian_clusters(&SynthParams { median_size: 4200.0, size_sigma: 0.0, seed: 7, ..SynthParams::new(1, 3) })
            .unwrap();
    let small =
        gaussian_clusters(&SynthParams { median_size: 2.0, size_sigma: 0.5, seed: 8, ..SynthParams::new(30, 3) })
            .unwrap();
    let mid =
        gaussian_clusters(&SynthParams { median_size: 700.0, size_sigma: 0.0, seed: 9, ..SynthParams::new(1, 3) })
            .unwrap();
    let (v, offsets) = concat(&[&big, &small, &mid]);
    assert!(offsets[1] - offsets[0] == 4200);
    let c = Clusters::new(&v, 3, &offsets).unwrap();
    compare(&format!("{} large", exec.name()), &c, &gpu_all(exec, &c));
}

/// Empty clusters (first, middle, last), one member, identical members, zero vectors, two
/// members: the CPU's sentinels (NaN for empty clusters; sigma 0, depth 1, entanglement 0,
/// entropy 0, perplexity 1, inertia ratio 1 and silhouette 0 for coincident members).
pub fn degenerate_clusters_get_the_sentinels<E: GpuExecutor>(exec: &E) {
    let mut v = vec![0.5f32, -1.0, 2.0, 4.0];
    for _ in 0..4 {
        v.extend([0.1f32, 0.7, -0.3, 1.5]);
    }
    v.extend([0.0f32; 12]);
    v.extend([1.0f32, 1.0, 1.0, 0.0, 2.0, 1.5, 1.0, 0.5]);
    let offsets = [0u32, 0, 1, 5, 5, 8, 10, 10];
    let c = Clusters::new(&v, 4, &offsets).unwrap();
    let g = gpu_all(exec, &c);
    compare(&format!("{} degenerate", exec.name()), &c, &g);
    for e in [0usize, 3, 6] {
        for x in [g.scale.sigma[e], g.potential.depth[e], g.potential.entanglement[e], g.diversity.entropy[e]] {
            assert!(x.is_nan(), "empty cluster {e}: {x}");
        }
        assert_eq!(g.potential.nearest_cluster[e], orrery_clusters::potential::NO_CLUSTER);
    }
    for one in [1usize, 2, 4] {
        assert_eq!(g.scale.sigma[one], 0.0, "sigma of cluster {one}");
        assert_eq!((g.potential.depth[one], g.potential.entanglement[one]), (1.0, 0.0), "cluster {one}");
        assert_eq!((g.diversity.entropy[one], g.diversity.perplexity[one]), (0.0, 1.0), "cluster {one}");
        assert_eq!(g.substructure.silhouette[one], 0.0, "cluster {one}");
    }
    // Two members: one per side, silhouette 0, inertia ratio 0.
    assert_eq!(g.substructure.split.sizes[5], [1, 1]);
    assert_eq!(g.substructure.silhouette[5], 0.0);
    // Every cluster empty: no rows at all.
    let none = Clusters::new(&[], 3, &[0, 0, 0]).unwrap();
    let g = gpu_all(exec, &none);
    assert!(g.scale.sigma.iter().chain(&g.diversity.mean_distance).all(|x| x.is_nan()));
}

/// The engines run again on the same layout with the same bits, and refuse another layout
/// with a typed error.
pub fn engines_are_reusable_and_check_their_layout<E: GpuExecutor>(exec: &E) {
    let data = synth(10, 12, 40.0, 31);
    let clusters = data.clusters().unwrap();
    let device = DeviceClusters::upload(exec, &clusters).unwrap();
    let mut centroid = GpuCentroidStats::new(exec, &device).unwrap();
    centroid.run(exec, &device, &CentroidParams::default()).unwrap();
    let mut sub = GpuSubstructureStats::new(exec, &device).unwrap();
    let mut scale = GpuScaleStats::new(exec, &device).unwrap();
    let mut pot = GpuPotentialStats::new(exec, &device).unwrap();
    let mut div = GpuDiversityStats::new(exec, &device).unwrap();
    let mut once = || {
        sub.run(exec, &device, &centroid).unwrap();
        scale.run(exec, &device, &centroid).unwrap();
        pot.run(exec, &device, &centroid, &scale).unwrap();
        div.run(exec, &device).unwrap();
        format!(
            "{:?}{:?}{:?}{:?}",
            sub.download(exec).unwrap(),
            scale.download(exec).unwrap(),
            pot.download(exec).unwrap(),
            div.download(exec).unwrap()
        )
    };
    let first = once();
    assert_eq!(first, once(), "deterministic run to run");
    let other = synth(4, 12, 40.0, 32);
    let other_dev = DeviceClusters::upload(exec, &other.clusters().unwrap()).unwrap();
    assert!(matches!(sub.run(exec, &other_dev, &centroid), Err(Error::LengthMismatch { .. })));
    assert!(matches!(scale.run(exec, &other_dev, &centroid), Err(Error::LengthMismatch { .. })));
    assert!(matches!(div.run(exec, &other_dev), Err(Error::LengthMismatch { .. })));
    let mut other_centroid = GpuCentroidStats::new(exec, &other_dev).unwrap();
    other_centroid.run(exec, &other_dev, &CentroidParams::default()).unwrap();
    assert!(matches!(scale.run(exec, &device, &other_centroid), Err(Error::LengthMismatch { .. })));
    assert!(matches!(pot.run(exec, &device, &other_centroid, &scale), Err(Error::LengthMismatch { .. })));
}

crate::executors::gpu_cases!(
    families_match_the_cpu,
    large_and_tiny_clusters_match_the_cpu,
    degenerate_clusters_get_the_sentinels,
    engines_are_reusable_and_check_their_layout,
);
