//! Exact k-NN on CUDA ([`crate::exact_search`]'s result, rows and `f64` scores bit for
//! bit): module `clusters/knn` (`kernels/clusters/knn.cu`, whose header has the kernels'
//! reasoning and cost model).
//!
//! # Algorithm
//! 1. **Norms** (once per database, [`GpuExactSearch::new`]): `|x|^2` of every row in f64,
//!    rounded to f32, and `R = max |x|` (read back once).
//! 2. **Screen** (per batch of up to [`QUERY_BATCH`] queries): blocks of (128 queries, one
//!    database split) compute approximate f32 keys `|x|^2 - 2 q.x` (L2; `|q|^2` is common to
//!    a query's rows) or `-q.x` (inner product) by a register-blocked GEMM over 128-row
//!    tiles, and keep per query a top list of `KP = k + 16` (rounded up to 8) by
//!    replace-worst insertion. No query-by-database matrix exists anywhere: a block holds
//!    one 128 x 128 tile of scores in registers.
//! 3. **Refine** (a block per query): the splits' lists sorted together; `T` = the `k`-th
//!    smallest approximate key; every entry within `T + 2E` is rescored in f64 exactly as
//!    [`crate::dist`] computes it, and the `k` best by `(key, row)` are the result. `E`
//!    bounds the f32 error (`2 (D + 4) 2^-24 (|q| + R)^2` for L2), so the band holds every
//!    row of the true top `k`, unless a split's full list ends inside the band: then that
//!    list may have dropped one, and the query is **flagged**.
//! 4. **Exact path** for flagged queries ([`GpuExactSearch::finish`]): every row's exact
//!    f64 key and the executor's segmented top-k (ties to the lower position, which is the
//!    row). Flags come from massive ties (many duplicate rows near the `k`-th distance);
//!    continuous data essentially never flags. The exact path is also used for every query
//!    when the screen cannot run: its shared memory exceeds the device's limit (`k` near
//!    128 on devices with less than 183 KB per block), or `R^2` is not below 1e36 (f32
//!    products could overflow).
//!
//! # Ranking and ties
//! The CPU's: keys ordered by `(key, row)`, rows past the candidates [`crate::NO_ROW`] with
//! `+inf` (L2) or `-inf` (inner product). Rows and scores equal the CPU's exactly (the
//! rescoring uses the CPU's operations in the CPU's order, correctly rounded, no FMA), so
//! the tests compare them with `==`.

use orrery_core::{DeviceBuffer, Error, ExecutorKind, GpuExecutor, LaunchConfig, Order, ReduceOp, Result, Slice};

use super::device::DeviceVectors;
use super::sources::{
    KNN, KNN_AS, KNN_EXACT_THREADS, KNN_KC, KNN_MARGIN, KNN_MAX_KP, KNN_MAX_SORT, KNN_NORM_THREADS, KNN_REFINE_THREADS,
    KNN_THREADS, KNN_TILE,
};
use crate::input::Vectors;
use crate::search::{Metric, Neighbors, check_k, check_query_dim};

mod kn {
    orrery_core::kernels! {
        module = super::KNN;
        /// `norms[r] = |x_r|^2` (f64 sum rounded to f32).
        pub(super) fn knn_norms(read db: f32, write norms: f32, scalar n: u32, scalar dim: u32);
        /// The f32 screen: per (query, split) the sorted top-`kp` approximate keys.
        pub(super) fn knn_screen(
            read db: f32, read queries: f32, read norms: f32, write part_key: f32, write part_row: u32,
            scalar n: u32, scalar nq: u32, scalar q_first: u32, scalar dim: u32, scalar splits: u32,
            scalar split_rows: u32, scalar kp: u32, scalar metric: u32,
        );
        /// The exact refinement: band, overflow flag, f64 rescoring, the `k` best.
        pub(super) fn knn_refine(
            read db: f32, read queries: f32, read part_key: f32, read part_row: u32,
            write out_rows: u32, write out_scores: f64, write flags: u32,
            scalar n: u32, scalar nq: u32, scalar q_first: u32, scalar dim: u32, scalar splits: u32,
            scalar kp: u32, scalar k: u32, scalar metric: u32, scalar sort_len: u32, scalar rmax: f32,
        );
        /// Exact f64 keys of every row for a batch of flagged queries.
        pub(super) fn knn_exact_keys(
            read db: f32, read queries: f32, read fq: u32, write keys: f64,
            scalar n: u32, scalar dim: u32, scalar batch: u32, scalar metric: u32,
        );
        /// The segmented top-k of the exact keys into the outputs of the flagged queries.
        pub(super) fn knn_fallback_scatter(
            read fq: u32, read idx: u32, read top: f64, write out_rows: u32, write out_scores: f64,
            scalar n: u32, scalar k: u32, scalar batch: u32, scalar metric: u32,
        );
    }
}

