//! GPU direct summation ([`orrery_traverse::gpu`]) against the CPU f64 reference, on every
//! available GPU executor — CUDA (`gpu_direct::cuda::<case>`) when a device is present
//! (with `ORRERY_REQUIRE_CUDA=1` a missing device fails) and wgpu (`gpu_direct::wgpu::
//! <case>`, lavapipe in CI; `ORRERY_REQUIRE_WGPU=1` makes a missing adapter fail). Skips
//! are reported with `orrery_core::skip::report`. Plus the NVRTC compile of the CUDA
//! module (`gpu_direct::kernels_compile_with_nvrtc_for_sm_90`, needs only libnvrtc;
//! `ORRERY_REQUIRE_NVRTC=1` makes its absence a failure).
//!
//! # Tolerances
//! The f32 kernels sum n terms in f32 (each addition rounds at 6e-8 of the partial sum;
//! about sqrt(n) of them accumulate for terms of varied sign, more where neighbours
//! cancel) with an approximate reciprocal square root (CUDA's `rsqrt.approx`: relative
//! error below 1.3e-7, so at most 4e-7 on a term's `inv^3`, possibly of one sign; WGSL's
//! `inverseSqrt`: 2 ulps). The CPU's f32 sum has the same roundings with an exact square
//! root; against the f64 reference on the 3000-body Plummer sphere its errors are median
//! 6.5e-7, p99 1.8e-6, max 3.3e-6 (lavapipe's results equal the CPU's there). The GPU
//! gets about 5x that room, for the rsqrt's bias and for the different rounding of fused
//! multiply-adds: median below 3e-6, p99 below 2e-5, max below 1e-4, for accelerations
//! and potentials alike.

use orrery_core::{Error, GpuExecutor, ParticleSet};
use orrery_traverse::accuracy::{ErrorStats, acceleration_errors, gather_targets, potential_errors};
use orrery_traverse::direct::{Targets, direct_sum_f64, evenly_spaced_targets};
use orrery_traverse::gpu::{self, DeviceBodies, DeviceForces, direct_sum_gpu, direct_sum_gpu_f64};
use orrery_traverse::{Forces, Gravity, Softening, ic};

use crate::common::{max_rel_diff, view};

/// Plummer softening, none, and the clamped kernel with `2h = 0.1` (many clamped pairs).
const SOFTENINGS: [Softening<f32>; 3] = [Softening::Plummer(0.01), Softening::Plummer(0.0), Softening::Clamped(0.05)];

/// The f32 kernel on `bodies` for `targets` (all for `None`), downloaded.
fn gpu_sum<E: GpuExecutor>(
    exec: &E,
    bodies: &ParticleSet<f32>,
    targets: Option<&[u32]>,
    gravity: &Gravity<f32>,
) -> Forces<f32> {
    let d = DeviceBodies::upload(exec, &view(bodies)).unwrap();
    let count = targets.map_or(bodies.len(), <[u32]>::len);
    let mut out = DeviceForces::alloc(exec, count).unwrap();
    let t = targets.map(|t| exec.upload(t).unwrap());
    direct_sum_gpu(exec, &d, t.as_ref(), gravity, &mut out).unwrap_or_else(|e| panic!("{}: {e}", exec.name()));
    out.download(exec).unwrap()
}

fn assert_within(label: &str, a: ErrorStats, p: ErrorStats) {
    for (what, s) in [("acceleration", a), ("potential", p)] {
        assert!(s.median < 3e-6 && s.p99 < 2e-5 && s.max < 1e-4, "{label}: {what} errors {s:?}");
    }
}

/// The f32 kernel against the CPU f64 reference.
fn check_against_reference<E: GpuExecutor>(exec: &E, label: &str, bodies: &ParticleSet<f32>, gravity: &Gravity<f32>) {
    let reference = direct_sum_f64(&view(bodies), Targets::All, &gravity.cast()).unwrap();
    let f = gpu_sum(exec, bodies, None, gravity);
    assert_within(label, acceleration_errors(&reference, &f).unwrap(), potential_errors(&reference, &f).unwrap());
}

// ---- cases (generic over the executor) ---------------------------------------------------

