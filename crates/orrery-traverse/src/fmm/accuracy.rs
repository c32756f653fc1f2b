//! The FMM's accuracy harness: relative potential and acceleration errors against f64
//! direct summation at sampled targets, by input model and expansion order, summarised
//! at the 50th and 99th percentiles and the maximum ([`ErrorStats`], nearest rank).
//! Tests call it with small `N`; the benchmark suite calls the same functions at 1e5 and
//! 1e6 bodies. Beside the percentiles it reports the global relative L2 errors that
//! exafmm-t quotes ("7 digits" there is an L2 error of about 1e-7).
//!
//! The reference uses the solver's own force law in f64. Softening is part of that law
//! but the FMM's far field is unsoftened (see [`crate::fmm::Fmm::gravity`]); error
//! measurements of the expansions use `eps = 0`.

use orrery_core::{ParticleSet, Real, Result};

use crate::accuracy::{ErrorStats, acceleration_errors, gather_targets, potential_errors};
use crate::bodies::Forces;
use crate::direct::{Targets, direct_sum_f64, evenly_spaced_targets};
use crate::fmm::evaluate::FmmStats;
use crate::fmm::solver::FmmSolver;
use crate::ic;

/// The input models of the harness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Workload {
    /// Uniform in `[-1, 1)^3` ([`ic::uniform_cube`]).
    UniformCube,
    /// A Plummer sphere in Hénon units ([`ic::plummer`]).
    Plummer,
    /// A thin exponential disk of scale length 1 ([`ic::rotating_disk`]).
    ThinDisk,
}

impl Workload {
    /// All three, in this order.
    pub const ALL: [Workload; 3] = [Workload::UniformCube, Workload::Plummer, Workload::ThinDisk];

    /// A short name (`uniform`, `plummer`, `disk`).
    pub fn name(self) -> &'static str {
        match self {
            Workload::UniformCube => "uniform",
            Workload::Plummer => "plummer",
            Workload::ThinDisk => "disk",
        }
    }

    /// `n` bodies of the model, seeded.
    ///
    /// # Errors
    /// As the generators ([`orrery_core::Error::EmptyInput`] for `n = 0`).
    pub fn bodies<T: Real>(self, n: usize, seed: u64) -> Result<ParticleSet<T>> {
        let phase = match self {
            Workload::UniformCube => ic::uniform_cube(n, 1.0, seed)?,
            Workload::Plummer => ic::plummer(n, seed)?,
            Workload::ThinDisk => ic::rotating_disk(n, 1.0, seed)?,
        };
        Ok(phase.bodies())
    }
}

/// The errors of one solve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Accuracy {
    /// Relative potential errors per target.
    pub potential: ErrorStats,
    /// Relative acceleration errors per target.
    pub acceleration: ErrorStats,
    /// The global relative L2 error of the potentials, `sqrt(sum (phi - p)^2 / sum p^2)`
    /// over the targets: the measure exafmm and exafmm-t quote.
    pub potential_l2: f64,
    /// The global relative L2 error of the accelerations, `sqrt(sum |a - r|^2 / sum |r|^2)`.
    pub acceleration_l2: f64,
    /// Work and time of the solve.
    pub stats: FmmStats,
}

/// The global relative L2 errors `(potential, acceleration)` of `approx` against
/// `reference` (same targets, same order; lengths as checked by the per-target errors).
fn l2_errors<T: Real>(reference: &Forces<f64>, approx: &Forces<T>) -> (f64, f64) {
    let (mut dp, mut np, mut da, mut na) = (0.0, 0.0, 0.0, 0.0);
    for k in 0..reference.len() {
        let (r, a) = (reference.acc(k), approx.acc(k).map(Into::<f64>::into));
        for c in 0..3 {
            da += (a[c] - r[c]) * (a[c] - r[c]);
            na += r[c] * r[c];
        }
        let e = Into::<f64>::into(approx.pot[k]) - reference.pot[k];
        dp += e * e;
        np += reference.pot[k] * reference.pot[k];
    }
    ((dp / np).sqrt(), (da / na).sqrt())
}

/// The f64 direct-summation reference of `targets` under `solver`'s force law.
///
/// # Errors
/// As [`direct_sum_f64`].
pub fn reference<T: Real>(solver: &FmmSolver<T>, bodies: &ParticleSet<T>, targets: &[u32]) -> Result<Forces<f64>> {
    direct_sum_f64(&bodies.view()?, Targets::Indices(targets), &solver.fmm.gravity.cast())
}

/// Solves `bodies` with `solver` and measures the errors at `targets` against
/// `reference` (from [`fn@reference`] for the same targets).
///
/// # Errors
/// As [`FmmSolver::solve`] and the error functions of [`crate::accuracy`].
pub fn measure<T: Real>(
    solver: &FmmSolver<T>,
    bodies: &ParticleSet<T>,
    targets: &[u32],
    reference: &Forces<f64>,
) -> Result<Accuracy> {
    let solution = solver.solve(&bodies.view()?)?;
    let approx = gather_targets(&solution.forces, targets)?;
    let (potential, acceleration) = (potential_errors(reference, &approx)?, acceleration_errors(reference, &approx)?);
    let (potential_l2, acceleration_l2) = l2_errors(reference, &approx);
    Ok(Accuracy { potential, acceleration, potential_l2, acceleration_l2, stats: solution.stats })
}

/// One row of a sweep.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AccuracyRow {
    /// The model.
    pub workload: Workload,
    /// Bodies.
    pub n: usize,
    /// The order.
    pub order: u32,
    /// The errors and the work.
    pub accuracy: Accuracy,
}

/// For each workload, `n` bodies (seed `seed`), `targets` evenly spaced targets and one
/// f64 reference; then `solver` at each order of `orders` (the solver's other settings
/// unchanged).
///
/// # Errors
/// As [`Workload::bodies`], [`fn@reference`] and [`measure`] (an order out of range among
/// them).
pub fn sweep<T: Real>(
    solver: &FmmSolver<T>,
    workloads: &[Workload],
    n: usize,
    orders: &[u32],
    targets: usize,
    seed: u64,
) -> Result<Vec<AccuracyRow>> {
    let mut rows = Vec::with_capacity(workloads.len() * orders.len());
    for &workload in workloads {
        let bodies = workload.bodies::<T>(n, seed)?;
        let picked = evenly_spaced_targets(n, targets);
        let truth = reference(solver, &bodies, &picked)?;
        for &order in orders {
            let mut s = *solver;
            s.fmm.order = order;
            rows.push(AccuracyRow { workload, n, order, accuracy: measure(&s, &bodies, &picked, &truth)? });
        }
    }
    Ok(rows)
}
