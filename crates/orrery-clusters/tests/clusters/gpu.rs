//! The GPU passes ([`orrery_clusters::gpu`]) against the CPU reference, on every available
//! executor: CUDA (`gpu::cuda::<case>`) when a device is present (`ORRERY_REQUIRE_CUDA=1`
//! makes a missing device a failure) and wgpu (`gpu::wgpu::<case>`, lavapipe in CI;
//! `ORRERY_REQUIRE_WGPU=1` makes a missing adapter a failure). Skips are reported with
//! `orrery_core::skip::report`. Plus the NVRTC compile of the CUDA modules
//! (`gpu::kernels_compile_with_nvrtc_for_sm_90`, libnvrtc only; `ORRERY_REQUIRE_NVRTC=1`).
//!
//! # What is compared
//! - **Centroid family** (CUDA and wgpu; f32 on the device, f64 on the CPU): every f64
//!   field within a relative [`REL`] (1e-4) *or* an absolute floor of `REL` times the
//!   field's scale: `L` for lengths (the largest coordinate magnitude of the data), `n L^2`
//!   for a cluster's inertia, 1 for the dimensionless fields, [`SKEW_FLOOR`] for the skew.
//!   Why a floor: the f32 centroid is off by about `u |mu|` per coordinate (u = 2^-24),
//!   which moves every `r_i` of a cluster by up to that much at once, and several fields
//!   are differences that can be 0 (a centroid coordinate, the offset of a cluster at the
//!   global centroid, the skew of a symmetric set): there a relative bound means nothing.
//!   The skew's floor is larger because it divides the third centred moment by the
//!   spread cubed: an error of `e` in the `r_i` becomes about `3 e / spread`. Observed on
//!   lavapipe (2026-12): every field within 1e-3 of its budget (errors near 1e-7 relative),
//!   the skew within 2e-6 absolute on a 20,000-member cluster.
//!   Counts (outlier ratio, core fraction) may differ from the CPU's by the members whose
//!   CPU distance lies within `REL * L` of the CPU's threshold, and the core-periphery
//!   ratio is compared only where the core counts agree. NaN must be NaN (empty clusters).
//! - **Exact k-NN** (CUDA; wgpu returns `Error::Unsupported`): rows *and* f64 scores equal
//!   to the CPU's `exact_search` with `==` (the device rescores in the CPU's order with
//!   correctly rounded f64 operations), ties by row included.

use orrery_clusters::gpu::{self, DeviceClusters, DeviceVectors, GpuCentroidStats, GpuExactSearch, Strategy};
use orrery_clusters::synth::{SynthParams, gaussian_clusters, gaussian_queries};
use orrery_clusters::{CentroidParams, CentroidStats, Clusters, Metric, NO_ROW, Vectors, centroid_stats, exact_search};
use orrery_core::{Error, GpuExecutor};

use crate::common::synth;

/// Relative tolerance of the statistics (and the floor's factor).
const REL: f64 = 1e-4;
/// The skew's absolute floor (dimensionless; see the module docs).
const SKEW_FLOOR: f64 = 1e-3;

// ---- executors: crate::executors -------------------------------------------------------

fn is_cuda<E: GpuExecutor>(exec: &E) -> bool {
    exec.kind() == orrery_core::ExecutorKind::Cuda
}

// ---- the centroid family ------------------------------------------------------------------

/// `|got - want| <= REL * max(|want|, floor)`, or both NaN.
fn near(got: f64, want: f64, floor: f64) -> bool {
    (got.is_nan() && want.is_nan()) || got == want || (got - want).abs() <= REL * want.abs().max(floor)
}

#[track_caller]
fn check(label: &str, what: &str, c: usize, got: f64, want: f64, floor: f64) {
    assert!(near(got, want, floor), "{label}: {what} of cluster {c}: GPU {got}, CPU {want} (floor {floor})");
}

/// The largest coordinate magnitude (the length scale of the floors).
fn length_scale(clusters: &Clusters<'_>) -> f64 {
    clusters.vectors().data().iter().fold(0.0f64, |m, &x| m.max(f64::from(x).abs())).max(f64::MIN_POSITIVE)
}

