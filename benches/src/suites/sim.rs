//! `sim`: steps per second of an N-body run with `orrery-sim`'s [`Simulation`], and the
//! share of each phase of a step (the simulation issue's benchmark: "steps per second of
//! a 1M-particle Plummer run with Barnes-Hut on the H200, and what share of a step is
//! tree, force, integration and I/O").
//!
//! # Workload
//! The gravity suite's Plummer sphere (scale length 1, `G = M = 1`, seed 42, softening
//! 0.01), 1M bodies on a GPU and 64K on the CPU (`--bodies` for another size, `--quick`
//! for 20K), Barnes-Hut with quadrupoles, the safe criterion, leaves of at most 16 bodies
//! and, by default, theta 0.75 with the `Group` walk: at 1M bodies that is the fastest
//! whole step of `docs/performance/gravity.md` (6.7 ms on the H200, p99 acceleration error
//! 3.0e-3; `Group64` is faster only from 4M bodies, and theta 0.5 halves the error for
//! twice the time: `--theta`, `--walk`). Fixed steps of `dt = 1/128` (`--dt`), about a
//! hundredth of the core's dynamical time `sqrt(a^3 / G M) = 1`, so the tree is updated
//! incrementally from the previous step's, as in a production run.
//!
//! # What is timed
//! `--warmup` untimed steps, then `--repeats` timed ones. Every `--snapshot-every` steps
//! (default 10, 0 for none) a step is followed by what a production run does at an
//! output: the diagnostics (energies and momenta: positions, velocities and forces copied
//! to the host) and an `.npz` snapshot of the bodies, written atomically (with fsync) to
//! a temporary folder and removed at the end; that output counts to its step. Each
//! step's wall time and its phases ([`Simulation::times`]: tree = keys, sort, tree update
//! and upward pass; force = walk; integrate = kicks and drifts; io = downloads and the
//! snapshot file; diagnostics = the energy sums) are recorded per step.
//!
//! # Records
//! - `<workload> step`: the median wall time of a step, `elements` = bodies (Melem/s =
//!   body updates per second); `info` holds the steps per second (at the median step, and
//!   over all timed steps with their outputs), each phase's share of the timed steps'
//!   total wall time, the snapshots written and the energy error at the end.
//! - `<workload> <phase>`: per phase, the median of its time per step (tree, force,
//!   integrate) or per output step (io, diagnostics: the cost of one output, so that the
//!   share of another output interval can be worked out), with its share of the timed
//!   steps' wall time in `info`. Without output steps the io and diagnostics records are
//!   left out.
//!
//! On a GPU every phase ends with a device synchronisation (the backend waits before it
//! reads the clock), so phases do not overlap and the shares add up to the step.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use orrery_core::{Error, Result};
use orrery_sim::backend::host::Host;
use orrery_sim::snapshot::{self, Format};
use orrery_sim::{Backend, PhaseTimes, Physics, SimError, Simulation, SolverSpec, State, TimeSteps, TreeSettings};
use orrery_traverse::gpu::GpuWalk;
use orrery_traverse::ic;

use crate::report::Record;
use crate::stats::Stats;
use crate::suites::Config;

/// Plummer softening (the gravity suite's).
pub const EPS: f64 = crate::suites::gravity::EPS;

/// The suite's options (`orrery-bench sim --help`).
#[derive(Debug, Clone, clap::Args)]
pub struct Options {
    /// (sim) Bodies [default: 1048576 on a GPU, 65536 on the CPU, 20000 with --quick].
    #[arg(long)]
    pub bodies: Option<usize>,
    /// (sim) Barnes-Hut opening angle.
    #[arg(long, default_value_t = 0.75)]
    pub theta: f64,
    /// (sim) Barnes-Hut walk: independent, coherent, group, group64 (the CPU runs groups of
    /// 32 for group, of 64 for group64, per-target walks otherwise).
    #[arg(long, default_value = "group", value_parser = parse_walk)]
    pub walk: GpuWalk,
    /// (sim) Fixed time step.
    #[arg(long, default_value_t = 1.0 / 128.0)]
    pub dt: f64,
    /// (sim) Diagnostics and an .npz snapshot after every K-th step (0: none).
    #[arg(long, default_value_t = 10)]
    pub snapshot_every: u64,
}

