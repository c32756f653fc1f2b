//! The GPU build against the CPU build, for any [`GpuExecutor`]: the same cases on CUDA
//! (`gpu_cuda`) and wgpu (`gpu_wgpu`), each a comparison of indices and mask, bit for
//! bit, named for the edge case it covers. `gpu_tests!` instantiates them in the module
//! that calls it (`crate::gpu_tests!(exec)`, with `gpu_common` in scope), so their names
//! are `gpu_cuda::<case>` and `gpu_wgpu::<case>`.
//!
//! Integer outputs, so no tolerance: a GPU tree that differs from the CPU tree in any slot
//! fails, and the message names the case, the strategy and the first differing slot.

#![allow(dead_code)]

use std::path::PathBuf;

use orrery_balltree::gpu::{self, GpuBallTreeBuilder, GpuReal, Strategy};
use orrery_balltree::{BallTree, Batches, PointCloud, build_balltree};
use orrery_core::{Error, ExecutorKind, GpuExecutor};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;

use crate::common::widen;

/// Every strategy; every case runs with each.
pub fn strategies<E: GpuExecutor>(_exec: &E) -> &'static [Strategy] {
    &[Strategy::LevelSort, Strategy::Hybrid, Strategy::Select]
}

/// An executor from `open`, or `None` after printing "skipped: <reason>"; with
/// `require_var=1` a missing executor is a failure.
pub fn open_or_skip<E>(open: impl FnOnce() -> Result<E, Error>, require_var: &str) -> Option<E> {
    match open() {
        Ok(e) => Some(e),
        Err(e) => {
            let required = std::env::var(require_var).is_ok_and(|v| v == "1");
            assert!(!required, "{require_var}=1 but no executor: {e}");
            orrery_core::skip::report(&format!("ball tree GPU test ({require_var} not set)"), &e.to_string());
            None
        }
    }
}

/// Panics with the first differing slot unless the trees are identical.
pub fn assert_same(label: &str, gpu: &BallTree, cpu: &BallTree) {
    assert_eq!(gpu.layout(), cpu.layout(), "{label}: layout");
    if let Some(s) =
        (0..cpu.num_slots()).find(|&s| gpu.indices()[s] != cpu.indices()[s] || gpu.mask()[s] != cpu.mask()[s])
    {
        let lo = s.saturating_sub(4);
        let hi = (s + 5).min(cpu.num_slots());
        panic!(
            "{label}: first difference at slot {s} of {}: gpu {:?} / {:?}, cpu {:?} / {:?} (slots {lo}..{hi})",
            cpu.num_slots(),
            &gpu.indices()[lo..hi],
            &gpu.mask()[lo..hi],
            &cpu.indices()[lo..hi],
            &cpu.mask()[lo..hi],
        );
    }
}

/// Builds `points` (row-major, `dim` coordinates, batches at `offsets`) on the GPU with
/// every strategy and on the CPU, and compares.
pub fn check<E: GpuExecutor, T: GpuReal>(exec: &E, label: &str, points: &[T], dim: usize, offsets: &[usize]) {
    let cloud = PointCloud::new(points, dim, Batches::from_offsets(offsets).unwrap()).unwrap();
    let cpu = build_balltree(&cloud).unwrap();
    for &strategy in strategies(exec) {
        let gpu =
            gpu::build_balltree_with(exec, &cloud, strategy).unwrap_or_else(|e| panic!("{label} [{strategy:?}]: {e}"));
        assert_same(&format!("{label} [{strategy:?}]"), &gpu, &cpu);
    }
}

/// `n * dim` uniform coordinates in [0, 1).
pub fn uniform(n: usize, dim: usize, seed: u64) -> Vec<f32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n * dim).map(|_| rng.random::<f32>()).collect()
}

/// `n * dim` coordinates in 8 Gaussian-ish blobs (sum of uniforms) of width 0.01 around
/// random centres in [-10, 10), with a few far outliers.
pub fn clustered(n: usize, dim: usize, seed: u64) -> Vec<f32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let centres: Vec<f32> = (0..8 * dim).map(|_| rng.random_range(-10.0f32..10.0)).collect();
    let mut out = Vec::with_capacity(n * dim);
    for i in 0..n {
        let c = rng.random_range(0..8usize);
        let outlier = i % 97 == 13;
        for d in 0..dim {
            let jitter: f32 = (0..4).map(|_| rng.random::<f32>() - 0.5).sum::<f32>() * 0.01;
            out.push(if outlier { rng.random_range(-1000.0f32..1000.0) } else { centres[c * dim + d] + jitter });
        }
    }
    out
}

