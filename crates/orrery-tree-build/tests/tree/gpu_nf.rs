//! NFCount on the GPU ([`orrery_tree_build::gpu::GpuTree`] with [`Criterion::NfCount`])
//! against the CPU NFCount build, bit for bit: leaves, counts, NF values, sorted keys and
//! convergence report, for builds and incremental updates, octrees (Morton, Hilbert) and
//! binary trees (a rectangular box too); the NFCount kernels one at a time against
//! their CPU references (stencil counts on fixed trees, values from scratch, the
//! decide); record/replay against direct runs; pass budgets; capacity growth. On CUDA
//! (`gpu_nf::cuda::<case>`; skip reported without a device, `ORRERY_REQUIRE_CUDA=1`
//! makes that a failure) and wgpu (`gpu_nf::wgpu::<case>`, lavapipe in CI;
//! `ORRERY_REQUIRE_WGPU=1`). The NVRTC compile of the new entries is
//! `gpu::kernels_compile_with_nvrtc_for_sm_90` (every module of `gpu::KERNEL_MODULES`).

use orrery_core::sfc::Curve;
use orrery_core::{Aabb, Error, GpuExecutor, PositionsView, Real, Vec3};
use orrery_tree_build::gpu::{self, GpuTree};
use orrery_tree_build::leaves::Leaves;
use orrery_tree_build::nfcount::{KeyGeometry, NfState, stencil_count, stencil_count_reference};
use orrery_tree_build::{Convergence, Criterion, Rebalance, Shape, Tree, build, input, update};

use crate::common::{self, Cloud};

const SHAPES: [Shape; 3] = [Shape::Octree(Curve::Morton), Shape::Octree(Curve::Hilbert), Shape::Binary];

/// A threshold that makes trees of a few hundred to a few thousand leaves at 20k
/// particles: 16 particles per cell of a full stencil.
const THRESHOLD: u64 = 27 * 16 * 16;

/// f32 positions on the host (for the CPU reference) and on the device.
struct Positions<E: GpuExecutor> {
    x: Vec<f32>,
    y: Vec<f32>,
    z: Vec<f32>,
    dx: E::Buffer<f32>,
    dy: E::Buffer<f32>,
    dz: E::Buffer<f32>,
}

impl<E: GpuExecutor> Positions<E> {
    fn new(exec: &E, cloud: &Cloud) -> Self {
        let conv = |v: &[f64]| v.iter().map(|&a| a as f32).collect::<Vec<f32>>();
        let (x, y, z) = (conv(&cloud.x), conv(&cloud.y), conv(&cloud.z));
        let (dx, dy, dz) = (exec.upload(&x).unwrap(), exec.upload(&y).unwrap(), exec.upload(&z).unwrap());
        Self { x, y, z, dx, dy, dz }
    }

    fn view(&self) -> PositionsView<'_, f32> {
        PositionsView::new(&self.x, &self.y, &self.z).unwrap()
    }

    fn step(&self, exec: &E, tree: &mut GpuTree<E>, bbox: Option<Aabb<f32>>) -> orrery_core::Result<Convergence> {
        tree.step(exec, &self.dx, &self.dy, &self.dz, bbox)
    }
}

fn unit_box() -> Aabb<f32> {
    Aabb::cube(-1.0, 1.0).unwrap()
}

/// A box of sides 2 x 1 x 0.5: binary keys split x twice before z.
fn rectangular_box() -> Aabb<f32> {
    Aabb::new(Vec3::new(-1.0, -0.5, -0.25), Vec3::new(1.0, 0.5, 0.25)).unwrap()
}

/// Squeezes a cloud of the unit box into [`rectangular_box`].
fn squeezed(mut cloud: Cloud) -> Cloud {
    for (y, z) in cloud.y.iter_mut().zip(cloud.z.iter_mut()) {
        *y *= 0.5;
        *z *= 0.25;
    }
    cloud
}

/// NFCount with `threshold` for `shape` (the geometry of the unit box: the GPU tree uses
/// the keys phase's box anyway).
fn nf_count(shape: Shape, threshold: u64) -> Rebalance {
    Rebalance::new(Criterion::nf_count(shape, &common::unit_box()).unwrap().with_threshold(threshold))
}

