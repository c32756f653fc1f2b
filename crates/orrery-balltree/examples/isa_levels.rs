//! The CPU build at each instruction-set level, interleaved build by build in one process
//! (a machine's speed drifts between processes; interleaving puts the drift on every
//! level alike). See ADR 0009.
//!
//! ```text
//! cargo run --release -p orrery-balltree --example isa_levels [-- rounds]
//! ```
//!
//! For each workload (3D uniform points unless noted) and each width, prints the median
//! and the 10th percentile of the build time per level, and each level's median against
//! the baseline's. Levels the CPU lacks, or the crate does not compile, are left out. Runs on rayon's default pool (set
//! RAYON_NUM_THREADS to change it).

use std::fmt::Write;
use std::time::Instant;

use orrery_balltree::{Batches, PointCloud, cpu};
use orrery_core::{CpuIsa, Real};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Builds before timing starts, per level.
const WARM_UP: usize = 5;

/// Workloads: batches, points per batch, dimensions, share of the rounds.
const WORKLOADS: [(usize, usize, usize, usize); 5] =
    [(16, 1024, 3, 1), (16, 1024, 8, 1), (16, 4096, 3, 4), (16, 4096, 2, 4), (16, 16384, 3, 16)];

fn compare<T: Real>(points: &[T], dim: usize, batches: &Batches, rounds: usize) {
    let cloud = PointCloud::new(points, dim, batches.clone()).expect("valid cloud");
    let mut levels: Vec<CpuIsa> = CpuIsa::ALL.into_iter().map(cpu::build_level).collect();
    levels.dedup();
    let mut micros = vec![Vec::with_capacity(rounds); levels.len()];
    for round in 0..WARM_UP + rounds {
        for (times, &isa) in micros.iter_mut().zip(&levels) {
            let start = Instant::now();
            std::hint::black_box(cpu::build_at(&cloud, isa).expect("build"));
            if round >= WARM_UP {
                times.push(start.elapsed().as_secs_f64() * 1e6);
            }
        }
    }
    let quantiles: Vec<(f64, f64)> = micros
        .iter_mut()
        .map(|t| {
            t.sort_by(f64::total_cmp);
            (t[t.len() / 2], t[t.len() / 10])
        })
        .collect();
    let mut line = format!("{:>4} {:>2}D {:>3}x{:<6}", std::any::type_name::<T>(), dim, batches.len(), batches.size(0));
    for (&isa, &(median, p10)) in levels.iter().zip(&quantiles) {
        let change = (median / quantiles[0].0 - 1.0) * 100.0;
        let _ = write!(line, " | {isa}: {median:>8.1} us ({change:>+5.1}%), p10 {p10:>8.1}");
    }
    println!("{line}");
}

fn main() {
    let rounds: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(400);
    println!("orrery-balltree CPU build per instruction-set level, {} rayon threads", rayon::current_num_threads());
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for (b, n, dim, share) in WORKLOADS {
        let points: Vec<f64> = (0..b * n * dim).map(|_| rng.random::<f64>()).collect();
        let narrow: Vec<f32> = points.iter().map(|&v| v as f32).collect();
        let offsets: Vec<usize> = (0..=b).map(|i| i * n).collect();
        let batches = Batches::from_offsets(&offsets).expect("valid offsets");
        compare(&points, dim, &batches, (rounds / share).max(10));
        compare(&narrow, dim, &batches, (rounds / share).max(10));
    }
}
