//! Property tests on bounded random clouds (1 to 5 dimensions, 1 to 4 batches of 1 to
//! 70 points, coordinates in [-1, 1) or from four values so that ties abound).

use std::collections::BTreeSet;

use orrery_balltree::{
    BallTree, Batches, Level, PointCloud, TreeLayout, Weighting, build_balltree, check_tree, cpu, invert_permutation,
    partition_balltree,
};
use orrery_core::Error;
use proptest::prelude::*;

use crate::common;

#[derive(Debug, Clone)]
struct Cloud {
    points: Vec<f64>,
    dim: usize,
    offsets: Vec<usize>,
}

impl Cloud {
    fn view(&self) -> PointCloud<'_, f64> {
        PointCloud::new(&self.points, self.dim, Batches::from_offsets(&self.offsets).unwrap()).unwrap()
    }
}

fn clouds() -> impl Strategy<Value = Cloud> {
    (1usize..=5, prop::collection::vec(1usize..=70, 1..=4), any::<bool>()).prop_flat_map(|(dim, sizes, tied)| {
        let n: usize = sizes.iter().sum();
        let coord = if tied { (0u8..4).prop_map(f64::from).boxed() } else { (-1.0f64..1.0).boxed() };
        let offsets: Vec<usize> = std::iter::once(0)
            .chain(sizes.iter().scan(0, |acc, &s| {
                *acc += s;
                Some(*acc)
            }))
            .collect();
        prop::collection::vec(coord, n * dim).prop_map(move |points| Cloud { points, dim, offsets: offsets.clone() })
    })
}

/// The points of the unmasked slots in `range`, as a set.
fn ball_points(tree: &BallTree, range: std::ops::Range<usize>) -> BTreeSet<u32> {
    range.filter(|&s| tree.mask()[s]).map(|s| tree.indices()[s]).collect()
}