/// The CPU options for keys computed in `bbox`.
fn cpu_options<T: Real>(gpu: &Rebalance, shape: Shape, bbox: &Aabb<T>) -> Rebalance {
    let Criterion::NfCount { threshold, .. } = gpu.criterion else { panic!("an NFCount tree") };
    Rebalance { criterion: Criterion::nf_count(shape, bbox).unwrap().with_threshold(threshold), ..*gpu }
}

/// Panics naming the first difference between the GPU tree and the CPU's.
fn assert_same<E: GpuExecutor>(
    exec: &E,
    label: &str,
    gpu: &GpuTree<E>,
    gpu_run: Convergence,
    sorted: &input::SortedKeys<f32>,
    cpu: &Tree,
    cpu_run: Convergence,
) {
    assert_eq!(gpu_run, cpu_run, "{label}: convergence");
    assert_eq!(gpu.convergence(), Some(cpu_run), "{label}: stored convergence");
    assert_eq!(gpu.sorted_keys(exec).unwrap(), sorted.keys, "{label}: sorted keys");
    let leaves = gpu.leaves(exec).unwrap_or_else(|e| panic!("{label}: leaves: {e}"));
    let (g, c) = (leaves.keys(), cpu.leaves().keys());
    if let Some(i) = (0..g.len().min(c.len())).find(|&i| g[i] != c[i]) {
        panic!("{label}: leaf boundary {i} of {}/{} differs: gpu {} cpu {}", g.len(), c.len(), g[i], c[i]);
    }
    assert_eq!(g.len(), c.len(), "{label}: leaves");
    assert_eq!(gpu.counts(exec).unwrap(), cpu.counts(), "{label}: counts");
    let (gnf, cnf) = (gpu.nf(exec).unwrap(), cpu.nf().unwrap());
    if let Some(i) = (0..gnf.len().min(cnf.len())).find(|&i| gnf[i] != cnf[i]) {
        panic!("{label}: NF value of leaf {i} differs: gpu {} cpu {}", gnf[i], cnf[i]);
    }
    assert_eq!(gnf.len(), cnf.len(), "{label}: NF values");
    assert_eq!(gpu.num_leaves(), cpu.leaves().len(), "{label}: leaf count");
}

/// One GPU step against the CPU's, which keeps `cpu` (None: build from scratch).
fn check_step<E: GpuExecutor>(
    exec: &E,
    label: &str,
    gpu: &mut GpuTree<E>,
    p: &Positions<E>,
    bbox: Option<Aabb<f32>>,
    cpu: &mut Option<Tree>,
) {
    let sorted = input::sort_particles(p.view(), bbox, gpu.shape()).unwrap();
    let options = cpu_options(gpu.options(), gpu.shape(), &sorted.bbox);
    let cpu_run = if let Some(tree) = cpu {
        update(tree, &sorted.keys, &options).unwrap()
    } else {
        let (tree, run) = build(&sorted.keys, sorted.layout, &options).unwrap();
        *cpu = Some(tree);
        run
    };
    let gpu_run = p.step(exec, gpu, bbox).unwrap_or_else(|e| panic!("{label}: {e}"));
    assert_same(exec, label, gpu, gpu_run, &sorted, cpu.as_ref().unwrap(), cpu_run);
}

fn clamp(cloud: &mut Cloud) {
    for v in cloud.x.iter_mut().chain(cloud.y.iter_mut()).chain(cloud.z.iter_mut()) {
        *v = v.clamp(-1.0, 1.0);
    }
}

// ---- cases (generic over the executor) ---------------------------------------------------