/// `n * dim` coordinates on a grid of `levels` values in [-1, 1], including both zeros:
/// ties everywhere, and `-0.0 == 0.0`.
pub fn grid(n: usize, dim: usize, levels: u32, seed: u64) -> Vec<f32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n * dim)
        .map(|_| {
            let k = rng.random_range(0..levels);
            let v = -1.0 + 2.0 * k as f32 / (levels - 1).max(1) as f32;
            if v == 0.0 && rng.random::<bool>() { -0.0 } else { v }
        })
        .collect()
}

/// CSR offsets of consecutive batches of `sizes`.
pub fn offsets(sizes: &[usize]) -> Vec<usize> {
    std::iter::once(0)
        .chain(sizes.iter().scan(0, |acc, &s| {
            *acc += s;
            Some(*acc)
        }))
        .collect()
}

// ---- cases ------------------------------------------------------------------------------

#[derive(Deserialize)]
struct Manifest {
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    name: String,
    dim: usize,
    offsets: Vec<usize>,
    file: String,
    sections: std::collections::BTreeMap<String, Section>,
}

#[derive(Deserialize)]
struct Section {
    dtype: String,
    offset: usize,
    len: usize,
}

/// The fixtures directory: `ORRERY_BALLTREE_FIXTURES`, else the source tree's, else
/// `crates/orrery-balltree/tests/fixtures` under the working directory (test binaries
/// run from a copy of the repository elsewhere).
fn fixtures_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("ORRERY_BALLTREE_FIXTURES") {
        return PathBuf::from(dir);
    }
    let built = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    if built.join("manifest.json").exists() { built } else { PathBuf::from("crates/orrery-balltree/tests/fixtures") }
}

/// The golden fixtures (Erwin's reference inputs): every case, both strategies.
pub fn golden_fixtures<E: GpuExecutor>(exec: &E) {
    let dir = fixtures_dir();
    let manifest: Manifest =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    for case in &manifest.cases {
        let bytes = std::fs::read(dir.join(&case.file)).unwrap();
        let s = &case.sections["points"];
        assert_eq!(s.dtype, "float32");
        let points: Vec<f32> = bytes[s.offset..s.offset + 4 * s.len]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        check(exec, &case.name, &points, case.dim, &case.offsets);
    }
}

/// Uniform and clustered clouds of one batch, every size in `sizes`, dims 1, 2, 3, 8, 16.
pub fn random_clouds<E: GpuExecutor>(exec: &E, sizes: &[usize]) {
    for &n in sizes {
        for dim in [1usize, 2, 3, 8, 16] {
            let seed = (n * 31 + dim) as u64;
            check(exec, &format!("uniform n={n} dim={dim}"), &uniform(n, dim, seed), dim, &[0, n]);
            check(exec, &format!("clustered n={n} dim={dim}"), &clustered(n, dim, seed), dim, &[0, n]);
        }
    }
}

/// Several ragged batches in one call: sizes 1 and 2 (single leaves), powers of two and
/// their neighbours, and batches on both sides of the local block size.
pub fn ragged_batches<E: GpuExecutor>(exec: &E) {
    let sizes = [1usize, 2, 3, 5, 17, 1000, 1, 4097, 64, 2, 1023, 1024, 1025, 2049, 3000, 7];
    let n: usize = sizes.iter().sum();
    for dim in [1usize, 3, 16] {
        check(exec, &format!("ragged uniform dim={dim}"), &uniform(n, dim, 11 + dim as u64), dim, &offsets(&sizes));
        check(exec, &format!("ragged clustered dim={dim}"), &clustered(n, dim, 12), dim, &offsets(&sizes));
    }
    // Many small batches.
    let small: Vec<usize> = (0..300).map(|i| 1 + (i * 7) % 13).collect();
    let m: usize = small.iter().sum();
    check(exec, "300 small batches", &uniform(m, 2, 5), 2, &offsets(&small));
}

/// All points identical: every spread is 0, every split is by index alone.
pub fn identical_points<E: GpuExecutor>(exec: &E) {
    for (n, dim) in [(1usize, 3usize), (2, 3), (5, 1), (1000, 3), (4097, 2), (5000, 16)] {
        check(exec, &format!("identical n={n} dim={dim}"), &vec![0.25f32; n * dim], dim, &[0, n]);
    }
    let sizes = [3usize, 1, 2000, 64];
    let n: usize = sizes.iter().sum();
    check(exec, "identical ragged", &vec![-7.5f32; n * 3], 3, &offsets(&sizes));
}

