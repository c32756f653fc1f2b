//! NFCount: the cheap stencil against the 27-cell searches and against particle
//! coordinates, hand-checked stencils, the converged invariant, carried values against a
//! full recomputation, update == build, errors.

use orrery_core::sfc::{BinaryLayout, Curve, KeyLayout};
use orrery_core::{Aabb, Error, Vec3};
use orrery_tree_build::counts::{leaf_counts, leaf_starts};
use orrery_tree_build::nfcount::{
    self, CellLocation, DEFAULT_THRESHOLD, KeyGeometry, NO_GROUP, NfState, locate_cell, nf_op, stencil_count,
    stencil_count_reference,
};
use orrery_tree_build::rebalance::sibling_group;
use orrery_tree_build::{Criterion, Leaves, Rebalance, Shape, SortedKeys, Tree, build, input, update};

use crate::common::{self, Cloud, unit_box};

const SHAPES: [Shape; 3] = [Shape::Octree(Curve::Morton), Shape::Octree(Curve::Hilbert), Shape::Binary];

/// A smaller threshold than the default, so that the test datasets refine deeper.
const DEEP: u64 = 27 * 16 * 16;

fn sorted(cloud: &Cloud, shape: Shape) -> SortedKeys<f64> {
    input::sort_particles(cloud.view(), Some(unit_box()), shape).unwrap()
}

fn geometry(shape: Shape, s: &SortedKeys<f64>) -> KeyGeometry {
    KeyGeometry::new(shape, &s.bbox).unwrap()
}

fn nf_options(shape: Shape, s: &SortedKeys<f64>, threshold: u64) -> Rebalance {
    Rebalance::new(Criterion::nf_count(shape, &s.bbox).unwrap().with_threshold(threshold))
}

/// The four datasets the issue names.
fn datasets(n: usize, seed: u64) -> Vec<(&'static str, Cloud)> {
    vec![
        ("uniform", common::uniform(n, seed)),
        ("plummer", common::plummer(n, seed)),
        ("thin disk", common::thin_disk(n, seed)),
        ("two clusters", common::two_clusters(n, seed)),
    ]
}

/// Trees over `s` refined in different ways: deep LeafCount trees (small leaves next to
/// large empty ones) and a converged NFCount tree.
fn trees_of(shape: Shape, s: &SortedKeys<f64>) -> Vec<(&'static str, Tree)> {
    let leaf_count = |bucket| build(&s.keys, s.layout, &Rebalance::new(Criterion::leaf_count(bucket))).unwrap().0;
    let nf = build(&s.keys, s.layout, &nf_options(shape, s, DEEP)).unwrap().0;
    vec![("leaf count 4", leaf_count(4)), ("leaf count 64", leaf_count(64)), ("nf count", nf)]
}

