//! The GPU walks against the CPU walks, on every available executor: CUDA when a device
//! is present (`ORRERY_REQUIRE_CUDA=1` makes a missing device a failure) and wgpu (with
//! and without subgroups; lavapipe in CI, `ORRERY_REQUIRE_WGPU=1`). Without an executor a
//! test reports its skip (`orrery_core::skip::report`) and passes.
//!
//! The walks read the CPU's node data (uploaded), so what is compared is the walk alone:
//! the per-target interaction counts equal the CPU's exactly (independent and coherent
//! against `walk_targets`, group against `walk_groups(32)`), the coherent walk's results
//! equal the independent walk's bit for bit, and forces agree with the CPU's f32 walk
//! within `FORCE_TOLERANCE`.

use orrery_backend_cuda::{check_nvrtc, compile_module_to_ptx};
use orrery_core::sfc::Curve;
use orrery_core::{Error, GpuExecutor};
use orrery_traverse::gpu::walk::{ENTRIES, GpuWalk, ScatteredOutput, WALK, WalkInput, WalkOutput, run_walk, scatter};
use orrery_traverse::solver::{BarnesHut, Prepared};
use orrery_traverse::walk::{walk_groups, walk_targets};
use orrery_traverse::{Expansion, Forces, Gravity, Interactions, Mac, Opening};
use orrery_tree_build::Shape;

use crate::clouds::{clustered, to_f32};
use crate::common::{cuda, serial, wgpu, wgpu_without_subgroups};

/// Relative tolerance on `|a_gpu - a_cpu| / |a_cpu|` per target: the GPU's `rsqrt` is
/// within 2 ulp of `1 / sqrt` and its sums use fused multiply-adds, so each of a
/// target's few hundred terms differs by a few ulp (1e-7 each), and cancellation
/// between terms of opposite sign in a weak total field amplifies that, measured below
/// 1e-5 on these clouds.
const FORCE_TOLERANCE: f64 = 1e-4;

/// The prepared data on the device.
struct Uploaded<E: GpuExecutor> {
    bodies: E::Buffer<f32>,
    centres: E::Buffer<f32>,
    masses: E::Buffer<f32>,
    quads: E::Buffer<f32>,
    links: E::Buffer<u32>,
    order: E::Buffer<u32>,
}

fn upload<E: GpuExecutor>(exec: &E, p: &Prepared<f32>) -> Uploaded<E> {
    let b = &p.bodies;
    let packed: Vec<f32> = (0..b.len()).flat_map(|i| [b.x[i], b.y[i], b.z[i], b.m[i]]).collect();
    let flat = |v: &[[f32; 4]]| v.iter().flatten().copied().collect::<Vec<f32>>();
    let links: Vec<u32> = p.nodes.links.iter().flatten().copied().collect();
    Uploaded {
        bodies: exec.upload(&packed).unwrap(),
        centres: exec.upload(&flat(&p.nodes.centres)).unwrap(),
        masses: exec.upload(&flat(&p.nodes.masses)).unwrap(),
        quads: exec.upload(&flat(&p.nodes.quads)).unwrap(),
        links: exec.upload(&links).unwrap(),
        order: exec.upload(&b.order).unwrap(),
    }
}

fn input<E: GpuExecutor>(u: &Uploaded<E>) -> WalkInput<'_, E> {
    WalkInput {
        bodies: (&u.bodies).into(),
        centres: (&u.centres).into(),
        masses: (&u.masses).into(),
        quads: (&u.quads).into(),
        links: (&u.links).into(),
    }
}

fn close(gpu: &Forces<f32>, cpu: &Forces<f32>, what: &str) {
    crate::common::assert_close(gpu, cpu, FORCE_TOLERANCE, true, what);
}

fn bits(f: &Forces<f32>) -> Vec<u32> {
    f.ax.iter().chain(&f.ay).chain(&f.az).chain(&f.pot).map(|v| v.to_bits()).collect()
}

