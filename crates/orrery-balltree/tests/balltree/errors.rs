//! Every error path: bad input gets a typed error naming the offending value, never a
//! panic.

use orrery_balltree::{
    BallTree, Batches, Level, PointCloud, TreeLayout, Weighting, build_balltree, build_balltree_with_rotations,
    check_tree, cpu, erwin_rotation_matrix, invert_permutation,
};
use orrery_core::Error;

fn invalid_reason(e: Error, what: &str) -> String {
    match e {
        Error::InvalidArgument { what: w, reason } if w == what => reason,
        other => panic!("expected InvalidArgument for {what}, got {other:?}"),
    }
}

#[test]
fn nan_and_infinite_coordinates_name_the_first_offender() {
    let mut p = vec![0.0f32; 12];
    p[7] = f32::NAN;
    p[9] = f32::INFINITY;
    let e = PointCloud::new(&p, 3, Batches::single(4).unwrap()).unwrap_err();
    assert!(matches!(e, Error::NonFiniteValue { what: "points", index: 7, value } if value.is_nan()), "{e:?}");
    let p = [0.0f64, f64::NEG_INFINITY];
    let e = PointCloud::single(&p, 1).unwrap_err();
    assert_eq!(e, Error::NonFiniteValue { what: "points", index: 1, value: f64::NEG_INFINITY });
}

#[test]
fn empty_batches_are_rejected() {
    let r = invalid_reason(Batches::from_offsets(&[0usize, 3, 3, 5]).unwrap_err(), "batch offsets");
    assert!(r.contains("batch 1 is empty"), "{r}");
    assert_eq!(Batches::from_offsets(&[0usize]).unwrap_err(), Error::EmptyInput { what: "batch offsets", min: 2 });
    assert_eq!(Batches::single(0).unwrap_err(), Error::EmptyInput { what: "points", min: 1 });
    assert_eq!(
        Batches::from_offsets(&[0u32, 0]).unwrap_err().to_string(),
        "invalid argument batch offsets: batch 0 is empty: offsets[0] = offsets[1] = 0"
    );
    assert_eq!(Batches::from_batch_index::<u32>(&[]).unwrap_err(), Error::EmptyInput { what: "batch index", min: 1 });
    assert_eq!(PointCloud::<f32>::single(&[], 3).unwrap_err(), Error::EmptyInput { what: "points", min: 1 });
}

#[test]
fn offsets_must_start_at_zero_and_increase() {
    let r = invalid_reason(Batches::from_offsets(&[1usize, 3]).unwrap_err(), "batch offsets");
    assert!(r.contains("start at 0"), "{r}");
    let r = invalid_reason(Batches::from_offsets(&[0usize, 5, 3]).unwrap_err(), "batch offsets");
    assert!(r.contains("offsets[2] = 3 is smaller than offsets[1] = 5"), "{r}");
    let r = invalid_reason(Batches::from_offsets(&[0i64, -2]).unwrap_err(), "batch offsets");
    assert!(r.contains("-2"), "{r}");
}

#[test]
fn offsets_must_end_at_the_number_of_points() {
    let p = [0.0f32; 9];
    let e = PointCloud::new(&p, 3, Batches::from_offsets(&[0usize, 2]).unwrap()).unwrap_err();
    assert_eq!(e, Error::LengthMismatch { what: "points", expected: 6, actual: 9 });
    let e = PointCloud::new(&p, 3, Batches::from_offsets(&[0usize, 4]).unwrap()).unwrap_err();
    assert_eq!(e, Error::LengthMismatch { what: "points", expected: 12, actual: 9 });
}

#[test]
fn points_must_be_whole_rows() {
    let e = PointCloud::single(&[0.0f64; 7], 3).unwrap_err();
    assert_eq!(e, Error::LengthMismatch { what: "points (a multiple of dim)", expected: 9, actual: 7 });
}

#[test]
fn batch_index_must_be_sorted_and_gapless() {
    let r = invalid_reason(Batches::from_batch_index(&[0u32, 0, 1, 0]).unwrap_err(), "batch index");
    assert!(r.contains("batch_index[3] = 0 follows 1") && r.contains("sorted"), "{r}");
    let r = invalid_reason(Batches::from_batch_index(&[0u32, 0, 2, 2]).unwrap_err(), "batch index");
    assert!(r.contains("batch_index[2] = 2 follows 0") && r.contains("gap"), "{r}");
    let r = invalid_reason(Batches::from_batch_index(&[1u32, 1]).unwrap_err(), "batch index");
    assert!(r.contains("start at 0"), "{r}");
    let r = invalid_reason(Batches::from_batch_index(&[0i64, -1]).unwrap_err(), "batch index");
    assert!(r.contains("negative"), "{r}");
    let b = Batches::from_batch_index(&[0i64, 0, 1, 2, 2, 2]).unwrap();
    assert_eq!(b.offsets(), &[0, 2, 3, 6]);
    assert_eq!(b.batch_index(), vec![0, 0, 1, 2, 2, 2]);
}

