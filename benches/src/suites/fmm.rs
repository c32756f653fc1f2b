//! `fmm`: the fast multipole method (orrery-traverse, issue 14), per phase, with error
//! percentiles, beside Barnes-Hut on the same bodies.
//!
//! Workloads: a uniform cube `[-1, 1)^3`, a Plummer sphere (Hénon units), a thin
//! exponential disk (scale length 1), two Plummer clusters (separation 4, impact 0.5) and
//! an expanding uniform sphere (radius 1); N = 1M, 4M, 10M on GPUs, 100K on the CPU
//! (20K with `--quick`; `ORRERY_FMM_SIZES=1000000,4000000` picks others; on GPUs
//! `ORRERY_FMM_ONLY` picks rows by name, see [`selected`]); seed 42;
//! unsoftened (the FMM's far field is the 1/r law).
//!
//! Settings: an adaptive Hilbert octree (LeafCount 64), theta 0.5, orders 4, 8 and 12;
//! and the dense tree (every leaf at depth `round(log8(N / 64))`) at order 8 ("adaptive
//! vs dense"). Barnes-Hut (quadrupoles, safe criterion, theta 0.4, 0.6, 0.8; LeafCount
//! 16) on the same bodies: its rows carry the same error percentiles, so each FMM row
//! has a Barnes-Hut row of about its accuracy to be compared with ("at matched
//! accuracy": the reader picks the row with the nearest p99).
//!
//! Per row: time per phase — lists (the host's plan: node data and interaction lists),
//! upward (P2M, M2M), M2L, P2P, downward (L2L; on the CPU L2P with P2P as "leaves"),
//! total — medians over the repeats, in `info`; the record's time is the evaluation's
//! total (CPU: plan included, as `Fmm::run` does; GPU: the device passes, the host plan
//! reported beside it). Errors: relative acceleration and potential errors at 4096 evenly
//! spaced bodies against an f64 direct sum (GPU: 2048, summed on the device where CUDA
//! has f64), median / p90 / p99 / max.
//!
//! GPU: CUDA runs every pass ([`orrery_traverse::gpu::GpuFmm`]; the lists are the CPU's,
//! built and uploaded once per tree), each setting in every translation shape side by side
//! ([`TranslationShape::ALL`](orrery_traverse::gpu::fmm::TranslationShape::ALL): the
//! block-per-node baseline, the warp-per-node default, the warp shape with direction tables, which uses the settings' table plan) on the same tree
//! and upload, the shape at the end of the row's name (`uniform 1M fmm adaptive p 8 warp per
//! node`, `... warp per node, direction tables`; `ORRERY_FMM_ONLY=uniform 1M fmm adaptive p 8`
//! selects all three); wgpu has no f64 expansion passes (`Error::Unsupported`), so it runs the
//! near field (P2P) alone, one row per tree without a shape.

use std::time::Instant;

use orrery_core::{ParticleSet, Result};
use orrery_traverse::direct::{Targets, direct_sum_f64, evenly_spaced_targets};
use orrery_traverse::fmm::{Fmm, FmmSolver, FmmStats, FmmTree};
use orrery_traverse::solver::BarnesHut;
use orrery_traverse::{Forces, Gravity, Opening, acceleration_errors, gather_targets, ic, potential_errors};

use crate::report::Record;
use crate::stats::Stats;
use crate::suites::Config;

/// Orders of the adaptive rows.
const ORDERS: [u32; 3] = [4, 8, 12];
/// The dense tree's order.
const DENSE_ORDER: u32 = 8;
/// Acceptance parameter.
const THETA: f64 = 0.5;
/// Bodies per leaf (adaptive FMM).
const BUCKET: u32 = 64;
/// Barnes-Hut opening angles.
const BH_THETAS: [f32; 3] = [0.4, 0.6, 0.8];

/// One workload.
struct Workload {
    name: &'static str,
    bodies: ParticleSet<f64>,
}

impl Workload {
    fn n(&self) -> usize {
        self.bodies.len()
    }
}

