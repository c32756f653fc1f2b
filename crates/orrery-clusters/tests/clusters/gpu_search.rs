//! The inverted file and the lattice on the GPU ([`orrery_clusters::gpu::ivf`],
//! [`orrery_clusters::gpu::lattice`]) against the CPU, on every available executor (CUDA:
//! `gpu_search::cuda::<case>`, wgpu: `gpu_search::wgpu::<case>`; skips are reported as in
//! `gpu`).
//!
//! # What is compared
//! Everything with `==` on the bits: the device computes every key in f64 in the CPU's
//! order with correctly rounded operations, and every reduction in the CPU's order.
//! - **Training**: the centroids, the list offsets and the list rows of
//!   [`GpuIvfIndex::build`] equal [`IvfIndex::build`]'s, over one and several seeding
//!   blocks (4,096 rows), with more lists than distinct rows (uniform draws, empty lists).
//! - **Search**: rows and f64 scores of the IVF and lattice searches equal the CPU's at
//!   k = 1, 10, 128, `nprobe` from 1 to all lists, both metrics, more queries than one
//!   batch (4,096), `nprobe` beyond the device top-k (1,024: the host selection), and
//!   clusters longer than one list segment (2,048 rows) and one member chunk (4,096).
//! - **Fused**: the neighbours byte-identical to the unfused search, the side buffer and
//!   its scored / cohesion / inertia equal the CPU's fused search.
//! - wgpu: every entry point returns `Error::Unsupported` (WGSL has no f64).

use orrery_clusters::gpu::{DeviceClusters, DeviceVectors, GpuIvfIndex, GpuLatticeIndex, ivf_build};
use orrery_clusters::synth::{SynthParams, gaussian_clusters, gaussian_queries};
use orrery_clusters::{IvfIndex, IvfParams, LatticeIndex, Metric, Neighbors, Vectors};
use orrery_core::{Error, GpuExecutor};

use crate::common::synth;