/// A Plummer sphere of 3000 bodies (not a multiple of the 128-body tile or the 512-target
/// block), every softening.
pub fn f32_matches_the_f64_reference<E: GpuExecutor>(exec: &E) {
    let bodies = ic::plummer(3000, 8).unwrap().bodies::<f32>();
    for softening in SOFTENINGS {
        check_against_reference(exec, &format!("plummer 3000 {softening:?}"), &bodies, &Gravity { g: 1.0, softening });
    }
    let bodies = ic::hernquist(2000, 1.0, 3).unwrap().bodies::<f32>();
    check_against_reference(exec, "hernquist 2000, G = 2", &bodies, &Gravity { g: 2.0, softening: SOFTENINGS[0] });
}

/// Sizes around the tile (128) and block (512) bounds; one and two bodies exactly.
pub fn odd_sizes_match_the_reference<E: GpuExecutor>(exec: &E) {
    for n in [3, 127, 128, 129, 511, 512, 513, 1001] {
        let bodies = ic::uniform_cube(n, 1.0, n as u64).unwrap().bodies::<f32>();
        for softening in SOFTENINGS {
            check_against_reference(exec, &format!("cube {n} {softening:?}"), &bodies, &Gravity { g: 1.0, softening });
        }
    }
    // One body: nothing acts on it (the self pair is excluded, also when softened).
    let one = ParticleSet { x: vec![0.25f32], y: vec![-0.5], z: vec![2.0], mass: vec![3.0] };
    for softening in SOFTENINGS {
        let f = gpu_sum(exec, &one, None, &Gravity { g: 1.0, softening });
        assert_eq!((f.acc(0), f.pot[0]), ([0.0; 3], 0.0), "one body {softening:?}");
    }
    // Two bodies at distance 1 (masses 1 and 2, G = 1): a_0 = 2, pot_0 = -2, a_1 = -1,
    // pot_1 = -1, to the rsqrt's 2^-22.9 (tolerance 1e-6).
    let two = ParticleSet { x: vec![0.0f32, 1.0], y: vec![0.0; 2], z: vec![0.0; 2], mass: vec![1.0, 2.0] };
    let f = gpu_sum(exec, &two, None, &Gravity::plummer(0.0)).to_f64();
    let expect = [2.0, -2.0, -1.0, -1.0];
    for (got, want) in [f.ax[0], f.pot[0], f.ax[1], f.pot[1]].into_iter().zip(expect) {
        assert!((got - want).abs() < 1e-6, "two bodies: {f:?}");
    }
    assert_eq!((f.ay[0], f.az[1]), (0.0, 0.0));
}

/// Coincident bodies: unsoftened they do not interact, softened they add `-m / eps` to
/// each other's potential (the CPU rule).
pub fn coincident_bodies_follow_the_pair_rule<E: GpuExecutor>(exec: &E) {
    let s = ParticleSet { x: vec![0.0f32, 0.0, 1.0], y: vec![0.0; 3], z: vec![0.0; 3], mass: vec![1.0; 3] };
    for eps in [0.0f32, 0.5] {
        let g = Gravity::plummer(eps);
        let reference = direct_sum_f64(&view(&s), Targets::All, &g.cast()).unwrap();
        let f = gpu_sum(exec, &s, None, &g).to_f64();
        assert!(max_rel_diff(&f, &reference) < 1e-6, "eps {eps}: {f:?} vs {reference:?}");
    }
}

/// Target lists (evenly spaced, unsorted with repeats, one target) against the reference
/// at those targets and against the full GPU result there (the same sums in the same
/// order; the kernels may pick another of their equivalent inner loops per tile, so equal
/// to a few ulps: 1e-6).
pub fn target_subsets_match<E: GpuExecutor>(exec: &E) {
    let bodies = ic::plummer(2500, 31).unwrap().bodies::<f32>();
    let mut shuffled = evenly_spaced_targets(2500, 300);
    shuffled.extend([2499, 0, 5, 5, 1234]);
    shuffled.reverse();
    for softening in SOFTENINGS {
        let g = Gravity { g: 1.0, softening };
        let full = gpu_sum(exec, &bodies, None, &g);
        for targets in [evenly_spaced_targets(2500, 1000), shuffled.clone(), vec![77]] {
            let label = format!("{} targets {softening:?}", targets.len());
            let sub = gpu_sum(exec, &bodies, Some(&targets), &g);
            let reference = direct_sum_f64(&view(&bodies), Targets::Indices(&targets), &g.cast()).unwrap();
            assert_within(
                &label,
                acceleration_errors(&reference, &sub).unwrap(),
                potential_errors(&reference, &sub).unwrap(),
            );
            let d = max_rel_diff(&sub.to_f64(), &gather_targets(&full, &targets).unwrap().to_f64());
            assert!(d < 1e-6, "{label}: differs from the full result by {d}");
        }
    }
}