#[test]
fn the_cheap_stencil_equals_two_searches_per_cell_for_every_leaf() {
    let (mut cells, mut inside, mut inside_nonempty) = (0usize, 0usize, 0usize);
    for (name, cloud, bbox) in datasets_and_flat_boxes(20_000, 21) {
        for shape in SHAPES {
            let s = input::sort_particles(cloud.view(), bbox, shape).unwrap();
            let g = geometry(shape, &s);
            for (tree_name, tree) in trees_of(shape, &s) {
                let what = format!("{name} {shape:?} {tree_name}");
                let keys = tree.leaves().keys();
                let starts = leaf_starts(keys, &s.keys);
                let levels = s.layout.levels();
                // Every leaf's own level, its parent's and its children's: cells made of
                // whole leaves and cells inside coarser leaves.
                let queries: Vec<(u64, u32, usize)> = (0..tree.leaves().len())
                    .flat_map(|i| {
                        let level = tree.leaves().level(i).unwrap();
                        (level.saturating_sub(1)..=(level + 1).min(levels)).map(move |l| (keys[i], l, i))
                    })
                    .collect();
                let cheap: Vec<u64> =
                    queries.iter().map(|&(k, l, i)| stencil_count(g, keys, &starts, &s.keys, k, l, i)).collect();
                // The galloping searches start anywhere: a far-away leaf gives the same.
                let far = |i: usize| i.wrapping_mul(7919) % tree.leaves().len();
                for &(k, l, i) in queries.iter().step_by(7) {
                    let expected = stencil_count(g, keys, &starts, &s.keys, k, l, i);
                    assert_eq!(stencil_count(g, keys, &starts, &s.keys, k, l, far(i)), expected, "{what}");
                }
                let reference: Vec<u64> =
                    queries.iter().map(|&(k, l, _)| stencil_count_reference(g, &s.keys, k, l)).collect();
                for (q, (c, r)) in queries.iter().zip(cheap.iter().zip(&reference)) {
                    assert_eq!(c, r, "{what}: stencil of key {} at level {}", q.0, q.1);
                }
                // Where the queried cells lie: unions of leaves, or inside a coarser leaf.
                for &(k, l, i) in &queries {
                    let size = s.layout.cell_size::<u64>(l).unwrap();
                    let first = s.layout.cell_start(k, l).unwrap();
                    cells += 1;
                    match locate_cell(keys, first, first + size, i) {
                        CellLocation::InsideLeaf(j) => {
                            assert!(keys[j] <= first && first + size <= keys[j + 1], "{what}: leaf {i} level {l}");
                            inside += 1;
                            inside_nonempty += usize::from(starts[j + 1] > starts[j]);
                        }
                        CellLocation::Leaves { first: j, end: e } => {
                            assert_eq!((keys[j], keys[e]), (first, first + size), "{what}: leaf {i} level {l}");
                        }
                    }
                }
            }
        }
    }
    eprintln!(
        "nfcount stencils: {cells} cells queried (every leaf's, its parent's, its children's), {inside} inside a coarser leaf ({inside_nonempty} of them \
         with particles, the only ones that search particle keys)"
    );
    assert!(inside_nonempty > 0 && inside < cells, "both kinds of cells are exercised");
}

/// The per-particle integer coordinates and per-level shifts of `shape`'s keys, from
/// orrery-core's decoders alone (nothing of the stencil code).
struct Coordinates {
    shape: Shape,
    binary: BinaryLayout<f64, u64>,
}

impl Coordinates {
    fn new(shape: Shape, bbox: Aabb<f64>) -> Self {
        Self { shape, binary: BinaryLayout::full_depth(bbox) }
    }

    /// The level-`level` cell coordinates of the cell holding `key`.
    fn cell(&self, key: u64, level: u32) -> [u64; 3] {
        match self.shape {
            Shape::Octree(curve) => curve.decode_3d::<u64>(key).unwrap().map(|v| u64::from(v >> (21 - level))),
            Shape::Binary => {
                let full = self.binary.decode(key).unwrap();
                let (bits, cell) = (self.binary.bits_per_axis(), self.binary.cell_bits(level).unwrap());
                [0, 1, 2].map(|a| full[a] >> (bits[a] - cell[a]))
            }
        }
    }

    /// Particles whose level-`level` cell is within one cell of `key`'s on every axis.
    fn stencil(&self, particles: &[u64], key: u64, level: u32) -> u64 {
        let c = self.cell(key, level);
        let end = KeyLayout::octree::<u64>().key_end::<u64>();
        particles
            .iter()
            .filter(|&&p| p < end)
            .filter(|&&p| {
                let q = self.cell(p, level);
                (0..3).all(|a| q[a].abs_diff(c[a]) <= 1)
            })
            .count() as u64
    }
}

/// The datasets in the unit cube, and the thin disk and a uniform slab in their own
/// flat bounding boxes (binary keys then split x and y several times before z).
fn datasets_and_flat_boxes(n: usize, seed: u64) -> Vec<(&'static str, Cloud, Option<Aabb<f64>>)> {
    let mut slab = common::uniform(n, seed);
    slab.z.iter_mut().for_each(|z| *z *= 0.1);
    let mut all: Vec<_> = datasets(n, seed).into_iter().map(|(name, cloud)| (name, cloud, Some(unit_box()))).collect();
    all.push(("thin disk, own box", common::thin_disk(n, seed), None));
    all.push(("slab, own box", slab, None));
    all
}

