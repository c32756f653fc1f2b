//! Where the bodies live and how they are advanced: the [`Backend`] trait (host or
//! device storage, kicks and drifts) and the [`ForceSolver`] trait (accelerations and
//! potentials), so that a downstream code swaps solvers and executors without other
//! changes.
//!
//! - [`host::Host`]: f64 on the host, rayon; the reference (bit-for-bit reproducible).
//! - [`device::Device`]: f32 on any [`orrery_core::GpuExecutor`] (CUDA, wgpu); the
//!   bodies stay on the device between steps and are read back only for diagnostics and
//!   snapshots.
//!
//! A backend builds its solvers from a [`SolverSpec`] ([`Backend::solver`]): direct
//! summation or Barnes-Hut.

pub mod device;
pub mod host;

use std::time::Duration;

use orrery_traverse::Forces;
use orrery_traverse::gpu::GpuWalk;
use orrery_traverse::mac::Mac;
use orrery_traverse::multipole::Expansion;

use crate::steps::Kick;
use crate::{Result, State};

/// Which force solver, with its settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SolverSpec {
    /// Direct summation: every pair, `O(n^2)`.
    Direct,
    /// Barnes-Hut on an incrementally updated Cornerstone octree.
    BarnesHut(TreeSettings),
}

/// Barnes-Hut settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TreeSettings {
    /// The opening angle.
    pub theta: f64,
    /// The opening criterion.
    pub mac: Mac,
    /// Monopole or quadrupole.
    pub expansion: Expansion,
    /// Bodies per leaf at most.
    pub bucket: u32,
    /// The walk on a GPU (the CPU uses the per-target walk, or groups for
    /// [`GpuWalk::Group`] / [`GpuWalk::Group64`]).
    pub walk: GpuWalk,
}

impl Default for TreeSettings {
    /// Theta 0.5, the safe criterion, quadrupoles, 16 bodies per leaf, the group walk.
    fn default() -> Self {
        Self { theta: 0.5, mac: Mac::Safe, expansion: Expansion::Quadrupole, bucket: 16, walk: GpuWalk::Group }
    }
}

/// The gravity of a run: `G` and the Plummer softening length.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Physics {
    /// The gravitational constant.
    pub g: f64,
    /// The Plummer softening length (0 for none).
    pub softening: f64,
}

/// Wall time per phase, accumulated (a backend on a device waits for it at the end of
/// each phase, so the phases do not overlap).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PhaseTimes {
    /// Keys, sort, tree update and upward pass.
    pub tree: Duration,
    /// The walk or the direct sum.
    pub force: Duration,
    /// Kicks and drifts.
    pub integrate: Duration,
    /// Downloads and snapshot files.
    pub io: Duration,
    /// Energies and momenta.
    pub diagnostics: Duration,
}

impl PhaseTimes {
    /// The sum of all phases.
    pub fn total(&self) -> Duration {
        self.tree + self.force + self.integrate + self.io + self.diagnostics
    }
}

impl std::ops::AddAssign for PhaseTimes {
    fn add_assign(&mut self, o: Self) {
        self.tree += o.tree;
        self.force += o.force;
        self.integrate += o.integrate;
        self.io += o.io;
        self.diagnostics += o.diagnostics;
    }
}

/// Storage of the bodies and the integrator's arithmetic on it.
pub trait Backend: Sized {
    /// Positions, velocities, masses and rungs.
    type Bodies;
    /// Accelerations and potentials (`G` included), one per body.
    type Forces;

    /// Where it runs, in words (the executor and its device).
    fn describe(&self) -> String;
    /// Copies `state`'s bodies in (rungs 0).
    ///
    /// # Errors
    /// [`State::check`]; allocation failures.
    fn upload(&self, state: &State) -> Result<Self::Bodies>;
    /// Room for the forces of `n` bodies.
    ///
    /// # Errors
    /// Allocation failures.
    fn alloc_forces(&self, n: usize) -> Result<Self::Forces>;
    /// Copies positions and velocities out into `state` (masses and ids are not touched).
    ///
    /// # Errors
    /// Transfer failures, or a `state` of another length.
    fn download(&self, bodies: &Self::Bodies, state: &mut State) -> Result<()>;
    /// Copies the forces out, widened to f64.
    ///
    /// # Errors
    /// Transfer failures.
    fn download_forces(&self, forces: &Self::Forces) -> Result<Forces<f64>>;
    /// Copies the rungs out.
    ///
    /// # Errors
    /// Transfer failures.
    fn download_rungs(&self, bodies: &Self::Bodies) -> Result<Vec<u32>>;
    /// Every body's `x += v dt`.
    ///
    /// # Errors
    /// Device failures.
    fn drift(&self, bodies: &mut Self::Bodies, dt: f64) -> Result<()>;
    /// `kick` on every body ([`crate::steps::kick_body`]).
    ///
    /// # Errors
    /// Device failures; forces of another length.
    fn kick(&self, bodies: &mut Self::Bodies, forces: &Self::Forces, kick: &Kick) -> Result<()>;
    /// Waits for queued work (phase timing).
    ///
    /// # Errors
    /// Device failures.
    fn synchronize(&self) -> Result<()>;
    /// A solver of this backend.
    ///
    /// # Errors
    /// Invalid settings (theta, softening, bucket).
    fn solver(&self, spec: &SolverSpec, physics: &Physics) -> Result<Box<dyn ForceSolver<Self>>>;
}

/// Accelerations and potentials of every body, on a backend.
pub trait ForceSolver<B: Backend> {
    /// What it is, in words.
    fn describe(&self) -> String;
    /// The forces at the bodies' current positions into `forces`; adds its wall time per
    /// phase to `times`.
    ///
    /// # Errors
    /// Device failures; the solvers' errors (bodies outside any box, non-finite values).
    fn compute(
        &mut self,
        backend: &B,
        bodies: &B::Bodies,
        forces: &mut B::Forces,
        times: &mut PhaseTimes,
    ) -> Result<()>;
    /// The leaf array of the last tree (a tree solver that keeps it between steps), for
    /// snapshots that restart bit for bit.
    fn tree_leaves(&self) -> Option<Vec<u64>> {
        None
    }
    /// Starts the next update from `leaves` (from a snapshot). Solvers without a kept tree
    /// ignore it.
    ///
    /// # Errors
    /// A leaf array that is not one of this solver's trees.
    fn restore_tree_leaves(&mut self, leaves: Vec<u64>) -> Result<()> {
        let _ = leaves;
        Ok(())
    }
}
