//! The inverted file: k-means lists over the database, `nprobe` of them searched per
//! query.
//!
//! **Training** (on every database row, with the L2 metric whatever the search metric):
//!
//! - *k-means++ seeding.* The first centroid is a uniformly drawn row; each further one
//!   a row drawn with probability proportional to `D^2(x)`, the squared distance to the
//!   nearest centroid so far. The distances are a data-parallel pass ("device-like":
//!   every row updates its own `D^2` against the newest centroid); the draw is on the
//!   host, from a `ChaCha8Rng` seeded with [`IvfParams::seed`]: a uniform
//!   `u in [0, sum D^2)` and the first row whose running sum exceeds `u`. The running
//!   sum is blocked in a fixed order (chunks of 4,096 rows, then the chunk totals in
//!   order), so the seeding is bit-exact and reproducible for a seed, on any thread
//!   count. When every `D^2` is 0 (fewer distinct rows than lists) the row is drawn
//!   uniformly.
//! - *Lloyd iterations* ([`IvfParams::iterations`]): an assignment pass (every row to
//!   its nearest centroid, ties to the lower index) and an update with one task per
//!   centroid (its members in ascending row order, summed in `f64`; a centroid without
//!   members stays where it is).
//! - A final assignment makes the lists: each list's rows ascending, their vectors
//!   copied into list order (the index owns them, like an `IndexIVFFlat`).
//!
//! **Search**: the list-probing engine shared with the lattice: the `nprobe` best centroids by
//! the search metric, a partial top-k per probed list, a merge.

use orrery_core::{Error, Result};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use super::probe::{Lists, probe_search};
use super::{Metric, Neighbors, check_k, check_query_dim};
use crate::dist::sq_l2;
use crate::input::{Vectors, invalid};

/// Rows per block of the seeding's running sum (a fixed blocking: part of what makes the
/// draw reproducible).
pub const SEED_CHUNK: usize = 4096;

/// Training parameters of an [`IvfIndex`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IvfParams {
    /// Lists (k-means centroids), `1..=rows`.
    pub nlist: usize,
    /// Lloyd iterations after the seeding.
    pub iterations: usize,
    /// Seed of the k-means++ draws.
    pub seed: u64,
}

impl IvfParams {
    /// `nlist` lists, 10 Lloyd iterations, seed 0.
    pub fn new(nlist: usize) -> Self {
        Self { nlist, iterations: 10, seed: 0 }
    }
}

/// k-means++ seeding: the rows chosen as the `nlist` initial centroids, in draw order.
///
/// # Errors
/// As [`IvfIndex::build`]: [`Error::EmptyInput`] for no rows,
/// [`Error::InvalidArgument`] for `nlist` outside `1..=rows`.
pub fn kmeans_plus_plus(data: &Vectors<'_>, nlist: usize, seed: u64) -> Result<Vec<u32>> {
    check_nlist_rows(data.len(), nlist)?;
    let n = data.len();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let first = rng.random_range(0..n as u64) as usize;
    let mut chosen = vec![first as u32];
    let mut d2: Vec<f64> = (0..n).into_par_iter().map(|i| sq_l2(data.row(i), data.row(first))).collect();
    while chosen.len() < nlist {
        let chunk_sums: Vec<f64> = d2.par_chunks(SEED_CHUNK).map(|c| c.iter().fold(0.0, |a, d| a + d)).collect();
        let total = chunk_sums.iter().fold(0.0, |a, s| a + s);
        let pick = if total > 0.0 {
            let u = rng.random::<f64>() * total;
            let chunk =
                |c: usize| -> Result<Vec<f64>> { Ok(d2[c * SEED_CHUNK..((c + 1) * SEED_CHUNK).min(n)].to_vec()) };
            match draw(&chunk_sums, u, chunk)? {
                Some(row) => row,
                None => last_positive(&d2),
            }
        } else {
            rng.random_range(0..n as u64) as usize
        };
        chosen.push(pick as u32);
        let c = data.row(pick);
        d2.par_iter_mut().enumerate().for_each(|(i, d)| *d = d.min(sq_l2(data.row(i), c)));
    }
    Ok(chosen)
}

pub(crate) fn check_nlist_rows(n: usize, nlist: usize) -> Result<()> {
    if n == 0 {
        return Err(Error::EmptyInput { what: "database", min: 1 });
    }
    if nlist == 0 || nlist > n {
        return Err(invalid("nlist", format!("{nlist} lists for {n} rows; nlist must be in 1..={n}")));
    }
    Ok(())
}

