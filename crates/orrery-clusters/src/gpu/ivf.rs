//! The inverted file on CUDA: [`crate::IvfIndex`]'s training and search, with the same
//! centroids, the same lists and the same neighbours bit for bit (module `clusters/probe`,
//! `kernels/clusters/probe.cu`).
//!
//! # Training ([`GpuIvfIndex::build`])
//! - **k-means++ seeding.** Every row's `D^2` against the newest centroid on the device
//!   (`pr_d2`, f64 in the CPU's order), the seeding blocks' running sums on the device
//!   (`pr_chunk_sums`, each 4,096-row block added in order), the random draw on the host
//!   from the same `ChaCha8Rng` as the CPU: per centroid one read of the block sums and one
//!   of the block the draw falls in (32 KB), so the seeds are the CPU's.
//! - **Lloyd iterations.** The assignment (`pr_keys` mode 1: every row against every
//!   centroid in register tiles, ties to the lower list), the lists (the executor's
//!   histogram, scan and stable sort: rows ascending within a list, as the CPU's counting
//!   sort), and the update with one block per list (`pr_sum_items` + `pr_fold_items`: the
//!   members in ascending row order summed in f64, an empty list keeps its centroid).
//! - The final assignment makes the lists; the vectors are gathered into list order.
//!
//! # Search ([`GpuIvfIndex::search`])
//! The list-probing engine of [`super::ProbeEngine`]: coarse keys and the executor's top-k, the
//! pairs grouped by list, a partial top-k per list segment and probing-query chunk, a
//! merge. Rows and `f64` scores equal [`crate::IvfIndex::search`]'s.
//!
//! wgpu: [`orrery_core::Error::Unsupported`] (WGSL has no f64).

use orrery_core::{GpuExecutor, Result, Slice};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::device::DeviceVectors;
use super::probe::{
    DeviceLists, ProbeEngine, check_f64_executor, check_queries, grid, list_bits, per_element, pk, probe_search,
};
use super::sources::{PR_CHUNK, PR_ROW_THREADS, PR_THREADS, PR_TQ};
use crate::search::ivf::{IvfParams, check_nlist_rows, check_nprobe, draw, last_positive};
use crate::search::{Metric, Neighbors, check_k};

/// An inverted-file index trained and held on a CUDA device (see the module docs).
pub struct GpuIvfIndex<E: GpuExecutor> {
    dim: usize,
    rows: usize,
    centroids: E::Buffer<f64>,
    offsets_host: Vec<u32>,
    offsets: E::Buffer<u32>,
    list_rows: E::Buffer<u32>,
    list_vectors: E::Buffer<f32>,
    scratch: ProbeEngine<E>,
}

/// The device buffers of a training run.
struct Training<E: GpuExecutor> {
    assign: E::Buffer<u32>,
    keys: E::Buffer<u64>,
    rows: E::Buffer<u32>,
    counts: E::Buffer<u32>,
    offsets: E::Buffer<u32>,
    part: E::Buffer<f64>,
    cluster_items: E::Buffer<u32>,
    /// Bound as `pr_keys`' unused key output in its nearest-centroid mode.
    no_keys: E::Buffer<f64>,
}

