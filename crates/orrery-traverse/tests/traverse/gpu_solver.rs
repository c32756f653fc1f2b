//! The whole GPU force evaluation ([`GpuBarnesHut`]: box, tree, view, upward pass, walk,
//! scatter) against the CPU solver, over two steps (a build, then an incremental update
//! of moved bodies), for every walk, on every available executor (see `gpu_walk` for
//! the skip rules).
//!
//! On CUDA the upward pass is bit-identical to the CPU, so the node data and the
//! interaction counts equal the CPU solver's exactly. WGSL's division and square root
//! are not correctly rounded, so on wgpu the node data agree within the upward pass's
//! tolerance (`gpu_upward`) and the counts are compared with the CPU walk over the
//! downloaded node data, exactly.

use orrery_core::sfc::Curve;
use orrery_core::{GpuExecutor, ParticleSet};
use orrery_traverse::gpu::{DeviceBodies, GpuBarnesHut, GpuWalk};
use orrery_traverse::solver::BarnesHut;
use orrery_traverse::walk::{walk_groups, walk_targets};
use orrery_traverse::{Expansion, Forces, Gravity, Opening};
use orrery_tree_build::Shape;

use crate::clouds::{clustered, to_f32};
use crate::common::{cuda, serial, wgpu};

const TOLERANCE: f64 = 1e-4;

fn close(gpu: &Forces<f32>, cpu: &Forces<f32>, what: &str) {
    crate::common::assert_close(gpu, cpu, TOLERANCE, false, what);
}

fn moved(set: &ParticleSet<f32>, step: usize) -> ParticleSet<f32> {
    let mut out = set.clone();
    for (i, x) in out.x.iter_mut().enumerate() {
        *x += 1e-3 * ((i * 7 + step) % 13) as f32 / 13.0;
    }
    out
}

fn check<E: GpuExecutor>(exec: &E, name: &str, bit_exact: bool) {
    for (shape, expansion) in [
        (Shape::Octree(Curve::Hilbert), Expansion::Quadrupole),
        (Shape::Octree(Curve::Morton), Expansion::Monopole),
        (Shape::Binary, Expansion::Quadrupole),
    ] {
        let mut bh = BarnesHut::new(Gravity::plummer(0.01f32), Opening::safe(0.6));
        (bh.shape, bh.expansion) = (shape, expansion);
        for walk in GpuWalk::ALL {
            let mut gpu = GpuBarnesHut::new(exec, bh, walk).unwrap();
            let first = to_f32(&clustered(3000, 5));
            for (step, set) in [first.clone(), moved(&first, 1)].into_iter().enumerate() {
                let what = format!("{name}: {shape:?} {expansion:?} {walk:?} step {step}");
                let device = DeviceBodies::upload(exec, &set.view().unwrap()).unwrap();
                let run = gpu.step(exec, &device).unwrap();
                assert!(run.converged, "{what}");
                let (forces, counts) = gpu.download(exec).unwrap();
                let p = bh.prepare(&set.view().unwrap()).unwrap();
                let nodes = gpu.download_nodes(exec).unwrap();
                let bodies = gpu.download_bodies(exec).unwrap();
                assert_eq!(bodies, p.bodies, "{what}: bodies in tree order");
                assert_eq!(nodes.links, p.nodes.links, "{what}: links");
                if bit_exact {
                    assert_eq!(nodes, p.nodes, "{what}: node data");
                }
                // The CPU walk over the GPU's node data, scattered to input order.
                let (cpu, cpu_counts) = match walk.group_size() {
                    Some(size) => walk_groups(&nodes, &bodies, &bh.gravity, expansion, size).unwrap(),
                    None => walk_targets(&nodes, &bodies, &bh.gravity, expansion).unwrap(),
                };
                let n = set.len();
                assert_eq!(counts.particle_particle, bodies.scatter(&cpu_counts.particle_particle, n, 0), "{what}");
                assert_eq!(counts.particle_cell, bodies.scatter(&cpu_counts.particle_cell, n, 0), "{what}");
                close(&forces, &bodies.scatter_forces(&cpu, n), &what);
            }
        }
    }
}

#[test]
fn cuda_solver_matches_the_cpu() {
    let _guard = serial();
    if let Some(exec) = cuda() {
        check(exec, "cuda", true);
    }
}

#[test]
fn wgpu_solver_matches_the_cpu() {
    let _guard = serial();
    if let Some(exec) = wgpu() {
        check(exec, "wgpu", false);
    }
}
