//! Wall-clock timing of the CPU `partition_balltree` beside the full build, on 3D
//! uniform points (Erwin partitions every layer's rotated points; see
//! docs/performance/balltree.md).
//!
//! ```text
//! cargo run --release -p orrery-balltree --example partition_timing [-- repeats]
//! ```
//!
//! For each workload and width prints the median over the repeats (after two warm-ups)
//! of a partition into balls of 128 points (target level `log2(n) - 7`) and of the
//! build. Uses rayon's default pool (set RAYON_NUM_THREADS to change it).

use std::time::Instant;

use orrery_balltree::{Batches, PointCloud, build_balltree, partition_balltree};
use orrery_core::Real;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Workloads: batches, points per batch.
const WORKLOADS: [(usize, usize); 3] = [(16, 1024), (16, 4096), (16, 16384)];

/// Points per ball of the partition.
const BALL: usize = 128;

/// Median milliseconds of `run` over `repeats` calls after two warm-ups.
fn median_ms(repeats: usize, mut run: impl FnMut()) -> f64 {
    run();
    run();
    let mut ms: Vec<f64> = (0..repeats)
        .map(|_| {
            let t = Instant::now();
            run();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    ms[ms.len() / 2]
}

fn row<T: Real>(points: &[T], batches: &Batches, n: usize, repeats: usize) -> (f64, f64) {
    let cloud = PointCloud::new(points, 3, batches.clone()).expect("valid cloud");
    let level = (n / BALL).ilog2();
    let partition = median_ms(repeats, || {
        std::hint::black_box(partition_balltree(&cloud, level).expect("partition"));
    });
    let build = median_ms(repeats, || {
        std::hint::black_box(build_balltree(&cloud).expect("build"));
    });
    (partition, build)
}

fn main() {
    let repeats: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(21);
    println!(
        "orrery-balltree CPU partition into balls of {BALL} against the build, 3D uniform, {} rayon threads, \
         median of {repeats}",
        rayon::current_num_threads()
    );
    println!(
        "{:>10} {:>14} {:>10} {:>14} {:>10}",
        "workload", "f64 partition", "f64 build", "f32 partition", "f32 build"
    );
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for (b, n) in WORKLOADS {
        let points: Vec<f64> = (0..b * n * 3).map(|_| rng.random::<f64>()).collect();
        let narrow: Vec<f32> = points.iter().map(|&v| v as f32).collect();
        let offsets: Vec<usize> = (0..=b).map(|i| i * n).collect();
        let batches = Batches::from_offsets(&offsets).expect("valid offsets");
        let (p64, b64) = row(&points, &batches, n, repeats);
        let (p32, b32) = row(&narrow, &batches, n, repeats);
        println!("{:>10} {p64:>11.3} ms {b64:>7.3} ms {p32:>11.3} ms {b32:>7.3} ms", format!("{b}x{n}"));
    }
}
