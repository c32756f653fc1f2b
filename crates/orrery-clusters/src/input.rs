//! Validated input: row-major `f32` vectors and clusters as CSR offsets over them.
//!
//! Every statistic and every search takes a [`Vectors`] (a database or a batch of
//! queries) or a [`Clusters`] (vectors plus CSR offsets). Both are validated once, here,
//! so the passes behind them trust their input:
//!
//! - `dim >= 1` and `data.len()` is a whole number of rows (`rows * dim`);
//! - every value is finite (NaN and infinities are rejected with the flat index of the
//!   first offender);
//! - at most `u32::MAX` rows (row indices are `u32`, ADR 0002);
//! - offsets have `clusters + 1 >= 2` entries, start at 0, never decrease and end at the
//!   number of rows. Equal neighbours are allowed: **empty clusters are valid input**
//!   for every statistic (each has a documented sentinel); only the lattice search,
//!   which ranks clusters by their centroids, rejects them
//!   ([`Clusters::check_non_empty`]).
//!
//! Offsets are borrowed `&[u32]`, not `usize`: a row index is 32-bit everywhere in
//! orrery (ADR 0002), the GPU passes read the same array without a conversion, and
//! `u32::MAX` rows of 1,024 `f32` dims would be 17.6 TB, far beyond one device.

use std::ops::Range;

use orrery_core::{Error, MAX_POINTS, Result};
use rayon::prelude::*;

/// Values per task of the finiteness check: a branch-free scan of a chunk costs about as
/// much as one rayon split, so chunks keep the scan vectorised and the splits rare.
const FINITE_CHUNK: usize = 1 << 14;

/// Validated, borrowed row-major vectors: row `i` is `data[i * dim..(i + 1) * dim]`.
///
/// Zero rows are allowed by the type (a batch of no queries); operations that need
/// rows say so with [`Error::EmptyInput`].
#[derive(Debug, Clone, Copy)]
pub struct Vectors<'a> {
    data: &'a [f32],
    dim: usize,
}

impl<'a> Vectors<'a> {
    /// Borrows `data` as rows of `dim` values.
    ///
    /// ```
    /// # use orrery_clusters::Vectors;
    /// let v = Vectors::new(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 3)?;
    /// assert_eq!((v.len(), v.dim(), v.row(1)), (2, 3, &[4.0f32, 5.0, 6.0][..]));
    /// # Ok::<(), orrery_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] (`what = "dim"`) for `dim == 0`;
    /// [`Error::LengthMismatch`] (`what = "vectors (a multiple of dim)"`) when
    /// `data.len()` is not a multiple of `dim` (a ragged last row);
    /// [`Error::TooManyPoints`] beyond `u32::MAX` rows;
    /// [`Error::NonFiniteValue`] (`what = "vectors"`) for the first NaN or infinite
    /// value, at its flat index `row * dim + coordinate`.
    pub fn new(data: &'a [f32], dim: usize) -> Result<Self> {
        if dim == 0 {
            return Err(invalid("dim", "0 values per vector; dim must be at least 1".into()));
        }
        if !data.len().is_multiple_of(dim) {
            return Err(Error::LengthMismatch {
                what: "vectors (a multiple of dim)",
                expected: data.len().next_multiple_of(dim),
                actual: data.len(),
            });
        }
        let rows = data.len() / dim;
        if rows > MAX_POINTS {
            return Err(Error::TooManyPoints { count: rows, max: MAX_POINTS, what: "vectors" });
        }
        check_finite(data, "vectors")?;
        Ok(Self { data, dim })
    }

    /// Vectors that are known to be valid (copies of validated ones).
    pub(crate) fn trusted(data: &'a [f32], dim: usize) -> Self {
        debug_assert!(dim >= 1 && data.len().is_multiple_of(dim));
        Self { data, dim }
    }

