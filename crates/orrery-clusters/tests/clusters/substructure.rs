//! The two-means split and its statistics against the sequential reference.

use orrery_clusters::substructure::{LLOYD_ITERATIONS, two_means};
use orrery_clusters::{CentroidParams, Clusters, centroid_stats, substructure_stats};

use crate::common::{TOL, assert_close, dist, members, silhouette_ref, synth, two_means_ref};

#[test]
fn exactly_three_lloyd_iterations_seeded_at_the_first_and_last_member() {
    // A 1-D cluster on which Lloyd is still moving after 2, 3 and 4 iterations (found by
    // search): after 3 the sides are {13, 17, 16, 9, 7, 14} and {39, 18, 20}.
    let x = [13.0f32, 17.0, 16.0, 39.0, 9.0, 18.0, 7.0, 20.0, 14.0];
    let c = Clusters::new(&x, 1, &[0, 9]).unwrap();
    let split = two_means(&c);
    assert_eq!(LLOYD_ITERATIONS, 3);
    assert_eq!(split.labels, [0, 0, 0, 1, 0, 1, 0, 1, 0]);
    assert_eq!((split.centroid(0, 0), split.centroid(0, 1)), (&[59.0 / 5.0][..], &[47.0 / 2.0][..]));
    assert_eq!(split.sizes, [[6, 3]]);
    let xs = members(&c, 0);
    for iters in [2, 4] {
        assert_ne!(two_means_ref(&xs, iters).0, split.labels, "{iters} iterations must differ from 3 here");
    }
    assert_eq!(two_means_ref(&xs, 3).0, split.labels);
    let s = substructure_stats(&c, &centroid_stats(&c, &CentroidParams::default()).unwrap()).unwrap();
    let inertia_split: f64 =
        xs.iter().zip(&split.labels).map(|(v, &l)| (v[0] - split.centroid(0, l as usize)[0]).powi(2)).sum();
    assert_close("split inertia", 0, s.split_inertia[0], inertia_split, 1e-12);
    assert_eq!(s.split_balance[0], 3.0 / 9.0);
    assert_close("split separation", 0, s.split_separation[0], 23.5 - 11.8, 1e-12);
}

#[test]
fn substructure_family_matches_the_reference_on_synthetic_clusters() {
    // 300-ish members per cluster in places: the silhouette's row tiles (64 rows) and
    // member chunks are crossed.
    let data = synth(12, 6, 60.0, 5);
    let c = data.clusters().unwrap();
    let cs = centroid_stats(&c, &CentroidParams::default()).unwrap();
    let s = substructure_stats(&c, &cs).unwrap();
    for k in 0..c.len() {
        let xs = members(&c, k);
        let (labels, cents) = two_means_ref(&xs, 3);
        assert_eq!(&s.split.labels[c.range(k)], labels.as_slice(), "labels of cluster {k}");
        for side in 0..2 {
            for d in 0..c.dim() {
                assert_close("split centroid", k, s.split.centroid(k, side)[d], cents[side][d], TOL);
            }
        }
        let split_inertia: f64 = xs.iter().zip(&labels).map(|(x, &l)| dist(x, &cents[l as usize]).powi(2)).sum();
        assert_close("split inertia", k, s.split_inertia[k], split_inertia, TOL);
        assert_close("inertia ratio", k, s.inertia_ratio[k], split_inertia / cs.inertia[k], TOL);
        assert_close("silhouette", k, s.silhouette[k], silhouette_ref(&xs, &labels), TOL);
        let nb: usize = labels.iter().map(|&l| usize::from(l)).sum();
        assert_close("split balance", k, s.split_balance[k], nb.min(xs.len() - nb) as f64 / xs.len() as f64, 0.0);
        assert_close("split separation", k, s.split_separation[k], dist(&cents[0], &cents[1]), TOL);
    }
}

#[test]
fn two_separated_groups_have_a_small_inertia_ratio_and_a_high_silhouette() {
    // Two tight groups 10 apart in 2-D, first member in one and last in the other.
    let mut data = Vec::new();
    for i in 0..20 {
        let (cx, jitter) = if i % 2 == 0 { (0.0, i as f32 * 0.01) } else { (10.0, i as f32 * 0.01) };
        data.extend([cx + jitter, jitter]);
    }
    let c = Clusters::new(&data, 2, &[0, 20]).unwrap();
    let s = substructure_stats(&c, &centroid_stats(&c, &CentroidParams::default()).unwrap()).unwrap();
    assert!(s.inertia_ratio[0] < 0.01, "{}", s.inertia_ratio[0]);
    assert!(s.silhouette[0] > 0.95, "{}", s.silhouette[0]);
    assert_eq!(s.split_balance[0], 0.5);
}
