//! Exact k-NN on CUDA ([`crate::exact_search`]'s result, rows and `f64` scores bit for
//! bit): module `clusters/knn` (`kernels/clusters/knn.cu`, whose header has the kernels'
//! reasoning and cost model).
//!
//! # Algorithm
//! 1. **Norms** (once per database, [`GpuExactSearch::new`]): `|x|^2` of every row in f64,
//!    rounded to f32, and `R = max |x|` (read back once).
//! 2. **Candidates**, by one of two [`Strategy`]s (same result, different cost), per batch
//!    of up to [`QUERY_BATCH`] queries. Both compute approximate f32 keys `|x|^2 - 2 q.x`
//!    (L2; `|q|^2` is common to a query's rows) or `-q.x` (inner product) by one
//!    register-blocked GEMM of 128-query by 128-row tiles; no query-by-database matrix
//!    exists anywhere. `E` bounds their error (`2 (D + 4) 2^-24 (|q| + R)^2` for L2).
//!    - [`Strategy::Threshold`] (default): the exact top `k` of a strided sample (every
//!      [`sample_stride`]-th row, searched with the lists below) gives `T_s`, an exact key
//!      of `k` distinct rows, so the true `k`-th key is `<= T_s`; the full pass appends
//!      every row whose f32 key is within `T_s + E` to the query's candidates (at most
//!      [`CANDIDATE_CAP`]), which holds every row of the true top `k`. A query with more
//!      candidates is **flagged**.
//!    - [`Strategy::Lists`]: blocks of (128 queries, one database split) keep per query a
//!      top list of `KP = k + 16` (rounded up to 8) by replace-worst insertion; the refine
//!      step sorts the splits' lists, takes `T` = the `k`-th approximate key and the band
//!      `T + 2E`, which holds the true top `k` unless a split's full list ends inside it
//!      (then that list may have dropped a row: the query is **flagged**).
//! 3. **Rescoring**: the candidates' keys in f64 exactly as [`crate::dist`] computes them,
//!    and the `k` best by `(key, row)` are the result.
//! 4. **Exact path** for flagged queries ([`GpuExactSearch::finish`]): every row's exact
//!    f64 key and the executor's segmented top-k (ties to the lower position, which is the
//!    row). Flags come from massive ties (thousands of rows at the `k`-th distance);
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
        /// Every `stride`-th database row and its norm, into the sample.
        pub(super) fn knn_gather(
            read db: f32, read norms: f32, write sample: f32, write sample_norms: f32,
            scalar n: u32, scalar dim: u32, scalar stride: u32, scalar rows: u32,
        );
        /// Per query the approximate-key threshold from the sample's exact `k`-th key.
        pub(super) fn knn_thresholds(
            read queries: f32, read sample_scores: f64, write thr: f32,
            scalar nq: u32, scalar q_first: u32, scalar dim: u32, scalar k: u32, scalar metric: u32,
            scalar rmax: f32,
        );
        /// The f32 filter: every row within its query's threshold appended to the query's
        /// candidates.
        pub(super) fn knn_filter(
            read db: f32, read queries: f32, read norms: f32, read thr: f32, write count: u32, write cand: u32,
            scalar n: u32, scalar nq: u32, scalar q_first: u32, scalar dim: u32, scalar splits: u32,
            scalar split_rows: u32, scalar cap: u32, scalar metric: u32,
        );
        /// The candidates rescored exactly and sorted; the `k` best written, or the query
        /// flagged when it had more than `cap`.
        pub(super) fn knn_rescore(
            read db: f32, read queries: f32, read count: u32, read cand: u32,
            write out_rows: u32, write out_scores: f64, write flags: u32,
            scalar n: u32, scalar nq: u32, scalar q_first: u32, scalar dim: u32, scalar cap: u32,
            scalar k: u32, scalar metric: u32,
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

/// Candidates the threshold filter keeps per query ([`Strategy::Threshold`]): a query with
/// more (massive ties, or a sample that missed its neighbourhood) takes the exact path.
/// `knn_rescore` sorts them in 12 bytes each of shared memory (48 KiB).
pub const CANDIDATE_CAP: usize = 4096;

/// How the f32 screen finds each query's candidates for the exact rescoring.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strategy {
    /// Threshold, then filter (the default). A strided sample of the database (every
    /// `s`-th row, `s = CANDIDATE_CAP / (8 k)`) is searched with [`Strategy::Lists`]; its
    /// exact `k`-th key bounds the true one from above, so every row whose f32 key is within
    /// that bound plus the error bound `E` is a candidate, and the full pass only compares
    /// and appends (a few hundred rows per query for continuous data): the screen becomes a
    /// plain GEMM. The candidates are rescored exactly and sorted.
    #[default]
    Threshold,
    /// Per (query, database split) a top list of `k + 16` kept by replace-worst insertion,
    /// merged and rescored by `knn_refine` (the first design; the baseline the threshold
    /// path is measured against, and the sample search of that path).
    Lists,
}

