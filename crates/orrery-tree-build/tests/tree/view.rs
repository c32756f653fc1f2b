//! The TreeView against oracles that do traverse: a breadth-first construction from the
//! root, a recursive preorder, counted particle ranges and real particle positions; on
//! every dataset and shape, a hand-made tree with every field, the child-centric layout,
//! the walk links, errors, and the checker against corrupted arrays.

use std::collections::HashSet;

use orrery_core::sfc::{BinaryLayout, Curve, KeyLayout};
use orrery_core::{Aabb, Error, Vec3};
use orrery_tree_build::counts::leaf_starts;
use orrery_tree_build::view::{Geometry, NF_INTERNAL, NONE, TreeView, TreeViewParts};
use orrery_tree_build::{Criterion, Leaves, Rebalance, Shape, SortedKeys, build, input};
use proptest::prelude::*;

use crate::common::{self, Cloud, unit_box};

const SHAPES: [Shape; 3] = [Shape::Octree(Curve::Morton), Shape::Octree(Curve::Hilbert), Shape::Binary];

/// The tree of `cloud` in `bbox` with LeafCount `bucket`, its sorted keys and its view
/// (with NF values `3 * count + 1` per leaf).
fn view_of(cloud: &Cloud, bbox: Aabb<f64>, shape: Shape, bucket: u32) -> (TreeView<f64>, SortedKeys<f64>, Leaves) {
    let sorted = input::sort_particles(cloud.view(), Some(bbox), shape).unwrap();
    let (tree, run) = build(&sorted.keys, sorted.layout, &Rebalance::new(Criterion::leaf_count(bucket))).unwrap();
    assert!(run.converged);
    let nf: Vec<u64> = tree.counts().iter().map(|&c| 3 * u64::from(c) + 1).collect();
    let view = TreeView::from_tree(&tree, &sorted, shape, Some(&nf)).unwrap();
    (view, sorted, tree.leaves().clone())
}

/// The tree by traversal: breadth first from the root, children in slot order, a cell
/// split unless it is a leaf of `K`. Level order with key order within a level, by
/// construction.
struct Oracle {
    keys: Vec<u64>,
    levels: Vec<u32>,
    parents: Vec<u32>,
    first_children: Vec<u32>,
}

fn oracle(leaves: &Leaves) -> Oracle {
    let (k, layout) = (leaves.keys(), leaves.layout());
    let leaf_cells: HashSet<(u64, u32)> = (0..leaves.len()).map(|i| (k[i], leaves.level(i).unwrap())).collect();
    let mut o = Oracle { keys: vec![0], levels: vec![0], parents: vec![NONE], first_children: vec![] };
    let mut i = 0;
    while i < o.keys.len() {
        let (key, level) = (o.keys[i], o.levels[i]);
        if leaf_cells.contains(&(key, level)) {
            o.first_children.push(NONE);
        } else {
            o.first_children.push(o.keys.len() as u32);
            let size = layout.cell_size::<u64>(level + 1).unwrap();
            for c in 0..u64::from(layout.children()) {
                o.keys.push(key + c * size);
                o.levels.push(level + 1);
                o.parents.push(i as u32);
            }
        }
        i += 1;
    }
    o
}

/// Preorder by recursion over the oracle's children.
fn oracle_preorder(o: &Oracle, children: u32) -> Vec<u32> {
    let mut out = Vec::with_capacity(o.keys.len());
    let mut stack = vec![0u32];
    while let Some(n) = stack.pop() {
        out.push(n);
        let first = o.first_children[n as usize];
        if first != NONE {
            stack.extend((first..first + children).rev());
        }
    }
    out
}

fn lo_hi(view: &TreeView<f64>, n: u32) -> ([f64; 3], [f64; 3]) {
    let b = view.cell_box(n);
    (b.lo(), b.hi())
}

/// Child boxes inside the parent's (within `tol`), pairwise disjoint (within `tol`), and
/// their volumes summing to the parent's (relative `tol`): the children tile the parent.
fn assert_boxes_tile(view: &TreeView<f64>, tol: f64, what: &str) {
    for n in 0..view.num_nodes() as u32 {
        let Some(children) = view.children(n) else { continue };
        let (plo, phi) = lo_hi(view, n);
        let volume = |lo: [f64; 3], hi: [f64; 3]| (0..3).map(|a| hi[a] - lo[a]).product::<f64>();
        let mut sum = 0.0;
        for c in children.clone() {
            let (lo, hi) = lo_hi(view, c);
            for a in 0..3 {
                assert!(
                    lo[a] >= plo[a] - tol && hi[a] <= phi[a] + tol,
                    "{what}: child {c} leaves parent {n} on axis {a}"
                );
            }
            sum += volume(lo, hi);
            for d in children.clone().filter(|&d| d > c) {
                let (dlo, dhi) = lo_hi(view, d);
                assert!(
                    (0..3).any(|a| hi[a] <= dlo[a] + tol || dhi[a] <= lo[a] + tol),
                    "{what}: children {c} and {d} of {n} overlap"
                );
            }
        }
        let parent = volume(plo, phi);
        assert!((sum - parent).abs() <= tol * parent, "{what}: children of {n} fill {sum} of {parent}");
    }
}

