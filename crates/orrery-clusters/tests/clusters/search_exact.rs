//! Exact search against a brute-force f64 ranking, ties by row.

use orrery_clusters::search::exact::{DB_TILE, MIN_SPLIT_ROWS, block_topk};
use orrery_clusters::synth::gaussian_queries;
use orrery_clusters::{Metric, Neighbors, Vectors, exact_search};

use crate::common::{all_rows, brute_force, synth};

/// Rows equal the brute force exactly; scores agree to the rounding of the lane order
/// (relative 1e-12: both sum `dim` exact products in f64).
#[track_caller]
pub fn assert_matches_brute_force(
    nn: &Neighbors,
    rows: &[Vec<f64>],
    candidates: &[usize],
    queries: &[Vec<f64>],
    metric: Metric,
) {
    for (q, qv) in queries.iter().enumerate() {
        let want = brute_force(rows, candidates, qv, nn.k, metric);
        let got_rows = nn.rows_of(q);
        let want_rows: Vec<u32> = want.iter().map(|w| w.0).collect();
        assert_eq!(got_rows, want_rows.as_slice(), "query {q} ({metric:?})");
        for (g, w) in nn.scores_of(q).iter().zip(&want) {
            assert!(*g == w.1 || (g - w.1).abs() <= 1e-12 * w.1.abs().max(1.0), "query {q}: score {g} vs {}", w.1);
        }
    }
}

fn to_f64(v: &[f32], dim: usize) -> Vec<Vec<f64>> {
    v.chunks(dim).map(|r| r.iter().map(|&x| f64::from(x)).collect()).collect()
}

#[test]
fn exact_search_equals_the_brute_force_f64_ranking() {
    // More than one split (MIN_SPLIT_ROWS) and partial database tiles.
    let data = synth(40, 12, 200.0, 21);
    let db = data.vectors().unwrap();
    assert!(db.len() > 2 * MIN_SPLIT_ROWS && !db.len().is_multiple_of(DB_TILE), "{}", db.len());
    let qv = gaussian_queries(&data, 37, 0.2, 4);
    let q = Vectors::new(&qv, 12).unwrap();
    let rows = all_rows(&data.clusters().unwrap());
    let all: Vec<usize> = (0..rows.len()).collect();
    for k in [1, 10, 128] {
        for metric in [Metric::L2, Metric::InnerProduct] {
            let nn = exact_search(&db, &q, k, metric).unwrap();
            assert_eq!(nn.len(), 37);
            assert_matches_brute_force(&nn, &rows, &all, &to_f64(&qv, 12), metric);
        }
    }
}

#[test]
fn ties_break_on_ascending_row() {
    // Integer points (every score exact) with every vector three times, and queries on
    // lattice points: many equal distances, ordered by row.
    let mut v = Vec::new();
    for _copy in 0..3 {
        for x in 0..7 {
            for y in 0..5 {
                v.extend([x as f32, y as f32, 0.0]);
            }
        }
    }
    let db = Vectors::new(&v, 3).unwrap();
    let qv = [3.0f32, 2.0, 0.0, 0.0, 0.0, 0.0, 3.5, 2.5, 0.0, 1.0, 1.0, 1.0];
    let q = Vectors::new(&qv, 3).unwrap();
    let rows = to_f64(&v, 3);
    let all: Vec<usize> = (0..rows.len()).collect();
    for metric in [Metric::L2, Metric::InnerProduct] {
        for k in [1, 4, 13, 50, 105, 128] {
            let nn = exact_search(&db, &q, k, metric).unwrap();
            assert_matches_brute_force(&nn, &rows, &all, &to_f64(&qv, 3), metric);
        }
    }
    // The query (3, 2, 0) has three copies at distance 0: rows 17, 52, 87 in that order.
    let nn = exact_search(&db, &q, 3, Metric::L2).unwrap();
    assert_eq!(nn.rows_of(0), &[17, 52, 87]);
}

#[test]
fn the_blocking_does_not_change_the_result() {
    let data = synth(10, 6, 100.0, 8);
    let db = data.vectors().unwrap();
    let qv = gaussian_queries(&data, 9, 0.3, 1);
    let q = Vectors::new(&qv, 6).unwrap();
    let n = db.len();
    let whole = block_topk(&db, &q, 0..9, 0..n, 10, Metric::L2).unwrap();
    // Any split of the rows, merged, gives the same lists.
    for cut in [1, 63, 64, n / 2, n - 1] {
        let a = block_topk(&db, &q, 0..9, 0..cut, 10, Metric::L2).unwrap();
        let b = block_topk(&db, &q, 0..9, cut..n, 10, Metric::L2).unwrap();
        for qi in 0..9 {
            let merged = orrery_clusters::search::topk::merge_sorted(&[&a[qi], &b[qi]], 10);
            assert_eq!(merged, whole[qi], "cut {cut}, query {qi}");
        }
    }
    let nn = exact_search(&db, &q, 10, Metric::L2).unwrap();
    for qi in 0..9 {
        let rows: Vec<u32> = whole[qi].iter().map(|c| c.row).collect();
        assert_eq!(nn.rows_of(qi), rows.as_slice());
    }
}

#[test]
fn more_queries_than_one_batch() {
    // 1,100 queries: two batches of the 1,024-query loop.
    let data = synth(6, 3, 60.0, 40);
    let db = data.vectors().unwrap();
    let qv = gaussian_queries(&data, 1100, 0.5, 6);
    let q = Vectors::new(&qv, 3).unwrap();
    let rows = all_rows(&data.clusters().unwrap());
    let all: Vec<usize> = (0..rows.len()).collect();
    let nn = exact_search(&db, &q, 7, Metric::L2).unwrap();
    assert_eq!(nn.len(), 1100);
    assert_matches_brute_force(&nn, &rows, &all, &to_f64(&qv, 3), Metric::L2);
}