/// Coordinates on a coarse grid (with -0.0 and 0.0): ties on every coordinate, equal
/// spreads on several dimensions.
pub fn ties_on_a_grid<E: GpuExecutor>(exec: &E) {
    for (n, dim, levels) in [(1000usize, 2usize, 3u32), (1000, 3, 2), (4097, 3, 5), (3000, 8, 3), (2500, 1, 4)] {
        check(exec, &format!("grid n={n} dim={dim} levels={levels}"), &grid(n, dim, levels, n as u64), dim, &[0, n]);
    }
    let sizes = [700usize, 1, 2, 1500, 33];
    let n: usize = sizes.iter().sum();
    check(exec, "grid ragged", &grid(n, 3, 3, 9), 3, &offsets(&sizes));
}

/// f64 input: identical to the CPU on CUDA; [`Error::Unsupported`] elsewhere.
pub fn f64_input<E: GpuExecutor>(exec: &E) {
    let sizes = [1usize, 2, 3, 1000, 4097, 2049];
    let n: usize = sizes.iter().sum();
    let uniform64: Vec<f64> = {
        let mut rng = ChaCha8Rng::seed_from_u64(64);
        (0..n * 3).map(|_| rng.random::<f64>()).collect()
    };
    if exec.kind() != ExecutorKind::Cuda {
        let cloud = PointCloud::new(&uniform64, 3, Batches::from_offsets(&offsets(&sizes)).unwrap()).unwrap();
        let r = gpu::build_balltree(exec, &cloud);
        assert!(matches!(r, Err(Error::Unsupported { .. })), "f64 on {:?}: {r:?}", exec.kind());
        return;
    }
    check(exec, "f64 uniform ragged", &uniform64, 3, &offsets(&sizes));
    check(exec, "f64 grid", &widen(&grid(3000, 3, 3, 4)), 3, &[0, 3000]);
    check(exec, "f64 clustered dim=8", &widen(&clustered(5000, 8, 8)), 8, &[0, 5000]);
    check(exec, "f64 identical", &vec![1.0f64; 1500 * 2], 2, &[0, 1500]);
    check(exec, "f64 16384 dim=3", &widen(&uniform(16384, 3, 3)), 3, &[0, 16384]);
}

/// Coordinates whose spreads overflow f32 or differ only in the rounding error.
pub fn extreme_spreads<E: GpuExecutor>(exec: &E) {
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let n = 3000;
    let mut pts = Vec::with_capacity(n * 3);
    for _ in 0..n {
        // Dimension 0 spans [-3e38, 3e38] (the spread overflows), dimension 1 [-1, 1e8]
        // (rounding in f32), dimension 2 tiny values.
        pts.push((rng.random::<f32>() * 2.0 - 1.0) * 3.0e38);
        pts.push(if rng.random::<bool>() { 1.0e8 } else { -rng.random_range(0.0f32..3.0) });
        pts.push(rng.random_range(-1.0e-30f32..1.0e-30));
    }
    check(exec, "extreme spreads", &pts, 3, &[0, n]);
    // Spreads that round to the same f32 but differ exactly: 1e8 + 2 against 1e8 + 3.
    let m = 2000;
    let mut near = Vec::with_capacity(m * 2);
    for i in 0..m {
        let (a, b) = match i % 4 {
            0 => (-2.0f32, -3.0f32),
            1 => (1.0e8, 1.0e8),
            _ => (rng.random_range(0.0f32..1.0), rng.random_range(0.0f32..1.0)),
        };
        near.push(a);
        near.push(b);
    }
    check(exec, "spreads equal after rounding", &near, 2, &[0, m]);
}

