//! Cornerstone invariants after every pass, convergence, incremental updates and errors,
//! on every dataset and shape.

use orrery_core::sfc::{Curve, KeyLayout};
use orrery_core::{Aabb, Error, PositionsView, Vec3};
use orrery_tree_build::counts::{carry_starts, leaf_counts, leaf_starts};
use orrery_tree_build::rebalance::{leaf_count_ops, rebalance, sibling_group};
use orrery_tree_build::{Criterion, Leaves, Rebalance, Shape, Tree, build, input, update};
use proptest::prelude::*;

use crate::common::{self, Cloud, unit_box};

const SHAPES: [Shape; 3] = [Shape::Octree(Curve::Morton), Shape::Octree(Curve::Hilbert), Shape::Binary];

/// Counts by one merge walk over the sorted keys (no binary search): the oracle of
/// [`leaf_counts`].
fn walked_counts(leaves: &[u64], keys: &[u64]) -> Vec<u32> {
    let mut counts = vec![0u32; leaves.len() - 1];
    let mut leaf = 0;
    for &k in keys {
        if k >= *leaves.last().unwrap() {
            break;
        }
        while k >= leaves[leaf + 1] {
            leaf += 1;
        }
        counts[leaf] += 1;
    }
    counts
}

/// Every leaf within the bucket (or at the key resolution), and no complete sibling
/// group whose parent would be within it: the converged state of LeafCount.
fn assert_converged(tree: &Tree, bucket: u32, what: &str) {
    let leaves = tree.leaves();
    let layout = leaves.layout();
    for (i, &c) in tree.counts().iter().enumerate() {
        let level = leaves.level(i).unwrap();
        assert!(c <= bucket || level == layout.levels(), "{what}: leaf {i} at level {level} holds {c}");
        if let Some((first, _)) = sibling_group(leaves.keys(), i, level, layout) {
            let parent: u64 = tree.counts()[first..first + layout.children() as usize].iter().map(|&c| c as u64).sum();
            assert!(parent > bucket as u64, "{what}: leaves {first}.. could merge ({parent} <= {bucket})");
        }
    }
}

fn sorted(cloud: &Cloud, shape: Shape) -> orrery_tree_build::SortedKeys<f64> {
    input::sort_particles(cloud.view(), Some(unit_box()), shape).unwrap()
}

#[test]
fn every_pass_keeps_the_invariants_and_converges() {
    let bucket = 16;
    for (name, cloud) in common::all(20_000, 7) {
        for shape in SHAPES {
            let what = format!("{name} {shape:?}");
            let s = sorted(&cloud, shape);
            assert_eq!(s.active, cloud.x.len(), "{what}: every particle is inside the box");
            let mut leaves = Leaves::root(s.layout);
            let mut passes = 0;
            loop {
                let counts = leaf_counts(leaves.keys(), &s.keys);
                assert_eq!(counts, walked_counts(leaves.keys(), &s.keys), "{what}: pass {passes}");
                assert_eq!(counts.iter().map(|&c| c as usize).sum::<usize>(), s.active, "{what}");
                let ops = leaf_count_ops(&leaves, &counts, bucket).unwrap();
                let next = rebalance(&leaves, &ops).unwrap();
                // Carried starts (kept leaves keep theirs, split leaves search their own
                // range) equal a search of every new boundary.
                let starts = leaf_starts(leaves.keys(), &s.keys);
                assert_eq!(
                    carry_starts(&starts, &ops, &next.offsets, next.leaves.keys(), &s.keys),
                    leaf_starts(next.leaves.keys(), &s.keys),
                    "{what}: pass {passes}"
                );
                // The result revalidates; check again from the raw parts.
                Leaves::from_keys(next.leaves.keys().to_vec(), s.layout).unwrap();
                passes += 1;
                if !next.changed {
                    break;
                }
                leaves = next.leaves;
                assert!(passes < 32, "{what}: no convergence");
            }
            let (tree, run) = build(&s.keys, s.layout, &Rebalance::new(Criterion::leaf_count(bucket))).unwrap();
            assert_eq!(run.passes, passes, "{what}");
            assert!(run.converged);
            assert_eq!(tree.leaves(), &leaves, "{what}");
            assert_eq!(tree.counts(), leaf_counts(leaves.keys(), &s.keys), "{what}");
            assert_eq!(tree.leaf_starts(), leaf_starts(leaves.keys(), &s.keys), "{what}");
            assert_converged(&tree, bucket, &what);
        }
    }
}

