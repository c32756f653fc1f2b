//! The GPU upward pass against the CPU's `Multipoles::compute` + `WalkNodes::new` on the
//! same f32 view and bodies, for every GPU executor available: CUDA bit for bit (every
//! float compared as bits; `ORRERY_REQUIRE_CUDA=1` makes a missing device a failure) and
//! wgpu (lavapipe in CI; links and masses exact, the rest within [`wgpu_tolerance`];
//! `ORRERY_REQUIRE_WGPU=1`). Without an executor a test reports its skip and passes. The
//! kernels' NVRTC compile test needs only libnvrtc (`ORRERY_REQUIRE_NVRTC=1`).
//!
//! Cases: Morton and Hilbert octrees and the binary tree over clustered and uniform
//! bodies with the classic and the safe criterion (trees with empty leaves among them),
//! single-leaf trees (1 and 7 bodies), coincident bodies (the deepest trees: 21 and 63
//! levels) and massless leaves, the view and tree order of a tree built on the device
//! (`GpuTree`), buffers reused across sizes without growing, and the typed errors.

use orrery_backend_cuda::{check_nvrtc, compile_module_to_cubin, compile_module_to_ptx};
use orrery_core::sfc::Curve;
use orrery_core::{Error, GpuExecutor, ParticleSet, Slice, Vec3};
use orrery_traverse::gpu::upward::{KERNEL_ENTRIES, KERNEL_MODULES};
use orrery_traverse::gpu::{DeviceTreeBodies, DeviceWalkNodes, compute_walk_nodes};
use orrery_traverse::solver::walk_box;
use orrery_traverse::{Multipoles, Opening, TreeBodies, WalkNodes};
use orrery_tree_build::gpu::GpuTree;
use orrery_tree_build::gpu_view::{GpuTreeViewBuilder, LeafCount, ViewInput, ViewStatus};
use orrery_tree_build::view::{Geometry, TreeView};
use orrery_tree_build::{Criterion, Leaves, Rebalance, Shape, build, input};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::clouds::{clustered, to_f32};
use crate::common::{cuda, wgpu};

const SHAPES: [Shape; 3] = [Shape::Octree(Curve::Morton), Shape::Octree(Curve::Hilbert), Shape::Binary];
const OPENINGS: [Opening<f32>; 2] = [
    Opening { mac: orrery_traverse::Mac::Classic, theta: 0.6 },
    Opening { mac: orrery_traverse::Mac::Safe, theta: 0.5 },
];

/// `n` bodies uniform in `[-1, 1)^3`, masses in `[0.5, 1.5) / n`.
fn uniform(n: usize, seed: u64) -> ParticleSet<f32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut set = ParticleSet::with_capacity(n);
    for _ in 0..n {
        let p = Vec3::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0));
        set.push(p, rng.random_range(0.5..1.5) / n as f32);
    }
    set
}

/// A tree built on the CPU: its leaves and leaf starts (the GPU view's input), the CPU
/// view, and the bodies in tree order.
struct Case {
    label: String,
    leaves: Leaves,
    lfp: Vec<u32>,
    geometry: Geometry<f32>,
    view: TreeView<f32>,
    set: ParticleSet<f32>,
    order: Vec<u32>,
    bodies: TreeBodies<f32>,
}

fn case(label: &str, set: &ParticleSet<f32>, shape: Shape, bucket: u32) -> Case {
    let bodies_view = set.view().unwrap();
    let bbox = walk_box(&bodies_view, shape).unwrap();
    let sorted = input::sort_particles(bodies_view.positions(), Some(bbox), shape).unwrap();
    assert_eq!(sorted.active, set.len(), "{label}: every body is inside the walk box");
    let (tree, _) = build(&sorted.keys, sorted.layout, &Rebalance::new(Criterion::leaf_count(bucket))).unwrap();
    let lfp = tree.leaf_starts();
    let geometry = Geometry::new(shape, sorted.bbox);
    let view = TreeView::from_leaves(tree.leaves(), &lfp, geometry, None).unwrap();
    let order = sorted.order[..sorted.active].to_vec();
    let bodies = TreeBodies::gather(&bodies_view, &order).unwrap();
    Case {
        label: format!("{label} {shape:?}"),
        leaves: tree.leaves().clone(),
        lfp,
        geometry,
        view,
        set: set.clone(),
        order,
        bodies,
    }
}

