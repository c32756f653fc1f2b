//! The GPU TreeView against the CPU view, every array bit for bit (floats compared as
//! bits), for every GPU executor available: CUDA when a device is present (f32 and f64
//! boxes; `ORRERY_REQUIRE_CUDA=1` makes a missing device a failure) and wgpu (lavapipe
//! in CI; f32 boxes, compared with the CPU's f32 view; `ORRERY_REQUIRE_WGPU=1`). Without
//! an executor a test reports its skip (`orrery_core::skip::report`) and passes. The
//! kernels' NVRTC compile test needs only libnvrtc (`ORRERY_REQUIRE_NVRTC=1` makes its
//! absence a failure).
//!
//! Cases: the datasets of `common` in octrees (Morton, Hilbert) and binary trees, binary
//! trees in rectangular boxes (exact and inexact units), removed particles, the
//! hand-made trees of `view.rs`, root leaves, a device leaf count with garbage past the
//! live arrays, capacity growth and reuse of one builder, and the errors the kernels
//! report.

use std::sync::OnceLock;

use orrery_backend_cuda::{CudaExecutor, check_nvrtc, compile_module_to_cubin, compile_module_to_ptx};
use orrery_backend_wgpu::WgpuExecutor;
use orrery_core::executor::DeviceCount;
use orrery_core::sfc::{BinaryLayout, Curve, KeyLayout};
use orrery_core::{Aabb, Error, GpuExecutor, PositionsView, Real, Slice, Vec3};
use orrery_tree_build::counts::leaf_starts;
use orrery_tree_build::gpu::GpuTree;
use orrery_tree_build::gpu_view::{
    GpuTreeViewBuilder, GpuViewReal, KERNEL_ENTRIES, KERNEL_MODULES, LeafCount, ViewInput, build_tree_view,
};
use orrery_tree_build::view::{Geometry, TreeView, TreeViewParts};
use orrery_tree_build::{Criterion, Leaves, Rebalance, Shape, build, input};

use crate::common::{self, Cloud, unit_box};

const SHAPES: [Shape; 3] = [Shape::Octree(Curve::Morton), Shape::Octree(Curve::Hilbert), Shape::Binary];

fn open_or_skip<E>(open: impl FnOnce() -> orrery_core::Result<E>, require_var: &str) -> Option<E> {
    match open() {
        Ok(e) => Some(e),
        Err(e) => {
            let required = std::env::var(require_var).is_ok_and(|v| v == "1");
            assert!(!required, "{require_var}=1 but no executor: {e}");
            orrery_core::skip::report(&format!("GPU TreeView test ({require_var} not set)"), &e.to_string());
            None
        }
    }
}

fn cuda() -> Option<&'static CudaExecutor> {
    static EXEC: OnceLock<Option<CudaExecutor>> = OnceLock::new();
    EXEC.get_or_init(|| open_or_skip(CudaExecutor::from_env, "ORRERY_REQUIRE_CUDA")).as_ref()
}

fn wgpu() -> Option<&'static WgpuExecutor> {
    static EXEC: OnceLock<Option<WgpuExecutor>> = OnceLock::new();
    EXEC.get_or_init(|| open_or_skip(WgpuExecutor::new, "ORRERY_REQUIRE_WGPU")).as_ref()
}

/// The leaves, leaf starts and NF values (`3 * count + 1`) of the LeafCount tree of
/// `cloud` in `bbox`.
struct Case {
    leaves: Leaves,
    lfp: Vec<u32>,
    nf: Vec<u64>,
}

fn case_of(cloud: &Cloud, bbox: Aabb<f64>, shape: Shape, bucket: u32) -> Case {
    let sorted = input::sort_particles(cloud.view(), Some(bbox), shape).unwrap();
    let (tree, run) = build(&sorted.keys, sorted.layout, &Rebalance::new(Criterion::leaf_count(bucket))).unwrap();
    assert!(run.converged);
    let lfp = leaf_starts(tree.leaves().keys(), &sorted.keys);
    let nf = tree.counts().iter().map(|&c| 3 * u64::from(c) + 1).collect();
    Case { leaves: tree.leaves().clone(), lfp, nf }
}