#[test]
fn the_stencil_counts_particles_by_their_cell_coordinates() {
    for (name, cloud, bbox) in datasets_and_flat_boxes(3000, 5) {
        for shape in SHAPES {
            let s = input::sort_particles(cloud.view(), bbox, shape).unwrap();
            let g = geometry(shape, &s);
            let coordinates = Coordinates::new(shape, s.bbox);
            let tree = build(&s.keys, s.layout, &Rebalance::new(Criterion::leaf_count(8))).unwrap().0;
            let keys = tree.leaves().keys();
            let starts = leaf_starts(keys, &s.keys);
            let mut partial = 0;
            for i in 0..tree.leaves().len() {
                let level = tree.leaves().level(i).unwrap();
                let expected = coordinates.stencil(&s.keys, keys[i], level);
                assert_eq!(stencil_count_reference(g, &s.keys, keys[i], level), expected, "{name} {shape:?} leaf {i}");
                assert_eq!(stencil_count(g, keys, &starts, &s.keys, keys[i], level, i), expected, "{name} {shape:?}");
                partial += usize::from(expected > 0 && expected < s.active as u64);
            }
            assert!(partial > 0, "{name} {shape:?}: some stencils hold some but not all particles");
        }
    }
}

/// A Morton key of 21-bit integer coordinates.
fn morton(x: u32, y: u32, z: u32) -> u64 {
    Curve::Morton.encode_3d(x, y, z).unwrap()
}

/// The first key of the level-2 (`shift = 19`) or level-3 (`shift = 18`) Morton cell with
/// these cell coordinates.
fn cell_key(c: [u32; 3], shift: u32) -> u64 {
    morton(c[0] << shift, c[1] << shift, c[2] << shift)
}

/// The hand-checked particles: in level-2 cell coordinates (a 4 x 4 x 4 grid), 3 in
/// (0,0,0), 2 in (1,1,1), 1 in (2,0,0), 5 in (3,3,3) and 1 in (1,0,0), each at its
/// cell's lower corner (so at level 3 in (0,0,0), (2,2,2), (4,0,0), (6,6,6), (2,0,0)).
fn hand_particles() -> Vec<u64> {
    let l2 = 1u32 << 19;
    let mut keys = vec![morton(0, 0, 0), morton(1, 0, 0), morton(0, 1, 0)];
    keys.extend([morton(l2, l2, l2), morton(l2 + 1, l2, l2)]);
    keys.push(morton(2 * l2, 0, 0));
    keys.extend((0..5).map(|i| morton(3 * l2 + i, 3 * l2, 3 * l2)));
    keys.push(morton(l2, 0, 0));
    keys.sort_unstable();
    keys
}

