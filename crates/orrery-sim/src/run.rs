//! [`Simulation`]: a backend, a solver and the block-step leapfrog ([`crate::steps`]),
//! advanced one step at a time, with the diagnostics and the state on demand.
//!
//! The forces always belong to the bodies' current positions: [`Simulation::new`]
//! computes them, every tick recomputes them after its drift, so a step starts with the
//! opening kick and a synchronised state (after [`Simulation::step`]) has its potentials
//! at hand for the diagnostics.
//!
//! [`Simulation::snapshot`] and [`Simulation::resume`] restart a run through a snapshot
//! file bit for bit: the snapshot holds the state, the solver's tree leaves and the
//! [`RunParameters`] (solver, gravity, steps, reference energy) as attributes.

use std::time::Instant;

use crate::backend::{Backend, ForceSolver, PhaseTimes, Physics, SolverSpec};
use crate::diagnostics::Diagnostics;
use crate::params::RunParameters;
use crate::snapshot::Snapshot;
use crate::steps::{Kick, TimeSteps};
use crate::{Result, State};

/// A running simulation (see the [module documentation](self)).
pub struct Simulation<B: Backend> {
    backend: B,
    solver: Box<dyn ForceSolver<B>>,
    spec: SolverSpec,
    physics: Physics,
    steps: TimeSteps,
    bodies: B::Bodies,
    forces: B::Forces,
    /// Masses, ids and the clock are current; positions and velocities only after
    /// [`Self::sync_state`].
    state: State,
    /// Whether `state` holds the bodies' current positions and velocities (a download
    /// since the last step), so diagnostics and a snapshot at one step share a download.
    synced: bool,
    times: PhaseTimes,
    energy0: Option<f64>,
    forces_evaluations: u64,
}

impl<B: Backend> Simulation<B> {
    /// Loads `state` onto `backend` with a solver of `spec`, and computes the first forces.
    /// A tree solver starts from `tree_leaves` when given (a snapshot's), and `energy0`
    /// is the reference energy of the diagnostics (a restarted run's original one).
    ///
    /// # Errors
    /// [`TimeSteps::check`], [`State::check`], the solver's settings, device failures.
    pub fn new(
        backend: B,
        spec: &SolverSpec,
        physics: Physics,
        steps: TimeSteps,
        state: State,
        tree_leaves: Option<Vec<u64>>,
        energy0: Option<f64>,
    ) -> Result<Self> {
        steps.check(physics.softening)?;
        let bodies = backend.upload(&state)?;
        let forces = backend.alloc_forces(state.len())?;
        let mut solver = backend.solver(spec, &physics)?;
        if let Some(leaves) = tree_leaves {
            solver.restore_tree_leaves(leaves)?;
        }
        let mut sim = Self {
            backend,
            solver,
            spec: *spec,
            physics,
            steps,
            bodies,
            forces,
            state,
            synced: false,
            times: PhaseTimes::default(),
            energy0,
            forces_evaluations: 0,
        };
        sim.compute_forces()?;
        Ok(sim)
    }

    /// Resumes the run that wrote `snapshot` ([`Self::snapshot`]) on `backend`: its
    /// [`RunParameters`] from the attributes, its state and tree leaves. On the host
    /// backend the run continues bit for bit as if it had not stopped (tested for direct
    /// summation and Barnes-Hut, fixed and block steps, both file formats).
    ///
    /// # Errors
    /// [`RunParameters::from_attributes`]'s errors (naming the missing or bad key), then
    /// those of [`Self::new`].
    pub fn resume(backend: B, snapshot: Snapshot) -> Result<Self> {
        let p = RunParameters::from_attributes(&snapshot.attributes)?;
        Self::new(backend, &p.spec, p.physics, p.steps, snapshot.state, snapshot.tree_leaves, p.energy0)
    }

    /// A snapshot of the current (synchronised) state for a restart: the state, the
    /// solver's tree leaves, and the [`RunParameters`] as attributes (`orrery.energy0`
    /// once the reference energy is fixed). Callers may add attributes of their own.
    ///
    /// # Errors
    /// Transfer failures.
    pub fn snapshot(&mut self) -> Result<Snapshot> {
        let state = self.sync_state()?.clone();
        let params = RunParameters { spec: self.spec, physics: self.physics, steps: self.steps, energy0: self.energy0 };
        Ok(Snapshot { state, tree_leaves: self.tree_leaves(), attributes: params.to_attributes() })
    }

