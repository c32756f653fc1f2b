//! The documented sentinels of every family: empty cluster, one member, identical
//! members, zero vectors (docs/clusters/statistics.md, "Edge cases").

use orrery_clusters::potential::NO_CLUSTER;
use orrery_clusters::{
    CentroidParams, ClusterStatistics, Clusters, LatticeIndex, Metric, NO_ROW, Vectors, cluster_statistics,
    exact_search,
};

const EMPTY: usize = 0;
const ONE: usize = 1;
const SAME: usize = 2;
const ZERO: usize = 3;
const NORMAL: usize = 4;

/// Clusters: empty, one member, four identical members, three zero vectors, five
/// ordinary members (dim 3), and a trailing empty cluster.
fn data() -> (Vec<f32>, Vec<u32>) {
    let mut v = vec![0.5f32, -1.0, 2.0];
    for _ in 0..4 {
        v.extend([0.1f32, 0.7, -0.3]);
    }
    v.extend([0.0f32; 9]);
    v.extend([1.0f32, 1.0, 1.0, 2.0, 1.5, 1.0, 1.2, 0.1, 3.0, 0.0, 2.0, 2.0, 1.5, 1.5, 0.5]);
    (v, vec![0, 0, 1, 5, 8, 13, 13])
}

fn stats() -> ClusterStatistics {
    let (v, o) = data();
    let c = Clusters::new(&v, 3, &o).unwrap();
    cluster_statistics(&c, &CentroidParams::default()).unwrap()
}

#[test]
fn empty_clusters_are_nan_everywhere() {
    let s = stats();
    for c in [EMPTY, 5] {
        let cs = &s.centroid;
        assert_eq!(cs.size[c], 0);
        assert!(cs.centroid(c).iter().all(|v| v.is_nan()));
        for v in [
            cs.cohesion[c],
            cs.inertia[c],
            cs.rms_radius[c],
            cs.spread[c],
            cs.skew[c],
            cs.min_radius[c],
            cs.max_radius[c],
            cs.mean_norm[c],
            cs.embedding_quality[c],
            cs.centroid_offset[c],
            cs.novelty[c],
            cs.outlier_ratio[c],
            cs.core_fraction[c],
            cs.core_periphery_ratio[c],
            s.substructure.split_inertia[c],
            s.substructure.inertia_ratio[c],
            s.substructure.silhouette[c],
            s.substructure.split_balance[c],
            s.substructure.split_separation[c],
            s.scale.sigma[c],
            s.scale.bin_width[c],
            s.potential.depth[c],
            s.potential.curvature[c],
            s.potential.nearest_distance[c],
            s.potential.escape_probability[c],
            s.potential.entanglement[c],
            s.diversity.mean_distance[c],
            s.diversity.distance_std[c],
            s.diversity.distance_skew[c],
            s.diversity.distance_cv[c],
            s.diversity.min_distance[c],
            s.diversity.max_distance[c],
            s.diversity.entropy[c],
            s.diversity.perplexity[c],
        ] {
            assert!(v.is_nan(), "cluster {c}: {v}");
        }
        assert_eq!(s.substructure.split.sizes[c], [0, 0]);
        assert_eq!((s.scale.pair_count[c], s.diversity.pair_count[c]), (0, 0));
        assert_eq!(s.potential.nearest_cluster[c], NO_CLUSTER);
        assert!(s.scale.histogram_of(c).iter().all(|&n| n == 0) && s.diversity.histogram[c] == [0; 20]);
    }
}

/// The sentinels shared by one member, identical members and zero vectors: every
/// member sits exactly at the centroid (sums of equal `f32` values are exact in `f64`).
fn assert_degenerate(s: &ClusterStatistics, c: usize, n: u32) {
    let cs = &s.centroid;
    assert_eq!(cs.size[c], n);
    for (what, v) in [
        ("cohesion", cs.cohesion[c]),
        ("inertia", cs.inertia[c]),
        ("rms", cs.rms_radius[c]),
        ("spread", cs.spread[c]),
        ("skew", cs.skew[c]),
        ("min", cs.min_radius[c]),
        ("max", cs.max_radius[c]),
        ("outliers", cs.outlier_ratio[c]),
    ] {
        assert_eq!(v, 0.0, "{what} of cluster {c}");
    }
    assert_eq!((cs.core_fraction[c], cs.core_periphery_ratio[c]), (1.0, 1.0));
    let sub = &s.substructure;
    assert_eq!(sub.split.sizes[c], [n, 0]);
    assert_eq!((sub.split_inertia[c], sub.inertia_ratio[c], sub.silhouette[c]), (0.0, 1.0, 0.0));
    assert_eq!((sub.split_balance[c], sub.split_separation[c]), (0.0, 0.0));
    let pairs = u64::from(n) * u64::from(n - 1) / 2;
    assert_eq!((s.scale.sigma[c], s.scale.bin_width[c], s.scale.pair_count[c]), (0.0, 0.0, pairs));
    assert_eq!(s.scale.histogram_of(c)[0], pairs);
    let p = &s.potential;
    assert_eq!((p.depth[c], p.curvature[c], p.entanglement[c]), (1.0, 1.0, 0.0));
    assert_eq!(p.escape_probability[c], 0.0, "sigma 0 and another centroid elsewhere");
    let d = &s.diversity;
    assert_eq!(d.pair_count[c], pairs);
    for v in [d.mean_distance[c], d.distance_std[c], d.distance_skew[c], d.distance_cv[c], d.min_distance[c]] {
        assert_eq!(v, 0.0);
    }
    assert_eq!((d.max_distance[c], d.entropy[c], d.perplexity[c]), (0.0, 0.0, 1.0));
}