#[test]
fn dim_must_be_between_1_and_16() {
    for dim in [0usize, 17] {
        let p = vec![0.0f32; 34];
        let r = invalid_reason(PointCloud::new(&p, dim, Batches::single(2).unwrap()).unwrap_err(), "dim");
        assert!(r.contains(&dim.to_string()), "{r}");
    }
    let p = vec![0.5f32; 32];
    assert!(PointCloud::new(&p, 16, Batches::single(2).unwrap()).is_ok());
}

#[test]
fn more_than_u32_max_points_is_rejected_before_any_allocation() {
    let n = u32::MAX as usize + 1;
    let e = Batches::from_offsets(&[0, n]).unwrap_err();
    assert_eq!(e, Error::TooManyPoints { count: n, max: u32::MAX as usize, what: "points" });
    let e = Batches::from_offsets(&[0u64, 10, 1 << 40]).unwrap_err();
    assert!(matches!(e, Error::TooManyPoints { count, .. } if count == 1 << 40), "{e:?}");
    // 2^31 + 1 points fit u32 indices but their 2^32 slots do not.
    let e = TreeLayout::new(&Batches::single((1 << 31) + 1).unwrap()).unwrap_err();
    assert!(matches!(e, Error::TooManyPoints { what: "tree slots", .. }), "{e:?}");
}

#[test]
fn levels_beyond_the_shallowest_batch_are_out_of_range() {
    let p = [0.0f64, 1.0, 2.0, 3.0, 4.0, 5.0];
    let cloud = PointCloud::new(&p, 1, Batches::from_offsets(&[0usize, 4, 6]).unwrap()).unwrap();
    let tree = build_balltree(&cloud).unwrap();
    let e = tree.pool_mean(&p, 1, Level::Depth(2), orrery_balltree::Weighting::Slots).unwrap_err();
    assert_eq!(e, Error::LevelOutOfRange { level: 2, max: 1, what: "ball tree depth" });
    let e = tree.layout().coarse_batch_index(Level::Height(5)).unwrap_err();
    assert_eq!(e, Error::LevelOutOfRange { level: 5, max: 1, what: "ball tree height" });
}

#[test]
fn pooling_checks_widths_and_lengths() {
    let p = [0.0f64, 1.0, 2.0, 3.0];
    let tree = build_balltree(&PointCloud::single(&p, 1).unwrap()).unwrap();
    let w = orrery_balltree::Weighting::Points;
    assert!(matches!(
        tree.pool_mean(&p, 0, Level::Depth(0), w).unwrap_err(),
        Error::InvalidArgument { what: "width", .. }
    ));
    assert_eq!(
        tree.pool_mean(&p[..3], 1, Level::Depth(0), w).unwrap_err(),
        Error::LengthMismatch { what: "values", expected: 4, actual: 3 }
    );
    assert_eq!(
        tree.pool_slots_mean(&p, 2, Level::Depth(0)).unwrap_err(),
        Error::LengthMismatch { what: "slot values", expected: 8, actual: 4 }
    );
    assert!(tree.gather_to_slots(&p, 2).is_err());
    assert!(tree.scatter_to_points(&p, 3).is_err());
    let other = PointCloud::new(&p, 1, Batches::from_offsets(&[0usize, 2, 4]).unwrap()).unwrap();
    let r = invalid_reason(tree.ball_stats(&other, Level::Depth(0), w).unwrap_err(), "cloud");
    assert!(r.contains("batches"), "{r}");
}

#[test]
fn permutations_are_checked_when_inverted() {
    assert_eq!(invert_permutation(&[2, 0, 1]).unwrap(), vec![1, 2, 0]);
    assert_eq!(
        invert_permutation(&[0, 3, 1]).unwrap_err(),
        Error::IndexOutOfBounds { what: "permutation", position: 1, index: 3, len: 3 }
    );
    let r = invalid_reason(invert_permutation(&[1, 0, 1]).unwrap_err(), "permutation");
    assert!(r.contains("1 appears at positions 0 and 2"), "{r}");
}

