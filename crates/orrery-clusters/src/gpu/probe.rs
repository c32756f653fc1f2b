//! The list-probing search on CUDA, shared by [`super::ivf`] and [`super::lattice`]: the
//! CPU's `search/probe.rs` engine (coarse, partial, merge), bit for bit, in module
//! `clusters/probe` (`kernels/clusters/probe.cu`, whose header has the kernels' reasoning
//! and cost model).
//!
//! Per batch of queries, with nothing read back:
//! 1. **Coarse**: `pr_keys` writes the f64 key of every (query, list centroid) in the
//!    CPU's order, and the executor's segmented top-k picks each query's `nprobe` lists
//!    (ties to the lower position, i.e. the lower list: the CPU's `(key, list)` order).
//!    For `nprobe > 1024` (beyond the executor's top-k) the selection runs on the host
//!    from the downloaded keys, the CPU's [`TopK`].
//! 2. **Grouping**: the (query, list) pairs are sorted by list (the executor's stable
//!    sort), so each work item of `pr_partial` is one list segment of at most
//!    [`PR_SEG`] rows against up to [`PR_TQ`] of the queries that probe it: a list is read
//!    once per 32 probing queries.
//! 3. **Partial**: per pair and segment a sorted top-`k` by `(key, row)`, in its slot.
//! 4. **Merge**: per query the `k` best of its slots, the CPU's `merge_sorted`.
//!
//! `(key, row)` is a total order on distinct rows, so neither the grouping nor the
//! segmentation nor the order of blocks changes the result.

use orrery_core::{Error, ExecutorKind, GpuExecutor, LaunchConfig, Order, Result, Slice};

use super::device::DeviceVectors;
use super::sources::{PR_MERGE_THREADS, PR_ROW_THREADS, PR_SEG, PR_TC, PR_THREADS, PR_TQ, PROBE};
use crate::search::topk::{Candidate, TopK};
use crate::search::{Metric, Neighbors};

pub(crate) mod pk {
    orrery_core::kernels! {
        module = super::PROBE;
        /// Mode 0: the key of every (query, centroid) of a batch; mode 1: every row's
        /// nearest centroid by squared distance (ties to the lower index).
        pub(crate) fn pr_keys(
            read queries: f32, read cents: f64, write keys: f64, write nearest: u32,
            scalar nq: u32, scalar q_first: u32, scalar nc: u32, scalar dim: u32, scalar splits: u32,
            scalar split_cents: u32, scalar metric: u32, scalar mode: u32,
        );
        /// k-means++: `d2[r] = key(r, centre)` (init) or its minimum with it.
        pub(crate) fn pr_d2(read data: f32, write d2: f64, scalar n: u32, scalar dim: u32, scalar centre: u32, scalar init: u32);
        /// The seeding's running-sum blocks: `sums[c]` = chunk `c` of `d2` added in order.
        pub(crate) fn pr_chunk_sums(read d2: f64, write sums: f64, scalar n: u32);
        /// `cents[l]` = row `seeds[l]` widened to f64.
        pub(crate) fn pr_seed(read data: f32, read seeds: u32, write cents: f64, scalar nl: u32, scalar dim: u32);
        /// Per item (a position range), the f64 sum of its vectors in position order.
        pub(crate) fn pr_sum_items(
            read data: f32, read rows: u32, read item_begin: u32, write part: f64,
            scalar items: u32, scalar dim: u32, scalar mapped: u32,
        );
        /// Per cluster, its items' sums in order divided by its member count.
        pub(crate) fn pr_fold_items(
            read part: f64, read cluster_items: u32, read offsets: u32, write cents: f64,
            scalar clusters: u32, scalar dim: u32, scalar keep_empty: u32,
        );
        /// `dst` row `i` = `src` row `rows[i]`.
        pub(crate) fn pr_gather_rows(read src: f32, read rows: u32, write dst: f32, scalar n: u32, scalar dim: u32);
        /// The stable sort's `(key, value) = (list[i], i)`.
        pub(crate) fn pr_widen(read list: u32, write keys: u64, write vals: u32, scalar n: u32);
        /// Per (query, probe) pair: its list, its sort key and value, its segment count.
        pub(crate) fn pr_pairs(
            read top_idx: u32, read list_offsets: u32, write probe_list: u32, write sort_keys: u64,
            write sort_vals: u32, write pair_segs: u32, scalar pairs: u32, scalar nprobe: u32, scalar nlist: u32,
        );
        /// Per list: its work items (query chunks x segments).
        pub(crate) fn pr_items(read list_pair_off: u32, read list_offsets: u32, write item_count: u32, scalar nlist: u32);
        /// Per item: the sorted top `k` of each of its pairs over one list segment.
        pub(crate) fn pr_partial(
            read vectors: f32, read rows: u32, read queries: f32, read list_offsets: u32, read list_pair_off: u32,
            read pair_of: u32, read item_off: u32, read slot_off: u32, read cents: f64,
            write slot_keys: f64, write slot_rows: u32, write side: f64,
            scalar nlist: u32, scalar q_first: u32, scalar nprobe: u32, scalar dim: u32, scalar k: u32,
            scalar metric: u32, scalar mapped: u32, scalar fused: u32, scalar narrow_ok: u32,
        );
        /// Per query: the `k` best of its slots.
        pub(crate) fn pr_merge(
            read slot_keys: f64, read slot_rows: u32, read slot_off: u32, write out_rows: u32, write out_scores: f64,
            scalar nb: u32, scalar q_first: u32, scalar nprobe: u32, scalar k: u32, scalar metric: u32,
        );
        /// Per member chunk: count, sum and sum of squares of the non-NaN side values.
        pub(crate) fn pr_side_chunks(
            read side: f64, read item_begin: u32, write part_n: u32, write part_s: f64, write part_s2: f64,
            scalar items: u32,
        );
        /// Per cluster: the chunk partials in order, to scored, cohesion and inertia.
        pub(crate) fn pr_side_fold(
            read part_n: u32, read part_s: f64, read part_s2: f64, read cluster_items: u32,
            write scored: u32, write cohesion: f64, write inertia: f64, scalar clusters: u32,
        );
    }
}