#[test]
fn hand_checked_octree_stencils_and_decisions() {
    let layout = KeyLayout::octree::<u64>();
    let g = KeyGeometry::Octree(Curve::Morton);
    let particles = hand_particles();
    // Tree A: the 64 level-2 cells; in Morton order leaf index = the cell's 6-bit key.
    let uniform = Leaves::from_keys((0..=64).map(|i| i << 57).collect(), layout).unwrap();
    let state = NfState::evaluate(uniform.clone(), &particles, g).unwrap();
    let leaf = |c: [u32; 3]| (cell_key(c, 19) >> 57) as usize;
    let starts = state.starts();
    let s = |c: [u32; 3]| stencil_count(g, uniform.keys(), starts, &particles, cell_key(c, 19), 2, leaf(c));
    // S by hand: the particles in the cells within one cell on every axis.
    assert_eq!(s([0, 0, 0]), 3 + 2 + 1); // (0,0,0), (1,1,1), (1,0,0)
    assert_eq!(s([1, 1, 1]), 3 + 2 + 1 + 1); // and (2,0,0)
    assert_eq!(s([1, 0, 0]), 3 + 2 + 1 + 1);
    assert_eq!(s([2, 0, 0]), 2 + 1 + 1); // (1,1,1), itself, (1,0,0)
    assert_eq!(s([3, 3, 3]), 5); // alone in its corner
    assert_eq!(s([2, 2, 2]), 2 + 5); // empty itself
    assert_eq!(s([3, 0, 0]), 1);
    let nf = state.nf();
    for (c, w) in
        [([0, 0, 0], 3 * 6), ([1, 1, 1], 2 * 7), ([1, 0, 0], 7), ([2, 0, 0], 4), ([3, 3, 3], 25), ([2, 2, 2], 0)]
    {
        assert_eq!(nf[leaf(c)], w, "W of cell {c:?}");
    }
    // Every level-1 parent sees all 12 particles; a group value is its own count times 12.
    let group = state.group_nf();
    assert_eq!(group[leaf([0, 0, 0])], 6 * 12);
    assert_eq!(group[leaf([2, 0, 0])], 12);
    assert_eq!(group[leaf([2, 2, 2])], 5 * 12);
    assert_eq!(group[leaf([0, 2, 0])], 0);
    assert_eq!(group[leaf([1, 1, 1])], NO_GROUP, "not the first of its group");
    // Threshold 20: (3,3,3) splits (25 > 20), the groups of (1,0,0)'s and the empty
    // parents merge (12 and 0 <= 20), the groups of (0,0,0) and (1,1,1) stay (72, 60).
    let ops = state.decide(20).unwrap();
    assert_eq!(ops[leaf([3, 3, 3])], 8);
    assert_eq!(ops[leaf([2, 0, 0])], 1, "the first sibling keeps the parent's key");
    assert_eq!(ops[leaf([3, 1, 1])], 0);
    assert_eq!(ops[leaf([0, 3, 0])], 0);
    assert_eq!(ops[leaf([0, 0, 0])], 1);
    assert_eq!(ops[leaf([1, 1, 1])], 1);
    let step = state.apply(&ops, &particles).unwrap();
    assert_eq!(step.state.leaves().len(), 8 + (7 + 8) + 6);
    assert_eq!(step.fresh_leaves, 8);
    assert_eq!(step.state, NfState::evaluate(step.state.leaves().clone(), &particles, g).unwrap());
    let (tree, run) =
        build(&particles, layout, &Rebalance::new(Criterion::NfCount { threshold: 20, geometry: g })).unwrap();
    assert!(run.converged);
    assert_nf_converged(&tree, &particles, g, 20, "hand case");

    // Tree B: level-2 cells (0,0,0) and (1,1,1) split into their level-3 children. The
    // level-2 stencils stay the same however their cells are refined.
    let split = [leaf([0, 0, 0]), leaf([1, 1, 1])];
    let keys: Vec<u64> = (uniform.keys().iter().enumerate())
        .flat_map(|(i, &k)| (0..if split.contains(&i) { 8 } else { 1 }).map(move |n| k + (n << 54)))
        .collect();
    let refined = Leaves::from_keys(keys, layout).unwrap();
    let starts = leaf_starts(refined.keys(), &particles);
    let s = |key: u64, level| stencil_count(g, refined.keys(), &starts, &particles, key, level, 40);
    assert_eq!(s(cell_key([1, 0, 0], 19), 2), 7, "(0,0,0) and (1,1,1) are now eight leaves each");
    assert_eq!(s(cell_key([2, 0, 0], 19), 2), 4);
    // Level-3 stencils: (0,0,0) sees only itself; (1,1,1) (empty) sees (0,0,0), the
    // level-3 leaf (2,2,2) and the cell (2,0,0) inside the level-2 leaf (1,0,0).
    assert_eq!(s(cell_key([0, 0, 0], 18), 3), 3);
    assert_eq!(s(cell_key([1, 1, 1], 18), 3), 3 + 2 + 1);
    assert_eq!(s(cell_key([2, 2, 2], 18), 3), 2);
    let (l3, l2) = (1u64 << 54, 1u64 << 57);
    let (c111, c100) = (cell_key([1, 1, 1], 19), cell_key([1, 0, 0], 19));
    let index = |key: u64| refined.keys().iter().position(|&k| k == key).unwrap();
    let c200 = cell_key([2, 0, 0], 18);
    // From every starting leaf, the galloping searches find the same leaves.
    for near in 0..refined.len() + 3 {
        let expected = CellLocation::Leaves { first: index(c111), end: index(c111) + 8 };
        assert_eq!(locate_cell(refined.keys(), c111, c111 + l2, near), expected);
        assert_eq!(locate_cell(refined.keys(), c200, c200 + l3, near), CellLocation::InsideLeaf(index(c100)));
        assert_eq!(
            locate_cell(refined.keys(), c100, c100 + l2, near),
            CellLocation::Leaves { first: index(c100), end: index(c100) + 1 }
        );
    }
    let state = NfState::evaluate(refined.clone(), &particles, g).unwrap();
    assert_eq!(state.nf()[index(cell_key([0, 0, 0], 18))], 3 * 3);
    assert_eq!(state.nf()[index(cell_key([2, 2, 2], 18))], 2 * 2);
    assert_eq!(state.group_nf()[index(cell_key([0, 0, 0], 18))], 3 * 6, "the group (0,0,0) is its level-2 cell");
}

