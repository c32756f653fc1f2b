//! The long energy-drift test of the simulation issue: 10,000 kick-drift-kick steps of a
//! 2,000-body Plummer sphere with f64 direct summation on the host, whose relative energy
//! error must stay below a bound derived from the step, the softening and the model (not
//! fitted to a run), must show no secular growth, and must be of second order in the step.
//!
//! Why three checks: a symplectic integrator's error is bounded and oscillates, so a
//! bound and a stationarity check together say "no drift"; but the bound is a coherent
//! worst case while the bodies' errors add with random phases, so a first-order
//! (still symplectic) scheme exceeds it only by a small factor, and the order check (the
//! error must drop fourfold when the step is halved) is what rejects it clearly. A
//! second test runs two broken integrators through the same criteria, so that a
//! criterion that could not fail would be noticed. `-- --nocapture` prints the measured
//! values.
//!
//! Cost: `2000^2 x 10,000 = 4e10` pair interactions (plus 8% for the order check). The
//! workspace's `Cargo.toml` builds orrery-sim, where the generic direct sum is
//! instantiated, at `opt-level = 3` in the test profile for it (see the comment there).

use orrery_sim::backend::host::Host;
use orrery_sim::diagnostics::Diagnostics;
use orrery_sim::steps::Kick;
use orrery_sim::{Backend, PhaseTimes, Physics, Simulation, SolverSpec, State, TimeSteps, ic};

/// `G = 1` and the softening length `eps` (Hénon units, like the model).
const PHYSICS: Physics = Physics { g: 1.0, softening: 0.05 };
/// The fixed step `h`.
const DT: f64 = 1.0 / 256.0;
/// Bodies of the long run.
const N: usize = 2000;
/// Steps of the long run (`t = 39.06`, 13.8 crossing times `2 sqrt 2`).
const STEPS: u64 = 10_000;
/// Steps between diagnostics.
const EVERY: u64 = 10;
/// The largest ratio of the late window's mean `|dE/E0|` to the early window's (see
/// [`Verdict`]).
const STATIONARY_RATIO: f64 = 2.0;