/// Queries per screen-and-refine launch pair: bounds the partial lists to `QUERY_BATCH *
/// 2048` entries (134 MB) whatever the number of queries.
pub const QUERY_BATCH: usize = 8192;

/// Most exact keys held at once by the exact path (`f64`, 256 MB): flagged queries go in
/// batches of `max(1, FALLBACK_KEYS / rows)`.
pub const FALLBACK_KEYS: usize = 1 << 25;

/// Squared norms at or above this make the exact path run for every query (the f32
/// screen's products could overflow).
const MAX_NORM2: f32 = 1e36;

/// How a batch of queries is screened (a function of the sizes and the device only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScreenPlan {
    /// Entries per (query, split) list: `k + 16` rounded up to 8.
    pub kp: usize,
    /// Database splits (blocks per query tile).
    pub splits: usize,
    /// Rows per split (a multiple of 128; the last split may be shorter).
    pub split_rows: usize,
    /// Entries `knn_refine` sorts per query (a power of two, at least `splits * kp`).
    pub sort_len: usize,
    /// Dynamic shared memory of `knn_screen` in bytes.
    pub screen_shared: usize,
    /// Dynamic shared memory of `knn_refine` in bytes.
    pub refine_shared: usize,
}

impl ScreenPlan {
    /// The plan for `queries` queries (one batch) over `rows` rows with `k` neighbours on a
    /// device of `compute_units` multiprocessors: enough splits for about 8 blocks per
    /// multiprocessor (2 resident, 4 waves), a power of two, at most `2048 / kp` (the
    /// refinement's sort) and at most one per 128 rows.
    pub fn new(rows: usize, queries: usize, k: usize, compute_units: u32) -> Self {
        let kp = (k + KNN_MARGIN).next_multiple_of(8).min(KNN_MAX_KP);
        let qtiles = queries.div_ceil(KNN_TILE).max(1);
        let target = (8 * compute_units.max(1) as usize).div_ceil(qtiles).max(1);
        let prev_pow2 = 1usize << (usize::BITS - 1 - target.leading_zeros());
        let max_splits = (KNN_MAX_SORT / kp).max(1).min(rows.div_ceil(KNN_TILE).max(1));
        let splits = prev_pow2.clamp(1, max_splits);
        let split_rows = rows.div_ceil(splits).next_multiple_of(KNN_TILE).max(KNN_TILE);
        let splits = rows.div_ceil(split_rows).max(1);
        let sort_len = (splits * kp).next_power_of_two();
        let screen_shared = 4 * KNN_KC * KNN_AS * 4 + KNN_TILE * kp * 8 + 3 * KNN_TILE * 4;
        Self { kp, splits, split_rows, sort_len, screen_shared, refine_shared: sort_len * 20 }
    }
}

/// What [`GpuExactSearch::enqueue`] started, for [`GpuExactSearch::finish`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "the results are only complete after GpuExactSearch::finish"]
pub struct PendingSearch {
    queries: usize,
    k: usize,
    metric: Metric,
    all_exact: bool,
}

/// Exact k-NN over one database on one executor: its norms, and the scratch and outputs of
/// the searches (grown as needed, kept across searches).
pub struct GpuExactSearch<E: GpuExecutor> {
    rows: usize,
    dim: usize,
    norms: E::Buffer<f32>,
    rmax: f32,
    part_key: Option<E::Buffer<f32>>,
    part_row: Option<E::Buffer<u32>>,
    out_rows: Option<E::Buffer<u32>>,
    out_scores: Option<E::Buffer<f64>>,
    flags: Option<E::Buffer<u32>>,
    fallback: usize,
}

/// `slot` holding a buffer of at least `len` elements.
fn ensure<'a, E: GpuExecutor, T: orrery_core::Storage>(
    exec: &E,
    slot: &'a mut Option<E::Buffer<T>>,
    len: usize,
) -> Result<&'a mut E::Buffer<T>> {
    let len = len.max(1);
    if slot.as_ref().is_none_or(|b| b.len() < len) {
        *slot = None;
        *slot = Some(exec.alloc::<T>(len)?);
    }
    Ok(slot.as_mut().expect("allocated above"))
}