#[test]
fn hand_checked_binary_stencils() {
    // A 4 x 2 x 1 box splits x, x, y, x, y, z, ..: level 5 has 8 x 4 x 1 cells of side
    // 0.5, and its stencils have no neighbours along z.
    let bbox = Aabb::new(Vec3::zeros(), Vec3::new(4.0, 2.0, 1.0)).unwrap();
    let points = [(0.25, 0.25), (0.75, 0.75), (1.25, 1.25), (0.25, 1.75)];
    let cloud = Cloud {
        x: points.iter().map(|p| p.0).collect(),
        y: points.iter().map(|p| p.1).collect(),
        z: vec![0.5; points.len()],
    };
    let s = input::sort_particles(cloud.view(), Some(bbox), Shape::Binary).unwrap();
    let g = KeyGeometry::new(Shape::Binary, &bbox).unwrap();
    let KeyGeometry::Binary(axes) = g else { panic!("a binary geometry") };
    assert_eq!(axes.cell_bits(5), [3, 2, 0]);
    let binary = BinaryLayout::<f64, u64>::full_depth(bbox);
    let leaves = Leaves::from_keys((0..=32).map(|i| i << 58).collect(), s.layout).unwrap();
    let starts = leaf_starts(leaves.keys(), &s.keys);
    let stencil = |x: f64, y: f64| {
        let key = s.layout.cell_start(binary.key(Vec3::new(x, y, 0.5)).unwrap(), 5).unwrap();
        let cheap = stencil_count(g, leaves.keys(), &starts, &s.keys, key, 5, 0);
        assert_eq!(cheap, stencil_count_reference(g, &s.keys, key, 5));
        cheap
    };
    // Cells (x, y) in units of 0.5, particles in (0,0), (1,1), (2,2), (0,3).
    assert_eq!(stencil(0.25, 0.25), 2); // (0,0), (1,1)
    assert_eq!(stencil(0.75, 0.75), 3); // (0,0), (1,1), (2,2)
    assert_eq!(stencil(1.25, 1.25), 2); // (1,1), (2,2)
    assert_eq!(stencil(0.25, 1.75), 1); // (0,3) alone: (1,1) is two rows down
    assert_eq!(stencil(0.25, 1.25), 2); // empty (0,2): (1,1) and (0,3)
    assert_eq!(stencil(3.75, 1.75), 0);
    // Level 2 has only 4 x-cells of side 1: (0..1) holds 2 particles, (1..2) 2 more.
    let key = |x: f64| s.layout.cell_start(binary.key(Vec3::new(x, 0.5, 0.5)).unwrap(), 2).unwrap();
    assert_eq!(stencil_count_reference(g, &s.keys, key(0.5), 2), 4);
    assert_eq!(stencil_count_reference(g, &s.keys, key(2.5), 2), 1);
    assert_eq!(stencil_count_reference(g, &s.keys, key(3.5), 2), 0);
}