/// A device target index past the bodies gives zeros (a defined answer, never a fault).
pub fn out_of_range_device_targets_give_zeros<E: GpuExecutor>(exec: &E) {
    let bodies = ic::plummer(300, 2).unwrap().bodies::<f32>();
    let f = gpu_sum(exec, &bodies, Some(&[4, 300, u32::MAX, 7]), &Gravity::plummer(0.01));
    for k in [1, 2] {
        assert_eq!((f.acc(k), f.pot[k]), ([0.0; 3], 0.0), "target {k}");
    }
    assert!(f.pot[0] < 0.0 && f.pot[3] < 0.0);
}

/// The f64 kernel equals the CPU's f64 reference (the same operations in the same order,
/// correctly rounded: 1e-13 allows for nothing but a different last bit) on CUDA, and is
/// a typed `Unsupported` elsewhere.
pub fn f64_matches_the_cpu_reference_or_is_unsupported<E: GpuExecutor>(exec: &E) {
    let bodies = ic::plummer(1000, 4).unwrap().bodies::<f32>();
    let d = DeviceBodies::upload(exec, &view(&bodies)).unwrap();
    let mut out = DeviceForces::<E, f64>::alloc(exec, 1000).unwrap();
    match direct_sum_gpu_f64(exec, &d, None, &Gravity::plummer(0.01), &mut out) {
        Err(Error::Unsupported { .. }) => {
            orrery_core::skip::report(&format!("f64 direct sum on {}", exec.name()), "unsupported (typed error)");
        }
        Err(e) => panic!("{e}"),
        Ok(()) => {
            for softening in [Softening::Plummer(0.01), Softening::Plummer(0.0), Softening::Clamped(0.05)] {
                let g = Gravity { g: 1.0, softening };
                direct_sum_gpu_f64(exec, &d, None, &g, &mut out).unwrap();
                let reference = direct_sum_f64(&view(&bodies), Targets::All, &g).unwrap();
                let diff = max_rel_diff(&out.download(exec).unwrap(), &reference);
                assert!(diff < 1e-13, "f64 {softening:?}: {diff}");
                let targets = evenly_spaced_targets(1000, 77);
                let t = exec.upload(&targets).unwrap();
                let mut sub = DeviceForces::<E, f64>::alloc(exec, 77).unwrap();
                direct_sum_gpu_f64(exec, &d, Some(&t), &g, &mut sub).unwrap();
                let reference = direct_sum_f64(&view(&bodies), Targets::Indices(&targets), &g).unwrap();
                let diff = max_rel_diff(&sub.download(exec).unwrap(), &reference);
                assert!(diff < 1e-13, "f64 targets {softening:?}: {diff}");
            }
        }
    }
}

