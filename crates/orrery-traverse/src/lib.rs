//! # orrery-traverse
//!
//! Gravity on orrery's trees, on the CPU and on GPUs ([`gpu`]):
//! - bodies and the force law ([`bodies`]), seeded initial conditions ([`ic`]), direct
//!   summation ([`direct`]) and the accuracy harness ([`accuracy`]);
//! - bodies in tree order ([`tree_bodies`]), multipoles over a TreeView ([`multipole`]),
//!   opening criteria ([`mac`]) and the Barnes-Hut walks ([`walk`]), with a one-call CPU
//!   solver ([`solver`]) and its GPU twin ([`gpu::GpuBarnesHut`]);
//! - the fast multipole method on the same trees ([`fmm`]; CPU).

pub mod accuracy;
pub mod bodies;
pub mod direct;
pub mod fmm;
pub mod gpu;
pub mod ic;
pub mod mac;
pub mod multipole;
pub mod solver;
pub mod tree_bodies;
pub mod walk;

pub use accuracy::{ErrorStats, acceleration_errors, gather_targets, potential_errors};
pub use bodies::{Forces, Gravity, Softening, check_bodies};
pub use direct::{Targets, direct_sum, direct_sum_f64, evenly_spaced_targets};
pub use ic::PhaseSpace;
pub use mac::{Mac, Opening};
pub use multipole::{Expansion, Multipoles};
pub use tree_bodies::TreeBodies;
pub use walk::{Interactions, WalkNodes};