/// Members of cluster `c` whose CPU distance is within the floor of `threshold`.
fn ambiguous(cpu: &CentroidStats, clusters: &Clusters<'_>, c: usize, threshold: f64, l: f64) -> usize {
    clusters.range(c).filter(|&i| (cpu.member_distance[i] - threshold).abs() <= REL * threshold.abs().max(l)).count()
}

/// The GPU's centroid family of `clusters` against the CPU's (see the module docs).
fn compare_centroid(label: &str, clusters: &Clusters<'_>, params: &CentroidParams, gpu: &CentroidStats) {
    let cpu = centroid_stats(clusters, params).unwrap();
    let l = length_scale(clusters);
    let dim = clusters.dim();
    assert_eq!((gpu.dim, &gpu.size), (cpu.dim, &cpu.size), "{label}");
    assert_eq!(gpu.centroids.len(), cpu.centroids.len(), "{label}");
    for (i, (&g, &w)) in gpu.centroids.iter().zip(&cpu.centroids).enumerate() {
        check(label, "centroid coordinate", i / dim, g, w, l);
    }
    for (d, (&g, &w)) in gpu.global_centroid.iter().zip(&cpu.global_centroid).enumerate() {
        check(label, "global centroid coordinate", d, g, w, l);
    }
    check(label, "global rms radius", 0, gpu.global_rms_radius, cpu.global_rms_radius, l);
    assert_eq!(gpu.member_distance.len(), cpu.member_distance.len(), "{label}");
    for c in 0..clusters.len() {
        for i in clusters.range(c) {
            check(label, "member distance", c, gpu.member_distance[i], cpu.member_distance[i], l);
        }
        let n = cpu.size[c] as f64;
        for (what, g, w, floor) in [
            ("cohesion", gpu.cohesion[c], cpu.cohesion[c], l),
            ("inertia", gpu.inertia[c], cpu.inertia[c], n * l * l),
            ("rms radius", gpu.rms_radius[c], cpu.rms_radius[c], l),
            ("spread", gpu.spread[c], cpu.spread[c], l),
            ("skew", gpu.skew[c], cpu.skew[c], SKEW_FLOOR / REL),
            ("min radius", gpu.min_radius[c], cpu.min_radius[c], l),
            ("max radius", gpu.max_radius[c], cpu.max_radius[c], l),
            ("mean norm", gpu.mean_norm[c], cpu.mean_norm[c], l),
            ("embedding quality", gpu.embedding_quality[c], cpu.embedding_quality[c], 1.0),
            ("centroid offset", gpu.centroid_offset[c], cpu.centroid_offset[c], l),
            ("novelty", gpu.novelty[c], cpu.novelty[c], 1.0),
        ] {
            check(label, what, c, g, w, floor);
        }
        if cpu.size[c] == 0 {
            for v in [gpu.outlier_ratio[c], gpu.core_fraction[c], gpu.core_periphery_ratio[c]] {
                assert!(v.is_nan(), "{label}: cluster {c} is empty but has {v}");
            }
            continue;
        }
        let out_t = cpu.cohesion[c] + params.outlier_sigmas * cpu.spread[c];
        let core_t = params.core_scale * cpu.cohesion[c];
        let d_out = ((gpu.outlier_ratio[c] - cpu.outlier_ratio[c]) * n).round().abs() as usize;
        let d_core = ((gpu.core_fraction[c] - cpu.core_fraction[c]) * n).round().abs() as usize;
        assert!(
            d_out <= ambiguous(&cpu, clusters, c, out_t, l),
            "{label}: outlier ratio of cluster {c}: GPU {}, CPU {}",
            gpu.outlier_ratio[c],
            cpu.outlier_ratio[c]
        );
        assert!(
            d_core <= ambiguous(&cpu, clusters, c, core_t, l),
            "{label}: core fraction of cluster {c}: GPU {}, CPU {}",
            gpu.core_fraction[c],
            cpu.core_fraction[c]
        );
        if d_core == 0 {
            check(label, "core-periphery ratio", c, gpu.core_periphery_ratio[c], cpu.core_periphery_ratio[c], 1.0);
        }
    }
}

