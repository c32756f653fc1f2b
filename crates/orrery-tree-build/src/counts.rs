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
///
/// Each chunk of boundaries searches its first one in all of `sorted` and every next one
/// by galloping from the previous result (doubling steps, then halving inside the last
/// step): a boundary costs about `2 log2(leaf count)` probes near the previous one instead
/// of `log2(N)` probes spread over the whole array. The lower bound of a sorted array is
/// unique, so the result is the same integers as [`lower_bound_one`] everywhere.
pub fn leaf_starts(leaves: &[u64], sorted: &[u64]) -> Vec<u32> {
    let mut out = vec![0u32; leaves.len()];
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(c, chunk)| {
        let first = &leaves[c * CHUNK..c * CHUNK + chunk.len()];
        let mut at = lower_bound_one(sorted, first[0]) as usize;
        chunk[0] = at as u32;
        for (o, &key) in chunk[1..].iter_mut().zip(&first[1..]) {
            at = gallop(sorted, at, key);
            *o = at as u32;
        }
    });
    out
}

/// The lower bound of `key` in `sorted`, knowing it is at or after `from` (the lower bound
/// of a smaller key): probe `from + 1, from + 3, from + 7, ..` until a key is not less
/// than `key`, then binary search the last step.
fn gallop(sorted: &[u64], from: usize, key: u64) -> usize {
    let n = sorted.len();
    if from >= n || sorted[from] >= key {
        return from;
    }
    // Invariant: sorted[lo] < key; the answer is in (lo, hi].
    let (mut lo, mut step) = (from, 1usize);
    let mut hi = loop {
        let probe = lo + step;
        if probe >= n {
            break n;
        }
        if sorted[probe] >= key {
            break probe;
        }
        lo = probe;
        step *= 2;
    };
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if sorted[mid] < key { lo = mid } else { hi = mid }
    }
    hi
}

/// The first particle of every leaf after a rebalance pass over the same keys, from the
/// old tree's `starts` ([`leaf_starts`]) instead of a search of every boundary: a kept
/// leaf (operation 1; a merge leader too, whose first key is its group's) keeps its first
/// particle, and a split leaf searches its descendants' boundaries only within its own
/// particle range (at most a few bucket sizes), so a pass costs O(L + splits * log n_leaf)
/// rather than O(L log N). `offsets` is the exclusive scan of `ops` and `new_keys` the new
/// leaf array ([`crate::rebalance::Rebalanced`]).
pub fn carry_starts(starts: &[u32], ops: &[u32], offsets: &[u32], new_keys: &[u64], sorted: &[u64]) -> Vec<u32> {
    debug_assert_eq!(starts.len(), ops.len() + 1);
    debug_assert_eq!(offsets.len(), ops.len() + 1);
    ops.par_iter()
        .enumerate()
        .with_min_len(CHUNK)
        .flat_map_iter(|(i, &op)| {
            let (lo, hi) = (starts[i], starts[i + 1]);
            let first = offsets[i] as usize;
            let range = &sorted[lo as usize..hi as usize];
            (0..op as usize).map(move |n| if n == 0 { lo } else { lo + lower_bound_one(range, new_keys[first + n]) })
        })
        .chain(rayon::iter::once(starts[ops.len()]))
        .collect()
}

/// The particle count of every leaf of `leaves` (a valid leaf array) in `sorted`.
pub fn leaf_counts(leaves: &[u64], sorted: &[u64]) -> Vec<u32> {
    counts_of_starts(&leaf_starts(leaves, sorted))
}

/// Counts from leaf starts: `count[i] = starts[i + 1] - starts[i]`.
pub fn counts_of_starts(starts: &[u32]) -> Vec<u32> {
    starts.par_windows(2).map(|w| w[1] - w[0]).collect()
}
