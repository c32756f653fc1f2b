//! The diversity family against all pairwise distances listed.

use orrery_clusters::diversity::DIVERSITY_BINS;
use orrery_clusters::diversity_stats;

use crate::common::{TOL, assert_close, mean_std_skew, members, pair_distances, synth};

#[test]
fn diversity_family_matches_the_listed_pairs() {
    for (clusters, median, seed) in [(20usize, 20.0, 1u64), (3, 400.0, 2)] {
        let data = synth(clusters, 5, median, seed);
        let c = data.clusters().unwrap();
        let s = diversity_stats(&c).unwrap();
        for k in 0..c.len() {
            let d = pair_distances(&members(&c, k));
            assert_eq!(s.pair_count[k], d.len() as u64);
            if d.is_empty() {
                continue;
            }
            let (m, sd, skew) = mean_std_skew(&d);
            assert_close("mean distance", k, s.mean_distance[k], m, TOL);
            assert_close("distance std", k, s.distance_std[k], sd, 1e-7);
            assert_close("distance skew", k, s.distance_skew[k], skew, 1e-6);
            assert_close("distance cv", k, s.distance_cv[k], sd / m, 1e-7);
            let (lo, hi) = d.iter().fold((f64::INFINITY, 0.0f64), |(a, b), &v| (a.min(v), b.max(v)));
            assert_close("min distance", k, s.min_distance[k], lo, TOL);
            assert_close("max distance", k, s.max_distance[k], hi, TOL);
            let w = (hi - lo) / DIVERSITY_BINS as f64;
            let mut hist = [0u64; DIVERSITY_BINS];
            for &v in &d {
                hist[(((v - lo) / w) as usize).min(DIVERSITY_BINS - 1)] += 1;
            }
            assert_eq!(s.histogram[k], hist, "histogram of cluster {k}");
            let h: f64 = hist
                .iter()
                .filter(|&&b| b > 0)
                .map(|&b| {
                    let p = b as f64 / d.len() as f64;
                    -p * p.log2()
                })
                .sum();
            assert_close("entropy", k, s.entropy[k], h / 20f64.log2(), TOL);
            assert_close("perplexity", k, s.perplexity[k], h.exp2(), TOL);
        }
    }
}

#[test]
fn hand_computed_diversity_of_three_points() {
    // 1-D members {0, 1, 3}: distances 1, 3, 2 → mean 2, population std sqrt(2/3),
    // skew 0, min 1, max 3; bins of width 0.1: 1 → bin 0, 2 → bin 10, 3 → bin 19.
    let c = orrery_clusters::Clusters::new(&[0.0, 1.0, 3.0], 1, &[0, 3]).unwrap();
    let s = diversity_stats(&c).unwrap();
    assert_eq!((s.pair_count[0], s.mean_distance[0], s.min_distance[0], s.max_distance[0]), (3, 2.0, 1.0, 3.0));
    assert!((s.distance_std[0] - (2.0f64 / 3.0).sqrt()).abs() < 1e-15 && s.distance_skew[0].abs() < 1e-12);
    let mut want = [0u64; DIVERSITY_BINS];
    (want[0], want[10], want[19]) = (1, 1, 1);
    assert_eq!(s.histogram[0], want);
    assert!((s.entropy[0] - 3f64.log2() / 20f64.log2()).abs() < 1e-15);
    assert!((s.perplexity[0] - 3.0).abs() < 1e-12);
}