/// The GPU run through the reusable engine (upload, run, download).
fn gpu_centroid<E: GpuExecutor>(exec: &E, clusters: &Clusters<'_>, params: &CentroidParams) -> CentroidStats {
    gpu::centroid_stats(exec, clusters, params).unwrap_or_else(|e| panic!("{}: {e}", exec.name()))
}

fn synth_with(clusters: usize, dim: usize, median: f64, sigma: f64, seed: u64) -> orrery_clusters::synth::SynthData {
    gaussian_clusters(&SynthParams { median_size: median, size_sigma: sigma, seed, ..SynthParams::new(clusters, dim) })
        .unwrap()
}

// ---- cases: the centroid family (generic over the executor) -------------------------------

/// Synthetic clusters of varied sizes, in dimensions that take the float4 path (8, 64) and
/// the scalar path (7, 13), with default and other thresholds.
pub fn centroid_family_matches_the_cpu<E: GpuExecutor>(exec: &E) {
    for (dim, seed) in [(8usize, 1u64), (7, 2), (13, 3), (64, 4)] {
        let data = synth(25, dim, 60.0, seed);
        let clusters = data.clusters().unwrap();
        for params in [CentroidParams::default(), CentroidParams { outlier_sigmas: 1.0, core_scale: 0.8 }] {
            let label = format!("{} dim {dim} {params:?}", exec.name());
            compare_centroid(&label, &clusters, &params, &gpu_centroid(exec, &clusters, &params));
        }
    }
}

/// Dimensions past one column slab (256 float4 columns, or 256 scalar columns): 1028 and
/// 257; one dimension.
pub fn wide_and_narrow_vectors_match_the_cpu<E: GpuExecutor>(exec: &E) {
    for (dim, clusters) in [(1028usize, 6usize), (257, 6), (1, 30), (4, 30)] {
        let data = synth_with(clusters, dim, 40.0, 0.8, dim as u64);
        let c = data.clusters().unwrap();
        let p = CentroidParams::default();
        compare_centroid(&format!("{} dim {dim}", exec.name()), &c, &p, &gpu_centroid(exec, &c, &p));
    }
}

/// Clusters of many chunks (a chunk is 128 members): 300, 1,000 and 20,000 members (157
/// chunks: more than the 128 threads of the moments merge), beside clusters of 1 to 3.
pub fn large_clusters_match_the_cpu<E: GpuExecutor>(exec: &E) {
    let big = gaussian_clusters(&SynthParams {
        median_size: 20_000.0,
        size_sigma: 0.0,
        cluster_std: 0.3,
        seed: 9,
        ..SynthParams::new(1, 6)
    })
    .unwrap();
    let small = synth_with(40, 6, 2.0, 0.5, 10);
    let mid = synth_with(2, 6, 650.0, 0.6, 11);
    let mut v = big.vectors.clone();
    let mut offsets = big.offsets.clone();
    for d in [&small, &mid] {
        let base = *offsets.last().unwrap();
        v.extend_from_slice(&d.vectors);
        offsets.extend(d.offsets[1..].iter().map(|o| o + base));
    }
    let c = Clusters::new(&v, 6, &offsets).unwrap();
    assert!(offsets.windows(2).any(|w| w[1] - w[0] >= 20_000) && offsets.windows(2).any(|w| w[1] - w[0] == 1));
    let p = CentroidParams { outlier_sigmas: 2.0, core_scale: 1.0 };
    compare_centroid(&format!("{} large", exec.name()), &c, &p, &gpu_centroid(exec, &c, &p));
}

