//! The CPU backend: a restart continues bit for bit, and a short leapfrog run conserves
//! energy within the leapfrog's bound.

use orrery_sim::backend::host::Host;
use orrery_sim::{Physics, Simulation, SolverSpec, State, TimeSteps, TreeSettings, ic};

fn plummer_state(n: usize) -> State {
    State::new(ic::plummer(n, 11).unwrap())
}

const PHYSICS: Physics = Physics { g: 1.0, softening: 0.05 };

/// Runs `steps` steps and returns the state, the tree leaves and the reference energy.
fn run(
    spec: &SolverSpec,
    steps: TimeSteps,
    state: State,
    count: u64,
    leaves: Option<Vec<u64>>,
    e0: Option<f64>,
) -> (State, Option<Vec<u64>>, Option<f64>) {
    let mut sim = Simulation::new(Host, spec, PHYSICS, steps, state, leaves, e0).unwrap();
    sim.diagnostics().unwrap();
    for _ in 0..count {
        sim.step().unwrap();
    }
    let state = sim.sync_state().unwrap().clone();
    (state, sim.tree_leaves(), sim.energy0())
}

/// A run of 2k steps equals k steps, a restart from the state (and the tree's leaves),
/// and k more, bit for bit: direct and Barnes-Hut, fixed and block steps.
#[test]
fn a_restart_continues_bit_for_bit() {
    for spec in [SolverSpec::Direct, SolverSpec::BarnesHut(TreeSettings::default())] {
        for steps in [TimeSteps::fixed(1.0 / 64.0), TimeSteps::block(1.0 / 16.0, 2, 0.025)] {
            let start = plummer_state(300);
            let (whole, _, _) = run(&spec, steps, start.clone(), 6, None, None);
            let (half, leaves, e0) = run(&spec, steps, start, 3, None, None);
            let (resumed, _, _) = run(&spec, steps, half, 3, leaves, e0);
            assert_eq!(whole, resumed, "{spec:?} {steps:?}");
            assert_eq!(whole.step, 6);
        }
    }
}

/// Leapfrog energy error: for the Plummer core's orbital frequency
/// `omega = sqrt(G M / a^3)` (2.2 in Hénon units) and the softened pair frequency
/// `sqrt(2 G m / eps^3)`, the KDK scheme's energy oscillates with relative amplitude
/// about `(omega dt)^2 / 4` without secular drift; the bound asserted is that amplitude
/// for the larger frequency.
#[test]
fn a_short_direct_run_conserves_energy_within_the_leapfrog_bound() {
    let n = 500;
    let dt = 1.0 / 128.0;
    let a = ic::HENON_PLUMMER_SCALE;
    let omega = (1.0 / (a * a * a)).sqrt().max((2.0 / n as f64 / PHYSICS.softening.powi(3)).sqrt());
    let bound = (omega * dt).powi(2) / 4.0;
    let mut sim =
        Simulation::new(Host, &SolverSpec::Direct, PHYSICS, TimeSteps::fixed(dt), plummer_state(n), None, None)
            .unwrap();
    let d0 = sim.diagnostics().unwrap();
    assert!((d0.virial_ratio - 1.0).abs() < 0.2, "{}", d0.virial_ratio);
    let mut worst = 0.0f64;
    for _ in 0..200 {
        sim.step().unwrap();
        worst = worst.max(sim.diagnostics().unwrap().energy_error.abs());
    }
    assert!(worst < bound, "energy error {worst} above the bound {bound}");
    let d = sim.diagnostics().unwrap();
    assert!(d.momentum.iter().all(|p| p.abs() < 1e-12), "{:?}", d.momentum);
}