fn grid<'a, E: GpuExecutor>(blocks: usize, threads: u32) -> LaunchConfig<'a, E> {
    LaunchConfig::blocks(u32::try_from(blocks).unwrap_or(u32::MAX), threads)
}

fn metric_code(metric: Metric) -> u32 {
    match metric {
        Metric::L2 => 0,
        Metric::InnerProduct => 1,
    }
}

/// CUDA with f64 arithmetic, or [`Error::Unsupported`].
fn check_executor<E: GpuExecutor>(exec: &E) -> Result<()> {
    if exec.kind() != ExecutorKind::Cuda || !exec.limits().f64 {
        return Err(orrery_core::executor::unsupported(
            &exec.name(),
            "exact k-NN",
            "the exact rescoring needs f64 kernels, which only the CUDA module has (WGSL has no f64)",
        ));
    }
    Ok(())
}

impl<E: GpuExecutor> GpuExactSearch<E> {
    /// Prepares `database`: its squared norms and largest norm (one 4-byte read back).
    ///
    /// # Errors
    /// [`Error::Unsupported`] unless the executor is CUDA with f64 arithmetic;
    /// [`Error::EmptyInput`] for a database without rows; compile and device failures.
    pub fn new(exec: &E, database: &DeviceVectors<E>) -> Result<Self> {
        check_executor(exec)?;
        if database.is_empty() {
            return Err(Error::EmptyInput { what: "database", min: 1 });
        }
        let (n, dim) = (database.len(), database.dim());
        let mut norms = exec.alloc::<f32>(n)?;
        let rows_per_block = (KNN_NORM_THREADS / 32) as usize;
        kn::knn_norms(
            exec,
            &grid(n.div_ceil(rows_per_block), KNN_NORM_THREADS),
            database.data(),
            &mut norms,
            n as u32,
            dim as u32,
        )?;
        let mut max = exec.alloc::<f32>(1)?;
        exec.reduce(&norms, ReduceOp::Max, &mut max)?;
        let m = exec.download(&max)?[0];
        // R rounded up past the f32 rounding of |x|^2; infinite when the screen must not run.
        let rmax =
            if m.is_finite() && m < MAX_NORM2 { (f64::from(m).sqrt() * (1.0 + 1e-6)) as f32 } else { f32::INFINITY };
        Ok(Self {
            rows: n,
            dim,
            norms,
            rmax,
            part_key: None,
            part_row: None,
            out_rows: None,
            out_scores: None,
            flags: None,
            fallback: 0,
        })
    }

    /// Queries of the last [`GpuExactSearch::finish`] that went through the exact path.
    pub fn fallback_queries(&self) -> usize {
        self.fallback
    }

    /// The plan of a batch of `queries` queries with `k` neighbours on `exec`.
    pub fn plan(&self, exec: &E, queries: usize, k: usize) -> ScreenPlan {
        ScreenPlan::new(self.rows, queries.min(QUERY_BATCH), k, exec.limits().compute_units)
    }

    fn check(&self, database: &DeviceVectors<E>, queries: &DeviceVectors<E>, k: usize) -> Result<()> {
        check_k(k)?;
        if database.len() != self.rows || database.dim() != self.dim {
            return Err(Error::LengthMismatch {
                what: "database (the one GpuExactSearch::new was given)",
                expected: self.rows * self.dim,
                actual: database.len() * database.dim(),
            });
        }
        if queries.dim() != self.dim {
            return Err(Error::LengthMismatch { what: "query dimension", expected: self.dim, actual: queries.dim() });
        }
        Ok(())
    }

