//! Results do not depend on scheduling: every family and every search gives the same
//! bits on 1, 2 and 7 threads.

use orrery_clusters::synth::gaussian_queries;
use orrery_clusters::{
    CentroidParams, IvfIndex, IvfParams, LatticeIndex, Metric, Vectors, cluster_statistics, exact_search,
};

use crate::common::bits;

fn on_threads<T: Send>(n: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap().install(f)
}

#[test]
fn statistics_and_searches_are_bitwise_equal_on_any_thread_count() {
    // One cluster beyond a member chunk (4,096) so the merges of partials are exercised.
    let data = orrery_clusters::synth::gaussian_clusters(&orrery_clusters::synth::SynthParams {
        median_size: 30.0,
        size_sigma: 1.6,
        seed: 17,
        ..orrery_clusters::synth::SynthParams::new(30, 4)
    })
    .unwrap();
    let c = data.clusters().unwrap();
    let qv = gaussian_queries(&data, 33, 0.2, 3);
    let q = Vectors::new(&qv, 4).unwrap();
    let run = || {
        let s = cluster_statistics(&c, &CentroidParams::default()).unwrap();
        let e = exact_search(&c.vectors(), &q, 16, Metric::L2).unwrap();
        let ivf = IvfIndex::build(&c.vectors(), &IvfParams { nlist: 10, iterations: 4, seed: 5 }).unwrap();
        let i = ivf.search(&q, 16, 3, Metric::InnerProduct).unwrap();
        let (f, side) = LatticeIndex::new(c).unwrap().search_fused(&q, 16, 4, Metric::L2).unwrap();
        bits(&(s, e, ivf, i, f, side))
    };
    let one = on_threads(1, run);
    assert_eq!(one, on_threads(2, run));
    assert_eq!(one, on_threads(7, run));
}
