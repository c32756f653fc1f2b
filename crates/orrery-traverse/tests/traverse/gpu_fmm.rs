//! The FMM on GPUs ([`GpuFmm`]) against the CPU evaluation, stage by stage (multipoles
//! after the upward pass, locals after M2L and after the downward pass, forces after P2P
//! and L2P) and end to end (input order, against the CPU solver, and a recorded
//! evaluation replayed), on CUDA; the near field on wgpu (the expansion passes are f64,
//! CUDA only, and say so as `Error::Unsupported`); bad input. The CUDA stage tests run
//! every translation shape ([`TranslationShape::ALL`]: block per node, the baseline, warp
//! per node, the default, and warp per node with direction tables, on a quarter-turn plan
//! and on a table plan), each on a fresh evaluation. See `common` for the skip rules
//! (`ORRERY_REQUIRE_CUDA=1`, `ORRERY_REQUIRE_WGPU=1`; without a device each CUDA test
//! reports its skip and returns).
//!
//! # Tolerances (derived in `orrery_traverse::gpu::fmm`)
//! - Expansions: the GPU performs the CPU's f64 operations (quarter-turn rotations, as
//!   the CPU plan here) in the CPU's order, each correctly rounded and none fused, so the
//!   multipoles and local expansions must equal the CPU's bit for bit (as they do under
//!   the host emulation of the kernels, `emulation/run.sh`). The tests first check the
//!   tolerance a fused build would need — per degree `n` of a node,
//!   `max_m |gpu - cpu| <= 1e-11 max_m |cpu|` (the emulation with FMA contraction: up to
//!   3.0e-12 for multipoles at p = 12, 1.8e-13 for locals) — so a failure says how far
//!   off it is, then the bits.
//! - Forces (f32 bodies, near field in f32 with a 2^-22.9 reciprocal square root, sums
//!   in the CPU's order of sources): per body `|a_gpu - a_cpu| <= 2e-5 S + 4e-7 |a_cpu|`
//!   with `S = G sum_j m_j / r_ij^2` over the body's P2P sources, and likewise for the
//!   potential with `G sum_j m_j / r_ij`.

use orrery_core::sfc::Curve;
use orrery_core::{Error, Executor, GpuExecutor, ParticleSet};
use orrery_traverse::fmm::evaluate::{self, FmmPlan};
use orrery_traverse::fmm::expansions::{Complex, index};
use orrery_traverse::fmm::isa::Level;
use orrery_traverse::fmm::solver::FmmPrepared;
use orrery_traverse::fmm::{Fmm, FmmSolver, FmmTree, Rotations};
use orrery_traverse::gpu::GpuFmm;
use orrery_traverse::gpu::fmm::TranslationShape;
use orrery_traverse::{Forces, Gravity};
use orrery_tree_build::Shape;

use crate::clouds::{clustered, to_f32};
use crate::common::{cuda, serial, wgpu};

/// Expansions: relative to each degree's largest coefficient.
const EXPANSION_TOLERANCE: f64 = 1e-11;
/// Forces: of the near-field scale `S`.
const NEAR_TOLERANCE: f64 = 2e-5;
/// Forces: of the result (the far field's one f32 rounding, either side).
const FAR_TOLERANCE: f64 = 4e-7;

/// The configurations: (shape, tree, order, theta, softening).
fn cases() -> Vec<(Shape, FmmTree, u32, f64, f32)> {
    vec![
        (Shape::Octree(Curve::Hilbert), FmmTree::LeafCount { bucket: 32 }, 8, 0.5, 0.0),
        (Shape::Octree(Curve::Morton), FmmTree::LeafCount { bucket: 16 }, 4, 0.6, 0.01),
        (Shape::Binary, FmmTree::LeafCount { bucket: 32 }, 12, 0.5, 0.0),
        (Shape::Octree(Curve::Hilbert), FmmTree::NfCount { threshold: 20000 }, 16, 0.4, 0.0),
        (Shape::Octree(Curve::Hilbert), FmmTree::Dense { depth: 3 }, 6, 0.5, 0.0),
    ]
}

fn solver(shape: Shape, tree: FmmTree, p: u32, theta: f64, eps: f32) -> FmmSolver<f32> {
    solver_with(shape, tree, p, theta, eps, Rotations::QuarterTurn)
}