    /// Enqueues the screen and the refinement of every query (nothing is read back); the
    /// result is complete after [`GpuExactSearch::finish`].
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] (`what = "k"`) outside `1..=128`;
    /// [`Error::LengthMismatch`] for another database or a query dimension that differs;
    /// compile and device failures.
    pub fn enqueue(
        &mut self,
        exec: &E,
        database: &DeviceVectors<E>,
        queries: &DeviceVectors<E>,
        k: usize,
        metric: Metric,
    ) -> Result<PendingSearch> {
        self.check(database, queries, k)?;
        let nq = queries.len();
        let plan = self.plan(exec, nq, k);
        let all_exact =
            !self.rmax.is_finite() || plan.screen_shared > exec.limits().max_shared_bytes_per_block as usize;
        let pending = PendingSearch { queries: nq, k, metric, all_exact };
        ensure(exec, &mut self.out_rows, nq * k)?;
        ensure(exec, &mut self.out_scores, nq * k)?;
        ensure(exec, &mut self.flags, nq)?;
        if nq == 0 || all_exact {
            return Ok(pending);
        }
        let (n32, dim32, m) = (self.rows as u32, self.dim as u32, metric_code(metric));
        ensure(exec, &mut self.part_key, nq.min(QUERY_BATCH) * plan.splits * plan.kp)?;
        ensure(exec, &mut self.part_row, nq.min(QUERY_BATCH) * plan.splits * plan.kp)?;
        let (Some(part_key), Some(part_row), Some(out_rows), Some(out_scores), Some(flags)) = (
            self.part_key.as_mut(),
            self.part_row.as_mut(),
            self.out_rows.as_mut(),
            self.out_scores.as_mut(),
            self.flags.as_mut(),
        ) else {
            unreachable!("allocated above");
        };
        let mut first = 0;
        while first < nq {
            let batch = (nq - first).min(QUERY_BATCH);
            let p = ScreenPlan::new(self.rows, batch, k, exec.limits().compute_units);
            let qtiles = batch.div_ceil(KNN_TILE);
            let screen = grid::<E>(qtiles * p.splits, KNN_THREADS).with_shared_bytes(p.screen_shared as u32);
            let (b32, f32_, s32) = (batch as u32, first as u32, p.splits as u32);
            kn::knn_screen(
                exec,
                &screen,
                database.data(),
                queries.data(),
                &self.norms,
                &mut *part_key,
                &mut *part_row,
                n32,
                b32,
                f32_,
                dim32,
                s32,
                p.split_rows as u32,
                p.kp as u32,
                m,
            )?;
            let refine = grid::<E>(batch, KNN_REFINE_THREADS).with_shared_bytes(p.refine_shared as u32);
            kn::knn_refine(
                exec,
                &refine,
                database.data(),
                queries.data(),
                &*part_key,
                &*part_row,
                &mut *out_rows,
                &mut *out_scores,
                &mut *flags,
                n32,
                b32,
                f32_,
                dim32,
                s32,
                p.kp as u32,
                k as u32,
                m,
                p.sort_len as u32,
                self.rmax,
            )?;
            first += batch;
        }
        Ok(pending)
    }

    /// Waits for the enqueued search, runs the exact path for its flagged queries and
    /// downloads the result.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] for another database or queries than
    /// [`GpuExactSearch::enqueue`] had; compile, device and transfer failures.
    pub fn finish(
        &mut self,
        exec: &E,
        database: &DeviceVectors<E>,
        queries: &DeviceVectors<E>,
        pending: PendingSearch,
    ) -> Result<Neighbors> {
        let PendingSearch { queries: nq, k, metric, all_exact } = pending;
        self.check(database, queries, k)?;
        orrery_core::executor::check_len("queries (those of the pending search)", nq, queries.len())?;
        if nq == 0 {
            return Ok(Neighbors { k, rows: Vec::new(), scores: Vec::new() });
        }
        let flagged: Vec<u32> = if all_exact {
            (0..nq as u32).collect()
        } else {
            let mut flags = vec![0u32; nq];
            exec.read(self.flags.as_ref().expect("allocated by enqueue"), 0, &mut flags)?;
            (0..nq as u32).filter(|&q| flags[q as usize] != 0).collect()
        };
        self.fallback = flagged.len();
        if !flagged.is_empty() {
            self.exact_path(exec, database, queries, &flagged, k, metric)?;
        }
        let mut rows = vec![0u32; nq * k];
        let mut scores = vec![0f64; nq * k];
        exec.read(self.out_rows.as_ref().expect("allocated by enqueue"), 0, &mut rows)?;
        exec.read(self.out_scores.as_ref().expect("allocated by enqueue"), 0, &mut scores)?;
        Ok(Neighbors { k, rows, scores })
    }

    /// [`GpuExactSearch::enqueue`] then [`GpuExactSearch::finish`].
    ///
    /// # Errors
    /// As those two.
    pub fn search(
        &mut self,
        exec: &E,
        database: &DeviceVectors<E>,
        queries: &DeviceVectors<E>,
        k: usize,
        metric: Metric,
    ) -> Result<Neighbors> {
        let pending = self.enqueue(exec, database, queries, k, metric)?;
        self.finish(exec, database, queries, pending)
    }

    /// Every row's exact key for the `flagged` queries, in batches, and the executor's
    /// segmented top-k (ties to the lower position, i.e. the lower row).
    fn exact_path(
        &mut self,
        exec: &E,
        database: &DeviceVectors<E>,
        queries: &DeviceVectors<E>,
        flagged: &[u32],
        k: usize,
        metric: Metric,
    ) -> Result<()> {
        let n = self.rows;
        let per = (FALLBACK_KEYS / n).max(1).min(flagged.len());
        let mut keys = exec.alloc::<f64>(per * n)?;
        let mut fq = exec.alloc::<u32>(per)?;
        let mut seg = exec.alloc::<u32>(per + 1)?;
        let mut idx = exec.alloc::<u32>(per * k)?;
        let mut top = exec.alloc::<f64>(per * k)?;
        let (out_rows, out_scores) = (
            self.out_rows.as_mut().expect("allocated by enqueue"),
            self.out_scores.as_mut().expect("allocated by enqueue"),
        );
        let m = metric_code(metric);
        for batch in flagged.chunks(per) {
            let b = batch.len();
            exec.write(&mut fq, 0, batch)?;
            let offsets: Vec<u32> = (0..=b).map(|i| (i * n) as u32).collect();
            exec.write(&mut seg, 0, &offsets)?;
            kn::knn_exact_keys(
                exec,
                &grid((b * n).div_ceil(KNN_EXACT_THREADS as usize), KNN_EXACT_THREADS),
                database.data(),
                queries.data(),
                &fq,
                &mut keys,
                n as u32,
                self.dim as u32,
                b as u32,
                m,
            )?;
            exec.segmented_top_k(
                keys.slice(0..b * n)?,
                seg.slice(0..b + 1)?,
                k as u32,
                Order::Smallest,
                idx.slice_mut(0..b * k)?,
                top.slice_mut(0..b * k)?,
            )?;
            kn::knn_fallback_scatter(
                exec,
                &grid((b * k).div_ceil(KNN_EXACT_THREADS as usize), KNN_EXACT_THREADS),
                &fq,
                &idx,
                &top,
                &mut *out_rows,
                &mut *out_scores,
                n as u32,
                k as u32,
                b as u32,
                m,
            )?;
        }
        Ok(())
    }
}