/// Every property the issue lists, against the oracles, for a view of `sorted`.
#[allow(clippy::too_many_lines)]
fn assert_view(
    view: &TreeView<f64>,
    sorted: &SortedKeys<f64>,
    leaves: &Leaves,
    cloud: &Cloud,
    exact: bool,
    what: &str,
) {
    view.check().unwrap_or_else(|e| panic!("{what}: {e}"));
    let layout = leaves.layout();
    let c = layout.children();
    let (n, l) = (view.num_nodes(), leaves.len());
    let k = leaves.keys();

    // The same nodes as the traversal, in the same order.
    let o = oracle(leaves);
    assert_eq!(view.keys(), o.keys, "{what}: keys");
    assert_eq!(view.levels(), o.levels, "{what}: levels");
    assert_eq!(view.parents(), o.parents, "{what}: parents");
    assert_eq!(view.first_children(), o.first_children, "{what}: first children");
    assert_eq!(view.num_internal(), (l - 1) / (c as usize - 1), "{what}: internal count");
    assert_eq!(view.num_leaves(), l);
    assert_eq!(view.first_children().iter().filter(|&&f| f == NONE).count(), l, "{what}: leaf flags");

    for i in 0..n {
        let (key, level) = (view.keys()[i], view.levels()[i]);
        let end = key + layout.cell_size::<u64>(level).unwrap();
        // Particle ranges, counted in the sorted keys.
        let begin = sorted.keys.partition_point(|&x| x < key);
        let stop = sorted.keys.partition_point(|&x| x < end);
        assert_eq!(view.particles(i as u32), begin as u32..stop as u32, "{what}: particles of node {i}");
        if let Some(children) = view.children(i as u32) {
            let sum: u32 = children.clone().map(|ch| view.particle_counts()[ch as usize]).sum();
            assert_eq!(sum, view.particle_counts()[i], "{what}: children's particles of {i}");
            for (slot, ch) in children.enumerate() {
                let ch = ch as usize;
                assert_eq!(view.parents()[ch] as usize, i);
                assert_eq!(view.levels()[ch], level + 1, "{what}: level of child {ch}");
                let size = layout.cell_size::<u64>(level + 1).unwrap();
                assert_eq!(view.keys()[ch], key + slot as u64 * size, "{what}: contiguous child {slot} of {i}");
                assert!(view.keys()[ch] >= key && view.keys()[ch] + size <= end, "{what}: child {ch} outside {i}");
            }
            assert_eq!(view.nf().unwrap()[i], NF_INTERNAL);
        } else {
            let leaf = view.leaf_begins()[i] as usize;
            assert_eq!((k[leaf], k[leaf + 1]), (key, end), "{what}: leaf {leaf} of node {i}");
            assert_eq!(view.leaf_nodes()[leaf] as usize, i);
            assert_eq!(view.nf().unwrap()[i], 3 * u64::from(view.particle_counts()[i]) + 1);
        }
    }
    assert_eq!(view.particles(0), 0..sorted.active as u32, "{what}: the root holds the active particles");
    assert_eq!(view.num_particles(), sorted.active);

    // Leaf-to-node and particle-to-leaf.
    for (leaf, &node) in view.leaf_nodes().iter().enumerate() {
        assert!(view.is_leaf(node));
        assert_eq!(view.keys()[node as usize], k[leaf]);
    }
    for (q, &leaf) in view.particle_leaves().iter().enumerate() {
        let key = sorted.keys[q];
        assert!(k[leaf as usize] <= key && key < k[leaf as usize + 1], "{what}: particle {q} in leaf {leaf}");
    }

    // Level offsets.
    for level in 0..=view.depth() {
        for node in view.level_range(level).unwrap() {
            assert_eq!(view.levels()[node as usize], level);
        }
    }
    assert_eq!(view.level_range(view.depth() + 1), None);

    // Boxes: the root is the box, children tile parents, particles lie in their leaf.
    let (min, max) = sorted.bbox.to_f64();
    let root = view.cell_box(0);
    for a in 0..3 {
        assert_eq!(root.centre[a], min[a] + (max[a] - min[a]) / 2.0, "{what}: root centre");
        assert_eq!(root.half[a], (max[a] - min[a]) / 2.0, "{what}: root half");
    }
    assert_boxes_tile(view, if exact { 0.0 } else { 1e-12 }, what);
    for (q, &leaf) in view.particle_leaves().iter().enumerate() {
        let p = common::point(cloud, sorted.order[q] as usize);
        let (lo, hi) = lo_hi(view, view.leaf_nodes()[leaf as usize]);
        for a in 0..3 {
            let tol = 1e-12 * (max[a] - min[a]);
            assert!(p[a] >= lo[a] - tol && p[a] <= hi[a] + tol, "{what}: particle {q} outside its leaf box on {a}");
        }
    }

    assert_dfs(view, &o, what);
    assert_child_centric(view, what);
}