/// The energy-error bound of a KDK leapfrog run of a softened Plummer sphere.
///
/// # Derivation
/// The kick-drift-kick leapfrog is the symmetric (Strang) splitting
/// `exp(h/2 V) exp(h T) exp(h/2 V)` of `H = T + V`. Being symplectic it conserves,
/// up to `O(h^4)` and for exponentially long times, the modified Hamiltonian
/// (backward error analysis; Hairer, Lubich & Wanner, *Geometric Numerical
/// Integration*, IX)
///
/// ```text
/// H~ = H + h^2 H2,   H2 = {T,{T,V}} / 12 - {V,{V,T}} / 24
///                       = (v . Hess(V) v) / 12 - (sum_i m_i |a_i|^2) / 24,
/// ```
///
/// so `E(t) - E(0) = -h^2 (H2(t) - H2(0))`: bounded and oscillatory, no secular term,
/// with `|E(t) - E(0)| <= h^2 (max H2 - min H2)`. (Check: for an oscillator of frequency
/// `omega` this gives `(omega h)^2 / 4` of its energy, the known exact amplitude.)
///
/// Both terms are bounded by the largest squared frequency `omega^2` of the tidal tensor
/// `Hess(Phi)` along the run: `|v . Hess(V) v| <= omega^2 sum m v^2 = 2 K omega^2`, and,
/// with `|a| = omega(r)^2 r` in a spherical potential and the virial sum
/// `sum m r . grad Phi = |W|`, `0 <= sum m |a|^2 <= omega^2 |W|`. Hence
///
/// ```text
/// |E(t) - E(0)| / |E0| <= h^2 omega^2 (K_max / 3 + |W|_max / 24) / |E0|
///                       = (5/12) (omega h)^2   in virial equilibrium (2K = |W| = 2|E|).
/// ```
///
/// `omega^2` has two parts:
/// - the mean field: the Plummer potential's tidal tensor has eigenvalues
///   `G M / (r^2 + a^2)^(3/2)` (tangential) and `G M (a^2 - 2 r^2) / (r^2 + a^2)^(5/2)`
///   (radial), both at most `G M / a^3` in magnitude, attained at the centre; softening
///   averages the field over a kernel and cannot raise this maximum;
/// - the graininess: one neighbour `j` of a softened pair potential adds at most
///   `G m_j / eps^3` (the same eigenvalues with `a -> eps`, attained at zero distance),
///   and the pair's relative coordinate oscillates with at most
///   `G (m_i + m_j) / eps^3`.
///
/// So `omega^2 = G M / a^3 + 2 G m_max / eps^3`, assuming at most one neighbour at a time
/// much closer than `eps` (in the Plummer centre `N eps^3 / a^3 = 1.2` bodies lie within
/// `eps` of a body, 0.15 within `eps / 2`, and a neighbour at distance `eps` contributes
/// only 0.35 of the maximum). `K_max` and `|W|_max` are taken over the run's samples.
///
/// Here: `M = 1`, `a = 3 pi / 16` (Hénon units: `G M / a^3 = 4.893`), `m = 1/2000`,
/// `eps = 0.05` (`2 G m / eps^3 = 8`), so `omega = 3.59`, `omega h = 0.0140` and the bound
/// is `8.5e-5`. It is an upper envelope: the bodies' contributions to `H2` have random
/// phases, so the total fluctuates by about `1/sqrt(N)` of the envelope; the run measured
/// a largest error of `1.2e-6` (step 340).
fn energy_bound(state: &State, samples: &[Sample]) -> f64 {
    let e0 = samples[0].kinetic + samples[0].potential;
    let g = PHYSICS.g;
    let mass: f64 = state.bodies.mass.iter().sum();
    let m_max = state.bodies.mass.iter().copied().fold(0.0, f64::max);
    let a = ic::HENON_PLUMMER_SCALE;
    let omega2 = g * mass / a.powi(3) + 2.0 * g * m_max / PHYSICS.softening.powi(3);
    let k_max = samples.iter().map(|s| s.kinetic).fold(0.0, f64::max);
    let w_max = samples.iter().map(|s| s.potential.abs()).fold(0.0, f64::max);
    DT * DT * omega2 * (k_max / 3.0 + w_max / 24.0) / e0.abs()
}

/// One diagnostics sample.
#[derive(Debug, Clone, Copy)]
struct Sample {
    step: u64,
    energy_error: f64,
    kinetic: f64,
    potential: f64,
}

impl From<Diagnostics> for Sample {
    fn from(d: Diagnostics) -> Self {
        Self { step: d.step, energy_error: d.energy_error, kinetic: d.kinetic, potential: d.potential }
    }
}

/// What the criteria say about a run of `steps` steps.
///
/// Stationarity: the mean `|dE/E0|` over the last tenth of the run (`late`) must be at
/// most [`STATIONARY_RATIO`] times the mean over its second tenth (`early`; the first
/// tenth is left out so that no start-up transient enters either window). A bounded,
/// oscillating error gives a ratio near 1 (the long run measured 1.34); an error that
/// grows from the start as `t^p` gives `(9.5 / 1.5)^p`: 6.3 for a linear drift, 2.5 for
/// a random walk (`p = 1/2`); the threshold 2 rejects every `p > 0.38`.
#[derive(Debug, Clone, Copy)]
struct Verdict {
    bound: f64,
    max: f64,
    max_step: u64,
    early: f64,
    late: f64,
}

impl Verdict {
    fn new(state: &State, samples: &[Sample], steps: u64) -> Self {
        let bound = energy_bound(state, samples);
        let worst = samples.iter().max_by(|a, b| a.energy_error.abs().total_cmp(&b.energy_error.abs())).unwrap();
        let mean = |from: u64, to: u64| {
            let w: Vec<f64> =
                samples.iter().filter(|s| s.step > from && s.step <= to).map(|s| s.energy_error.abs()).collect();
            assert!(!w.is_empty(), "no samples in steps {from}..={to}");
            w.iter().sum::<f64>() / w.len() as f64
        };
        Self {
            bound,
            max: worst.energy_error.abs(),
            max_step: worst.step,
            early: mean(steps / 10, steps / 5),
            late: mean(steps - steps / 10, steps),
        }
    }

