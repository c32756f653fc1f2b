//! The fast multipole method on the adaptive Cornerstone trees (issue 14): the CPU
//! reference, written so that GPU kernels can mirror it pass for pass.
//!
//! # The pieces
//! - [`expansions`]: complex solid harmonics (Dehnen's normalisation, coefficient-free
//!   addition theorems), order `p` in 1..=16, the coefficient layout, and the per-degree
//!   rotation matrices behind O(p^3) translations.
//! - [`operators`]: P2M, M2M, M2L, L2L, L2P and P2P (plus P2L, M2P and the O(p^4)
//!   convolution translations, the references of the tests).
//! - [`nodes`]: expansion centres (geometric cell centres, exact integers and f64 in a
//!   normalised frame) and the particle-ball radii of the acceptance criterion.
//! - [`lists`]: the dual tree traversal, target-centric and level by level, into CSR M2L
//!   and P2P lists; [`lists::check_coverage`] proves that near and far field count every
//!   pair once.
//! - [`directions`]: the distinct translation directions and their rotation table.
//! - [`evaluate`]: [`Fmm`] (settings), the plan, and the passes (upward, M2L, downward,
//!   leaves), each one parallel loop over the nodes of a level or of the tree; [`isa`]:
//!   the hot passes compiled per instruction-set level (same bits on every level).
//! - [`dense`]: uniform-depth trees for comparison; [`solver`]: the one-call
//!   [`FmmSolver`] over LeafCount, NFCount or dense trees, octree or binary;
//!   [`accuracy`]: the error harness by model and order.
//!
//! ```
//! use orrery_traverse::fmm::{Fmm, FmmSolver};
//! use orrery_traverse::{Gravity, Targets, acceleration_errors, direct_sum_f64, gather_targets, ic};
//!
//! let bodies = ic::plummer(2000, 7)?.bodies::<f64>();
//! let solver = FmmSolver::new(Fmm::new(8, 0.5, Gravity::plummer(0.0)));
//! let solution = solver.solve(&bodies.view()?)?;
//! let targets: Vec<u32> = (0..2000).step_by(50).collect();
//! let exact = direct_sum_f64(&bodies.view()?, Targets::Indices(&targets), &Gravity::plummer(0.0))?;
//! let errors = acceleration_errors(&exact, &gather_targets(&solution.forces, &targets)?)?;
//! assert!(errors.p99 < 1e-4, "{errors:?}");
//! # Ok::<(), orrery_core::Error>(())
//! ```

pub mod accuracy;
pub mod dense;
pub mod directions;
pub mod evaluate;
pub mod expansions;
pub mod isa;
pub mod lists;
pub mod nodes;
pub mod operators;
pub mod solver;

pub use evaluate::{Fmm, FmmPlan, FmmStats, FmmTimings, Rotations};
pub use expansions::{Complex, MAX_ORDER, MIN_ORDER, Order, Tables};
pub use lists::{InteractionLists, check_coverage};
pub use solver::{FmmSolution, FmmSolver, FmmTree};