/// The kernels one at a time on the trees of every pass of a CPU NFCount build: stencil
/// counts of every leaf's cell, its parent's and two cells inside it (inside a coarser
/// leaf) against the 54-search reference; the values from scratch against
/// `NfState::evaluate`; the decide against `NfState::decide`.
pub fn single_kernels_match_the_cpu<E: GpuExecutor>(exec: &E) {
    let mut cases: Vec<(String, Cloud, Shape, Aabb<f64>)> = Vec::new();
    for (name, cloud) in common::all(5_000, 13) {
        for shape in SHAPES {
            cases.push((
                format!("{name} {shape:?}"),
                Cloud { x: cloud.x.clone(), y: cloud.y.clone(), z: cloud.z.clone() },
                shape,
                common::unit_box(),
            ));
        }
    }
    let rect = Aabb::new(Vec3::new(-1.0, -0.5, -0.25), Vec3::new(1.0, 0.5, 0.25)).unwrap();
    cases.push(("uniform rectangular binary".into(), squeezed(common::uniform(5_000, 3)), Shape::Binary, rect));
    let threshold = 27 * 8 * 8;
    for (name, cloud, shape, bbox) in cases {
        let s = input::sort_particles(cloud.view(), Some(bbox), shape).unwrap();
        let geometry = KeyGeometry::new(shape, &s.bbox).unwrap();
        let mut state = NfState::evaluate(Leaves::root(s.layout), &s.keys, geometry).unwrap();
        for pass in 0..32 {
            let label = format!("{name} pass {pass}");
            let leaves = state.leaves().clone();
            let keys = leaves.keys();
            let layout = leaves.layout();
            let mut queries = Vec::new();
            for i in 0..leaves.len() {
                let level = leaves.level(i).unwrap();
                queries.push((keys[i], level, i as u32));
                queries.push((keys[i], level.saturating_sub(1), i as u32));
                // Cells inside the leaf (finer than it), found from another leaf.
                let near = ((i * 7919) % leaves.len()) as u32;
                for deeper in [1, 3] {
                    if level + deeper <= layout.levels() {
                        let size = layout.cell_size_unchecked::<u64>(level + deeper);
                        let span = (keys[i + 1] - keys[i]) / size;
                        let key = keys[i] + (i as u64 * 31 % span) * size;
                        queries.push((key, level + deeper, near));
                    }
                }
            }
            let gpu_s = gpu::stencil_counts(exec, geometry, &leaves, &s.keys, &queries).unwrap();
            for (q, &(key, level, near)) in queries.iter().enumerate() {
                let reference = stencil_count_reference(geometry, &s.keys, key, level);
                assert_eq!(gpu_s[q], reference, "{label}: stencil of key {key} level {level} near {near}");
                let cheap = stencil_count(geometry, keys, state.starts(), &s.keys, key, level, near as usize);
                assert_eq!(cheap, reference, "{label}: CPU cheap stencil");
            }
            let (nf, group) = gpu::nf_values(exec, geometry, &leaves, &s.keys).unwrap();
            assert_eq!(nf, state.nf(), "{label}: W");
            assert_eq!(group, state.group_nf(), "{label}: group values");
            // Every lane count of the evaluation kernel (builds pick one by capacity).
            for lanes in [1, 4, 8] {
                let (nf_l, group_l) = gpu::nf_values_with_lanes(exec, geometry, &leaves, &s.keys, lanes).unwrap();
                assert_eq!(nf_l, nf, "{label}: W with {lanes} lanes");
                assert_eq!(group_l, group, "{label}: group values with {lanes} lanes");
            }
            let ops = state.decide(threshold).unwrap();
            assert_eq!(gpu::nf_ops(exec, &leaves, &nf, &group, threshold).unwrap(), ops, "{label}: ops");
            if ops.iter().all(|&op| op == 1) {
                break;
            }
            state = state.apply(&ops, &s.keys).unwrap().state;
        }
    }
}

/// Every dataset and shape, built from scratch in the unit box, and binary and octree
/// trees of a rectangular box.
pub fn builds_match_the_cpu<E: GpuExecutor>(exec: &E) {
    for (name, cloud) in common::all(20_000, 7) {
        let p = Positions::new(exec, &cloud);
        for shape in SHAPES {
            let mut tree = GpuTree::new(exec, shape, nf_count(shape, THRESHOLD)).unwrap();
            check_step(exec, &format!("{name} {shape:?}"), &mut tree, &p, Some(unit_box()), &mut None);
        }
    }
    for (name, cloud) in [("uniform", common::uniform(30_000, 5)), ("plummer", common::plummer(30_000, 6))] {
        let p = Positions::new(exec, &squeezed(cloud));
        for shape in SHAPES {
            let mut tree = GpuTree::new(exec, shape, nf_count(shape, THRESHOLD)).unwrap();
            let label = format!("{name} rectangular {shape:?}");
            check_step(exec, &label, &mut tree, &p, Some(rectangular_box()), &mut None);
            let mut tree = GpuTree::new(exec, shape, nf_count(shape, THRESHOLD)).unwrap();
            check_step(exec, &format!("{label} (computed box)"), &mut tree, &p, None, &mut None);
        }
    }
}

