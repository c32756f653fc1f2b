//! Leaf particle counts: two binary searches per leaf in the sorted particle keys.
//!
//! `count[i] = lower_bound(keys, K[i + 1]) - lower_bound(keys, K[i])`. The searches use
//! [`orrery_core::executor::lower_bound_one`], the halving loop every executor runs, so the
//! counts are the same integers on every device. Particles that left the box carry the
//! key `key_end` (see [`crate::input`]); no leaf interval holds it, so they are counted
//! nowhere.

use orrery_core::executor::lower_bound_one;
use rayon::prelude::*;

/// Leaves per rayon task: a leaf costs two searches, so small chunks would be all
/// overhead.
const CHUNK: usize = 4096;

/// `bounds[i] = lower_bound(sorted, leaves[i])` for every boundary `i` in `0..=L`: the
/// first particle of leaf `i` (and one past the last particle, at `i = L`).
pub fn leaf_starts(leaves: &[u64], sorted: &[u64]) -> Vec<u32> {
    let mut out = vec![0u32; leaves.len()];
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(c, chunk)| {
        for (j, o) in chunk.iter_mut().enumerate() {
            *o = lower_bound_one(sorted, leaves[c * CHUNK + j]);
        }
    });
    out
}

/// The particle count of every leaf of `leaves` (a valid leaf array) in `sorted`.
pub fn leaf_counts(leaves: &[u64], sorted: &[u64]) -> Vec<u32> {
    let starts = leaf_starts(leaves, sorted);
    starts.windows(2).map(|w| w[1] - w[0]).collect()
}