#[test]
fn identical_particles_stop_at_the_key_resolution() {
    let cloud = common::identical(100);
    let s = sorted(&cloud, Shape::Octree(Curve::Hilbert));
    let (tree, run) = build(&s.keys, s.layout, &Rebalance::new(Criterion::leaf_count(4))).unwrap();
    assert!(run.converged);
    let full = tree.counts().iter().position(|&c| c == 100).unwrap();
    assert_eq!(tree.leaves().level(full).unwrap(), 21);
    assert_eq!(tree.leaves().depth(), 21);
}

#[test]
fn an_incremental_update_equals_a_build_from_scratch() {
    let options = Rebalance::new(Criterion::leaf_count(8));
    for (name, mut cloud) in common::all(10_000, 11) {
        for shape in SHAPES {
            let s = sorted(&cloud, shape);
            let (mut tree, _) = build(&s.keys, s.layout, &options).unwrap();
            for step in 0..3 {
                cloud.jitter(1e-3 * 2.0, 100 + step);
                let s = sorted(&cloud, shape);
                let run = update(&mut tree, &s.keys, &options).unwrap();
                assert!(run.converged, "{name} {shape:?} step {step}");
                let (fresh, _) = build(&s.keys, s.layout, &options).unwrap();
                assert_eq!(tree, fresh, "{name} {shape:?} step {step}");
            }
            // Undo the jitter for the next shape.
            cloud = common::all(10_000, 11).into_iter().find(|(n, _)| *n == name).unwrap().1;
        }
    }
}

#[test]
fn an_unchanged_tree_updates_in_one_pass() {
    let cloud = common::plummer(5000, 3);
    let s = sorted(&cloud, Shape::Octree(Curve::Hilbert));
    let options = Rebalance::new(Criterion::leaf_count(16));
    let (mut tree, _) = build(&s.keys, s.layout, &options).unwrap();
    let before = tree.clone();
    let run = update(&mut tree, &s.keys, &options).unwrap();
    assert_eq!((run.passes, run.converged), (1, true));
    assert_eq!(tree, before);
}

#[test]
fn the_pass_cap_reports_no_convergence() {
    let cloud = common::gaussian(20_000, 5);
    let s = sorted(&cloud, Shape::Octree(Curve::Morton));
    let options = Rebalance::new(Criterion::leaf_count(1)).with_max_passes(1);
    let (tree, run) = build(&s.keys, s.layout, &options).unwrap();
    assert_eq!((run.passes, run.converged), (1, false));
    assert_eq!(tree.leaves().len(), 4096, "one pass splits the root by four levels");
}

#[test]
fn particles_outside_a_given_box_are_removed() {
    let mut cloud = common::uniform(1000, 9);
    cloud.x[10] = 5.0;
    cloud.z[20] = -1.5;
    let s = sorted(&cloud, Shape::Octree(Curve::Hilbert));
    assert_eq!(s.active, 998);
    let end = KeyLayout::octree::<u64>().key_end::<u64>();
    assert_eq!(s.keys[998..], [end, end]);
    assert_eq!(s.order[998..], [10, 20]);
    let (tree, _) = build(&s.keys, s.layout, &Rebalance::new(Criterion::leaf_count(16))).unwrap();
    assert_eq!(tree.counts().iter().map(|&c| c as usize).sum::<usize>(), 998);
}

#[test]
fn a_computed_box_holds_every_particle() {
    let cloud = common::thin_disk(3000, 2);
    let s = input::sort_particles(cloud.view(), None, Shape::Binary).unwrap();
    assert_eq!(s.active, 3000);
    assert!(s.bbox.extent().z < 0.1, "the thin disk's box is thin");
}