    /// The values, row-major.
    pub fn data(&self) -> &'a [f32] {
        self.data
    }

    /// Values per vector.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.data.len() / self.dim
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Row `i`.
    ///
    /// # Panics
    /// When `i >= self.len()`.
    #[inline]
    pub fn row(&self, i: usize) -> &'a [f32] {
        &self.data[i * self.dim..(i + 1) * self.dim]
    }

    /// Rows `range` as one flat slice.
    ///
    /// # Panics
    /// When the range is out of bounds.
    #[inline]
    pub fn rows(&self, range: Range<usize>) -> &'a [f32] {
        &self.data[range.start * self.dim..range.end * self.dim]
    }
}

/// Validated clusters in CSR form: cluster `c` holds rows `offsets[c]..offsets[c + 1]`
/// of [`Clusters::vectors`] (its *members*, in that order).
///
/// Invariants (checked by [`Clusters::new`]): at least one cluster, `offsets[0] == 0`,
/// offsets never decrease (a cluster may be empty), the last offset is the number of
/// rows, and the vectors satisfy [`Vectors::new`].
#[derive(Debug, Clone, Copy)]
pub struct Clusters<'a> {
    vectors: Vectors<'a>,
    offsets: &'a [u32],
}

impl<'a> Clusters<'a> {
    /// Borrows `data` (rows of `dim` values) split into clusters by `offsets`.
    ///
    /// ```
    /// # use orrery_clusters::Clusters;
    /// // three clusters in 2-D: two members, none, one member
    /// let data = [0.0, 0.0, 2.0, 0.0, 5.0, 5.0];
    /// let c = Clusters::new(&data, 2, &[0, 2, 2, 3])?;
    /// assert_eq!((c.len(), c.size(0), c.size(1), c.range(2)), (3, 2, 0, 2..3));
    /// # Ok::<(), orrery_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// Those of [`Vectors::new`], and for the offsets:
    /// [`Error::EmptyInput`] (`what = "cluster offsets"`) for fewer than two entries (no
    /// cluster); [`Error::InvalidArgument`] (`what = "cluster offsets"`) naming the first
    /// entry that is not 0 at the start or is smaller than its predecessor;
    /// [`Error::LengthMismatch`] (`what = "vectors"`) when the last offset times `dim`
    /// is not `data.len()` (offsets that end before or after the data).
    pub fn new(data: &'a [f32], dim: usize, offsets: &'a [u32]) -> Result<Self> {
        if dim == 0 {
            return Err(invalid("dim", "0 values per vector; dim must be at least 1".into()));
        }
        check_offsets(offsets)?;
        let rows = offsets[offsets.len() - 1] as usize;
        let expected = rows.checked_mul(dim).ok_or(Error::TooManyPoints {
            count: rows,
            max: usize::MAX / dim,
            what: "vectors (rows * dim)",
        })?;
        if data.len() != expected {
            return Err(Error::LengthMismatch { what: "vectors", expected, actual: data.len() });
        }
        let vectors = Vectors::new(data, dim)?;
        Ok(Self { vectors, offsets })
    }

    /// Splits already validated `vectors` into clusters by `offsets`.
    ///
    /// # Errors
    /// As [`Clusters::new`] for the offsets.
    pub fn from_vectors(vectors: Vectors<'a>, offsets: &'a [u32]) -> Result<Self> {
        check_offsets(offsets)?;
        let rows = offsets[offsets.len() - 1] as usize;
        if rows != vectors.len() {
            return Err(Error::LengthMismatch {
                what: "vectors",
                expected: rows * vectors.dim(),
                actual: vectors.data().len(),
            });
        }
        Ok(Self { vectors, offsets })
    }