#[test]
fn one_member() {
    let s = stats();
    assert_degenerate(&s, ONE, 1);
    assert_eq!(s.centroid.embedding_quality[ONE], 1.0);
    assert_eq!(s.centroid.mean_norm[ONE], (0.25f64 + 1.0 + 4.0).sqrt());
}

#[test]
fn identical_members() {
    let s = stats();
    assert_degenerate(&s, SAME, 4);
    assert_eq!(s.centroid.centroid(SAME), &[f64::from(0.1f32), f64::from(0.7f32), f64::from(-0.3f32)]);
    assert!((s.centroid.embedding_quality[SAME] - 1.0).abs() < 1e-15);
}

#[test]
fn zero_vectors() {
    let s = stats();
    assert_degenerate(&s, ZERO, 3);
    assert_eq!((s.centroid.mean_norm[ZERO], s.centroid.embedding_quality[ZERO]), (0.0, 0.0));
}

#[test]
fn an_ordinary_cluster_beside_them_is_not_affected() {
    let s = stats();
    assert_eq!(s.centroid.size[NORMAL], 5);
    assert!(s.centroid.cohesion[NORMAL] > 0.0 && s.scale.sigma[NORMAL] > 0.0);
    assert!(s.potential.depth[NORMAL] < 1.0 && s.diversity.entropy[NORMAL] > 0.0);
    // The global centroid and radius count every row once, empty clusters none.
    let (v, _) = data();
    let g: Vec<f64> = (0..3).map(|d| (0..13).map(|i| f64::from(v[i * 3 + d])).sum::<f64>() / 13.0).collect();
    for d in 0..3 {
        assert!((s.centroid.global_centroid[d] - g[d]).abs() < 1e-12);
    }
}

#[test]
fn coincident_centroids_escape_with_probability_one() {
    // Two clusters of one member each at the same point: delta = 0, sigma = 0.
    let c = Clusters::new(&[1.0, 2.0, 1.0, 2.0], 2, &[0, 1, 2]).unwrap();
    let s = cluster_statistics(&c, &CentroidParams::default()).unwrap();
    assert_eq!((s.potential.nearest_cluster[0], s.potential.nearest_cluster[1]), (1, 0));
    assert_eq!((s.potential.nearest_distance[0], s.potential.escape_probability[0]), (0.0, 1.0));
    // A single cluster has no neighbour.
    let c = Clusters::new(&[1.0, 2.0, 3.0, 4.0], 2, &[0, 2]).unwrap();
    let s = cluster_statistics(&c, &CentroidParams::default()).unwrap();
    assert_eq!((s.potential.nearest_cluster[0], s.potential.nearest_distance[0]), (NO_CLUSTER, f64::INFINITY));
    assert_eq!(s.potential.escape_probability[0], 0.0);
    assert_eq!((s.centroid.novelty[0], s.centroid.centroid_offset[0]), (0.0, 0.0));
}

#[test]
fn all_clusters_empty() {
    let c = Clusters::new(&[], 4, &[0, 0, 0]).unwrap();
    let s = cluster_statistics(&c, &CentroidParams::default()).unwrap();
    assert!(s.centroid.global_centroid.iter().all(|v| v.is_nan()) && s.centroid.global_rms_radius.is_nan());
    assert!(s.centroid.cohesion.iter().all(|v| v.is_nan()));
}

#[test]
fn fewer_rows_than_k_pad_with_no_row() {
    let db = [0.0f32, 1.0, 2.0];
    let q = Vectors::new(&[0.9], 1).unwrap();
    let nn = exact_search(&Vectors::new(&db, 1).unwrap(), &q, 5, Metric::L2).unwrap();
    assert_eq!(nn.rows_of(0), &[1, 0, 2, NO_ROW, NO_ROW]);
    assert_eq!(&nn.scores_of(0)[3..], &[f64::INFINITY; 2]);
    let nn = exact_search(&Vectors::new(&db, 1).unwrap(), &q, 4, Metric::InnerProduct).unwrap();
    assert_eq!(nn.rows_of(0), &[2, 1, 0, NO_ROW]);
    assert_eq!(nn.scores_of(0), &[f64::from(0.9f32) * 2.0, f64::from(0.9f32), 0.0, f64::NEG_INFINITY]);
    // A lattice probe of one small cluster pads too.
    let c = Clusters::new(&db, 1, &[0, 1, 3]).unwrap();
    let nn = LatticeIndex::new(c).unwrap().search(&q, 3, 1, Metric::L2).unwrap();
    assert_eq!(nn.rows_of(0), &[1, 2, NO_ROW]);
    // No queries: an empty result.
    let nn = exact_search(&Vectors::new(&db, 1).unwrap(), &Vectors::new(&[], 1).unwrap(), 2, Metric::L2).unwrap();
    assert!(nn.is_empty());
}
