//! The lattice search against the brute force over the probed clusters.

use orrery_clusters::centroid::centroids;
use orrery_clusters::synth::gaussian_queries;
use orrery_clusters::{LatticeIndex, Metric, Vectors, exact_search};

use crate::common::{all_rows, brute_force, dot, sq, synth};

#[test]
fn lattice_search_is_the_brute_force_over_the_top_clusters() {
    let data = synth(30, 10, 50.0, 14);
    let c = data.clusters().unwrap();
    let lattice = LatticeIndex::new(c).unwrap();
    assert_eq!(lattice.centroids(), centroids(&c).as_slice());
    let qv = gaussian_queries(&data, 40, 0.2, 5);
    let q = Vectors::new(&qv, 10).unwrap();
    let rows = all_rows(&c);
    for metric in [Metric::L2, Metric::InnerProduct] {
        for (k, nprobe) in [(1, 1), (10, 3), (64, 7), (128, 30)] {
            let nn = lattice.search(&q, k, nprobe, metric).unwrap();
            for (i, qr) in qv.chunks(10).enumerate() {
                let qf: Vec<f64> = qr.iter().map(|&x| f64::from(x)).collect();
                let key = |cl: usize| {
                    let mu = &lattice.centroids()[cl * 10..(cl + 1) * 10];
                    if metric == Metric::L2 { sq(&qf, mu) } else { -dot(&qf, mu) }
                };
                let mut order: Vec<usize> = (0..c.len()).collect();
                order.sort_by(|&a, &b| key(a).total_cmp(&key(b)).then(a.cmp(&b)));
                let cand: Vec<usize> = order[..nprobe].iter().flat_map(|&cl| c.range(cl)).collect();
                let want: Vec<u32> = brute_force(&rows, &cand, &qf, k, metric).iter().map(|w| w.0).collect();
                assert_eq!(nn.rows_of(i), want.as_slice(), "query {i}, k {k}, nprobe {nprobe}, {metric:?}");
            }
        }
        // All clusters probed: exact search.
        assert_eq!(lattice.search(&q, 25, 30, metric).unwrap(), exact_search(&c.vectors(), &q, 25, metric).unwrap());
    }
}
