//! Deterministic benchmark inputs (seeded, so every executor and run sees the same data).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Uniform points in the unit cube, structure of arrays.
pub fn uniform_points(n: usize, seed: u64) -> [Vec<f32>; 3] {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut axis = || (0..n).map(|_| rng.random::<f32>()).collect::<Vec<f32>>();
    [axis(), axis(), axis()]
}

/// Uniformly random 64-bit keys.
pub fn random_keys(n: usize, seed: u64) -> Vec<u64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| rng.random::<u64>()).collect()
}

/// Random u32 values below `bound` (scan inputs: small counts, like leaf counts).
pub fn random_counts(n: usize, bound: u32, seed: u64) -> Vec<u32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| rng.random_range(0..bound)).collect()
}

/// "1M", "16M", "256M" for powers of two of mebi-elements, else the number.
pub fn size_label(n: usize) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) { format!("{}M", n >> 20) } else { n.to_string() }
}