    fn within_bound(&self) -> bool {
        self.max < self.bound
    }

    fn stationary(&self) -> bool {
        self.late <= STATIONARY_RATIO * self.early
    }
}

fn plummer(n: usize) -> State {
    State::new(ic::plummer(n, 2000).unwrap())
}

/// The integrator of a run.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Integrator {
    /// [`Simulation`]: the kick-drift-kick leapfrog under test.
    Leapfrog,
    /// Broken: drift, then a full kick with the new forces (symplectic Euler, first
    /// order).
    DriftKick,
    /// Broken: kick-drift-kick whose closing kick uses the forces from before the drift
    /// (not symplectic: an oscillator's phase-space area grows by `1 + (omega h)^2 / 2` a
    /// step).
    StaleForces,
}

/// `steps` steps of `dt` of the `n`-body sphere with direct summation; diagnostics every
/// `every` steps (and at the start). Returns the initial state and the samples.
fn run(integrator: Integrator, n: usize, dt: f64, steps: u64, every: u64) -> (State, Vec<Sample>) {
    let state = plummer(n);
    let mut samples = Vec::new();
    if integrator == Integrator::Leapfrog {
        let mut sim =
            Simulation::new(Host, &SolverSpec::Direct, PHYSICS, TimeSteps::fixed(dt), state.clone(), None, None)
                .unwrap();
        samples.push(sim.diagnostics().unwrap().into());
        for step in 1..=steps {
            sim.step().unwrap();
            if step % every == 0 {
                samples.push(sim.diagnostics().unwrap().into());
            }
        }
        let d = sim.diagnostics().unwrap();
        assert_eq!((d.step, d.time), (steps, steps as f64 * dt));
        return (state, samples);
    }
    // The broken integrators, assembled from the same host backend and solver.
    let host = Host;
    let kick = |close, open| Kick { tick: 0, levels: 0, dt, close, open, dt4: 0.0, c2: 0.0 };
    let mut bodies = host.upload(&state).unwrap();
    let mut forces = host.alloc_forces(n).unwrap();
    let mut solver = host.solver(&SolverSpec::Direct, &PHYSICS).unwrap();
    let mut times = PhaseTimes::default();
    solver.compute(&host, &bodies, &mut forces, &mut times).unwrap();
    let mut now = state.clone();
    let d0 = Diagnostics::measure(&now, &forces, None);
    samples.push(d0.into());
    for step in 1..=steps {
        if integrator == Integrator::DriftKick {
            host.drift(&mut bodies, dt).unwrap();
            solver.compute(&host, &bodies, &mut forces, &mut times).unwrap();
            host.kick(&mut bodies, &forces, &kick(true, true)).unwrap();
        } else {
            host.kick(&mut bodies, &forces, &kick(false, true)).unwrap();
            host.drift(&mut bodies, dt).unwrap();
            host.kick(&mut bodies, &forces, &kick(true, false)).unwrap();
            solver.compute(&host, &bodies, &mut forces, &mut times).unwrap();
        }
        if step % every == 0 {
            host.download(&bodies, &mut now).unwrap();
            now.step = step;
            samples.push(Diagnostics::measure(&now, &forces, Some(d0.total)).into());
        }
    }
    (state, samples)
}

/// The energy error's order in the step: `max |dE/E0|` over the first `ORDER_TIME` of a
/// run of `dt` (the given samples, every 10 steps) against a run of `dt / 2` (sampled at
/// the same times), whose ratio is `2^p` for an integrator of order `p`: 4 for the
/// leapfrog (`E - E0 = -h^2 (H2(t) - H2(0))`, and over a time this short the two
/// trajectories are the same to far better than that), 2 for a first-order one.
fn order_ratio(integrator: Integrator, n: usize, samples: &[Sample]) -> f64 {
    let steps = (ORDER_TIME / DT) as u64;
    let worst =
        |s: &[Sample], last: u64| s.iter().filter(|s| s.step <= last).map(|s| s.energy_error.abs()).fold(0.0, f64::max);
    let (_, half) = run(integrator, n, DT / 2.0, 2 * steps, 2 * EVERY);
    worst(samples, steps) / worst(&half, 2 * steps)
}

