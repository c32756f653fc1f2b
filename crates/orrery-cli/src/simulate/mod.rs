//! `orrery simulate`: an N-body run from seeded initial conditions (or a snapshot) on the
//! chosen executor, with a progress bar, snapshots, diagnostics, a summary table and two
//! plots.
//!
//! What a run writes into its output folder:
//! - `snapshot_<step>.npz` (or `.hdf5`): the first state, every `--snapshot-every` steps,
//!   and the last; each carries the run's parameters and its tree, so `--restart` from it
//!   continues exactly where the run was (bit for bit on the CPU executor);
//! - `energy.csv`: the diagnostics every `--diagnostics-every` steps;
//! - `energy_error.png` (relative energy error against time) and `density.png` (the last
//!   snapshot's projected density, log scale);
//! - `summary.json`: what the summary table printed at the end says.
//!
//! The modules: [`setup`] (options into a plan: initial state, solver, steps),
//! [`drive`] (the stepping loop, progress, snapshots), [`summary`] (table, JSON, CSV),
//! [`plot`] (the PNGs).

pub mod drive;
pub mod plot;
pub mod setup;
pub mod summary;

use std::path::PathBuf;

use anyhow::Context;
use clap::ValueEnum;
use orrery_sim::backend::device::Device;
use orrery_sim::backend::host::Host;

use crate::executor::{Chosen, ExecutorArgs};
use crate::output;
pub use setup::{IcArg, Plan, SolverArg};

/// Bodies of the default run (sized so the default run takes about a minute on a
/// 2-core CPU).
pub const DEFAULT_N: usize = 16384;
/// Steps of the default run.
pub const DEFAULT_STEPS: u64 = 400;
/// The default step, in Hénon units (a Plummer sphere's crossing time is about 2.8).
pub const DEFAULT_DT: f64 = 1.0 / 128.0;
/// The default Plummer softening length.
pub const DEFAULT_SOFTENING: f64 = 0.01;
/// The default opening angle.
pub const DEFAULT_THETA: f64 = 0.6;

/// A snapshot file format.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// NumPy .npz (needs nothing but Rust).
    #[default]
    Npz,
    /// HDF5 in the GADGET-4 layout (needs a build with `--features hdf5`).
    Hdf5,
}

impl FormatArg {
    /// The library's format.
    pub fn format(self) -> orrery_sim::snapshot::Format {
        match self {
            Self::Npz => orrery_sim::snapshot::Format::Npz,
            Self::Hdf5 => orrery_sim::snapshot::Format::Hdf5,
        }
    }
}

/// The options of `orrery simulate`.
#[derive(Debug, Clone, clap::Args)]
pub struct SimulateArgs {
    /// Initial conditions (seeded; Hénon units, G = M = 1).
    #[arg(long, value_enum, default_value_t = IcArg::Plummer, conflicts_with = "restart")]
    pub ic: IcArg,
    /// Number of bodies.
    #[arg(long, short = 'n', value_name = "N", default_value_t = DEFAULT_N, conflicts_with = "restart")]
    pub n: usize,
    /// Seed of the initial conditions.
    #[arg(long, value_name = "S", default_value_t = 42, conflicts_with = "restart")]
    pub seed: u64,
    /// Run until step N (a restart continues its snapshot's count up to N).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_STEPS)]
    pub steps: u64,
    /// The step (the largest one with --levels).
    #[arg(long, value_name = "DT", default_value_t = DEFAULT_DT, conflicts_with = "restart")]
    pub dt: f64,
    /// Block time steps: bodies take dt / 2^k for k up to LEVELS, chosen from their
    /// accelerations (0: every body takes dt).
    #[arg(long, value_name = "LEVELS", default_value_t = 0, conflicts_with = "restart")]
    pub levels: u32,
    /// The accuracy parameter of the block-step criterion.
    #[arg(long, value_name = "ETA", default_value_t = orrery_sim::steps::DEFAULT_ETA, conflicts_with = "restart")]
    pub eta: f64,
    /// Plummer softening length.
    #[arg(long, value_name = "EPS", default_value_t = DEFAULT_SOFTENING, conflicts_with = "restart")]
    pub softening: f64,
    /// Force solver.
    #[arg(long, value_enum, default_value_t = SolverArg::BarnesHut, conflicts_with = "restart")]
    pub solver: SolverArg,
    /// Barnes-Hut opening angle.
    #[arg(long, value_name = "THETA", default_value_t = DEFAULT_THETA, conflicts_with = "restart")]
    pub theta: f64,
    /// Continue the run saved in a snapshot written by `orrery simulate` (its bodies, tree,
    /// solver, step and reference energy); the output folder is new or needs --force.
    #[arg(long, value_name = "SNAPSHOT")]
    pub restart: Option<PathBuf>,
    /// The executor (`--executor`, `--threads`).
    #[command(flatten)]
    pub executor: ExecutorArgs,
    /// Folder for snapshots, diagnostics, plots and the summary.
    #[arg(long, value_name = "DIR", default_value = "orrery-run")]
    pub output: PathBuf,
    /// Write into the output folder even if it exists (this run's files are replaced,
    /// others left alone).
    #[arg(long)]
    pub force: bool,
    /// Write a snapshot every K steps (0: only the first and the last).
    #[arg(long, value_name = "K", default_value_t = 100)]
    pub snapshot_every: u64,
    /// Snapshot format.
    #[arg(long, value_enum, default_value_t = FormatArg::Npz)]
    pub format: FormatArg,
    /// Measure energies and momenta every K steps (default: about 200 times per run).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u64).range(1..))]
    pub diagnostics_every: Option<u64>,
    /// Print the summary as JSON instead of the table.
    #[arg(long)]
    pub json: bool,
    /// No progress bar (it is drawn only on a terminal anyway).
    #[arg(long)]
    pub quiet: bool,
}

/// Runs `orrery simulate`.
///
/// # Errors
/// Bad options, an output folder that exists without `--force`, a bad restart file, an
/// executor that cannot be opened, solver and device failures, files that cannot be
/// written.
pub fn run(args: &SimulateArgs) -> anyhow::Result<()> {
    let mut out = output::prepare_dir(&args.output, args.force)?;
    let plan = Plan::from_args(args)?;
    let selection = args.executor.open()?;
    eprintln!("{}", selection.report);
    let record = match &selection.chosen {
        Chosen::Cpu(exec) => exec.install(|| drive::drive(Host, &plan, &mut out, args))?,
        Chosen::Cuda(exec) => drive::drive(Device::new(exec), &plan, &mut out, args)?,
        Chosen::Wgpu(exec) => drive::drive(Device::new(exec), &plan, &mut out, args)?,
    };
    let summary = summary::Summary::new(&plan, &record, &selection.chosen.name(), out.written());
    let text = if args.json { serde_json::to_string_pretty(&summary)? } else { summary.table() };
    out.write_text("summary.json", &serde_json::to_string_pretty(&summary)?).context("the summary")?;
    println!("{text}");
    if !args.json {
        println!("wrote {} files into {}: {}", out.written().len(), out.path().display(), out.written().join(", "));
    }
    Ok(())
}