/// One builder across batch layouts: the plan is recomputed when the layout changes and
/// reused when it does not; the device-resident tree matches the CPU each time.
pub fn builder_reuse<E: GpuExecutor>(exec: &E) {
    for &strategy in strategies(exec) {
        let mut builder = GpuBallTreeBuilder::<E>::new(strategy);
        for (sizes, dim, seed) in
            [(vec![1000usize, 5], 3usize, 1u64), (vec![5000], 3, 2), (vec![1000, 5], 3, 3), (vec![17, 2, 1], 8, 4)]
        {
            let n: usize = sizes.iter().sum();
            let pts = uniform(n, dim, seed);
            let batches = Batches::from_offsets(&offsets(&sizes)).unwrap();
            let cpu = build_balltree(&PointCloud::new(&pts, dim, batches.clone()).unwrap()).unwrap();
            let dev = exec.upload(&pts).unwrap();
            let tree = builder.build(exec, &dev, dim, &batches).unwrap().download(exec).unwrap();
            assert_same(&format!("builder {sizes:?} [{strategy:?}]"), &tree, &cpu);
        }
    }
}

/// A small case for compute-sanitizer (memcheck, racecheck): every kernel, both
/// strategies, global levels and the local phase, f32 in 1, 3 and 16 dimensions, ties,
/// and f64 where supported.
pub fn sanitizer_case<E: GpuExecutor>(exec: &E) {
    let sizes = [1usize, 2, 5, 300, 2500];
    let n: usize = sizes.iter().sum();
    for dim in [1usize, 3, 16] {
        check(exec, &format!("sanitizer dim={dim}"), &uniform(n, dim, 3), dim, &offsets(&sizes));
    }
    check(exec, "sanitizer grid", &grid(n, 2, 3, 3), 2, &offsets(&sizes));
    if exec.kind() == ExecutorKind::Cuda {
        check(exec, "sanitizer f64", &widen(&uniform(n, 3, 4)), 3, &offsets(&sizes));
    }
}

/// Arguments the build rejects, with the error naming the problem.
pub fn invalid_arguments<E: GpuExecutor>(exec: &E) {
    let mut builder = GpuBallTreeBuilder::<E>::new(Strategy::Hybrid);
    let dev = exec.upload(&[0.0f32; 12]).unwrap();
    let batches = Batches::single(4).unwrap();
    assert!(matches!(builder.build(exec, &dev, 0, &batches), Err(Error::InvalidArgument { .. })));
    assert!(matches!(builder.build(exec, &dev, 17, &batches), Err(Error::InvalidArgument { .. })));
    match builder.build(exec, &dev, 2, &batches) {
        Err(Error::LengthMismatch { what, expected, actual }) => {
            assert_eq!((what, expected, actual), ("points", 8, 12));
        }
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("a length mismatch was accepted"),
    }
    assert!(builder.build(exec, &dev, 3, &batches).is_ok());
}

/// Instantiates every case as a `#[test]` for the executor that `$exec` returns
/// (`Option<&'static E>`, `None` after printing "skipped").
#[macro_export]
macro_rules! gpu_tests {
    ($exec:path) => {
        #[test]
        fn small_golden_fixtures_match_the_cpu() {
            let Some(e) = $exec() else { return };
            gpu_common::golden_fixtures(e);
        }

        #[test]
        fn small_random_clouds_of_1_to_1000_points() {
            let Some(e) = $exec() else { return };
            gpu_common::random_clouds(e, &[1, 2, 3, 5, 1000]);
        }

        #[test]
        fn random_clouds_of_4097_and_16384_points() {
            let Some(e) = $exec() else { return };
            gpu_common::random_clouds(e, &[4097, 16384]);
        }

        #[test]
        fn small_ragged_batches_in_one_call() {
            let Some(e) = $exec() else { return };
            gpu_common::ragged_batches(e);
        }

        #[test]
        fn small_all_identical_points() {
            let Some(e) = $exec() else { return };
            gpu_common::identical_points(e);
        }

        #[test]
        fn small_ties_on_a_coarse_grid_and_signed_zeros() {
            let Some(e) = $exec() else { return };
            gpu_common::ties_on_a_grid(e);
        }

        #[test]
        fn small_f64_input() {
            let Some(e) = $exec() else { return };
            gpu_common::f64_input(e);
        }

        #[test]
        fn small_extreme_and_near_tied_spreads() {
            let Some(e) = $exec() else { return };
            gpu_common::extreme_spreads(e);
        }

        #[test]
        fn small_one_builder_across_batch_layouts() {
            let Some(e) = $exec() else { return };
            gpu_common::builder_reuse(e);
        }

        #[test]
        fn sanitizer_small_case() {
            let Some(e) = $exec() else { return };
            gpu_common::sanitizer_case(e);
        }

        #[test]
        fn small_invalid_arguments_are_errors() {
            let Some(e) = $exec() else { return };
            gpu_common::invalid_arguments(e);
        }
    };
}