/// The sample of [`Strategy::Threshold`]: every `stride`-th row and its norm.
struct Sample<E: GpuExecutor> {
    stride: usize,
    rows: usize,
    data: E::Buffer<f32>,
    norms: E::Buffer<f32>,
}

/// The split of the database among the blocks of `knn_filter` for one batch of queries:
/// about 8 blocks per multiprocessor (2 resident, 4 waves), whole 128-row tiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FilterPlan {
    /// Database splits (blocks per query tile).
    pub splits: usize,
    /// Rows per split (a multiple of 128; the last split may be shorter).
    pub split_rows: usize,
}

impl FilterPlan {
    /// The plan for `queries` queries (one batch) over `rows` rows on a device of
    /// `compute_units` multiprocessors.
    pub fn new(rows: usize, queries: usize, compute_units: u32) -> Self {
        let qtiles = queries.div_ceil(KNN_TILE).max(1);
        let target = (8 * compute_units.max(1) as usize).div_ceil(qtiles).max(1);
        let splits = target.min(rows.div_ceil(KNN_TILE).max(1));
        let split_rows = rows.div_ceil(splits).next_multiple_of(KNN_TILE).max(KNN_TILE);
        Self { splits: rows.div_ceil(split_rows).max(1), split_rows }
    }
}