fn check_centroids(dim: usize, centroids: &[f64]) -> Result<usize> {
    if centroids.is_empty() || !centroids.len().is_multiple_of(dim) {
        return Err(Error::LengthMismatch {
            what: "centroids (a positive multiple of dim)",
            expected: centroids.len().next_multiple_of(dim).max(dim),
            actual: centroids.len(),
        });
    }
    Ok(centroids.len() / dim)
}

/// The first row whose running sum of `d2` exceeds `u`, or `None` when rounding left `u`
/// at the total (the caller then takes [`last_positive`]). The running sum is the chunk
/// totals in order plus the sum inside the chunk from 0, the same additions that made
/// `chunk_sums`; `chunk(c)` gives the `d2` values of chunk `c` (rows `c * SEED_CHUNK..`),
/// fetched only for the chunks the draw looks into (the GPU index reads them back one at
/// a time).
pub(crate) fn draw(
    chunk_sums: &[f64],
    u: f64,
    mut chunk: impl FnMut(usize) -> Result<Vec<f64>>,
) -> Result<Option<usize>> {
    let mut acc = 0.0;
    for (c, &s) in chunk_sums.iter().enumerate() {
        if acc + s > u {
            let mut local = 0.0;
            for (i, &d) in chunk(c)?.iter().enumerate() {
                local += d;
                if acc + local > u {
                    return Ok(Some(c * SEED_CHUNK + i));
                }
            }
        }
        acc += s;
    }
    Ok(None)
}

/// The last row with `d2 > 0` (row 0 when there is none): the draw's answer when rounding
/// left `u` at the total.
pub(crate) fn last_positive(d2: &[f64]) -> usize {
    d2.iter().rposition(|&d| d > 0.0).unwrap_or(0)
}

/// The nearest centroid of every row by squared distance, ties to the lower index
/// (`centroids`: `lists * dim` values).
///
/// # Errors
/// [`Error::LengthMismatch`] when `centroids` is empty or not a multiple of `dim`.
pub fn assign_nearest(data: &Vectors<'_>, centroids: &[f64]) -> Result<Vec<u32>> {
    let dim = data.dim();
    let nlist = check_centroids(dim, centroids)?;
    Ok((0..data.len())
        .into_par_iter()
        .map(|i| {
            let x = data.row(i);
            let mut best = (0u32, f64::INFINITY);
            for l in 0..nlist {
                let d = sq_l2(x, &centroids[l * dim..(l + 1) * dim]);
                if d < best.1 {
                    best = (l as u32, d);
                }
            }
            best.0
        })
        .collect())
}

/// Lists from an assignment by a stable counting sort: `(offsets, rows)` with every
/// list's rows ascending.
///
/// # Errors
/// [`Error::IndexOutOfBounds`] for an assignment to a list `>= nlist`;
/// [`Error::TooManyPoints`] beyond `u32::MAX` rows.
pub fn lists_of(assignment: &[u32], nlist: usize) -> Result<(Vec<u32>, Vec<u32>)> {
    if assignment.len() > orrery_core::MAX_POINTS {
        return Err(Error::TooManyPoints { count: assignment.len(), max: orrery_core::MAX_POINTS, what: "rows" });
    }
    orrery_core::executor::check_indices("assignment", assignment, nlist)?;
    let mut offsets = vec![0u32; nlist + 1];
    for &a in assignment {
        offsets[a as usize + 1] += 1;
    }
    for l in 0..nlist {
        offsets[l + 1] += offsets[l];
    }
    let mut next = offsets.clone();
    let mut rows = vec![0u32; assignment.len()];
    for (i, &a) in assignment.iter().enumerate() {
        rows[next[a as usize] as usize] = i as u32;
        next[a as usize] += 1;
    }
    Ok((offsets, rows))
}