/// Larger builds: 100k Plummer particles with the default threshold, and 60k uniform
/// ones with a small one (deep trees, every multi-level split).
pub fn larger_builds_match_the_cpu<E: GpuExecutor>(exec: &E) {
    let p = Positions::new(exec, &common::plummer(100_000, 21));
    for shape in SHAPES {
        let options = nf_count(shape, orrery_tree_build::nfcount::DEFAULT_THRESHOLD);
        let mut tree = GpuTree::new(exec, shape, options).unwrap();
        check_step(exec, &format!("plummer 100k {shape:?}"), &mut tree, &p, Some(unit_box()), &mut None);
    }
    let p = Positions::new(exec, &common::uniform(60_000, 22));
    for shape in SHAPES {
        let mut tree = GpuTree::new(exec, shape, nf_count(shape, 27 * 4 * 4)).unwrap();
        check_step(exec, &format!("uniform 60k small threshold {shape:?}"), &mut tree, &p, Some(unit_box()), &mut None);
    }
}

/// Incremental updates of jittered particles equal the CPU's updates step by step.
pub fn updates_match_the_cpu_step_by_step<E: GpuExecutor>(exec: &E) {
    for (name, cloud) in common::all(20_000, 11) {
        for shape in SHAPES {
            let mut tree = GpuTree::new(exec, shape, nf_count(shape, THRESHOLD)).unwrap();
            let mut cpu = None;
            let mut moving = Cloud { x: cloud.x.clone(), y: cloud.y.clone(), z: cloud.z.clone() };
            for step in 0..4 {
                let p = Positions::new(exec, &moving);
                check_step(exec, &format!("{name} {shape:?} step {step}"), &mut tree, &p, Some(unit_box()), &mut cpu);
                moving.jitter(0.02, 200 + step);
                clamp(&mut moving);
            }
        }
    }
    // A binary tree of a rectangular box that shrinks and moves: the split sequence (and
    // the stencil geometry) changes between steps.
    let mut moving = squeezed(common::gaussian(20_000, 12));
    let mut tree = GpuTree::new(exec, Shape::Binary, nf_count(Shape::Binary, THRESHOLD)).unwrap();
    let mut cpu = None;
    for step in 0..4 {
        let p = Positions::new(exec, &moving);
        check_step(exec, &format!("binary computed box step {step}"), &mut tree, &p, None, &mut cpu);
        for x in &mut moving.x {
            *x = 0.7 * *x + 0.05;
        }
    }
}

/// An update of unchanged particles takes one pass and changes nothing.
pub fn an_unchanged_tree_updates_in_one_pass<E: GpuExecutor>(exec: &E) {
    let p = Positions::new(exec, &common::plummer(50_000, 3));
    for shape in SHAPES {
        let mut tree = GpuTree::new(exec, shape, nf_count(shape, THRESHOLD)).unwrap();
        p.step(exec, &mut tree, Some(unit_box())).unwrap();
        let (before, nf) = (tree.leaves(exec).unwrap(), tree.nf(exec).unwrap());
        for _ in 0..2 {
            let run = p.step(exec, &mut tree, Some(unit_box())).unwrap();
            assert_eq!((run.passes, run.converged), (1, true), "{shape:?}");
            assert_eq!(tree.leaves(exec).unwrap(), before, "{shape:?}");
            assert_eq!(tree.nf(exec).unwrap(), nf, "{shape:?}");
        }
    }
}

/// A pass budget that is hit reports no convergence, with the counts and NF values of
/// the final tree; later updates continue from it, as the CPU does.
pub fn the_pass_budget_reports_no_convergence<E: GpuExecutor>(exec: &E) {
    let p = Positions::new(exec, &common::gaussian(30_000, 5));
    for shape in SHAPES {
        for budget in [1, 2, 3] {
            let options = nf_count(shape, 27 * 4 * 4).with_max_passes(budget);
            let mut tree = GpuTree::new(exec, shape, options).unwrap();
            let mut cpu = None;
            for step in 0..3 {
                let label = format!("{shape:?} budget {budget} step {step}");
                check_step(exec, &label, &mut tree, &p, Some(unit_box()), &mut cpu);
            }
            let mut fresh = GpuTree::new(exec, shape, options).unwrap();
            let run = p.step(exec, &mut fresh, Some(unit_box())).unwrap();
            assert!(!run.converged && run.passes == budget, "{shape:?} budget {budget}: {run:?}");
        }
    }
}

