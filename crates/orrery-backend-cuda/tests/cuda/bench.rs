//! Timings of the primitives on the device (ignored by default; timing is never
//! asserted). Run with `--ignored --nocapture`; each line is
//! `bench <name> n=<elements> median_ms=<t> spread_ms=<min>..<max> <rate>`.
//!
//! Method: device events around each run after two warm-up runs, median of
//! `ORRERY_BENCH_REPEATS` (default 10) runs; inputs are restored from a pristine copy
//! before every sort (outside the timed region).

use crate::common;

use orrery_backend_cuda::{CudaExecutor, Policy};
use orrery_core::sfc::{Curve, KeyMapper};
use orrery_core::{Aabb, Executor, ReduceOp};
use rand::Rng;
use std::time::Instant;

fn repeats() -> usize {
    std::env::var("ORRERY_BENCH_REPEATS").ok().and_then(|v| v.parse().ok()).unwrap_or(10)
}

/// Median, min and max in milliseconds of `step(Phase::Run)` timed with events, after
/// 2 warm-ups; `step(Phase::Prepare)` runs before each run, outside the events.
fn time_with(e: &CudaExecutor, mut step: impl FnMut(Phase)) -> (f64, f64, f64) {
    for _ in 0..2 {
        step(Phase::Prepare);
        step(Phase::Run);
    }
    let mut ms: Vec<f64> = (0..repeats())
        .map(|_| {
            step(Phase::Prepare);
            let a = e.mark().unwrap();
            step(Phase::Run);
            let b = e.mark().unwrap();
            e.elapsed(&a, &b).unwrap().as_secs_f64() * 1e3
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    (ms[ms.len() / 2], ms[0], ms[ms.len() - 1])
}

/// What [`time_with`] asks its step to do.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Prepare,
    Run,
}

/// [`time_with`] without a preparation step.
fn time(e: &CudaExecutor, _prepare: impl FnMut(), mut run: impl FnMut()) -> (f64, f64, f64) {
    time_with(e, |p| {
        if p == Phase::Run {
            run();
        }
    })
}

fn report(name: &str, n: usize, (median, lo, hi): (f64, f64, f64), rate: &str) {
    println!("bench {name} n={n} median_ms={median:.4} spread_ms={lo:.4}..{hi:.4} {rate}");
}

fn random_u64(n: usize, seed: u64) -> Vec<u64> {
    let mut r = common::rng(seed, n);
    (0..n).map(|_| r.random()).collect()
}

fn bench_sort(e: &CudaExecutor, label: &str, n: usize) {
    let keys = e.upload(&random_u64(n, 1)).unwrap();
    let mut vals0 = e.alloc::<u32>(n).unwrap();
    e.iota(&mut vals0, 0).unwrap();
    let (mut k, mut v) = (e.alloc::<u64>(n).unwrap(), e.alloc::<u32>(n).unwrap());
    for bits in [0..64, 0..63] {
        let t = time_with(e, |phase| match phase {
            Phase::Prepare => {
                e.copy(&keys, &mut k).unwrap();
                e.copy(&vals0, &mut v).unwrap();
            }
            Phase::Run => e.sort_pairs(&mut k, &mut v, bits.clone()).unwrap(),
        });
        let gkeys = n as f64 / (t.0 * 1e-3) / 1e9;
        report(&format!("sort_pairs{label} bits={}..{}", bits.start, bits.end), n, t, &format!("{gkeys:.2} Gkeys/s"));
    }
}

/// Start-up cost of the kernels: NVRTC into an empty disk cache, then the same modules
/// loaded from that cache by a second executor (what a second process sees).
fn bench_startup(e: &CudaExecutor) {
    let cold_dir = std::env::temp_dir().join(format!("orrery-cold-cache-{}", std::process::id()));
    // SAFETY: this binary runs this one test; no other thread reads the environment now.
    unsafe { std::env::set_var("ORRERY_KERNEL_CACHE", &cold_dir) };
    for label in ["cold (NVRTC)", "warm (disk cache)"] {
        let t0 = Instant::now();
        let ex = CudaExecutor::new(e.ordinal()).unwrap();
        ex.prepare_all().unwrap();
        println!("startup {label}: executor + all core modules in {:.1} ms", t0.elapsed().as_secs_f64() * 1e3);
    }
    let _ = std::fs::remove_dir_all(&cold_dir);
}

/// Device-to-device copy of 1 GiB: the bandwidth ceiling (GB/s, read + write).
fn bench_copy(e: &CudaExecutor) -> f64 {
    let n = 1usize << 28;
    let src = e.upload(&vec![7u32; n]).unwrap();
    let mut dst = e.alloc::<u32>(n).unwrap();
    let t = time(e, || {}, || e.copy(&src, &mut dst).unwrap());
    let copy_gbs = 2.0 * (n * 4) as f64 / (t.0 * 1e-3) / 1e9;
    report("copy_1GiB", n, t, &format!("{copy_gbs:.0} GB/s (read+write)"));
    copy_gbs
}

/// Scan of 256M u32 with the default policy and other tile shapes; reduction of 256M f32.
fn bench_scan_and_reduce(e: &CudaExecutor, copy_gbs: f64) {
    let n = 1usize << 28;
    let mut r = common::rng(9, n);
    let host: Vec<u32> = (0..n).map(|_| r.random_range(0..4u32)).collect();
    let shapes = [None, Some((256u32, 4u32)), Some((128, 16))];
    for shape in shapes {
        let (ex, label);
        let owned;
        if let Some((threads, vecs)) = shape {
            let p = Policy { scan_threads: threads, scan_vecs: vecs, ..*e.policy() };
            owned = CudaExecutor::with_policy(e.ordinal(), p).unwrap();
            ex = &owned;
            label = format!("[threads={threads},vecs={vecs}]");
        } else {
            ex = e;
            label = String::new();
        }
        let input = ex.upload(&host).unwrap();
        let mut out = ex.alloc::<u32>(n + 1).unwrap();
        let t = time(ex, || {}, || ex.exclusive_scan(&input, &mut out).unwrap());
        let gbs = 2.0 * (n * 4) as f64 / (t.0 * 1e-3) / 1e9;
        report(
            &format!("exclusive_scan_u32{label}"),
            n,
            t,
            &format!("{gbs:.0} GB/s = {:.0}% of copy", 100.0 * gbs / copy_gbs),
        );
    }
    drop(host);

    let f = e.upload(&vec![0.5f32; n]).unwrap();
    let mut s = e.alloc::<f32>(1).unwrap();
    let t = time(e, || {}, || e.reduce(&f, ReduceOp::Sum, &mut s).unwrap());
    report("reduce_sum_f32", n, t, &format!("{:.0} GB/s (read)", (n * 4) as f64 / (t.0 * 1e-3) / 1e9));
}

/// Compaction of 64M u64 with every second flag set.
fn bench_compact(e: &CudaExecutor) {
    let m = 1usize << 26;
    let vals = e.upload(&random_u64(m, 3)).unwrap();
    let flags = e.upload(&(0..m).map(|i| (i % 2) as u32).collect::<Vec<_>>()).unwrap();
    let (mut out, mut count) = (e.alloc::<u64>(m).unwrap(), e.alloc::<u32>(1).unwrap());
    let t = time(e, || {}, || e.compact(&vals, &flags, &mut out, &mut count).unwrap());
    let gbs = (m * (8 + 4) + m / 2 * 8) as f64 / (t.0 * 1e-3) / 1e9;
    report("compact_u64_half", m, t, &format!("{gbs:.0} GB/s (flags and values read, half the values written)"));
}

/// Hilbert and Morton keys of 64M f32 points (12 B read + 8 B written per point); the
/// two Hilbert kernels (levels per table lookup) side by side.
fn bench_sfc(e: &CudaExecutor, copy_gbs: f64) {
    let m = 1usize << 26;
    let pts = |seed| {
        let mut r = common::rng(seed, m);
        (0..m).map(|_| r.random_range(0.0f32..1.0)).collect::<Vec<_>>()
    };
    let (hx, hy, hz) = (pts(4), pts(5), pts(6));
    let bbox = Aabb::cube(0.0f32, 1.0).unwrap();
    for (name, curve, levels) in
        [("hilbert3", Curve::Hilbert, 3), ("hilbert1", Curve::Hilbert, 1), ("morton", Curve::Morton, 3)]
    {
        let ex = CudaExecutor::with_policy(e.ordinal(), Policy { hilbert_levels: levels, ..*e.policy() }).unwrap();
        let (x, y, z) = (ex.upload(&hx).unwrap(), ex.upload(&hy).unwrap(), ex.upload(&hz).unwrap());
        let mut keys = ex.alloc::<u64>(m).unwrap();
        let mapper = KeyMapper::<f32, u64>::new(bbox, curve);
        let t = time(&ex, || {}, || ex.sfc_keys(&x, &y, &z, &mapper, &mut keys).unwrap());
        let gbs = (m * 20) as f64 / (t.0 * 1e-3) / 1e9;
        report(
            &format!("sfc_keys_{name}_f32"),
            m,
            t,
            &format!("{gbs:.0} GB/s = {:.0}% of copy", 100.0 * gbs / copy_gbs),
        );
    }
}

/// Gather of 64M u32 by a random permutation.
fn bench_gather(e: &CudaExecutor) {
    let m = 1usize << 26;
    let mut perm: Vec<u32> = (0..m as u32).collect();
    rand::seq::SliceRandom::shuffle(&mut perm[..], &mut common::rng(7, m));
    let (idx, src) = (e.upload(&perm).unwrap(), e.upload(&vec![1u32; m]).unwrap());
    let mut dst = e.alloc::<u32>(m).unwrap();
    let t = time(e, || {}, || e.gather(&src, &idx, &mut dst).unwrap());
    report("gather_u32_random", m, t, &format!("{:.0} GB/s (12 B per element)", (m * 12) as f64 / (t.0 * 1e-3) / 1e9));
}

#[test]
#[ignore = "benchmark: run on a GPU with --ignored --nocapture"]
fn bench_primitives() {
    let Some(e) = common::device() else { return };
    e.prepare_all().unwrap();
    bench_startup(e);
    println!("device {} ({}), {} SMs, policy {:?}", e.device_name(), e.arch(), e.sm_count(), e.policy());
    let copy_gbs = bench_copy(e);
    bench_scan_and_reduce(e, copy_gbs);
    bench_compact(e);
    bench_sfc(e, copy_gbs);
    bench_gather(e);
    // Radix sort: 16M and 64M pairs, full and 63-bit keys, then another launch bound.
    for n in [1usize << 24, 1 << 26] {
        bench_sort(e, "", n);
    }
    let other = CudaExecutor::with_policy(e.ordinal(), Policy { sort_min_blocks: 2, ..*e.policy() }).unwrap();
    for n in [1usize << 24, 1 << 26] {
        bench_sort(&other, "[items=16,min_blocks=2]", n);
    }
}