/// The five models at `n` bodies.
fn workloads(n: usize) -> Result<Vec<Workload>> {
    let models: [(&str, orrery_traverse::ic::PhaseSpace); 5] = [
        ("uniform", ic::uniform_cube(n, 1.0, 42)?),
        ("plummer", ic::plummer(n, 42)?),
        ("thin disk", ic::rotating_disk(n, 1.0, 42)?),
        ("two clusters", ic::collision(n, 4.0, 0.5, 42)?),
        ("expanding sphere", ic::expanding_sphere(n, 1.0, 1.0, 42)?),
    ];
    Ok(models.into_iter().map(|(name, ps)| Workload { name, bodies: ps.bodies::<f64>() }).collect())
}

/// Whether `workload` is selected by `ORRERY_FMM_ONLY` (comma-separated substrings of
/// workload names, e.g. `uniform 1M fmm adaptive p 8`, which selects the rows of both
/// translation shapes, or `uniform 1M fmm adaptive p 8 warp per node`); everything when it
/// is unset. A model none of whose rows is selected is not generated or summed.
fn selected(workload: &str) -> bool {
    match std::env::var("ORRERY_FMM_ONLY") {
        Ok(list) if !list.trim().is_empty() => list.split(',').any(|part| workload.contains(part.trim())),
        _ => true,
    }
}

/// The sizes: `ORRERY_FMM_SIZES` (comma-separated body counts) when set, else 20K with
/// `--quick`, else 100K on the CPU and 1M, 4M, 10M on GPUs (so that one device call of
/// at most ten minutes can take a subset).
fn sizes(cfg: &Config, cpu: bool) -> Vec<usize> {
    if let Ok(list) = std::env::var("ORRERY_FMM_SIZES") {
        let sizes: Vec<usize> = list.split(',').filter_map(|v| v.trim().parse().ok()).collect();
        if !sizes.is_empty() {
            return sizes;
        }
    }
    if cfg.quick {
        vec![20_000]
    } else if cpu {
        vec![100_000]
    } else {
        vec![1_000_000, 4_000_000, 10_000_000]
    }
}

fn to_f32(set: &ParticleSet<f64>) -> ParticleSet<f32> {
    let c = |v: &[f64]| v.iter().map(|&a| a as f32).collect();
    ParticleSet { x: c(&set.x), y: c(&set.y), z: c(&set.z), mass: c(&set.mass) }
}

/// "100K", "1M".
fn size_label(n: usize) -> String {
    if n >= 1_000_000 { format!("{}M", n / 1_000_000) } else { format!("{}K", n / 1000) }
}

/// The dense tree's depth for `n` bodies: about 64 per leaf.
fn dense_depth(n: usize) -> u32 {
    ((n as f64 / 64.0).ln() / 8f64.ln()).round().max(1.0) as u32
}

/// The FMM settings of a row.
fn solver(p: u32, tree: FmmTree) -> FmmSolver<f32> {
    let mut s = FmmSolver::new(Fmm::new(p, THETA, Gravity::plummer(0.0f32)));
    s.tree = tree;
    s
}

/// The rows' trees: adaptive at each order, dense at one.
fn settings(n: usize) -> Vec<(String, FmmSolver<f32>)> {
    let mut out: Vec<(String, FmmSolver<f32>)> =
        ORDERS.iter().map(|&p| (format!("adaptive p {p}"), solver(p, FmmTree::LeafCount { bucket: BUCKET }))).collect();
    let depth = dense_depth(n);
    out.push((format!("dense depth {depth} p {DENSE_ORDER}"), solver(DENSE_ORDER, FmmTree::Dense { depth })));
    out
}

/// Error percentiles of an input-order result at `targets`.
fn errors(forces: &Forces<f32>, targets: &[u32], reference: &Forces<f64>) -> Result<String> {
    let picked = gather_targets(forces, targets)?;
    let a = acceleration_errors(reference, &picked)?;
    let p = potential_errors(reference, &picked)?;
    Ok(format!(
        "acc err p50 {:.2e} p90 {:.2e} p99 {:.2e} max {:.2e}; pot err p50 {:.2e} p99 {:.2e}",
        a.median, a.p90, a.p99, a.max, p.median, p.p99
    ))
}

fn record(executor: String, workload: String, n: usize, stats: Stats, info: String) -> Record {
    Record { suite: "fmm".into(), workload, executor, elements: n as u64, bytes: 0, stats, info }
}