/// `shape` in the f64 box `bbox`, in `T` (the f32 box is the f64 one rounded).
fn geometry<T: Real>(shape: Shape, bbox: &Aabb<f64>) -> Geometry<T> {
    let (lo, hi) = (bbox.min(), bbox.max());
    let v =
        |p: Vec3<f64>| Vec3::new(<T as Real>::from_f64(p.x), <T as Real>::from_f64(p.y), <T as Real>::from_f64(p.z));
    Geometry::new(shape, Aabb::new(v(lo), v(hi)).unwrap())
}

fn first_difference<A: PartialEq + std::fmt::Debug>(label: &str, field: &str, gpu: &[A], cpu: &[A]) {
    assert_eq!(gpu.len(), cpu.len(), "{label}: {field}: length");
    if let Some(i) = (0..cpu.len()).find(|&i| gpu[i] != cpu[i]) {
        let (lo, hi) = (i.saturating_sub(3), (i + 4).min(cpu.len()));
        panic!(
            "{label}: {field}: first difference at {i} of {}: gpu {:?}, cpu {:?}",
            cpu.len(),
            &gpu[lo..hi],
            &cpu[lo..hi]
        );
    }
}

/// Floats as their bits.
fn bits<T: Real>(v: &[[T; 3]]) -> Vec<[u64; 3]> {
    v.iter().map(|p| p.map(|x| Into::<f64>::into(x).to_bits())).collect()
}

/// Every array equal, floats bit for bit, with the first difference named.
fn assert_same<T: Real>(label: &str, gpu: &TreeViewParts<T>, cpu: &TreeViewParts<T>) {
    assert_eq!(gpu.geometry, cpu.geometry, "{label}: geometry");
    first_difference(label, "keys", &gpu.keys, &cpu.keys);
    macro_rules! same {
        ($($f:ident),+) => { $( first_difference(label, stringify!($f), &gpu.$f, &cpu.$f); )+ };
    }
    same!(
        levels,
        parents,
        first_children,
        leaf_begins,
        leaf_counts,
        particle_begins,
        particle_counts,
        level_offsets,
        leaf_nodes,
        particle_leaves,
        escapes,
        dfs_positions,
        dfs_order,
        parents_per_level,
        child_centric_positions,
        child_centric_nodes,
        child_indices
    );
    first_difference(label, "centres", &bits(&gpu.centres), &bits(&cpu.centres));
    first_difference(label, "half_extents", &bits(&gpu.half_extents), &bits(&cpu.half_extents));
    assert_eq!(gpu.nf.is_some(), cpu.nf.is_some(), "{label}: nf given");
    if let (Some(g), Some(c)) = (&gpu.nf, &cpu.nf) {
        first_difference(label, "nf", g, c);
    }
}

/// The GPU view of host leaves equals the CPU view.
fn check<E: GpuExecutor, T: GpuViewReal>(
    exec: &E,
    label: &str,
    leaves: &Leaves,
    lfp: &[u32],
    geometry: Geometry<T>,
    nf: Option<&[u64]>,
) {
    let cpu = TreeView::from_leaves(leaves, lfp, geometry, nf).unwrap();
    let gpu = build_tree_view(exec, leaves, lfp, geometry, nf).unwrap_or_else(|e| panic!("{label}: {e}"));
    assert_same(label, gpu.parts(), cpu.parts());
}

fn datasets<E: GpuExecutor, T: GpuViewReal>(exec: &E) {
    let ty = std::any::type_name::<T>();
    for (name, cloud) in common::all(20_000, 21) {
        for shape in SHAPES {
            let c = case_of(&cloud, unit_box(), shape, 16);
            let label = format!("{} {ty} {name} {shape:?}", exec.name());
            check(exec, &label, &c.leaves, &c.lfp, geometry::<T>(shape, &unit_box()), Some(&c.nf));
        }
    }
}