/// Most coarse keys held at once (f64, 256 MB): bounds the batch to `COARSE_KEYS / lists`.
const COARSE_KEYS: usize = 1 << 25;
/// Most partial-list entries held at once (12 bytes each, 384 MB).
const SLOT_ENTRIES: usize = 1 << 25;
/// Most queries per batch.
const PROBE_BATCH: usize = 4096;
/// The executor's segmented top-k takes at most this `k`; a larger `nprobe` selects on the
/// host.
const DEVICE_TOP_K: usize = 1024;

/// CUDA with f64 arithmetic, or [`Error::Unsupported`] naming `operation`.
pub(crate) fn check_f64_executor<E: GpuExecutor>(exec: &E, operation: &str) -> Result<()> {
    if exec.kind() != ExecutorKind::Cuda || !exec.limits().f64 {
        return Err(orrery_core::executor::unsupported(
            &exec.name(),
            operation,
            "every key is f64 in the CPU's order (bit-equal to the CPU), and only the CUDA module has \
             f64 kernels (WGSL has no f64)",
        ));
    }
    Ok(())
}

/// A grid of `blocks` blocks of `threads` threads (capped: the kernels stride).
pub(crate) fn grid<'a, E: GpuExecutor>(blocks: usize, threads: u32) -> LaunchConfig<'a, E> {
    LaunchConfig::blocks(u32::try_from(blocks.clamp(1, 1 << 20)).unwrap_or(1 << 20), threads)
}

/// A grid with one thread per element of `n` (grid-stride beyond the cap).
pub(crate) fn per_element<'a, E: GpuExecutor>(n: usize) -> LaunchConfig<'a, E> {
    grid(n.div_ceil(PR_ROW_THREADS as usize), PR_ROW_THREADS)
}

pub(crate) fn metric_code(metric: Metric) -> u32 {
    match metric {
        Metric::L2 => 0,
        Metric::InnerProduct => 1,
    }
}

/// Lists on the device: the vectors in list order, CSR offsets, the row reported for each
/// position (`None`: the position itself) and the f64 centroids.
pub(crate) struct DeviceLists<'a, E: GpuExecutor> {
    pub vectors: &'a E::Buffer<f32>,
    pub dim: usize,
    pub offsets_host: &'a [u32],
    pub offsets: &'a E::Buffer<u32>,
    pub rows: Option<&'a E::Buffer<u32>>,
    pub centroids: &'a E::Buffer<f64>,
}