#[test]
fn rotation_arguments_are_validated() {
    let p: Vec<f32> = (0..128).map(|i| ((i * 53) % 128) as f32).collect();
    let cloud = PointCloud::single(&p, 2).unwrap(); // 64 points, 64 slots
    let tree = build_balltree(&cloud).unwrap();
    let r = erwin_rotation_matrix(30.0, 2).unwrap();
    let run =
        |rot: &[f64], bs: &[usize], st: &[usize]| cpu::rotated_partitions(&tree, &cloud, rot, bs, st).unwrap_err();
    assert_eq!(run(&r[..3], &[8], &[]), Error::LengthMismatch { what: "rotation", expected: 4, actual: 3 });
    let e = run(&[1.0, f64::NAN, 0.0, 1.0], &[8], &[]);
    assert!(matches!(e, Error::NonFiniteValue { what: "rotation", index: 1, value } if value.is_nan()), "{e:?}");
    assert_eq!(run(&r, &[], &[]), Error::EmptyInput { what: "ball sizes", min: 1 });
    assert!(matches!(run(&r, &[8, 8], &[]), Error::LengthMismatch { what: "strides (one fewer than ball sizes)", .. }));
    assert!(invalid_reason(run(&r, &[8, 8], &[3]), "strides").contains("stride 3"));
    assert!(invalid_reason(run(&r, &[8, 8], &[128]), "strides").contains("stride 128"));
    assert!(invalid_reason(run(&r, &[12], &[]), "ball sizes").contains("ball size 12"));
    assert!(invalid_reason(run(&r, &[16, 16], &[8]), "ball sizes").contains("(8 entries)"));
    assert!(invalid_reason(erwin_rotation_matrix(45.0, 4).unwrap_err(), "dim").contains('4'));
    assert!(matches!(erwin_rotation_matrix(f64::NAN, 3).unwrap_err(), Error::NonFiniteValue { what: "angle", .. }));
    // The shapes are checked even without rotation, as the reference asserts them.
    assert!(matches!(
        build_balltree_with_rotations(&cloud, 0.0, &[8, 8], &[]).unwrap_err(),
        Error::LengthMismatch { .. }
    ));
    let other = PointCloud::new(&p, 2, Batches::from_offsets(&[0usize, 32, 64]).unwrap()).unwrap();
    assert!(
        invalid_reason(cpu::rotated_partitions(&tree, &other, &r, &[8], &[]).unwrap_err(), "cloud").contains("batches")
    );
}

#[test]
fn check_tree_reports_a_corrupted_tree() {
    let p = [0.4f64, 0.0, 0.3, 0.1, 0.2];
    let cloud = PointCloud::single(&p, 1).unwrap();
    let (layout, idx, mask) = build_balltree(&cloud).unwrap().into_parts();
    // Points 1 and 3 trade leaves: still a ball tree of 5 points, but not theirs.
    let swapped: Vec<u32> = [3u32, 3, 1, 1, 4, 4, 0, 2].to_vec();
    assert_ne!(idx, swapped);
    let tree = BallTree::from_parts(layout.clone(), swapped, mask.clone()).unwrap();
    let r = invalid_reason(check_tree(&cloud, &tree).unwrap_err(), "ball tree");
    assert!(r.contains("does not precede"), "{r}");
    // Leaf {0, 2} listed as 2, 0: a ball tree, but not in ascending leaf order.
    let mut reversed = idx.clone();
    reversed.swap(6, 7);
    let tree = BallTree::from_parts(layout.clone(), reversed, mask.clone()).unwrap();
    let r = invalid_reason(check_tree(&cloud, &tree).unwrap_err(), "ball tree");
    assert!(r.contains("ascending index order"), "{r}");
    assert!(matches!(
        BallTree::from_parts(layout, vec![0; 3], mask).unwrap_err(),
        Error::LengthMismatch { what: "tree indices", expected: 8, actual: 3 }
    ));
}

/// The tree of the module docs: 5 points, slots `1 (1) 3 (3) 4 (4) 0 2`.
fn five_point_parts() -> (TreeLayout, Vec<u32>, Vec<bool>) {
    let p = [0.4f64, 0.0, 0.3, 0.1, 0.2];
    let (layout, idx, mask) = build_balltree(&PointCloud::single(&p, 1).unwrap()).unwrap().into_parts();
    assert_eq!(idx, [1, 1, 3, 3, 4, 4, 0, 2]);
    (layout, idx, mask)
}