fn check_case<E: GpuExecutor>(exec: &E, name: &str, n: usize, shape: Shape, mac: Mac, expansion: Expansion) {
    let set = to_f32(&clustered(n, n as u64 + 3));
    let mut bh = BarnesHut::new(Gravity::plummer(0.01f32), Opening { mac, theta: 0.6 });
    (bh.shape, bh.expansion) = (shape, expansion);
    let p = bh.prepare(&set.view().unwrap()).unwrap();
    let (cpu, cpu_counts) = walk_targets(&p.nodes, &p.bodies, &bh.gravity, expansion).unwrap();
    let groups = |size| walk_groups(&p.nodes, &p.bodies, &bh.gravity, expansion, size).unwrap();
    let u = upload(exec, &p);
    let mut out = WalkOutput::new(exec, n).unwrap();
    let mut results: Vec<(GpuWalk, Forces<f32>, Interactions)> = Vec::new();
    for walk in GpuWalk::ALL {
        run_walk(exec, walk, &input(&u), n, &bh.gravity, expansion, &mut out).unwrap();
        let (f, c) = out.download(exec).unwrap();
        results.push((walk, f, c));
    }
    let what = |w: GpuWalk| format!("{name}: {shape:?} {mac:?} {expansion:?} n {n} {w:?}");
    for (walk, f, c) in &results {
        match walk {
            GpuWalk::Independent | GpuWalk::Coherent => {
                assert_eq!(c, &cpu_counts, "{}", what(*walk));
                close(f, &cpu, &what(*walk));
            }
            GpuWalk::Group | GpuWalk::Group64 => {
                let (cpu_group, group_counts) = groups(walk.group_size().unwrap());
                assert_eq!(c, &group_counts, "{}", what(*walk));
                close(f, &cpu_group, &what(*walk));
            }
        }
    }
    assert_eq!(bits(&results[0].1), bits(&results[1].1), "{}: coherent != independent", what(GpuWalk::Coherent));
    // Scattered back to input order: the CPU solver's counts.
    let mut scattered = ScatteredOutput::new(exec, n).unwrap();
    run_walk(exec, GpuWalk::Coherent, &input(&u), n, &bh.gravity, expansion, &mut out).unwrap();
    scatter(exec, &out, &u.order, &mut scattered).unwrap();
    let (f, c) = scattered.download(exec, n).unwrap();
    let solved = bh.solve(&set.view().unwrap()).unwrap();
    assert_eq!(c, solved.interactions, "{}: scattered counts", what(GpuWalk::Coherent));
    close(&f, &solved.forces, &what(GpuWalk::Coherent));
}

fn check_all<E: GpuExecutor>(exec: &E, name: &str) {
    for n in [1usize, 2, 31, 33, 1000, 3001] {
        check_case(exec, name, n, Shape::Octree(Curve::Hilbert), Mac::Safe, Expansion::Quadrupole);
    }
    check_case(exec, name, 2500, Shape::Octree(Curve::Morton), Mac::Classic, Expansion::Monopole);
    check_case(exec, name, 2500, Shape::Binary, Mac::Safe, Expansion::Monopole);
    check_case(exec, name, 2500, Shape::Binary, Mac::Classic, Expansion::Quadrupole);
}

#[test]
fn cuda_walks_match_the_cpu() {
    let _guard = serial();
    if let Some(exec) = cuda() {
        check_all(exec, "cuda");
    }
}

#[test]
fn wgpu_walks_match_the_cpu() {
    let _guard = serial();
    if let Some(exec) = wgpu() {
        check_all(exec, "wgpu");
    }
}

#[test]
fn wgpu_walks_without_subgroups_match_the_cpu() {
    let _guard = serial();
    if let Some(exec) = wgpu_without_subgroups() {
        check_all(exec, "wgpu (no subgroups)");
    }
}

#[test]
fn bad_walk_input_is_rejected() {
    let _guard = serial();
    let Some(exec) = wgpu() else { return };
    let set = to_f32(&clustered(100, 1));
    let bh = BarnesHut::new(Gravity::plummer(0.01f32), Opening::safe(0.6));
    let p = bh.prepare(&set.view().unwrap()).unwrap();
    let u = upload(exec, &p);
    let mut out = WalkOutput::new(exec, 100).unwrap();
    let e = run_walk(exec, GpuWalk::Coherent, &input(&u), 99, &bh.gravity, Expansion::Quadrupole, &mut out);
    assert!(matches!(e, Err(Error::LengthMismatch { .. })), "{e:?}");
    let e = run_walk(exec, GpuWalk::Coherent, &input(&u), 0, &bh.gravity, Expansion::Quadrupole, &mut out);
    assert!(matches!(e, Err(Error::EmptyInput { .. })));
    let e = run_walk(exec, GpuWalk::Group, &input(&u), 100, &Gravity::plummer(-1.0), Expansion::Quadrupole, &mut out);
    assert!(matches!(e, Err(Error::InvalidArgument { what: "softening", .. })));
}

#[test]
fn walk_kernels_compile_with_nvrtc_for_sm_90() {
    if let Err(e) = check_nvrtc() {
        let required = std::env::var("ORRERY_REQUIRE_NVRTC").is_ok_and(|v| v == "1");
        assert!(!required, "ORRERY_REQUIRE_NVRTC=1 but NVRTC is missing: {e}");
        orrery_core::skip::report("traverse NVRTC compile test (ORRERY_REQUIRE_NVRTC not set)", &e.to_string());
        return;
    }
    let ptx = compile_module_to_ptx(&WALK, "compute_90").unwrap();
    for entry in ENTRIES {
        assert!(ptx.contains(entry), "PTX lacks {entry}");
    }
}