fn all_levels(tree: &BallTree) -> impl Iterator<Item = Level> {
    let max = tree.layout().max_level();
    (0..=max).flat_map(|k| [Level::Depth(k), Level::Height(k)])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn tree_is_the_specified_tree(c in clouds()) {
        let cloud = c.view();
        let tree = build_balltree(&cloud).unwrap();
        let (idx, mask) = common::naive_tree(&c.points, c.dim, &c.offsets);
        prop_assert_eq!(tree.indices(), idx.as_slice());
        prop_assert_eq!(tree.mask(), mask.as_slice());
        prop_assert!(check_tree(&cloud, &tree).is_ok());
        // f32 input with the same values builds the same tree.
        let narrow: Vec<f32> = c.points.iter().map(|&v| v as f32).collect();
        let wide = common::widen(&narrow);
        let t32 = build_balltree(&PointCloud::new(&narrow, c.dim, cloud.batches().clone()).unwrap()).unwrap();
        let t64 = build_balltree(&PointCloud::new(&wide, c.dim, cloud.batches().clone()).unwrap()).unwrap();
        prop_assert_eq!(t32, t64);
    }

    #[test]
    fn every_point_is_in_exactly_one_unmasked_slot(c in clouds()) {
        let tree = build_balltree(&c.view()).unwrap();
        let mut count = vec![0u32; tree.num_points()];
        for b in 0..tree.num_batches() {
            let (idx, mask) = tree.batch(b);
            for (&i, &m) in idx.iter().zip(mask) {
                prop_assert!((c.offsets[b]..c.offsets[b + 1]).contains(&(i as usize)));
                count[i as usize] += u32::from(m);
            }
        }
        prop_assert!(count.iter().all(|&k| k == 1));
        let padding = tree.num_slots() - tree.num_points();
        prop_assert_eq!(tree.mask().iter().filter(|&&m| !m).count(), padding);
        prop_assert!((tree.padding_ratio() - padding as f64 / tree.num_slots() as f64).abs() < 1e-15);
    }

    #[test]
    fn children_partition_their_parents(c in clouds()) {
        let tree = build_balltree(&c.view()).unwrap();
        let layout = tree.layout();
        for b in 0..tree.num_batches() {
            let start = layout.slot_offsets()[b] as usize;
            let slots = layout.slot_offsets()[b + 1] as usize - start;
            for depth in 0..=layout.depths()[b] {
                let width = slots >> depth;
                for ball in (start..start + slots).step_by(width) {
                    let parent = ball_points(&tree, ball..ball + width);
                    let left = ball_points(&tree, ball..ball + width / 2);
                    let right = ball_points(&tree, ball + width / 2..ball + width);
                    prop_assert!(left.is_disjoint(&right));
                    prop_assert_eq!(&left | &right, parent);
                }
            }
        }
        // Ball ids nest: the ball of a slot at depth k is the parent of its ball at k + 1.
        for k in 0..layout.max_level() {
            let (outer, inner) = (layout.ball_offsets(Level::Depth(k)).unwrap(), layout.ball_offsets(Level::Depth(k + 1)).unwrap());
            for s in 0..tree.num_slots() {
                let b = layout.batch_of_slot(s).unwrap();
                let parent = layout.ball_of_slot(s, Level::Depth(k)).unwrap() - outer[b];
                let child = layout.ball_of_slot(s, Level::Depth(k + 1)).unwrap() - inner[b];
                prop_assert_eq!(child / 2, parent);
            }
        }
    }

    #[test]
    fn ball_radii_contain_their_points(c in clouds()) {
        let cloud = c.view();
        let tree = build_balltree(&cloud).unwrap();
        for level in all_levels(&tree) {
            for weighting in [Weighting::Slots, Weighting::Points] {
                let stats = tree.ball_stats(&cloud, level, weighting).unwrap();
                for s in 0..tree.num_slots() {
                    let ball = tree.layout().ball_of_slot(s, level).unwrap() as usize;
                    let p = cloud.point(tree.indices()[s] as usize);
                    let centre = &stats.centres[ball * c.dim..(ball + 1) * c.dim];
                    let d: f64 = p.iter().zip(centre).map(|(a, b)| (a - b) * (a - b)).sum::<f64>().sqrt();
                    prop_assert!(d <= stats.radii[ball], "{} > {}", d, stats.radii[ball]);
                }
            }
        }
        // f32 radii are rounded up, so containment holds exactly there too.
        let narrow: Vec<f32> = c.points.iter().map(|&v| v as f32).collect();
        let cloud32 = PointCloud::new(&narrow, c.dim, cloud.batches().clone()).unwrap();
        let stats = tree.ball_stats(&cloud32, Level::Depth(0), Weighting::Points).unwrap();
        for s in 0..tree.num_slots() {
            let ball = tree.layout().ball_of_slot(s, Level::Depth(0)).unwrap() as usize;
            let p = cloud32.point(tree.indices()[s] as usize);
            let centre = &stats.centres[ball * c.dim..(ball + 1) * c.dim];
            let d: f64 = p.iter().zip(centre).map(|(&a, &b)| (f64::from(a) - f64::from(b)).powi(2)).sum::<f64>().sqrt();
            prop_assert!(d <= f64::from(stats.radii[ball]));
        }
    }

    #[test]
    fn permutation_and_inverse_are_inverse(c in clouds()) {
        let tree = build_balltree(&c.view()).unwrap();
        let perm = tree.permutation();
        let inv = tree.inverse_permutation();
        prop_assert_eq!(perm.len(), tree.num_points());
        for (j, &p) in perm.iter().enumerate() {
            prop_assert_eq!(inv[p as usize] as usize, j);
        }
        prop_assert_eq!(invert_permutation(&perm).unwrap(), inv.clone());
        prop_assert_eq!(invert_permutation(&inv).unwrap(), perm);
        let slots = tree.slot_of_point();
        for (i, &s) in slots.iter().enumerate() {
            prop_assert_eq!(tree.indices()[s as usize] as usize, i);
            prop_assert!(tree.mask()[s as usize]);
        }
        // Per-point rows survive a trip through slot order.
        let rows: Vec<u32> = (0..tree.num_points() as u32 * 2).collect();
        let there = tree.gather_to_slots(&rows, 2).unwrap();
        prop_assert_eq!(tree.scatter_to_points(&there, 2).unwrap(), rows);
    }

    #[test]
    fn pooled_means_match_a_naive_computation(c in clouds(), width in 1usize..4, seed in any::<u64>()) {
        let tree = build_balltree(&c.view()).unwrap();
        let values = common::uniform(tree.num_points(), width, seed);
        let slot_values = common::uniform(tree.num_slots(), width, seed ^ 1);
        for level in all_levels(&tree) {
            for weighting in [Weighting::Slots, Weighting::Points] {
                let ours = tree.pool_mean(&values, width, level, weighting).unwrap();
                let mut naive = vec![Vec::<usize>::new(); ours.len() / width];
                for s in 0..tree.num_slots() {
                    let ball = tree.layout().ball_of_slot(s, level).unwrap() as usize;
                    let height = tree.layout().height(tree.layout().batch_of_slot(s).unwrap(), level).unwrap();
                    if weighting == Weighting::Points && height > 0 && !tree.mask()[s] {
                        continue;
                    }
                    naive[ball].push(s);
                }
                for (ball, slots) in naive.iter().enumerate() {
                    for w in 0..width {
                        let mean = slots.iter().map(|&s| values[tree.indices()[s] as usize * width + w]).sum::<f64>() / slots.len() as f64;
                        prop_assert!((ours[ball * width + w] - mean).abs() <= 1e-12);
                    }
                }
            }
            let ours = tree.pool_slots_mean(&slot_values, width, level).unwrap();
            let offsets = tree.layout().ball_offsets(level).unwrap();
            prop_assert_eq!(ours.len(), offsets[offsets.len() - 1] as usize * width);
            let balls = tree.layout().coarse_batch_index(level).unwrap();
            prop_assert_eq!(balls.len(), ours.len() / width);
        }
        // Slot means at height h are h repeated stride-2 means.
        let max = tree.layout().max_level();
        let mut pooled = slot_values.clone();
        for h in 1..=max {
            pooled = pooled.chunks(2 * width).flat_map(|pair| (0..width).map(move |w| f64::midpoint(pair[w], pair[width + w]))).collect();
            let direct = tree.pool_slots_mean(&slot_values, width, Level::Height(h)).unwrap();
            for (a, b) in pooled.iter().zip(&direct) {
                prop_assert!((a - b).abs() <= 1e-12);
            }
        }
    }

    #[test]
    fn partition_is_the_specified_partition(c in clouds(), target in 0u32..9) {
        let cloud = c.view();
        let ours = partition_balltree(&cloud, target).unwrap();
        let expected = common::naive_partition(&c.points, c.dim, &c.offsets, target);
        prop_assert_eq!(ours.order(), expected.as_slice());
        let inv = ours.inverse().unwrap();
        for (j, &p) in ours.order().iter().enumerate() {
            prop_assert_eq!(inv[p as usize] as usize, j);
        }
        prop_assert_eq!(*ours.group_offsets().last().unwrap() as usize, cloud.len());
    }

    #[test]
    fn batch_index_round_trips(c in clouds()) {
        let batches = Batches::from_offsets(&c.offsets).unwrap();
        prop_assert_eq!(Batches::from_batch_index(&batches.batch_index()).unwrap(), batches);
    }

    #[test]
    fn rotated_partitions_partition_the_rotated_slots(
        sizes in prop::collection::vec(9usize..=70, 1..=3),
        angle in -180.0f64..180.0,
        seed in any::<u64>(),
        dim in 2usize..=3,
    ) {
        let n: usize = sizes.iter().sum();
        let offsets: Vec<usize> = std::iter::once(0).chain(sizes.iter().scan(0, |a, &s| { *a += s; Some(*a) })).collect();
        let points = common::uniform(n, dim, seed);
        let cloud = PointCloud::new(&points, dim, Batches::from_offsets(&offsets).unwrap()).unwrap();
        let tree = build_balltree(&cloud).unwrap();
        let r = orrery_balltree::erwin_rotation_matrix(angle, dim).unwrap();
        let rm = &r;
        let layers = cpu::rotated_partitions(&tree, &cloud, &r, &[4, 2], &[2]).unwrap();
        // The specification: rotate the slots, partition each batch down to balls of 4;
        // pool pairs, partition down to balls of 2.
        let mut rows: Vec<f64> = tree.indices().iter().flat_map(|&i| {
            let p = cloud.point(i as usize);
            (0..dim).map(move |col| p.iter().enumerate().map(|(d, &x)| x * rm[d * dim + col]).sum::<f64>())
        }).collect();
        let mut layer_offsets: Vec<usize> = tree.layout().slot_offsets().iter().map(|&o| o as usize).collect();
        for (i, bs) in [4usize, 2].into_iter().enumerate() {
            let mut expected = Vec::new();
            for w in layer_offsets.windows(2) {
                let target = ((w[1] - w[0]) / bs).trailing_zeros();
                let sub: Vec<f64> = rows[w[0] * dim..w[1] * dim].to_vec();
                let local = common::naive_partition(&sub, dim, &[0, w[1] - w[0]], target);
                expected.extend(local.into_iter().map(|e| e + w[0] as u32));
            }
            prop_assert_eq!(layers[i].permutation(), expected.as_slice());
            prop_assert_eq!(layers[i].num_balls() * bs, layers[i].len());
            rows = rows.chunks(2 * dim).flat_map(|pair| (0..dim).map(move |c| f64::midpoint(pair[c], pair[dim + c]))).collect();
            layer_offsets = layer_offsets.iter().map(|o| o / 2).collect();
        }
    }
}

