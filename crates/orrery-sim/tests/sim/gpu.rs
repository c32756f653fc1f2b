//! The device backend's kernels against the CPU reference ([`orrery_sim::steps`] in f32):
//! rungs and velocities bit for bit, positions after a drift bit for bit; whole
//! [`Simulation`] runs on the device against the same runs on the host (f64); and the
//! CUDA source compiles with NVRTC. A missing executor is reported as a skip, or fails
//! under `ORRERY_REQUIRE_CUDA=1` / `ORRERY_REQUIRE_WGPU=1`.

use orrery_backend_cuda::CudaExecutor;
use orrery_backend_wgpu::WgpuExecutor;
use orrery_core::GpuExecutor;
use orrery_sim::backend::device::{Device, MODULE};
use orrery_sim::backend::host::Host;
use orrery_sim::steps::{Kick, TimeSteps, drift, kick_body};
use orrery_sim::{Backend, Physics, Simulation, SolverSpec, State, TreeSettings, ic};
use orrery_traverse::gpu::DeviceForces;

fn open_or_skip<E>(open: impl FnOnce() -> orrery_core::Result<E>, var: &str) -> Option<E> {
    match open() {
        Ok(e) => Some(e),
        Err(e) => {
            assert!(!std::env::var(var).is_ok_and(|v| v == "1"), "{var}=1 but no executor: {e}");
            orrery_core::skip::report(&format!("sim GPU test ({var} not set)"), &e.to_string());
            None
        }
    }
}

/// Kicks at every tick of a 3-level step, with accelerations spread over six decades so
/// that every rung occurs, then a drift: the device equals the f32 reference exactly.
fn kicks_and_drifts_match_the_reference<E: GpuExecutor + 'static>(exec: &E) {
    let n = 3000;
    let state = State::new(ic::plummer(n, 5).unwrap());
    let dev = Device::new(exec);
    let mut bodies = dev.upload(&state).unwrap();
    let acc: Vec<[f32; 3]> = (0..n)
        .map(|i| {
            let s = 10f32.powf((i % 61) as f32 / 10.0 - 3.0);
            [s * state.bodies.x[i] as f32, -s * state.bodies.z[i] as f32, s * 0.5]
        })
        .collect();
    let column = |c: usize| acc.iter().map(|a| a[c]).collect::<Vec<f32>>();
    let forces = DeviceForces {
        ax: exec.upload(&column(0)).unwrap(),
        ay: exec.upload(&column(1)).unwrap(),
        az: exec.upload(&column(2)).unwrap(),
        pot: exec.upload(&vec![0f32; n]).unwrap(),
    };
    let steps = TimeSteps::block(0.125, 3, 0.025);
    let (dt4, c2) = steps.criterion::<f64>(0.05);
    let mut v: Vec<[f32; 3]> =
        (0..n).map(|i| [state.bodies.vx[i] as f32, state.bodies.vy[i] as f32, state.bodies.vz[i] as f32]).collect();
    let mut rung = vec![0u32; n];
    for tick in 0..=8 {
        let kick = Kick { tick, levels: 3, dt: steps.dt, close: tick > 0, open: tick < 8, dt4, c2 };
        dev.kick(&mut bodies, &forces, &kick).unwrap();
        for ((v, a), r) in v.iter_mut().zip(&acc).zip(&mut rung) {
            kick_body(v, *a, r, &kick);
        }
    }
    assert_eq!(dev.download_rungs(&bodies).unwrap(), rung);
    let mut out = state.clone();
    dev.drift(&mut bodies, steps.tick()).unwrap();
    dev.download(&bodies, &mut out).unwrap();
    let dt = steps.tick() as f32;
    for (i, vi) in v.iter().enumerate() {
        assert_eq!(out.bodies.vx[i] as f32, vi[0], "vx {i}");
        assert_eq!(out.bodies.vz[i] as f32, vi[2], "vz {i}");
        assert_eq!(out.bodies.x[i] as f32, drift(state.bodies.x[i] as f32, vi[0], dt), "x {i}");
    }
    let used: std::collections::BTreeSet<u32> = rung.iter().copied().collect();
    assert!(used.len() >= 3, "rungs used: {used:?}");
}

#[test]
fn cuda_kicks_and_drifts_match_the_reference() {
    if let Some(exec) = open_or_skip(CudaExecutor::from_env, "ORRERY_REQUIRE_CUDA") {
        kicks_and_drifts_match_the_reference(&exec);
    }
}

#[test]
fn wgpu_kicks_and_drifts_match_the_reference() {
    if let Some(exec) = open_or_skip(WgpuExecutor::new, "ORRERY_REQUIRE_WGPU") {
        kicks_and_drifts_match_the_reference(&exec);
    }
}