fn rectangles_and_removed<E: GpuExecutor, T: GpuViewReal>(exec: &E) {
    let ty = std::any::type_name::<T>();
    let mut cloud = common::plummer(10_000, 4);
    for (x, z) in cloud.x.iter_mut().zip(cloud.z.iter_mut()) {
        *x = 1.0 + 1.5 * *x;
        *z *= 0.35;
    }
    let boxes = [
        Aabb::new(Vec3::new(-1.0, -1.0, -0.5), Vec3::new(3.0, 1.0, 0.5)).unwrap(),
        Aabb::new(Vec3::new(-0.5, -1.0, -0.35), Vec3::new(2.5, 1.0, 0.35)).unwrap(),
        Aabb::new(Vec3::new(-0.53, -1.1, -0.37), Vec3::new(2.9, 1.3, 0.41)).unwrap(),
    ];
    for bbox in boxes {
        for shape in SHAPES {
            let c = case_of(&cloud, bbox, shape, 8);
            let label = format!("{} {ty} {shape:?} in {bbox:?}", exec.name());
            check(exec, &label, &c.leaves, &c.lfp, geometry::<T>(shape, &bbox), None);
        }
    }
    // A needle: x gets about 34 of the 63 binary levels, and coincident particles take
    // leaves to the deepest level, so corners have more than 24 significant bits (the
    // two roundings of T(corner) in f32).
    let mut cloud = common::identical(3000);
    for (i, x) in cloud.x.iter_mut().enumerate() {
        *x = if i < 40 { 1.0e5 * i as f64 + 0.3 } else { 2.053_117e6 + 0.123 };
    }
    let needle = Aabb::new(Vec3::new(-1.0, -1.0, -1.0), Vec3::new(4.1e6 + 0.37, 1.0, 1.0)).unwrap();
    for shape in SHAPES {
        let c = case_of(&cloud, needle, shape, 4);
        if shape == Shape::Binary {
            let g = geometry::<T>(shape, &needle);
            assert!(c.leaves.depth() == 63 && g.coordinate_bits()[0] >= 30, "the needle reaches deep corners");
            // Some leaf corner on x has more than 24 significant bits.
            let Geometry::Binary(b) = g else { unreachable!() };
            let wide = (0..c.leaves.len()).any(|i| {
                let x = b.decode_unchecked(c.leaves.keys()[i])[0];
                x != 0 && 64 - x.leading_zeros() - x.trailing_zeros() > 24
            });
            assert!(wide, "no corner with more than 24 significant bits");
        }
        let label = format!("{} {ty} {shape:?} needle", exec.name());
        check(exec, &label, &c.leaves, &c.lfp, geometry::<T>(shape, &needle), None);
    }
    let mut cloud = common::uniform(3000, 8);
    cloud.x[3] = 4.0;
    cloud.y[17] = -2.0;
    for shape in SHAPES {
        let c = case_of(&cloud, unit_box(), shape, 8);
        assert_eq!(c.lfp.last(), Some(&2998));
        check(exec, &format!("{ty} removed {shape:?}"), &c.leaves, &c.lfp, geometry::<T>(shape, &unit_box()), None);
    }
}