/// The state one executor keeps across cases (reused, as a solver would).
struct Gpu<E: GpuExecutor> {
    builder: GpuTreeViewBuilder<E, f32>,
    bodies: Option<DeviceTreeBodies<E>>,
    nodes: Option<DeviceWalkNodes<E>>,
}

impl<E: GpuExecutor> Gpu<E> {
    fn new() -> Self {
        Self { builder: GpuTreeViewBuilder::new(), bodies: None, nodes: None }
    }

    /// The device view of `c` (built from its host leaves), its bodies gathered on the
    /// device, and the upward pass for each opening: the downloaded nodes and extents.
    fn run(&mut self, exec: &E, c: &Case, openings: &[Opening<f32>]) -> Vec<(WalkNodes<f32>, Vec<f32>)> {
        let keys = exec.upload(c.leaves.keys()).unwrap();
        let lfp = exec.upload(&c.lfp).unwrap();
        let input = ViewInput {
            leaves: (&keys).into(),
            leaf_count: LeafCount::Host(c.leaves.len()),
            leaf_starts: (&lfp).into(),
            particle_bound: c.set.len(),
            nf: None,
        };
        let view = self.builder.build(exec, &c.geometry, &input).unwrap();
        let status = view.status(exec).unwrap();
        assert_eq!(status.nodes, c.view.num_nodes(), "{}: the device view's nodes", c.label);
        let up = |v: &[f32]| exec.upload(v).unwrap();
        let (x, y, z, m) = (up(&c.set.x), up(&c.set.y), up(&c.set.z), up(&c.set.mass));
        let order = exec.upload(&c.order).unwrap();
        let n = c.order.len();
        match &mut self.bodies {
            Some(b) => b.gather_into(exec, &x, &y, &z, &m, &order, n).unwrap(),
            None => self.bodies = Some(DeviceTreeBodies::gather(exec, &x, &y, &z, &m, &order, n).unwrap()),
        }
        let bodies = self.bodies.as_ref().unwrap();
        assert_eq!(bodies.download(exec).unwrap(), c.bodies, "{}: the gathered bodies", c.label);
        let out = self.nodes.get_or_insert_with(|| DeviceWalkNodes::new(exec, status.nodes).unwrap());
        openings
            .iter()
            .map(|opening| {
                compute_walk_nodes(exec, view, &status, bodies, opening, out)
                    .unwrap_or_else(|e| panic!("{}: {e}", c.label));
                (out.download(exec).unwrap(), out.download_extents(exec).unwrap())
            })
            .collect()
    }
}

/// The relative tolerance of wgpu's floats at a view of `depth` levels: `4 (depth + 1)`
/// f32 ULPs (2^-23 each) of each quantity's scale. Why: WGSL's division may be off by
/// 2.5 ULP and its square root by about 2 (both correctly rounded on the CPU and CUDA);
/// sums and products are correctly rounded and kept unfused by the opaque zero. A centre
/// of mass carries its children's errors (weighted by masses that sum to 1) plus its own
/// division and the rounding of `g + s / M` (1 ULP of the position), so at most about 4
/// ULPs of the position scale `|g| + h` per level; second moments about a slightly moved
/// centre change only to second order (the first moment about the centre of mass
/// vanishes), so their differences are roundings of the same terms, within the same
/// count of ULPs of the node's moment scale `12 M h^2` (every particle is within `2 sqrt(3)
/// h` of the centre); radii and extents move with the centre plus a division or square
/// root of their own. The tests print the largest difference seen (0 on lavapipe).
fn wgpu_tolerance(depth: u32) -> f64 {
    4.0 * f64::from(depth + 1) * f64::from(f32::EPSILON)
}

fn bits4(v: &[[f32; 4]]) -> Vec<[u32; 4]> {
    v.iter().map(|q| q.map(f32::to_bits)).collect()
}

