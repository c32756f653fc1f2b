//! The GPU build ([`orrery_tree_build::gpu::GpuTree`]) against the CPU, bit for bit:
//! leaves, counts, sorted keys, order, active count and convergence report, on every
//! available GPU executor — CUDA (`gpu::cuda::<case>`) when a device is present (with
//! `ORRERY_REQUIRE_CUDA=1` a missing device fails) and wgpu (`gpu::wgpu::<case>`, lavapipe
//! in CI; `ORRERY_REQUIRE_WGPU=1` makes a missing adapter fail). Skips are reported with
//! `orrery_core::skip::report`. Plus the NVRTC compile of every CUDA entry point
//! (`gpu::kernels_compile_with_nvrtc_for_sm_90`, needs only libnvrtc;
//! `ORRERY_REQUIRE_NVRTC=1` makes its absence a failure).

use orrery_core::sfc::{Curve, KeyLayout};
use orrery_core::{Aabb, Error, GpuExecutor, PositionsView, Real, Vec3};
use orrery_tree_build::gpu::{self, GpuTree, TreeReal};
use orrery_tree_build::rebalance::{leaf_count_ops, rebalance};
use orrery_tree_build::{Convergence, Criterion, Leaves, Rebalance, Shape, Tree, build, counts, input, update};

use crate::common::{self, Cloud};

const SHAPES: [Shape; 3] = [Shape::Octree(Curve::Morton), Shape::Octree(Curve::Hilbert), Shape::Binary];

/// An executor from `open`, or `None` after reporting the skip; with `require_var=1` a
/// missing executor is a failure.
pub fn open_or_skip<E>(open: impl FnOnce() -> Result<E, Error>, require_var: &str) -> Option<E> {
    match open() {
        Ok(e) => Some(e),
        Err(e) => {
            let required = std::env::var(require_var).is_ok_and(|v| v == "1");
            assert!(!required, "{require_var}=1 but no executor: {e}");
            orrery_core::skip::report(&format!("tree-build GPU test ({require_var} not set)"), &e.to_string());
            None
        }
    }
}

/// Positions of one type on the host and on the device.
struct Positions<E: GpuExecutor, T: TreeReal> {
    x: Vec<T>,
    y: Vec<T>,
    z: Vec<T>,
    dx: E::Buffer<T>,
    dy: E::Buffer<T>,
    dz: E::Buffer<T>,
}

impl<E: GpuExecutor, T: TreeReal> Positions<E, T> {
    fn new(exec: &E, cloud: &Cloud) -> Self {
        let conv = |v: &[f64]| v.iter().map(|&a| <T as Real>::from_f64(a)).collect::<Vec<T>>();
        let (x, y, z) = (conv(&cloud.x), conv(&cloud.y), conv(&cloud.z));
        let (dx, dy, dz) = (exec.upload(&x).unwrap(), exec.upload(&y).unwrap(), exec.upload(&z).unwrap());
        Self { x, y, z, dx, dy, dz }
    }

    fn view(&self) -> PositionsView<'_, T> {
        PositionsView::new(&self.x, &self.y, &self.z).unwrap()
    }

    fn step(&self, exec: &E, tree: &mut GpuTree<E>, bbox: Option<Aabb<T>>) -> orrery_core::Result<Convergence> {
        tree.step(exec, &self.dx, &self.dy, &self.dz, bbox)
    }
}

fn unit_box<T: Real>() -> Aabb<T> {
    Aabb::cube(<T as Real>::from_f64(-1.0), <T as Real>::from_f64(1.0)).unwrap()
}