fn parse_walk(s: &str) -> std::result::Result<GpuWalk, String> {
    match s.to_ascii_lowercase().as_str() {
        "independent" => Ok(GpuWalk::Independent),
        "coherent" => Ok(GpuWalk::Coherent),
        "group" => Ok(GpuWalk::Group),
        "group64" => Ok(GpuWalk::Group64),
        _ => Err(format!("unknown walk {s:?}: independent, coherent, group or group64")),
    }
}

/// A [`SimError`] as the suites' error type.
fn core(e: SimError) -> Error {
    match e {
        SimError::Core(e) => e,
        other => Error::InvalidArgument { what: "sim", reason: other.to_string() },
    }
}

/// The bodies of a run on the CPU (`cpu`) or a GPU.
fn bodies(cfg: &Config, opts: &Options, cpu: bool) -> usize {
    match (opts.bodies, cfg.quick, cpu) {
        (Some(n), _, _) => n,
        (None, true, _) => 20_000,
        (None, false, true) => 1 << 16,
        (None, false, false) => 1 << 20,
    }
}

/// The sim suite on the CPU backend (f64, rayon) as `executor`.
///
/// # Errors
/// Simulation failures; snapshot I/O.
pub fn run_cpu(cfg: &Config, opts: &Options, executor: &str) -> Result<Vec<Record>> {
    run(Host, cfg, opts, bodies(cfg, opts, true), executor)
}

/// The sim suite on the device backend (f32) of `exec`.
///
/// # Errors
/// Simulation and device failures; snapshot I/O.
#[cfg(any(feature = "cuda", feature = "wgpu"))]
pub fn run_gpu<E: orrery_core::GpuExecutor + 'static>(exec: &E, cfg: &Config, opts: &Options) -> Result<Vec<Record>> {
    let name = orrery_core::Executor::name(exec);
    run(orrery_sim::backend::device::Device::new(exec), cfg, opts, bodies(cfg, opts, false), &name)
}