/// Empty clusters (first, middle, last), one member, identical members, zero vectors: the
/// CPU's sentinels (NaN for empty clusters; spread, skew 0 for equal members).
pub fn degenerate_clusters_get_the_sentinels<E: GpuExecutor>(exec: &E) {
    let mut v = vec![0.5f32, -1.0, 2.0, 4.0];
    for _ in 0..4 {
        v.extend([0.1f32, 0.7, -0.3, 1.5]);
    }
    v.extend([0.0f32; 12]);
    v.extend([1.0f32, 1.0, 1.0, 0.0, 2.0, 1.5, 1.0, 0.5, 1.2, 0.1, 3.0, 0.0, 0.0, 2.0, 2.0, 1.0]);
    let offsets = [0u32, 0, 1, 5, 5, 8, 12, 12];
    let c = Clusters::new(&v, 4, &offsets).unwrap();
    let p = CentroidParams::default();
    let g = gpu_centroid(exec, &c, &p);
    compare_centroid(&format!("{} degenerate", exec.name()), &c, &p, &g);
    for e in [0usize, 3, 6] {
        assert_eq!(g.size[e], 0);
        assert!(g.centroid(e).iter().all(|x| x.is_nan()), "empty cluster {e}'s centroid");
        for x in [g.cohesion[e], g.inertia[e], g.spread[e], g.skew[e], g.mean_norm[e], g.novelty[e], g.outlier_ratio[e]]
        {
            assert!(x.is_nan(), "empty cluster {e}: {x}");
        }
    }
    // One member (cluster 1), identical members (2), zero vectors (4).
    for one in [1usize, 2, 4] {
        assert_eq!((g.spread[one], g.skew[one], g.outlier_ratio[one]), (0.0, 0.0, 0.0), "cluster {one}");
        assert_eq!((g.core_fraction[one], g.core_periphery_ratio[one]), (1.0, 1.0), "cluster {one}");
    }
    assert_eq!((g.cohesion[4], g.embedding_quality[4], g.mean_norm[4]), (0.0, 0.0, 0.0));
    // Every cluster empty: no rows at all.
    let none = Clusters::new(&[], 3, &[0, 0, 0]).unwrap();
    let g = gpu_centroid(exec, &none, &p);
    assert!(g.global_rms_radius.is_nan() && g.global_centroid.iter().all(|x| x.is_nan()));
    assert!(g.cohesion.iter().all(|x| x.is_nan()) && g.member_distance.is_empty());
}

/// The engine runs again on the same layout with other thresholds, gives the same bits
/// run to run, and refuses another layout and bad thresholds with typed errors.
pub fn the_engine_is_reusable_and_checks_its_input<E: GpuExecutor>(exec: &E) {
    let data = synth(12, 16, 30.0, 21);
    let clusters = data.clusters().unwrap();
    let device = DeviceClusters::upload(exec, &clusters).unwrap();
    let mut engine = GpuCentroidStats::new(exec, &device).unwrap();
    let p = CentroidParams::default();
    engine.run(exec, &device, &p).unwrap();
    let first = engine.download(exec).unwrap();
    engine.run(exec, &device, &p).unwrap();
    let again = engine.download(exec).unwrap();
    assert_eq!(format!("{first:?}"), format!("{again:?}"), "deterministic run to run");
    let q = CentroidParams { outlier_sigmas: 0.5, core_scale: 1.2 };
    engine.run(exec, &device, &q).unwrap();
    compare_centroid("engine rerun", &clusters, &q, &engine.download(exec).unwrap());

    let bad = [
        CentroidParams { outlier_sigmas: f64::NAN, core_scale: 1.0 },
        CentroidParams { outlier_sigmas: 1.0, core_scale: -1.0 },
    ];
    assert!(matches!(engine.run(exec, &device, &bad[0]), Err(Error::NonFiniteValue { .. })));
    assert!(matches!(engine.run(exec, &device, &bad[1]), Err(Error::InvalidArgument { .. })));
    let other = synth(5, 16, 30.0, 22);
    let other_dev = DeviceClusters::upload(exec, &other.clusters().unwrap()).unwrap();
    assert!(matches!(engine.run(exec, &other_dev, &p), Err(Error::LengthMismatch { .. })));

    // Device input checks.
    let buf = exec.upload(&[1.0f32; 10]).unwrap();
    assert!(matches!(DeviceVectors::<E>::from_buffer(buf, 3), Err(Error::LengthMismatch { .. })));
    let buf = exec.upload(&[1.0f32; 12]).unwrap();
    assert!(matches!(DeviceVectors::<E>::from_buffer(buf, 0), Err(Error::InvalidArgument { .. })));
    let buf = exec.upload(&[1.0f32; 12]).unwrap();
    let vectors = DeviceVectors::<E>::from_buffer(buf, 3).unwrap();
    assert_eq!(vectors.len(), 4);
    assert!(matches!(DeviceClusters::from_vectors(exec, vectors, &[0, 2, 3]), Err(Error::LengthMismatch { .. })));
    let buf = exec.upload(&[1.0f32; 12]).unwrap();
    let vectors = DeviceVectors::<E>::from_buffer(buf, 3).unwrap();
    assert!(matches!(DeviceClusters::from_vectors(exec, vectors, &[0, 3, 2, 4]), Err(Error::InvalidArgument { .. })));
    let buf = exec.upload(&[1.0f32; 12]).unwrap();
    let vectors = DeviceVectors::<E>::from_buffer(buf, 3).unwrap();
    assert!(matches!(DeviceClusters::from_vectors(exec, vectors, &[0]), Err(Error::EmptyInput { .. })));
}