/// What a run leaves: the final state, rungs, the largest `|dE/E0|` over its steps and the
/// force evaluations.
struct Run {
    state: State,
    rungs: Vec<u32>,
    worst_energy_error: f64,
    force_evaluations: u64,
}

/// `G = 1` and the softening of the host tests.
const PHYSICS: Physics = Physics { g: 1.0, softening: 0.05 };

/// `count` steps of `steps` on `backend`, checking after every step that the state is
/// synchronised: the clock and the step counter advanced by exactly one step, and the
/// diagnostics are of that step.
fn run<B: Backend>(backend: B, spec: &SolverSpec, steps: TimeSteps, state: State, count: u64) -> Run {
    let mut sim = Simulation::new(backend, spec, PHYSICS, steps, state, None, None).unwrap();
    sim.diagnostics().unwrap();
    let mut worst = 0.0f64;
    for k in 1..=count {
        sim.step().unwrap();
        // dt is a power of two, so k dt is exact.
        assert_eq!((sim.state().step, sim.state().time), (k, k as f64 * steps.dt), "{}", sim.describe());
        let d = sim.diagnostics().unwrap();
        assert_eq!((d.step, d.time), (k, k as f64 * steps.dt), "{}", sim.describe());
        worst = worst.max(d.energy_error.abs());
    }
    let rungs = sim.rungs().unwrap();
    let force_evaluations = sim.force_evaluations();
    Run { state: sim.sync_state().unwrap().clone(), rungs, worst_energy_error: worst, force_evaluations }
}

/// Per body, `|a_i - b_i| / (1 + |b_i|)` of three coordinates, sorted.
fn differences(a: [&[f64]; 3], b: [&[f64]; 3]) -> Vec<f64> {
    let mut d: Vec<f64> = (0..b[0].len())
        .map(|i| {
            let d2: f64 = (0..3).map(|c| (a[c][i] - b[c][i]).powi(2)).sum();
            let r2: f64 = (0..3).map(|c| b[c][i].powi(2)).sum();
            d2.sqrt() / (1.0 + r2.sqrt())
        })
        .collect();
    d.sort_by(f64::total_cmp);
    d
}

/// The f32 tolerances of a device run against the host's, relative to `1 + |x|` and
/// `1 + |v|` ([`differences`]).
///
/// Every rounding at its worst and accumulated linearly, with `u = 2^-24`: `k` drifts
/// (one per tick, `k = count 2^L`) round `x` by `u |x|` each, `2 k` half-kicks round `v`;
/// an f32 force sum of `n` terms is off by at most `n u |a|` (Higham's `gamma_n`), which
/// the run integrates to `n u |a|max t` in `v` and `n u |a|max t^2 / 2` in `x` (`t` the
/// run's length). `|a|max` bounds a Plummer body's acceleration: the mean field's
/// largest `0.385 G M / a^2` plus one softened neighbour's `0.385 G m / eps^2` (the
/// maximum of `r / (r^2 + s^2)^(3/2)` is `2 / (3 sqrt 3 s^2)`). A factor `e` allows
/// the trajectories to diverge over a run shorter than half a crossing time (`t <= 1.25`
/// against `2 sqrt 2`). Barnes-Hut takes the same tolerance: both runs walk the same
/// octree with the same criterion, so only the rounding differs.
fn tolerances(state: &State, steps: TimeSteps, count: u64) -> (f64, f64) {
    let u = f64::from(f32::EPSILON) / 2.0;
    let k = (count * u64::from(steps.ticks())) as f64;
    let t = count as f64 * steps.dt;
    let mass: f64 = state.bodies.mass.iter().sum();
    let m_max = state.bodies.mass.iter().copied().fold(0.0, f64::max);
    let a = ic::HENON_PLUMMER_SCALE;
    let a_max = 0.385 * PHYSICS.g * (mass / (a * a) + m_max / PHYSICS.softening.powi(2));
    let (e, n) = (std::f64::consts::E, state.len() as f64);
    (e * u * (k + n * a_max * t * t / 2.0), e * u * (2.0 * k + n * a_max * t))
}

