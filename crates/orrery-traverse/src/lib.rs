//! # orrery-traverse
//!
//! Gravity on orrery's trees: bodies and the force law ([`bodies`]), bodies in tree
//! order ([`tree_bodies`]), multipoles over a TreeView ([`multipole`]), opening
//! criteria ([`mac`]) and the Barnes-Hut walks ([`walk`]), with a one-call CPU solver
//! ([`solver`]); on GPUs ([`gpu`]), the upward pass for every GPU executor.

pub mod bodies;
pub mod gpu;
pub mod mac;
pub mod multipole;
pub mod solver;
pub mod tree_bodies;
pub mod walk;

pub use bodies::{Forces, Gravity, Softening, check_bodies};
pub use mac::{Mac, Opening};
pub use multipole::{Expansion, Multipoles};
pub use tree_bodies::TreeBodies;
pub use walk::{Interactions, WalkNodes};
