//! `gravity`: Barnes-Hut force evaluations (orrery-traverse) and direct summation.
//!
//! Workloads (the gravity issue's): a Plummer sphere of scale length 1 (the peer's), 1M
//! and 4M bodies, and a uniform cube `[-3, 3]^3` of 4M; Plummer softening 0.01; a Hilbert
//! octree with leaves of at most 16 bodies. Per workload and setting (theta 0.3, 0.5,
//! 0.6, 0.75, 1.0; monopole and quadrupole; safe criterion) every walk is timed and its
//! accuracy measured: the relative acceleration error against an f64 direct sum on 4096
//! evenly spaced bodies (median, 90th, 99th percentile and maximum), the mean and maximum
//! particle-particle and particle-cell counts, interactions per second and flops (20 per
//! particle-particle and monopole interaction, 45 per quadrupole one:
//! `orrery_traverse::walk::FLOPS_*`). Records carry all of it in `info`, so modes are
//! compared at equal accuracy.
//!
//! GPU (CUDA, wgpu): the walks read node data the CPU prepared (tree, view, multipoles),
//! uploaded once per setting: the walk alone is timed here. CPU: the whole force
//! evaluation (tree, view, multipoles, walk) of the 1M Plummer sphere, per walk.
//!
//! `--peer-files DIR` writes each workload in the peer drivers' format
//! (`<set>-<N>.bin`), for `benches/device/gravity.sh` to run `ryoanji_driver` on the same
//! bodies.

use std::path::Path;
use std::time::Instant;

use orrery_core::{ParticleSet, Result};
use orrery_traverse::direct::{Targets, direct_sum_f64, evenly_spaced_targets};
use orrery_traverse::ic;
use orrery_traverse::solver::{BarnesHut, CpuWalk, Solution};
use orrery_traverse::walk::{FLOPS_M2P_MONOPOLE, FLOPS_M2P_QUADRUPOLE, FLOPS_P2P};
use orrery_traverse::{Expansion, Forces, Gravity, Interactions, Opening};

use crate::report::Record;
use crate::stats::Stats;
use crate::suites::Config;

/// Plummer softening of every workload.
pub const EPS: f64 = 0.01;
/// Bodies whose errors are measured.
const ERROR_TARGETS: usize = 4096;
/// Opening angles: the four and Ryoanji's 0.6.
#[cfg(any(feature = "cuda", feature = "wgpu"))]
const THETAS: [f64; 5] = [0.3, 0.5, 0.6, 0.75, 1.0];

/// One workload.
struct Workload {
    name: &'static str,
    n: usize,
    bodies: ParticleSet<f64>,
}

fn workloads(cfg: &Config, cpu: bool) -> Result<Vec<Workload>> {
    let sizes: &[(&str, usize)] = if cfg.quick {
        &[("plummer", 20_000)]
    } else if cpu {
        &[("plummer", 1_000_000)]
    } else {
        &[("plummer", 1_000_000), ("plummer", 4_000_000), ("uniform", 4_000_000)]
    };
    sizes
        .iter()
        .map(|&(name, n)| {
            let ps = match name {
                "plummer" => ic::plummer_scaled(n, 1.0, 42)?,
                _ => ic::uniform_cube(n, 3.0, 42)?,
            };
            Ok(Workload { name, n, bodies: ps.bodies::<f64>() })
        })
        .collect()
}

fn to_f32(set: &ParticleSet<f64>) -> ParticleSet<f32> {
    let c = |v: &[f64]| v.iter().map(|&a| a as f32).collect();
    ParticleSet { x: c(&set.x), y: c(&set.y), z: c(&set.z), mass: c(&set.mass) }
}

/// "1M", "4M".
fn millions(n: usize) -> String {
    if n >= 1_000_000 { format!("{}M", n / 1_000_000) } else { format!("{}K", n / 1000) }
}