impl<E: GpuExecutor> DeviceLists<'_, E> {
    fn nlist(&self) -> usize {
        self.offsets_host.len() - 1
    }

    /// The most slots one query can need: its `nprobe` lists with the most segments.
    fn max_slots_per_query(&self, nprobe: usize) -> usize {
        let mut segs: Vec<usize> =
            self.offsets_host.windows(2).map(|w| ((w[1] - w[0]) as usize).div_ceil(PR_SEG)).collect();
        segs.sort_unstable_by(|a, b| b.cmp(a));
        segs.iter().take(nprobe).sum::<usize>().max(1)
    }
}

/// The sizes a [`Buffers`] set holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Capacity {
    /// Queries per batch.
    batch: usize,
    /// Lists.
    nlist: usize,
    /// (query, list) pairs per batch.
    pairs: usize,
    /// Partial-list entries per batch (slots times `k`).
    entries: usize,
    /// Output entries (all queries times `k`).
    out: usize,
}

impl Capacity {
    fn holds(&self, need: &Capacity) -> bool {
        self.batch == need.batch
            && self.nlist == need.nlist
            && self.pairs >= need.pairs
            && self.entries >= need.entries
            && self.out >= need.out
    }
}

/// The device buffers of one search shape.
struct Buffers<E: GpuExecutor> {
    cap: Capacity,
    keys: E::Buffer<f64>,
    /// Segment offsets of the coarse top-k: `[0, nlist, 2 nlist, ...]` (`batch + 1`).
    seg: E::Buffer<u32>,
    top_idx: E::Buffer<u32>,
    top_keys: E::Buffer<f64>,
    probe_list: E::Buffer<u32>,
    sort_keys: E::Buffer<u64>,
    /// After the sort: the pair ids grouped by list.
    sort_vals: E::Buffer<u32>,
    pair_segs: E::Buffer<u32>,
    list_pairs: E::Buffer<u32>,
    list_pair_off: E::Buffer<u32>,
    slot_off: E::Buffer<u32>,
    item_count: E::Buffer<u32>,
    item_off: E::Buffer<u32>,
    slot_keys: E::Buffer<f64>,
    slot_rows: E::Buffer<u32>,
    out_rows: E::Buffer<u32>,
    out_scores: E::Buffer<f64>,
    /// Bound where a kernel's optional buffer is not used (no row map, no side buffer).
    none_u32: E::Buffer<u32>,
    none_f64: E::Buffer<f64>,
}

impl<E: GpuExecutor> Buffers<E> {
    fn new(exec: &E, cap: Capacity) -> Result<Self> {
        let seg: Vec<u32> = (0..=cap.batch).map(|i| (i * cap.nlist) as u32).collect();
        Ok(Self {
            cap,
            keys: exec.alloc((cap.batch * cap.nlist).max(1))?,
            seg: exec.upload(&seg)?,
            top_idx: exec.alloc(cap.pairs)?,
            top_keys: exec.alloc(cap.pairs)?,
            probe_list: exec.alloc(cap.pairs)?,
            sort_keys: exec.alloc(cap.pairs)?,
            sort_vals: exec.alloc(cap.pairs)?,
            pair_segs: exec.alloc(cap.pairs)?,
            list_pairs: exec.alloc(cap.nlist)?,
            list_pair_off: exec.alloc(cap.nlist + 1)?,
            slot_off: exec.alloc(cap.pairs + 1)?,
            item_count: exec.alloc(cap.nlist)?,
            item_off: exec.alloc(cap.nlist + 1)?,
            slot_keys: exec.alloc(cap.entries)?,
            slot_rows: exec.alloc(cap.entries)?,
            out_rows: exec.alloc(cap.out)?,
            out_scores: exec.alloc(cap.out)?,
            none_u32: exec.alloc(1)?,
            none_f64: exec.alloc(1)?,
        })
    }
}

/// Device time of each step of one search, in milliseconds, summed over its batches
/// (recorded when timing is on: [`ProbeEngine::set_stage_timing`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ProbeTimes {
    /// The coarse keys (`pr_keys`).
    pub coarse_ms: f64,
    /// The selection of each query's lists (the executor's segmented top-k).
    pub select_ms: f64,
    /// The grouping of pairs by list, the slot and item offsets.
    pub group_ms: f64,
    /// The partial top-k of every (pair, segment) (`pr_partial`).
    pub partial_ms: f64,
    /// The merge (`pr_merge`).
    pub merge_ms: f64,
}

