//! The CPU build in a loop whose caller works between builds (a busy wait of 0 to 3 ms),
//! through a `CpuExecutor` pool whose threads spin for 0 or 1000 us after each call
//! (ADR 0008): what the keep-warm spin saves when the pool's threads would otherwise
//! have gone to sleep.
//!
//! ```text
//! cargo run --release -p orrery-balltree --example caller_gap [-- threads]
//! ```
//!
//! Prints, for 16 batches of 1024 and of 4096 uniform 3D f64 points, two rounds of
//! both spins: the median build time (us) for each caller gap, over 200 builds after
//! 50 unrecorded ones.

use std::fmt::Write;
use std::time::{Duration, Instant};

use orrery_balltree::{Batches, PointCloud, build_balltree};
use orrery_core::CpuExecutor;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const GAPS_US: [u64; 5] = [0, 100, 300, 1000, 3000];

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Busy-waits `us` microseconds, as a caller doing other work would keep its core.
fn busy(us: u64) {
    let t = Instant::now();
    while t.elapsed() < Duration::from_micros(us) {
        std::hint::spin_loop();
    }
}

fn main() {
    let threads: usize = std::env::args().nth(1).map_or_else(
        || std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
        |s| s.parse().expect("threads: a positive integer"),
    );
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for points in [1024usize, 4096] {
        let sets: Vec<Vec<f64>> = (0..3).map(|_| (0..16 * points * 3).map(|_| rng.random::<f64>()).collect()).collect();
        let offsets: Vec<usize> = (0..=16).map(|b| b * points).collect();
        let batches = Batches::from_offsets(&offsets).expect("valid offsets");
        let clouds: Vec<_> =
            sets.iter().map(|p| PointCloud::new(p, 3, batches.clone()).expect("valid cloud")).collect();
        for round in 0..2 {
            for spin_us in [0u64, 1000] {
                let exec = CpuExecutor::with_threads(threads)
                    .and_then(|e| e.with_spin(Duration::from_micros(spin_us)))
                    .expect("a pool of its own");
                let mut line = format!("16x{points} f64 round {round} spin {spin_us:4} us:");
                for gap in GAPS_US {
                    let mut times: Vec<f64> = (0..250)
                        .map(|i| {
                            busy(gap);
                            let cloud = &clouds[i % clouds.len()];
                            let t = Instant::now();
                            exec.install(|| drop(build_balltree(cloud).expect("build")));
                            t.elapsed().as_secs_f64() * 1e6
                        })
                        .collect();
                    let _ = write!(line, "  gap {gap:4} us: {:7.1}", median(&mut times[50..]));
                }
                println!("{line}");
            }
        }
    }
}
