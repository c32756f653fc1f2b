//! Shared test helpers: a naive oracle of the tree and the partition (a full sort per
//! node, written from the specification, sharing no code with the crate), seeded point
//! generators, and f32 to f64 widening. Used by the CPU tests and, through `gpu_common`,
//! by the GPU tests.

#![allow(dead_code)]

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The split dimension of a set of points: largest f64 spread, ties to the lowest.
fn spread_dim(points: &[f64], dim: usize, ids: &[u32]) -> usize {
    let mut best = (0, 0.0f64);
    for d in 0..dim {
        let vals = ids.iter().map(|&i| points[i as usize * dim + d]);
        let lo = vals.clone().fold(f64::INFINITY, f64::min);
        let hi = vals.fold(f64::NEG_INFINITY, f64::max);
        if hi - lo > best.1 {
            best = (d, hi - lo);
        }
    }
    best.0
}

/// Sorts ids by (coordinate on the split dimension, index) and cuts at floor(m / 2).
fn split(points: &[f64], dim: usize, mut ids: Vec<u32>) -> (Vec<u32>, Vec<u32>) {
    let d = spread_dim(points, dim, &ids);
    ids.sort_by(|&a, &b| {
        points[a as usize * dim + d].partial_cmp(&points[b as usize * dim + d]).unwrap().then(a.cmp(&b))
    });
    let right = ids.split_off(ids.len() / 2);
    (ids, right)
}

fn naive_node(points: &[f64], dim: usize, ids: Vec<u32>, levels: u32, idx: &mut [u32], mask: &mut [bool]) {
    if levels == 0 {
        let mut ids = ids;
        ids.sort_unstable();
        match ids.as_slice() {
            [a] => {
                idx.copy_from_slice(&[*a, *a]);
                mask.copy_from_slice(&[true, false]);
            }
            [a, b] => {
                idx.copy_from_slice(&[*a, *b]);
                mask.copy_from_slice(&[true, true]);
            }
            _ => panic!("leaf of {} points", ids.len()),
        }
        return;
    }
    let (l, r) = split(points, dim, ids);
    let half = idx.len() / 2;
    let (il, ir) = idx.split_at_mut(half);
    let (ml, mr) = mask.split_at_mut(half);
    naive_node(points, dim, l, levels - 1, il, ml);
    naive_node(points, dim, r, levels - 1, ir, mr);
}

/// Depth of the tree of n points, from its definition: ceil(log2 n) - 1, 0 for n = 1.
pub fn depth(n: usize) -> u32 {
    let mut l = 0u32;
    while (1usize << (l + 1)) < n {
        l += 1;
    }
    l
}

/// The tree by the specification: (indices, mask).
pub fn naive_tree(points: &[f64], dim: usize, offsets: &[usize]) -> (Vec<u32>, Vec<bool>) {
    let (mut idx, mut mask) = (Vec::new(), Vec::new());
    for w in offsets.windows(2) {
        let n = w[1] - w[0];
        let l = depth(n);
        let (mut bi, mut bm) = (vec![0u32; 2 << l], vec![false; 2 << l]);
        naive_node(points, dim, (w[0] as u32..w[1] as u32).collect(), l, &mut bi, &mut bm);
        idx.extend(bi);
        mask.extend(bm);
    }
    (idx, mask)
}

fn naive_partition_node(points: &[f64], dim: usize, ids: Vec<u32>, levels: u32, out: &mut Vec<u32>) {
    if levels == 0 || ids.len() <= 1 {
        let mut ids = ids;
        ids.sort_unstable();
        out.extend(ids);
        return;
    }
    let (l, r) = split(points, dim, ids);
    naive_partition_node(points, dim, l, levels - 1, out);
    naive_partition_node(points, dim, r, levels - 1, out);
}

/// Erwin's partition by the specification.
pub fn naive_partition(points: &[f64], dim: usize, offsets: &[usize], target: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for w in offsets.windows(2) {
        naive_partition_node(points, dim, (w[0] as u32..w[1] as u32).collect(), target, &mut out);
    }
    out
}

/// The same values as f64 (exact): f64 input that must give the tree of the f32 input.
pub fn widen(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&x| f64::from(x)).collect()
}

/// `n * dim` uniform coordinates in [0, 1).
pub fn uniform(n: usize, dim: usize, seed: u64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n * dim).map(|_| rng.random::<f64>()).collect()
}

/// `n * dim` coordinates from `levels` values: many ties.
pub fn quantised(n: usize, dim: usize, levels: u32, seed: u64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n * dim).map(|_| f64::from(rng.random_range(0..levels))).collect()
}
