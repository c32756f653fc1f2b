//! The end of a run in words and numbers: the summary table (or `--json`),
//! `summary.json`, and the diagnostics as `energy.csv`.

use std::fmt::Write as _;

use orrery_sim::SolverSpec;
use orrery_sim::diagnostics::Diagnostics;
use serde::Serialize;

use super::drive::RunRecord;
use super::setup::{Origin, Plan};
use crate::output::OutputDir;

/// One phase's wall time and share of the step loop's phases.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseShare {
    /// `tree`, `force`, `integrate`, `io` or `diagnostics`.
    pub phase: &'static str,
    /// Seconds.
    pub seconds: f64,
    /// Share of the phases' total, in [0, 1].
    pub share: f64,
}

/// What `orrery simulate` reports at the end (the table, and `summary.json`).
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// `plummer seed 42`, or `restart from <file>`.
    pub start: String,
    /// Bodies.
    pub bodies: usize,
    /// The solver with its settings.
    pub solver: String,
    /// The executor as opened.
    pub executor: String,
    /// The solver on its backend, in words.
    pub backend: String,
    /// The step, the levels of the block scheme (0: fixed), the softening.
    pub dt: f64,
    /// Levels of the block scheme (0: fixed steps).
    pub levels: u32,
    /// Plummer softening length.
    pub softening: f64,
    /// The first and last step of this run.
    pub steps: [u64; 2],
    /// The simulated time at the first and last step.
    pub time: [f64; 2],
    /// Force evaluations.
    pub force_evaluations: u64,
    /// Wall seconds of the run (the first force evaluation, snapshots and diagnostics included).
    pub wall_seconds: f64,
    /// Steps per wall second.
    pub steps_per_second: f64,
    /// The last relative energy error against the run's reference energy.
    pub energy_error: f64,
    /// The largest |relative energy error| measured.
    pub max_energy_error: f64,
    /// The last virial ratio 2T/|W|.
    pub virial_ratio: f64,
    /// |P| at the end minus at the start.
    pub momentum_drift: f64,
    /// |L| at the end minus at the start, relative to |L| at the start (absolute when it was 0).
    pub angular_momentum_drift: f64,
    /// Wall time per phase.
    pub phases: Vec<PhaseShare>,
    /// Files written before the summary (in order).
    pub files: Vec<String>,
}

fn norm(v: [f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

impl Summary {
    /// The summary of a finished run.
    pub fn new(plan: &Plan, record: &RunRecord, executor: &str, files: &[String]) -> Self {
        let first = record.diagnostics.first().copied();
        let last = record.diagnostics.last().copied();
        let field = |f: fn(&Diagnostics) -> f64, d: Option<Diagnostics>| d.as_ref().map_or(f64::NAN, f);
        let p = plan.parameters;
        let solver = match p.spec {
            SolverSpec::Direct => "direct summation".to_owned(),
            SolverSpec::BarnesHut(t) => {
                format!("Barnes-Hut theta {} ({:?} criterion, {:?}, bucket {})", t.theta, t.mac, t.expansion, t.bucket)
            }
        };
        let start = match &plan.origin {
            Origin::Fresh { ic, seed } => format!("{} seed {seed}", ic.name()),
            Origin::Restart { path } => format!("restart from {}", path.display()),
        };
        let t = record.times;
        let phases = [
            ("tree", t.tree),
            ("force", t.force),
            ("integrate", t.integrate),
            ("io", t.io),
            ("diagnostics", t.diagnostics),
        ];
        let total = t.total().as_secs_f64();
        let phases = phases
            .into_iter()
            .map(|(phase, d)| PhaseShare {
                phase,
                seconds: d.as_secs_f64(),
                share: if total > 0.0 { d.as_secs_f64() / total } else { 0.0 },
            })
            .collect();
        let l0 = first.map_or(0.0, |d| norm(d.angular_momentum));
        let l1 = last.map_or(0.0, |d| norm(d.angular_momentum));
        let wall = record.wall.as_secs_f64();
        Self {
            start,
            bodies: plan.start.state.len(),
            solver,
            executor: executor.to_owned(),
            backend: record.describe.clone(),
            dt: p.steps.dt,
            levels: p.steps.levels,
            softening: p.physics.softening,
            steps: [plan.start.state.step, plan.last_step],
            time: [field(|d| d.time, first), field(|d| d.time, last)],
            force_evaluations: record.force_evaluations,
            wall_seconds: wall,
            steps_per_second: if wall > 0.0 { plan.length() as f64 / wall } else { 0.0 },
            energy_error: field(|d| d.energy_error, last),
            max_energy_error: record.diagnostics.iter().map(|d| d.energy_error.abs()).fold(0.0, f64::max),
            virial_ratio: field(|d| d.virial_ratio, last),
            momentum_drift: last.map_or(0.0, |d| norm(d.momentum)) - first.map_or(0.0, |d| norm(d.momentum)),
            angular_momentum_drift: if l0 > 0.0 { (l1 - l0) / l0 } else { l1 - l0 },
            phases,
            files: files.to_vec(),
        }
    }

    /// The summary table.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let mut row = |name: &str, value: String| {
            let _ = writeln!(s, "{name:<22} {value}");
        };
        row("start", self.start.clone());
        row("bodies", self.bodies.to_string());
        row("solver", self.solver.clone());
        row("executor", self.executor.clone());
        row("backend", self.backend.clone());
        let steps = if self.levels == 0 {
            format!("dt {} (fixed), softening {}", self.dt, self.softening)
        } else {
            format!("dt {} / 2^0..{} (block steps), softening {}", self.dt, self.levels, self.softening)
        };
        row("time steps", steps);
        row("steps", format!("{} -> {} (t {:.4} -> {:.4})", self.steps[0], self.steps[1], self.time[0], self.time[1]));
        row("force evaluations", self.force_evaluations.to_string());
        row("wall", format!("{:.2} s ({:.2} steps/s)", self.wall_seconds, self.steps_per_second));
        row("energy error", format!("{:+.3e} (max |dE/E0| {:.3e})", self.energy_error, self.max_energy_error));
        row("virial ratio 2T/|W|", format!("{:.4}", self.virial_ratio));
        row(
            "momentum drift",
            format!("|P| {:+.3e}, |L| {:+.3e} (relative)", self.momentum_drift, self.angular_momentum_drift),
        );
        let _ = writeln!(s, "\n{:<22} {:>10} {:>7}", "phase", "seconds", "share");
        for p in &self.phases {
            let _ = writeln!(s, "{:<22} {:>10.3} {:>6.1}%", p.phase, p.seconds, 100.0 * p.share);
        }
        s
    }
}

/// Writes the diagnostics as `energy.csv` (one row per measurement).
///
/// # Errors
/// The file cannot be written.
pub fn write_csv(out: &mut OutputDir, diagnostics: &[Diagnostics]) -> anyhow::Result<()> {
    let mut csv = String::from("step,time,kinetic,potential,total,energy_error,virial_ratio,px,py,pz,lx,ly,lz\n");
    for d in diagnostics {
        let [px, py, pz] = d.momentum;
        let [lx, ly, lz] = d.angular_momentum;
        let _ = writeln!(
            csv,
            "{},{},{},{},{},{},{},{px},{py},{pz},{lx},{ly},{lz}",
            d.step, d.time, d.kinetic, d.potential, d.total, d.energy_error, d.virial_ratio
        );
    }
    out.write_text("energy.csv", &csv)
}