/// The hand-made trees of `view.rs`, and root leaves.
fn hand_made<E: GpuExecutor, T: GpuViewReal>(exec: &E) {
    let ty = std::any::type_name::<T>();
    let octree = KeyLayout::octree::<u64>();
    // Cornerstone's example: the root split once, its first child split again.
    let (l1, l2) = (1u64 << 60, 1u64 << 57);
    let mut keys: Vec<u64> = (0..8).map(|i| i * l2).collect();
    keys.extend((1..8).map(|i| i * l1));
    keys.push(1 << 63);
    let leaves = Leaves::from_keys(keys, octree).unwrap();
    let counts = [1u32, 1, 1, 0, 0, 0, 0, 0, 2, 3, 4, 5, 6, 7, 8];
    let mut lfp = vec![0u32];
    for c in counts {
        lfp.push(lfp.last().unwrap() + c);
    }
    let nf: Vec<u64> = (0..15).map(|i| 10 * i).collect();
    let morton = geometry::<T>(Shape::Octree(Curve::Morton), &unit_box());
    check(exec, &format!("{ty} example octree"), &leaves, &lfp, morton, Some(&nf));
    // Two parents on level 1.
    let mut keys: Vec<u64> = (0..16).map(|i| i << 57).collect();
    keys.extend((2..8).map(|i| i << 60));
    keys.push(1 << 63);
    let leaves = Leaves::from_keys(keys, octree).unwrap();
    let lfp: Vec<u32> = (0..=22).collect();
    let hilbert = geometry::<T>(Shape::Octree(Curve::Hilbert), &unit_box());
    check(exec, &format!("{ty} two parents"), &leaves, &lfp, hilbert, None);
    // A binary tree in [0, 4] x [0, 2] x [0, 1].
    let bbox = Aabb::new(Vec3::zeros(), Vec3::new(4.0, 2.0, 1.0)).unwrap();
    let v = |x: f64| <T as Real>::from_f64(x);
    let tbox = Aabb::new(Vec3::new(v(0.0), v(0.0), v(0.0)), Vec3::new(v(4.0), v(2.0), v(1.0))).unwrap();
    let binary = BinaryLayout::<T, u64>::full_depth(tbox);
    let leaves = Leaves::from_keys(vec![0, 1 << 61, 1 << 62, 1 << 63], binary.key_layout()).unwrap();
    check(exec, &format!("{ty} binary rectangle"), &leaves, &[0, 2, 2, 5], Geometry::Binary(binary), Some(&[7, 8, 9]));
    let _ = bbox;
    for shape in SHAPES {
        let leaves = Leaves::root(shape.layout());
        check(exec, &format!("{ty} root {shape:?}"), &leaves, &[0, 3], geometry::<T>(shape, &unit_box()), None);
    }
    // A level-3 octree: two chunks of 256 leaves for the particle-leaf kernel, one leaf
    // of 1,000 particles (more than a chunk's threads), runs of empty leaves.
    let keys: Vec<u64> = (0..=512u64).map(|i| i << 54).collect();
    let leaves = Leaves::from_keys(keys, octree).unwrap();
    let mut lfp = vec![0u32];
    for i in 0..512u32 {
        let c = match i {
            5 => 1000,
            250..=300 => 0,
            _ => i % 4,
        };
        lfp.push(lfp.last().unwrap() + c);
    }
    check(exec, &format!("{ty} crowded leaf"), &leaves, &lfp, hilbert, None);
}

/// A device leaf count over arrays with garbage past `L + 1` (keys, starts, NF values),
/// a bound well above `L` and a particle bound above `lfp[L]`.
fn device_count<E: GpuExecutor, T: GpuViewReal>(exec: &E) {
    let ty = std::any::type_name::<T>();
    let cloud = common::two_clusters(20_000, 5);
    for shape in SHAPES {
        let c = case_of(&cloud, unit_box(), shape, 12);
        let l = c.leaves.len();
        let extra = 1000;
        let mut keys = c.leaves.keys().to_vec();
        keys.extend((0..extra).map(|i| 0x0123_4567_89ab_cdef_u64.wrapping_mul(i + 1)));
        let mut lfp = c.lfp.clone();
        lfp.extend((0..extra).map(|i| 7 * i as u32));
        let mut nf = c.nf.clone();
        nf.extend(std::iter::repeat_n(u64::MAX, extra as usize));
        let (keys_d, lfp_d, nf_d) =
            (exec.upload(&keys).unwrap(), exec.upload(&lfp).unwrap(), exec.upload(&nf).unwrap());
        let slot = exec.upload(&[99u32, l as u32, 5]).unwrap();
        let bound = l + extra as usize;
        let geometry = geometry::<T>(shape, &unit_box());
        let mut builder = GpuTreeViewBuilder::<E, T>::new();
        let input = ViewInput {
            // Views that start past 0: the kernels take the element offsets.
            leaves: keys_d.slice(0..bound + 1).unwrap(),
            leaf_count: LeafCount::Device(DeviceCount::new(slot.slice(1..2).unwrap(), bound).unwrap()),
            leaf_starts: lfp_d.slice(0..bound + 1).unwrap(),
            particle_bound: 25_000,
            nf: Some(nf_d.slice(0..bound).unwrap()),
        };
        let device = builder.build(exec, &geometry, &input).unwrap();
        let st = device.status(exec).unwrap();
        assert_eq!((st.leaves, st.particles), (l, c.lfp[l] as usize));
        let gpu = device.download(exec).unwrap();
        let cpu = TreeView::from_leaves(&c.leaves, &c.lfp, geometry, Some(&c.nf)).unwrap();
        assert_same(&format!("{ty} device count {shape:?}"), gpu.parts(), cpu.parts());
    }
}