/// One Lloyd update: every centroid becomes the `f64` mean of its members (ascending
/// rows), one task per centroid; centroids without members are left as they are.
///
/// # Errors
/// [`Error::LengthMismatch`] when `offsets` do not have one entry per centroid plus one
/// or do not end at `rows.len()`; [`Error::IndexOutOfBounds`] for a row past the data;
/// [`Error::InvalidArgument`] for decreasing offsets.
pub fn lloyd_update(data: &Vectors<'_>, offsets: &[u32], rows: &[u32], centroids: &mut [f64]) -> Result<()> {
    let dim = data.dim();
    let nlist = check_centroids(dim, centroids)?;
    crate::input::check_family_len("list offsets", nlist + 1, offsets.len())?;
    crate::input::check_family_len("list rows (the last offset)", rows.len(), offsets[nlist] as usize)?;
    if offsets[0] != 0 || offsets.windows(2).any(|w| w[1] < w[0]) {
        return Err(invalid("list offsets", "offsets must start at 0 and never decrease".into()));
    }
    orrery_core::executor::check_indices("list rows", rows, data.len())?;
    centroids.par_chunks_mut(dim).enumerate().for_each(|(l, c)| {
        let members = &rows[offsets[l] as usize..offsets[l + 1] as usize];
        if members.is_empty() {
            return;
        }
        let mut sum = vec![0.0f64; dim];
        for &r in members {
            for (s, x) in sum.iter_mut().zip(data.row(r as usize)) {
                *s += f64::from(*x);
            }
        }
        let n = members.len() as f64;
        for (c, s) in c.iter_mut().zip(sum) {
            *c = s / n;
        }
    });
    Ok(())
}

/// An inverted-file index (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct IvfIndex {
    dim: usize,
    centroids: Vec<f64>,
    list_offsets: Vec<u32>,
    list_rows: Vec<u32>,
    list_vectors: Vec<f32>,
}

impl IvfIndex {
    /// Trains the lists on `database` and fills them.
    ///
    /// # Errors
    /// [`Error::EmptyInput`] for a database without rows; [`Error::InvalidArgument`]
    /// (`what = "nlist"`) for `nlist` outside `1..=rows`.
    pub fn build(database: &Vectors<'_>, params: &IvfParams) -> Result<Self> {
        let n = database.len();
        let dim = database.dim();
        let seeds = kmeans_plus_plus(database, params.nlist, params.seed)?;
        let mut centroids: Vec<f64> =
            seeds.iter().flat_map(|&r| database.row(r as usize).iter().map(|&x| f64::from(x))).collect();
        for _ in 0..params.iterations {
            let assignment = assign_nearest(database, &centroids)?;
            let (offsets, rows) = lists_of(&assignment, params.nlist)?;
            lloyd_update(database, &offsets, &rows, &mut centroids)?;
        }
        let (list_offsets, list_rows) = lists_of(&assign_nearest(database, &centroids)?, params.nlist)?;
        let mut list_vectors = vec![0.0f32; n * dim];
        list_vectors.par_chunks_mut(dim).zip(list_rows.par_iter()).for_each(|(dst, &r)| {
            dst.copy_from_slice(database.row(r as usize));
        });
        Ok(Self { dim, centroids, list_offsets, list_rows, list_vectors })
    }

    /// Values per vector.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of lists.
    pub fn nlist(&self) -> usize {
        self.list_offsets.len() - 1
    }

    /// Number of rows indexed.
    pub fn len(&self) -> usize {
        self.list_rows.len()
    }

    /// Always `false`: an index holds at least one row.
    pub fn is_empty(&self) -> bool {
        self.list_rows.is_empty()
    }

    /// The centroids, `nlist * dim` values.
    pub fn centroids(&self) -> &[f64] {
        &self.centroids
    }

    /// CSR offsets of the lists over [`IvfIndex::list_rows`].
    pub fn list_offsets(&self) -> &[u32] {
        &self.list_offsets
    }

    /// The database rows of every list, list after list, ascending within a list.
    pub fn list_rows(&self) -> &[u32] {
        &self.list_rows
    }

    /// The `k` nearest rows of every query among the members of its `nprobe` nearest
    /// lists.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for `k` outside `1..=128` or `nprobe` outside
    /// `1..=nlist`; [`Error::LengthMismatch`] when the dimensions differ.
    pub fn search(&self, queries: &Vectors<'_>, k: usize, nprobe: usize, metric: Metric) -> Result<Neighbors> {
        check_k(k)?;
        check_nprobe(nprobe, self.nlist())?;
        check_query_dim(self.dim, queries)?;
        let lists = Lists {
            vectors: Vectors::trusted(&self.list_vectors, self.dim),
            offsets: &self.list_offsets,
            rows: Some(&self.list_rows),
            centroids: &self.centroids,
        };
        Ok(probe_search(&lists, queries, k, nprobe, metric, None))
    }
}

/// Checks `nprobe` against `1..=lists`.
pub(crate) fn check_nprobe(nprobe: usize, lists: usize) -> Result<()> {
    if nprobe == 0 || nprobe > lists {
        return Err(invalid("nprobe", format!("{nprobe} lists probed of {lists}; nprobe must be in 1..={lists}")));
    }
    Ok(())
}