impl<E: GpuExecutor> GpuIvfIndex<E> {
    /// Trains `params.nlist` lists on `database` and fills them (the CPU's
    /// [`crate::IvfIndex::build`], bit for bit).
    ///
    /// # Errors
    /// [`orrery_core::Error::Unsupported`] unless the executor is CUDA with f64 arithmetic;
    /// [`orrery_core::Error::EmptyInput`] for a database without rows; [`orrery_core::Error::InvalidArgument`]
    /// (`what = "nlist"`) for `nlist` outside `1..=rows`; compile and device failures.
    pub fn build(exec: &E, database: &DeviceVectors<E>, params: &IvfParams) -> Result<Self> {
        check_f64_executor(exec, "the inverted file")?;
        let (n, dim, nlist) = (database.len(), database.dim(), params.nlist);
        check_nlist_rows(n, nlist)?;
        let data = database.data();
        let seeds = seed(exec, data, n, dim, nlist, params.seed)?;
        let seeds_dev = exec.upload(&seeds)?;
        let mut centroids = exec.alloc::<f64>(nlist * dim)?;
        pk::pr_seed(exec, &per_element(nlist * dim), data, &seeds_dev, &mut centroids, nlist as u32, dim as u32)?;
        let iota: Vec<u32> = (0..=nlist as u32).collect();
        let mut t = Training::<E> {
            assign: exec.alloc(n)?,
            keys: exec.alloc(n)?,
            rows: exec.alloc(n)?,
            counts: exec.alloc(nlist)?,
            offsets: exec.alloc(nlist + 1)?,
            part: exec.alloc(nlist * dim)?,
            cluster_items: exec.upload(&iota)?,
            no_keys: exec.alloc(1)?,
        };
        for _ in 0..params.iterations {
            assign_and_list(exec, data, n, dim, nlist, &centroids, &mut t)?;
            pk::pr_sum_items(
                exec,
                &grid(nlist, PR_ROW_THREADS),
                data,
                &t.rows,
                &t.offsets,
                &mut t.part,
                nlist as u32,
                dim as u32,
                1,
            )?;
            pk::pr_fold_items(
                exec,
                &per_element(nlist * dim),
                &t.part,
                &t.cluster_items,
                &t.offsets,
                &mut centroids,
                nlist as u32,
                dim as u32,
                1,
            )?;
        }
        assign_and_list(exec, data, n, dim, nlist, &centroids, &mut t)?;
        let mut list_vectors = exec.alloc::<f32>((n * dim).max(1))?;
        pk::pr_gather_rows(exec, &per_element(n * dim), data, &t.rows, &mut list_vectors, n as u32, dim as u32)?;
        let offsets_host = exec.download(&t.offsets)?;
        Ok(Self {
            dim,
            rows: n,
            centroids,
            offsets_host,
            offsets: t.offsets,
            list_rows: t.rows,
            list_vectors,
            scratch: ProbeEngine::default(),
        })
    }

    /// Values per vector.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of lists.
    pub fn nlist(&self) -> usize {
        self.offsets_host.len() - 1
    }

    /// Number of rows indexed.
    pub fn len(&self) -> usize {
        self.rows
    }

    /// Always `false`: an index holds at least one row.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// CSR offsets of the lists (host copy).
    pub fn list_offsets(&self) -> &[u32] {
        &self.offsets_host
    }

    /// Downloads the centroids (`nlist * dim` values).
    ///
    /// # Errors
    /// Transfer failures.
    pub fn centroids(&self, exec: &E) -> Result<Vec<f64>> {
        let mut out = vec![0f64; self.nlist() * self.dim];
        exec.read(&self.centroids, 0, &mut out)?;
        Ok(out)
    }

    /// Downloads the database rows of every list, list after list, ascending within a list.
    ///
    /// # Errors
    /// Transfer failures.
    pub fn list_rows(&self, exec: &E) -> Result<Vec<u32>> {
        let mut out = vec![0u32; self.rows];
        exec.read(&self.list_rows, 0, &mut out)?;
        Ok(out)
    }

    /// The probe engine: step timing and the partial pass's tile choice
    /// ([`ProbeEngine::set_stage_timing`], [`ProbeEngine::set_narrow_tiles`]).
    pub fn engine(&mut self) -> &mut ProbeEngine<E> {
        &mut self.scratch
    }

    /// The `k` nearest rows of every query among the members of its `nprobe` nearest
    /// lists ([`crate::IvfIndex::search`]'s rows and scores).
    ///
    /// # Errors
    /// [`orrery_core::Error::InvalidArgument`] for `k` outside `1..=128` or `nprobe` outside
    /// `1..=nlist`; [`orrery_core::Error::LengthMismatch`] when the dimensions differ; compile and
    /// device failures.
    pub fn search(
        &mut self,
        exec: &E,
        queries: &DeviceVectors<E>,
        k: usize,
        nprobe: usize,
        metric: Metric,
    ) -> Result<Neighbors> {
        check_k(k)?;
        check_nprobe(nprobe, self.nlist())?;
        check_queries(self.dim, queries)?;
        let lists = DeviceLists {
            vectors: &self.list_vectors,
            dim: self.dim,
            offsets_host: &self.offsets_host,
            offsets: &self.offsets,
            rows: Some(&self.list_rows),
            centroids: &self.centroids,
        };
        probe_search(exec, &lists, queries, k, nprobe, metric, &mut self.scratch, None)
    }
}