/// [`solver`] with the CPU's rotations `rotations` (the direction-table shape follows
/// them; the other shapes match `Rotations::QuarterTurn` only).
fn solver_with(shape: Shape, tree: FmmTree, p: u32, theta: f64, eps: f32, rotations: Rotations) -> FmmSolver<f32> {
    let mut fmm = Fmm::new(p, theta, Gravity::plummer(eps));
    fmm.rotations = rotations;
    FmmSolver { fmm, shape, tree }
}

fn bodies(n: usize, seed: u64) -> ParticleSet<f32> {
    to_f32(&clustered(n, seed))
}

/// Per degree of each node: `max_m |g - c| <= tol max_m |c|`.
fn assert_expansions(gpu: &[Complex], cpu: &[Complex], p: u32, what: &str) {
    assert_eq!(gpu.len(), cpu.len(), "{what}: lengths");
    let nc = (p as usize + 1) * (p as usize + 2) / 2;
    for (node, (g, c)) in gpu.chunks(nc).zip(cpu.chunks(nc)).enumerate() {
        for n in 0..=p {
            let (mut diff, mut scale) = (0.0f64, 0.0f64);
            for m in 0..=n {
                let i = index(n, m);
                diff = diff.max((g[i].re - c[i].re).abs().max((g[i].im - c[i].im).abs()));
                scale = scale.max(c[i].re.abs().max(c[i].im.abs()));
            }
            assert!(
                diff <= EXPANSION_TOLERANCE * scale,
                "{what}: node {node} degree {n}: difference {diff:e}, largest coefficient {scale:e}"
            );
        }
    }
}

/// Bit equality, after [`assert_expansions`] (which says how far off a mismatch is).
fn assert_same_expansions(gpu: &[Complex], cpu: &[Complex], p: u32, what: &str) {
    assert_expansions(gpu, cpu, p, what);
    let differing = gpu
        .iter()
        .zip(cpu)
        .filter(|(g, c)| g.re.to_bits() != c.re.to_bits() || g.im.to_bits() != c.im.to_bits())
        .count();
    assert_eq!(differing, 0, "{what}: {differing} of {} coefficients differ from the CPU's bits", cpu.len());
}

/// `G sum_j m_j / r^2` and `G sum_j m_j / r` over each body's P2P sources (tree order).
fn near_scales(prepared: &FmmPrepared<f32>, plan: &FmmPlan, g: f64) -> Vec<[f64; 2]> {
    let (view, b) = (&prepared.view, &prepared.bodies);
    let mut out = vec![[0.0; 2]; b.len()];
    for &leaf in view.leaf_nodes() {
        for i in view.particles(leaf) {
            let i = i as usize;
            let mut s = [0.0f64; 2];
            for &src in plan.lists.p2p(leaf) {
                for j in view.particles(src) {
                    let j = j as usize;
                    if j == i {
                        continue;
                    }
                    let d = [0, 1, 2].map(|a| f64::from(b.position(j)[a]) - f64::from(b.position(i)[a]));
                    let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
                    if r2 > 0.0 {
                        s[0] += f64::from(b.m[j]) / r2;
                        s[1] += f64::from(b.m[j]) / r2.sqrt();
                    }
                }
            }
            out[i] = [g * s[0], g * s[1]];
        }
    }
    out
}

fn assert_forces(gpu: &Forces<f32>, cpu: &Forces<f32>, scales: &[[f64; 2]], what: &str) {
    assert_eq!(gpu.len(), cpu.len(), "{what}: lengths");
    assert_eq!(scales.len(), cpu.len(), "{what}: scales");
    for (i, scale) in scales.iter().enumerate() {
        let (g, c) = (gpu.acc(i), cpu.acc(i));
        let diff = (0..3).map(|a| (f64::from(g[a]) - f64::from(c[a])).powi(2)).sum::<f64>().sqrt();
        let norm = (0..3).map(|a| f64::from(c[a]).powi(2)).sum::<f64>().sqrt();
        let bound = NEAR_TOLERANCE * scale[0] + FAR_TOLERANCE * norm;
        assert!(diff <= bound, "{what}: body {i}: {g:?} vs {c:?} (difference {diff:e}, bound {bound:e})");
        let dp = (f64::from(gpu.pot[i]) - f64::from(cpu.pot[i])).abs();
        let bound = NEAR_TOLERANCE * scale[1] + FAR_TOLERANCE * f64::from(cpu.pot[i]).abs();
        assert!(dp <= bound, "{what}: potential of body {i}: {} vs {} ({dp:e} > {bound:e})", gpu.pot[i], cpu.pot[i]);
    }
}