/// The phases of [`PhaseTimes`], named.
fn phases(t: &PhaseTimes) -> [(&'static str, Duration); 5] {
    [("tree", t.tree), ("force", t.force), ("integrate", t.integrate), ("io", t.io), ("diagnostics", t.diagnostics)]
}

fn difference(a: &PhaseTimes, b: &PhaseTimes) -> PhaseTimes {
    PhaseTimes {
        tree: a.tree.saturating_sub(b.tree),
        force: a.force.saturating_sub(b.force),
        integrate: a.integrate.saturating_sub(b.integrate),
        io: a.io.saturating_sub(b.io),
        diagnostics: a.diagnostics.saturating_sub(b.diagnostics),
    }
}

/// A folder for the snapshots, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Self> {
        let dir = std::env::temp_dir().join(format!("orrery-bench-sim-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| core(SimError::io(&dir, e)))?;
        Ok(Self(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What the timed steps measured.
struct Measured {
    /// Wall time of each timed step (its output included).
    walls: Vec<Duration>,
    /// Whether each timed step wrote an output.
    outputs: Vec<bool>,
    /// Each phase's time in each timed step, in the order of [`phases`].
    per_phase: [Vec<Duration>; 5],
    /// The phases' totals over the timed steps.
    spent: PhaseTimes,
    /// Snapshots written and the size of the last.
    snapshots: u64,
    snapshot_bytes: u64,
    /// `dE/E0` and the step count at the end.
    final_error: f64,
    steps: u64,
    /// The solver, in words.
    solver: String,
}

/// Warm-up and timed steps of `n` bodies on `backend` (see the module documentation).
fn run<B: Backend>(backend: B, cfg: &Config, opts: &Options, n: usize, executor: &str) -> Result<Vec<Record>> {
    let settings = TreeSettings { theta: opts.theta, walk: opts.walk, ..TreeSettings::default() };
    let physics = Physics { g: 1.0, softening: EPS };
    let state = State::new(ic::plummer_scaled(n, 1.0, 42)?);
    let setup = Instant::now();
    let mut sim = Simulation::new(
        backend,
        &SolverSpec::BarnesHut(settings),
        physics,
        TimeSteps::fixed(opts.dt),
        state,
        None,
        None,
    )
    .map_err(core)?;
    sim.diagnostics().map_err(core)?;
    eprintln!("  {}: {n} bodies loaded in {:.2} s", sim.describe(), setup.elapsed().as_secs_f64());
    let scratch = Scratch::new()?;
    let path = scratch.0.join("snapshot.npz");
    let (mut snapshots, mut snapshot_bytes) = (0u64, 0u64);
    let mut step = |sim: &mut Simulation<B>, output: bool| -> Result<()> {
        sim.step().map_err(core)?;
        if output {
            sim.diagnostics().map_err(core)?;
            let start = Instant::now();
            // What `orrery simulate` writes: state, tree leaves, run parameters (the
            // state was downloaded by the diagnostics; the snapshot reuses it).
            let snap = sim.snapshot().map_err(core)?;
            snapshot::write(&path, &snap, Format::Npz).map_err(core)?;
            sim.add_io_time(start.elapsed());
            snapshots += 1;
            snapshot_bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
        }
        Ok(())
    };
    let output = |k: u64| opts.snapshot_every > 0 && k.is_multiple_of(opts.snapshot_every);
    for _ in 0..cfg.warmup {
        step(&mut sim, false)?;
    }
    let before = sim.times();
    let mut walls = Vec::with_capacity(cfg.repeats);
    let mut outputs = Vec::with_capacity(cfg.repeats);
    let mut per_phase: [Vec<Duration>; 5] = Default::default();
    for k in 1..=cfg.repeats.max(1) as u64 {
        let t0 = sim.times();
        let start = Instant::now();
        step(&mut sim, output(k))?;
        walls.push(start.elapsed());
        outputs.push(output(k));
        for (samples, (_, d)) in per_phase.iter_mut().zip(phases(&difference(&sim.times(), &t0))) {
            samples.push(d);
        }
    }
    let spent = difference(&sim.times(), &before);
    let final_error = sim.diagnostics().map_err(core)?.energy_error;
    let solver = sim.describe().split(" on ").next().unwrap_or_default().to_owned();
    let m = Measured {
        walls,
        outputs,
        per_phase,
        spent,
        snapshots,
        snapshot_bytes,
        final_error,
        steps: sim.state().step,
        solver,
    };
    let workload = format!(
        "plummer {} theta {} {:?} dt 1/{}",
        crate::data::size_label(n),
        opts.theta,
        opts.walk,
        (1.0 / opts.dt).round()
    );
    Ok(records(m, &workload, executor, n, opts))
}

/// The step record and one per phase (see the module documentation).
fn records(m: Measured, workload: &str, executor: &str, n: usize, opts: &Options) -> Vec<Record> {
    let total: Duration = m.walls.iter().sum();
    let share = |d: Duration| 100.0 * d.as_secs_f64() / total.as_secs_f64();
    let shares: Vec<String> = phases(&m.spent).iter().map(|(name, d)| format!("{name} {:.1}%", share(*d))).collect();
    let unaccounted = total.saturating_sub(m.spent.total());
    let stats = Stats::from_samples(&mut m.walls.clone());
    let timed = m.walls.len();
    let info = format!(
        "{:.2} steps/s at the median step, {:.2} over all {timed} timed steps; shares of their {:.1} ms: {}, \
         other {:.1}%; {} .npz snapshots of {:.1} MB (one per {} steps, with diagnostics); dE/E0 {:.2e} after \
         {} steps; {}",
        1e3 / stats.median_ms,
        timed as f64 / total.as_secs_f64(),
        total.as_secs_f64() * 1e3,
        shares.join(", "),
        share(unaccounted),
        m.snapshots,
        m.snapshot_bytes as f64 / 1e6,
        opts.snapshot_every,
        m.final_error,
        m.steps,
        m.solver,
    );
    eprintln!("  {workload}: {:.3} ms per step; {info}", stats.median_ms);
    let record = |workload: String, stats: Stats, info: String| Record {
        suite: "sim".into(),
        workload,
        executor: executor.into(),
        elements: n as u64,
        bytes: 0,
        stats,
        info,
    };
    let mut records = vec![record(format!("{workload} step"), stats, info)];
    for ((name, d), samples) in phases(&m.spent).into_iter().zip(m.per_phase) {
        // Output phases are timed over the output steps (the cost of one output), the
        // others over every step.
        let periodic = matches!(name, "io" | "diagnostics");
        let mut samples: Vec<Duration> =
            samples.into_iter().zip(&m.outputs).filter(|&(_, &out)| !periodic || out).map(|(d, _)| d).collect();
        if samples.is_empty() {
            continue;
        }
        let per = if periodic { "per output step" } else { "per step" };
        let info = format!("{per}; {:.1}% of the timed steps' wall time", share(d));
        records.push(record(format!("{workload} {name}"), Stats::from_samples(&mut samples), info));
    }
    records
}