/// The converged state of NFCount, checked against the 27-search reference: every leaf's
/// W is `n * S` and within the threshold (or at the key depth), and no complete sibling
/// group's parent would be within it.
fn assert_nf_converged(tree: &Tree, particles: &[u64], g: KeyGeometry, threshold: u64, what: &str) {
    let leaves = tree.leaves();
    let (keys, layout) = (leaves.keys(), leaves.layout());
    let nf = tree.nf().expect("an NFCount tree has NF values");
    assert_eq!(tree.counts(), leaf_counts(keys, particles), "{what}");
    for i in 0..leaves.len() {
        let level = leaves.level(i).unwrap();
        let w = u64::from(tree.counts()[i]) * stencil_count_reference(g, particles, keys[i], level);
        assert_eq!(nf[i], w, "{what}: leaf {i}");
        assert!(w <= threshold || level == layout.levels(), "{what}: leaf {i} at level {level} has W = {w}");
        if let Some((first, 0)) = sibling_group(keys, i, level, layout) {
            let n: u64 = tree.counts()[first..first + layout.children() as usize].iter().map(|&c| u64::from(c)).sum();
            let parent = n * stencil_count_reference(g, particles, keys[first], level - 1);
            assert!(parent > threshold, "{what}: the group at leaf {first} could merge (W = {parent})");
        }
    }
}

#[test]
fn converged_nfcount_trees_satisfy_the_invariant() {
    for (name, cloud) in common::all(20_000, 13) {
        for shape in SHAPES {
            let s = sorted(&cloud, shape);
            let g = geometry(shape, &s);
            for threshold in [DEFAULT_THRESHOLD, DEEP] {
                let what = format!("{name} {shape:?} threshold {threshold}");
                let (tree, run) = build(&s.keys, s.layout, &nf_options(shape, &s, threshold)).unwrap();
                assert!(run.converged, "{what}: {run:?}");
                assert!(tree.leaves().len() > 1, "{what}: the root alone is over the threshold");
                assert_nf_converged(&tree, &s.keys, g, threshold, &what);
            }
        }
    }
}

#[test]
fn identical_particles_refine_to_the_key_depth() {
    let cloud = common::identical(1000);
    for shape in SHAPES {
        let s = sorted(&cloud, shape);
        let (tree, _) = build(&s.keys, s.layout, &nf_options(shape, &s, DEFAULT_THRESHOLD)).unwrap();
        let full = tree.counts().iter().position(|&c| c == 1000).unwrap();
        assert_eq!(tree.leaves().level(full).unwrap(), s.layout.levels(), "{shape:?}");
        assert_eq!(tree.nf().unwrap()[full], 1000 * 1000, "{shape:?}: W of one full stencil");
    }
}

/// Tallies of a run of passes.
#[derive(Default)]
struct Tally {
    merges: usize,
    splits: usize,
    carried: usize,
    fresh_groups: usize,
}

/// Runs NFCount passes by hand from `start`, checking after every pass that the carried
/// values equal a full evaluation and that only split children were evaluated.
fn passes_checked(start: Leaves, particles: &[u64], g: KeyGeometry, threshold: u64, what: &str) -> (NfState, Tally) {
    let mut state = NfState::evaluate(start, particles, g).unwrap();
    let mut tally = Tally::default();
    for pass in 0..32 {
        let ops = state.decide(threshold).unwrap();
        let step = state.apply(&ops, particles).unwrap();
        let full = NfState::evaluate(step.state.leaves().clone(), particles, g).unwrap();
        assert_eq!(step.state, full, "{what}: pass {pass}");
        let split_children: usize = ops.iter().filter(|&&op| op > 1).map(|&op| op as usize).sum();
        assert_eq!(step.fresh_leaves, split_children, "{what}: pass {pass}");
        let complete = full.group_nf().iter().filter(|&&v| v != NO_GROUP).count();
        assert!(step.fresh_groups <= complete, "{what}: pass {pass}");
        tally.merges += ops.iter().filter(|&&op| op == 0).count();
        tally.splits += ops.iter().filter(|&&op| op > 1).count();
        tally.carried += step.state.leaves().len() - step.fresh_leaves;
        tally.fresh_groups += step.fresh_groups;
        if !step.changed {
            assert_eq!((step.fresh_leaves, step.fresh_groups), (0, 0), "{what}: an unchanged pass evaluates nothing");
            return (step.state, tally);
        }
        state = step.state;
    }
    panic!("{what}: no convergence");
}

