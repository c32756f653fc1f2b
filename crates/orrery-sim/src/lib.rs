//! N-body simulation on orrery's solvers, as a library for downstream N-body codes.
//!
//! - [`State`]: the bodies (positions, velocities, masses, 64-bit ids) and the clock, in
//!   f64 on the host: what snapshots hold and diagnostics read.
//! - [`backend`]: where the bodies live ([`backend::host::Host`], f64 on the CPU, or
//!   [`backend::device::Device`], f32 on a GPU executor) and the [`ForceSolver`] trait
//!   that direct summation and Barnes-Hut implement on each.
//! - [`steps`]: the kick-drift-kick leapfrog with fixed or block (power-of-two) steps.
//! - [`diagnostics`]: energies, momenta, virial ratio.
//! - [`run`]: [`Simulation`], which drives a backend and a solver step by step, and
//!   takes and resumes from snapshots.
//! - [`params`]: [`RunParameters`], the settings a restart takes over, as `orrery.*`
//!   snapshot attributes.
//! - [`snapshot`]: GADGET-4 HDF5 (feature `hdf5`) and NumPy `.npz` snapshots, read and
//!   written atomically.
//! - [`ic`]: the initial conditions (re-exported from `orrery-traverse`).
//! - [`SimError`]: every failure, typed.

pub mod backend;
pub mod diagnostics;
mod error;
pub mod params;
pub mod run;
pub mod snapshot;
mod state;
pub mod steps;

pub use backend::{Backend, ForceSolver, PhaseTimes, Physics, SolverSpec, TreeSettings};
pub use error::{Result, SimError};
pub use orrery_traverse::ic;
pub use params::RunParameters;
pub use run::Simulation;
pub use snapshot::Snapshot;
pub use state::State;
pub use steps::TimeSteps;