#[test]
fn from_parts_rejects_an_index_past_the_last_point() {
    // Before: accepted, then gathers, pooling and slot_of_point indexed out of bounds.
    let (layout, mut idx, mask) = five_point_parts();
    idx[4] = 5;
    idx[5] = 5;
    assert_eq!(
        BallTree::from_parts(layout.clone(), idx, mask.clone()).unwrap_err(),
        Error::IndexOutOfBounds { what: "tree indices", position: 4, index: 5, len: 5 }
    );
    let mut idx = vec![u32::MAX; 8];
    idx[..7].copy_from_slice(&[1, 1, 3, 3, 4, 4, 0]);
    assert_eq!(
        BallTree::from_parts(layout, idx, mask).unwrap_err(),
        Error::IndexOutOfBounds { what: "tree indices", position: 7, index: u64::from(u32::MAX), len: 5 }
    );
}

#[test]
fn from_parts_rejects_a_point_of_another_batch() {
    // Batches {0, 1} and {2, 3}: two slots each, no padding.
    let layout = TreeLayout::new(&Batches::from_offsets(&[0usize, 2, 4]).unwrap()).unwrap();
    let mask = vec![true; 4];
    assert!(BallTree::from_parts(layout.clone(), vec![0, 1, 2, 3], mask.clone()).is_ok());
    // Before: slot_of_point subtracted the batch's first point from 0 (underflow).
    let r = invalid_reason(BallTree::from_parts(layout, vec![0, 1, 0, 3], mask).unwrap_err(), "tree indices");
    assert_eq!(r, "slot 2 of batch 1 holds point 0, outside the batch's points 2..4");
}

#[test]
fn from_parts_rejects_a_point_in_two_unmasked_slots() {
    let (layout, mut idx, mask) = five_point_parts();
    idx[6] = 4; // leaf {4, 2}: point 4 twice, point 0 nowhere
    let r = invalid_reason(BallTree::from_parts(layout, idx, mask).unwrap_err(), "tree indices");
    assert_eq!(r, "point 4 is in two unmasked slots, 4 and 6");
}

#[test]
fn from_parts_rejects_a_point_in_no_unmasked_slot() {
    let (layout, mut idx, mut mask) = five_point_parts();
    (idx[7], mask[7]) = (0, false); // leaf {0, 2} becomes {0, (0)}: point 2 is lost
    let r = invalid_reason(BallTree::from_parts(layout, idx, mask).unwrap_err(), "tree indices");
    assert_eq!(r, "point 2 of batch 0 is in no unmasked slot");
}

#[test]
fn from_parts_rejects_a_masked_slot_that_is_not_a_leafs_duplicate() {
    let (layout, idx, mask) = five_point_parts();
    // Points 1 and 3 swap slots 0 and 2: the padding of leaf 0 no longer repeats it.
    let mut swapped = idx.clone();
    swapped.swap(0, 2);
    let r = invalid_reason(BallTree::from_parts(layout.clone(), swapped, mask.clone()).unwrap_err(), "tree mask");
    assert_eq!(
        r,
        "masked slot 1 (point 1) of batch 0 is not the second slot of a leaf repeating its unmasked first slot"
    );
    // A masked first slot: before, a mean over the unmasked slots of that leaf divided
    // by zero.
    let mut first = mask.clone();
    (first[0], first[1]) = (false, true);
    let r = invalid_reason(BallTree::from_parts(layout.clone(), idx.clone(), first).unwrap_err(), "tree mask");
    assert!(r.starts_with("masked slot 0 (point 1)"), "{r}");
    let mut both = mask;
    both[0] = false;
    let r = invalid_reason(BallTree::from_parts(layout, idx, both).unwrap_err(), "tree mask");
    assert!(r.starts_with("masked slot 0 (point 1)"), "{r}");
}

#[test]
fn stride_products_that_overflow_usize_are_an_error() {
    let p: Vec<f32> = (0..128).map(|i| ((i * 53) % 128) as f32).collect();
    let cloud = PointCloud::single(&p, 2).unwrap(); // 64 points, 64 slots
    let tree = build_balltree(&cloud).unwrap();
    let r = erwin_rotation_matrix(30.0, 2).unwrap();
    // Before: 2 * 2^63 overflowed (a panic in debug builds, 0 in release).
    let e = cpu::rotated_partitions(&tree, &cloud, &r, &[8, 8, 8], &[2, 1 << 63]).unwrap_err();
    let reason = invalid_reason(e, "strides");
    assert!(reason.contains("stride 9223372036854775808 of layer 2"), "{reason}");
    assert!(reason.contains("2 * 9223372036854775808 overflows usize"), "{reason}");
    let e = build_balltree_with_rotations(&cloud, 0.0, &[8, 8, 8], &[4, usize::MAX / 2 + 1]).unwrap_err();
    assert!(invalid_reason(e, "strides").contains("overflows usize"));
}