// ---- cases: exact k-NN --------------------------------------------------------------------

/// The GPU result equals the CPU's exactly (rows and f64 scores).
#[track_caller]
fn assert_same(label: &str, gpu: &orrery_clusters::Neighbors, cpu: &orrery_clusters::Neighbors) {
    assert_eq!((gpu.k, gpu.len()), (cpu.k, cpu.len()), "{label}");
    for q in 0..cpu.len() {
        assert_eq!(gpu.rows_of(q), cpu.rows_of(q), "{label}: rows of query {q}");
        let (g, c) = (gpu.scores_of(q), cpu.scores_of(q));
        assert!(
            g.iter().zip(c).all(|(a, b)| a.to_bits() == b.to_bits()),
            "{label}: scores of query {q}: GPU {g:?}, CPU {c:?}"
        );
    }
}

/// One search on the GPU (through the reusable engine) against the CPU.
fn check_search<E: GpuExecutor>(
    exec: &E,
    label: &str,
    db: &Vectors<'_>,
    q: &Vectors<'_>,
    k: usize,
    metric: Metric,
) -> [usize; 2] {
    let cpu = exact_search(db, q, k, metric).unwrap();
    let d = DeviceVectors::upload(exec, db).unwrap();
    let dq = DeviceVectors::upload(exec, q).unwrap();
    let mut flagged = [0; 2];
    for (i, strategy) in [Strategy::Threshold, Strategy::Lists].into_iter().enumerate() {
        let mut s = GpuExactSearch::new(exec, &d).unwrap().with_strategy(strategy);
        let label = format!("{label} ({strategy:?})");
        let got = s.search(exec, &d, &dq, k, metric).unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_same(&label, &got, &cpu);
        flagged[i] = s.fallback_queries();
    }
    flagged
}

/// Synthetic clusters (float4 dims 12 and 128, scalar dim 13), many database splits,
/// query counts around the 128-query tile, k = 1, 10, 128, both metrics.
pub fn exact_search_equals_the_cpu<E: GpuExecutor>(exec: &E) {
    if !is_cuda(exec) {
        return;
    }
    for (dim, clusters, median, nq) in [(12usize, 60usize, 300.0, 37usize), (13, 40, 200.0, 130), (128, 20, 400.0, 300)]
    {
        let data = synth_with(clusters, dim, median, 0.7, dim as u64 + 100);
        let db = data.vectors().unwrap();
        let qv = gaussian_queries(&data, nq, 0.2, 5);
        let q = Vectors::new(&qv, dim).unwrap();
        for k in [1usize, 10, 128] {
            for metric in [Metric::L2, Metric::InnerProduct] {
                let label = format!("dim {dim}, {} rows, {nq} queries, k {k}, {metric:?}", db.len());
                let flagged = check_search(exec, &label, &db, &q, k, metric);
                assert_eq!(flagged, [0, 0], "{label}: continuous data should need no exact path");
            }
        }
    }
}