/// Bad input gets typed errors before anything is launched.
pub fn bad_input_gets_typed_errors<E: GpuExecutor>(exec: &E) {
    let g = Gravity::plummer(0.1f32);
    let v = [0.0f32, 1.0, 2.0];
    let zero_mass = orrery_core::ParticlesView::new(&v, &v, &v, &[1.0, 0.0, 1.0]).unwrap();
    assert!(matches!(DeviceBodies::upload(exec, &zero_mass), Err(Error::InvalidArgument { what: "mass", .. })));
    let empty = orrery_core::ParticlesView::<f32>::new(&[], &[], &[], &[]).unwrap();
    assert!(matches!(DeviceBodies::upload(exec, &empty), Err(Error::EmptyInput { .. })));
    let b = ParticleSet { x: v.to_vec(), y: v.to_vec(), z: v.to_vec(), mass: vec![1.0; 3] };
    let mut d = DeviceBodies::upload(exec, &view(&b)).unwrap();
    let mut short = DeviceForces::alloc(exec, 2).unwrap();
    assert!(matches!(direct_sum_gpu(exec, &d, None, &g, &mut short), Err(Error::LengthMismatch { .. })));
    let mut out = DeviceForces::alloc(exec, 3).unwrap();
    let bad = Gravity { g: 1.0f32, softening: Softening::Plummer(-1.0) };
    assert!(matches!(direct_sum_gpu(exec, &d, None, &bad, &mut out), Err(Error::InvalidArgument { .. })));
    let nan = Gravity { g: f32::NAN, softening: Softening::Plummer(0.1) };
    assert!(matches!(direct_sum_gpu(exec, &d, None, &nan, &mut out), Err(Error::NonFiniteValue { .. })));
    let targets = exec.upload(&[0u32, 1]).unwrap();
    assert!(matches!(direct_sum_gpu(exec, &d, Some(&targets), &g, &mut out), Err(Error::LengthMismatch { .. })));
    d.y = exec.upload(&[0.0f32; 2]).unwrap();
    assert!(matches!(direct_sum_gpu(exec, &d, None, &g, &mut out), Err(Error::LengthMismatch { .. })));
    let mut out64 = DeviceForces::<E, f64>::alloc(exec, 3).unwrap();
    let r = direct_sum_gpu_f64(exec, &d, None, &g.cast(), &mut out64);
    assert!(matches!(r, Err(Error::LengthMismatch { .. } | Error::Unsupported { .. })), "{r:?}");
}

/// Declares one `#[test]` per case for the executor returned by `$exec()`.
macro_rules! gpu_tests {
    ($exec:ident) => {
        gpu_tests!(@each $exec,
            f32_matches_the_f64_reference, odd_sizes_match_the_reference,
            coincident_bodies_follow_the_pair_rule, target_subsets_match,
            out_of_range_device_targets_give_zeros, f64_matches_the_cpu_reference_or_is_unsupported,
            bad_input_gets_typed_errors);
    };
    (@each $exec:ident, $($case:ident),+) => {
        $(
            #[test]
            fn $case() {
                let _guard = crate::common::serial();
                if let Some(e) = crate::common::$exec() {
                    super::$case(e);
                }
            }
        )+
    };
}

mod cuda {
    gpu_tests!(cuda);
}

mod wgpu {
    gpu_tests!(wgpu);
}

/// Every entry point of every module compiles for sm_90 with NVRTC alone (PTX for
/// compute_90 and a CUBIN through ptxas, so register and shared-memory limits are
/// checked) without spilling, and the direct sum's f32 entries use the one-instruction
/// `rsqrt.approx.ftz.f32`.
#[test]
fn kernels_compile_with_nvrtc_for_sm_90() {
    use orrery_backend_cuda::{check_nvrtc, compile_module_to_cubin, compile_module_to_ptx};
    if let Err(e) = check_nvrtc() {
        let required =
            ["ORRERY_REQUIRE_NVRTC", "ORRERY_REQUIRE_CUDA"].iter().any(|k| std::env::var(k).is_ok_and(|v| v == "1"));
        assert!(!required, "NVRTC is required but unavailable: {e}");
        orrery_core::skip::report("traverse NVRTC compile", &e.to_string());
        return;
    }
    for module in &gpu::KERNEL_MODULES {
        let ptx = compile_module_to_ptx(module, "compute_90").unwrap_or_else(|e| panic!("{}: {e}", module.name));
        let entries = gpu::KERNEL_ENTRIES.iter().find(|(m, _)| *m == module.name).unwrap().1;
        for entry in entries {
            assert!(ptx.contains(&format!(".entry {entry}(")), "{}: no entry {entry}", module.name);
        }
        if module.name == "traverse/direct" {
            assert!(ptx.contains("rsqrt.approx.ftz.f32"), "{}: the f32 kernels' rsqrt", module.name);
        }
        assert!(!ptx.contains(".local"), "{}: nothing spills to local memory", module.name);
        let cubin = compile_module_to_cubin(module, "sm_90").unwrap_or_else(|e| panic!("{}: {e}", module.name));
        assert!(cubin.starts_with(b"\x7fELF"));
    }
}