/// The sample stride of [`Strategy::Threshold`] for `k` neighbours over `rows` rows: `0`
/// (no sample: every row is a candidate) when `rows <= CANDIDATE_CAP`, else
/// `max(1, CANDIDATE_CAP / (8 k))`, so the sample's `k`-th neighbour stands near rank
/// `k * stride <= CANDIDATE_CAP / 8` of the whole database and the sample holds more than
/// `8 k` rows.
pub fn sample_stride(rows: usize, k: usize) -> usize {
    if rows <= CANDIDATE_CAP { 0 } else { (CANDIDATE_CAP / (8 * k.max(1))).max(1) }
}

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
    strategy: Strategy,
    sample: Option<Sample<E>>,
    sample_rows: Option<E::Buffer<u32>>,
    sample_scores: Option<E::Buffer<f64>>,
    thr: Option<E::Buffer<f32>>,
    count: Option<E::Buffer<u32>>,
    cand: Option<E::Buffer<u32>>,
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
            strategy: Strategy::default(),
            sample: None,
            sample_rows: None,
            sample_scores: None,
            thr: None,
            count: None,
            cand: None,
        })
    }

    /// The same engine with another [`Strategy`] (the result is the same; only the cost
    /// differs).
    #[must_use]
    pub fn with_strategy(mut self, strategy: Strategy) -> Self {
        self.strategy = strategy;
        self
    }

    /// The [`Strategy`] searches use.
    pub fn strategy(&self) -> Strategy {
        self.strategy
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
        match self.strategy {
            Strategy::Lists => {
                let (Some(out_rows), Some(out_scores), Some(flags)) =
                    (self.out_rows.as_mut(), self.out_scores.as_mut(), self.flags.as_mut())
                else {
                    unreachable!("allocated above");
                };
                let screened = Screened { db: database.data(), norms: &self.norms, rows: self.rows, rmax: self.rmax };
                let mut scratch = ListScratch { part_key: &mut self.part_key, part_row: &mut self.part_row };
                lists_pass(exec, &screened, queries, k, metric, &mut scratch, out_rows, out_scores, flags)?;
            }
            Strategy::Threshold => self.threshold_pass(exec, database, queries, k, metric)?,
        }
        Ok(pending)
    }

    /// The sample of [`Strategy::Threshold`] for `stride` (none for 0), gathered once per
    /// database and stride.
    fn prepare_sample(&mut self, exec: &E, database: &DeviceVectors<E>, stride: usize) -> Result<()> {
        if stride > 0 && self.sample.as_ref().is_none_or(|smp| smp.stride != stride) {
            let (n, dim) = (self.rows, self.dim);
            self.sample = None;
            let rows = n.div_ceil(stride);
            let mut data = exec.alloc::<f32>(rows * dim)?;
            let mut norms = exec.alloc::<f32>(rows)?;
            let blocks = (rows * dim).div_ceil(KNN_EXACT_THREADS as usize).min(65_535);
            kn::knn_gather(
                exec,
                &grid(blocks, KNN_EXACT_THREADS),
                database.data(),
                &self.norms,
                &mut data,
                &mut norms,
                n as u32,
                dim as u32,
                stride as u32,
                rows as u32,
            )?;
            self.sample = Some(Sample { stride, rows, data, norms });
        }
        Ok(())
    }

    /// [`Strategy::Threshold`]: per batch, the sample's exact top `k` (by
    /// [`Strategy::Lists`]), the thresholds, the filter over every row, the rescoring.
    fn threshold_pass(
        &mut self,
        exec: &E,
        database: &DeviceVectors<E>,
        queries: &DeviceVectors<E>,
        k: usize,
        metric: Metric,
    ) -> Result<()> {
        let (n, dim, nq) = (self.rows, self.dim, queries.len());
        let stride = sample_stride(n, k);
        self.prepare_sample(exec, database, stride)?;
        let batch_max = nq.min(QUERY_BATCH);
        ensure(exec, &mut self.thr, batch_max)?;
        ensure(exec, &mut self.count, batch_max)?;
        ensure(exec, &mut self.cand, batch_max * CANDIDATE_CAP)?;
        if stride > 0 {
            ensure(exec, &mut self.sample_rows, nq * k)?;
            ensure(exec, &mut self.sample_scores, nq * k)?;
            let (Some(smp), Some(s_rows), Some(s_scores), Some(flags)) =
                (self.sample.as_ref(), self.sample_rows.as_mut(), self.sample_scores.as_mut(), self.flags.as_mut())
            else {
                unreachable!("allocated above");
            };
            // The sample's flags are of no use (any k rows bound the k-th key from above);
            // the rescoring below rewrites every query's flag.
            let screened = Screened { db: &smp.data, norms: &smp.norms, rows: smp.rows, rmax: self.rmax };
            let mut scratch = ListScratch { part_key: &mut self.part_key, part_row: &mut self.part_row };
            lists_pass(exec, &screened, queries, k, metric, &mut scratch, s_rows, s_scores, flags)?;
        }
        let (Some(thr), Some(count), Some(cand), Some(out_rows), Some(out_scores), Some(flags)) = (
            self.thr.as_mut(),
            self.count.as_mut(),
            self.cand.as_mut(),
            self.out_rows.as_mut(),
            self.out_scores.as_mut(),
            self.flags.as_mut(),
        ) else {
            unreachable!("allocated above");
        };
        let (n32, dim32, m, k32, cap32) = (n as u32, dim as u32, metric_code(metric), k as u32, CANDIDATE_CAP as u32);
        let mut first = 0;
        while first < nq {
            let batch = (nq - first).min(QUERY_BATCH);
            let (b32, f32_) = (batch as u32, first as u32);
            match self.sample_scores.as_ref() {
                Some(scores) if stride > 0 => kn::knn_thresholds(
                    exec,
                    &grid(batch.div_ceil(KNN_EXACT_THREADS as usize), KNN_EXACT_THREADS),
                    queries.data(),
                    scores,
                    &mut *thr,
                    b32,
                    f32_,
                    dim32,
                    k32,
                    m,
                    self.rmax,
                )?,
                _ => exec.fill(thr.slice_mut(0..batch)?, f32::INFINITY)?,
            }
            exec.fill(count.slice_mut(0..batch)?, 0)?;
            let plan = FilterPlan::new(n, batch, exec.limits().compute_units);
            kn::knn_filter(
                exec,
                &grid(batch.div_ceil(KNN_TILE) * plan.splits, KNN_THREADS),
                database.data(),
                queries.data(),
                &self.norms,
                &*thr,
                &mut *count,
                &mut *cand,
                n32,
                b32,
                f32_,
                dim32,
                plan.splits as u32,
                plan.split_rows as u32,
                cap32,
                m,
            )?;
            let shared = (CANDIDATE_CAP * 12) as u32;
            kn::knn_rescore(
                exec,
                &grid::<E>(batch, KNN_REFINE_THREADS).with_shared_bytes(shared),
                database.data(),
                queries.data(),
                &*count,
                &*cand,
                &mut *out_rows,
                &mut *out_scores,
                &mut *flags,
                n32,
                b32,
                f32_,
                dim32,
                cap32,
                k32,
                m,
            )?;
            first += batch;
        }
        Ok(())
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

/// The database a [`lists_pass`] screens: its rows, their f32 norms, `R = max |x|`.
struct Screened<'a, E: GpuExecutor> {
    db: &'a E::Buffer<f32>,
    norms: &'a E::Buffer<f32>,
    rows: usize,
    rmax: f32,
}

