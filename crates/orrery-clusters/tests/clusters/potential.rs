//! The Gaussian-potential family against the formulas with an explicit Gram matrix.

use orrery_clusters::potential::NO_CLUSTER;
use orrery_clusters::{CentroidParams, Clusters, centroid_stats, potential_stats, scale_stats};

use crate::common::{TOL, assert_close, dist, mean, members, sq, synth};

#[test]
fn potential_family_matches_the_formulas() {
    let data = synth(15, 6, 25.0, 9);
    let c = data.clusters().unwrap();
    let cs = centroid_stats(&c, &CentroidParams::default()).unwrap();
    let sc = scale_stats(&c, &cs).unwrap();
    let p = potential_stats(&c, &cs, &sc).unwrap();
    let dim = c.dim() as f64;
    let mus: Vec<Vec<f64>> = (0..c.len()).map(|k| mean(&members(&c, k), c.dim())).collect();
    for k in 0..c.len() {
        let xs = members(&c, k);
        let n = xs.len() as f64;
        let sigma = sc.sigma[k];
        let s2 = sigma * sigma;
        let kern = |d2: f64| (-d2 / (2.0 * s2)).exp();
        let r2: Vec<f64> = xs.iter().map(|x| sq(x, &mus[k])).collect();
        let depth = r2.iter().map(|&v| kern(v)).sum::<f64>() / n;
        let curvature = r2.iter().map(|&v| kern(v) * (1.0 - v / (dim * s2))).sum::<f64>() / n;
        assert_close("depth", k, p.depth[k], depth, TOL);
        assert_close("curvature", k, p.curvature[k], curvature, TOL);
        // Nearest other centroid by brute force.
        let (mut best, mut bd) = (NO_CLUSTER, f64::INFINITY);
        for (o, mu) in mus.iter().enumerate() {
            if o != k && dist(&mus[k], mu) < bd {
                (best, bd) = (o as u32, dist(&mus[k], mu));
            }
        }
        assert_eq!(p.nearest_cluster[k], best, "nearest of {k}");
        assert_close("nearest distance", k, p.nearest_distance[k], bd, TOL);
        assert_close("escape", k, p.escape_probability[k], (-bd * bd / (8.0 * s2)).exp(), TOL);
        // Entanglement through the Gram matrix G_ij = K(|x_i - x_j|).
        let mut purity = 0.0;
        for a in &xs {
            for b in &xs {
                purity += kern(sq(a, b)).powi(2);
            }
        }
        purity /= n * n;
        let e = if n < 2.0 { 0.0 } else { (1.0 - purity) / (1.0 - 1.0 / n) };
        assert_close("entanglement", k, p.entanglement[k], e, TOL);
        assert!((0.0..=1.0).contains(&p.entanglement[k]) && p.depth[k] <= 1.0);
    }
}

#[test]
fn hand_computed_potential_of_two_points() {
    // Members {0, 2} in 1-D: centroid 1, r = 1, one pair at distance 2 so sigma is
    // within a bin width (2 * 1 / 256) of 2; the other cluster's centroid is 9 away.
    let c = Clusters::new(&[0.0, 2.0, 10.0], 1, &[0, 2, 3]).unwrap();
    let cs = centroid_stats(&c, &CentroidParams::default()).unwrap();
    let sc = scale_stats(&c, &cs).unwrap();
    let p = potential_stats(&c, &cs, &sc).unwrap();
    let s = sc.sigma[0];
    assert!((s - 2.0).abs() <= 2.0 / 256.0);
    assert_eq!(p.depth[0], (-1.0 / (2.0 * s * s)).exp());
    assert_eq!(p.curvature[0], (-1.0 / (2.0 * s * s)).exp() * (1.0 - 1.0 / (s * s)));
    assert_eq!((p.nearest_cluster[0], p.nearest_distance[0]), (1, 9.0));
    assert_eq!(p.escape_probability[0], (-81.0 / (8.0 * s * s)).exp());
    let g = (-4.0 / (s * s)).exp(); // G_01^2
    assert!((p.entanglement[0] - (1.0 - (2.0 + 2.0 * g) / 4.0) * 2.0).abs() < 1e-15);
    // The single member of cluster 1 sits at its centroid: sigma 0, depth and curvature 1.
    assert_eq!((sc.sigma[1], p.depth[1], p.curvature[1], p.entanglement[1]), (0.0, 1.0, 1.0, 0.0));
    assert_eq!((p.nearest_cluster[1], p.escape_probability[1]), (0, 0.0));
}
