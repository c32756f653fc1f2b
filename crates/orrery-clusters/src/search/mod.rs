//! k-nearest-neighbour search over the same vectors as the statistics.
//!
//! - [`exact`]: every database row scored, query tiles against database tiles, a top-k
//!   per block, a merge across blocks.
//! - [`ivf`]: an inverted file: k-means++ seeding and Lloyd iterations, `nprobe` lists
//!   searched per query.
//! - [`lattice`]: the user's own clusters as the lists: the top clusters per query by
//!   centroid, a partial top-k per query-cluster pair, merged by the same engine.
//! - [`fused`]: the lattice search that also measures, for every member it scores, its
//!   distance to its own centroid, reduced to cohesion and inertia per cluster.
//!
//! **Ranking, ties and scores.** Every candidate has a key, smaller is better: the
//! squared Euclidean distance for [`Metric::L2`], the negated inner product for
//! [`Metric::InnerProduct`] (negation is exact, so ties stay ties), computed by
//! [`crate::dist`] in `f64` in one fixed order. Candidates are ordered by `(key, row)`:
//! equal keys go to the lower row. This is a total order on distinct rows, so a top-k
//! is one well-defined set whatever the blocking, the thread count or the merge order,
//! and results are deterministic. [`Neighbors::scores`] are the `f64` squared distances
//! (L2) or inner products (IP) of the rows.
//!
//! **Sentinels.** Where fewer than `k` candidates exist (a database smaller than `k`, a
//! probe of few or small lists), the remaining entries are [`NO_ROW`] with score `+inf`
//! (L2) or `-inf` (IP), after all real neighbours.
//!
//! **Memory.** No pass holds a query-by-database score matrix: the blocks keep `k`
//! candidates per query, the merge reads `blocks * k` per query.

pub mod exact;
pub mod fused;
pub mod ivf;
pub mod lattice;
pub(crate) mod probe;
pub mod topk;

use orrery_core::{Error, Result};

use crate::dist::{Wide, dot, sq_l2};
use crate::input::{Vectors, invalid};
use topk::Candidate;

/// The largest `k` a search accepts (a block's top-k lives in registers and shared
/// memory on a GPU; 128 candidates of 12 bytes per query).
pub const MAX_K: usize = 128;

/// Marks "no neighbour" in [`Neighbors::rows`].
pub const NO_ROW: u32 = u32::MAX;

/// What "near" means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Metric {
    /// Euclidean distance; the score is its square, smaller is nearer.
    L2,
    /// Inner product; larger is nearer (maximum inner product search).
    InnerProduct,
}

impl Metric {
    /// The ranking key of `a` against `b`: smaller is better.
    #[inline]
    pub fn key<A: Wide, B: Wide>(self, a: &[A], b: &[B]) -> f64 {
        match self {
            Metric::L2 => sq_l2(a, b),
            Metric::InnerProduct => -dot(a, b),
        }
    }

    /// The score reported for a key.
    #[inline]
    pub fn score(self, key: f64) -> f64 {
        match self {
            Metric::L2 => key,
            Metric::InnerProduct => -key,
        }
    }
}

/// The `k` nearest rows of every query, best first.
#[derive(Debug, Clone, PartialEq)]
pub struct Neighbors {
    /// Neighbours per query.
    pub k: usize,
    /// `queries * k` row indices, query-major ([`NO_ROW`] past the last candidate).
    pub rows: Vec<u32>,
    /// `queries * k` scores: squared distances (L2) or inner products (IP).
    pub scores: Vec<f64>,
}

impl Neighbors {
    /// Number of queries.
    pub fn len(&self) -> usize {
        self.rows.len().checked_div(self.k).unwrap_or(0)
    }

    /// Whether there were no queries.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The rows of query `q`, best first.
    ///
    /// # Panics
    /// When `q >= self.len()`.
    pub fn rows_of(&self, q: usize) -> &[u32] {
        &self.rows[q * self.k..(q + 1) * self.k]
    }

    /// The scores of query `q`, best first.
    ///
    /// # Panics
    /// When `q >= self.len()`.
    pub fn scores_of(&self, q: usize) -> &[f64] {
        &self.scores[q * self.k..(q + 1) * self.k]
    }

    pub(crate) fn from_lists(k: usize, metric: Metric, lists: &[Vec<Candidate>]) -> Self {
        let mut rows = Vec::with_capacity(lists.len() * k);
        let mut scores = Vec::with_capacity(lists.len() * k);
        for list in lists {
            debug_assert_eq!(list.len(), k);
            for c in list {
                rows.push(c.row);
                scores.push(metric.score(c.key));
            }
        }
        Self { k, rows, scores }
    }
}

/// Checks `k` against `1..=MAX_K`.
pub(crate) fn check_k(k: usize) -> Result<()> {
    if k == 0 || k > MAX_K {
        return Err(invalid("k", format!("k = {k}; searches return 1..={MAX_K} neighbours")));
    }
    Ok(())
}

/// Checks that the queries have the database's dimension.
pub(crate) fn check_query_dim(database_dim: usize, queries: &Vectors<'_>) -> Result<()> {
    if queries.dim() != database_dim {
        return Err(Error::LengthMismatch { what: "query dimension", expected: database_dim, actual: queries.dim() });
    }
    Ok(())
}

/// Queries per batch of every search: bounds the partial top-k lists held at once to
/// `1024 * blocks * k` candidates (blocks: database splits or probed lists).
pub(crate) const QUERY_BATCH: usize = 1024;