fn first_difference<A: PartialEq + std::fmt::Debug>(label: &str, field: &str, gpu: &[A], cpu: &[A]) {
    assert_eq!(gpu.len(), cpu.len(), "{label}: {field}: length");
    if let Some(i) = (0..cpu.len()).find(|&i| gpu[i] != cpu[i]) {
        panic!("{label}: {field}: first difference at node {i} of {}: gpu {:?}, cpu {:?}", cpu.len(), gpu[i], cpu[i]);
    }
}

/// Compares one GPU result with the CPU's: bit for bit when `exact`, else links and masses
/// exactly and the rest within [`wgpu_tolerance`]. Returns the largest difference in units
/// of the tolerance (0 when every float is the CPU's).
fn compare(label: &str, exact: bool, c: &Case, opening: Opening<f32>, gpu: &(WalkNodes<f32>, Vec<f32>)) -> f64 {
    let mp = Multipoles::compute(&c.view, &c.bodies).unwrap();
    let cpu = WalkNodes::new(&c.view, &mp, &opening).unwrap();
    let (nodes, extents) = gpu;
    let label = format!("{label} {opening:?}");
    first_difference(&label, "links", &nodes.links, &cpu.links);
    nodes.check(c.bodies.len()).unwrap();
    let mass_bits = |w: &WalkNodes<f32>| w.masses.iter().map(|m| m[0].to_bits()).collect::<Vec<_>>();
    first_difference(&label, "masses", &mass_bits(nodes), &mass_bits(&cpu));
    if exact {
        first_difference(&label, "centres", &bits4(&nodes.centres), &bits4(&cpu.centres));
        first_difference(&label, "masses", &bits4(&nodes.masses), &bits4(&cpu.masses));
        first_difference(&label, "quads", &bits4(&nodes.quads), &bits4(&cpu.quads));
        let ebits = |e: &[f32]| e.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        first_difference(&label, "extents", &ebits(extents), &ebits(&mp.extent));
        return 0.0;
    }
    let tol = wgpu_tolerance(c.view.depth());
    let mut worst = 0.0f64;
    let mut within = |what: &str, node: usize, got: f32, want: f32, scale: f64| {
        let d = (f64::from(got) - f64::from(want)).abs();
        let units = if d == 0.0 { 0.0 } else { d / (tol * scale) };
        assert!(units <= 1.0, "{label}: {what} of node {node}: gpu {got:e}, cpu {want:e}, scale {scale:e}");
        worst = worst.max(units);
    };
    #[allow(clippy::needless_range_loop)] // node i of six arrays
    for i in 0..cpu.len() {
        let (g, h) = (c.view.centres()[i], c.view.half_extents()[i]);
        let pos = f64::from(g.iter().fold(0.0f32, |a, &v| a.max(v.abs())) + h.iter().fold(0.0f32, |a, &v| a.max(v)));
        let hmax = f64::from(h.iter().fold(0.0f32, |a, &v| a.max(v)));
        let moment = 12.0 * f64::from(cpu.masses[i][0]) * hmax * hmax;
        for a in 0..3 {
            within("centre of mass", i, nodes.centres[i][a], cpu.centres[i][a], pos);
        }
        for k in 1..4 {
            within("quadrupole", i, nodes.masses[i][k], cpu.masses[i][k], moment);
        }
        for k in 0..4 {
            within("quadrupole", i, nodes.quads[i][k], cpu.quads[i][k], moment);
        }
        let (r_gpu, r_cpu) = (nodes.centres[i][3].sqrt(), cpu.centres[i][3].sqrt());
        within("critical radius", i, r_gpu, r_cpu, pos + f64::from(r_cpu));
        within("extent", i, extents[i], mp.extent[i], pos + f64::from(mp.extent[i]));
    }
    worst
}

/// Every case against the CPU, printing wgpu's largest difference.
fn check_all<E: GpuExecutor>(exec: &E, exact: bool, cases: &[Case], openings: &[Opening<f32>]) {
    let mut gpu = Gpu::new();
    let mut worst = 0.0f64;
    for c in cases {
        let results = gpu.run(exec, c, openings);
        for (opening, r) in openings.iter().zip(&results) {
            worst = worst.max(compare(&format!("{} {}", exec.name(), c.label), exact, c, *opening, r));
        }
    }
    if !exact {
        println!("{}: largest difference from the CPU: {worst:.3} of the tolerance", exec.name());
    }
}