/// Input views that start at an unaligned element offset.
fn offset_views<E: GpuExecutor, T: GpuViewReal>(exec: &E) {
    let ty = std::any::type_name::<T>();
    let c = case_of(&common::gaussian(5000, 3), unit_box(), Shape::Octree(Curve::Hilbert), 8);
    let l = c.leaves.len();
    let pad = 3usize;
    let mut keys = vec![5u64; pad];
    keys.extend_from_slice(c.leaves.keys());
    let mut lfp = vec![1u32; pad];
    lfp.extend_from_slice(&c.lfp);
    let mut nf = vec![0u64; pad];
    nf.extend_from_slice(&c.nf);
    let (keys_d, lfp_d, nf_d) = (exec.upload(&keys).unwrap(), exec.upload(&lfp).unwrap(), exec.upload(&nf).unwrap());
    let slot = exec.upload(&[0u32, 0, l as u32]).unwrap();
    let input = ViewInput {
        leaves: keys_d.slice(pad..pad + l + 1).unwrap(),
        leaf_count: LeafCount::Device(DeviceCount::new(slot.slice(2..3).unwrap(), l).unwrap()),
        leaf_starts: lfp_d.slice(pad..pad + l + 1).unwrap(),
        particle_bound: c.lfp[l] as usize,
        nf: Some(nf_d.slice(pad..pad + l).unwrap()),
    };
    let geometry = geometry::<T>(Shape::Octree(Curve::Hilbert), &unit_box());
    let mut builder = GpuTreeViewBuilder::<E, T>::new();
    let gpu = builder.build(exec, &geometry, &input).unwrap().download(exec).unwrap();
    let cpu = TreeView::from_leaves(&c.leaves, &c.lfp, geometry, Some(&c.nf)).unwrap();
    assert_same(&format!("{ty} offset views"), gpu.parts(), cpu.parts());
}

/// One builder, small then large then small (other shapes and geometries): the buffers
/// grow with headroom and are reused.
fn growth<E: GpuExecutor, T: GpuViewReal>(exec: &E) {
    let ty = std::any::type_name::<T>();
    let mut builder = GpuTreeViewBuilder::<E, T>::new();
    let sizes = [(300, Shape::Octree(Curve::Morton)), (40_000, Shape::Binary), (2000, Shape::Octree(Curve::Hilbert))];
    for (round, (n, shape)) in sizes.into_iter().enumerate() {
        let c = case_of(&common::plummer(n, round as u64), unit_box(), shape, 8);
        let l = c.leaves.len();
        let (keys_d, lfp_d) = (exec.upload(c.leaves.keys()).unwrap(), exec.upload(&c.lfp).unwrap());
        let input = ViewInput {
            leaves: (&keys_d).into(),
            leaf_count: LeafCount::Host(l),
            leaf_starts: (&lfp_d).into(),
            particle_bound: n,
            nf: None,
        };
        let geometry = geometry::<T>(shape, &unit_box());
        let gpu = builder.build(exec, &geometry, &input).unwrap().download(exec).unwrap();
        let cpu = TreeView::from_leaves(&c.leaves, &c.lfp, geometry, None).unwrap();
        assert_same(&format!("{ty} growth round {round} ({n}, {shape:?})"), gpu.parts(), cpu.parts());
    }
    // A reserved builder builds within its bounds (what recording needs).
    let geometry = geometry::<T>(Shape::Octree(Curve::Morton), &unit_box());
    builder.reserve(exec, &geometry, 50_000, 50_000).unwrap();
}

