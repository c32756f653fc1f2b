//! sigma against the exact lower median of the pairwise distances.

use orrery_clusters::scale::{SIGMA_BINS, bin_of, ranked_value};
use orrery_clusters::{CentroidParams, Clusters, centroid_stats, scale_stats};

use crate::common::{members, pair_distances, synth};

fn check_sigma(c: &Clusters<'_>) {
    let cs = centroid_stats(c, &CentroidParams::default()).unwrap();
    let s = scale_stats(c, &cs).unwrap();
    for k in 0..c.len() {
        let mut d = pair_distances(&members(c, k));
        let m = d.len() as u64;
        assert_eq!(s.pair_count[k], m);
        assert_eq!(s.histogram_of(k).iter().sum::<u64>(), m);
        if m == 0 {
            continue;
        }
        d.sort_by(f64::total_cmp);
        let lower_median = d[(m.div_ceil(2) - 1) as usize];
        let h = 2.0 * cs.max_radius[k] / SIGMA_BINS as f64;
        assert_eq!(s.bin_width[k], h);
        // The stated approximation: within one bin width of the lower median.
        assert!(
            (s.sigma[k] - lower_median).abs() <= h * (1.0 + 1e-9),
            "cluster {k}: sigma {} against median {lower_median}, bin width {h}",
            s.sigma[k]
        );
        // The histogram equals the reference binning.
        let mut hist = vec![0u64; SIGMA_BINS];
        for &v in &d {
            hist[bin_of(v, 0.0, h, SIGMA_BINS)] += 1;
        }
        assert_eq!(s.histogram_of(k), hist.as_slice(), "histogram of cluster {k}");
    }
}

#[test]
fn sigma_is_within_one_bin_of_the_lower_median() {
    let data = synth(20, 5, 40.0, 3);
    check_sigma(&data.clusters().unwrap());
}

#[test]
fn sigma_of_a_cluster_of_many_tiles() {
    // 700 members: 11 tiles of 64, 121 tile pairs decoded through the prefix sum.
    let data = orrery_clusters::synth::gaussian_clusters(&orrery_clusters::synth::SynthParams {
        median_size: 700.0,
        size_sigma: 0.0,
        ..orrery_clusters::synth::SynthParams::new(3, 4)
    })
    .unwrap();
    check_sigma(&data.clusters().unwrap());
}

#[test]
fn interpolation_inside_the_median_bin() {
    // Four values in bin 2 of width 1, ranks 3..=6 overall: rank 4 is the second of
    // four in the bin, interpolated at 2 + 1.5 / 4.
    let counts = [1u64, 1, 4, 0, 2];
    assert_eq!(ranked_value(&counts, 1.0, 4), Some(2.0 + 1.5 / 4.0));
    assert_eq!(ranked_value(&counts, 1.0, 1), Some(0.5));
    assert_eq!(ranked_value(&counts, 2.0, 8), Some(2.0 * (4.0 + 1.5 / 2.0)));
    assert_eq!(ranked_value(&counts, 1.0, 9), None);
    // 1-D members {0, 1, 3}: distances {1, 2, 3}, lower median 2; r_max = 5/3.
    let c = Clusters::new(&[0.0, 1.0, 3.0], 1, &[0, 3]).unwrap();
    let s = scale_stats(&c, &centroid_stats(&c, &CentroidParams::default()).unwrap()).unwrap();
    assert!((s.sigma[0] - 2.0).abs() <= s.bin_width[0], "{} {}", s.sigma[0], s.bin_width[0]);
}
