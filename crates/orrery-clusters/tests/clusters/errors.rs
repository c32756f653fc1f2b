//! Bad input gets a typed error naming the offending value, never a panic.

use orrery_clusters::synth::{SynthParams, gaussian_clusters};
use orrery_clusters::{
    CentroidParams, Clusters, IvfIndex, IvfParams, LatticeIndex, Metric, Vectors, centroid_stats, exact_search,
    potential_stats, scale_stats, substructure_stats,
};
use orrery_core::Error;

#[track_caller]
fn invalid(e: Error, what: &str) -> String {
    match e {
        Error::InvalidArgument { what: w, reason } if w == what => reason,
        other => panic!("expected InvalidArgument for {what}, got {other:?}"),
    }
}

#[test]
fn nan_and_infinite_values_name_the_first_offender() {
    let mut v = vec![0.0f32; 12];
    v[7] = f32::NAN;
    v[9] = f32::INFINITY;
    let e = Vectors::new(&v, 3).unwrap_err();
    assert!(matches!(e, Error::NonFiniteValue { what: "vectors", index: 7, value } if value.is_nan()), "{e:?}");
    let e = Clusters::new(&v, 3, &[0, 2, 4]).unwrap_err();
    assert!(matches!(e, Error::NonFiniteValue { what: "vectors", index: 7, .. }), "{e:?}");
    v[7] = 0.0;
    assert_eq!(
        Clusters::new(&v, 3, &[0, 4]).unwrap_err(),
        Error::NonFiniteValue { what: "vectors", index: 9, value: f64::INFINITY }
    );
    // Far past the first parallel chunk.
    let mut big = vec![1.0f32; 100_000];
    big[70_001] = f32::NEG_INFINITY;
    assert!(matches!(Vectors::new(&big, 10).unwrap_err(), Error::NonFiniteValue { index: 70_001, .. }));
}

#[test]
fn ragged_vectors_and_zero_dims() {
    assert_eq!(
        Vectors::new(&[0.0f32; 7], 3).unwrap_err(),
        Error::LengthMismatch { what: "vectors (a multiple of dim)", expected: 9, actual: 7 }
    );
    assert!(invalid(Vectors::new(&[0.0f32; 3], 0).unwrap_err(), "dim").contains("at least 1"));
    assert!(invalid(Clusters::new(&[0.0f32; 3], 0, &[0, 3]).unwrap_err(), "dim").contains("at least 1"));
    // Offsets that end before or after the data (a ragged last cluster).
    let v = [0.0f32; 9];
    assert_eq!(
        Clusters::new(&v, 3, &[0, 2]).unwrap_err(),
        Error::LengthMismatch { what: "vectors", expected: 6, actual: 9 }
    );
    assert_eq!(
        Clusters::new(&v, 3, &[0, 1, 4]).unwrap_err(),
        Error::LengthMismatch { what: "vectors", expected: 12, actual: 9 }
    );
    assert_eq!(
        Clusters::new(&v[..8], 3, &[0, 3]).unwrap_err(),
        Error::LengthMismatch { what: "vectors", expected: 9, actual: 8 }
    );
}

#[test]
fn offsets_must_start_at_zero_and_never_decrease() {
    let v = [0.0f32; 6];
    assert_eq!(Clusters::new(&v, 1, &[]).unwrap_err(), Error::EmptyInput { what: "cluster offsets", min: 2 });
    assert_eq!(Clusters::new(&v, 1, &[6]).unwrap_err(), Error::EmptyInput { what: "cluster offsets", min: 2 });
    let r = invalid(Clusters::new(&v, 1, &[1, 6]).unwrap_err(), "cluster offsets");
    assert!(r.contains("offsets[0] = 1") && r.contains("start at 0"), "{r}");
    let r = invalid(Clusters::new(&v, 1, &[0, 4, 2, 6]).unwrap_err(), "cluster offsets");
    assert_eq!(r, "offsets[2] = 2 is smaller than offsets[1] = 4: offsets must not decrease");
    let vv = Vectors::new(&v, 2).unwrap();
    assert!(Clusters::from_vectors(vv, &[0, 3, 1]).is_err());
    assert_eq!(
        Clusters::from_vectors(vv, &[0, 2]).unwrap_err(),
        Error::LengthMismatch { what: "vectors", expected: 4, actual: 6 }
    );
    // Empty clusters are valid for the statistics ...
    let c = Clusters::new(&v, 2, &[0, 0, 3, 3]).unwrap();
    assert!(centroid_stats(&c, &CentroidParams::default()).is_ok());
    // ... and rejected by the lattice, which ranks clusters by centroid.
    let r = invalid(LatticeIndex::new(c).unwrap_err(), "cluster offsets");
    assert!(r.starts_with("cluster 0 is empty"), "{r}");
}