/// The f64 reference at the error targets.
fn reference(w: &Workload) -> Result<(Vec<u32>, Forces<f64>)> {
    let targets = evenly_spaced_targets(w.n, ERROR_TARGETS);
    let forces = direct_sum_f64(&w.bodies.view()?, Targets::Indices(&targets), &Gravity::plummer(EPS))?;
    Ok((targets, forces))
}

/// Error percentiles and interaction statistics of an input-order result.
fn summary(
    forces: &Forces<f32>,
    counts: &Interactions,
    targets: &[u32],
    reference: &Forces<f64>,
    ms: f64,
    expansion: Expansion,
) -> Result<String> {
    // The reference's targets picked out of the input-order result, then the harness's
    // nearest-rank percentiles.
    let e = orrery_traverse::acceleration_errors(reference, &orrery_traverse::gather_targets(forces, targets)?)?;
    let n = counts.particle_particle.len() as f64;
    let (pp, pc) = (counts.total_particle_particle(), counts.total_particle_cell());
    let m2p = if expansion == Expansion::Quadrupole { FLOPS_M2P_QUADRUPOLE } else { FLOPS_M2P_MONOPOLE };
    let flops = (pp * FLOPS_P2P + pc * m2p) as f64;
    let secs = ms * 1e-3;
    Ok(format!(
        "err p50 {:.2e} p90 {:.2e} p99 {:.2e} max {:.2e}; pp mean {:.0} max {}; pc mean {:.0} max {}; {:.3e} interactions/s; {:.1} TFlop/s",
        e.median,
        e.p90,
        e.p99,
        e.max,
        pp as f64 / n,
        counts.particle_particle.iter().max().unwrap_or(&0),
        pc as f64 / n,
        counts.particle_cell.iter().max().unwrap_or(&0),
        (pp + pc) as f64 / secs,
        flops / secs / 1e12
    ))
}

fn label(w: &Workload, theta: f64, expansion: Expansion) -> String {
    let e = if expansion == Expansion::Quadrupole { "quadrupole" } else { "monopole" };
    format!("{} {} theta {theta} {e}", w.name, millions(w.n))
}

fn record(executor: String, workload: String, n: usize, stats: Stats, info: String) -> Record {
    Record { suite: "gravity".into(), workload, executor, elements: n as u64, bytes: 0, stats, info }
}

/// Node visits per target of the per-target walks (independent and coherent: the same
/// visits) and of the group walks (32 and 64 targets), on every workload at theta 0.5,
/// 0.6 and 0.75: mean and maximum over the error targets (per-target walks) and over the
/// groups holding them. Visits are a function of the tree and the opening test, which
/// every executor evaluates identically (the walk tests check the counts), so the CPU
/// computes them for all.
///
/// # Errors
/// Solver failures.
pub fn run_visits(cfg: &Config, executor: &str) -> Result<Vec<Record>> {
    use orrery_traverse::walk::{group_node_visits, node_visits};
    let mut records = Vec::new();
    for w in workloads(cfg, false)? {
        let bodies = to_f32(&w.bodies);
        let start = Instant::now();
        let p = BarnesHut::new(Gravity::plummer(EPS as f32), Opening::safe(0.5f32)).prepare(&bodies.view()?)?;
        let prepared = start.elapsed();
        let targets = evenly_spaced_targets(w.n, ERROR_TARGETS);
        // Tree positions of the error targets.
        let mut position = vec![0usize; w.n];
        for (k, &i) in p.bodies.order.iter().enumerate() {
            position[i as usize] = k;
        }
        for theta in [0.5f64, 0.6, 0.75] {
            let nodes = orrery_traverse::WalkNodes::new(&p.view, &p.multipoles, &Opening::safe(theta as f32))?;
            let stats = |v: &[u32]| {
                (v.iter().map(|&x| f64::from(x)).sum::<f64>() / v.len() as f64, *v.iter().max().unwrap_or(&0))
            };
            let per_target: Vec<u32> =
                targets.iter().map(|&i| node_visits(&nodes, &p.bodies, position[i as usize])).collect();
            let group = |size: usize| -> Vec<u32> {
                targets
                    .iter()
                    .map(|&i| {
                        let g = position[i as usize] / size * size;
                        group_node_visits(&nodes, &p.bodies, g..(g + size).min(w.n))
                    })
                    .collect()
            };
            let (t, g32, g64) = (stats(&per_target), stats(&group(32)), stats(&group(64)));
            let info = format!(
                "node visits mean/max: per target {:.0}/{}, groups of 32 {:.0}/{}, groups of 64 {:.0}/{}; {} nodes",
                t.0,
                t.1,
                g32.0,
                g32.1,
                g64.0,
                g64.1,
                nodes.len()
            );
            let stats = Stats::from_samples(&mut [prepared]);
            records.push(record(
                format!("{executor} node visits"),
                label(&w, theta, Expansion::Quadrupole),
                w.n,
                stats,
                info,
            ));
        }
    }
    Ok(records)
}