fn median_ms(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2] * 1e3
}

/// Barnes-Hut rows (whole evaluation on the CPU) on `w`.
fn barnes_hut_cpu(
    cfg: &Config,
    w: &Workload,
    targets: &[u32],
    reference: &Forces<f64>,
    executor: &str,
) -> Result<Vec<Record>> {
    let bodies = to_f32(&w.bodies);
    let view = bodies.view()?;
    let mut records = Vec::new();
    for theta in BH_THETAS {
        let bh = BarnesHut::new(Gravity::plummer(0.0f32), Opening::safe(theta));
        let mut samples = Vec::new();
        let mut last = None;
        for run in 0..cfg.warmup + cfg.repeats {
            let start = Instant::now();
            let s = bh.solve(&view)?;
            if run >= cfg.warmup {
                samples.push(start.elapsed());
            }
            last = Some(s);
        }
        let stats = Stats::from_samples(&mut samples);
        let s = last.expect("at least one run");
        let info = errors(&s.forces, targets, reference)?;
        let workload = format!("{} {} barnes-hut theta {theta}", w.name, size_label(w.n()));
        records.push(record(
            format!("{executor} barnes-hut quadrupole (whole evaluation)"),
            workload,
            w.n(),
            stats,
            info,
        ));
    }
    Ok(records)
}

/// The CPU rows: `FmmSolver::solve` (tree, plan, passes) per setting, phases from its
/// timings; Barnes-Hut beside it.
///
/// # Errors
/// Solver failures.
pub fn run_cpu(cfg: &Config, executor: &str) -> Result<Vec<Record>> {
    let mut records = Vec::new();
    for n in sizes(cfg, true) {
        for w in workloads(n)? {
            let targets = evenly_spaced_targets(n, 4096);
            let reference = direct_sum_f64(&w.bodies.view()?, Targets::Indices(&targets), &Gravity::plummer(0.0))?;
            let bodies = to_f32(&w.bodies);
            let view = bodies.view()?;
            for (setting, s) in settings(n) {
                let mut samples = Vec::new();
                let mut phases: [Vec<f64>; 6] = Default::default();
                let mut last = None;
                for run in 0..cfg.warmup + cfg.repeats {
                    let start = Instant::now();
                    let solution = s.solve(&view)?;
                    let total = start.elapsed();
                    if run >= cfg.warmup {
                        samples.push(total);
                        let t = solution.stats.timings;
                        let tree = total.as_secs_f64() - t.total();
                        for (k, v) in [tree, t.plan, t.upward, t.m2l, t.downward, t.leaves].into_iter().enumerate() {
                            phases[k].push(v);
                        }
                    }
                    last = Some(solution);
                }
                let stats = Stats::from_samples(&mut samples);
                let solution = last.expect("at least one run");
                let st: FmmStats = solution.stats;
                let [tree, plan, up, m2l, down, leaves] = phases.map(|mut v| median_ms(&mut v));
                let info = format!(
                    "ms: tree {tree:.1}, lists {plan:.1}, upward {up:.1}, M2L {m2l:.1}, downward {down:.1}, \
                     P2P+L2P {leaves:.1}; {} M2L pairs, {} P2P pairs, {:.3e} P2P interactions, {} directions; {}",
                    st.m2l,
                    st.p2p_pairs,
                    st.p2p_interactions as f64,
                    st.directions,
                    errors(&solution.forces, &targets, &reference)?
                );
                let workload = format!("{} {} fmm {setting}", w.name, size_label(n));
                eprintln!("  {workload}: {:.1} ms", stats.median_ms);
                records.push(record(format!("{executor} fmm (whole evaluation)"), workload, n, stats, info));
            }
            records.extend(barnes_hut_cpu(cfg, &w, &targets, &reference, executor)?);
        }
    }
    Ok(records)
}

#[cfg(any(feature = "cuda", feature = "wgpu"))]
pub use gpu::run_gpu;

