//! Erwin's leaf layout and mask on small hand-made inputs, and the layout arithmetic.

use orrery_balltree::{
    BallTree, Batches, Level, PointCloud, TreeLayout, build_balltree, check_tree, partition::group_sizes,
    partition_balltree, tree_depth, tree_slots,
};

fn tree_of(points: &[f64], dim: usize, offsets: &[usize]) -> BallTree {
    let cloud = PointCloud::new(points, dim, Batches::from_offsets(offsets).unwrap()).unwrap();
    let tree = build_balltree(&cloud).unwrap();
    check_tree(&cloud, &tree).unwrap();
    tree
}

/// The slots as text: `index` for a real slot, `(index)` for padding, `|` between leaves.
fn dump(tree: &BallTree) -> String {
    let mut out = Vec::new();
    for b in 0..tree.num_batches() {
        let (idx, mask) = tree.batch(b);
        let leaves: Vec<String> = idx
            .chunks(2)
            .zip(mask.chunks(2))
            .map(|(i, m)| {
                let slot = |k: usize| if m[k] { i[k].to_string() } else { format!("({})", i[k]) };
                format!("{} {}", slot(0), slot(1))
            })
            .collect();
        out.push(leaves.join(" | "));
    }
    out.join(" || ")
}

#[test]
fn depth_and_slots_follow_next_power_of_two() {
    let expected = [(1, 0, 2), (2, 0, 2), (3, 1, 4), (4, 1, 4), (5, 2, 8), (8, 2, 8), (9, 3, 16), (1000, 9, 1024)];
    for (n, depth, slots) in expected {
        assert_eq!((tree_depth(n), tree_slots(n)), (depth, slots), "n = {n}");
    }
    assert_eq!(tree_slots(1 << 20), 1 << 20);
    assert_eq!(tree_slots((1 << 20) + 1), 1 << 21);
}

#[test]
fn single_point_batch_is_duplicated_and_masked() {
    let tree = tree_of(&[0.5, 0.5], 2, &[0, 1]);
    assert_eq!(tree.indices(), &[0, 0]);
    assert_eq!(tree.mask(), &[true, false]);
    // As a later batch, the index is global.
    let tree = tree_of(&[0.0, 1.0, 2.0], 1, &[0, 2, 3]);
    assert_eq!(dump(&tree), "0 1 || 2 (2)");
}

#[test]
fn two_and_three_points() {
    // A leaf of two lists them by ascending index, whatever their coordinates.
    assert_eq!(dump(&tree_of(&[1.0, 0.0], 1, &[0, 2])), "0 1");
    // Three points: the left child gets floor(3/2) = 1 point, padded.
    assert_eq!(dump(&tree_of(&[0.9, 0.1, 0.5], 1, &[0, 3])), "1 (1) | 0 2");
}

#[test]
fn five_points_on_a_line_spread_padding_over_the_leaves() {
    // Root 2 | 3, left 1 | 1, right 1 | 2: padding lands in leaves 0, 1 and 2.
    let tree = tree_of(&[0.4, 0.0, 0.3, 0.1, 0.2], 1, &[0, 5]);
    assert_eq!(dump(&tree), "1 (1) | 3 (3) | 4 (4) | 0 2");
    assert_eq!(tree.indices(), &[1, 1, 3, 3, 4, 4, 0, 2]);
    assert_eq!(tree.mask(), &[true, false, true, false, true, false, true, true]);
    assert_eq!(tree.permutation(), vec![1, 3, 4, 0, 2]);
    assert_eq!(tree.inverse_permutation(), vec![3, 0, 4, 1, 2]);
    assert_eq!(tree.slot_of_point(), vec![6, 0, 7, 2, 4]);
}

#[test]
fn seven_points_pad_once() {
    let x = [6.0, 5.0, 4.0, 3.0, 2.0, 1.0, 0.0];
    // Root 3 | 4; left 1 | 2; right 2 | 2.
    assert_eq!(dump(&tree_of(&x, 1, &[0, 7])), "6 (6) | 4 5 | 2 3 | 0 1");
}

#[test]
fn power_of_two_has_no_padding() {
    let x: Vec<f64> = (0..8).map(|i| f64::from(7 - i)).collect();
    let tree = tree_of(&x, 1, &[0, 8]);
    assert_eq!(dump(&tree), "6 7 | 4 5 | 2 3 | 0 1");
    assert_eq!(tree.padding_ratio(), 0.0);
}

#[test]
fn split_dimension_is_the_largest_spread() {
    // Spread 1 in x, 10 in y: the root splits on y.
    let p = [0.0, 0.0, 1.0, 10.0, 0.5, 1.0, 0.2, 9.0];
    assert_eq!(dump(&tree_of(&p, 2, &[0, 4])), "0 2 | 1 3");
    // Equal spreads: the lowest dimension (x) wins.
    let p = [0.0, 1.0, 1.0, 0.0, 0.1, 0.9, 0.9, 0.1];
    assert_eq!(dump(&tree_of(&p, 2, &[0, 4])), "0 2 | 1 3");
    let p = [0.0, 1.0, 1.0, 0.0, 0.9, 0.1, 0.1, 0.9];
    assert_eq!(dump(&tree_of(&p, 2, &[0, 4])), "0 3 | 1 2");
}