/// Writes each workload in the peer drivers' format to `dir`.
///
/// # Errors
/// I/O failures as [`orrery_core::Error::InvalidArgument`].
pub fn write_peer_files(cfg: &Config, dir: &Path) -> Result<()> {
    let io = |e: std::io::Error| orrery_core::Error::InvalidArgument { what: "peer files", reason: e.to_string() };
    std::fs::create_dir_all(dir).map_err(io)?;
    for w in workloads(cfg, false)? {
        let b = &w.bodies;
        let points = [b.x.clone(), b.y.clone(), b.z.clone()];
        let path = dir.join(format!("{}-{}.bin", w.name, millions(w.n)));
        crate::data::write_peer_file(&path, &points, Some(&b.mass)).map_err(io)?;
    }
    Ok(())
}

/// The CPU force evaluation of the 1M Plummer sphere (tree, view, multipoles, walk), per
/// walk, at theta 0.5 and 0.75 with quadrupoles.
///
/// # Errors
/// Solver failures.
pub fn run_cpu(cfg: &Config, executor: &str) -> Result<Vec<Record>> {
    let mut records = Vec::new();
    for w in workloads(cfg, true)? {
        let (targets, reference) = reference(&w)?;
        let bodies = to_f32(&w.bodies);
        let view = bodies.view()?;
        for theta in [0.5, 0.75] {
            for walk in [CpuWalk::Targets, CpuWalk::Groups(32)] {
                let mut bh = BarnesHut::new(Gravity::plummer(EPS as f32), Opening::safe(theta as f32));
                bh.walk = walk;
                let mut samples = Vec::new();
                let mut last: Option<Solution<f32>> = None;
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
                let info =
                    summary(&s.forces, &s.interactions, &targets, &reference, stats.median_ms, Expansion::Quadrupole)?;
                let name = match walk {
                    CpuWalk::Targets => "targets",
                    CpuWalk::Groups(_) => "groups of 32",
                };
                records.push(record(
                    format!("{executor} {name} (whole evaluation)"),
                    label(&w, theta, Expansion::Quadrupole),
                    w.n,
                    stats,
                    info,
                ));
            }
        }
    }
    Ok(records)
}

#[cfg(any(feature = "cuda", feature = "wgpu"))]
pub use gpu::run_gpu;

#[cfg(any(feature = "cuda", feature = "wgpu"))]
mod gpu {
    use orrery_core::{GpuExecutor, Result};
    use orrery_traverse::gpu::walk::{GpuWalk, ScatteredOutput, WalkInput, WalkOutput, run_walk, scatter};
    use orrery_traverse::gpu::{DeviceBodies, GpuBarnesHut};
    use orrery_traverse::solver::{BarnesHut, Prepared};
    use orrery_traverse::{Expansion, Gravity, Opening, WalkNodes};