fn shapes_clouds_and_criteria<E: GpuExecutor>(exec: &E, exact: bool) {
    let clouds = [("clustered", to_f32(&clustered(20_000, 3))), ("uniform", uniform(20_000, 4))];
    let mut cases = Vec::new();
    for (name, set) in &clouds {
        for shape in SHAPES {
            cases.push(case(name, set, shape, 16));
        }
    }
    let empty_leaves =
        cases.iter().filter(|c| c.view.leaf_nodes().iter().any(|&n| c.view.particle_counts()[n as usize] == 0)).count();
    assert!(empty_leaves > 0, "some tree has empty leaves");
    check_all(exec, exact, &cases, &OPENINGS);
}

fn small_and_degenerate<E: GpuExecutor>(exec: &E, exact: bool) {
    let mut cases = Vec::new();
    for shape in SHAPES {
        // A single leaf: the root (depth 0, no level launches).
        for n in [1, 7] {
            let c = case(&format!("{n} bodies"), &uniform(n, 9), shape, 16);
            assert_eq!((c.view.num_nodes(), c.view.depth()), (1, 0), "{}: one leaf", c.label);
            cases.push(c);
        }
        // Coincident bodies take leaves to the deepest level (21 octree, 63 binary levels).
        let mut set = uniform(300, 10);
        for i in 0..12 {
            (set.x[i], set.y[i], set.z[i]) = (0.25, -0.5, 0.125);
        }
        // Massless leaves: a clump of massless bodies in a corner.
        for i in 12..60 {
            (set.x[i], set.y[i], set.z[i], set.mass[i]) = (0.9 + 0.001 * i as f32, 0.95, -0.97, 0.0);
        }
        let c = case("coincident and massless", &set, shape, 4);
        assert_eq!(c.view.depth(), c.leaves.layout().levels(), "{}: the deepest level", c.label);
        let massless = Multipoles::compute(&c.view, &c.bodies).unwrap();
        assert!(
            (0..c.view.num_nodes()).any(|i| massless.mass[i] == 0.0 && c.view.particle_counts()[i] > 0),
            "{}: a massless node with bodies",
            c.label
        );
        cases.push(c);
    }
    check_all(exec, exact, &cases, &OPENINGS);
}

/// The view and order of a tree built on the device (`GpuTree`): the pass on them equals
/// the CPU's on the downloaded view and the bodies gathered by the downloaded order.
fn from_gpu_tree<E: GpuExecutor>(exec: &E, exact: bool) {
    for shape in SHAPES {
        let set = to_f32(&clustered(20_000, 12));
        let bbox = walk_box(&set.view().unwrap(), shape).unwrap();
        let up = |v: &[f32]| exec.upload(v).unwrap();
        let (x, y, z, m) = (up(&set.x), up(&set.y), up(&set.z), up(&set.mass));
        let mut tree = GpuTree::new(exec, shape, Rebalance::new(Criterion::leaf_count(16))).unwrap();
        tree.step(exec, &x, &y, &z, Some(bbox)).unwrap();
        let mut builder = GpuTreeViewBuilder::<E, f32>::new();
        let geometry = Geometry::new(shape, bbox);
        let view = tree.build_view(exec, &mut builder, &geometry).unwrap();
        let status: ViewStatus = view.status(exec).unwrap();
        let order = tree.order_view().unwrap();
        let bodies = DeviceTreeBodies::gather(exec, &x, &y, &z, &m, order, tree.active()).unwrap();
        let mut out = DeviceWalkNodes::new(exec, status.nodes).unwrap();
        let cpu_view = view.download(exec).unwrap();
        let host_order = tree.order(exec).unwrap()[..tree.active()].to_vec();
        let cpu_bodies = TreeBodies::gather(&set.view().unwrap(), &host_order).unwrap();
        let c = Case {
            label: format!("GpuTree {shape:?}"),
            leaves: Leaves::root(cpu_view.layout()),
            lfp: Vec::new(),
            geometry,
            view: cpu_view,
            set: set.clone(),
            order: host_order,
            bodies: cpu_bodies,
        };
        for opening in OPENINGS {
            compute_walk_nodes(exec, view, &status, &bodies, &opening, &mut out).unwrap();
            let r = (out.download(exec).unwrap(), out.download_extents(exec).unwrap());
            compare(&format!("{} {}", exec.name(), c.label), exact, &c, opening, &r);
        }
    }
}

