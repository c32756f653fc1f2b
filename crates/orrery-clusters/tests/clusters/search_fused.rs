//! The fused lattice search: byte-identical search output, and the side buffer reduced to
//! the centroid family's cohesion and inertia.

use orrery_clusters::search::fused::reduce_member_distances;
use orrery_clusters::synth::gaussian_queries;
use orrery_clusters::{CentroidParams, LatticeIndex, Metric, Vectors, centroid_stats};

use crate::common::synth;

fn bytes(nn: &orrery_clusters::Neighbors) -> Vec<u8> {
    let mut b: Vec<u8> = nn.rows.iter().flat_map(|r| r.to_le_bytes()).collect();
    b.extend(nn.scores.iter().flat_map(|s| s.to_bits().to_le_bytes()));
    b
}

#[test]
fn fused_search_output_is_byte_identical_to_the_unfused_path() {
    let data = synth(25, 9, 40.0, 31);
    let c = data.clusters().unwrap();
    let lattice = LatticeIndex::new(c).unwrap();
    let cs = centroid_stats(&c, &CentroidParams::default()).unwrap();
    let qv = gaussian_queries(&data, 60, 0.2, 8);
    let q = Vectors::new(&qv, 9).unwrap();
    for metric in [Metric::L2, Metric::InnerProduct] {
        for (k, nprobe) in [(5, 1), (10, 4), (128, 25)] {
            let plain = lattice.search(&q, k, nprobe, metric).unwrap();
            let (fused, side) = lattice.search_fused(&q, k, nprobe, metric).unwrap();
            assert_eq!(bytes(&plain), bytes(&fused), "k {k}, nprobe {nprobe}, {metric:?}");
            // Exactly the members of probed clusters were measured, with the centroid
            // family's bits.
            let mut probed = vec![false; c.len()];
            for cl in 0..c.len() {
                let written = c.range(cl).filter(|&r| !side.member_distance[r].is_nan()).count();
                assert!(written == 0 || written == c.size(cl), "cluster {cl}: {written} of {}", c.size(cl));
                probed[cl] = written > 0;
                assert_eq!(side.scored[cl] as usize, written);
                for r in c.range(cl).filter(|&r| !side.member_distance[r].is_nan()) {
                    assert_eq!(side.member_distance[r].to_bits(), cs.member_distance[r].to_bits());
                }
            }
            if nprobe == 25 {
                assert!(probed.iter().all(|&p| p));
                for cl in 0..c.len() {
                    let (a, b) = (side.cohesion[cl], cs.cohesion[cl]);
                    assert!((a - b).abs() <= 1e-12 * b, "cohesion {cl}: {a} {b}");
                    let (a, b) = (side.inertia[cl], cs.inertia[cl]);
                    assert!((a - b).abs() <= 1e-12 * b, "inertia {cl}: {a} {b}");
                }
            } else {
                for cl in (0..c.len()).filter(|&cl| !probed[cl]) {
                    assert!(side.cohesion[cl].is_nan() && side.inertia[cl].is_nan() && side.scored[cl] == 0);
                }
            }
        }
    }
}

#[test]
fn the_reduction_skips_nan_entries() {
    let v = [0.0f32; 5];
    let c = orrery_clusters::Clusters::new(&v, 1, &[0, 3, 3, 5]).unwrap();
    let s = reduce_member_distances(&c, vec![1.0, f64::NAN, 3.0, f64::NAN, f64::NAN]).unwrap();
    assert_eq!((s.scored.as_slice(), s.cohesion[0], s.inertia[0]), (&[2u32, 0, 0][..], 2.0, 10.0));
    assert!(s.cohesion[1].is_nan() && s.cohesion[2].is_nan() && s.inertia[2].is_nan());
    assert!(reduce_member_distances(&c, vec![0.0; 4]).is_err());
}