/// More queries than one batch (8,192) over databases above and below the candidate cap,
/// a database smaller than `k`, a one-row database, no queries at all.
pub fn batches_small_databases_and_no_queries<E: GpuExecutor>(exec: &E) {
    if !is_cuda(exec) {
        return;
    }
    // More rows than the candidate cap (4,096): the threshold path samples, per batch.
    let data = synth_with(12, 8, 500.0, 0.5, 40);
    let db = data.vectors().unwrap();
    assert!(db.len() > gpu::knn::CANDIDATE_CAP, "{} rows", db.len());
    let qv = gaussian_queries(&data, 8200, 0.5, 6);
    let q = Vectors::new(&qv, 8).unwrap();
    check_search(exec, "8200 queries", &db, &q, 7, Metric::L2);
    // Fewer rows than the cap: no sample, every row a candidate.
    let small = Vectors::new(&data.vectors[..300 * 8], 8).unwrap();
    check_search(exec, "8200 queries, 300 rows", &small, &q, 7, Metric::InnerProduct);
    let tiny = Vectors::new(&data.vectors[..5 * 8], 8).unwrap();
    let few = Vectors::new(&qv[..3 * 8], 8).unwrap();
    for metric in [Metric::L2, Metric::InnerProduct] {
        check_search(exec, "5 rows, k 10", &tiny, &few, 10, metric);
        let one = Vectors::new(&data.vectors[..8], 8).unwrap();
        check_search(exec, "1 row, k 128", &one, &few, 128, metric);
    }
    let got = gpu::exact_search(exec, &tiny, &Vectors::new(&[], 8).unwrap(), 4, Metric::L2).unwrap();
    assert!(got.is_empty() && got.k == 4);
    let got = gpu::exact_search(exec, &tiny, &few, 10, Metric::L2).unwrap();
    assert_eq!(&got.rows_of(0)[5..], &[NO_ROW; 5]);
    assert!(got.scores_of(0)[5..].iter().all(|s| *s == f64::INFINITY));
}

/// Integer points (every score exact, so ties are exact): rows equal the CPU's, ties by
/// ascending row; thousands of copies of one vector make every screen list end inside the
/// band, so the queries take the exact path, with the same result.
pub fn ties_break_on_ascending_row_and_massive_ties_take_the_exact_path<E: GpuExecutor>(exec: &E) {
    if !is_cuda(exec) {
        return;
    }
    let mut v = Vec::new();
    for _copy in 0..3 {
        for x in 0..7 {
            for y in 0..5 {
                v.extend([x as f32, y as f32, 0.0, 1.0]);
            }
        }
    }
    let db = Vectors::new(&v, 4).unwrap();
    let qv = [3.0f32, 2.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 3.5, 2.5, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0];
    let q = Vectors::new(&qv, 4).unwrap();
    for metric in [Metric::L2, Metric::InnerProduct] {
        for k in [1usize, 4, 13, 50, 105, 128] {
            check_search(exec, &format!("lattice k {k} {metric:?}"), &db, &q, k, metric);
        }
    }
    // 5,000 copies of one row among 3,000 distinct ones, the copies nearest to both queries
    // (L2: copies of the first query; inner product: copies of the row of largest x): more
    // exact ties than any split list (Lists) or the candidate cap (Threshold) holds, so
    // both strategies must take the exact path.
    for (metric, copy_x) in [(Metric::L2, 1.0f32), (Metric::InnerProduct, 30.0)] {
        let mut w = Vec::new();
        for i in 0..8000u32 {
            let x = if i % 8 < 5 { copy_x } else { (i % 97) as f32 * 0.25 + 3.0 };
            w.extend([x, 2.0, -1.0]);
        }
        let db = Vectors::new(&w, 3).unwrap();
        let q = Vectors::new(&[1.0f32, 2.0, -1.0, 1.1, 2.0, -1.0], 3).unwrap();
        let flagged = check_search(exec, &format!("duplicates {metric:?}"), &db, &q, 10, metric);
        assert!(flagged.iter().all(|&f| f > 0), "duplicates {metric:?}: the exact path should have run: {flagged:?}");
    }
}