/// One set of buffers through a large, a small and a large tree: the second large tree
/// grows nothing, and every result is still the CPU's.
fn reuse<E: GpuExecutor>(exec: &E, exact: bool) {
    let shape = Shape::Octree(Curve::Hilbert);
    let big = case("big", &uniform(12_000, 20), shape, 8);
    let small = case("small", &uniform(500, 21), shape, 8);
    let mut gpu = Gpu::new();
    let opening = [Opening::safe(0.5f32)];
    let r = gpu.run(exec, &big, &opening);
    compare("reuse big", exact, &big, opening[0], &r[0]);
    let capacity = (gpu.bodies.as_ref().unwrap().capacity(), gpu.nodes.as_ref().unwrap().capacity());
    assert!(capacity.0 >= 12_000 && capacity.1 >= big.view.num_nodes());
    for c in [&small, &big] {
        let r = gpu.run(exec, c, &opening);
        compare(&format!("reuse {}", c.label), exact, c, opening[0], &r[0]);
        let now = (gpu.bodies.as_ref().unwrap().capacity(), gpu.nodes.as_ref().unwrap().capacity());
        assert_eq!(now, capacity, "{}: no buffer grew or shrank", c.label);
    }
}

fn errors<E: GpuExecutor>(exec: &E) {
    let c = case("errors", &uniform(1000, 30), Shape::Octree(Curve::Morton), 16);
    let up = |v: &[f32]| exec.upload(v).unwrap();
    let (x, y, z, m) = (up(&c.set.x), up(&c.set.y), up(&c.set.z), up(&c.set.mass));
    let order = exec.upload(&c.order).unwrap();
    let n = c.order.len();

    let r = DeviceTreeBodies::gather(exec, &x, &y, &z, &m, &order, 0);
    assert!(matches!(r, Err(Error::EmptyInput { .. })), "no bodies");
    let short = x.slice(0..n - 1).unwrap();
    let r = DeviceTreeBodies::gather(exec, &x, short, &z, &m, &order, n);
    assert!(matches!(r, Err(Error::LengthMismatch { what: "y", .. })), "short y");
    let r = DeviceTreeBodies::gather(exec, &x, &y, &z, &m, order.slice(0..n - 1).unwrap(), n);
    assert!(matches!(r, Err(Error::LengthMismatch { what: "order", .. })), "short order");
    let r = DeviceTreeBodies::gather(exec, &x, &y, &z, &m, &order, n + 1);
    assert!(matches!(r, Err(Error::InvalidArgument { .. })), "more active than bodies");
    let mut bad = c.order.clone();
    bad[17] = n as u32 + 5;
    let bad = exec.upload(&bad).unwrap();
    let gathered = DeviceTreeBodies::gather(exec, &x, &y, &z, &m, &bad, n).unwrap();
    let r = gathered.check(exec);
    assert!(
        matches!(r, Err(Error::IndexOutOfBounds { what: "order", position: 17, index, len }) if index == n as u64 + 5 && len == n),
        "{r:?}"
    );
    assert!(gathered.download(exec).is_err());

    let keys = exec.upload(c.leaves.keys()).unwrap();
    let lfp = exec.upload(&c.lfp).unwrap();
    let input = ViewInput {
        leaves: (&keys).into(),
        leaf_count: LeafCount::Host(c.leaves.len()),
        leaf_starts: (&lfp).into(),
        particle_bound: n,
        nf: None,
    };
    let mut builder = GpuTreeViewBuilder::<E, f32>::new();
    let view = builder.build(exec, &c.geometry, &input).unwrap();
    let status = view.status(exec).unwrap();
    let bodies = DeviceTreeBodies::gather(exec, &x, &y, &z, &m, &order, n).unwrap();
    let mut out = DeviceWalkNodes::new(exec, 1).unwrap();
    let r = compute_walk_nodes(exec, view, &status, &bodies, &Opening::safe(0.0), &mut out);
    assert!(matches!(r, Err(Error::InvalidArgument { what: "theta", .. })), "{r:?}");
    let r = compute_walk_nodes(exec, view, &status, &bodies, &Opening::classic(f32::NAN), &mut out);
    assert!(matches!(r, Err(Error::NonFiniteValue { .. })), "{r:?}");
    let fewer = DeviceTreeBodies::gather(exec, &x, &y, &z, &m, &order, n - 1).unwrap();
    let r = compute_walk_nodes(exec, view, &status, &fewer, &Opening::safe(0.5), &mut out);
    assert!(matches!(r, Err(Error::LengthMismatch { what: "tree bodies", .. })), "{r:?}");
    let mut other = status;
    other.nodes += 1;
    let r = compute_walk_nodes(exec, view, &other, &bodies, &Opening::safe(0.5), &mut out);
    assert!(matches!(r, Err(Error::InvalidTree { .. })), "{r:?}");
    other = status;
    (other.leaves, other.nodes) = (other.leaves + 1000, other.nodes + 1000);
    let r = compute_walk_nodes(exec, view, &other, &bodies, &Opening::safe(0.5), &mut out);
    assert!(matches!(r, Err(Error::LengthMismatch { .. })), "{r:?}");
    // The good call after the errors works.
    compute_walk_nodes(exec, view, &status, &bodies, &Opening::safe(0.5), &mut out).unwrap();
    assert_eq!(out.len(), status.nodes);
}