/// The errors the kernels find, as typed errors from the status block.
fn errors<E: GpuExecutor>(exec: &E) {
    let c = case_of(&common::uniform(2000, 2), unit_box(), Shape::Octree(Curve::Morton), 8);
    let l = c.leaves.len();
    let geometry = geometry::<f32>(Shape::Octree(Curve::Morton), &unit_box());
    let keys_d = exec.upload(c.leaves.keys()).unwrap();
    let status = |lfp: &[u32], nf: Option<&[u64]>, count: u32, bound: usize| {
        let lfp_d = exec.upload(lfp).unwrap();
        let nf_d = nf.map(|v| exec.upload(v).unwrap());
        let slot = exec.upload(&[count]).unwrap();
        let input = ViewInput {
            leaves: keys_d.slice(0..bound + 1).unwrap(),
            leaf_count: LeafCount::Device(DeviceCount::new(&slot, bound).unwrap()),
            leaf_starts: lfp_d.slice(0..bound + 1).unwrap(),
            particle_bound: 2000,
            nf: nf_d.as_ref().map(|b| b.slice(0..bound).unwrap()),
        };
        let mut builder = GpuTreeViewBuilder::<E, f32>::new();
        builder.build(exec, &geometry, &input).unwrap().status(exec)
    };
    assert!(status(&c.lfp, None, l as u32, l).is_ok());
    let what = |r: orrery_core::Result<_>| match r {
        Err(Error::InvalidArgument { what, .. }) => what,
        other => panic!("expected an invalid argument, got {other:?}"),
    };
    assert_eq!(what(status(&c.lfp, None, 0, l)), "leaf count");
    assert_eq!(what(status(&c.lfp, None, l as u32 + 1, l - 1)), "leaf count");
    let mut bad = c.lfp.clone();
    bad[3] = bad[5] + 1;
    assert_eq!(what(status(&bad, None, l as u32, l)), "leaf first particles");
    let mut bad = c.lfp.clone();
    bad[0] = 1;
    assert_eq!(what(status(&bad, None, l as u32, l)), "leaf first particles");
    let mut nf = c.nf.clone();
    nf[l / 2] = u64::MAX;
    assert_eq!(what(status(&c.lfp, Some(&nf), l as u32, l)), "NF values");
    // A leaf array cut short (the device count says fewer leaves than it has): not a
    // leaf array, found by the internal-node count or the checker.
    let short = status(&c.lfp, None, (l - 3) as u32, l);
    assert!(matches!(short, Err(Error::InvalidTree { .. })) || short.is_ok());
}

/// `GpuTree::build_view`: the view of a tree built on the device (leaf starts scanned
/// from its counts there) equals the CPU view of the CPU tree of the same f32 positions.
fn from_gpu_tree<E: GpuExecutor>(exec: &E) {
    let bbox32 = Aabb::cube(-1.0f32, 1.0).unwrap();
    for (name, cloud) in common::all(20_000, 5) {
        for shape in SHAPES {
            let label = format!("{name} {shape:?} GpuTree");
            let (x, y, z): (Vec<f32>, Vec<f32>, Vec<f32>) = (
                cloud.x.iter().map(|&v| v as f32).collect(),
                cloud.y.iter().map(|&v| v as f32).collect(),
                cloud.z.iter().map(|&v| v as f32).collect(),
            );
            let options = Rebalance::new(Criterion::leaf_count(16));
            let sorted = input::sort_particles(PositionsView::new(&x, &y, &z).unwrap(), Some(bbox32), shape).unwrap();
            let (cpu_tree, _) = build(&sorted.keys, sorted.layout, &options).unwrap();
            let cpu = TreeView::from_tree(&cpu_tree, &sorted, shape, None).unwrap();

            let (bx, by, bz) = (exec.upload(&x).unwrap(), exec.upload(&y).unwrap(), exec.upload(&z).unwrap());
            let mut tree = GpuTree::new(exec, shape, options).unwrap();
            tree.step(exec, &bx, &by, &bz, Some(bbox32)).unwrap();
            let mut builder = GpuTreeViewBuilder::<E, f32>::new();
            let geometry = Geometry::new(shape, bbox32);
            let gpu = tree.build_view(exec, &mut builder, &geometry).unwrap().download(exec).unwrap();
            assert_same(&label, gpu.parts(), cpu.parts());
        }
    }
}