/// Every stage on CUDA against the CPU's passes, then the forces, in `translations`, with
/// the CPU plan's `rotations`.
fn stages<E: GpuExecutor>(exec: &E, name: &str, translations: TranslationShape, rotations: Rotations) {
    for (k, (shape, tree, p, theta, eps)) in cases().into_iter().enumerate() {
        let what = format!("{name} {} {rotations:?}: {shape:?} {tree:?} p = {p} theta = {theta}", translations.name());
        let set = bodies(3000, 40 + k as u64);
        let s = solver_with(shape, tree, p, theta, eps, rotations);
        let (gpu, prepared) = GpuFmm::prepare(exec, &s, &set.view().unwrap()).unwrap();
        let mut gpu = gpu.with_shape(translations);
        assert_eq!(gpu.shape(), translations);
        let (view, tb) = (&prepared.view, &prepared.bodies);
        let plan = s.fmm.plan(view, tb).unwrap();
        let device_bodies = GpuFmm::upload_bodies(exec, tb).unwrap();

        let multipoles = evaluate::upward(&plan, view, tb);
        gpu.upward(exec, &device_bodies).unwrap();
        assert_same_expansions(&gpu.download_multipoles(exec).unwrap(), &multipoles, p, &format!("{what}: multipoles"));

        let mut locals = evaluate::m2l_pass(&plan, &multipoles, Level::Baseline);
        gpu.m2l(exec).unwrap();
        assert_same_expansions(&gpu.download_locals(exec).unwrap(), &locals, p, &format!("{what}: M2L"));

        evaluate::downward(&plan, view, &mut locals);
        gpu.downward(exec).unwrap();
        assert_same_expansions(&gpu.download_locals(exec).unwrap(), &locals, p, &format!("{what}: L2L"));

        let (cpu, _) = s.fmm.evaluate_at(view, tb, &plan, orrery_core::CpuIsa::Baseline).unwrap();
        gpu.near_field(exec, &device_bodies).unwrap();
        gpu.far_field(exec, &device_bodies).unwrap();
        let scales = near_scales(&prepared, &plan, 1.0);
        assert_forces(&gpu.download_forces(exec).unwrap(), &cpu, &scales, &format!("{what}: forces"));
    }
}

#[test]
fn cuda_fmm_stages_match_the_cpu_block_per_node() {
    let _guard = serial();
    if let Some(exec) = cuda() {
        stages(exec, "cuda", TranslationShape::BlockPerNode, Rotations::QuarterTurn);
    }
}

#[test]
fn cuda_fmm_stages_match_the_cpu_warp_per_node() {
    let _guard = serial();
    if let Some(exec) = cuda() {
        stages(exec, "cuda", TranslationShape::WarpPerNode, Rotations::QuarterTurn);
    }
}

/// The direction-table shape with a table plan (the CPU's default rotations: direct
/// blocks for the common directions, the quarter turn for the others).
#[test]
fn cuda_fmm_stages_match_the_cpu_warp_directions_table() {
    let _guard = serial();
    if let Some(exec) = cuda() {
        stages(exec, "cuda", TranslationShape::WarpDirections, Rotations::Table);
    }
}

/// The direction-table shape with a quarter-turn plan (no table: every translation
/// through `J`, the fused passes only).
#[test]
fn cuda_fmm_stages_match_the_cpu_warp_directions_quarter_turn() {
    let _guard = serial();
    if let Some(exec) = cuda() {
        stages(exec, "cuda", TranslationShape::WarpDirections, Rotations::QuarterTurn);
    }
}