/// Panics naming the first difference between the GPU tree and the CPU's.
fn assert_same<E: GpuExecutor, T: TreeReal>(
    exec: &E,
    label: &str,
    gpu: &GpuTree<E>,
    gpu_run: Convergence,
    sorted: &input::SortedKeys<T>,
    cpu: &Tree,
    cpu_run: Convergence,
) {
    assert_eq!(gpu_run, cpu_run, "{label}: convergence");
    assert_eq!(gpu.convergence(), Some(cpu_run), "{label}: stored convergence");
    let keys = gpu.sorted_keys(exec).unwrap();
    if let Some(i) = (0..keys.len()).find(|&i| keys[i] != sorted.keys[i]) {
        panic!("{label}: sorted key {i} differs: gpu {} cpu {}", keys[i], sorted.keys[i]);
    }
    assert_eq!(gpu.order(exec).unwrap(), sorted.order, "{label}: order");
    assert_eq!(gpu.active(), sorted.active, "{label}: active");
    let leaves = gpu.leaves(exec).unwrap_or_else(|e| panic!("{label}: leaves: {e}"));
    let (g, c) = (leaves.keys(), cpu.leaves().keys());
    if let Some(i) = (0..g.len().min(c.len())).find(|&i| g[i] != c[i]) {
        panic!("{label}: leaf boundary {i} of {}/{} differs: gpu {} cpu {}", g.len(), c.len(), g[i], c[i]);
    }
    assert_eq!(g.len(), c.len(), "{label}: leaves");
    assert_eq!(gpu.counts(exec).unwrap(), cpu.counts(), "{label}: counts");
    assert_eq!(gpu.num_leaves(), cpu.leaves().len(), "{label}: leaf count");
}