/// Invariants 2 and 3 of `orrery_balltree::invariants`, written out naively: every
/// index is a point of its slot's batch, a masked slot is the odd slot of a leaf and
/// repeats its unmasked first slot, and the unmasked slots of a batch, sorted, are the
/// batch's points.
fn is_ball_tree(layout: &TreeLayout, idx: &[u32], mask: &[bool]) -> bool {
    let slots = layout.slot_offsets();
    (0..layout.num_batches()).all(|b| {
        let points = layout.batches().range(b);
        let range = slots[b] as usize..slots[b + 1] as usize;
        let mut real: Vec<usize> = range.clone().filter(|&s| mask[s]).map(|s| idx[s] as usize).collect();
        real.sort_unstable();
        range.clone().all(|s| points.contains(&(idx[s] as usize)))
            && range.filter(|&s| !mask[s]).all(|s| s % 2 == 1 && mask[s - 1] && idx[s - 1] == idx[s])
            && real == points.collect::<Vec<_>>()
    })
}

/// One edit of a tree's parts: set a slot's index (to any value below `n + 2`, so some
/// are out of bounds), flip a slot's mask, or swap two slots' indices.
#[derive(Debug, Clone)]
enum Edit {
    Set(prop::sample::Index, prop::sample::Index),
    Flip(prop::sample::Index),
    Swap(prop::sample::Index, prop::sample::Index),
}