/// A small tree at the lowest and the highest order, every stage against the CPU, in
/// both translation shapes: what compute-sanitizer's racecheck runs
/// (`benches/device/fmm.sh`; the other CUDA tests are too slow under it).
#[test]
fn cuda_fmm_small_trees_for_the_sanitizers() {
    let _guard = serial();
    let Some(exec) = cuda() else { return };
    let orders = [(1, Shape::Octree(Curve::Hilbert)), (16, Shape::Binary)];
    for ((p, shape), translations) in orders.into_iter().flat_map(|o| TranslationShape::ALL.map(|t| (o, t))) {
        let what = format!("cuda small {}: p = {p} {shape:?}", translations.name());
        let set = bodies(400, 5);
        let rotations = if translations.follows_plan_rotations() { Rotations::Table } else { Rotations::QuarterTurn };
        let s = solver_with(shape, FmmTree::LeafCount { bucket: 16 }, p, 0.5, 0.0, rotations);
        let (gpu, prepared) = GpuFmm::prepare(exec, &s, &set.view().unwrap()).unwrap();
        let mut gpu = gpu.with_shape(translations);
        let (view, tb) = (&prepared.view, &prepared.bodies);
        let plan = s.fmm.plan(view, tb).unwrap();
        let device_bodies = GpuFmm::upload_bodies(exec, tb).unwrap();
        gpu.evaluate(exec, &device_bodies).unwrap();
        let multipoles = evaluate::upward(&plan, view, tb);
        assert_same_expansions(&gpu.download_multipoles(exec).unwrap(), &multipoles, p, &format!("{what}: multipoles"));
        let mut locals = evaluate::m2l_pass(&plan, &multipoles, Level::Baseline);
        evaluate::downward(&plan, view, &mut locals);
        assert_same_expansions(&gpu.download_locals(exec).unwrap(), &locals, p, &format!("{what}: locals"));
        let (cpu, _) = s.fmm.evaluate_at(view, tb, &plan, orrery_core::CpuIsa::Baseline).unwrap();
        let scales = near_scales(&prepared, &plan, 1.0);
        assert_forces(&gpu.download_forces(exec).unwrap(), &cpu, &scales, &format!("{what}: forces"));
    }
}

/// The whole evaluation (one call, then a recording replayed with moved bodies; the
/// default shape) against the CPU solver in input order, errors against f64 direct
/// summation like the CPU's, and the baseline shape's forces: the same bits.
#[test]
fn cuda_fmm_end_to_end_and_replayed() {
    let _guard = serial();
    let Some(exec) = cuda() else { return };
    let set64 = clustered(4000, 9);
    let set = to_f32(&set64);
    let s = solver(Shape::Octree(Curve::Hilbert), FmmTree::LeafCount { bucket: 64 }, 10, 0.5, 0.0);
    let (mut gpu, prepared) = GpuFmm::prepare(exec, &s, &set.view().unwrap()).unwrap();
    assert_eq!(gpu.shape(), TranslationShape::WarpDirections, "the default shape");
    let plan = s.fmm.plan(&prepared.view, &prepared.bodies).unwrap();
    let scales = near_scales(&prepared, &plan, 1.0);
    let device_bodies = GpuFmm::upload_bodies(exec, &prepared.bodies).unwrap();
    gpu.evaluate(exec, &device_bodies).unwrap();
    let once = gpu.download_forces(exec).unwrap();
    let (baseline, _) = GpuFmm::prepare(exec, &s, &set.view().unwrap()).unwrap();
    let mut baseline = baseline.with_shape(TranslationShape::BlockPerNode);
    baseline.evaluate(exec, &device_bodies).unwrap();
    let block = baseline.download_forces(exec).unwrap();
    assert!(crate::common::same_bits(&once, &block), "both shapes compute the same forces");
    let (directions, _) = GpuFmm::prepare(exec, &s, &set.view().unwrap()).unwrap();
    let mut directions = directions.with_shape(TranslationShape::WarpDirections);
    directions.evaluate(exec, &device_bodies).unwrap();
    let fused = directions.download_forces(exec).unwrap();
    assert!(
        crate::common::same_bits(&once, &fused),
        "the direction-table shape on a quarter-turn plan: the same forces"
    );
    let cpu = s.solve(&set.view().unwrap()).unwrap().forces;
    let n = set.len();
    assert_forces(
        &prepared.bodies.scatter_forces(&once, n),
        &cpu,
        &prepared.bodies.scatter(&scales, n, [0.0; 2]),
        "cuda: end to end",
    );
    // f64 errors of the GPU result as small as the CPU's (p = 10: p99 ~1e-6).
    let exact = crate::clouds::direct_f64(&set64, 0.0);
    let widen = |f: &Forces<f32>| Forces {
        ax: f.ax.iter().map(|&v| f64::from(v)).collect(),
        ay: f.ay.iter().map(|&v| f64::from(v)).collect(),
        az: f.az.iter().map(|&v| f64::from(v)).collect(),
        pot: f.pot.iter().map(|&v| f64::from(v)).collect(),
    };
    let gpu_errors =
        orrery_traverse::acceleration_errors(&exact, &widen(&prepared.bodies.scatter_forces(&once, n))).unwrap();
    let cpu_errors = orrery_traverse::acceleration_errors(&exact, &widen(&cpu)).unwrap();
    assert!(gpu_errors.p99 <= 1.5 * cpu_errors.p99 + 1e-6, "{gpu_errors:?} vs {cpu_errors:?}");

    // Record, move nothing, replay: the same bits.
    let recording = gpu.record(exec, &device_bodies).unwrap();
    exec.replay(&recording).unwrap();
    let replayed = gpu.download_forces(exec).unwrap();
    assert!(crate::common::same_bits(&once, &replayed), "a replay recomputes the same forces");
    // New positions in the same buffer: the replay reads them (the tree is kept, so the
    // CPU reference is the same plan's evaluation of the moved bodies).
    let mut moved = prepared.bodies.clone();
    for x in &mut moved.x {
        *x += 1e-4;
    }
    let packed: Vec<f32> = (0..n).flat_map(|i| [moved.x[i], moved.y[i], moved.z[i], moved.m[i]]).collect();
    let mut device_bodies = device_bodies;
    exec.write(&mut device_bodies, 0, &packed).unwrap();
    exec.replay(&recording).unwrap();
    let after = gpu.download_forces(exec).unwrap();
    let (cpu_moved, _) = s.fmm.evaluate(&prepared.view, &moved, &plan).unwrap();
    let moved_prepared = FmmPrepared { view: prepared.view.clone(), bodies: moved };
    assert_forces(&after, &cpu_moved, &near_scales(&moved_prepared, &plan, 1.0), "cuda: replay after a move");
}