/// The probe search's engine of one index ([`super::GpuIvfIndex::engine`],
/// [`super::GpuLatticeIndex::engine`]): its scratch (reallocated when a search needs more,
/// kept across searches) and its options, the same for the inverted file and the lattice.
pub struct ProbeEngine<E: GpuExecutor> {
    bufs: Option<Buffers<E>>,
    timing: bool,
    times: Option<ProbeTimes>,
    /// Items of at most 8 probing queries use the 8 x 128 tile (else every item the
    /// 32 x 32 one, the first version: the baseline).
    narrow_tiles: bool,
}

impl<E: GpuExecutor> Default for ProbeEngine<E> {
    fn default() -> Self {
        Self { bufs: None, timing: false, times: None, narrow_tiles: true }
    }
}

/// Device markers between the steps of one batch (when timing).
struct Marks<E: GpuExecutor> {
    marks: Vec<E::Marker>,
}

impl<E: GpuExecutor> Marks<E> {
    fn mark(&mut self, exec: &E, on: bool) -> Result<()> {
        if on {
            self.marks.push(exec.mark()?);
        }
        Ok(())
    }

    /// Adds the five step times of the batch to `t` (nothing when not timing).
    fn add_to(&self, exec: &E, t: &mut ProbeTimes) -> Result<()> {
        if self.marks.len() < 6 {
            return Ok(());
        }
        let ms =
            |i: usize| -> Result<f64> { Ok(exec.elapsed(&self.marks[i], &self.marks[i + 1])?.as_secs_f64() * 1e3) };
        t.coarse_ms += ms(0)?;
        t.select_ms += ms(1)?;
        t.group_ms += ms(2)?;
        t.partial_ms += ms(3)?;
        t.merge_ms += ms(4)?;
        Ok(())
    }
}

impl<E: GpuExecutor> ProbeEngine<E> {
    /// Records the device time of each step of the following searches (markers between
    /// the steps: a little overhead, for profiling; off by default).
    pub fn set_stage_timing(&mut self, on: bool) {
        self.timing = on;
        self.times = None;
    }

    /// The step times of the last search, when [`Self::set_stage_timing`] is on.
    pub fn stage_times(&self) -> Option<ProbeTimes> {
        self.times
    }

    /// Whether the partial pass may use its 8-query x 128-row tile for list segments probed
    /// by at most 8 queries (on by default). Off, every segment takes the 32 x 32 tile (the
    /// first version, kept as the baseline); the result is the same bits either way.
    pub fn set_narrow_tiles(&mut self, on: bool) {
        self.narrow_tiles = on;
    }

    fn get(&mut self, exec: &E, need: Capacity) -> Result<&mut Buffers<E>> {
        if self.bufs.as_ref().is_none_or(|b| !b.cap.holds(&need)) {
            self.bufs = None;
            self.bufs = Some(Buffers::new(exec, need)?);
        }
        Ok(self.bufs.as_mut().expect("allocated above"))
    }
}

/// Queries per batch for `nlist` lists, `k` neighbours and `slots` slots per query.
fn batch_size(nq: usize, nlist: usize, k: usize, slots: usize) -> usize {
    let by_keys = (COARSE_KEYS / nlist.max(1)).max(1);
    let by_slots = (SLOT_ENTRIES / (slots * k).max(1)).max(1);
    nq.clamp(1, PROBE_BATCH).min(by_keys).min(by_slots)
}

/// Bits that hold list indices below `nlist` (at least 1).
pub(crate) fn list_bits(nlist: usize) -> u32 {
    (usize::BITS - (nlist.max(2) - 1).leading_zeros()).max(1)
}

/// One search's shape.
struct Search {
    k: usize,
    nprobe: usize,
    metric: u32,
    compute_units: usize,
    /// Items of at most 8 queries take the 8 x 128 tile.
    narrow: bool,
}

