//! N-body simulation on orrery's solvers, as a library for downstream N-body codes.
//!
//! - [`State`]: the bodies (positions, velocities, masses, 64-bit ids) and the clock, in
//!   f64 on the host: what snapshots hold and diagnostics read.
//! - [`snapshot`]: GADGET-4 HDF5 (feature `hdf5`) and NumPy `.npz` snapshots, read and
//!   written atomically.
//! - [`SimError`]: every failure, typed.

mod error;
pub mod snapshot;
mod state;

pub use error::{Result, SimError};
pub use snapshot::Snapshot;
pub use state::State;
