//! Wall-clock timing of the CPU build on Erwin's benchmark shapes (3D uniform points),
//! for a side-by-side with the reference (`tools/time_reference.py`).
//!
//! ```text
//! cargo run --release -p orrery-balltree --example build_timing [-- repeats [workload [f64|f32 [dims]]]]
//! ```
//!
//! `workload` (say `64x16384`, or `all`) and the width (or `both`) restrict the run to
//! one row or one column, for profiling one case (`perf record`, `perf stat`,
//! cachegrind); `dims` (default 3) sets the points' dimensions.
//!
//! Prints one row per workload: batches x points per batch, then the median and the
//! minimum over the repeats (after two warm-up builds) of input validation plus build,
//! for f64 and f32 input. Uses
//! rayon's default pool (all cores; set RAYON_NUM_THREADS to change it).

use std::time::Instant;

use orrery_balltree::{Batches, PointCloud, build_balltree};
use orrery_core::Real;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const WORKLOADS: [(usize, usize); 5] = [(16, 1024), (16, 4096), (16, 16384), (64, 16384), (1, 1 << 20)];

/// Validation (finiteness, offsets) and build, as a caller pays them.
fn build<T: Real>(points: &[T], dims: usize, batches: &Batches) {
    let cloud = PointCloud::new(points, dims, batches.clone()).expect("valid cloud");
    std::hint::black_box(build_balltree(&cloud).expect("build"));
}

fn time<T: Real>(points: &[T], dims: usize, batches: &Batches, repeats: usize) -> (f64, f64) {
    for _ in 0..2 {
        build(points, dims, batches);
    }
    let mut ms: Vec<f64> = (0..repeats)
        .map(|_| {
            let t = Instant::now();
            build(points, dims, batches);
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    (ms[ms.len() / 2], ms[0])
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let repeats = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(11);
    let only = args.get(2).map(String::as_str);
    let only = only.filter(|&w| w != "all");
    let width = args.get(3).map(String::as_str);
    let dims: usize = args.get(4).and_then(|a| a.parse().ok()).unwrap_or(3);
    println!(
        "orrery-balltree CPU build, {dims}D uniform, {} rayon threads, {repeats} repeats",
        rayon::current_num_threads()
    );
    println!("{:>14} {:>12} {:>10} {:>12} {:>10}", "workload", "f64 median", "f64 min", "f32 median", "f32 min");
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for (b, n) in WORKLOADS {
        let name = format!("{b}x{n}");
        if only.is_some_and(|w| w != name) {
            continue;
        }
        let points: Vec<f64> = (0..b * n * dims).map(|_| rng.random::<f64>()).collect();
        let narrow: Vec<f32> = points.iter().map(|&v| v as f32).collect();
        let offsets: Vec<usize> = (0..=b).map(|i| i * n).collect();
        let batches = Batches::from_offsets(&offsets).expect("valid offsets");
        let skip = (f64::NAN, f64::NAN);
        let (m64, lo64) = if width == Some("f32") { skip } else { time(&points, dims, &batches, repeats) };
        let (m32, lo32) = if width == Some("f64") { skip } else { time(&narrow, dims, &batches, repeats) };
        println!("{name:>14} {m64:>9.2} ms {lo64:>7.2} ms {m32:>9.2} ms {lo32:>7.2} ms");
    }
}
