//! Multipoles against their definitions, node by node, in f64.

use orrery_core::sfc::Curve;
use orrery_traverse::solver::BarnesHut;
use orrery_traverse::{Gravity, Opening};
use orrery_tree_build::Shape;

use crate::clouds::clustered;

fn check_shape(shape: Shape) {
    let set = clustered(3000, 7);
    let mut bh = BarnesHut::new(Gravity::plummer(0.01), Opening::safe(0.5));
    (bh.shape, bh.bucket) = (shape, 8);
    let p = bh.prepare(&set.view().unwrap()).unwrap();
    let (view, b, mp) = (&p.view, &p.bodies, &p.multipoles);
    assert_eq!(mp.len(), view.num_nodes());
    for node in 0..view.num_nodes() as u32 {
        let k = node as usize;
        let range = view.particles(node);
        let mass: f64 = range.clone().map(|j| b.m[j as usize]).sum();
        let scale = mass.max(1e-300);
        assert!((mp.mass[k] - mass).abs() <= 1e-12 * scale, "node {node}: mass {} vs {mass}", mp.mass[k]);
        if range.is_empty() {
            assert_eq!(mp.com[k], view.centres()[k]);
            assert_eq!((mp.quad[k], mp.extent[k]), ([0.0; 6], 0.0));
            continue;
        }
        let com: Vec<f64> = (0..3)
            .map(|a| range.clone().map(|j| b.m[j as usize] * b.position(j as usize)[a]).sum::<f64>() / mass)
            .collect();
        let size = view.half_extents()[k].iter().fold(0.0f64, |m, &h| m.max(h));
        for (a, c) in com.iter().enumerate() {
            assert!((mp.com[k][a] - c).abs() <= 1e-12 * size.max(1.0), "node {node} com axis {a}");
        }
        // Q_ab = sum m (3 d_a d_b - r^2 delta_ab) about the centre of mass.
        let mut q = [0.0f64; 6];
        let mut far = 0.0f64;
        for j in range.clone() {
            let p = b.position(j as usize);
            let d = [p[0] - mp.com[k][0], p[1] - mp.com[k][1], p[2] - mp.com[k][2]];
            let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
            far = far.max(r2.sqrt());
            let m = b.m[j as usize];
            let pairs = [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)];
            for (slot, (x, y)) in pairs.into_iter().enumerate() {
                q[slot] += m * (3.0 * d[x] * d[y] - if x == y { r2 } else { 0.0 });
            }
        }
        let qscale = mass * size * size;
        for (s, (got, want)) in mp.quad[k].iter().zip(q).enumerate() {
            assert!((got - want).abs() <= 1e-10 * qscale.max(1e-300), "node {node} Q[{s}] {got} vs {want}");
        }
        assert!((mp.extent[k] - far).abs() <= 1e-12 * size.max(1.0), "node {node} extent");
        // Traceless by construction.
        assert!((mp.quad[k][0] + mp.quad[k][3] + mp.quad[k][5]).abs() <= 1e-10 * qscale.max(1e-300));
    }
}

#[test]
fn multipoles_match_their_definitions_on_octrees() {
    check_shape(Shape::Octree(Curve::Hilbert));
    check_shape(Shape::Octree(Curve::Morton));
}

#[test]
fn multipoles_match_their_definitions_on_the_binary_tree() {
    check_shape(Shape::Binary);
}