/// The time over which [`order_ratio`] compares runs (256 steps of [`DT`]).
const ORDER_TIME: f64 = 1.0;
/// The smallest [`order_ratio`] accepted: between a first-order integrator's 2 and the
/// leapfrog's 4 (their geometric mean is 2.83).
const ORDER_RATIO: f64 = 3.0;

/// The issue's run: 10,000 steps of 1/256 of a 2,000-body Plummer sphere (Hénon units,
/// `G = 1`), softening 0.05, f64 direct summation; `|dE/E0|` every 10 steps must stay
/// below [`energy_bound`] and be stationary ([`Verdict`]), and the error must be of
/// second order in the step ([`order_ratio`]).
#[test]
fn a_long_leapfrog_run_keeps_its_energy_error_bounded_without_drift() {
    let start = std::time::Instant::now();
    let (state, samples) = run(Integrator::Leapfrog, N, DT, STEPS, EVERY);
    let v = Verdict::new(&state, &samples, STEPS);
    let long = start.elapsed();
    let order_start = std::time::Instant::now();
    let order = order_ratio(Integrator::Leapfrog, N, &samples);
    let order_time = order_start.elapsed();
    let last = samples.last().unwrap();
    eprintln!(
        "drift: max |dE/E0| {:.3e} at step {} (bound {:.3e}); mean |dE/E0| steps {}-{} {:.3e}, last {} {:.3e} \
         (ratio {:.2}); order ratio {order:.2}; final virial ratio {:.3}; {:.1} s (+{:.1} s for the order)",
        v.max,
        v.max_step,
        v.bound,
        STEPS / 10,
        STEPS / 5,
        v.early,
        STEPS / 10,
        v.late,
        v.late / v.early,
        2.0 * last.kinetic / last.potential.abs(),
        long.as_secs_f64(),
        order_time.as_secs_f64()
    );
    assert!(v.within_bound(), "max |dE/E0| {:.3e} at step {} above the bound {:.3e}", v.max, v.max_step, v.bound);
    assert!(v.stationary(), "secular drift: mean |dE/E0| {:.3e} late against {:.3e} early", v.late, v.early);
    assert!(order > ORDER_RATIO, "energy error not of second order: ratio {order:.2} for half the step");
    // The sphere stays near equilibrium, as the bound's K and W assume.
    let q = 2.0 * last.kinetic / last.potential.abs();
    assert!((q - 1.0).abs() < 0.2, "virial ratio {q}");
}

/// Smaller runs (500 bodies, 1,000 steps) of the two broken integrators: each fails one
/// of the long test's criteria, so neither criterion is vacuous. Symplectic Euler's
/// error is bounded and stationary, but of first order and above the bound; the
/// stale-force scheme's grows.
#[test]
fn the_drift_criteria_reject_broken_integrators() {
    let (n, steps) = (500, 1000);
    let (state, samples) = run(Integrator::DriftKick, n, DT, steps, EVERY);
    let euler = Verdict::new(&state, &samples, steps);
    let order = order_ratio(Integrator::DriftKick, n, &samples);
    eprintln!("drift-kick Euler: {euler:?}, order ratio {order:.2}");
    assert!(!euler.within_bound(), "first order, yet within the bound: {euler:?}");
    assert!(order < ORDER_RATIO, "first order, yet the order ratio is {order:.2}");
    let (state, samples) = run(Integrator::StaleForces, n, DT, steps, EVERY);
    let stale = Verdict::new(&state, &samples, steps);
    eprintln!("stale forces: {stale:?}");
    assert!(!stale.stationary(), "not symplectic, yet stationary: {stale:?}");
}