#[test]
fn carried_values_equal_a_full_recomputation() {
    let mut total = Tally::default();
    for (name, cloud) in datasets(8000, 17) {
        for shape in SHAPES {
            let s = sorted(&cloud, shape);
            let g = geometry(shape, &s);
            let options = nf_options(shape, &s, DEEP);
            let (built, _) = build(&s.keys, s.layout, &options).unwrap();
            // From the root (splits), from a deep LeafCount tree (merges) and from a
            // shallow one (both).
            for bucket in [0, 2, 64] {
                let what = format!("{name} {shape:?} from bucket {bucket}");
                let start = if bucket == 0 {
                    Leaves::root(s.layout)
                } else {
                    build(&s.keys, s.layout, &Rebalance::new(Criterion::leaf_count(bucket))).unwrap().0.leaves().clone()
                };
                let (state, tally) = passes_checked(start, &s.keys, g, DEEP, &what);
                assert_eq!(state.leaves(), built.leaves(), "{what}");
                assert_eq!(Some(state.nf()), built.nf(), "{what}");
                assert_eq!(state.counts(), built.counts(), "{what}");
                total.merges += tally.merges;
                total.splits += tally.splits;
                total.carried += tally.carried;
                total.fresh_groups += tally.fresh_groups;
            }
        }
    }
    eprintln!(
        "nfcount carry: {} merged and {} split leaves decided; {} leaves carried over, {} groups evaluated",
        total.merges, total.splits, total.carried, total.fresh_groups
    );
    assert!(total.merges > 0 && total.splits > 0 && total.carried > 0 && total.fresh_groups > 0);
}

#[test]
fn an_incremental_nfcount_update_equals_a_build_from_scratch() {
    for (name, original) in datasets(10_000, 11) {
        for shape in SHAPES {
            let mut cloud = Cloud { x: original.x.clone(), y: original.y.clone(), z: original.z.clone() };
            let s = sorted(&cloud, shape);
            let options = nf_options(shape, &s, DEEP);
            let (mut tree, _) = build(&s.keys, s.layout, &options).unwrap();
            for step in 0..3 {
                cloud.jitter(2e-3, 200 + step);
                let s = sorted(&cloud, shape);
                let run = update(&mut tree, &s.keys, &options).unwrap();
                assert!(run.converged, "{name} {shape:?} step {step}");
                let (fresh, _) = build(&s.keys, s.layout, &options).unwrap();
                assert_eq!(tree, fresh, "{name} {shape:?} step {step}");
            }
            // A converged tree is one confirming pass away.
            let before = tree.clone();
            let run = update(&mut tree, &sorted(&cloud, shape).keys, &options).unwrap();
            assert_eq!((run.passes, run.converged, &tree), (1, true, &before), "{name} {shape:?}");
        }
    }
}

#[test]
fn only_nfcount_trees_carry_nf_values() {
    let cloud = common::plummer(4000, 3);
    let s = sorted(&cloud, Shape::Octree(Curve::Hilbert));
    let (mut tree, _) = build(&s.keys, s.layout, &Rebalance::new(Criterion::leaf_count(16))).unwrap();
    assert_eq!(tree.nf(), None);
    update(&mut tree, &s.keys, &nf_options(Shape::Octree(Curve::Hilbert), &s, DEEP)).unwrap();
    assert_eq!(tree.nf().map(<[u64]>::len), Some(tree.leaves().len()));
    update(&mut tree, &s.keys, &Rebalance::new(Criterion::leaf_count(16))).unwrap();
    assert_eq!(tree.nf(), None);
}

/// A leaf array whose first leaf is `[0, first_size)`, padded with the largest aligned
/// cells up to the end.
fn padded(first_size: u64, layout: KeyLayout) -> Leaves {
    let (b, end) = (layout.bits_per_level(), layout.key_end::<u64>());
    let mut keys = vec![0, first_size];
    let mut k = first_size;
    while k < end {
        k += 1u64 << (k.trailing_zeros() / b * b);
        keys.push(k);
    }
    Leaves::from_keys(keys, layout).unwrap()
}