#[cfg(any(feature = "cuda", feature = "wgpu"))]
mod gpu {
    use orrery_core::{Error, GpuExecutor, Result};
    use orrery_traverse::Gravity;
    use orrery_traverse::direct::{Targets, direct_sum_f64, evenly_spaced_targets};
    use orrery_traverse::fmm::solver::FmmPrepared;
    use orrery_traverse::gpu::fmm::{GpuFmmTimings, TranslationShape};
    use orrery_traverse::gpu::walk::GpuWalk;
    use orrery_traverse::gpu::{DeviceBodies, DeviceForces, GpuBarnesHut, GpuFmm, direct_sum_gpu_f64};
    use orrery_traverse::solver::BarnesHut;
    use orrery_traverse::{Forces, Opening};

    use super::selected;

    use super::{BH_THETAS, errors, median_ms, record, settings, size_label, sizes, to_f32, workloads};
    use crate::report::Record;
    use crate::stats::{Stats, measure};
    use crate::suites::Config;

    /// Bodies whose errors are measured on GPUs.
    const TARGETS: usize = 2048;

    /// `f` and how long it took, for the host phases.
    fn host_secs<R>(f: impl FnOnce() -> Result<R>) -> Result<(R, std::time::Duration)> {
        let start = std::time::Instant::now();
        let r = f()?;
        Ok((r, start.elapsed()))
    }

    /// The f64 reference at `targets`: on the device where it has f64 direct sums, else
    /// on the host.
    fn reference<E: GpuExecutor>(
        exec: &E,
        bodies32: &orrery_core::ParticleSet<f32>,
        bodies64: &orrery_core::ParticleSet<f64>,
        targets: &[u32],
    ) -> Result<Forces<f64>> {
        let d = DeviceBodies::upload(exec, &bodies32.view()?)?;
        let t = exec.upload(targets)?;
        let mut out = DeviceForces::<E, f64>::alloc(exec, targets.len())?;
        match direct_sum_gpu_f64(exec, &d, Some(&t), &Gravity::plummer(0.0), &mut out) {
            Ok(()) => out.download(exec),
            Err(Error::Unsupported { .. }) => {
                direct_sum_f64(&bodies64.view()?, Targets::Indices(targets), &Gravity::plummer(0.0))
            }
            Err(e) => Err(e),
        }
    }

    /// Whether the row of `workload` in some translation shape is selected (CUDA rows end
    /// in the shape's name; the wgpu P2P row, with no translations, runs when one is).
    fn any_shape_selected(workload: &str) -> bool {
        TranslationShape::ALL.iter().any(|shape| selected(&format!("{workload} {}", shape.name())))
    }