macro_rules! executor_tests {
    ($m:ident, $open:ident, exact = $exact:expr) => {
        mod $m {
            use super::*;

            #[test]
            fn octrees_and_binary_trees_match_the_cpu_for_both_criteria() {
                let _guard = crate::common::serial();
                let Some(e) = $open() else { return };
                shapes_clouds_and_criteria(e, $exact);
            }

            #[test]
            fn single_leaves_coincident_bodies_and_massless_leaves_match_the_cpu() {
                let _guard = crate::common::serial();
                let Some(e) = $open() else { return };
                small_and_degenerate(e, $exact);
            }

            #[test]
            fn a_tree_built_on_the_device_matches_the_cpu() {
                let _guard = crate::common::serial();
                let Some(e) = $open() else { return };
                from_gpu_tree(e, $exact);
            }

            #[test]
            fn buffers_are_reused_without_growing() {
                let _guard = crate::common::serial();
                let Some(e) = $open() else { return };
                reuse(e, $exact);
            }

            #[test]
            fn bad_input_gives_typed_errors() {
                let _guard = crate::common::serial();
                let Some(e) = $open() else { return };
                errors(e);
            }
        }
    };
}

executor_tests!(cuda_upward, cuda, exact = true);
executor_tests!(wgpu_upward, wgpu, exact = false);

#[test]
fn upward_kernels_compile_with_nvrtc_for_sm_90() {
    if let Err(e) = check_nvrtc() {
        let required =
            ["ORRERY_REQUIRE_NVRTC", "ORRERY_REQUIRE_CUDA"].iter().any(|k| std::env::var(k).is_ok_and(|v| v == "1"));
        assert!(!required, "NVRTC is required but unavailable: {e}");
        orrery_core::skip::report("GPU upward pass NVRTC compile", &e.to_string());
        return;
    }
    for module in &KERNEL_MODULES {
        let ptx = compile_module_to_ptx(module, "compute_90").unwrap_or_else(|e| panic!("{}: {e}", module.name));
        for entry in KERNEL_ENTRIES {
            assert!(ptx.contains(&format!(".entry {entry}(")), "no entry {entry}");
        }
        // Correctly rounded intrinsics only: no fused multiply-add in the PTX.
        assert!(!ptx.contains("fma.rn.f32"), "an FMA in the upward pass");
        let cubin = compile_module_to_cubin(module, "sm_90").unwrap_or_else(|e| panic!("{}: {e}", module.name));
        assert!(cubin.starts_with(b"\x7fELF"));
    }
}