#[test]
fn bad_input_gets_typed_errors() {
    let shape = Shape::Octree(Curve::Hilbert);
    // NaN never reaches the tree: the positions view refuses it.
    let (x, y, z) = (vec![0.0, f64::NAN], vec![0.0; 2], vec![0.0; 2]);
    assert!(matches!(PositionsView::new(&x, &y, &z), Err(Error::NonFiniteCoordinate { index: 1, .. })));
    let empty: [f64; 0] = [];
    let view = PositionsView::new(&empty, &empty, &empty).unwrap();
    assert!(matches!(input::sort_particles(view, None, shape), Err(Error::EmptyInput { .. })));
    let one = common::identical(1);
    assert!(matches!(input::sort_particles(one.view(), None, shape), Err(Error::InvalidBox { .. })));
    assert_eq!(
        input::sort_particles(one.view(), Some(unit_box()), shape).unwrap().active,
        1,
        "with a box it is a tree"
    );
    let point_box = Aabb::new(Vec3::new(0.0, 0.0, 0.0), Vec3::new(0.0, 0.0, 0.0)).unwrap();
    assert!(matches!(input::sort_particles(one.view(), Some(point_box), shape), Err(Error::InvalidBox { .. })));

    let layout = KeyLayout::octree::<u64>();
    let keys = [1u64, 5, 9];
    assert!(matches!(
        build(&keys, layout, &Rebalance::new(Criterion::leaf_count(0))),
        Err(Error::InvalidArgument { what: "bucket", .. })
    ));
    assert!(matches!(
        build(&keys, layout, &Rebalance::new(Criterion::leaf_count(4)).with_max_passes(0)),
        Err(Error::InvalidArgument { what: "max_passes", .. })
    ));
    assert!(matches!(
        build(&[5, 1], layout, &Rebalance::new(Criterion::leaf_count(4))),
        Err(Error::InvalidArgument { what: "particle keys", .. })
    ));
    assert!(matches!(
        build(&[u64::MAX], layout, &Rebalance::new(Criterion::leaf_count(4))),
        Err(Error::InvalidArgument { what: "particle keys", .. })
    ));
    assert!(matches!(input::check_particle_count(u32::MAX as usize + 1), Err(Error::TooManyPoints { .. })));
    input::check_particle_count(u32::MAX as usize).unwrap();

    for (keys, index) in [
        (vec![0u64], 0),
        (vec![1, 1 << 63], 0),
        (vec![0, 1 << 62], 1),
        (vec![0, 3, 1 << 63], 0),
        (vec![0, 1 << 60, 1 << 60, 1 << 63], 1),
        (vec![0, 1 << 61, 1 << 63], 0),
    ] {
        match Leaves::from_keys(keys.clone(), layout) {
            Err(Error::InvalidTree { index: i, .. }) => assert_eq!(i, index, "{keys:?}"),
            other => panic!("{keys:?}: {other:?}"),
        }
    }
    let tree = Leaves::root(layout);
    assert!(matches!(rebalance(&tree, &[3]), Err(Error::InvalidArgument { .. })));
    assert!(matches!(rebalance(&tree, &[0]), Err(Error::InvalidArgument { .. })));
    assert!(matches!(rebalance(&tree, &[1, 1]), Err(Error::LengthMismatch { .. })));
    assert!(matches!(leaf_count_ops(&tree, &[1, 1], 4), Err(Error::LengthMismatch { .. })));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any multiset of keys, clustered or spread: the build converges to a valid tree
    /// whose counts are the walked counts, and an update from any earlier tree of other
    /// keys reaches the same tree.
    #[test]
    fn any_keys_converge(raw in prop::collection::vec(any::<u64>(), 1..600), shift in 0u32..60, bucket in 1u32..20, other in prop::collection::vec(any::<u64>(), 1..300)) {
        let layout = KeyLayout::octree::<u64>();
        let mask = (1u64 << 63) - 1;
        let mut keys: Vec<u64> = raw.iter().map(|k| (k & mask) >> shift).collect();
        keys.sort_unstable();
        let options = Rebalance::new(Criterion::leaf_count(bucket));
        let (tree, run) = build(&keys, layout, &options).unwrap();
        prop_assert!(run.converged);
        prop_assert_eq!(tree.counts(), &walked_counts(tree.leaves().keys(), &keys)[..]);
        assert_converged(&tree, bucket, "proptest");
        let mut prev: Vec<u64> = other.iter().map(|k| k & mask).collect();
        prev.sort_unstable();
        let (mut start, _) = build(&prev, layout, &options).unwrap();
        let run = update(&mut start, &keys, &options).unwrap();
        prop_assert!(run.converged);
        prop_assert_eq!(start, tree);
    }

    /// Galloping boundary searches give every boundary's lower bound, duplicates and
    /// boundaries past the last key included.
    #[test]
    fn leaf_starts_are_lower_bounds(raw in prop::collection::vec(0u64..64, 0..5000), bounds in prop::collection::vec(0u64..80, 1..9000)) {
        let mut keys = raw;
        keys.sort_unstable();
        let mut b = bounds;
        b.sort_unstable();
        let expect: Vec<u32> = b.iter().map(|&q| orrery_core::executor::lower_bound_one(&keys, q)).collect();
        prop_assert_eq!(leaf_starts(&b, &keys), expect);
    }
}