/// One GPU step (keys in `bbox`, sort, build or update) against the CPU's, which keeps
/// `cpu` (None: build from scratch).
#[allow(clippy::too_many_arguments)]
fn check_step<E: GpuExecutor, T: TreeReal>(
    exec: &E,
    label: &str,
    gpu: &mut GpuTree<E>,
    p: &Positions<E, T>,
    bbox: Option<Aabb<T>>,
    cpu: &mut Option<Tree>,
) {
    let options = *gpu.options();
    let sorted = input::sort_particles(p.view(), bbox, gpu.shape()).unwrap();
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

fn leaf_count(bucket: u32) -> Rebalance {
    Rebalance::new(Criterion::leaf_count(bucket))
}

// ---- cases (generic over the executor) ---------------------------------------------------

/// Every dataset and shape, built from scratch in the unit box (f32 positions).
pub fn builds_match_the_cpu<E: GpuExecutor>(exec: &E) {
    for (name, cloud) in common::all(20_000, 7) {
        let p = Positions::<E, f32>::new(exec, &cloud);
        for shape in SHAPES {
            let mut tree = GpuTree::new(exec, shape, leaf_count(16)).unwrap();
            check_step(exec, &format!("{name} {shape:?}"), &mut tree, &p, Some(unit_box()), &mut None);
        }
    }
}

/// A larger build: 200k Plummer particles, Hilbert octree and binary tree, bucket 32.
pub fn a_large_build_matches_the_cpu<E: GpuExecutor>(exec: &E) {
    let p = Positions::<E, f32>::new(exec, &common::plummer(200_000, 21));
    for shape in [Shape::Octree(Curve::Hilbert), Shape::Binary] {
        let mut tree = GpuTree::new(exec, shape, leaf_count(32)).unwrap();
        check_step(exec, &format!("plummer 200k {shape:?}"), &mut tree, &p, Some(unit_box()), &mut None);
    }
}

/// Without a box, the particles' bounding box (reduced on the device, read once).
pub fn the_bounding_box_is_the_cpus<E: GpuExecutor>(exec: &E) {
    for (name, cloud) in
        [("thin disk", common::thin_disk(30_000, 2)), ("two clusters", common::two_clusters(30_000, 4))]
    {
        let p = Positions::<E, f32>::new(exec, &cloud);
        for shape in SHAPES {
            let mut tree = GpuTree::new(exec, shape, leaf_count(8)).unwrap();
            let bbox = tree.compute_keys(exec, &p.dx, &p.dy, &p.dz, None).unwrap();
            assert_eq!(bbox, input::sort_particles(p.view(), None, shape).unwrap().bbox, "{name} {shape:?}");
            check_step(exec, &format!("{name} {shape:?} (computed box)"), &mut tree, &p, None, &mut None);
        }
    }
}

/// Incremental updates of jittered particles equal the CPU's updates step by step.
pub fn updates_match_the_cpu_step_by_step<E: GpuExecutor>(exec: &E) {
    for (name, mut cloud) in common::all(20_000, 11) {
        for shape in SHAPES {
            let mut tree = GpuTree::new(exec, shape, leaf_count(8)).unwrap();
            let mut cpu = None;
            let mut moving = Cloud { x: cloud.x.clone(), y: cloud.y.clone(), z: cloud.z.clone() };
            for step in 0..4 {
                let p = Positions::<E, f32>::new(exec, &moving);
                check_step(exec, &format!("{name} {shape:?} step {step}"), &mut tree, &p, Some(unit_box()), &mut cpu);
                moving.jitter(0.01, 200 + step);
                for v in moving.x.iter_mut().chain(moving.y.iter_mut()).chain(moving.z.iter_mut()) {
                    *v = v.clamp(-1.0, 1.0);
                }
            }
        }
        cloud.jitter(0.0, 0);
    }
}

/// An update of unchanged particles takes one pass and changes nothing.
pub fn an_unchanged_tree_updates_in_one_pass<E: GpuExecutor>(exec: &E) {
    let p = Positions::<E, f32>::new(exec, &common::plummer(50_000, 3));
    let mut tree = GpuTree::new(exec, Shape::Octree(Curve::Hilbert), leaf_count(16)).unwrap();
    p.step(exec, &mut tree, Some(unit_box())).unwrap();
    let before = tree.leaves(exec).unwrap();
    for _ in 0..3 {
        let run = p.step(exec, &mut tree, Some(unit_box())).unwrap();
        assert_eq!((run.passes, run.converged), (1, true));
        assert_eq!(tree.leaves(exec).unwrap(), before);
    }
}

/// A pass budget that is hit reports no convergence, with the counts of the final tree;
/// later updates continue from it, as the CPU does.
pub fn the_pass_budget_reports_no_convergence<E: GpuExecutor>(exec: &E) {
    let p = Positions::<E, f32>::new(exec, &common::gaussian(50_000, 5));
    for shape in SHAPES {
        for budget in [1, 2, 3] {
            let mut tree = GpuTree::new(exec, shape, leaf_count(4).with_max_passes(budget)).unwrap();
            let mut cpu = None;
            for step in 0..3 {
                let label = format!("{shape:?} budget {budget} step {step}");
                check_step(exec, &label, &mut tree, &p, Some(unit_box()), &mut cpu);
            }
            let mut fresh = GpuTree::new(exec, shape, leaf_count(4).with_max_passes(budget)).unwrap();
            let run = p.step(exec, &mut fresh, Some(unit_box())).unwrap();
            assert!(!run.converged && run.passes == budget, "{shape:?} budget {budget}: {run:?}");
        }
    }
}

/// A tiny leaf capacity overflows: the proposal is rejected, the buffers grow and the run
/// resumes, with the CPU's result; and an update that needs more leaves grows again.
pub fn a_capacity_overflow_grows_and_matches_the_cpu<E: GpuExecutor>(exec: &E) {
    for shape in SHAPES {
        for replay in [true, false] {
            let label = format!("{shape:?} replay {replay}");
            let sparse = Positions::<E, f32>::new(exec, &common::uniform(2_000, 1));
            let dense = Positions::<E, f32>::new(exec, &common::plummer(40_000, 2));
            let mut tree = GpuTree::new(exec, shape, leaf_count(4)).unwrap().with_leaf_capacity(2).with_replay(replay);
            let mut cpu = None;
            check_step(exec, &format!("{label} build"), &mut tree, &sparse, Some(unit_box()), &mut cpu);
            assert!(tree.growths() > 0, "{label}: a capacity of 2 leaves must grow");
            let (grown, capacity) = (tree.growths(), tree.leaf_capacity());
            check_step(exec, &format!("{label} same"), &mut tree, &sparse, Some(unit_box()), &mut cpu);
            assert_eq!((tree.growths(), tree.leaf_capacity()), (grown, capacity), "{label}: no growth needed");
            check_step(exec, &format!("{label} denser"), &mut tree, &dense, Some(unit_box()), &mut cpu);
            assert!(tree.growths() > grown, "{label}: 20x the particles need more leaves");
            check_step(exec, &format!("{label} back"), &mut tree, &sparse, Some(unit_box()), &mut cpu);
            // A growth inside a budgeted run keeps the passes already spent.
            for budget in [1, 2, 3] {
                let options = leaf_count(4).with_max_passes(budget);
                let mut tree = GpuTree::new(exec, shape, options).unwrap().with_leaf_capacity(2).with_replay(replay);
                let mut cpu = None;
                check_step(exec, &format!("{label} budget {budget}"), &mut tree, &dense, Some(unit_box()), &mut cpu);
                check_step(
                    exec,
                    &format!("{label} budget {budget} again"),
                    &mut tree,
                    &dense,
                    Some(unit_box()),
                    &mut cpu,
                );
            }
        }
    }
}

/// Recorded and replayed runs equal direct ones step by step (leaves, counts, reports).
pub fn replay_equals_direct_execution<E: GpuExecutor>(exec: &E) {
    let mut cloud = common::two_clusters(30_000, 8);
    for shape in SHAPES {
        let mut replayed = GpuTree::new(exec, shape, leaf_count(8)).unwrap().with_replay(true);
        let mut direct = GpuTree::new(exec, shape, leaf_count(8)).unwrap().with_replay(false);
        for step in 0..5 {
            let p = Positions::<E, f32>::new(exec, &cloud);
            let a = p.step(exec, &mut replayed, Some(unit_box())).unwrap();
            let b = p.step(exec, &mut direct, Some(unit_box())).unwrap();
            let label = format!("{shape:?} step {step}");
            assert_eq!(a, b, "{label}");
            assert_eq!(replayed.leaves(exec).unwrap(), direct.leaves(exec).unwrap(), "{label}");
            assert_eq!(replayed.counts(exec).unwrap(), direct.counts(exec).unwrap(), "{label}");
            cloud.jitter(0.02, 300 + step);
            for v in cloud.x.iter_mut().chain(cloud.y.iter_mut()).chain(cloud.z.iter_mut()) {
                *v = v.clamp(-1.0, 1.0);
            }
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

/// Particles outside a given box get `key_end`, sort last and are counted nowhere, through
/// builds and updates.
pub fn removed_particles_match_the_cpu<E: GpuExecutor>(exec: &E) {
    let small = Aabb::new(Vec3::new(-0.5f32, -0.6, -0.7), Vec3::new(0.5, 0.6, 0.4)).unwrap();
    let mut cloud = common::uniform(20_000, 9);
    cloud.x[10] = 5.0;
    cloud.z[20] = -1.5;
    cloud.y[30] = 0.6; // on the face: inside
    for shape in SHAPES {
        let mut tree = GpuTree::new(exec, shape, leaf_count(16)).unwrap();
        let mut cpu = None;
        let p = Positions::<E, f32>::new(exec, &cloud);
        check_step(exec, &format!("{shape:?} small box"), &mut tree, &p, Some(small), &mut cpu);
        assert!(tree.active() < 20_000 / 2, "{shape:?}: most particles are outside the small box");
        check_step(exec, &format!("{shape:?} unit box"), &mut tree, &p, Some(unit_box()), &mut cpu);
        assert_eq!(tree.active(), 19_998);
    }
}

/// Positions passed as views at unaligned offsets (the WGSL kernels get element offsets).
pub fn position_views_at_offsets_match_the_cpu<E: GpuExecutor>(exec: &E) {
    use orrery_core::Slice;
    let small = Aabb::new(Vec3::new(-0.9f32, -0.5, -0.8), Vec3::new(0.7, 0.9, 0.3)).unwrap();
    let cloud = common::gaussian(10_000, 23);
    let n = cloud.x.len();
    let p = Positions::<E, f32>::new(exec, &cloud);
    let padded = |v: &[f32], pad: usize| {
        let mut out = vec![7.0f32; pad];
        out.extend_from_slice(v);
        out.push(-3.0);
        exec.upload(&out).unwrap()
    };
    let (px, py, pz) = (padded(&p.x, 1), padded(&p.y, 3), padded(&p.z, 70));
    for shape in SHAPES {
        for bbox in [Some(small), None] {
            let sorted = input::sort_particles(p.view(), bbox, shape).unwrap();
            let (cpu, cpu_run) = build(&sorted.keys, sorted.layout, gpu_options()).unwrap();
            let mut tree = GpuTree::new(exec, shape, *gpu_options()).unwrap();
            let run = tree
                .step(
                    exec,
                    px.slice(1..n + 1).unwrap(),
                    py.slice(3..n + 3).unwrap(),
                    pz.slice(70..n + 70).unwrap(),
                    bbox,
                )
                .unwrap();
            assert_same(exec, &format!("{shape:?} views {}", bbox.is_some()), &tree, run, &sorted, &cpu, cpu_run);
        }
    }
}

/// A needle-shaped box: binary keys give the long axis more than 32 coordinate bits (the
/// WGSL kernel's two-word quantisation), and the octree keys of the same box.
pub fn a_needle_box_matches_the_cpu<E: GpuExecutor>(exec: &E) {
    let mut cloud = common::uniform(20_000, 31);
    for (y, z) in cloud.y.iter_mut().zip(cloud.z.iter_mut()) {
        *y *= 1e-7;
        *z *= 3e-7;
    }
    let p = Positions::<E, f32>::new(exec, &cloud);
    let layout = orrery_core::sfc::BinaryLayout::<f32, u64>::full_depth(p.view().bounding_box().unwrap());
    assert!(layout.bits_per_axis()[0] > 32, "{:?}", layout.bits_per_axis());
    for shape in SHAPES {
        let mut tree = GpuTree::new(exec, shape, *gpu_options()).unwrap();
        check_step(exec, &format!("needle {shape:?}"), &mut tree, &p, None, &mut None);
    }
}

fn gpu_options() -> &'static Rebalance {
    static OPTIONS: Rebalance = Rebalance::new(Criterion::leaf_count(16));
    &OPTIONS
}

/// The kernels one at a time: counts and LeafCount operations of every pass of a CPU
/// build equal the CPU's, and the Cornerstone golden example through the GPU decide.
pub fn single_kernels_match_the_cpu<E: GpuExecutor>(exec: &E) {
    // Cornerstone's rebalanceDecision example (tests/tree/golden.rs).
    let layout = KeyLayout::octree::<u64>();
    let (l1, l2) = (1u64 << 60, 1u64 << 57);
    let mut keys: Vec<u64> = (0..8).map(|i| i * l2).collect();
    keys.extend((1..8).map(|i| i * l1));
    keys.push(1 << 63);
    let example = Leaves::from_keys(keys, layout).unwrap();
    let counts = [1, 1, 1, 0, 0, 0, 0, 0, 2, 3, 4, 5, 6, 7, 8];
    let ops = gpu::leaf_count_ops(exec, &example, &counts, 4).unwrap();
    assert_eq!(ops, [1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 8, 8, 8, 8]);
    // Multi-level jumps, octree and binary.
    for (layout, cases) in [
        (layout, &[(16, 1), (17, 8), (128, 8), (129, 64), (1024, 64), (1025, 512), (8192, 512), (8193, 4096)][..]),
        (KeyLayout::binary::<u64>(), &[(16, 1), (17, 2), (33, 4), (16 * 2048 + 1, 4096)][..]),
    ] {
        for &(count, op) in cases {
            assert_eq!(gpu::leaf_count_ops(exec, &Leaves::root(layout), &[count], 16).unwrap(), [op], "count {count}");
        }
    }
    for (name, cloud) in common::all(5_000, 13) {
        for shape in SHAPES {
            let s = input::sort_particles(cloud.view(), Some(unit_box()), shape).unwrap();
            let mut leaves = Leaves::root(s.layout);
            for pass in 0..32 {
                let label = format!("{name} {shape:?} pass {pass}");
                let c = counts::leaf_counts(leaves.keys(), &s.keys);
                assert_eq!(gpu::leaf_counts(exec, &leaves, &s.keys).unwrap(), c, "{label}: counts");
                let ops = leaf_count_ops(&leaves, &c, 8).unwrap();
                assert_eq!(gpu::leaf_count_ops(exec, &leaves, &c, 8).unwrap(), ops, "{label}: ops");
                let next = rebalance(&leaves, &ops).unwrap();
                if !next.changed {
                    break;
                }
                leaves = next.leaves;
            }
        }
    }
}

/// Bad input gets typed errors, never a panic.
pub fn bad_input_gets_typed_errors<E: GpuExecutor>(exec: &E) {
    let shape = Shape::Octree(Curve::Hilbert);
    assert!(matches!(GpuTree::new(exec, shape, leaf_count(0)), Err(Error::InvalidArgument { what: "bucket", .. })));
    assert!(matches!(
        GpuTree::new(exec, shape, leaf_count(4).with_max_passes(0)),
        Err(Error::InvalidArgument { what: "max_passes", .. })
    ));
    let mut tree = GpuTree::new(exec, shape, leaf_count(4)).unwrap();
    assert!(matches!(tree.leaves(exec), Err(Error::InvalidArgument { .. })));
    assert!(matches!(tree.sort(exec), Err(Error::InvalidArgument { .. })));
    assert!(matches!(tree.rebalance(exec), Err(Error::InvalidArgument { .. })));
    let a = exec.upload(&[0.0f32; 10]).unwrap();
    let b = exec.upload(&[0.0f32; 9]).unwrap();
    assert!(matches!(tree.step(exec, &a, &a, &b, None), Err(Error::LengthMismatch { .. })));
    let empty = exec.alloc::<f32>(0);
    if let Ok(empty) = empty {
        assert!(matches!(tree.step(exec, &empty, &empty, &empty, None), Err(Error::EmptyInput { .. })));
    }
    // Coincident particles have a point for a bounding box.
    assert!(matches!(tree.step(exec, &a, &a, &a, None), Err(Error::InvalidBox { .. })));
    let point = Aabb::new(Vec3::new(0.0f32, 0.0, 0.0), Vec3::new(0.0, 0.0, 0.0)).unwrap();
    assert!(matches!(tree.step(exec, &a, &a, &a, Some(point)), Err(Error::InvalidBox { .. })));
    // With a box, coincident particles are a tree down to the key resolution.
    let run = tree.step(exec, &a, &a, &a, Some(unit_box())).unwrap();
    assert!(run.converged);
    assert_eq!(tree.leaves(exec).unwrap().depth(), 21);
    assert!(matches!(
        gpu::leaf_count_ops(exec, &Leaves::root(KeyLayout::octree::<u64>()), &[1, 2], 4),
        Err(Error::LengthMismatch { .. })
    ));
}

/// f64 positions: equal to the CPU where the device does f64 arithmetic (CUDA), a typed
/// `Unsupported` error otherwise.
pub fn f64_positions_match_the_cpu_or_are_unsupported<E: GpuExecutor>(exec: &E) {
    let cloud = common::plummer(20_000, 17);
    let p = Positions::<E, f64>::new(exec, &cloud);
    for shape in SHAPES {
        let mut tree = GpuTree::new(exec, shape, leaf_count(16)).unwrap();
        match p.step(exec, &mut tree, Some(unit_box())) {
            Err(Error::Unsupported { .. }) => {
                orrery_core::skip::report(&format!("f64 {shape:?} on {}", exec.name()), "unsupported (typed error)");
            }
            Err(e) => panic!("{shape:?}: {e}"),
            Ok(_) => {
                let mut tree = GpuTree::new(exec, shape, leaf_count(16)).unwrap();
                check_step(exec, &format!("f64 {shape:?}"), &mut tree, &p, Some(unit_box()), &mut None);
                let mut tree = GpuTree::new(exec, shape, leaf_count(16)).unwrap();
                check_step(exec, &format!("f64 {shape:?} no box"), &mut tree, &p, None, &mut None);
            }
        }
    }
}

/// Declares one `#[test]` per case for the executor returned by `$exec()`.
macro_rules! gpu_tests {
    ($exec:ident) => {
        gpu_tests!(@each $exec,
            builds_match_the_cpu, a_large_build_matches_the_cpu, the_bounding_box_is_the_cpus,
            updates_match_the_cpu_step_by_step, an_unchanged_tree_updates_in_one_pass,
            the_pass_budget_reports_no_convergence, a_capacity_overflow_grows_and_matches_the_cpu,
            replay_equals_direct_execution, removed_particles_match_the_cpu, position_views_at_offsets_match_the_cpu, a_needle_box_matches_the_cpu,
            single_kernels_match_the_cpu,
            bad_input_gets_typed_errors, f64_positions_match_the_cpu_or_are_unsupported);
    };
    (@each $exec:ident, $($case:ident),+) => {
        /// One case at a time on the shared executor: a rebalance records on the
        /// executor's stream, and a capture sees (CUDA) or refuses (wgpu) what other threads
        /// enqueue meanwhile. Shared with the NFCount cases (`gpu_nf.rs`).
        pub(crate) fn serial() -> std::sync::MutexGuard<'static, ()> {
            static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
            LOCK.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
        }

        $(
            #[test]
            fn $case() {
                if let Some(e) = $exec() {
                    let _one_at_a_time = serial();
                    super::$case(e);
                }
            }
        )+
    };
}

pub(crate) mod cuda {
    use std::sync::OnceLock;

    use orrery_backend_cuda::CudaExecutor;

    /// The shared CUDA executor of the GPU tests (`None` after reporting the skip).
    pub(crate) fn cuda() -> Option<&'static CudaExecutor> {
        static EXEC: OnceLock<Option<CudaExecutor>> = OnceLock::new();
        EXEC.get_or_init(|| super::open_or_skip(CudaExecutor::from_env, "ORRERY_REQUIRE_CUDA")).as_ref()
    }

    gpu_tests!(cuda);
}

pub(crate) mod wgpu {
    use std::sync::OnceLock;

    use orrery_backend_wgpu::WgpuExecutor;

    /// The shared wgpu executor of the GPU tests (`None` after reporting the skip).
    pub(crate) fn wgpu() -> Option<&'static WgpuExecutor> {
        static EXEC: OnceLock<Option<WgpuExecutor>> = OnceLock::new();
        EXEC.get_or_init(|| super::open_or_skip(WgpuExecutor::new, "ORRERY_REQUIRE_WGPU")).as_ref()
    }

    gpu_tests!(wgpu);
}

#[test]
fn kernels_compile_with_nvrtc_for_sm_90() {
    use orrery_backend_cuda::{check_nvrtc, compile_module_to_cubin, compile_module_to_ptx};
    if let Err(e) = check_nvrtc() {
        let required =
            ["ORRERY_REQUIRE_NVRTC", "ORRERY_REQUIRE_CUDA"].iter().any(|k| std::env::var(k).is_ok_and(|v| v == "1"));
        assert!(!required, "NVRTC is required but unavailable: {e}");
        orrery_core::skip::report("tree-build NVRTC compile", &e.to_string());
        return;
    }
    for module in &gpu::KERNEL_MODULES {
        let ptx = compile_module_to_ptx(module, "compute_90").unwrap_or_else(|e| panic!("{}: {e}", module.name));
        let entries = gpu::KERNEL_ENTRIES.iter().find(|(m, _)| *m == module.name).unwrap().1;
        for entry in entries {
            assert!(ptx.contains(&format!(".entry {entry}(")), "{}: no entry {entry}", module.name);
        }
        let cubin = compile_module_to_cubin(module, "sm_90").unwrap_or_else(|e| panic!("{}: {e}", module.name));
        assert!(cubin.starts_with(b"\x7fELF"));
    }
}
