//! Cornerstone's published rebalance example (Keller et al. 2023; cstone's
//! `rebalanceDecision` test): the root split once, its first child split again.

use orrery_core::sfc::KeyLayout;
use orrery_tree_build::Leaves;
use orrery_tree_build::rebalance::{leaf_count_ops, rebalance};

/// The 15 leaves: the eight children of the root's first child, then the root's other
/// seven children.
fn example_tree() -> Leaves {
    let layout = KeyLayout::octree::<u64>();
    let (l1, l2) = (1u64 << 60, 1u64 << 57);
    let mut keys: Vec<u64> = (0..8).map(|i| i * l2).collect();
    keys.extend((1..8).map(|i| i * l1));
    keys.push(1 << 63);
    Leaves::from_keys(keys, layout).unwrap()
}

#[test]
fn cornerstone_rebalance_example() {
    let tree = example_tree();
    let counts = [1, 1, 1, 0, 0, 0, 0, 0, 2, 3, 4, 5, 6, 7, 8];
    let ops = leaf_count_ops(&tree, &counts, 4).unwrap();
    assert_eq!(ops, [1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 8, 8, 8, 8]);
    // Applied: the first group merges back into the root's first child and the last
    // four children split, 1 + 3 + 4 * 8 leaves.
    let next = rebalance(&tree, &ops).unwrap();
    assert!(next.changed);
    assert_eq!(next.leaves.len(), 36);
    assert_eq!(next.leaves.keys()[..5], [0, 1 << 60, 2 << 60, 3 << 60, 4 << 60]);
    assert_eq!(next.leaves.keys()[5] - next.leaves.keys()[4], 1 << 57);
    assert_eq!(next.offsets[..5], [0, 1, 1, 1, 1]);
}

#[test]
fn multi_level_jumps_follow_the_thresholds() {
    let layout = KeyLayout::octree::<u64>();
    let root = Leaves::root(layout);
    for (count, op) in [(16, 1), (17, 8), (128, 8), (129, 64), (1024, 64), (1025, 512), (8192, 512), (8193, 4096)] {
        assert_eq!(leaf_count_ops(&root, &[count], 16).unwrap(), [op], "count {count}");
    }
    // Binary trees jump up to 12 levels, by doubling thresholds.
    let root = Leaves::root(KeyLayout::binary::<u64>());
    for (count, op) in [(16, 1), (17, 2), (33, 4), (16 * 2048 + 1, 4096)] {
        assert_eq!(leaf_count_ops(&root, &[count], 16).unwrap(), [op], "binary count {count}");
    }
}

#[test]
fn no_split_below_the_key_resolution() {
    // A leaf at level 20 may split once (to 21) but not by 64.
    let layout = KeyLayout::octree::<u64>();
    let mut keys = vec![0u64, 8];
    let mut k = 8u64;
    while k < 1 << 63 {
        // Pad with the largest aligned cells up to the end.
        let size = 1u64 << (k.trailing_zeros().min(63) / 3 * 3);
        let size = if k + size > 1 << 63 { 1u64 << ((((1u64 << 63) - k).ilog2()) / 3 * 3) } else { size };
        k += size;
        keys.push(k);
    }
    let tree = Leaves::from_keys(keys, layout).unwrap();
    assert_eq!(tree.level(0).unwrap(), 20);
    let mut counts = vec![0u32; tree.len()];
    counts[0] = 1_000_000;
    assert_eq!(leaf_count_ops(&tree, &counts, 1).unwrap()[0], 8);
}