/// A tiny leaf capacity overflows: the buffers grow and the run resumes, with the CPU's
/// result; an update that needs more leaves grows again.
pub fn a_capacity_overflow_grows_and_matches_the_cpu<E: GpuExecutor>(exec: &E) {
    for shape in SHAPES {
        for replay in [true, false] {
            let label = format!("{shape:?} replay {replay}");
            let sparse = Positions::new(exec, &common::uniform(2_000, 1));
            let dense = Positions::new(exec, &common::plummer(40_000, 2));
            let options = nf_count(shape, THRESHOLD);
            let mut tree = GpuTree::new(exec, shape, options).unwrap().with_leaf_capacity(2).with_replay(replay);
            let mut cpu = None;
            check_step(exec, &format!("{label} build"), &mut tree, &sparse, Some(unit_box()), &mut cpu);
            assert!(tree.growths() > 0, "{label}: a capacity of 2 leaves must grow");
            let (grown, capacity) = (tree.growths(), tree.leaf_capacity());
            check_step(exec, &format!("{label} same"), &mut tree, &sparse, Some(unit_box()), &mut cpu);
            assert_eq!((tree.growths(), tree.leaf_capacity()), (grown, capacity), "{label}: no growth needed");
            check_step(exec, &format!("{label} denser"), &mut tree, &dense, Some(unit_box()), &mut cpu);
            assert!(tree.growths() > grown, "{label}: 20x the particles need more leaves");
            check_step(exec, &format!("{label} back"), &mut tree, &sparse, Some(unit_box()), &mut cpu);
            for budget in [1, 2] {
                let options = options.with_max_passes(budget);
                let mut tree = GpuTree::new(exec, shape, options).unwrap().with_leaf_capacity(2).with_replay(replay);
                let mut cpu = None;
                check_step(exec, &format!("{label} budget {budget}"), &mut tree, &dense, Some(unit_box()), &mut cpu);
                let again = format!("{label} budget {budget} again");
                check_step(exec, &again, &mut tree, &dense, Some(unit_box()), &mut cpu);
            }
        }
    }
}

/// Recorded and replayed runs equal direct ones step by step (leaves, counts, NF values,
/// reports).
pub fn replay_equals_direct_execution<E: GpuExecutor>(exec: &E) {
    let mut cloud = common::two_clusters(30_000, 8);
    for shape in SHAPES {
        let options = nf_count(shape, THRESHOLD);
        let mut replayed = GpuTree::new(exec, shape, options).unwrap().with_replay(true);
        let mut direct = GpuTree::new(exec, shape, options).unwrap().with_replay(false);
        let mut cpu = None;
        for step in 0..5 {
            let p = Positions::new(exec, &cloud);
            let label = format!("{shape:?} step {step}");
            check_step(exec, &label, &mut replayed, &p, Some(unit_box()), &mut cpu);
            let b = p.step(exec, &mut direct, Some(unit_box())).unwrap();
            assert_eq!(replayed.convergence(), Some(b), "{label}");
            assert_eq!(replayed.leaves(exec).unwrap(), direct.leaves(exec).unwrap(), "{label}");
            assert_eq!(replayed.counts(exec).unwrap(), direct.counts(exec).unwrap(), "{label}");
            assert_eq!(replayed.nf(exec).unwrap(), direct.nf(exec).unwrap(), "{label}");
            cloud.jitter(0.02, 300 + step);
            clamp(&mut cloud);
        }
        assert_eq!(direct.replay_stats(), (0, 0), "{shape:?}: direct runs never record");
        if exec.limits().replay {
            let (replays, recorded) = replayed.replay_stats();
            // Five steps are five runs plus one per resume (a run whose few slots were
            // spent before convergence); all but the very first replay. A run shape
            // (slots) is recorded once per starting leaf buffer.
            let resumes = replayed.resumes();
            assert_eq!(replays, 4 + resumes, "{shape:?}: every run after the first replays");
            assert!(
                (1..=2 * (1 + resumes)).contains(&recorded),
                "{shape:?}: one recording per shape and starting buffer, got {recorded} with {resumes} resumes"
            );
        }
    }
}

