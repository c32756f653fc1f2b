//! # orrery-traverse
//!
//! Gravity on orrery's trees: bodies and the force law ([`bodies`]), seeded initial
//! conditions ([`ic`]), direct summation on the CPU ([`direct`]) and on GPUs
//! ([`gpu`]), and the accuracy harness ([`accuracy`]). Multipoles over a TreeView,
//! opening criteria and the Barnes-Hut walks follow.

pub mod accuracy;
pub mod bodies;
pub mod direct;
pub mod gpu;
pub mod ic;

pub use accuracy::{ErrorStats, acceleration_errors, gather_targets, potential_errors};
pub use bodies::{Forces, Gravity, Softening, check_bodies};
pub use direct::{Targets, direct_sum, direct_sum_f64, evenly_spaced_targets};
pub use ic::PhaseSpace;