macro_rules! executor_tests {
    ($m:ident, $open:ident, f64 = $f64:expr) => {
        mod $m {
            use super::*;

            #[test]
            fn datasets_match_the_cpu_view() {
                let Some(e) = $open() else { return };
                datasets::<_, f32>(e);
                if $f64 {
                    datasets::<_, f64>(e);
                }
            }

            #[test]
            fn rectangles_and_removed_particles_match_the_cpu_view() {
                let Some(e) = $open() else { return };
                rectangles_and_removed::<_, f32>(e);
                if $f64 {
                    rectangles_and_removed::<_, f64>(e);
                }
            }

            #[test]
            fn hand_made_trees_match_the_cpu_view() {
                let Some(e) = $open() else { return };
                hand_made::<_, f32>(e);
                if $f64 {
                    hand_made::<_, f64>(e);
                }
            }

            #[test]
            fn a_device_leaf_count_matches_the_cpu_view() {
                let Some(e) = $open() else { return };
                device_count::<_, f32>(e);
                offset_views::<_, f32>(e);
                if $f64 {
                    device_count::<_, f64>(e);
                }
            }

            #[test]
            fn one_builder_grows_and_is_reused() {
                let Some(e) = $open() else { return };
                growth::<_, f32>(e);
                if $f64 {
                    growth::<_, f64>(e);
                }
            }

            #[test]
            fn a_gpu_tree_builds_its_view_on_the_device() {
                let Some(e) = $open() else { return };
                from_gpu_tree(e);
            }

            #[test]
            fn input_errors_are_typed() {
                let Some(e) = $open() else { return };
                errors(e);
            }
        }
    };
}

executor_tests!(cuda_view, cuda, f64 = true);
executor_tests!(wgpu_view, wgpu, f64 = false);

#[test]
fn wgpu_has_no_f64_view() {
    let Some(e) = wgpu() else { return };
    let leaves = Leaves::root(KeyLayout::octree::<u64>());
    let r = build_tree_view(e, &leaves, &[0, 1], geometry::<f64>(Shape::Octree(Curve::Morton), &unit_box()), None);
    assert!(matches!(r, Err(Error::Unsupported { .. })), "{r:?}");
}

#[test]
fn kernels_compile_with_nvrtc_for_sm_90() {
    if let Err(e) = check_nvrtc() {
        let required =
            ["ORRERY_REQUIRE_NVRTC", "ORRERY_REQUIRE_CUDA"].iter().any(|k| std::env::var(k).is_ok_and(|v| v == "1"));
        assert!(!required, "NVRTC is required but unavailable: {e}");
        orrery_core::skip::report("GPU TreeView NVRTC compile", &e.to_string());
        return;
    }
    for module in &KERNEL_MODULES {
        let ptx = compile_module_to_ptx(module, "compute_90").unwrap_or_else(|e| panic!("{}: {e}", module.name));
        for entry in KERNEL_ENTRIES {
            assert!(ptx.contains(&format!(".entry {entry}(")), "no entry {entry}");
        }
        let cubin = compile_module_to_cubin(module, "sm_90").unwrap_or_else(|e| panic!("{}: {e}", module.name));
        assert!(cubin.starts_with(b"\x7fELF"));
    }
}
