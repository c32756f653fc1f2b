//! The device backend's kernels against the CPU reference ([`orrery_sim::steps`] in f32):
//! rungs and velocities bit for bit, positions after a drift bit for bit; and the CUDA
//! source compiles with NVRTC. A missing executor is reported as a skip, or fails under
//! `ORRERY_REQUIRE_CUDA=1` / `ORRERY_REQUIRE_WGPU=1`.

use orrery_backend_cuda::CudaExecutor;
use orrery_backend_wgpu::WgpuExecutor;
use orrery_core::GpuExecutor;
use orrery_sim::backend::device::{Device, MODULE};
use orrery_sim::steps::{Kick, TimeSteps, drift, kick_body};
use orrery_sim::{Backend, State, ic};
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