#[test]
fn row_widths_whose_product_overflows_usize_are_an_error() {
    let p = [0.0f64, 1.0, 2.0, 3.0];
    let tree = build_balltree(&PointCloud::single(&p, 1).unwrap()).unwrap();
    // Before: num_points() * width overflowed (a panic in debug builds).
    let width = usize::MAX / 2;
    let overflow = |e: Error| match e {
        Error::InvalidArgument { what: "width", reason } => reason,
        other => panic!("expected InvalidArgument for width, got {other:?}"),
    };
    let r = overflow(tree.gather_to_slots(&p, width).unwrap_err());
    assert_eq!(r, format!("4 rows of {width} columns overflow usize (values has 4)"));
    assert!(overflow(tree.scatter_to_points(&p, width).unwrap_err()).starts_with("4 rows"));
    assert!(overflow(tree.pool_mean(&p, width, Level::Depth(0), Weighting::Slots).unwrap_err()).starts_with("4 rows"));
    assert!(overflow(tree.pool_slots_mean(&p, width, Level::Depth(0)).unwrap_err()).starts_with("4 rows"));
}

#[test]
fn ball_radius_beyond_f32_max_is_an_overflow_error() {
    // Two points at opposite corners of the f32 range: the centre is the origin, the
    // radius |(MAX, MAX)| = sqrt(2) MAX has no f32 upper bound. Before: radius inf.
    let p = [f32::MAX, f32::MAX, -f32::MAX, -f32::MAX];
    let cloud = PointCloud::single(&p, 2).unwrap();
    let tree = build_balltree(&cloud).unwrap();
    let e = tree.ball_stats(&cloud, Level::Depth(0), Weighting::Points).unwrap_err();
    match e {
        Error::Overflow { what: "ball radius", index: 0, value, dtype: "f32", max } => {
            assert_eq!(max, f64::from(f32::MAX));
            assert!((value / (std::f64::consts::SQRT_2 * max) - 1.0).abs() < 1e-15, "{value}");
        }
        other => panic!("expected Overflow, got {other:?}"),
    }
    // Each point alone is a ball of radius 0.
    let singles = tree.ball_stats(&cloud, Level::Height(0), Weighting::Points).unwrap();
    assert_eq!(singles.radii, [0.0, 0.0]);
    assert_eq!(tree.pool_mean(&p, 2, Level::Depth(0), Weighting::Points).unwrap(), [0.0, 0.0]);
}

#[test]
fn pooling_points_at_f64_max_gives_finite_centres_and_radii() {
    // Before: the sums overflowed to inf, and so did every squared distance above 1e154.
    let p = [f64::MAX, f64::MAX, f64::MAX, -f64::MAX];
    let cloud = PointCloud::single(&p, 1).unwrap();
    let tree = build_balltree(&cloud).unwrap();
    // Leaves {0, 3} and {1, 2}: the root splits (-MAX, 3), (MAX, 0) | (MAX, 1), (MAX, 2).
    assert_eq!(tree.indices(), &[0, 3, 1, 2]);
    let leaves = tree.ball_stats(&cloud, Level::Height(1), Weighting::Points).unwrap();
    assert_eq!(leaves.centres, [0.0, f64::MAX]);
    assert_eq!(leaves.radii, [f64::MAX, 0.0]);
    // The root's centre is finite; its radius, 1.5 MAX, is not an f64.
    let root = tree.pool_mean(&p, 1, Level::Depth(0), Weighting::Slots).unwrap();
    assert!((root[0] / (f64::MAX / 2.0) - 1.0).abs() <= f64::EPSILON, "{root:?}");
    match tree.ball_stats(&cloud, Level::Depth(0), Weighting::Slots).unwrap_err() {
        Error::Overflow { what: "ball radius", index: 0, value, dtype: "f64", max } => {
            assert_eq!((value, max), (f64::INFINITY, f64::MAX));
        }
        other => panic!("expected Overflow, got {other:?}"),
    }
}