#[test]
fn k_outside_one_to_128() {
    let db = Vectors::new(&[0.0f32, 1.0, 2.0, 3.0], 2).unwrap();
    for k in [0, 129, usize::MAX] {
        for metric in [Metric::L2, Metric::InnerProduct] {
            let r = invalid(exact_search(&db, &db, k, metric).unwrap_err(), "k");
            assert!(r.contains(&format!("k = {k}")) && r.contains("1..=128"), "{r}");
        }
    }
    assert!(exact_search(&db, &db, 128, Metric::L2).is_ok());
    let c = Clusters::from_vectors(db, &[0, 1, 2]).unwrap();
    let lattice = LatticeIndex::new(c).unwrap();
    invalid(lattice.search(&db, 0, 1, Metric::L2).unwrap_err(), "k");
    invalid(lattice.search_fused(&db, 129, 1, Metric::L2).unwrap_err(), "k");
    let ivf = IvfIndex::build(&db, &IvfParams::new(2)).unwrap();
    invalid(ivf.search(&db, 0, 1, Metric::L2).unwrap_err(), "k");
}

#[test]
fn dimension_mismatch() {
    let db = Vectors::new(&[0.0f32; 12], 4).unwrap();
    let q = Vectors::new(&[0.0f32; 6], 3).unwrap();
    let want = Error::LengthMismatch { what: "query dimension", expected: 4, actual: 3 };
    assert_eq!(exact_search(&db, &q, 1, Metric::L2).unwrap_err(), want);
    let ivf = IvfIndex::build(&db, &IvfParams::new(1)).unwrap();
    assert_eq!(ivf.search(&q, 1, 1, Metric::L2).unwrap_err(), want);
    let lattice = LatticeIndex::new(Clusters::from_vectors(db, &[0, 3]).unwrap()).unwrap();
    assert_eq!(lattice.search(&q, 1, 1, Metric::InnerProduct).unwrap_err(), want);
    assert_eq!(lattice.search_fused(&q, 1, 1, Metric::InnerProduct).unwrap_err(), want);
}

#[test]
fn empty_databases_and_bad_list_counts() {
    let empty = Vectors::new(&[], 3).unwrap();
    let q = Vectors::new(&[0.0f32; 3], 3).unwrap();
    assert_eq!(exact_search(&empty, &q, 1, Metric::L2).unwrap_err(), Error::EmptyInput { what: "database", min: 1 });
    assert_eq!(
        IvfIndex::build(&empty, &IvfParams::new(1)).unwrap_err(),
        Error::EmptyInput { what: "database", min: 1 }
    );
    let db = Vectors::new(&[0.0f32; 9], 3).unwrap();
    for nlist in [0, 4] {
        let r = invalid(IvfIndex::build(&db, &IvfParams::new(nlist)).unwrap_err(), "nlist");
        assert!(r.contains("1..=3"), "{r}");
    }
    let ivf = IvfIndex::build(&db, &IvfParams::new(2)).unwrap();
    for nprobe in [0, 3] {
        assert!(invalid(ivf.search(&q, 1, nprobe, Metric::L2).unwrap_err(), "nprobe").contains("1..=2"));
    }
    let lattice = LatticeIndex::new(Clusters::from_vectors(db, &[0, 1, 3]).unwrap()).unwrap();
    assert!(invalid(lattice.search(&q, 1, 3, Metric::L2).unwrap_err(), "nprobe").contains("1..=2"));
}