/// Escapes and the DFS order against the recursive preorder; stackless walks equal
/// recursive ones.
fn assert_dfs(view: &TreeView<f64>, o: &Oracle, what: &str) {
    let c = view.layout().children();
    let n = view.num_nodes();
    let pre = oracle_preorder(o, c);
    assert_eq!(view.dfs_order(), pre, "{what}: DFS order");
    let mut size = vec![1u32; n];
    for i in (1..n).rev() {
        size[o.parents[i] as usize] += size[i];
    }
    for (i, &subtree) in size.iter().enumerate() {
        let pos = view.dfs_positions()[i] as usize;
        assert_eq!(pre[pos] as usize, i);
        let expected = pre.get(pos + subtree as usize).copied().unwrap_or(NONE);
        assert_eq!(view.escapes()[i], expected, "{what}: escape of {i}");
        match view.next_sibling(i as u32) {
            Some(s) => assert_eq!(s as usize, i + 1),
            None if i > 0 => {
                assert_eq!(view.escapes()[i], view.escapes()[view.parents()[i] as usize], "{what}: last child {i}");
            }
            None => {}
        }
    }
    // Descend everywhere: every node exactly once, in preorder.
    let walk = |accept: &dyn Fn(u32) -> bool| {
        let mut out = Vec::new();
        let mut node = 0u32;
        while node != NONE {
            out.push(node);
            assert!(out.len() <= n, "{what}: the walk does not end");
            node = if accept(node) || view.is_leaf(node) {
                view.escapes()[node as usize]
            } else {
                view.first_children()[node as usize]
            };
        }
        out
    };
    assert_eq!(walk(&|_| false), pre, "{what}: full walk");
    let mut seen = vec![false; n];
    for &node in &pre {
        assert!(!std::mem::replace(&mut seen[node as usize], true), "{what}: {node} visited twice");
    }
    // Skip subtrees of fewer than 40 particles: the same nodes as a recursive walk.
    let accept = |node: u32| view.particle_counts()[node as usize] < 40;
    let mut expected = Vec::new();
    recurse(view, 0, &accept, &mut expected);
    assert_eq!(walk(&accept), expected, "{what}: pruned walk");
}

/// Preorder of the nodes a recursive walk visits, not descending into accepted nodes.
fn recurse(view: &TreeView<f64>, node: u32, accept: &dyn Fn(u32) -> bool, out: &mut Vec<u32>) {
    out.push(node);
    if !accept(node)
        && let Some(children) = view.children(node)
    {
        for ch in children {
            recurse(view, ch, accept, out);
        }
    }
}

/// The child-centric layout describes the same tree: rebuilt from it alone (breadth first
/// through `child_index + c * M`), every node's key, level and parent agree.
fn assert_child_centric(view: &TreeView<f64>, what: &str) {
    let layout = view.layout();
    let c = layout.children();
    let n = view.num_nodes();
    let node_of = view.child_centric_nodes();
    // The position of a node in cc order and back.
    for i in 0..n {
        assert_eq!(node_of[view.child_centric_positions()[i] as usize] as usize, i);
    }
    // Per level, M is the number of internal nodes.
    for level in 0..=view.depth() {
        let internal = view.level_range(level).unwrap().filter(|&m| !view.is_leaf(m)).count();
        assert_eq!(view.parents_per_level()[level as usize] as usize, internal, "{what}: M of level {level}");
    }
    // Rebuild: keys and levels read through the cc positions only.
    let key = |q: u32| view.keys()[node_of[q as usize] as usize];
    let level = |q: u32| view.levels()[node_of[q as usize] as usize];
    let mut reached = vec![0u32; n];
    reached[0] = 1;
    let mut queue = std::collections::VecDeque::from([0u32]);
    let mut rebuilt = Vec::new();
    while let Some(q) = queue.pop_front() {
        rebuilt.push((key(q), level(q)));
        for slot in 0..c {
            let Some(child) = view.child_centric_child(q, slot) else {
                assert!(view.is_leaf(node_of[q as usize]), "{what}: internal position {q} without child {slot}");
                continue;
            };
            let size = layout.cell_size::<u64>(level(q) + 1).unwrap();
            assert_eq!(key(child), key(q) + u64::from(slot) * size, "{what}: cc child {slot} of position {q}");
            assert_eq!(level(child), level(q) + 1);
            // The same parent in the contiguous layout.
            let node = node_of[child as usize];
            assert_eq!(view.parents()[node as usize], node_of[q as usize], "{what}: parent of cc position {child}");
            assert_eq!(node, view.first_children()[node_of[q as usize] as usize] + slot);
            reached[child as usize] += 1;
            queue.push_back(child);
        }
        assert_eq!(view.child_centric_child(q, c), None);
    }
    assert!(reached.iter().all(|&r| r == 1), "{what}: a position reached other than once");
    let contiguous: Vec<(u64, u32)> = (0..n).map(|i| (view.keys()[i], view.levels()[i])).collect();
    // Breadth first through the cc layout visits parents in cc order, so compare as sets.
    let mut a = rebuilt.clone();
    a.sort_unstable();
    let mut b = contiguous;
    b.sort_unstable();
    assert_eq!(a, b, "{what}: the cc layout has other nodes");
    // Within a level, the cc positions are the transpose: child `slot` of the g-th parent.
    for level in 1..=view.depth() {
        let range = view.level_range(level).unwrap();
        let m = view.parents_per_level()[level as usize - 1];
        for node in range.clone() {
            let j = node - range.start;
            assert_eq!(view.child_centric_positions()[node as usize], range.start + (j % c) * m + j / c);
        }
    }
}