    use super::{EPS, THETAS, label, record, reference, summary, to_f32, workloads};
    use crate::report::Record;
    use crate::stats::measure;
    use crate::suites::Config;

    /// Every walk on the device over CPU-prepared node data (see the module
    /// documentation).
    ///
    /// # Errors
    /// Solver and device failures.
    pub fn run_gpu<E: GpuExecutor>(exec: &E, cfg: &Config) -> Result<Vec<Record>> {
        let mut records = Vec::new();
        for w in workloads(cfg, false)? {
            let (targets, reference) = reference(&w)?;
            let bodies = to_f32(&w.bodies);
            let gravity = Gravity::plummer(EPS as f32);
            let bh = BarnesHut::new(gravity, Opening::safe(0.5f32));
            let p: Prepared<f32> = bh.prepare(&bodies.view()?)?;
            let b = &p.bodies;
            let packed: Vec<f32> = (0..b.len()).flat_map(|i| [b.x[i], b.y[i], b.z[i], b.m[i]]).collect();
            let flat = |v: &[[f32; 4]]| v.iter().flatten().copied().collect::<Vec<f32>>();
            let d_bodies = exec.upload(&packed)?;
            let d_order = exec.upload(&b.order)?;
            let mut out = WalkOutput::new(exec, w.n)?;
            let mut scattered = ScatteredOutput::new(exec, w.n)?;
            let thetas: &[f64] = if cfg.quick { &[0.5, 1.0] } else { &THETAS };
            for &theta in thetas {
                let nodes = WalkNodes::new(&p.view, &p.multipoles, &Opening::safe(theta as f32))?;
                let centres = exec.upload(&flat(&nodes.centres))?;
                let masses = exec.upload(&flat(&nodes.masses))?;
                let quads = exec.upload(&flat(&nodes.quads))?;
                let links = exec.upload(&nodes.links.iter().flatten().copied().collect::<Vec<u32>>())?;
                let input = WalkInput {
                    bodies: (&d_bodies).into(),
                    centres: (&centres).into(),
                    masses: (&masses).into(),
                    quads: (&quads).into(),
                    links: (&links).into(),
                };
                for expansion in [Expansion::Monopole, Expansion::Quadrupole] {
                    for walk in GpuWalk::ALL {
                        let stats = measure(exec, cfg.warmup, cfg.repeats, || {
                            run_walk(exec, walk, &input, w.n, &gravity, expansion, &mut out)
                        })?;
                        scatter(exec, &out, &d_order, &mut scattered)?;
                        let (forces, counts) = scattered.download(exec, w.n)?;
                        let info = summary(&forces, &counts, &targets, &reference, stats.median_ms, expansion)?;
                        let name = format!("{walk:?} walk, {}", orrery_core::Executor::name(exec));
                        eprintln!("  {name} {}: {:.3} ms", label(&w, theta, expansion), stats.median_ms);
                        records.push(record(name, label(&w, theta, expansion), w.n, stats, info));
                    }
                }
            }
            records.extend(whole_step(exec, cfg, &w, &bodies, &targets, &reference)?);
            if w.n <= DIRECT_MAX_TARGETS {
                records.push(direct(exec, cfg, &w, &bodies)?);
            }
        }
        Ok(records)
    }

    /// The direct sum is timed on workloads of at most this many bodies, every body a
    /// target: its blocks hold 512 targets, and fewer than about 1M targets leave SMs idle
    /// (65,536 targets are 128 blocks for 132 SMs), which would measure the launch shape,
    /// not the kernel.
    const DIRECT_MAX_TARGETS: usize = 1_000_000;

