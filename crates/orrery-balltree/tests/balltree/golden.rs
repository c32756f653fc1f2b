//! Golden parity with Erwin's reference (`balltree-erwin` 0.1.0): every ball at every
//! level, every partition group and every rotated ball holds the same points.
//!
//! Fixtures: `tests/fixtures/`, made by `tools/make_fixtures.py` (see the README). The
//! reference leaves the order of points inside a leaf or a final group to
//! `std::nth_element`, so those are compared as sets; the mask, which only depends on
//! the batch sizes, is compared exactly.

use std::collections::BTreeMap;
use std::path::PathBuf;

use orrery_balltree::{BallTree, Batches, PointCloud, build_balltree, check_tree, cpu, partition_balltree, tree_depth};
use serde::Deserialize;

use crate::common;

#[derive(Deserialize)]
struct Manifest {
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    name: String,
    dim: usize,
    offsets: Vec<usize>,
    partitions: Vec<u32>,
    file: String,
    sections: BTreeMap<String, Section>,
    rotation: Option<Rotation>,
}

#[derive(Deserialize)]
struct Section {
    dtype: String,
    offset: usize,
    len: usize,
}

#[derive(Deserialize)]
struct Rotation {
    ball_sizes: Vec<usize>,
    strides: Vec<usize>,
    matrix: Vec<f64>,
}

struct Loaded {
    case: Case,
    bytes: Vec<u8>,
}

impl Loaded {
    fn section(&self, key: &str) -> (&Section, &[u8]) {
        let s = &self.case.sections[key];
        let size = match s.dtype.as_str() {
            "float32" | "uint32" => 4,
            "uint8" => 1,
            other => panic!("unknown dtype {other}"),
        };
        (s, &self.bytes[s.offset..s.offset + s.len * size])
    }

    fn f32s(&self, key: &str) -> Vec<f32> {
        let (s, b) = self.section(key);
        assert_eq!(s.dtype, "float32");
        b.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
    }

    fn u32s(&self, key: &str) -> Vec<u32> {
        let (s, b) = self.section(key);
        assert_eq!(s.dtype, "uint32");
        b.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
    }

    fn bools(&self, key: &str) -> Vec<bool> {
        let (s, b) = self.section(key);
        assert_eq!(s.dtype, "uint8");
        b.iter().map(|&v| v != 0).collect()
    }
}

fn fixtures() -> Vec<Loaded> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let manifest: Manifest =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    manifest
        .cases
        .into_iter()
        .map(|case| {
            let bytes = std::fs::read(dir.join(&case.file)).unwrap();
            Loaded { case, bytes }
        })
        .collect()
}

fn sorted(mut v: Vec<u32>) -> Vec<u32> {
    v.sort_unstable();
    v
}

/// Compares every ball of every batch at every depth, as sets of points.
fn assert_same_balls(name: &str, ours: &BallTree, ref_idx: &[u32], ref_mask: &[bool]) -> usize {
    assert_eq!(ours.indices().len(), ref_idx.len(), "{name}: slot count");
    assert_eq!(ours.mask(), ref_mask, "{name}: mask (depends on sizes only)");
    let layout = ours.layout();
    let mut balls = 0;
    for b in 0..layout.num_batches() {
        let slots = layout.slot_offsets()[b] as usize..layout.slot_offsets()[b + 1] as usize;
        let depth = layout.depths()[b];
        for level in 0..=depth {
            let width = slots.len() >> level;
            for start in slots.clone().step_by(width) {
                let set =
                    |idx: &[u32]| sorted((start..start + width).filter(|&s| ref_mask[s]).map(|s| idx[s]).collect());
                assert_eq!(set(ours.indices()), set(ref_idx), "{name}: batch {b}, depth {level}, ball at slot {start}");
                balls += 1;
            }
        }
    }
    balls
}