/// Bad input gets typed errors, never a panic.
pub fn bad_input_gets_typed_errors<E: GpuExecutor>(exec: &E) {
    let hilbert = Shape::Octree(Curve::Hilbert);
    let zero = nf_count(hilbert, 0);
    assert!(matches!(GpuTree::new(exec, hilbert, zero), Err(Error::InvalidArgument { what: "threshold", .. })));
    let morton = nf_count(Shape::Octree(Curve::Morton), THRESHOLD);
    assert!(matches!(
        GpuTree::new(exec, hilbert, morton),
        Err(Error::InvalidArgument { what: "NFCount geometry", .. })
    ));
    let binary = nf_count(Shape::Binary, THRESHOLD);
    assert!(matches!(
        GpuTree::new(exec, hilbert, binary),
        Err(Error::InvalidArgument { what: "NFCount geometry", .. })
    ));
    let tree = GpuTree::new(exec, hilbert, nf_count(hilbert, THRESHOLD)).unwrap();
    assert!(matches!(tree.nf(exec), Err(Error::InvalidArgument { .. })));
    // A LeafCount tree has no NF values.
    let p = Positions::new(exec, &common::uniform(1_000, 1));
    let mut lc = GpuTree::new(exec, hilbert, Rebalance::new(Criterion::leaf_count(16))).unwrap();
    p.step(exec, &mut lc, Some(unit_box())).unwrap();
    assert!(matches!(lc.nf(exec), Err(Error::InvalidArgument { .. })));
    let root = Leaves::root(hilbert.layout());
    let geometry = KeyGeometry::Octree(Curve::Hilbert);
    assert!(matches!(gpu::nf_values(exec, geometry, &root, &[]), Err(Error::EmptyInput { .. })));
    assert!(matches!(gpu::nf_values(exec, geometry, &root, &[5, 1]), Err(Error::InvalidArgument { .. })));
    let binary_geometry = KeyGeometry::new(Shape::Binary, &common::unit_box()).unwrap();
    assert!(matches!(gpu::nf_values(exec, binary_geometry, &root, &[1]), Err(Error::InvalidArgument { .. })));
    assert!(matches!(gpu::nf_values_with_lanes(exec, geometry, &root, &[1], 3), Err(Error::InvalidArgument { .. })));
    assert!(matches!(gpu::nf_ops(exec, &root, &[1], &[1], 0), Err(Error::InvalidArgument { .. })));
    assert!(matches!(gpu::nf_ops(exec, &root, &[1, 2], &[1], 4), Err(Error::LengthMismatch { .. })));
    assert!(matches!(
        gpu::stencil_counts(exec, geometry, &root, &[1], &[(1 << 63, 0, 0)]),
        Err(Error::InvalidArgument { .. })
    ));
}

/// Declares one `#[test]` per case for the executor returned by `$exec()`, one case at a
/// time with the LeafCount cases of `gpu.rs` (the same executor and lock: a rebalance
/// records on the executor's stream).
macro_rules! gpu_nf_tests {
    ($backend:ident, $exec:ident) => {
        gpu_nf_tests!(@each $backend, $exec,
            single_kernels_match_the_cpu, builds_match_the_cpu, larger_builds_match_the_cpu,
            updates_match_the_cpu_step_by_step, an_unchanged_tree_updates_in_one_pass,
            the_pass_budget_reports_no_convergence, a_capacity_overflow_grows_and_matches_the_cpu,
            replay_equals_direct_execution, bad_input_gets_typed_errors);
    };
    (@each $backend:ident, $exec:ident, $($case:ident),+) => {
        $(
            #[test]
            fn $case() {
                if let Some(e) = crate::gpu::$backend::$exec() {
                    let _one_at_a_time = crate::gpu::$backend::serial();
                    super::$case(e);
                }
            }
        )+
    };
}

mod cuda {
    gpu_nf_tests!(cuda, cuda);
}

mod wgpu {
    gpu_nf_tests!(wgpu, wgpu);
}
