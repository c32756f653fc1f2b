//! The centroid family against the sequential f64 formulas.

use orrery_clusters::{CentroidParams, Clusters, centroid, centroid_stats};

use crate::common::{TOL, all_rows, assert_close, dist, mean, mean_std_skew, members, synth};

fn check_against_reference(clusters: &Clusters<'_>, params: &CentroidParams) {
    let s = centroid_stats(clusters, params).unwrap();
    let dim = clusters.dim();
    let all = all_rows(clusters);
    let g = mean(&all, dim);
    let sg = (all.iter().map(|x| dist(x, &g).powi(2)).sum::<f64>() / all.len() as f64).sqrt();
    assert_close("global rms radius", 0, s.global_rms_radius, sg, TOL);
    for d in 0..dim {
        assert_close("global centroid", d, s.global_centroid[d], g[d], TOL);
    }
    for c in 0..clusters.len() {
        let xs = members(clusters, c);
        assert_eq!(s.size[c] as usize, xs.len());
        if xs.is_empty() {
            continue;
        }
        let mu = mean(&xs, dim);
        for d in 0..dim {
            assert_close("centroid", c, s.centroid(c)[d], mu[d], TOL);
        }
        let r: Vec<f64> = xs.iter().map(|x| dist(x, &mu)).collect();
        for (i, row) in clusters.range(c).enumerate() {
            assert_close("member distance", c, s.member_distance[row], r[i], TOL);
        }
        let (m, sd, skew) = mean_std_skew(&r);
        let n = xs.len() as f64;
        let inertia: f64 = r.iter().map(|v| v * v).sum();
        assert_close("cohesion", c, s.cohesion[c], m, TOL);
        assert_close("inertia", c, s.inertia[c], inertia, TOL);
        assert_close("rms radius", c, s.rms_radius[c], (inertia / n).sqrt(), TOL);
        assert_close("spread", c, s.spread[c], sd, 1e-7);
        assert_close("skew", c, s.skew[c], skew, 1e-6);
        assert_close("min radius", c, s.min_radius[c], r.iter().copied().fold(f64::INFINITY, f64::min), TOL);
        assert_close("max radius", c, s.max_radius[c], r.iter().copied().fold(0.0, f64::max), TOL);
        let norms: f64 = xs.iter().map(|x| x.iter().map(|v| v * v).sum::<f64>().sqrt()).sum::<f64>() / n;
        assert_close("mean norm", c, s.mean_norm[c], norms, TOL);
        let mu_norm = mu.iter().map(|v| v * v).sum::<f64>().sqrt();
        assert_close("embedding quality", c, s.embedding_quality[c], mu_norm / norms, TOL);
        let offset = dist(&mu, &g);
        assert_close("centroid offset", c, s.centroid_offset[c], offset, TOL);
        assert_close("novelty", c, s.novelty[c], offset / sg, TOL);
        let out_t = m + params.outlier_sigmas * sd;
        let outliers = r.iter().filter(|&&v| v > out_t).count() as f64 / n;
        assert_close("outlier ratio", c, s.outlier_ratio[c], outliers, 0.0);
        let core_t = params.core_scale * m;
        let core: Vec<f64> = r.iter().copied().filter(|&v| v <= core_t).collect();
        let per: Vec<f64> = r.iter().copied().filter(|&v| v > core_t).collect();
        assert_close("core fraction", c, s.core_fraction[c], core.len() as f64 / n, 0.0);
        let cp = if core.is_empty() || per.is_empty() {
            1.0
        } else {
            (core.iter().sum::<f64>() / core.len() as f64) / (per.iter().sum::<f64>() / per.len() as f64)
        };
        assert_close("core-periphery ratio", c, s.core_periphery_ratio[c], cp, TOL);
    }
}

#[test]
fn centroid_family_matches_the_f64_formulas_on_synthetic_clusters() {
    let data = synth(25, 7, 30.0, 11);
    check_against_reference(&data.clusters().unwrap(), &CentroidParams::default());
    check_against_reference(&data.clusters().unwrap(), &CentroidParams { outlier_sigmas: 1.0, core_scale: 0.8 });
}

#[test]
fn centroid_family_of_a_cluster_larger_than_several_member_chunks() {
    // 9,000 members: three chunks of 4,096, merged by Chan's formulas.
    let data = orrery_clusters::synth::gaussian_clusters(&orrery_clusters::synth::SynthParams {
        median_size: 9000.0,
        size_sigma: 0.0,
        cluster_std: 0.5,
        ..orrery_clusters::synth::SynthParams::new(2, 5)
    })
    .unwrap();
    assert_eq!(data.offsets, [0, 9000, 18000]);
    check_against_reference(&data.clusters().unwrap(), &CentroidParams { outlier_sigmas: 2.0, core_scale: 1.0 });
}

#[test]
fn hand_computed_cohesion_inertia_and_thresholds() {
    // 1-D cluster {0, 0, 0, 4}: centroid 1, r = {1, 1, 1, 3}, cohesion 1.5, inertia 12,
    // spread sqrt(0.75), outlier threshold (1 sigma) 1.5 + 0.866 = 2.37 → one outlier;
    // core (r <= 1.5) three members of mean 1 against a periphery of 3.
    let data = [0.0f32, 0.0, 0.0, 4.0];
    let c = Clusters::new(&data, 1, &[0, 4]).unwrap();
    let s = centroid_stats(&c, &CentroidParams { outlier_sigmas: 1.0, core_scale: 1.0 }).unwrap();
    assert_eq!((s.centroid(0), s.cohesion[0], s.inertia[0]), (&[1.0][..], 1.5, 12.0));
    assert_eq!(s.spread[0], 0.75f64.sqrt());
    assert_eq!((s.outlier_ratio[0], s.core_fraction[0], s.core_periphery_ratio[0]), (0.25, 0.75, 1.0 / 3.0));
    assert!((s.skew[0] - 2.0 / 3.0f64.sqrt()).abs() < 1e-12, "{}", s.skew[0]);
    assert_eq!((s.embedding_quality[0], s.novelty[0], s.centroid_offset[0]), (1.0 / 1.0, 0.0, 0.0));
    assert_eq!(centroid::centroids(&c), [1.0]);
}