/// The screen's partial lists, grown as needed.
struct ListScratch<'a, E: GpuExecutor> {
    part_key: &'a mut Option<E::Buffer<f32>>,
    part_row: &'a mut Option<E::Buffer<u32>>,
}

/// [`Strategy::Lists`] over `db`: per batch the screen and the refinement of every query,
/// the `k` best into `out_rows` / `out_scores` at the query's index and its flag.
#[allow(clippy::too_many_arguments)]
fn lists_pass<E: GpuExecutor>(
    exec: &E,
    db: &Screened<'_, E>,
    queries: &DeviceVectors<E>,
    k: usize,
    metric: Metric,
    scratch: &mut ListScratch<'_, E>,
    out_rows: &mut E::Buffer<u32>,
    out_scores: &mut E::Buffer<f64>,
    flags: &mut E::Buffer<u32>,
) -> Result<()> {
    let nq = queries.len();
    let cu = exec.limits().compute_units;
    let plan = ScreenPlan::new(db.rows, nq.min(QUERY_BATCH), k, cu);
    let part_key = ensure(exec, scratch.part_key, nq.min(QUERY_BATCH) * plan.splits * plan.kp)?;
    let part_row = ensure(exec, scratch.part_row, nq.min(QUERY_BATCH) * plan.splits * plan.kp)?;
    let (n32, dim32, m) = (db.rows as u32, queries.dim() as u32, metric_code(metric));
    let mut first = 0;
    while first < nq {
        let batch = (nq - first).min(QUERY_BATCH);
        let p = ScreenPlan::new(db.rows, batch, k, cu);
        let qtiles = batch.div_ceil(KNN_TILE);
        let screen = grid::<E>(qtiles * p.splits, KNN_THREADS).with_shared_bytes(p.screen_shared as u32);
        let (b32, f32_, s32) = (batch as u32, first as u32, p.splits as u32);
        kn::knn_screen(
            exec,
            &screen,
            db.db,
            queries.data(),
            db.norms,
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
            db.db,
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
            db.rmax,
        )?;
        first += batch;
    }
    Ok(())
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
