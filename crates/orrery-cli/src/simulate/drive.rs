//! The stepping loop of `orrery simulate`: one [`Simulation`] on any backend, with the
//! progress bar, the diagnostics, the snapshots and, at the end, the plots.
//!
//! The loop only downloads the bodies when a diagnostic or a snapshot is due, so on a GPU
//! the bodies stay on the device between those steps.

use std::time::{Duration, Instant};

use anyhow::Context;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use orrery_sim::diagnostics::Diagnostics;
use orrery_sim::snapshot::{self, Snapshot};
use orrery_sim::{Backend, PhaseTimes, Simulation};

use super::setup::Plan;
use super::{SimulateArgs, plot};
use crate::output::OutputDir;

/// What a run did: its diagnostics, times and the description of its solver.
#[derive(Debug, Clone)]
pub struct RunRecord {
    /// The solver and backend, in words.
    pub describe: String,
    /// Every measurement, in order (the first is the run's first state).
    pub diagnostics: Vec<Diagnostics>,
    /// Wall time per phase over the stepping loop.
    pub times: PhaseTimes,
    /// Wall time of the run from loading the bodies to the last snapshot (the first force
    /// evaluation, snapshots and diagnostics included; the plots not).
    pub wall: Duration,
    /// Force evaluations (one per tick of the block scheme, plus the first).
    pub force_evaluations: u64,
}

/// Runs `plan` on `backend`, writing snapshots, `energy.csv` and the plots into `out`.
///
/// # Errors
/// Solver and device failures (bodies that became non-finite among them), files that
/// cannot be written.
pub fn drive<B: Backend>(
    backend: B,
    plan: &Plan,
    out: &mut OutputDir,
    args: &SimulateArgs,
) -> anyhow::Result<RunRecord> {
    let started = Instant::now();
    let mut sim = Simulation::resume(backend, plan.start.clone()).context("starting the run")?;
    let bar = progress_bar(plan.length(), args.quiet);
    bar.set_message(format!("{} bodies, {}", plan.start.state.len(), sim.describe()));
    let mut diagnostics = vec![sim.diagnostics().context("the first diagnostics")?];
    let mut last_snapshot = write_snapshot(&mut sim, plan, out)?;
    let first = plan.start.state.step;
    while sim.state().step < plan.last_step {
        sim.step().with_context(|| format!("step {}", sim.state().step + 1))?;
        let step = sim.state().step;
        let last = step == plan.last_step;
        if last || (step - first).is_multiple_of(plan.diagnostics_every) {
            let d = sim.diagnostics().with_context(|| format!("diagnostics at step {step}"))?;
            bar.set_message(format!("dE/E0 {:+.2e}  Q {:.3}", d.energy_error, d.virial_ratio));
            diagnostics.push(d);
        }
        if last || (plan.snapshot_every > 0 && step.is_multiple_of(plan.snapshot_every)) {
            last_snapshot = write_snapshot(&mut sim, plan, out)?;
        }
        bar.inc(1);
    }
    let wall = started.elapsed();
    bar.finish_and_clear();
    super::summary::write_csv(out, &diagnostics)?;
    plot::energy_error(out, &diagnostics)?;
    plot::density(out, &last_snapshot)?;
    Ok(RunRecord {
        describe: sim.describe(),
        diagnostics,
        times: sim.times(),
        wall,
        force_evaluations: sim.force_evaluations(),
    })
}

/// Writes the simulation's current state as `snapshot_<step>.<ext>` (with the CLI's
/// attributes of the plan's start) and returns it.
fn write_snapshot<B: Backend>(sim: &mut Simulation<B>, plan: &Plan, out: &mut OutputDir) -> anyhow::Result<Snapshot> {
    let start = Instant::now();
    let mut snap = sim.snapshot().context("the snapshot")?;
    for (key, value) in &plan.start.attributes {
        snap.attributes.entry(key.clone()).or_insert_with(|| value.clone());
    }
    let name = format!("snapshot_{:06}.{}", snap.state.step, plan.format.extension());
    let path = out.file(&name)?;
    snapshot::write(&path, &snap, plan.format).with_context(|| format!("{}", path.display()))?;
    out.record(name);
    sim.add_io_time(start.elapsed());
    Ok(snap)
}

/// The progress bar: steps, steps per second, the last energy error (hidden off a
/// terminal or with `--quiet`).
fn progress_bar(len: u64, quiet: bool) -> ProgressBar {
    let target = if quiet { ProgressDrawTarget::hidden() } else { ProgressDrawTarget::stderr() };
    let bar = ProgressBar::with_draw_target(Some(len), target);
    let style = ProgressStyle::with_template("{elapsed_precise} {wide_bar} {pos}/{len} steps {per_sec:>12} {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar
}