/// Typed errors: k outside 1..=128, dimensions that differ, an empty database, another
/// database than the engine's; wgpu has no exact search (Unsupported).
pub fn exact_search_errors_are_typed<E: GpuExecutor>(exec: &E) {
    let data = synth(4, 6, 20.0, 3);
    let db = data.vectors().unwrap();
    let q = Vectors::new(&data.vectors[..12], 6).unwrap();
    if !is_cuda(exec) {
        let r = gpu::exact_search(exec, &db, &q, 3, Metric::L2);
        assert!(matches!(r, Err(Error::Unsupported { .. })), "{r:?}");
        let d = DeviceVectors::upload(exec, &db).unwrap();
        assert!(matches!(GpuExactSearch::new(exec, &d), Err(Error::Unsupported { .. })));
        return;
    }
    for k in [0usize, 129] {
        let r = gpu::exact_search(exec, &db, &q, k, Metric::L2);
        assert!(matches!(r, Err(Error::InvalidArgument { what: "k", .. })), "k {k}: {r:?}");
    }
    let q5 = Vectors::new(&data.vectors[..10], 5).unwrap();
    let r = gpu::exact_search(exec, &db, &q5, 3, Metric::L2);
    assert!(matches!(r, Err(Error::LengthMismatch { what: "query dimension", .. })), "{r:?}");
    let empty = Vectors::new(&[], 6).unwrap();
    assert!(matches!(gpu::exact_search(exec, &empty, &q, 3, Metric::L2), Err(Error::EmptyInput { .. })));
    let d = DeviceVectors::upload(exec, &db).unwrap();
    let dq = DeviceVectors::upload(exec, &q).unwrap();
    let mut s = GpuExactSearch::new(exec, &d).unwrap();
    let other = DeviceVectors::upload(exec, &Vectors::new(&data.vectors[..60], 6).unwrap()).unwrap();
    assert!(matches!(s.search(exec, &other, &dq, 3, Metric::L2), Err(Error::LengthMismatch { .. })));
    assert!(matches!(s.search(exec, &d, &dq, 200, Metric::L2), Err(Error::InvalidArgument { .. })));
}

crate::executors::gpu_cases!(
    centroid_family_matches_the_cpu,
    wide_and_narrow_vectors_match_the_cpu,
    large_clusters_match_the_cpu,
    degenerate_clusters_get_the_sentinels,
    the_engine_is_reusable_and_checks_its_input,
    exact_search_equals_the_cpu,
    batches_small_databases_and_no_queries,
    ties_break_on_ascending_row_and_massive_ties_take_the_exact_path,
    exact_search_errors_are_typed,
);

/// Every entry point of both modules compiles for sm_90 with NVRTC alone (PTX for
/// compute_90 and a CUBIN through ptxas) with nothing in local memory.
#[test]
fn kernels_compile_with_nvrtc_for_sm_90() {
    use orrery_backend_cuda::{check_nvrtc, compile_module_to_cubin, compile_module_to_ptx};
    if let Err(e) = check_nvrtc() {
        let required =
            ["ORRERY_REQUIRE_NVRTC", "ORRERY_REQUIRE_CUDA"].iter().any(|k| std::env::var(k).is_ok_and(|v| v == "1"));
        assert!(!required, "NVRTC is required but unavailable: {e}");
        orrery_core::skip::report("clusters NVRTC compile", &e.to_string());
        return;
    }
    for module in &gpu::KERNEL_MODULES {
        let ptx = compile_module_to_ptx(module, "compute_90").unwrap_or_else(|e| panic!("{}: {e}", module.name));
        let entries = gpu::KERNEL_ENTRIES.iter().find(|(m, _)| *m == module.name).unwrap().1;
        for entry in entries {
            assert!(ptx.contains(&format!(".entry {entry}(")), "{}: no entry {entry}", module.name);
        }
        assert!(!ptx.contains(".local"), "{}: nothing in local memory", module.name);
        let cubin = compile_module_to_cubin(module, "sm_90").unwrap_or_else(|e| panic!("{}: {e}", module.name));
        assert!(cubin.starts_with(b"\x7fELF"));
    }
}