#[test]
fn trees_match_reference_at_every_level() {
    for f in fixtures() {
        let c = &f.case;
        let points = f.f32s("points");
        let batches = Batches::from_offsets(&c.offsets).unwrap();
        let cloud = PointCloud::new(&points, c.dim, batches.clone()).unwrap();
        let tree = build_balltree(&cloud).unwrap();
        check_tree(&cloud, &tree).unwrap();
        let balls = assert_same_balls(&c.name, &tree, &f.u32s("tree_idx"), &f.bools("tree_mask"));
        // f64 input with the same values gives the same tree, bit for bit.
        let wide = common::widen(&points);
        let tree64 = build_balltree(&PointCloud::new(&wide, c.dim, batches).unwrap()).unwrap();
        assert_eq!(tree64, tree, "{}: f32 and f64 input", c.name);
        eprintln!("{}: {} points, {} balls identical to the reference", c.name, cloud.len(), balls);
    }
}

#[test]
fn partitions_match_reference() {
    for f in fixtures() {
        let c = &f.case;
        let points = f.f32s("points");
        let cloud = PointCloud::new(&points, c.dim, Batches::from_offsets(&c.offsets).unwrap()).unwrap();
        for &t in &c.partitions {
            let reference = f.u32s(&format!("partition_{t}"));
            let ours = partition_balltree(&cloud, t).unwrap();
            assert_eq!(ours.order().len(), reference.len());
            for g in 0..ours.num_groups() {
                let r = ours.group_offsets()[g] as usize..ours.group_offsets()[g + 1] as usize;
                assert_eq!(
                    sorted(ours.group(g).to_vec()),
                    sorted(reference[r].to_vec()),
                    "{}: target level {t}, group {g}",
                    c.name
                );
                assert!(ours.group(g).is_sorted(), "groups list their points by ascending index");
            }
            eprintln!("{}: partition at level {t}: {} groups identical", c.name, ours.num_groups());
        }
    }
}

#[test]
fn partition_to_leaf_depth_is_tree_order() {
    for f in fixtures() {
        let c = &f.case;
        let sizes: Vec<usize> = c.offsets.windows(2).map(|w| w[1] - w[0]).collect();
        if sizes.iter().any(|&n| tree_depth(n) != tree_depth(sizes[0])) {
            continue;
        }
        let points = f.f32s("points");
        let cloud = PointCloud::new(&points, c.dim, Batches::from_offsets(&c.offsets).unwrap()).unwrap();
        let tree = build_balltree(&cloud).unwrap();
        let partition = partition_balltree(&cloud, tree_depth(sizes[0])).unwrap();
        assert_eq!(partition.order(), tree.permutation().as_slice(), "{}", c.name);
    }
}

#[test]
fn rotated_partitions_match_reference() {
    for f in fixtures() {
        let c = &f.case;
        let Some(rot) = &c.rotation else { continue };
        let points = f.f32s("points");
        let cloud = PointCloud::new(&points, c.dim, Batches::from_offsets(&c.offsets).unwrap()).unwrap();
        let tree = build_balltree(&cloud).unwrap();
        let ref_tree = f.u32s("rot_tree_idx");
        let layers = cpu::rotated_partitions(&tree, &cloud, &rot.matrix, &rot.ball_sizes, &rot.strides).unwrap();
        let mut scale = 1;
        for (i, layer) in layers.iter().enumerate() {
            let reference = f.u32s(&format!("rot_{i}"));
            assert_eq!(layer.len(), reference.len(), "{}: layer {i} entries", c.name);
            let bs = rot.ball_sizes[i];
            for (ball, (ours, theirs)) in layer.permutation().chunks(bs).zip(reference.chunks(bs)).enumerate() {
                // Layer 0 entries are slots, which differ inside a leaf between the two
                // trees: compare the points they hold. Later entries are whole balls of
                // the tree, numbered alike in both.
                let (a, b) = if scale == 1 {
                    (
                        sorted(ours.iter().map(|&e| tree.indices()[e as usize]).collect()),
                        sorted(theirs.iter().map(|&e| ref_tree[e as usize]).collect()),
                    )
                } else {
                    (sorted(ours.to_vec()), sorted(theirs.to_vec()))
                };
                assert_eq!(a, b, "{}: layer {i}, ball {ball}", c.name);
            }
            for (j, &p) in layer.permutation().iter().enumerate() {
                assert_eq!(layer.inverse()[p as usize] as usize, j);
            }
            eprintln!("{}: rotated layer {i}: {} balls of {bs} identical", c.name, layer.num_balls());
            if i < rot.strides.len() {
                scale *= rot.strides[i];
            }
        }
    }
}