#[test]
fn ties_break_by_point_index() {
    // All points equal: every split is by index.
    assert_eq!(dump(&tree_of(&[1.0; 5], 1, &[0, 5])), "0 (0) | 1 (1) | 2 (2) | 3 4");
    // -0.0 and 0.0 compare equal.
    assert_eq!(dump(&tree_of(&[0.0, -0.0, 0.0, -0.0], 1, &[0, 4])), "0 1 | 2 3");
    // A tie at the median on the split dimension.
    let p = [0.5, 0.0, 0.5, 1.0, 0.0, 0.5, 1.0, 0.3];
    assert_eq!(dump(&tree_of(&p, 2, &[0, 4])), "0 2 | 1 3");
}

#[test]
fn batches_are_concatenated_in_order() {
    let x = [0.0, 3.0, 1.0, 2.0, 10.0, 12.0, 11.0, 20.0];
    let tree = tree_of(&x, 1, &[0, 4, 7, 8]);
    assert_eq!(dump(&tree), "0 2 | 1 3 || 4 (4) | 5 6 || 7 (7)");
    assert_eq!(tree.layout().slot_offsets(), &[0, 4, 8, 10]);
    assert_eq!(tree.layout().depths(), &[1, 1, 0]);
    assert_eq!(tree.permutation(), vec![0, 2, 1, 3, 4, 5, 6, 7]);
    assert!((tree.padding_ratio() - 0.2).abs() < 1e-12);
}

#[test]
fn levels_count_from_the_root_or_from_the_slots() {
    let layout = TreeLayout::new(&Batches::from_offsets(&[0usize, 5, 7]).unwrap()).unwrap();
    assert_eq!(layout.slot_offsets(), &[0, 8, 10]);
    assert_eq!(layout.max_level(), 1);
    assert_eq!(layout.ball_offsets(Level::Depth(0)).unwrap(), vec![0, 1, 2]);
    assert_eq!(layout.ball_offsets(Level::Depth(1)).unwrap(), vec![0, 2, 4]);
    assert_eq!(layout.ball_offsets(Level::Height(0)).unwrap(), vec![0, 8, 10]);
    assert_eq!(layout.ball_offsets(Level::Height(1)).unwrap(), vec![0, 4, 5]);
    assert_eq!(layout.coarse_batch_index(Level::Height(1)).unwrap(), vec![0, 0, 0, 0, 1]);
    assert_eq!(layout.coarse_batch_index(Level::Depth(1)).unwrap(), vec![0, 0, 1, 1]);
    let balls: Vec<u32> = (0..10).map(|s| layout.ball_of_slot(s, Level::Height(1)).unwrap()).collect();
    assert_eq!(balls, vec![0, 0, 1, 1, 2, 2, 3, 3, 4, 4]);
    let balls: Vec<u32> = (0..10).map(|s| layout.ball_of_slot(s, Level::Depth(1)).unwrap()).collect();
    assert_eq!(balls, vec![0, 0, 0, 0, 1, 1, 1, 1, 2, 3]);
    assert_eq!(layout.batch_of_slot(9).unwrap(), 1);
    assert!(layout.ball_of_slot(0, Level::Height(2)).is_err());
    assert!(layout.ball_of_slot(10, Level::Height(0)).is_err());
}

#[test]
fn equal_batches_make_depth_and_height_coincide() {
    let layout = TreeLayout::new(&Batches::from_offsets(&[0usize, 100, 200, 300]).unwrap()).unwrap();
    let l = layout.depths()[0];
    for h in 0..=l + 1 {
        assert_eq!(
            layout.ball_offsets(Level::Height(h)).unwrap(),
            layout.ball_offsets(Level::Depth(l + 1 - h)).unwrap()
        );
    }
}

#[test]
fn partition_groups_follow_erwin_midpoints() {
    let mut sizes = Vec::new();
    group_sizes(7, 2, &mut sizes);
    assert_eq!(sizes, vec![1, 2, 2, 2]);
    sizes.clear();
    group_sizes(3, 5, &mut sizes);
    assert_eq!(sizes, vec![1, 1, 1], "a group of one point is not split further");
    sizes.clear();
    group_sizes(10, 0, &mut sizes);
    assert_eq!(sizes, vec![10]);

    let x = [6.0, 5.0, 4.0, 3.0, 2.0, 1.0, 0.0, 7.0, 8.0];
    let cloud = PointCloud::new(&x, 1, Batches::from_offsets(&[0usize, 7, 9]).unwrap()).unwrap();
    let p = partition_balltree(&cloud, 1).unwrap();
    assert_eq!(p.order(), &[4, 5, 6, 0, 1, 2, 3, 7, 8]);
    assert_eq!(p.group_offsets(), &[0, 3, 7, 8, 9]);
    assert_eq!(p.batch_group_offsets(), &[0, 2, 4]);
    assert_eq!(p.inverse().unwrap(), vec![3, 4, 5, 6, 0, 1, 2, 7, 8]);
    // Level 0 keeps every batch whole, by index.
    assert_eq!(partition_balltree(&cloud, 0).unwrap().order(), &[0, 1, 2, 3, 4, 5, 6, 7, 8]);
}