fn edits() -> impl Strategy<Value = Vec<Edit>> {
    let edit = prop_oneof![
        (any::<prop::sample::Index>(), any::<prop::sample::Index>()).prop_map(|(s, v)| Edit::Set(s, v)),
        any::<prop::sample::Index>().prop_map(Edit::Flip),
        (any::<prop::sample::Index>(), any::<prop::sample::Index>()).prop_map(|(s, t)| Edit::Swap(s, t)),
    ];
    prop::collection::vec(edit, 1..=3)
}

/// `v * 2^e` for every value (exact: no value is subnormal or overflows here).
fn scaled(values: &[f64], e: i32) -> Vec<f64> {
    values.iter().map(|&v| v * 2f64.powi(e)).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn from_parts_accepts_exactly_the_parts_of_a_ball_tree(c in clouds(), edits in edits()) {
        let cloud = c.view();
        let (layout, mut idx, mut mask) = build_balltree(&cloud).unwrap().into_parts();
        let n = layout.num_points();
        let slots = idx.len();
        for edit in &edits {
            match edit {
                Edit::Set(s, v) => idx[s.index(slots)] = v.index(n + 2) as u32,
                Edit::Flip(s) => mask[s.index(slots)] ^= true,
                Edit::Swap(s, t) => idx.swap(s.index(slots), t.index(slots)),
            }
        }
        let expected = is_ball_tree(&layout, &idx, &mask);
        let out_of_bounds = idx.iter().position(|&i| i as usize >= n);
        match BallTree::from_parts(layout, idx, mask) {
            Err(e) => {
                prop_assert!(!expected, "valid parts rejected: {}", e);
                // An index past the points is reported as such unless an earlier slot
                // breaks the tree first.
                if let Error::IndexOutOfBounds { position, len, .. } = e {
                    prop_assert_eq!((Some(position), len), (out_of_bounds, n));
                }
            }
            Ok(tree) => {
                prop_assert!(expected, "invalid parts accepted: {:?} / {:?}", tree.indices(), tree.mask());
                // Everything that indexes with the parts runs and gives sound results.
                let perm = tree.permutation();
                prop_assert_eq!(invert_permutation(&perm).unwrap(), tree.inverse_permutation());
                for (i, &s) in tree.slot_of_point().iter().enumerate() {
                    prop_assert!(tree.mask()[s as usize] && tree.indices()[s as usize] as usize == i);
                }
                let rows: Vec<u32> = (0..n as u32).collect();
                let there = tree.gather_to_slots(&rows, 1).unwrap();
                prop_assert_eq!(tree.scatter_to_points(&there, 1).unwrap(), rows);
                for level in all_levels(&tree) {
                    for weighting in [Weighting::Slots, Weighting::Points] {
                        let stats = tree.ball_stats(&cloud, level, weighting).unwrap();
                        prop_assert!(stats.centres.iter().chain(&stats.radii).all(|v| v.is_finite()));
                    }
                }
            }
        }
    }

    #[test]
    fn pooling_near_f64_max_is_the_pooling_of_scaled_points_scaled_back(c in clouds()) {
        // Coordinates up to 3 * 2^1020 (a quarter of f64::MAX): sums of a few overflow,
        // so do the squares of every difference. The same points times 2^-64 pool
        // without overflow; scaling by powers of two is exact, so the means must agree
        // bit for bit. Radii come from the scaled distance formula there: within 8 ulps
        // (a relative tolerance; the plain formula on the small points rounds differently).
        let big = scaled(&c.points, 1020);
        let small = scaled(&c.points, 956);
        let batches = c.view().batches().clone();
        let big_cloud = PointCloud::new(&big, c.dim, batches.clone()).unwrap();
        let small_cloud = PointCloud::new(&small, c.dim, batches).unwrap();
        let tree = build_balltree(&big_cloud).unwrap();
        prop_assert_eq!(&tree, &build_balltree(&small_cloud).unwrap());
        for level in all_levels(&tree) {
            for weighting in [Weighting::Slots, Weighting::Points] {
                let ours = tree.ball_stats(&big_cloud, level, weighting).unwrap();
                let reference = tree.ball_stats(&small_cloud, level, weighting).unwrap();
                prop_assert_eq!(&ours.centres, &scaled(&reference.centres, 64));
                prop_assert_eq!(&tree.pool_mean(&big, c.dim, level, weighting).unwrap(), &ours.centres);
                for (r, expected) in ours.radii.iter().zip(scaled(&reference.radii, 64)) {
                    prop_assert!(r.is_finite());
                    prop_assert!((r - expected).abs() <= 8.0 * f64::EPSILON * expected, "{} vs {}", r, expected);
                }
            }
            let slots = tree.gather_to_slots(&big, c.dim).unwrap();
            let reference = tree.pool_slots_mean(&tree.gather_to_slots(&small, c.dim).unwrap(), c.dim, level).unwrap();
            prop_assert_eq!(tree.pool_slots_mean(&slots, c.dim, level).unwrap(), scaled(&reference, 64));
        }
    }
}