    /// What a device row reports from the host: the tree (for scattering the forces back
    /// to input order) and the host's tree and lists time.
    struct DeviceRowHost<'a> {
        prepared: &'a FmmPrepared<f32>,
        tree_ms: f64,
    }

    /// One CUDA row: `fmm`'s evaluation of `bodies` in its current shape, timed per phase
    /// (medians over the repeats), and the errors of its forces at `targets`.
    fn device_row<E: GpuExecutor>(
        exec: &E,
        cfg: &Config,
        fmm: &mut GpuFmm<E>,
        bodies: &E::Buffer<f32>,
        host: &DeviceRowHost<'_>,
        targets: &[u32],
        reference: &Forces<f64>,
    ) -> Result<(Stats, String)> {
        let mut samples = Vec::new();
        let mut phases: [Vec<f64>; 5] = Default::default();
        for run in 0..cfg.warmup + cfg.repeats {
            let t: GpuFmmTimings = fmm.evaluate_timed(exec, bodies)?;
            if run >= cfg.warmup {
                samples.push(t.total());
                for (k, v) in [t.upward, t.m2l, t.downward, t.p2p, t.l2p].into_iter().enumerate() {
                    phases[k].push(v.as_secs_f64());
                }
            }
        }
        let stats = Stats::from_samples(&mut samples);
        let [up, m2l, down, p2p, l2p] = phases.map(|mut v| median_ms(&mut v));
        let n = host.prepared.bodies.len();
        let forces = host.prepared.bodies.scatter_forces(&fmm.download_forces(exec)?, n);
        let info = format!(
            "ms: tree + lists (host) {:.1}, upward {up:.2}, M2L {m2l:.2}, downward {down:.2}, P2P {p2p:.2}, \
             L2P {l2p:.2}; {} M2L pairs, {} P2P pairs, {} nodes; translations {}; {}",
            host.tree_ms,
            fmm.plan().m2l_pairs(),
            fmm.plan().p2p_pairs(),
            fmm.plan().nodes(),
            fmm.shape().name(),
            errors(&forces, targets, reference)?
        );
        Ok((stats, info))
    }

    /// Every FMM setting and Barnes-Hut on every workload and size (see the module
    /// documentation).
    ///
    /// # Errors
    /// Solver and device failures (an executor without the f64 passes runs P2P only).
    pub fn run_gpu<E: GpuExecutor>(exec: &E, cfg: &Config) -> Result<Vec<Record>> {
        let name = orrery_core::Executor::name(exec);
        let mut records = Vec::new();
        for n in sizes(cfg, false) {
            for w in workloads(n)? {
                let prefix = format!("{} {} ", w.name, size_label(n));
                let wanted = settings(n).iter().any(|(set, _)| any_shape_selected(&format!("{prefix}fmm {set}")))
                    || BH_THETAS.iter().any(|t| selected(&format!("{prefix}barnes-hut theta {t}")));
                if !wanted {
                    continue;
                }
                let bodies = to_f32(&w.bodies);
                let targets = evenly_spaced_targets(n, TARGETS);
                let reference = reference(exec, &bodies, &w.bodies, &targets)?;
                for (setting, s) in settings(n) {
                    let workload = format!("{} {} fmm {setting}", w.name, size_label(n));
                    if !any_shape_selected(&workload) {
                        continue;
                    }
                    let ((mut fmm, prepared), prep) = host_secs(|| GpuFmm::prepare(exec, &s, &bodies.view()?))?;
                    let d = GpuFmm::upload_bodies(exec, &prepared.bodies)?;
                    let full = fmm.evaluate(exec, &d);
                    if let Err(Error::Unsupported { .. }) = full {
                        // Near field only (wgpu), once per tree (it does not depend on p).
                        if setting.starts_with("adaptive") && !setting.ends_with(&format!("p {}", super::ORDERS[0])) {
                            continue;
                        }
                        let stats = measure(exec, cfg.warmup, cfg.repeats, || fmm.near_field(exec, &d))?;
                        let info =
                            format!("P2P only (the expansion passes are CUDA's); {} P2P pairs", fmm.plan().p2p_pairs());
                        records.push(record(format!("{name} fmm P2P"), workload, n, stats, info));
                        continue;
                    }
                    full?;
                    let host = DeviceRowHost { prepared: &prepared, tree_ms: prep.as_secs_f64() * 1e3 };
                    for shape in TranslationShape::ALL {
                        let workload = format!("{workload} {}", shape.name());
                        if !selected(&workload) {
                            continue;
                        }
                        fmm.set_shape(shape);
                        let (stats, info) = device_row(exec, cfg, &mut fmm, &d, &host, &targets, &reference)?;
                        eprintln!("  {name} {workload}: {:.3} ms", stats.median_ms);
                        records.push(record(format!("{name} fmm (device passes)"), workload, n, stats, info));
                    }
                }
                let d = DeviceBodies::upload(exec, &bodies.view()?)?;
                for theta in BH_THETAS {
                    if !selected(&format!("{} {} barnes-hut theta {theta}", w.name, size_label(n))) {
                        continue;
                    }
                    let bh = BarnesHut::new(Gravity::plummer(0.0f32), Opening::safe(theta));
                    let mut gpu = GpuBarnesHut::new(exec, bh, GpuWalk::Group)?;
                    gpu.step(exec, &d)?;
                    let stats = measure(exec, cfg.warmup, cfg.repeats, || gpu.step(exec, &d).map(|_| ()))?;
                    let (forces, _) = gpu.download(exec)?;
                    let workload = format!("{} {} barnes-hut theta {theta}", w.name, size_label(n));
                    let info = errors(&forces, &targets, &reference)?;
                    records.push(record(
                        format!("{name} barnes-hut group walk (whole step)"),
                        workload,
                        n,
                        stats,
                        info,
                    ));
                }
            }
        }
        Ok(records)
    }
}
