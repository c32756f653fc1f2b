//! Times the core primitives of the wgpu executor on one adapter: the median of a few
//! repeats after a warm-up, with device timestamps where the adapter has them.
//!
//! ```text
//! cargo run --release -p orrery-backend-wgpu --example wgpu_primitives -- [N ...]
//! ```
//!
//! N defaults to 1M and 16M. The adapter follows `ORRERY_WGPU_ADAPTER`,
//! `ORRERY_WGPU_BACKEND` and `ORRERY_WGPU_SUBGROUPS`. This is a quick look, not the
//! benchmark suite (`cargo xtask bench`), and never a test.

use std::time::Duration;

use orrery_backend_wgpu::WgpuExecutor;
use orrery_core::sfc::{Curve, KeyMapper};
use orrery_core::{Aabb, Executor, ReduceOp, Result};

const REPEATS: usize = 7;

/// Median device time of `f` over [`REPEATS`] runs after one warm-up run.
fn time(exec: &WgpuExecutor, mut f: impl FnMut() -> Result<()>) -> Result<Duration> {
    f()?;
    exec.synchronize()?;
    let mut times = Vec::with_capacity(REPEATS);
    for _ in 0..REPEATS {
        let start = exec.mark()?;
        f()?;
        let end = exec.mark()?;
        times.push(exec.elapsed(&start, &end)?);
    }
    times.sort_unstable();
    Ok(times[REPEATS / 2])
}

/// A cheap deterministic sequence (splitmix64).
fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn report(what: &str, n: usize, t: Duration) {
    let rate = n as f64 / t.as_secs_f64() / 1e9;
    println!("{what:<28} {n:>10} {:>10.3} ms {rate:>8.3} G/s", t.as_secs_f64() * 1e3);
}

fn run(exec: &WgpuExecutor, n: usize) -> Result<()> {
    let keys: Vec<u64> = (0..n as u64).map(|i| mix(i) >> 1).collect();
    let small: Vec<u32> = (0..n as u64).map(|i| (mix(i) & 3) as u32).collect();
    let coords: Vec<f32> = (0..n as u64).map(|i| (mix(i) >> 40) as f32 / (1u64 << 24) as f32).collect();

    let key_src = exec.upload(&keys)?;
    let mut k = exec.alloc::<u64>(n)?;
    let mut v = exec.alloc::<u32>(n)?;
    report(
        "sort_pairs 0..63",
        n,
        time(exec, || {
            exec.copy(&key_src, &mut k)?;
            exec.iota(&mut v, 0)?;
            exec.sort_pairs(&mut k, &mut v, 0..63)
        })?,
    );
    report(
        "copy + iota (sort overhead)",
        n,
        time(exec, || {
            exec.copy(&key_src, &mut k)?;
            exec.iota(&mut v, 0)
        })?,
    );

    let counts = exec.upload(&small)?;
    let mut offsets = exec.alloc::<u32>(n + 1)?;
    report("exclusive_scan u32", n, time(exec, || exec.exclusive_scan(&counts, &mut offsets))?);

    let x = exec.upload(&coords)?;
    let mut sum = exec.alloc::<f32>(1)?;
    report("reduce f32 sum", n, time(exec, || exec.reduce(&x, ReduceOp::Sum, &mut sum))?);

    let mut out = exec.alloc::<u64>(n)?;
    let mut count = exec.alloc::<u32>(1)?;
    report("compact u64 (3/4 kept)", n, time(exec, || exec.compact(&key_src, &counts, &mut out, &mut count))?);

    // Uniform positions in the unit cube, three separate arrays (as the key kernels read them).
    let axis = |a: u64| -> Vec<f32> {
        (0..n as u64).map(|i| (mix(i + a * n as u64) >> 40) as f32 / (1u64 << 24) as f32).collect()
    };
    let (y, z) = (exec.upload(&axis(1))?, exec.upload(&axis(2))?);
    let mut sfc = exec.alloc::<u64>(n)?;
    for (curve, what) in [(Curve::Hilbert, "sfc_keys hilbert f32"), (Curve::Morton, "sfc_keys morton f32")] {
        let mapper = KeyMapper::<f32, u64>::new(Aabb::cube(0.0, 1.0)?, curve);
        report(what, n, time(exec, || exec.sfc_keys(&x, &y, &z, &mapper, &mut sfc))?);
    }

    exec.iota(&mut v, 0)?;
    report("gather u64", n, time(exec, || exec.gather(&key_src, &v, &mut out))?);
    Ok(())
}

fn main() -> Result<()> {
    let sizes: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let sizes = if sizes.is_empty() { vec![1 << 20, 1 << 24] } else { sizes };
    let exec = WgpuExecutor::new()?;
    println!("{} (markers: {})", exec.name(), if exec.capabilities().timestamps { "device" } else { "host" });
    for n in sizes {
        run(&exec, n)?;
    }
    Ok(())
}
