//! Large inputs that take the parallel paths (parallel selection at the top levels,
//! subtree tasks, many batches), compared with the specification's naive oracle.

use orrery_balltree::{Batches, PointCloud, build_balltree, check_tree, partition_balltree};

use crate::common;

fn assert_tree_matches_oracle(points: &[f64], dim: usize, offsets: &[usize]) {
    let cloud = PointCloud::new(points, dim, Batches::from_offsets(offsets).unwrap()).unwrap();
    let tree = build_balltree(&cloud).unwrap();
    let (idx, mask) = common::naive_tree(points, dim, offsets);
    assert!(tree.indices() == idx.as_slice(), "indices differ from the oracle");
    assert!(tree.mask() == mask.as_slice(), "mask differs from the oracle");
    check_tree(&cloud, &tree).unwrap();
}

#[test]
fn one_large_cloud_uses_parallel_selection() {
    // 300k points: the first levels (300k, 150k) select in parallel.
    let n = 300_007;
    assert_tree_matches_oracle(&common::uniform(n, 3, 1), 3, &[0, n]);
}

#[test]
fn parallel_selection_breaks_massive_ties_by_index() {
    // Four values per axis: almost every comparison is a tie.
    let n = 262_145;
    assert_tree_matches_oracle(&common::quantised(n, 2, 4, 2), 2, &[0, n]);
    // All points equal: the tree is the index order.
    let p = vec![0.25f64; 200_000];
    assert_tree_matches_oracle(&p, 1, &[0, 200_000]);
}

#[test]
fn many_small_batches() {
    let sizes = (0..5000).map(|b| 1 + (b * 7919) % 23);
    let offsets: Vec<usize> = std::iter::once(0)
        .chain(sizes.scan(0, |a, s| {
            *a += s;
            Some(*a)
        }))
        .collect();
    let n = offsets[offsets.len() - 1];
    assert_tree_matches_oracle(&common::uniform(n, 4, 3), 4, &offsets);
}

#[test]
fn large_partition_matches_oracle() {
    let n = 250_000;
    let p = common::uniform(n, 3, 4);
    let cloud = PointCloud::single(&p, 3).unwrap();
    for target in [0, 1, 3] {
        let ours = partition_balltree(&cloud, target).unwrap();
        assert!(ours.order() == common::naive_partition(&p, 3, &[0, n], target).as_slice(), "target {target}");
    }
}

#[test]
fn batches_too_large_for_the_kept_scratch() {
    // Two batches of 250k 16-D f64 points (272 bytes of scratch per point, 68 MB per
    // batch, above the 64 MiB a thread keeps) on a pool of two threads, so each thread
    // builds one batch in a buffer of its own. Each batch alone must give the same tree.
    let (n, dim) = (250_000, 16);
    let p = common::uniform(2 * n, dim, 5);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let cloud = PointCloud::new(&p, dim, Batches::from_offsets(&[0, n, 2 * n]).unwrap()).unwrap();
    let tree = pool.install(|| build_balltree(&cloud)).unwrap();
    check_tree(&cloud, &tree).unwrap();
    let slots = tree.indices().len() / 2;
    for b in 0..2 {
        let alone = build_balltree(&PointCloud::single(&p[b * n * dim..(b + 1) * n * dim], dim).unwrap()).unwrap();
        let shifted: Vec<u32> = alone.indices().iter().map(|&i| i + (b * n) as u32).collect();
        assert!(tree.indices()[b * slots..(b + 1) * slots] == shifted[..], "batch {b} indices");
        assert!(tree.mask()[b * slots..(b + 1) * slots] == alone.mask()[..], "batch {b} mask");
    }
}