/// Searches `queries` through `nprobe` of `lists` each (the module docs), writing the
/// side distances when `side` is given (the fused search), and downloads the result.
#[allow(clippy::too_many_arguments)]
pub(crate) fn probe_search<E: GpuExecutor>(
    exec: &E,
    lists: &DeviceLists<'_, E>,
    queries: &DeviceVectors<E>,
    k: usize,
    nprobe: usize,
    metric: Metric,
    scratch: &mut ProbeEngine<E>,
    mut side: Option<&mut E::Buffer<f64>>,
) -> Result<Neighbors> {
    let nq = queries.len();
    if nq == 0 {
        return Ok(Neighbors { k, rows: Vec::new(), scores: Vec::new() });
    }
    let nlist = lists.nlist();
    let slots_per_query = lists.max_slots_per_query(nprobe);
    let batch = batch_size(nq, nlist, k, slots_per_query);
    let need = Capacity { batch, nlist, pairs: batch * nprobe, entries: batch * slots_per_query * k, out: nq * k };
    let (timing, narrow) = (scratch.timing, scratch.narrow_tiles);
    let mut times = ProbeTimes::default();
    let b = scratch.get(exec, need)?;
    let search = Search {
        k,
        nprobe,
        metric: metric_code(metric),
        compute_units: exec.limits().compute_units.max(1) as usize,
        narrow,
    };
    let mut first = 0;
    while first < nq {
        let nb = (nq - first).min(batch);
        let mut marks = Marks::<E> { marks: Vec::new() };
        marks.mark(exec, timing)?;
        coarse_keys(exec, lists, queries, &search, b, first, nb)?;
        marks.mark(exec, timing)?;
        select(exec, lists, &search, b, nb)?;
        marks.mark(exec, timing)?;
        group(exec, lists, &search, b, nb)?;
        marks.mark(exec, timing)?;
        partial(exec, lists, queries, &search, b, first, side.as_deref_mut())?;
        marks.mark(exec, timing)?;
        pk::pr_merge(
            exec,
            &grid(nb, PR_MERGE_THREADS),
            &b.slot_keys,
            &b.slot_rows,
            &b.slot_off,
            &mut b.out_rows,
            &mut b.out_scores,
            nb as u32,
            first as u32,
            nprobe as u32,
            k as u32,
            search.metric,
        )?;
        marks.mark(exec, timing)?;
        marks.add_to(exec, &mut times)?;
        first += nb;
    }
    scratch.times = timing.then_some(times);
    let b = scratch.bufs.as_ref().expect("allocated above");
    let mut rows = vec![0u32; nq * k];
    let mut scores = vec![0f64; nq * k];
    exec.read(&b.out_rows, 0, &mut rows)?;
    exec.read(&b.out_scores, 0, &mut scores)?;
    Ok(Neighbors { k, rows, scores })
}

/// Step 1: the coarse keys of queries `first..first + nb`.
fn coarse_keys<E: GpuExecutor>(
    exec: &E,
    lists: &DeviceLists<'_, E>,
    queries: &DeviceVectors<E>,
    s: &Search,
    b: &mut Buffers<E>,
    first: usize,
    nb: usize,
) -> Result<()> {
    let nlist = lists.nlist();
    // Split over the centroids so that small batches fill the device.
    let qtiles = nb.div_ceil(PR_TQ);
    let splits = (4 * s.compute_units).div_ceil(qtiles).clamp(1, nlist.div_ceil(PR_TC));
    let split_cents = nlist.div_ceil(splits).next_multiple_of(PR_TC);
    let splits = nlist.div_ceil(split_cents);
    pk::pr_keys(
        exec,
        &grid(qtiles * splits, PR_THREADS),
        queries.data(),
        lists.centroids,
        &mut b.keys,
        &mut b.none_u32,
        nb as u32,
        first as u32,
        nlist as u32,
        lists.dim as u32,
        splits as u32,
        split_cents as u32,
        s.metric,
        0,
    )
}

/// Step 2: every query's `nprobe` lists, as positions into the keys (`top_idx`).
fn select<E: GpuExecutor>(
    exec: &E,
    lists: &DeviceLists<'_, E>,
    s: &Search,
    b: &mut Buffers<E>,
    nb: usize,
) -> Result<()> {
    let (nlist, pairs) = (lists.nlist(), nb * s.nprobe);
    if s.nprobe <= DEVICE_TOP_K {
        exec.segmented_top_k(
            b.keys.slice(0..nb * nlist)?,
            b.seg.slice(0..nb + 1)?,
            s.nprobe as u32,
            Order::Smallest,
            b.top_idx.slice_mut(0..pairs)?,
            b.top_keys.slice_mut(0..pairs)?,
        )
    } else {
        host_top(exec, &b.keys, &mut b.top_idx, nb, nlist, s.nprobe)
    }
}