#[test]
fn bad_thresholds_and_mismatched_families() {
    let v = [0.0f32, 1.0, 2.0, 3.0];
    let c = Clusters::new(&v, 1, &[0, 2, 4]).unwrap();
    let e = centroid_stats(&c, &CentroidParams { outlier_sigmas: f64::NAN, core_scale: 1.0 }).unwrap_err();
    assert!(matches!(e, Error::NonFiniteValue { what: "outlier_sigmas", .. }), "{e:?}");
    let r = invalid(
        centroid_stats(&c, &CentroidParams { outlier_sigmas: 1.0, core_scale: -0.5 }).unwrap_err(),
        "core_scale",
    );
    assert!(r.contains("-0.5"), "{r}");
    // Families of other clusters are rejected, not read out of bounds.
    let other = Clusters::new(&v, 1, &[0, 4]).unwrap();
    let cs = centroid_stats(&other, &CentroidParams::default()).unwrap();
    let e = scale_stats(&c, &cs).unwrap_err();
    assert_eq!(e, Error::LengthMismatch { what: "centroid statistics (clusters)", expected: 2, actual: 1 });
    assert!(substructure_stats(&c, &cs).is_err());
    let own = centroid_stats(&c, &CentroidParams::default()).unwrap();
    let sc = scale_stats(&other, &cs).unwrap();
    assert_eq!(
        potential_stats(&c, &own, &sc).unwrap_err(),
        Error::LengthMismatch { what: "scale statistics (clusters)", expected: 2, actual: 1 }
    );
}

#[test]
fn bad_generator_parameters() {
    invalid(gaussian_clusters(&SynthParams::new(0, 3)).unwrap_err(), "clusters");
    invalid(gaussian_clusters(&SynthParams::new(3, 0)).unwrap_err(), "dim");
    invalid(
        gaussian_clusters(&SynthParams { cluster_std: -1.0, ..SynthParams::new(3, 3) }).unwrap_err(),
        "cluster_std",
    );
    let e = gaussian_clusters(&SynthParams { median_size: f64::INFINITY, ..SynthParams::new(3, 3) }).unwrap_err();
    assert!(matches!(e, Error::NonFiniteValue { what: "median_size", .. }));
    let e =
        gaussian_clusters(&SynthParams { median_size: 3e9, size_sigma: 0.0, ..SynthParams::new(3, 1) }).unwrap_err();
    assert!(matches!(e, Error::TooManyPoints { .. }), "{e:?}");
}

#[test]
fn the_kernel_references_check_their_arguments() {
    use orrery_clusters::search::exact::block_topk;
    use orrery_clusters::search::ivf::{assign_nearest, kmeans_plus_plus, lists_of, lloyd_update};
    let db = Vectors::new(&[0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0], 2).unwrap();
    invalid(block_topk(&db, &db, 0..4, 0..3, 1, Metric::L2).unwrap_err(), "query_rows");
    #[allow(clippy::reversed_empty_ranges)]
    let reversed = 2..1;
    invalid(block_topk(&db, &db, 0..1, reversed, 1, Metric::L2).unwrap_err(), "rows");
    invalid(block_topk(&db, &db, 0..1, 0..3, 0, Metric::L2).unwrap_err(), "k");
    assert_eq!(kmeans_plus_plus(&db, 4, 0).unwrap_err(), IvfIndex::build(&db, &IvfParams::new(4)).unwrap_err());
    assert!(matches!(
        assign_nearest(&db, &[0.0; 3]).unwrap_err(),
        Error::LengthMismatch { expected: 4, actual: 3, .. }
    ));
    assert!(matches!(assign_nearest(&db, &[]).unwrap_err(), Error::LengthMismatch { expected: 2, actual: 0, .. }));
    assert_eq!(
        lists_of(&[0, 2, 1], 2).unwrap_err(),
        Error::IndexOutOfBounds { what: "assignment", position: 1, index: 2, len: 2 }
    );
    let mut c = vec![0.0f64; 4];
    assert!(matches!(lloyd_update(&db, &[0, 3], &[0, 1, 2], &mut c).unwrap_err(), Error::LengthMismatch { .. }));
    assert!(matches!(lloyd_update(&db, &[0, 1, 2], &[0, 1, 2], &mut c).unwrap_err(), Error::LengthMismatch { .. }));
    assert!(matches!(lloyd_update(&db, &[0, 2, 3], &[0, 1, 7], &mut c).unwrap_err(), Error::IndexOutOfBounds { .. }));
    invalid(lloyd_update(&db, &[0, 2, 1], &[0], &mut c).unwrap_err(), "list offsets");
    assert!(lloyd_update(&db, &[0, 2, 3], &[0, 1, 2], &mut c).is_ok());
    assert_eq!(c, [1.0, 2.0, 4.0, 5.0]);
}