/// wgpu: the near field against the CPU's near field (the CPU leaves pass with no local
/// expansions), and the expansion passes refused with a reason.
#[test]
fn wgpu_fmm_near_field_matches_the_cpu_and_far_field_is_unsupported() {
    let _guard = serial();
    let Some(exec) = wgpu() else { return };
    for (k, (shape, tree, p, theta, eps)) in cases().into_iter().enumerate() {
        let what = format!("wgpu: {shape:?} {tree:?} theta = {theta}");
        let set = bodies(2000, 60 + k as u64);
        let s = solver(shape, tree, p, theta, eps);
        let (mut gpu, prepared) = GpuFmm::prepare(exec, &s, &set.view().unwrap()).unwrap();
        let (view, tb) = (&prepared.view, &prepared.bodies);
        let mut plan = s.fmm.plan(view, tb).unwrap();
        plan.has_local.fill(false);
        let nc = (p as usize + 1) * (p as usize + 2) / 2;
        let zeros = vec![Complex::ZERO; view.num_nodes() * nc];
        let eps2 = eps * eps;
        let cpu = evaluate::leaves(&plan, view, tb, &zeros, eps2, 1.0, Level::Baseline);
        let device_bodies = GpuFmm::upload_bodies(exec, tb).unwrap();
        gpu.near_field(exec, &device_bodies).unwrap();
        let scales = near_scales(&prepared, &plan, 1.0);
        assert_forces(&gpu.download_forces(exec).unwrap(), &cpu, &scales, &what);
        assert_eq!(gpu.shape(), TranslationShape::WarpDirections, "the default shape");
        for translations in TranslationShape::ALL {
            gpu.set_shape(translations);
            assert_eq!(gpu.shape(), translations);
            for result in [
                gpu.upward(exec, &device_bodies),
                gpu.m2l(exec),
                gpu.downward(exec),
                gpu.evaluate(exec, &device_bodies),
            ] {
                assert!(matches!(result, Err(Error::Unsupported { .. })), "{what} {}: {result:?}", translations.name());
            }
        }
    }
}