fn is_cuda<E: GpuExecutor>(exec: &E) -> bool {
    exec.kind() == orrery_core::ExecutorKind::Cuda
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Rows and scores equal, bit for bit.
#[track_caller]
fn assert_same(label: &str, gpu: &Neighbors, cpu: &Neighbors) {
    assert_eq!((gpu.k, gpu.len()), (cpu.k, cpu.len()), "{label}");
    for q in 0..cpu.len() {
        assert_eq!(gpu.rows_of(q), cpu.rows_of(q), "{label}: rows of query {q}");
        assert_eq!(bits(gpu.scores_of(q)), bits(cpu.scores_of(q)), "{label}: scores of query {q}");
    }
}

fn data_with(clusters: usize, dim: usize, median: f64, std: f64, seed: u64) -> orrery_clusters::synth::SynthData {
    gaussian_clusters(&SynthParams {
        median_size: median,
        size_sigma: 0.7,
        cluster_std: std,
        seed,
        ..SynthParams::new(clusters, dim)
    })
    .unwrap()
}

/// The GPU index against the CPU's: centroids, offsets and rows.
fn check_training<E: GpuExecutor>(exec: &E, label: &str, v: &Vectors<'_>, p: &IvfParams) -> (IvfIndex, GpuIvfIndex<E>) {
    let cpu = IvfIndex::build(v, p).unwrap();
    let gpu = ivf_build(exec, v, p).unwrap_or_else(|e| panic!("{label}: {e}"));
    assert_eq!((gpu.nlist(), gpu.len(), gpu.dim()), (cpu.nlist(), cpu.len(), cpu.dim()), "{label}");
    assert_eq!(bits(&gpu.centroids(exec).unwrap()), bits(cpu.centroids()), "{label}: centroids");
    assert_eq!(gpu.list_offsets(), cpu.list_offsets(), "{label}: list offsets");
    assert_eq!(gpu.list_rows(exec).unwrap(), cpu.list_rows(), "{label}: list rows");
    (cpu, gpu)
}

// ---- cases ------------------------------------------------------------------------------------

/// Training over dims 8 (vector loads), 13 (a partial lane group) and 32; one seeding block
/// and three; more lists than distinct rows.
pub fn ivf_training_equals_the_cpu<E: GpuExecutor>(exec: &E) {
    if !is_cuda(exec) {
        return;
    }
    for (clusters, dim, median, nlist, iterations, seed) in
        [(12usize, 8usize, 150.0, 20usize, 5usize, 1u64), (20, 13, 400.0, 37, 3, 2), (6, 32, 90.0, 64, 10, 3)]
    {
        let data = data_with(clusters, dim, median, 0.3, seed + 10);
        let v = data.vectors().unwrap();
        let label = format!("{} rows x {dim}, nlist {nlist}", v.len());
        check_training(exec, &label, &v, &IvfParams { nlist, iterations, seed });
    }
    // Two distinct rows, five lists: the later draws are uniform (every D^2 is 0) and some
    // lists stay empty through every Lloyd iteration.
    let dup: Vec<f32> = (0..40).flat_map(|i| if i % 2 == 0 { [1.0f32, 2.0, 3.0] } else { [4.0, 5.0, 6.0] }).collect();
    let v = Vectors::new(&dup, 3).unwrap();
    check_training(exec, "duplicates", &v, &IvfParams { nlist: 5, iterations: 4, seed: 9 });
}

/// Searches of a trained index: k, nprobe and both metrics, 4,100 queries (two batches).
pub fn ivf_search_equals_the_cpu<E: GpuExecutor>(exec: &E) {
    if !is_cuda(exec) {
        return;
    }
    let data = data_with(30, 12, 120.0, 0.5, 21);
    let v = data.vectors().unwrap();
    let (cpu, mut gpu) = check_training(exec, "search index", &v, &IvfParams { nlist: 40, iterations: 6, seed: 4 });
    let qv = gaussian_queries(&data, 4100, 0.5, 3);
    let q = Vectors::new(&qv, 12).unwrap();
    let dq = DeviceVectors::upload(exec, &q).unwrap();
    let few = Vectors::new(&qv[..77 * 12], 12).unwrap();
    let dfew = DeviceVectors::upload(exec, &few).unwrap();
    for metric in [Metric::L2, Metric::InnerProduct] {
        for (k, nprobe) in [(1usize, 1usize), (10, 3), (128, 7), (10, 40)] {
            let label = format!("77 queries, k {k}, nprobe {nprobe}, {metric:?}");
            let got = gpu.search(exec, &dfew, k, nprobe, metric).unwrap_or_else(|e| panic!("{label}: {e}"));
            assert_same(&label, &got, &cpu.search(&few, k, nprobe, metric).unwrap());
        }
        let label = format!("4100 queries, k 10, nprobe 2, {metric:?}");
        assert_same(&label, &gpu.search(exec, &dq, 10, 2, metric).unwrap(), &cpu.search(&q, 10, 2, metric).unwrap());
        // The square tile everywhere (the baseline): the same bits.
        gpu.engine().set_narrow_tiles(false);
        for (k, nprobe) in [(10usize, 3usize), (128, 7)] {
            let label = format!("77 queries, square tiles only, k {k}, nprobe {nprobe}, {metric:?}");
            assert_same(
                &label,
                &gpu.search(exec, &dfew, k, nprobe, metric).unwrap(),
                &cpu.search(&few, k, nprobe, metric).unwrap(),
            );
        }
        gpu.engine().set_narrow_tiles(true);
    }
    // No queries.
    let none = DeviceVectors::upload(exec, &Vectors::new(&[], 12).unwrap()).unwrap();
    let got = gpu.search(exec, &none, 4, 2, Metric::L2).unwrap();
    assert!(got.is_empty() && got.k == 4);
}

/// 1,100 lists probed 1,050 at a time (beyond the device top-k: the host selection), and a
/// list longer than a segment (2,048 rows).
pub fn ivf_wide_probes_and_long_lists_equal_the_cpu<E: GpuExecutor>(exec: &E) {
    if !is_cuda(exec) {
        return;
    }
    let data = data_with(40, 4, 60.0, 0.4, 33);
    let v = data.vectors().unwrap();
    assert!(v.len() > 1100, "{} rows", v.len());
    let (cpu, mut gpu) = check_training(exec, "1100 lists", &v, &IvfParams { nlist: 1100, iterations: 2, seed: 5 });
    let qv = gaussian_queries(&data, 9, 0.3, 4);
    let q = Vectors::new(&qv, 4).unwrap();
    let dq = DeviceVectors::upload(exec, &q).unwrap();
    for metric in [Metric::L2, Metric::InnerProduct] {
        let label = format!("nprobe 1050 {metric:?}");
        assert_same(
            &label,
            &gpu.search(exec, &dq, 12, 1050, metric).unwrap(),
            &cpu.search(&q, 12, 1050, metric).unwrap(),
        );
    }
    // One big blob and a few far points: one list of several segments.
    let mut w: Vec<f32> = Vec::new();
    for i in 0..5000u32 {
        let t = i as f32 * 1e-3;
        w.extend([t.sin(), t.cos(), t]);
    }
    w.extend([100.0, 0.0, 0.0, 0.0, 100.0, 0.0, -100.0, 0.0, 0.0]);
    let v = Vectors::new(&w, 3).unwrap();
    let (cpu, mut gpu) = check_training(exec, "long list", &v, &IvfParams { nlist: 3, iterations: 3, seed: 1 });
    assert!(cpu.list_offsets().windows(2).any(|o| o[1] - o[0] > 2048), "{:?}", cpu.list_offsets());
    let q = Vectors::new(&[0.5f32, 0.5, 2.5, 0.0, 1.0, 0.1, 90.0, 1.0, 0.0], 3).unwrap();
    let dq = DeviceVectors::upload(exec, &q).unwrap();
    for metric in [Metric::L2, Metric::InnerProduct] {
        for (k, nprobe) in [(10usize, 1usize), (128, 3)] {
            let label = format!("long list k {k} nprobe {nprobe} {metric:?}");
            assert_same(
                &label,
                &gpu.search(exec, &dq, k, nprobe, metric).unwrap(),
                &cpu.search(&q, k, nprobe, metric).unwrap(),
            );
        }
    }
}

/// The lattice: centroids, search and fused search over clusters of varied sizes, one of
/// them longer than a member chunk (4,096) and so several list segments.
pub fn lattice_and_fused_equal_the_cpu<E: GpuExecutor>(exec: &E) {
    if !is_cuda(exec) {
        return;
    }
    let mut data = synth(25, 9, 40.0, 31);
    // Append a 9,000-member cluster.
    let big = data_with(1, 9, 9000.0, 0.2, 8);
    assert!(big.offsets[1] > 8192, "{:?}", big.offsets);
    let base = *data.offsets.last().unwrap();
    data.vectors.extend_from_slice(&big.vectors);
    data.offsets.push(base + big.offsets[1]);
    data.centers.extend_from_slice(&big.centers);
    let c = data.clusters().unwrap();
    let cpu = LatticeIndex::new(c).unwrap();
    let dc = DeviceClusters::upload(exec, &c).unwrap();
    let mut gpu = GpuLatticeIndex::new(exec, &dc).unwrap();
    assert_eq!(bits(&gpu.centroids(exec).unwrap()), bits(cpu.centroids()), "lattice centroids");
    let qv = gaussian_queries(&data, 300, 0.2, 8);
    let q = Vectors::new(&qv, 9).unwrap();
    let dq = DeviceVectors::upload(exec, &q).unwrap();
    for metric in [Metric::L2, Metric::InnerProduct] {
        for (k, nprobe) in [(5usize, 1usize), (10, 4), (128, 26)] {
            let label = format!("lattice k {k}, nprobe {nprobe}, {metric:?}");
            let plain = gpu.search(exec, &dq, k, nprobe, metric).unwrap_or_else(|e| panic!("{label}: {e}"));
            assert_same(&label, &plain, &cpu.search(&q, k, nprobe, metric).unwrap());
            let (fused, side) = gpu.search_fused(exec, &dq, k, nprobe, metric).unwrap();
            assert_eq!(plain, fused, "{label}: fused output");
            let (_, want) = cpu.search_fused(&q, k, nprobe, metric).unwrap();
            assert_eq!(bits(&side.member_distance), bits(&want.member_distance), "{label}: side buffer");
            assert_eq!(side.scored, want.scored, "{label}: scored");
            assert_eq!(bits(&side.cohesion), bits(&want.cohesion), "{label}: cohesion");
            assert_eq!(bits(&side.inertia), bits(&want.inertia), "{label}: inertia");
        }
    }
}

/// Every kernel of the module on small inputs (for compute-sanitizer's racecheck, which
/// tracks every shared access): a 600-row index, a lattice with a cluster of two list
/// segments, the fused search; all equal to the CPU.
pub fn small_searches_for_the_sanitizers<E: GpuExecutor>(exec: &E) {
    if !is_cuda(exec) {
        return;
    }
    let data = data_with(6, 8, 100.0, 0.4, 3);
    let v = data.vectors().unwrap();
    let (cpu, mut gpu) = check_training(exec, "small index", &v, &IvfParams { nlist: 7, iterations: 2, seed: 1 });
    let qv = gaussian_queries(&data, 40, 0.3, 2);
    let q = Vectors::new(&qv, 8).unwrap();
    let dq = DeviceVectors::upload(exec, &q).unwrap();
    assert_same(
        "small ivf",
        &gpu.search(exec, &dq, 10, 3, Metric::L2).unwrap(),
        &cpu.search(&q, 10, 3, Metric::L2).unwrap(),
    );
    let mut w: Vec<f32> = data.vectors[..40 * 8].to_vec();
    for i in 0..2500u32 {
        w.extend((0..8).map(|d| ((i * 7 + d) % 13) as f32 * 0.01 + 2.0));
    }
    let c = orrery_clusters::Clusters::new(&w, 8, &[0, 40, 2540]).unwrap();
    let lat = LatticeIndex::new(c).unwrap();
    let dc = DeviceClusters::upload(exec, &c).unwrap();
    let mut glat = GpuLatticeIndex::new(exec, &dc).unwrap();
    let (want, want_side) = lat.search_fused(&q, 10, 2, Metric::InnerProduct).unwrap();
    for narrow in [true, false] {
        glat.engine().set_narrow_tiles(narrow);
        let (got, side) = glat.search_fused(exec, &dq, 10, 2, Metric::InnerProduct).unwrap();
        assert_same(&format!("small lattice, narrow tiles {narrow}"), &got, &want);
        assert_eq!(bits(&side.member_distance), bits(&want_side.member_distance));
        assert_eq!(bits(&side.inertia), bits(&want_side.inertia));
    }
}

/// Typed errors on CUDA; `Unsupported` on wgpu.
pub fn ivf_and_lattice_errors_are_typed<E: GpuExecutor>(exec: &E) {
    let data = synth(4, 6, 20.0, 3);
    let v = data.vectors().unwrap();
    let c = data.clusters().unwrap();
    let dc = DeviceClusters::upload(exec, &c).unwrap();
    if !is_cuda(exec) {
        assert!(matches!(ivf_build(exec, &v, &IvfParams::new(2)), Err(Error::Unsupported { .. })));
        assert!(matches!(GpuLatticeIndex::new(exec, &dc), Err(Error::Unsupported { .. })));
        return;
    }
    for nlist in [0usize, v.len() + 1] {
        let r = ivf_build(exec, &v, &IvfParams::new(nlist));
        assert!(matches!(r, Err(Error::InvalidArgument { what: "nlist", .. })), "nlist {nlist}: {:?}", r.err());
    }
    let empty = Vectors::new(&[], 6).unwrap();
    assert!(matches!(ivf_build(exec, &empty, &IvfParams::new(1)), Err(Error::EmptyInput { .. })));
    let mut ivf = ivf_build(exec, &v, &IvfParams::new(3)).unwrap();
    let mut lat = GpuLatticeIndex::new(exec, &dc).unwrap();
    let q = DeviceVectors::upload(exec, &Vectors::new(&data.vectors[..12], 6).unwrap()).unwrap();
    let q5 = DeviceVectors::upload(exec, &Vectors::new(&data.vectors[..10], 5).unwrap()).unwrap();
    for (k, nprobe, what) in [(0usize, 1usize, "k"), (129, 1, "k"), (3, 0, "nprobe"), (3, 5, "nprobe")] {
        let r = ivf.search(exec, &q, k, nprobe, Metric::L2);
        assert!(
            matches!(r, Err(Error::InvalidArgument { what: w, .. }) if w == what),
            "ivf k {k} nprobe {nprobe}: {r:?}"
        );
        let r = lat.search(exec, &q, k, nprobe, Metric::L2);
        assert!(
            matches!(r, Err(Error::InvalidArgument { what: w, .. }) if w == what),
            "lattice k {k} nprobe {nprobe}: {r:?}"
        );
    }
    assert!(matches!(
        ivf.search(exec, &q5, 3, 1, Metric::L2),
        Err(Error::LengthMismatch { what: "query dimension", .. })
    ));
    assert!(matches!(lat.search_fused(exec, &q5, 3, 1, Metric::L2), Err(Error::LengthMismatch { .. })));
    let holes =
        DeviceClusters::upload(exec, &orrery_clusters::Clusters::new(&data.vectors[..12], 6, &[0, 1, 1, 2]).unwrap())
            .unwrap();
    let r = GpuLatticeIndex::new(exec, &holes);
    assert!(matches!(r, Err(Error::InvalidArgument { what: "cluster offsets", .. })), "{:?}", r.err());
}

crate::executors::gpu_cases!(
    ivf_training_equals_the_cpu,
    ivf_search_equals_the_cpu,
    ivf_wide_probes_and_long_lists_equal_the_cpu,
    lattice_and_fused_equal_the_cpu,
    small_searches_for_the_sanitizers,
    ivf_and_lattice_errors_are_typed,
);
