//! Exact k-NN: every database row is scored against every query.
//!
//! **Pass 1, blocks.** The database is cut into `S` contiguous splits and the queries
//! into tiles of [`QUERY_TILE`]; a block is one (query tile, split) pair. It walks its
//! split in tiles of [`DB_TILE`] rows, scores the tile against its queries and offers
//! every score to the query's [`TopK`] (replace-worst insertion), then writes each
//! query's `k` best, sorted. A GPU block does the same with the tiles in shared memory.
//!
//! **Pass 2, merge.** Per query, [`merge_sorted`] of its `S` block lists.
//!
//! Queries go through in batches of 1,024, so the partial lists of a batch hold at most
//! `1024 * S * k` candidates whatever the number of queries.
//!
//! `S` is chosen so that there are about four blocks per thread with at least
//! [`MIN_SPLIT_ROWS`] rows each; by the `(key, row)` order (see [`crate::search`]) the
//! result does not depend on `S`. The partial lists hold `queries * S * k` candidates,
//! never a query-by-database matrix.

use std::ops::Range;

use orrery_core::{Error, Result};
use rayon::prelude::*;

use super::topk::{Candidate, TopK, merge_sorted};
use super::{Metric, Neighbors, QUERY_BATCH, check_k, check_query_dim};
use crate::input::{Vectors, invalid};

/// Queries per block.
pub const QUERY_TILE: usize = 8;
/// Database rows per tile (64 rows of 1,024 `f32` dims: 256 KB, in a core's L2 while 8
/// queries are scored against it).
pub const DB_TILE: usize = 64;
/// Fewest database rows per split.
pub const MIN_SPLIT_ROWS: usize = 4096;

/// Pass 1 of one block: the sorted top-`k` (padded with [`Candidate::NONE`]) of every
/// query in `query_rows` over the database rows `rows`.
///
/// # Errors
/// [`Error::InvalidArgument`] for `k` outside `1..=128` or a range out of bounds;
/// [`Error::LengthMismatch`] when the dimensions differ.
pub fn block_topk(
    database: &Vectors<'_>,
    queries: &Vectors<'_>,
    query_rows: Range<usize>,
    rows: Range<usize>,
    k: usize,
    metric: Metric,
) -> Result<Vec<Vec<Candidate>>> {
    check_k(k)?;
    check_query_dim(database.dim(), queries)?;
    for (what, r, len) in [("query_rows", &query_rows, queries.len()), ("rows", &rows, database.len())] {
        if r.start > r.end || r.end > len {
            return Err(invalid(what, format!("{r:?} is not a range inside 0..{len}")));
        }
    }
    Ok(block(database, queries, query_rows, rows, k, metric))
}

fn block(
    database: &Vectors<'_>,
    queries: &Vectors<'_>,
    query_rows: Range<usize>,
    rows: Range<usize>,
    k: usize,
    metric: Metric,
) -> Vec<Vec<Candidate>> {
    let mut tops: Vec<TopK> = query_rows.clone().map(|_| TopK::new(k)).collect();
    let mut start = rows.start;
    while start < rows.end {
        let end = (start + DB_TILE).min(rows.end);
        for (top, q) in tops.iter_mut().zip(query_rows.clone()) {
            let qv = queries.row(q);
            for r in start..end {
                top.push(Candidate { key: metric.key(qv, database.row(r)), row: r as u32 });
            }
        }
        start = end;
    }
    tops.into_iter().map(TopK::into_sorted).collect()
}

/// The `k` nearest database rows of every query, exactly.
///
/// ```
/// # use orrery_clusters::{search::exact::exact_search, Metric, Vectors};
/// let db = Vectors::new(&[0.0, 0.0, 1.0, 0.0, 0.0, 3.0], 2)?;
/// let q = Vectors::new(&[0.9, 0.1], 2)?;
/// let nn = exact_search(&db, &q, 2, Metric::L2)?;
/// assert_eq!(nn.rows_of(0), &[1, 0]);
/// # Ok::<(), orrery_core::Error>(())
/// ```
///
/// # Errors
/// [`Error::InvalidArgument`] (`what = "k"`) for `k == 0` or `k > 128`;
/// [`Error::EmptyInput`] for a database without rows; [`Error::LengthMismatch`]
/// (`what = "query dimension"`) when the dimensions differ.
pub fn exact_search(database: &Vectors<'_>, queries: &Vectors<'_>, k: usize, metric: Metric) -> Result<Neighbors> {
    check_k(k)?;
    if database.is_empty() {
        return Err(Error::EmptyInput { what: "database", min: 1 });
    }
    check_query_dim(database.dim(), queries)?;
    let nq = queries.len();
    let mut lists = Vec::with_capacity(nq);
    let mut start = 0;
    while start < nq {
        let end = (start + QUERY_BATCH).min(nq);
        lists.extend(search_batch(database, queries, start..end, k, metric));
        start = end;
    }
    Ok(Neighbors::from_lists(k, metric, &lists))
}

/// Both passes for the queries `batch`.
fn search_batch(
    database: &Vectors<'_>,
    queries: &Vectors<'_>,
    batch: Range<usize>,
    k: usize,
    metric: Metric,
) -> Vec<Vec<Candidate>> {
    let (nq, n) = (batch.len(), database.len());
    let qtiles = nq.div_ceil(QUERY_TILE);
    let splits = (4 * rayon::current_num_threads()).div_ceil(qtiles).clamp(1, n.div_ceil(MIN_SPLIT_ROWS));
    let split_rows = n.div_ceil(splits).next_multiple_of(DB_TILE);
    let splits = n.div_ceil(split_rows);
    let blocks: Vec<Vec<Vec<Candidate>>> = (0..qtiles * splits)
        .into_par_iter()
        .map(|b| {
            let (qt, s) = (b / splits, b % splits);
            let q = batch.start + qt * QUERY_TILE..(batch.start + (qt + 1) * QUERY_TILE).min(batch.end);
            let r = s * split_rows..((s + 1) * split_rows).min(n);
            block(database, queries, q, r, k, metric)
        })
        .collect();
    (0..nq)
        .into_par_iter()
        .map(|q| {
            let (qt, qi) = (q / QUERY_TILE, q % QUERY_TILE);
            let parts: Vec<&[Candidate]> = (0..splits).map(|s| blocks[qt * splits + s][qi].as_slice()).collect();
            merge_sorted(&parts, k)
        })
        .collect()
}