#[test]
fn nfcount_split_jumps_follow_the_thresholds() {
    let t = 1000u64;
    for (layout, cases) in [
        (
            KeyLayout::octree::<u64>(),
            vec![(t, 1), (t + 1, 8), (64 * t, 8), (64 * t + 1, 64), (4096 * t + 1, 512), (262_144 * t + 1, 4096)],
        ),
        (
            KeyLayout::binary::<u64>(),
            vec![(t, 1), (t + 1, 2), (4 * t, 2), (4 * t + 1, 4), (4u64.pow(11) * t + 1, 4096)],
        ),
    ] {
        let root = Leaves::root(layout);
        for (w, op) in cases {
            assert_eq!(nf_op(root.keys(), &[w], &[NO_GROUP], 0, t, layout), op, "W {w} with {layout:?}");
        }
        // One level above the key depth, a huge W splits one level only.
        let deep = padded(layout.cell_size::<u64>(layout.levels() - 1).unwrap(), layout);
        let mut nf = vec![0; deep.len()];
        nf[0] = u64::MAX / 2;
        let group = vec![NO_GROUP; deep.len()];
        assert_eq!(nf_op(deep.keys(), &nf, &group, 0, t, layout), layout.children(), "{layout:?}");
    }
    assert_eq!(nfcount::nf_growth(KeyLayout::octree::<u64>()), 64);
    assert_eq!(nfcount::nf_growth(KeyLayout::binary::<u64>()), 4);
}

#[test]
fn nfcount_bad_input_gets_typed_errors() {
    let cloud = common::uniform(500, 1);
    let s = sorted(&cloud, Shape::Octree(Curve::Morton));
    let octree = Criterion::nf_count(Shape::Octree(Curve::Morton), &unit_box()).unwrap();
    assert!(matches!(
        build(&s.keys, s.layout, &Rebalance::new(octree.with_threshold(0))),
        Err(Error::InvalidArgument { what: "threshold", .. })
    ));
    // A geometry of other keys than the tree's.
    let binary = Criterion::nf_count(Shape::Binary, &unit_box()).unwrap();
    assert!(matches!(
        build(&s.keys, s.layout, &Rebalance::new(binary)),
        Err(Error::InvalidArgument { what: "NFCount geometry", .. })
    ));
    let b = sorted(&cloud, Shape::Binary);
    assert!(matches!(
        build(&b.keys, b.layout, &Rebalance::new(octree)),
        Err(Error::InvalidArgument { what: "NFCount geometry", .. })
    ));
    let point = Aabb::new(Vec3::new(1.0, 1.0, 1.0), Vec3::new(1.0, 1.0, 1.0)).unwrap();
    assert!(matches!(Criterion::nf_count(Shape::Binary, &point), Err(Error::InvalidBox { .. })));
    assert!(matches!(KeyGeometry::new(Shape::Octree(Curve::Hilbert), &point), Err(Error::InvalidBox { .. })));
    // The state's own checks.
    let g = KeyGeometry::Octree(Curve::Morton);
    let root = Leaves::root(s.layout);
    assert!(matches!(
        NfState::evaluate(root.clone(), &[5, 1], g),
        Err(Error::InvalidArgument { what: "particle keys", .. })
    ));
    assert!(matches!(
        NfState::evaluate(Leaves::root(b.layout), &b.keys, g),
        Err(Error::InvalidArgument { what: "NFCount geometry", .. })
    ));
    let state = NfState::evaluate(root, &s.keys, g).unwrap();
    assert!(matches!(state.decide(0), Err(Error::InvalidArgument { what: "threshold", .. })));
    assert!(matches!(state.apply(&[1, 1], &s.keys), Err(Error::LengthMismatch { .. })));
    assert!(matches!(state.apply(&[3], &s.keys), Err(Error::InvalidArgument { .. })));
    // The LeafCount criterion has no NF threshold; the criterion stays Copy.
    assert_eq!(Criterion::leaf_count(4).with_threshold(9), Criterion::leaf_count(4));
    let (a, c) = copy_twice(octree);
    assert_eq!(a, c);
}

/// Compiles only for `Copy` types.
fn copy_twice<T: Copy>(t: T) -> (T, T) {
    (t, t)
}
