//! # orrery-traverse
//!
//! Gravity on orrery's trees: bodies and the force law ([`bodies`]), seeded initial
//! conditions ([`ic`]), direct summation ([`direct`]), the accuracy harness
//! ([`accuracy`]), multipoles over a TreeView ([`multipole`]), opening criteria
//! ([`mac`]) and the Barnes-Hut walks ([`walk`]).

pub mod bodies;

pub use bodies::{Forces, Gravity, Softening, check_bodies};