/// [`Simulation`] on the device with direct summation and Barnes-Hut, fixed and block
/// steps, 20 steps of 400 bodies, against the same runs on the host (f64):
/// positions and velocities within [`tolerances`], the energy error the host's up to the
/// f32 force sums' `n u`, the rungs in range and the host's, the clocks and force
/// evaluations equal.
///
/// Rung choices and Barnes-Hut opening decisions are thresholds: a body whose criterion
/// lies within rounding of one can take the other branch on the device, and then moves
/// by the integrator's or the multipole's truncation error rather than by rounding. So 1%
/// of the bodies (and of the rungs) may differ by more; every body must stay within 100
/// times the tolerance, which still rejects a wrong kick, drift or force (those move
/// bodies by `a dt`, `v dt`, thousands of times the tolerance). None differed on lavapipe.
fn simulations_match_the_host<E: GpuExecutor + 'static>(exec: &E) {
    let (n, count) = (400, 20);
    let state = State::new(ic::plummer(n, 23).unwrap());
    let u = f64::from(f32::EPSILON) / 2.0;
    let allowed = n / 100;
    for spec in [SolverSpec::Direct, SolverSpec::BarnesHut(TreeSettings::default())] {
        for steps in [TimeSteps::fixed(1.0 / 64.0), TimeSteps::block(1.0 / 16.0, 3, 0.025)] {
            let host = run(Host, &spec, steps, state.clone(), count);
            let dev = run(Device::new(exec), &spec, steps, state.clone(), count);
            let what = format!("{spec:?} {steps:?}");
            assert_eq!((dev.state.step, dev.state.time), (host.state.step, host.state.time), "{what}");
            assert_eq!(dev.force_evaluations, 1 + count * u64::from(steps.ticks()), "{what}");
            assert_eq!(dev.force_evaluations, host.force_evaluations, "{what}");

            let (h, d) = (&host.state.bodies, &dev.state.bodies);
            let dx = differences([&d.x, &d.y, &d.z], [&h.x, &h.y, &h.z]);
            let dv = differences([&d.vx, &d.vy, &d.vz], [&h.vx, &h.vy, &h.vz]);
            let (tol_x, tol_v) = tolerances(&state, steps, count);
            let same_rungs = host.rungs.iter().zip(&dev.rungs).filter(|(a, b)| a == b).count();
            let used: std::collections::BTreeSet<u32> = dev.rungs.iter().copied().collect();
            eprintln!(
                "{what} on {}: |dx| max {:.2e} (tolerance {tol_x:.2e}), |dv| max {:.2e} (tolerance {tol_v:.2e}); \
                 max |dE/E0| host {:.3e}, device {:.3e}; rungs {used:?}, {same_rungs}/{n} as on the host",
                exec.name(),
                dx[n - 1],
                dv[n - 1],
                host.worst_energy_error,
                dev.worst_energy_error,
            );
            // (a) The device follows the host.
            for (diff, tol, name) in [(&dx, tol_x, "positions"), (&dv, tol_v, "velocities")] {
                assert!(
                    diff[n - 1 - allowed] <= tol,
                    "{what}: {name} off by {:.2e} > {tol:.2e}",
                    diff[n - 1 - allowed]
                );
                assert!(diff[n - 1] <= 100.0 * tol, "{what}: {name} off by {:.2e} > 100 x {tol:.2e}", diff[n - 1]);
            }
            // (b) The energy error is the host's, up to the f32 force sums (potentials
            // included: `n u` relative).
            let floor = n as f64 * u;
            assert!(
                (dev.worst_energy_error - host.worst_energy_error).abs() <= floor,
                "{what}: max |dE/E0| {:.3e} on the device, {:.3e} on the host",
                dev.worst_energy_error,
                host.worst_energy_error
            );
            // (c) Rungs in range, the host's, and the block scheme exercised.
            assert!(dev.rungs.iter().all(|&r| r <= steps.levels), "{what}: rungs {used:?}");
            assert!(same_rungs >= n - allowed, "{what}: {same_rungs}/{n} rungs as on the host");
            if steps.levels > 0 {
                assert!(used.len() >= 2, "{what}: one rung only: {used:?}");
            }
        }
    }
}

#[test]
fn cuda_simulations_match_the_host() {
    if let Some(exec) = open_or_skip(CudaExecutor::from_env, "ORRERY_REQUIRE_CUDA") {
        simulations_match_the_host(&exec);
    }
}

#[test]
fn wgpu_simulations_match_the_host() {
    if let Some(exec) = open_or_skip(WgpuExecutor::new, "ORRERY_REQUIRE_WGPU") {
        simulations_match_the_host(&exec);
    }
}

#[test]
fn the_integrator_compiles_with_nvrtc_for_sm_90() {
    use orrery_backend_cuda::{check_nvrtc, compile_module_to_ptx};
    if let Err(e) = check_nvrtc() {
        let required =
            ["ORRERY_REQUIRE_NVRTC", "ORRERY_REQUIRE_CUDA"].iter().any(|k| std::env::var(k).is_ok_and(|v| v == "1"));
        assert!(!required, "NVRTC is required but unavailable: {e}");
        orrery_core::skip::report("sim NVRTC compile", &e.to_string());
        return;
    }
    let ptx = compile_module_to_ptx(&MODULE, "compute_90").unwrap();
    for entry in ["sim_drift", "sim_kick"] {
        assert!(ptx.contains(&format!(".entry {entry}(")), "no entry {entry}");
    }
    assert!(!ptx.contains("fma.rn.f32"), "products must not be contracted");
}