#[test]
fn views_of_every_dataset_and_shape_match_the_traversal() {
    for (name, cloud) in common::all(20_000, 21) {
        for shape in SHAPES {
            let what = format!("{name} {shape:?}");
            let (view, sorted, leaves) = view_of(&cloud, unit_box(), shape, 16);
            assert_view(&view, &sorted, &leaves, &cloud, true, &what);
        }
    }
}

#[test]
fn binary_views_of_rectangular_boxes_have_rectangular_cells() {
    let mut cloud = common::plummer(10_000, 4);
    for (x, z) in cloud.x.iter_mut().zip(cloud.z.iter_mut()) {
        *x = 1.0 + 1.5 * *x; // [-0.5, 2.5]
        *z *= 0.35; // [-0.35, 0.35]
    }
    // Powers of two: every box is exact. Others: nesting within rounding.
    let boxes = [
        (Aabb::new(Vec3::new(-1.0, -1.0, -0.5), Vec3::new(3.0, 1.0, 0.5)).unwrap(), true),
        (Aabb::new(Vec3::new(-0.5, -1.0, -0.35), Vec3::new(2.5, 1.0, 0.35)).unwrap(), false),
    ];
    for (bbox, exact) in boxes {
        let (view, sorted, leaves) = view_of(&cloud, bbox, Shape::Binary, 8);
        assert_view(&view, &sorted, &leaves, &cloud, exact, &format!("binary in {bbox:?}"));
        let Geometry::Binary(binary) = view.geometry() else { panic!("binary geometry") };
        // A level-l cell spans extent / 2^cell_bits(l) per axis: rectangular.
        for node in 0..view.num_nodes() as u32 {
            let bits = binary.cell_bits(view.levels()[node as usize]).unwrap();
            let e = bbox.extent();
            for a in 0..3 {
                let side = 2.0 * view.cell_box(node).half[a];
                let want = e[a] / 2f64.powi(i32::try_from(bits[a]).unwrap());
                assert!((side - want).abs() <= 1e-12 * e[a], "node {node} axis {a}: side {side}, want {want}");
            }
        }
        // An octree geometry would make cubes' fractions on every axis: refused here.
        let lfp = leaf_starts(leaves.keys(), &sorted.keys);
        let octree = Geometry::Octree { curve: Curve::Morton, bbox };
        assert!(matches!(
            TreeView::from_leaves(&leaves, &lfp, octree, None),
            Err(Error::InvalidArgument { what: "geometry", .. })
        ));
    }
}

#[test]
fn removed_particles_are_in_no_node() {
    let mut cloud = common::uniform(3000, 8);
    cloud.x[3] = 4.0;
    cloud.y[17] = -2.0;
    for shape in SHAPES {
        let (view, sorted, leaves) = view_of(&cloud, unit_box(), shape, 8);
        assert_eq!(sorted.active, 2998);
        assert_eq!(view.particles(0), 0..2998);
        assert_eq!(view.particle_leaves().len(), 2998);
        assert_view(&view, &sorted, &leaves, &cloud, true, &format!("removed {shape:?}"));
    }
}

#[test]
fn f32_views_follow_the_same_rule() {
    let cloud = common::gaussian(5000, 6);
    let (x, y, z): (Vec<f32>, Vec<f32>, Vec<f32>) = (
        cloud.x.iter().map(|&v| v as f32).collect(),
        cloud.y.iter().map(|&v| v as f32).collect(),
        cloud.z.iter().map(|&v| v as f32).collect(),
    );
    let positions = orrery_core::PositionsView::new(&x, &y, &z).unwrap();
    let bbox = Aabb::<f32>::new(Vec3::new(-1.0, -0.75, -1.0), Vec3::new(1.0, 1.25, 0.5)).unwrap();
    for shape in SHAPES {
        let sorted = input::sort_particles(positions, Some(bbox), shape).unwrap();
        let (tree, _) = build(&sorted.keys, sorted.layout, &Rebalance::new(Criterion::leaf_count(8))).unwrap();
        let view = TreeView::from_tree(&tree, &sorted, shape, None).unwrap();
        view.check().unwrap();
        assert_eq!(view.nf(), None);
        for (q, &leaf) in view.particle_leaves().iter().enumerate() {
            let i = sorted.order[q] as usize;
            let b = view.cell_box(view.leaf_nodes()[leaf as usize]);
            for (a, v) in [x[i], y[i], z[i]].into_iter().enumerate() {
                assert!((v - b.centre[a]).abs() <= b.half[a] + 1e-6, "{shape:?}: particle {q} axis {a}");
            }
        }
        // The checked entry point of the rule gives the stored boxes.
        for n in 0..view.num_nodes() {
            let cb = view.geometry().cell_box(view.keys()[n], view.levels()[n]).unwrap();
            assert_eq!(view.cell_box(n as u32), cb);
        }
    }
}

/// Cornerstone's example tree: the root split once, its first child split again.
fn example_leaves(layout: KeyLayout) -> Leaves {
    let (l1, l2) = (1u64 << 60, 1u64 << 57);
    let mut keys: Vec<u64> = (0..8).map(|i| i * l2).collect();
    keys.extend((1..8).map(|i| i * l1));
    keys.push(1 << 63);
    Leaves::from_keys(keys, layout).unwrap()
}

