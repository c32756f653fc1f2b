//! Timings of the primitives on the device (ignored by default; timing is never
//! asserted). Run with `--ignored --nocapture`; each line is
//! `bench <name> n=<elements> median_ms=<t> spread_ms=<min>..<max> <rate>`.
//!
//! Method: device events around each run after two warm-up runs, median of
//! `ORRERY_BENCH_REPEATS` (default 10) runs; inputs are restored from a pristine copy
//! before every sort (outside the timed region).

mod common;

use orrery_backend_cuda::{CudaExecutor, Policy};
use orrery_core::sfc::{Curve, KeyMapper};
use orrery_core::{Aabb, Executor, ReduceOp};
use rand::Rng;

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

#[test]
#[ignore = "benchmark: run on a GPU with --ignored --nocapture"]
fn bench_primitives() {
    let Some(e) = common::device() else { return };
    e.prepare_all().unwrap();
    println!("device {} ({}), {} SMs, policy {:?}", e.device_name(), e.arch(), e.sm_count(), e.policy());

    // Copy ceiling: 1 GiB device to device.
    let n = 1usize << 28;
    let src = e.upload(&vec![7u32; n]).unwrap();
    let mut dst = e.alloc::<u32>(n).unwrap();
    let t = time(e, || {}, || e.copy(&src, &mut dst).unwrap());
    let copy_gbs = 2.0 * (n * 4) as f64 / (t.0 * 1e-3) / 1e9;
    report("copy_1GiB", n, t, &format!("{copy_gbs:.0} GB/s (read+write)"));

    // Scan of 256M u32.
    let mut r = common::rng(9, n);
    let input = e.upload(&(0..n).map(|_| r.random_range(0..4u32)).collect::<Vec<_>>()).unwrap();
    let mut out = e.alloc::<u32>(n + 1).unwrap();
    let t = time(e, || {}, || e.exclusive_scan(&input, &mut out).unwrap());
    let gbs = 2.0 * (n * 4) as f64 / (t.0 * 1e-3) / 1e9;
    report("exclusive_scan_u32", n, t, &format!("{gbs:.0} GB/s = {:.0}% of copy", 100.0 * gbs / copy_gbs));

    // Reduction of 256M f32 (read-only).
    let f = e.upload(&vec![0.5f32; n]).unwrap();
    let mut s = e.alloc::<f32>(1).unwrap();
    let t = time(e, || {}, || e.reduce(&f, ReduceOp::Sum, &mut s).unwrap());
    let gbs = (n * 4) as f64 / (t.0 * 1e-3) / 1e9;
    report("reduce_sum_f32", n, t, &format!("{gbs:.0} GB/s (read)"));
    drop((src, dst, input, out, f));

    // Compaction of 64M u64 at 50%, gather of 64M u32 by a random permutation.
    let m = 1usize << 26;
    let vals = e.upload(&random_u64(m, 3)).unwrap();
    let flags = e.upload(&(0..m).map(|i| (i % 2) as u32).collect::<Vec<_>>()).unwrap();
    let (mut cout, mut count) = (e.alloc::<u64>(m).unwrap(), e.alloc::<u32>(1).unwrap());
    let t = time(e, || {}, || e.compact(&vals, &flags, &mut cout, &mut count).unwrap());
    let gbs = (m * (8 + 4) + m / 2 * 8) as f64 / (t.0 * 1e-3) / 1e9;
    report("compact_u64_half", m, t, &format!("{gbs:.0} GB/s"));
    drop((vals, flags, cout, count));

    // Hilbert and Morton keys of 64M f32 points: 12 B read + 8 B written per point.
    let pts = |seed| {
        let mut r = common::rng(seed, m);
        e.upload(&(0..m).map(|_| r.random_range(0.0f32..1.0)).collect::<Vec<_>>()).unwrap()
    };
    let (x, y, z) = (pts(4), pts(5), pts(6));
    let mut keys = e.alloc::<u64>(m).unwrap();
    let bbox = Aabb::cube(0.0f32, 1.0).unwrap();
    let one_level = CudaExecutor::with_policy(e.ordinal(), Policy { hilbert_two_level: false, ..*e.policy() }).unwrap();
    for (name, curve, ex) in [
        ("hilbert", Curve::Hilbert, e),
        ("hilbert_one_level", Curve::Hilbert, &one_level),
        ("morton", Curve::Morton, e),
    ] {
        let mapper = KeyMapper::<f32, u64>::new(bbox, curve);
        if std::ptr::eq(ex, e) {
            let t = time(e, || {}, || e.sfc_keys(&x, &y, &z, &mapper, &mut keys).unwrap());
            let gbs = (m * 20) as f64 / (t.0 * 1e-3) / 1e9;
            report(
                &format!("sfc_keys_{name}_f32"),
                m,
                t,
                &format!("{gbs:.0} GB/s = {:.0}% of copy", 100.0 * gbs / copy_gbs),
            );
        } else {
            let (x1, y1, z1) = (
                ex.upload(&e.download(&x).unwrap()).unwrap(),
                ex.upload(&e.download(&y).unwrap()).unwrap(),
                ex.upload(&e.download(&z).unwrap()).unwrap(),
            );
            let mut k1 = ex.alloc::<u64>(m).unwrap();
            let t = time(ex, || {}, || ex.sfc_keys(&x1, &y1, &z1, &mapper, &mut k1).unwrap());
            let gbs = (m * 20) as f64 / (t.0 * 1e-3) / 1e9;
            report(
                &format!("sfc_keys_{name}_f32"),
                m,
                t,
                &format!("{gbs:.0} GB/s = {:.0}% of copy", 100.0 * gbs / copy_gbs),
            );
        }
    }
    drop((x, y, z, keys, one_level));

    // Gather of 64M u32 by a random permutation.
    let mut perm: Vec<u32> = (0..m as u32).collect();
    rand::seq::SliceRandom::shuffle(&mut perm[..], &mut common::rng(7, m));
    let (idx, src) = (e.upload(&perm).unwrap(), e.upload(&vec![1u32; m]).unwrap());
    let mut dst = e.alloc::<u32>(m).unwrap();
    let t = time(e, || {}, || e.gather(&src, &idx, &mut dst).unwrap());
    report("gather_u32_random", m, t, &format!("{:.0} GB/s (12 B per element)", (m * 12) as f64 / (t.0 * 1e-3) / 1e9));
    drop((idx, src, dst));

    // Radix sort: 16M and 64M pairs, full and 63-bit keys, then policy variants.
    for n in [1usize << 24, 1 << 26] {
        bench_sort(e, "", n);
    }
    for (items, min_blocks) in [(16u32, 3u32), (12, 3), (12, 2)] {
        let p = Policy { sort_items: items, sort_min_blocks: min_blocks, ..*e.policy() };
        let ex = CudaExecutor::with_policy(e.ordinal(), p).unwrap();
        for n in [1usize << 24, 1 << 26] {
            bench_sort(&ex, &format!("[items={items},min_blocks={min_blocks}]"), n);
        }
    }
}