    /// The member vectors of all clusters, cluster after cluster.
    pub fn vectors(&self) -> Vectors<'a> {
        self.vectors
    }

    /// The CSR offsets (`len() + 1` entries).
    pub fn offsets(&self) -> &'a [u32] {
        self.offsets
    }

    /// Values per vector.
    pub fn dim(&self) -> usize {
        self.vectors.dim()
    }

    /// Number of clusters (at least 1).
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Always `false`: validated clusters hold at least one cluster (which may be
    /// empty).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Total number of member vectors.
    pub fn num_vectors(&self) -> usize {
        self.vectors.len()
    }

    /// Members of cluster `c`.
    ///
    /// # Panics
    /// When `c >= self.len()`.
    pub fn size(&self, c: usize) -> usize {
        (self.offsets[c + 1] - self.offsets[c]) as usize
    }

    /// The rows of cluster `c`.
    ///
    /// # Panics
    /// When `c >= self.len()`.
    pub fn range(&self, c: usize) -> Range<usize> {
        self.offsets[c] as usize..self.offsets[c + 1] as usize
    }

    /// The cluster that holds row `row` (the last of several with the same start when
    /// empty clusters precede it; empty clusters hold no row).
    ///
    /// # Panics
    /// When `row >= self.num_vectors()`.
    pub fn cluster_of(&self, row: usize) -> usize {
        assert!(row < self.num_vectors(), "row {row} out of bounds");
        self.offsets.partition_point(|&o| o as usize <= row) - 1
    }

    /// Fails on the first empty cluster.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] (`what = "cluster offsets"`) naming the empty cluster.
    pub fn check_non_empty(&self) -> Result<()> {
        check_non_empty_offsets(self.offsets)
    }
}

fn check_offsets(offsets: &[u32]) -> Result<()> {
    if offsets.len() < 2 {
        return Err(Error::EmptyInput { what: "cluster offsets", min: 2 });
    }
    if offsets[0] != 0 {
        return Err(invalid("cluster offsets", format!("offsets[0] = {}: offsets must start at 0", offsets[0])));
    }
    if let Some(i) = offsets.windows(2).position(|w| w[1] < w[0]) {
        return Err(invalid(
            "cluster offsets",
            format!(
                "offsets[{}] = {} is smaller than offsets[{i}] = {}: offsets must not decrease",
                i + 1,
                offsets[i + 1],
                offsets[i]
            ),
        ));
    }
    Ok(())
}

/// The first non-finite value (lowest index), as [`Error::NonFiniteValue`].
/// [`Clusters::check_non_empty`] on raw (validated) offsets, for device clusters too.
pub(crate) fn check_non_empty_offsets(offsets: &[u32]) -> Result<()> {
    match offsets.windows(2).position(|w| w[0] == w[1]) {
        None => Ok(()),
        Some(c) => Err(invalid(
            "cluster offsets",
            format!(
                "cluster {c} is empty (offsets[{c}] = offsets[{}] = {}); this operation needs a \
                 centroid for every cluster",
                c + 1,
                offsets[c]
            ),
        )),
    }
}

pub(crate) fn check_finite(values: &[f32], what: &'static str) -> Result<()> {
    let all_finite = |c: &[f32]| c.iter().fold(true, |ok, v| ok & v.is_finite());
    match values.par_chunks(FINITE_CHUNK).position_first(|c| !all_finite(c)) {
        None => Ok(()),
        Some(chunk) => {
            let start = chunk * FINITE_CHUNK;
            let index = start + values[start..].iter().position(|v| !v.is_finite()).unwrap_or(0);
            Err(Error::NonFiniteValue { what, index, value: f64::from(values[index]) })
        }
    }
}

/// A finite scalar parameter, as [`Error::NonFiniteValue`] otherwise.
pub(crate) fn check_finite_scalar(what: &'static str, value: f64) -> Result<()> {
    if value.is_finite() { Ok(()) } else { Err(Error::NonFiniteValue { what, index: 0, value }) }
}

pub(crate) fn invalid(what: &'static str, reason: String) -> Error {
    Error::InvalidArgument { what, reason }
}

/// Checks that a result of an earlier family belongs to `clusters`.
pub(crate) fn check_family_len(what: &'static str, expected: usize, actual: usize) -> Result<()> {
    if expected == actual { Ok(()) } else { Err(Error::LengthMismatch { what, expected, actual }) }
}
