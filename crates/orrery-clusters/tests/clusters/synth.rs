//! The seeded generator: deterministic, log-normal sizes, Gaussian members.

use orrery_clusters::synth::{SynthParams, gaussian_clusters, gaussian_queries};

fn one_thread<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap().install(f)
}

#[test]
fn same_seed_same_bytes_on_any_thread_count() {
    let p = SynthParams { seed: 42, ..SynthParams::new(60, 24) };
    let a = gaussian_clusters(&p).unwrap();
    let b = one_thread(|| gaussian_clusters(&p).unwrap());
    let c = rayon::ThreadPoolBuilder::new().num_threads(5).build().unwrap().install(|| gaussian_clusters(&p).unwrap());
    assert_eq!(a, b);
    assert_eq!(a, c);
    assert_ne!(a.vectors, gaussian_clusters(&SynthParams { seed: 43, ..p }).unwrap().vectors);
    assert_eq!(gaussian_queries(&a, 10, 0.1, 1), gaussian_queries(&a, 10, 0.1, 1));
    assert_ne!(gaussian_queries(&a, 10, 0.1, 1), gaussian_queries(&a, 10, 0.1, 2));
    // A golden value pins the stream layout (ChaCha8 streams, Box-Muller) across
    // refactors; benchmarks name their inputs by seed. (The f32 rounding hides a
    // last-bit difference of a platform's ln/sin/cos.)
    let g = gaussian_clusters(&SynthParams { seed: 1, ..SynthParams::new(3, 2) }).unwrap();
    assert_eq!(g.offsets, [0, 243, 406, 535]);
    assert_eq!(&g.vectors[..2], &[1.9585359f32, 0.6901537]);
}

#[test]
fn sizes_are_log_normal_around_the_median_and_respect_the_minimum() {
    let p = SynthParams { median_size: 50.0, size_sigma: 1.0, min_size: 3, dim: 1, ..SynthParams::new(2001, 1) };
    let d = gaussian_clusters(&p).unwrap();
    let mut sizes: Vec<u32> = d.offsets.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(sizes.iter().all(|&s| s >= 3));
    sizes.sort_unstable();
    let median = f64::from(sizes[1000]);
    assert!((median - 50.0).abs() < 5.0, "median size {median}");
    // ln(size) has standard deviation about 1: the quartiles sit near 50 e^-0.674, 50 e^0.674.
    let (q1, q3) = (f64::from(sizes[500]), f64::from(sizes[1500]));
    assert!((q1 - 25.5).abs() < 4.0 && (q3 - 98.0).abs() < 12.0, "quartiles {q1} {q3}");
    // Equal sizes with size_sigma 0.
    let e = gaussian_clusters(&SynthParams { median_size: 7.0, size_sigma: 0.0, ..SynthParams::new(4, 3) }).unwrap();
    assert_eq!(e.offsets, [0, 7, 14, 21, 28]);
}

#[test]
fn members_scatter_around_their_centres_with_the_given_std() {
    let p = SynthParams { median_size: 4000.0, size_sigma: 0.0, cluster_std: 0.25, ..SynthParams::new(2, 3) };
    let d = gaussian_clusters(&p).unwrap();
    for c in 0..2 {
        for dim in 0..3 {
            let xs: Vec<f64> = (c * 4000..(c + 1) * 4000).map(|i| f64::from(d.vectors[i * 3 + dim])).collect();
            let m = xs.iter().sum::<f64>() / 4000.0;
            let sd = (xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / 4000.0).sqrt();
            assert!((m - f64::from(d.centers[c * 3 + dim])).abs() < 0.02, "mean {m}");
            assert!((sd - 0.25).abs() < 0.02, "std {sd}");
        }
    }
}