/// Step 3: the pairs grouped by list (`sort_vals`), every pair's slots (`slot_off`) and
/// every list's work items (`item_off`).
fn group<E: GpuExecutor>(
    exec: &E,
    lists: &DeviceLists<'_, E>,
    s: &Search,
    b: &mut Buffers<E>,
    nb: usize,
) -> Result<()> {
    let (nlist, pairs) = (lists.nlist(), nb * s.nprobe);
    pk::pr_pairs(
        exec,
        &per_element(pairs),
        &b.top_idx,
        lists.offsets,
        &mut b.probe_list,
        &mut b.sort_keys,
        &mut b.sort_vals,
        &mut b.pair_segs,
        pairs as u32,
        s.nprobe as u32,
        nlist as u32,
    )?;
    exec.histogram(b.probe_list.slice(0..pairs)?, b.list_pairs.slice_mut(0..nlist)?)?;
    exec.exclusive_scan(b.list_pairs.slice(0..nlist)?, b.list_pair_off.slice_mut(0..nlist + 1)?)?;
    exec.sort_pairs(b.sort_keys.slice_mut(0..pairs)?, b.sort_vals.slice_mut(0..pairs)?, 0..list_bits(nlist))?;
    exec.exclusive_scan(b.pair_segs.slice(0..pairs)?, b.slot_off.slice_mut(0..pairs + 1)?)?;
    pk::pr_items(exec, &per_element(nlist), &b.list_pair_off, lists.offsets, &mut b.item_count, nlist as u32)?;
    exec.exclusive_scan(b.item_count.slice(0..nlist)?, b.item_off.slice_mut(0..nlist + 1)?)
}

/// Step 4: the partial top-k of every (pair, segment), grid-stride over the items (their
/// count stays on the device); with `s.narrow`, items of at most 8 queries take the 8 x 128
/// tile.
fn partial<E: GpuExecutor>(
    exec: &E,
    lists: &DeviceLists<'_, E>,
    queries: &DeviceVectors<E>,
    s: &Search,
    b: &mut Buffers<E>,
    first: usize,
    side: Option<&mut E::Buffer<f64>>,
) -> Result<()> {
    let fused = u32::from(side.is_some());
    let side = match side {
        Some(buf) => buf,
        None => &mut b.none_f64,
    };
    pk::pr_partial(
        exec,
        &grid::<E>(16 * s.compute_units, PR_THREADS).with_shared_bytes((PR_TQ * s.k * 12) as u32),
        lists.vectors,
        lists.rows.unwrap_or(&b.none_u32),
        queries.data(),
        lists.offsets,
        &b.list_pair_off,
        &b.sort_vals,
        &b.item_off,
        &b.slot_off,
        lists.centroids,
        &mut b.slot_keys,
        &mut b.slot_rows,
        side,
        lists.nlist() as u32,
        first as u32,
        s.nprobe as u32,
        lists.dim as u32,
        s.k as u32,
        s.metric,
        u32::from(lists.rows.is_some()),
        fused,
        u32::from(s.narrow),
    )
}

/// The coarse selection on the host for `nprobe` beyond the device top-k: per query the
/// CPU's [`TopK`] over its keys, written as positions into the batch's keys.
fn host_top<E: GpuExecutor>(
    exec: &E,
    keys: &E::Buffer<f64>,
    top_idx: &mut E::Buffer<u32>,
    nb: usize,
    nlist: usize,
    nprobe: usize,
) -> Result<()> {
    let mut host = vec![0f64; nb * nlist];
    exec.read(keys, 0, &mut host)?;
    let mut idx = Vec::with_capacity(nb * nprobe);
    for (q, row) in host.chunks_exact(nlist).enumerate() {
        let mut top = TopK::new(nprobe);
        for (l, &key) in row.iter().enumerate() {
            top.push(Candidate { key, row: l as u32 });
        }
        idx.extend(top.into_sorted().iter().map(|c| (q * nlist) as u32 + c.row));
    }
    exec.write(top_idx, 0, &idx)
}

/// Checks that `queries` have the lists' dimension.
pub(crate) fn check_queries<E: GpuExecutor>(dim: usize, queries: &DeviceVectors<E>) -> Result<()> {
    if queries.dim() != dim {
        return Err(Error::LengthMismatch { what: "query dimension", expected: dim, actual: queries.dim() });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_respect_both_memory_bounds() {
        assert_eq!(batch_size(10_000, 1024, 10, 16), PROBE_BATCH);
        assert_eq!(batch_size(3, 1024, 10, 16), 3);
        assert_eq!(batch_size(10_000, 1 << 20, 10, 16), 32);
        assert_eq!(batch_size(10_000, 4, 128, 1 << 20), 1);
        assert_eq!(list_bits(1), 1);
        assert_eq!(list_bits(2), 1);
        assert_eq!(list_bits(3), 2);
        assert_eq!(list_bits(1024), 10);
        assert_eq!(list_bits(1025), 11);
    }
}