    fn compute_forces(&mut self) -> Result<()> {
        self.solver.compute(&self.backend, &self.bodies, &mut self.forces, &mut self.times)?;
        self.forces_evaluations += 1;
        Ok(())
    }

    fn kick(&mut self, tick: u32, close: bool, open: bool) -> Result<()> {
        let (dt4, c2) = self.steps.criterion::<f64>(self.physics.softening);
        let kick = Kick { tick, levels: self.steps.levels, dt: self.steps.dt, close, open, dt4, c2 };
        let start = Instant::now();
        self.backend.kick(&mut self.bodies, &self.forces, &kick)?;
        self.backend.synchronize()?;
        self.times.integrate += start.elapsed();
        Ok(())
    }

    /// One step of `dt` (`2^L` ticks of the block scheme); afterwards the bodies are
    /// synchronised.
    ///
    /// # Errors
    /// Device and solver failures (bodies that became non-finite among them).
    pub fn step(&mut self) -> Result<()> {
        let ticks = self.steps.ticks();
        self.kick(0, false, true)?;
        for tick in 1..=ticks {
            let start = Instant::now();
            self.backend.drift(&mut self.bodies, self.steps.tick())?;
            self.backend.synchronize()?;
            self.times.integrate += start.elapsed();
            self.compute_forces()?;
            self.kick(tick, true, tick < ticks)?;
        }
        self.state.time += self.steps.dt;
        self.state.step += 1;
        self.synced = false;
        Ok(())
    }

    /// Copies positions and velocities back into the host state and returns it (once per
    /// step: later calls before the next step return the same state without a transfer).
    ///
    /// # Errors
    /// Transfer failures.
    pub fn sync_state(&mut self) -> Result<&State> {
        if !self.synced {
            let start = Instant::now();
            self.backend.download(&self.bodies, &mut self.state)?;
            self.times.io += start.elapsed();
            self.synced = true;
        }
        Ok(&self.state)
    }

    /// The diagnostics of the current (synchronised) state; the first call fixes the
    /// reference energy unless one was given.
    ///
    /// # Errors
    /// Transfer failures.
    pub fn diagnostics(&mut self) -> Result<Diagnostics> {
        self.sync_state()?;
        let start = Instant::now();
        let forces = self.backend.download_forces(&self.forces)?;
        let d = Diagnostics::measure(&self.state, &forces, self.energy0);
        self.energy0.get_or_insert(d.total);
        self.times.diagnostics += start.elapsed();
        Ok(d)
    }

    /// The reference energy of the diagnostics, once fixed.
    pub fn energy0(&self) -> Option<f64> {
        self.energy0
    }

    /// The leaf array of the solver's tree, when it keeps one (for snapshots).
    pub fn tree_leaves(&self) -> Option<Vec<u64>> {
        self.solver.tree_leaves()
    }

    /// The rung of every body.
    ///
    /// # Errors
    /// Transfer failures.
    pub fn rungs(&self) -> Result<Vec<u32>> {
        self.backend.download_rungs(&self.bodies)
    }

    /// Wall time per phase so far.
    pub fn times(&self) -> PhaseTimes {
        self.times
    }

    /// Adds `elapsed` to the I/O phase (a caller's snapshot writes).
    pub fn add_io_time(&mut self, elapsed: std::time::Duration) {
        self.times.io += elapsed;
    }

    /// Force evaluations so far (one per tick, plus the first).
    pub fn force_evaluations(&self) -> u64 {
        self.forces_evaluations
    }

    /// The host state as last synchronised (masses, ids and the clock are always current).
    pub fn state(&self) -> &State {
        &self.state
    }

    /// The backend and solver, in words.
    pub fn describe(&self) -> String {
        format!("{} on {}", self.solver.describe(), self.backend.describe())
    }

    /// The time-step settings.
    pub fn time_steps(&self) -> TimeSteps {
        self.steps
    }

    /// The force settings.
    pub fn physics(&self) -> Physics {
        self.physics
    }

    /// The solver's settings.
    pub fn solver_spec(&self) -> SolverSpec {
        self.spec
    }
}