#[test]
fn a_hand_made_octree_has_every_field_right() {
    let layout = KeyLayout::octree::<u64>();
    let leaves = example_leaves(layout);
    assert_eq!(leaves.len(), 15);
    let counts = [1u32, 1, 1, 0, 0, 0, 0, 0, 2, 3, 4, 5, 6, 7, 8];
    let mut lfp = vec![0u32];
    for c in counts {
        lfp.push(lfp.last().unwrap() + c);
    }
    let nf: Vec<u64> = (0..15).map(|i| 10 * i).collect();
    let geometry = Geometry::Octree { curve: Curve::Morton, bbox: unit_box() };
    let view = TreeView::from_leaves(&leaves, &lfp, geometry, Some(&nf)).unwrap();
    view.check().unwrap();
    let x = NONE;
    // Level 0: the root; level 1: its child 0 (internal), then children 1..7 (leaves 8..14);
    // level 2: the eight children of node 1 (leaves 0..7).
    assert_eq!((view.num_nodes(), view.num_leaves(), view.num_internal(), view.depth()), (17, 15, 2, 2));
    assert_eq!((15 - 1) / 7, 2);
    let mut keys = vec![0u64];
    keys.extend((0..8).map(|i| i << 60));
    keys.extend((0..8).map(|i| i << 57));
    assert_eq!(view.keys(), keys);
    assert_eq!(view.levels(), [0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2]);
    assert_eq!(view.parents(), [x, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1]);
    assert_eq!(view.first_children(), [1, 9, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x]);
    assert_eq!(view.leaf_begins(), [0, 0, 8, 9, 10, 11, 12, 13, 14, 0, 1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(view.leaf_counts(), [15, 8, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
    assert_eq!(view.particle_begins(), [0, 0, 3, 5, 8, 12, 17, 23, 30, 0, 1, 2, 3, 3, 3, 3, 3]);
    assert_eq!(view.particle_counts(), [38, 3, 2, 3, 4, 5, 6, 7, 8, 1, 1, 1, 0, 0, 0, 0, 0]);
    let i = NF_INTERNAL;
    assert_eq!(view.nf().unwrap(), [i, i, 80, 90, 100, 110, 120, 130, 140, 0, 10, 20, 30, 40, 50, 60, 70]);
    assert_eq!(view.level_offsets(), [0, 1, 9, 17]);
    assert_eq!(view.leaf_nodes(), [9, 10, 11, 12, 13, 14, 15, 16, 2, 3, 4, 5, 6, 7, 8]);
    let mut particle_leaves = vec![0, 1, 2];
    for (leaf, &c) in counts.iter().enumerate().skip(8) {
        particle_leaves.extend(std::iter::repeat_n(leaf as u32, c as usize));
    }
    assert_eq!(view.particle_leaves(), particle_leaves);
    // Preorder: root, node 1, its children 9..16, then 2..8.
    assert_eq!(view.dfs_order(), [0, 1, 9, 10, 11, 12, 13, 14, 15, 16, 2, 3, 4, 5, 6, 7, 8]);
    assert_eq!(view.dfs_positions(), [0, 1, 10, 11, 12, 13, 14, 15, 16, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert_eq!(view.escapes(), [x, 2, 3, 4, 5, 6, 7, 8, x, 10, 11, 12, 13, 14, 15, 16, 2]);
    assert_eq!(view.next_sibling(16), None);
    assert_eq!(view.next_sibling(15), Some(16));
    assert_eq!(view.next_sibling(0), None);
    // One parent per level: the child-centric layout is the identity.
    assert_eq!(view.parents_per_level(), [1, 1, 0]);
    assert_eq!(view.child_centric_positions(), (0..17).collect::<Vec<u32>>());
    assert_eq!(view.child_centric_nodes(), (0..17).collect::<Vec<u32>>());
    assert_eq!(view.child_indices(), [1, 9, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x]);
    // Boxes in [-1, 1]^3: Morton digit = x << 2 | y << 1 | z.
    let b = view.cell_box(0);
    assert_eq!((b.centre, b.half), ([0.0; 3], [1.0; 3]));
    let b = view.cell_box(1 + 1); // level-1 slot 1: z upper
    assert_eq!((b.centre, b.half), ([-0.5, -0.5, 0.5], [0.5; 3]));
    let b = view.cell_box(1 + 6); // slot 6 = 0b110: x, y upper
    assert_eq!((b.centre, b.half), ([0.5, 0.5, -0.5], [0.5; 3]));
    let b = view.cell_box(9 + 7); // level-2 slot 7 inside slot 0: the inner octant
    assert_eq!((b.centre, b.half), ([-0.25, -0.25, -0.25], [0.25; 3]));
    assert_eq!(view.children(1), Some(9..17));
    assert_eq!(view.children(2), None);
    assert_eq!(view.particles(3), 5..8);
    assert_eq!(view.level_range(1), Some(1..9));
}

#[test]
fn a_hand_made_octree_with_two_parents_per_level_is_transposed() {
    // The root split; its children 0 and 1 split again: 8 + 8 + 6 leaves, 3 internal.
    let layout = KeyLayout::octree::<u64>();
    let mut keys: Vec<u64> = (0..16).map(|i| i << 57).collect();
    keys.extend((2..8).map(|i| i << 60));
    keys.push(1 << 63);
    let leaves = Leaves::from_keys(keys, layout).unwrap();
    let lfp: Vec<u32> = (0..=22).collect();
    let view = TreeView::from_leaves(&leaves, &lfp, Geometry::Octree { curve: Curve::Hilbert, bbox: unit_box() }, None)
        .unwrap();
    view.check().unwrap();
    assert_eq!((view.num_nodes(), view.num_internal()), (25, 3));
    assert_eq!(view.level_offsets(), [0, 1, 9, 25]);
    assert_eq!(view.parents_per_level(), [1, 2, 0]);
    assert_eq!(view.first_children()[..3], [1, 9, 17]);
    // Level 2, M = 2: node 9 + g*8 + c goes to 9 + c*2 + g.
    let cc = view.child_centric_positions();
    assert_eq!(cc[9..25], [9, 11, 13, 15, 17, 19, 21, 23, 10, 12, 14, 16, 18, 20, 22, 24]);
    assert_eq!(view.child_centric_nodes()[9..13], [9, 17, 10, 18]);
    // Parents 1 and 2 (positions 1, 2): child index 9 and 10, child c at +2c.
    assert_eq!(view.child_indices()[..3], [1, 9, 10]);
    assert_eq!(view.child_centric_child(2, 3), Some(16));
    assert_eq!(view.child_centric_nodes()[16], 20); // child 3 of node 2: 17 + 3
    assert_eq!(view.parents()[20], 2);
    // Hilbert: the first key of a cell decodes to the corner the curve enters by; the box
    // is the whole cell anyway.
    for n in 0..25u32 {
        let b = view.cell_box(n);
        let side = 2.0 / f64::from(1u32 << view.levels()[n as usize]);
        assert_eq!(b.half, [side / 2.0; 3]);
        for a in 0..3 {
            let lo = b.centre[a] - b.half[a];
            assert_eq!((lo + 1.0) / side, ((lo + 1.0) / side).round(), "node {n}: a cell of the grid");
        }
    }
}

#[test]
fn a_hand_made_binary_tree_in_a_rectangle() {
    // [0, 4] x [0, 2] x [0, 1]: split x, x, y, x, y, z, ... The root split, its first
    // child split again: 3 leaves, (3 - 1) / 1 = 2 internal nodes.
    let bbox = Aabb::new(Vec3::zeros(), Vec3::new(4.0, 2.0, 1.0)).unwrap();
    let binary = BinaryLayout::<f64, u64>::full_depth(bbox);
    let layout = binary.key_layout();
    let leaves = Leaves::from_keys(vec![0, 1 << 61, 1 << 62, 1 << 63], layout).unwrap();
    let view = TreeView::from_leaves(&leaves, &[0, 2, 2, 5], Geometry::Binary(binary), Some(&[7, 8, 9])).unwrap();
    view.check().unwrap();
    let x = NONE;
    assert_eq!(view.keys(), [0, 0, 1 << 62, 0, 1 << 61]);
    assert_eq!(view.levels(), [0, 1, 1, 2, 2]);
    assert_eq!(view.parents(), [x, 0, 0, 1, 1]);
    assert_eq!(view.first_children(), [1, 3, x, x, x]);
    assert_eq!(view.particle_begins(), [0, 0, 2, 0, 2]);
    assert_eq!(view.particle_counts(), [5, 2, 3, 2, 0]);
    assert_eq!(view.nf().unwrap(), [NF_INTERNAL, NF_INTERNAL, 9, 7, 8]);
    assert_eq!(view.leaf_nodes(), [3, 4, 2]);
    assert_eq!(view.particle_leaves(), [0, 0, 2, 2, 2]);
    assert_eq!(view.dfs_order(), [0, 1, 3, 4, 2]);
    assert_eq!(view.escapes(), [x, 2, x, 4, 2]);
    assert_eq!(view.parents_per_level(), [1, 1, 0]);
    let boxes = [
        ([2.0, 1.0, 0.5], [2.0, 1.0, 0.5]),
        ([1.0, 1.0, 0.5], [1.0, 1.0, 0.5]),
        ([3.0, 1.0, 0.5], [1.0, 1.0, 0.5]),
        ([0.5, 1.0, 0.5], [0.5, 1.0, 0.5]),
        ([1.5, 1.0, 0.5], [0.5, 1.0, 0.5]),
    ];
    for (n, (centre, half)) in boxes.into_iter().enumerate() {
        let b = view.cell_box(n as u32);
        assert_eq!((b.centre, b.half), (centre, half), "node {n}");
    }
}

#[test]
fn a_root_leaf_is_a_view_of_one_node() {
    for shape in SHAPES {
        let leaves = Leaves::root(shape.layout());
        let view = TreeView::from_leaves(&leaves, &[0, 3], Geometry::new(shape, unit_box()), None).unwrap();
        view.check().unwrap();
        assert_eq!((view.num_nodes(), view.num_internal(), view.depth()), (1, 0, 0));
        assert_eq!(view.escapes(), [NONE]);
        assert_eq!(view.first_children(), [NONE]);
        assert_eq!(view.particle_leaves(), [0, 0, 0]);
        assert_eq!(view.level_offsets(), [0, 1]);
        assert_eq!(view.parents_per_level(), [0]);
        assert_eq!(view.child_indices(), [NONE]);
    }
}

#[test]
fn bad_input_gets_typed_errors() {
    let layout = KeyLayout::octree::<u64>();
    let leaves = example_leaves(layout);
    let octree = Geometry::Octree { curve: Curve::Morton, bbox: unit_box() };
    let lfp: Vec<u32> = (0..=15).collect();
    let err = |r: Result<TreeView<f64>, Error>| r.unwrap_err();
    assert!(matches!(
        err(TreeView::from_leaves(&leaves, &lfp[..15], octree, None)),
        Error::LengthMismatch { what: "leaf first particles", expected: 16, actual: 15 }
    ));
    let mut decreasing = lfp.clone();
    decreasing[7] = 2;
    assert!(matches!(
        err(TreeView::from_leaves(&leaves, &decreasing, octree, None)),
        Error::InvalidArgument { what: "leaf first particles", .. }
    ));
    let shifted: Vec<u32> = lfp.iter().map(|&s| s + 1).collect();
    assert!(matches!(
        err(TreeView::from_leaves(&leaves, &shifted, octree, None)),
        Error::InvalidArgument { what: "leaf first particles", .. }
    ));
    assert!(matches!(
        err(TreeView::from_leaves(&leaves, &lfp, octree, Some(&[1; 14]))),
        Error::LengthMismatch { what: "NF values", expected: 15, actual: 14 }
    ));
    let mut nf = vec![5u64; 15];
    nf[4] = u64::MAX;
    assert!(matches!(
        err(TreeView::from_leaves(&leaves, &lfp, octree, Some(&nf))),
        Error::InvalidArgument { what: "NF values", .. }
    ));

    // Geometries that do not fit the layout.
    let binary = Geometry::<f64>::new(Shape::Binary, unit_box());
    assert!(matches!(
        err(TreeView::from_leaves(&leaves, &lfp, binary, None)),
        Error::InvalidArgument { what: "geometry", .. }
    ));
    let binary_leaves = Leaves::root(KeyLayout::binary::<u64>());
    assert!(matches!(
        err(TreeView::from_leaves(&binary_leaves, &[0, 0], octree, None)),
        Error::InvalidArgument { what: "geometry", .. }
    ));
    let shallow = Geometry::Binary(BinaryLayout::<f64, u64>::new(unit_box(), 20).unwrap());
    assert!(matches!(
        err(TreeView::from_leaves(&binary_leaves, &[0, 0], shallow, None)),
        Error::InvalidArgument { what: "geometry", .. }
    ));
    let quad = Leaves::root(KeyLayout::quadtree::<u64>());
    assert!(matches!(
        err(TreeView::from_leaves(&quad, &[0, 0], octree, None)),
        Error::InvalidArgument { what: "geometry", .. }
    ));
    assert!(matches!(octree.cell_box(3, 20), Err(Error::InvalidTree { .. })));
    assert!(matches!(octree.cell_box(0, 22), Err(Error::LevelOutOfRange { .. })));
    assert!(matches!(octree.cell_box(1 << 63, 21), Err(Error::InvalidTree { .. })));

    // A tree, keys and shape that disagree.
    let cloud = common::uniform(500, 1);
    let sorted = input::sort_particles(cloud.view(), Some(unit_box()), Shape::Octree(Curve::Hilbert)).unwrap();
    let (tree, _) = build(&sorted.keys, sorted.layout, &Rebalance::new(Criterion::leaf_count(8))).unwrap();
    assert!(matches!(
        err(TreeView::from_tree(&tree, &sorted, Shape::Binary, None)),
        Error::InvalidArgument { what: "shape", .. }
    ));
    let mut unsorted = sorted.clone();
    unsorted.keys.swap(0, 499);
    assert!(matches!(
        err(TreeView::from_tree(&tree, &unsorted, Shape::Octree(Curve::Hilbert), None)),
        Error::InvalidArgument { what: "particle keys", .. }
    ));
}

type Corruption = (&'static str, Box<dyn Fn(&mut TreeViewParts<f64>)>);

/// Each corruption of a valid view's arrays, and the checker's verdict.
#[test]
fn the_checker_rejects_corrupted_arrays() {
    let cloud = common::two_clusters(4000, 3);
    for shape in SHAPES {
        let (view, _, _) = view_of(&cloud, unit_box(), shape, 8);
        let parts = view.clone().into_parts();
        assert_eq!(TreeView::from_parts(parts.clone()).unwrap(), view);
        let n = parts.keys.len();
        let deep = (0..n).rev().find(|&i| parts.levels[i] >= 2 && parts.first_children[i] == NONE).unwrap();
        let internal = (1..n).find(|&i| parts.first_children[i] != NONE).unwrap();
        let leaf = parts.leaf_nodes[0] as usize;
        let escaping = (0..n).find(|&i| parts.escapes[i] != NONE).unwrap();
        let level1 = parts.level_offsets[1] as usize..parts.level_offsets[2] as usize;
        let corruptions: Vec<Corruption> = vec![
            ("parent", Box::new(move |p| p.parents[deep] = 0)),
            ("parent out of range", Box::new(move |p| p.parents[deep] = 1 << 30)),
            ("first child", Box::new(move |p| p.first_children[internal] += 1)),
            ("first child garbage", Box::new(|p| p.first_children[0] = NONE - 1)),
            ("key", Box::new(move |p| p.keys[deep] ^= 1)),
            ("level", Box::new(move |p| p.levels[deep] = 70)),
            ("centre one ulp", Box::new(move |p| p.centres[deep][1] = p.centres[deep][1].next_up())),
            ("half extent", Box::new(move |p| p.half_extents[3][2] *= 2.0)),
            ("escape", Box::new(move |p| p.escapes[escaping] = NONE)),
            ("escape garbage", Box::new(move |p| p.escapes[0] = 12345)),
            (
                "DFS positions swapped",
                Box::new(move |p| {
                    let (a, b) = (p.dfs_order[1] as usize, p.dfs_order[2] as usize);
                    p.dfs_positions.swap(a, b);
                    p.dfs_order.swap(1, 2);
                }),
            ),
            ("DFS position garbage", Box::new(|p| p.dfs_positions[2] = u32::MAX - 7)),
            (
                "child-centric positions swapped",
                Box::new(move |p| {
                    let (a, b) = (level1.start, level1.start + 1);
                    let (qa, qb) = (p.child_centric_positions[a] as usize, p.child_centric_positions[b] as usize);
                    p.child_centric_positions.swap(a, b);
                    p.child_centric_nodes.swap(qa, qb);
                }),
            ),
            (
                "child index",
                Box::new(|p| {
                    let q = p.child_indices.iter().position(|&c| c != NONE).unwrap();
                    p.child_indices[q] += 1;
                }),
            ),
            ("parents per level", Box::new(|p| p.parents_per_level[0] = 2)),
            ("level offsets", Box::new(|p| p.level_offsets[1] += 1)),
            ("particle count", Box::new(move |p| p.particle_counts[leaf] += 1)),
            ("particle begin", Box::new(move |p| p.particle_begins[internal] += 1)),
            ("leaf count", Box::new(move |p| p.leaf_counts[internal] -= 1)),
            ("leaf begin garbage", Box::new(move |p| p.leaf_begins[deep] = u32::MAX)),
            ("leaf nodes swapped", Box::new(|p| p.leaf_nodes.swap(0, 1))),
            (
                "particle leaf",
                Box::new(|p| {
                    let last = p.leaf_nodes.len() as u32 - 1;
                    p.particle_leaves[0] = last;
                }),
            ),
            ("particle leaf garbage", Box::new(|p| p.particle_leaves[0] = 1 << 31)),
            ("NF of an internal node", Box::new(|p| p.nf.as_mut().unwrap()[0] = 0)),
            ("NF sentinel on a leaf", Box::new(move |p| p.nf.as_mut().unwrap()[leaf] = NF_INTERNAL)),
            (
                "geometry",
                Box::new(|p| {
                    p.geometry = Geometry::Octree { curve: Curve::Morton, bbox: Aabb::cube(-2.0, 2.0).unwrap() };
                }),
            ),
        ];
        for (name, corrupt) in corruptions {
            let mut p = parts.clone();
            corrupt(&mut p);
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| TreeView::from_parts(p)));
            match result {
                Ok(Err(Error::InvalidTree { .. })) => {}
                other => panic!("{shape:?} {name}: {other:?}"),
            }
        }
        // Lengths.
        let mut p = parts.clone();
        p.escapes.pop();
        assert!(matches!(TreeView::from_parts(p), Err(Error::LengthMismatch { what: "escapes", .. })));
        let mut p = parts.clone();
        p.particle_leaves.push(0);
        assert!(matches!(TreeView::from_parts(p), Err(Error::LengthMismatch { what: "particle leaves", .. })));
        let mut p = parts.clone();
        p.leaf_nodes.pop();
        assert!(matches!(TreeView::from_parts(p), Err(Error::InvalidTree { .. })));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Trees of any keys, octree and binary: the view checks and matches the traversal.
    #[test]
    fn views_of_any_tree_match_the_traversal(raw in prop::collection::vec(any::<u64>(), 1..400), shift in 0u32..60, bucket in 1u32..12, binary in any::<bool>()) {
        let layout = if binary { KeyLayout::binary::<u64>() } else { KeyLayout::octree::<u64>() };
        let mask = (1u64 << 63) - 1;
        let mut keys: Vec<u64> = raw.iter().map(|k| (k & mask) >> shift).collect();
        keys.sort_unstable();
        let (tree, _) = build(&keys, layout, &Rebalance::new(Criterion::leaf_count(bucket))).unwrap();
        let geometry = if binary { Geometry::new(Shape::Binary, unit_box()) } else { Geometry::new(Shape::Octree(Curve::Hilbert), unit_box()) };
        let lfp = leaf_starts(tree.leaves().keys(), &keys);
        let view = TreeView::from_leaves(tree.leaves(), &lfp, geometry, None).unwrap();
        view.check().unwrap();
        let o = oracle(tree.leaves());
        prop_assert_eq!(view.keys(), &o.keys[..]);
        prop_assert_eq!(view.parents(), &o.parents[..]);
        prop_assert_eq!(view.first_children(), &o.first_children[..]);
        prop_assert_eq!(view.dfs_order(), &oracle_preorder(&o, layout.children())[..]);
        assert_child_centric(&view, "proptest");
        prop_assert_eq!(view.particles(0), 0..keys.len() as u32);
    }
}