/// Orders out of range, empty input and bodies of another tree are typed errors, as on
/// the CPU.
#[test]
fn gpu_fmm_rejects_bad_input() {
    let _guard = serial();
    let Some(exec) = wgpu() else { return };
    let set = bodies(500, 3);
    for p in [0, 17] {
        let s = solver(Shape::Octree(Curve::Hilbert), FmmTree::LeafCount { bucket: 32 }, p, 0.5, 0.0);
        let result = GpuFmm::prepare(exec, &s, &set.view().unwrap());
        assert!(
            matches!(result, Err(Error::InvalidArgument { what: "expansion order", .. })),
            "p = {p}: {:?}",
            result.err()
        );
    }
    let s = solver(Shape::Octree(Curve::Hilbert), FmmTree::LeafCount { bucket: 32 }, 4, 0.5, 0.0);
    let empty = ParticleSet::<f32>::with_capacity(0);
    let result = GpuFmm::prepare(exec, &s, &empty.view().unwrap());
    assert!(matches!(result, Err(Error::EmptyInput { .. })), "{:?}", result.err());
    let bad_theta = solver(Shape::Octree(Curve::Hilbert), FmmTree::LeafCount { bucket: 32 }, 4, 1.5, 0.0);
    assert!(GpuFmm::prepare(exec, &bad_theta, &set.view().unwrap()).is_err());
    // A plan of another order.
    let (_, prepared) = GpuFmm::prepare(exec, &s, &set.view().unwrap()).unwrap();
    let other = solver(Shape::Octree(Curve::Hilbert), FmmTree::LeafCount { bucket: 32 }, 6, 0.5, 0.0);
    let plan = other.fmm.plan(&prepared.view, &prepared.bodies).unwrap();
    let result = GpuFmm::new(exec, &s.fmm, &prepared.view, &plan);
    assert!(matches!(result, Err(Error::InvalidArgument { what: "FMM plan", .. })), "{:?}", result.err());
    // Bodies of another length.
    let (mut gpu, _) = GpuFmm::prepare(exec, &s, &set.view().unwrap()).unwrap();
    let short = exec.upload(&[0.0f32; 8]).unwrap();
    assert!(matches!(gpu.near_field(exec, &short), Err(Error::LengthMismatch { .. })));
}

