//! The options of `orrery simulate` made into a [`Plan`]: the initial state, the solver,
//! the physics and the time steps, from seeded initial conditions or from a snapshot.
//!
//! Every option is checked here, before an executor opens or a file is written, so a bad
//! value is one line naming the option.

use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::ValueEnum;
use orrery_sim::snapshot::{self, Snapshot};
use orrery_sim::{Physics, RunParameters, SimError, SolverSpec, State, TimeSteps, TreeSettings, ic};

use super::SimulateArgs;

/// The initial conditions `--ic` asks for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum IcArg {
    /// A Plummer sphere in Hénon units (scale length 3 pi / 16, E = -1/4).
    #[default]
    Plummer,
    /// A Hernquist sphere of scale length 1.
    Hernquist,
    /// Bodies at rest, uniform in the cube [-1, 1)^3.
    Uniform,
    /// Bodies at rest, uniform in the unit ball (a cold collapse).
    ColdSphere,
    /// A thin exponential disk of scale length 1 on circular orbits.
    Disk,
    /// Two Plummer spheres 10 apart on a collision orbit with impact parameter 1.
    Collision,
    /// A uniform unit ball expanding at half the escape speed.
    Expanding,
}

impl IcArg {
    /// The name `--ic` takes.
    pub fn name(self) -> String {
        self.to_possible_value().map_or_else(|| format!("{self:?}"), |v| v.get_name().to_owned())
    }

    /// `n` bodies of these initial conditions from `seed`.
    ///
    /// # Errors
    /// The generator's (too few bodies for a collision, too many for 32-bit indices).
    pub fn generate(self, n: usize, seed: u64) -> orrery_core::Result<ic::PhaseSpace> {
        match self {
            Self::Plummer => ic::plummer(n, seed),
            Self::Hernquist => ic::hernquist(n, 1.0, seed),
            Self::Uniform => ic::uniform_cube(n, 1.0, seed),
            Self::ColdSphere => ic::cold_sphere(n, 1.0, seed),
            Self::Disk => ic::rotating_disk(n, 1.0, seed),
            Self::Collision => ic::collision(n, 10.0, 1.0, seed),
            Self::Expanding => ic::expanding_sphere(n, 1.0, 0.5, seed),
        }
    }
}

/// The force solver `--solver` asks for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum SolverArg {
    /// Barnes-Hut on the incrementally updated octree.
    #[default]
    BarnesHut,
    /// Direct summation over every pair (O(N^2)).
    Direct,
}

/// Where the run starts.
#[derive(Debug, Clone, PartialEq)]
pub enum Origin {
    /// Fresh initial conditions.
    Fresh {
        /// Which ones.
        ic: IcArg,
        /// Their seed.
        seed: u64,
    },
    /// A snapshot of an earlier run.
    Restart {
        /// The snapshot file.
        path: PathBuf,
    },
}

/// A checked run: the initial snapshot (state, tree, parameters) and the steps to take.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Where the run starts.
    pub origin: Origin,
    /// The initial state with its tree and run parameters, as [`orrery_sim::Simulation::resume`]
    /// takes it.
    pub start: Snapshot,
    /// The solver, physics, steps and reference energy (those of `start`).
    pub parameters: RunParameters,
    /// The last step of the run.
    pub last_step: u64,
    /// Diagnostics every this many steps.
    pub diagnostics_every: u64,
    /// Snapshots every this many steps (0: first and last only).
    pub snapshot_every: u64,
    /// The snapshot format.
    pub format: snapshot::Format,
}

/// Attribute keys the CLI adds to its snapshots (beside the library's run parameters).
pub mod keys {
    /// The initial conditions' name.
    pub const IC: &str = "orrery.cli.ic";
    /// Their seed.
    pub const SEED: &str = "orrery.cli.seed";
}

impl Plan {
    /// The plan the options describe.
    ///
    /// # Errors
    /// Options out of range (no bodies, a step or softening that is not positive and
    /// finite, theta outside (0, 2), too many levels), a restart file that cannot be read
    /// or was not written by a run, a restart that already reached `--steps`.
    pub fn from_args(args: &SimulateArgs) -> anyhow::Result<Self> {
        let (origin, start, parameters) = if let Some(path) = &args.restart {
            let snap = snapshot::read(path).context("--restart")?;
            let parameters = RunParameters::from_attributes(&snap.attributes)
                .context("--restart: the snapshot holds no run parameters of `orrery simulate`")?;
            parameters.steps.check(parameters.physics.softening).context("--restart: its time steps")?;
            (Origin::Restart { path: path.clone() }, snap, parameters)
        } else {
            let (snap, parameters) = fresh(args)?;
            (Origin::Fresh { ic: args.ic, seed: args.seed }, snap, parameters)
        };
        let first = start.state.step;
        if args.steps <= first {
            bail!("--steps {}: the run starts at step {first}; ask for more steps", args.steps);
        }
        let length = args.steps - first;
        let diagnostics_every = args.diagnostics_every.unwrap_or_else(|| length.div_ceil(200).max(1));
        if args.format == super::FormatArg::Hdf5 && !cfg!(feature = "hdf5") {
            bail!("--format hdf5: this orrery was built without HDF5; rebuild with `--features hdf5`");
        }
        Ok(Self {
            origin,
            start,
            parameters,
            last_step: args.steps,
            diagnostics_every,
            snapshot_every: args.snapshot_every,
            format: args.format.format(),
        })
    }

    /// Steps this run takes.
    pub fn length(&self) -> u64 {
        self.last_step - self.start.state.step
    }
}

/// The fresh initial snapshot of the options (state and run parameters as attributes),
/// and those parameters.
fn fresh(args: &SimulateArgs) -> anyhow::Result<(Snapshot, RunParameters)> {
    if args.n == 0 {
        bail!("--n 0: a run needs at least one body");
    }
    if !(args.softening.is_finite() && args.softening >= 0.0) {
        bail!("--softening {}: must be finite and not negative", args.softening);
    }
    if !(args.theta.is_finite() && args.theta > 0.0 && args.theta < 2.0) {
        bail!("--theta {}: must be in (0, 2)", args.theta);
    }
    let spec = match args.solver {
        SolverArg::Direct => SolverSpec::Direct,
        SolverArg::BarnesHut => SolverSpec::BarnesHut(TreeSettings { theta: args.theta, ..TreeSettings::default() }),
    };
    let physics = Physics { g: 1.0, softening: args.softening };
    let steps = if args.levels == 0 {
        TimeSteps { eta: args.eta, ..TimeSteps::fixed(args.dt) }
    } else {
        TimeSteps::block(args.dt, args.levels, args.eta)
    };
    steps.check(physics.softening).map_err(|e| anyhow::anyhow!("{}: {e}", step_option(&e)))?;
    let bodies = args.ic.generate(args.n, args.seed).with_context(|| format!("--ic {}", args.ic.name()))?;
    let parameters = RunParameters { spec, physics, steps, energy0: None };
    let mut snap = Snapshot::new(State::new(bodies));
    snap.attributes = parameters.to_attributes();
    snap.attributes.insert(keys::IC.into(), args.ic.name());
    snap.attributes.insert(keys::SEED.into(), args.seed.to_string());
    Ok((snap, parameters))
}

/// The option a [`TimeSteps::check`] error is about (its `what`).
fn step_option(e: &SimError) -> &'static str {
    match e {
        SimError::InvalidArgument { what: "time-step levels", .. } => "--levels",
        SimError::InvalidArgument { what: "eta", .. } => "--eta",
        _ => "--dt",
    }
}