/// The `k` nearest database rows of every query, exactly, on `exec` (CUDA): upload, search,
/// download. Equal to [`crate::exact_search`] (rows and scores).
///
/// # Errors
/// [`Error::Unsupported`] unless the executor is CUDA with f64 arithmetic; otherwise as
/// [`crate::exact_search`]; compile, device and transfer failures.
pub fn exact_search<E: GpuExecutor>(
    exec: &E,
    database: &Vectors<'_>,
    queries: &Vectors<'_>,
    k: usize,
    metric: Metric,
) -> Result<Neighbors> {
    check_k(k)?;
    if database.is_empty() {
        return Err(Error::EmptyInput { what: "database", min: 1 });
    }
    check_query_dim(database.dim(), queries)?;
    check_executor(exec)?;
    let db = DeviceVectors::upload(exec, database)?;
    let q = DeviceVectors::upload(exec, queries)?;
    let mut search = GpuExactSearch::new(exec, &db)?;
    search.search(exec, &db, &q, k, metric)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_fill_the_device_and_fit_the_refinement() {
        // The benchmark's shape on an H200 (132 SMs): 32 query tiles, 32 splits of 31,250
        // rows (rounded up to 31,360), 32-entry lists.
        let p = ScreenPlan::new(1_000_000, 4096, 10, 132);
        assert_eq!((p.kp, p.splits, p.split_rows, p.sort_len), (32, 32, 31_360, 1024));
        assert_eq!(p.screen_shared, 33_792 + 128 * 32 * 8 + 1536);
        // k = 128: 144-entry lists, at most 14 splits (2,016 entries to sort).
        let p = ScreenPlan::new(1_000_000, 100, 128, 132);
        assert_eq!((p.kp, p.splits, p.sort_len), (144, 14, 2048));
        assert!(p.splits * p.kp <= p.sort_len && p.sort_len <= KNN_MAX_SORT);
        // A tiny database: one split, never an empty one.
        for rows in [1, 5, 127, 128, 129, 300, 4097] {
            let p = ScreenPlan::new(rows, 7, 3, 132);
            assert!(p.splits >= 1 && (p.splits - 1) * p.split_rows < rows && p.splits * p.split_rows >= rows, "{rows}");
            assert!(p.split_rows.is_multiple_of(KNN_TILE));
        }
    }
}