/// Writes the inputs and the CPU's stage results of [`cases`] for the host emulation of
/// the expansion kernels (`emulation/run.sh`) into `ORRERY_FMM_DUMP` (one folder per
/// case; raw little-endian arrays). Ignored: a tool, run by that script.
#[test]
#[ignore = "writes files for emulation/run.sh"]
fn fmm_dump_for_the_host_emulation() {
    use std::io::Write as _;
    let root = std::env::var("ORRERY_FMM_DUMP").expect("ORRERY_FMM_DUMP names the output folder");
    let write = |dir: &str, name: &str, bytes: &[u8]| {
        std::fs::File::create(format!("{dir}/{name}")).unwrap().write_all(bytes).unwrap();
    };
    let complex = |v: &[Complex]| -> Vec<f64> { v.iter().flat_map(|c| [c.re, c.im]).collect() };
    let pack =
        |f: &Forces<f32>| -> Vec<f32> { (0..f.len()).flat_map(|i| [f.ax[i], f.ay[i], f.az[i], f.pot[i]]).collect() };
    let runs = cases().into_iter().enumerate().flat_map(|c| [(c, Rotations::QuarterTurn), (c, Rotations::Table)]);
    for ((k, (shape, tree, p, theta, eps)), rotations) in runs {
        if eps != 0.0 {
            continue; // the emulation takes the near field from the CPU: any softening works, one is enough
        }
        // case{k}: a quarter-turn plan (every shape); case{k}t: a table plan (the dir shape).
        let dir = format!("{root}/case{k}{}", if rotations == Rotations::Table { "t" } else { "" });
        std::fs::create_dir_all(&dir).unwrap();
        let set = bodies(3000, 40 + k as u64);
        let s = solver_with(shape, tree, p, theta, eps, rotations);
        let prepared = s.prepare(&set.view().unwrap()).unwrap();
        let (view, tb) = (&prepared.view, &prepared.bodies);
        let plan = s.fmm.plan(view, tb).unwrap();
        let nodes = &plan.nodes;
        let levels: Vec<u32> =
            (0..=view.depth()).filter_map(|l| view.level_range(l)).flat_map(|r| [r.start, r.end - r.start]).collect();
        let frame = nodes.frame;
        let scalars = [
            f64::from(p),
            view.num_nodes() as f64,
            view.num_particles() as f64,
            f64::from(view.layout().children()),
            view.leaf_nodes().len() as f64,
            frame.origin[0],
            frame.origin[1],
            frame.origin[2],
            1.0 / frame.scale,
            nodes.half_unit[0],
            nodes.half_unit[1],
            nodes.half_unit[2],
            1.0 / (frame.scale * frame.scale),
            -1.0 / frame.scale,
            (levels.len() / 2) as f64,
        ];
        let mut particle_nodes = vec![0u32; view.num_particles()];
        for &leaf in view.leaf_nodes() {
            let r = view.particles(leaf);
            particle_nodes[r.start as usize..r.end as usize].fill(leaf);
        }
        let grid: Vec<i64> = nodes.grid.iter().flatten().copied().collect();
        let centres: Vec<f64> = nodes.centres.iter().flatten().copied().collect();
        let has_local: Vec<u32> = plan.has_local.iter().map(|&b| u32::from(b)).collect();
        let packed: Vec<f32> = (0..tb.len()).flat_map(|i| [tb.x[i], tb.y[i], tb.z[i], tb.m[i]]).collect();
        let sources = if plan.lists.m2l_sources.is_empty() { vec![0] } else { plan.lists.m2l_sources.clone() };
        let b = bytemuck::cast_slice::<u32, u8>;
        write(&dir, "label", format!("{shape:?} {tree:?} p = {p} theta = {theta} {rotations:?}").as_bytes());
        let none = orrery_tree_build::view::NONE;
        let (table, m2l_directions, parent_directions) = match &plan.directions {
            Some(d) => (d.table.data().to_vec(), plan.m2l_directions.clone(), plan.parent_directions.clone()),
            None => (Vec::new(), vec![none; plan.lists.m2l_sources.len()], vec![none; view.num_nodes()]),
        };
        let pad = |mut v: Vec<u32>| {
            if v.is_empty() {
                v.push(none);
            }
            v
        };
        let table = if table.is_empty() { vec![0.0] } else { table };
        write(&dir, "directions", bytemuck::cast_slice(&table));
        write(&dir, "m2l_directions", b(&pad(m2l_directions)));
        write(&dir, "parent_directions", b(&pad(parent_directions)));
        write(&dir, "scalars", bytemuck::cast_slice(&scalars));
        write(&dir, "levels", b(&levels));
        write(&dir, "tables", bytemuck::cast_slice(&orrery_traverse::gpu::fmm::pack_tables(&plan.tables)));
        write(&dir, "grid", bytemuck::cast_slice(&grid));
        write(&dir, "centres", bytemuck::cast_slice(&centres));
        write(&dir, "has_local", b(&has_local));
        write(&dir, "particle_nodes", b(&particle_nodes));
        write(&dir, "bodies", bytemuck::cast_slice(&packed));
        write(&dir, "leaves", b(view.leaf_nodes()));
        write(&dir, "begins", b(view.particle_begins()));
        write(&dir, "counts", b(view.particle_counts()));
        write(&dir, "first_children", b(view.first_children()));
        write(&dir, "parents", b(view.parents()));
        write(&dir, "m2l_offsets", b(&plan.lists.m2l_offsets));
        write(&dir, "m2l_sources", b(&sources));
        let multipoles = evaluate::upward(&plan, view, tb);
        write(&dir, "ref_multipoles", bytemuck::cast_slice(&complex(&multipoles)));
        let mut locals = evaluate::m2l_pass(&plan, &multipoles, Level::Baseline);
        write(&dir, "ref_m2l", bytemuck::cast_slice(&complex(&locals)));
        evaluate::downward(&plan, view, &mut locals);
        write(&dir, "ref_locals", bytemuck::cast_slice(&complex(&locals)));
        let (full, _) = s.fmm.evaluate_at(view, tb, &plan, orrery_core::CpuIsa::Baseline).unwrap();
        let mut near_plan = plan.clone();
        near_plan.has_local.fill(false);
        let near = evaluate::leaves(&near_plan, view, tb, &locals, 0.0, 1.0, Level::Baseline);
        write(&dir, "ref_near", bytemuck::cast_slice(&pack(&near)));
        write(&dir, "ref_full", bytemuck::cast_slice(&pack(&full)));
    }
}