/// k-means++ seeding (the CPU's [`crate::search::ivf::kmeans_plus_plus`]): distances and
/// block sums on the device, the draws on the host.
fn seed<E: GpuExecutor>(
    exec: &E,
    data: &E::Buffer<f32>,
    n: usize,
    dim: usize,
    nlist: usize,
    seed: u64,
) -> Result<Vec<u32>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let first = rng.random_range(0..n as u64) as u32;
    let mut chosen = vec![first];
    let mut d2 = exec.alloc::<f64>(n)?;
    let chunks = n.div_ceil(PR_CHUNK);
    let mut sums_dev = exec.alloc::<f64>(chunks)?;
    let mut sums = vec![0f64; chunks];
    let (n32, dim32) = (n as u32, dim as u32);
    pk::pr_d2(exec, &per_element(n), data, &mut d2, n32, dim32, first, 1)?;
    while chosen.len() < nlist {
        pk::pr_chunk_sums(exec, &grid(chunks, PR_ROW_THREADS), &d2, &mut sums_dev, n32)?;
        exec.read(&sums_dev, 0, &mut sums)?;
        let total = sums.iter().fold(0.0, |a, s| a + s);
        let pick = if total > 0.0 {
            let u = rng.random::<f64>() * total;
            let chunk = |c: usize| -> Result<Vec<f64>> {
                let mut v = vec![0f64; PR_CHUNK.min(n - c * PR_CHUNK)];
                exec.read(&d2, c * PR_CHUNK, &mut v)?;
                Ok(v)
            };
            match draw(&sums, u, chunk)? {
                Some(row) => row,
                None => last_positive(&exec.download(&d2)?),
            }
        } else {
            rng.random_range(0..n as u64) as usize
        };
        chosen.push(pick as u32);
        pk::pr_d2(exec, &per_element(n), data, &mut d2, n32, dim32, pick as u32, 0)?;
    }
    Ok(chosen)
}

/// The nearest centroid of every row, then the lists: `t.offsets` (CSR) and `t.rows`
/// (every list's rows ascending: the stable sort of `(list, row)` by list).
fn assign_and_list<E: GpuExecutor>(
    exec: &E,
    data: &E::Buffer<f32>,
    n: usize,
    dim: usize,
    nlist: usize,
    centroids: &E::Buffer<f64>,
    t: &mut Training<E>,
) -> Result<()> {
    pk::pr_keys(
        exec,
        &grid(n.div_ceil(PR_TQ), PR_THREADS),
        data,
        centroids,
        &mut t.no_keys,
        &mut t.assign,
        n as u32,
        0,
        nlist as u32,
        dim as u32,
        1,
        nlist as u32,
        0,
        1,
    )?;
    exec.histogram(&t.assign, &mut t.counts)?;
    exec.exclusive_scan(&t.counts, &mut t.offsets)?;
    pk::pr_widen(exec, &per_element(n), &t.assign, &mut t.keys, &mut t.rows, n as u32)?;
    exec.sort_pairs(t.keys.slice_mut(0..n)?, t.rows.slice_mut(0..n)?, 0..list_bits(nlist))
}

/// Uploads `database` and trains a [`GpuIvfIndex`] on it (the index keeps its own copy of
/// the vectors, in list order).
///
/// # Errors
/// As [`GpuIvfIndex::build`]; transfer failures.
pub fn ivf_build<E: GpuExecutor>(
    exec: &E,
    database: &crate::Vectors<'_>,
    params: &IvfParams,
) -> Result<GpuIvfIndex<E>> {
    check_f64_executor(exec, "the inverted file")?;
    GpuIvfIndex::build(exec, &DeviceVectors::upload(exec, database)?, params)
}