    /// Tiled f32 direct summation on the device, every body a target and a source;
    /// interactions per second.
    fn direct<E: GpuExecutor>(
        exec: &E,
        cfg: &Config,
        w: &super::Workload,
        bodies: &orrery_core::ParticleSet<f32>,
    ) -> Result<Record> {
        use orrery_traverse::direct::evenly_spaced_targets;
        use orrery_traverse::gpu::{DeviceForces, direct_sum_gpu};
        let d = DeviceBodies::upload(exec, &bodies.view()?)?;
        let targets = evenly_spaced_targets(w.n, w.n);
        let t = exec.upload(&targets)?;
        let mut out = DeviceForces::alloc(exec, targets.len())?;
        let gravity = Gravity::plummer(EPS as f32);
        let stats = measure(exec, 1, cfg.repeats.min(3), || direct_sum_gpu(exec, &d, Some(&t), &gravity, &mut out))?;
        let pairs = targets.len() as f64 * w.n as f64;
        let rate = pairs / (stats.median_ms * 1e-3);
        let info = format!(
            "{} targets x {} sources; {rate:.3e} interactions/s; {:.1} TFlop/s at 20 flops per interaction",
            targets.len(),
            w.n,
            rate * 20.0 / 1e12
        );
        let name = format!("direct sum f32, {}", orrery_core::Executor::name(exec));
        Ok(record(name, format!("{} {} direct", w.name, super::millions(w.n)), w.n, stats, info))
    }

    /// The whole step on the device ([`GpuBarnesHut`]): the tree phase (box, keys, sort,
    /// tree update, view, bodies in tree order, upward pass) and the walk, each timed,
    /// with quadrupoles at theta 0.5, 0.6 and 0.75. The tree phase is an update of the
    /// previous step's tree over the same bodies (what a time step costs when bodies
    /// move little).
    fn whole_step<E: GpuExecutor>(
        exec: &E,
        cfg: &Config,
        w: &super::Workload,
        bodies: &orrery_core::ParticleSet<f32>,
        targets: &[u32],
        reference: &orrery_traverse::Forces<f64>,
    ) -> Result<Vec<Record>> {
        let mut records = Vec::new();
        let d = DeviceBodies::upload(exec, &bodies.view()?)?;
        for theta in [0.5, 0.6, 0.75] {
            let bh = BarnesHut::new(Gravity::plummer(EPS as f32), Opening::safe(theta as f32));
            let mut gpu = GpuBarnesHut::new(exec, bh, GpuWalk::Group)?;
            gpu.update_tree(exec, &d)?;
            let tree = measure(exec, cfg.warmup, cfg.repeats, || gpu.update_tree(exec, &d).map(|_| ()))?;
            eprintln!("  tree phase {}: {:.3} ms", label(w, theta, Expansion::Quadrupole), tree.median_ms);
            let (status, _) = gpu.last_update().expect("updated");
            let info = format!("{} nodes, {} leaves, depth {}", status.nodes, status.leaves, status.depth);
            let name =
                format!("tree phase (box, keys, sort, update, view, upward), {}", orrery_core::Executor::name(exec));
            records.push(record(name, label(w, theta, Expansion::Quadrupole), w.n, tree, info));
            for walk in GpuWalk::ALL {
                gpu.set_walk(walk);
                let eval = measure(exec, cfg.warmup, cfg.repeats, || gpu.evaluate(exec))?;
                let step = measure(exec, cfg.warmup, cfg.repeats, || gpu.step(exec, &d).map(|_| ()))?;
                let (forces, counts) = gpu.download(exec)?;
                let info = format!(
                    "walk + scatter {:.3} ms; {}",
                    eval.median_ms,
                    summary(&forces, &counts, targets, reference, eval.median_ms, Expansion::Quadrupole)?
                );
                let name = format!("whole step, {walk:?} walk, {}", orrery_core::Executor::name(exec));
                eprintln!("  {name} {}: {:.3} ms", label(w, theta, Expansion::Quadrupole), step.median_ms);
                records.push(record(name, label(w, theta, Expansion::Quadrupole), w.n, step, info));
            }
        }
        Ok(records)
    }
}
