//! The passes of a build or update, enqueued back to back with no host read.
//!
//! One *slot* per pass of the budget (`max_passes`), each five steps sized for the leaf
//! capacity `C`, whose kernels read the live leaf count and the run's state from the
//! status block ([`super::status`]):
//!
//! 1. `tb_leaf_counts`: particles per leaf (two binary searches per leaf);
//! 2. the criterion's decide (LeafCount: `tb_leaf_count_ops`), which also sets the change
//!    flag — the one place a new criterion (NFCount) adds a kernel;
//! 3. the executor's exclusive scan of the operations, counted by the status word
//!    `SCAN_COUNT` ([`orrery_core::DeviceCount`]): `L` while the run goes on, 0 once it is
//!    done, so a finished slot's scan returns at once;
//! 4. `tb_scatter`: the new boundaries into the other leaf buffer, or the overflow flag
//!    when the proposal exceeds `C`;
//! 5. `tb_finish`: ends the pass in the status block (converged, overflow, budget spent,
//!    or the scattered array becomes current).
//!
//! Then one more `tb_leaf_counts` and `tb_finish`, which count the final tree when the
//! budget was spent on a pass that changed it. Slot `s` scatters from leaf buffer
//! `(parity + s) % 2` into the other, so a sequence is fixed by its starting parity: the
//! tree keeps two recordings, one per parity, and the status word `CURRENT` says which
//! to replay next. `tb_begin` (launched directly before each run, not recorded: its
//! mode differs between a build, an update and a resume after growth) starts the run.
//!
//! NFCount ([`super::nf`]) replaces step 1 by `tb_nf_starts` and `tb_nf_eval` (the
//! split children's first particles, the counts from the carried first particles, and the
//! stencil values of the fresh leaves only; the run's first slot resets every value and
//! searches every first particle), decides from the values, and scatters with
//! `tb_nf_scatter`, which also carries the starts and values into the new tree; its final
//! count is `tb_nf_starts` and `tb_nf_eval` of the final tree.

use orrery_core::gpu::{GpuExecutor, LaunchConfig};
use orrery_core::sfc::KeyLayout;
use orrery_core::{DeviceCount, Result, Slice};

use super::buffers::LeafBuffers;
use super::kernels::{THREADS, leaf_count, passes as k};
use super::nf::{self, NfShape};
use super::status;
use crate::build::Criterion;

/// What a run's kernels need besides buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RunShape {
    /// Particles (sorted keys).
    pub n: u32,
    /// Leaf capacity `C`.
    pub capacity: u32,
    /// The key layout.
    pub layout: KeyLayout,
    /// The criterion.
    pub criterion: Criterion,
    /// Pass budget.
    pub max_passes: u32,
    /// NFCount's `hilbert` scalar (1 for Hilbert octree keys), 0 for LeafCount.
    pub hilbert: u32,
}

impl RunShape {
    fn nf(&self) -> NfShape {
        NfShape {
            n: self.n,
            capacity: self.capacity,
            bits: self.layout.bits_per_level(),
            levels: self.layout.levels(),
            hilbert: self.hilbert,
            eval_lanes: super::nf::eval_lanes(self.capacity),
        }
    }
}

/// What the decide of a criterion reads: LeafCount the counts, NFCount the values
/// `[W | G]` ([`super::nf`]).
#[derive(Clone, Copy)]
pub(crate) enum DecideInput<'a, E: GpuExecutor> {
    /// Particles per leaf.
    Counts(&'a E::Buffer<u32>),
    /// NFCount's values (`vals` of [`nf::NfBuffers`]) and the parity of the tree.
    NfValues(&'a E::Buffer<u64>, usize),
}

/// One thread's launch (status kernels).
fn single<'a, E: GpuExecutor>() -> LaunchConfig<'a, E> {
    LaunchConfig::blocks(1, 32)
}

/// `tb_begin` with `mode` (one of the `status::BEGIN_*`).
pub(crate) fn begin<E: GpuExecutor>(
    exec: &E,
    bufs: &mut LeafBuffers<E>,
    status: &mut E::Buffer<u32>,
    mode: u32,
    layout: KeyLayout,
) -> Result<()> {
    k::tb_begin(exec, &single(), &mut bufs.leaves[0], status, mode, layout.bits_per_level(), layout.levels())
}

/// The decide of `criterion` for the live leaves of `leaves`.
///
/// # Errors
/// [`orrery_core::Error::InvalidArgument`] when `input` is not what the criterion reads;
/// device failures.
#[allow(clippy::too_many_arguments)]
pub(crate) fn decide<E: GpuExecutor>(
    exec: &E,
    criterion: Criterion,
    leaves: &E::Buffer<u64>,
    input: DecideInput<'_, E>,
    ops: &mut E::Buffer<u32>,
    status: &mut E::Buffer<u32>,
    capacity: u32,
    layout: KeyLayout,
) -> Result<()> {
    let config = LaunchConfig::per_item(capacity as usize, THREADS);
    let (bits, levels) = (layout.bits_per_level(), layout.levels());
    match (criterion, input) {
        (Criterion::LeafCount { bucket }, DecideInput::Counts(counts)) => {
            leaf_count::tb_leaf_count_ops(exec, &config, leaves, counts, ops, status, capacity, bucket, bits, levels)
        }
        (Criterion::NfCount { threshold, .. }, DecideInput::NfValues(vals, p)) => {
            nf::ops(exec, leaves, vals, p, ops, status, capacity, threshold, bits, levels)
        }
        _ => Err(orrery_core::Error::InvalidArgument {
            what: "GPU decide",
            reason: "the criterion reads other inputs (LeafCount: counts, NFCount: values)".to_owned(),
        }),
    }
}

/// `tb_leaf_counts` of the live leaves of `leaves`.
fn counts<E: GpuExecutor>(
    exec: &E,
    shape: &RunShape,
    keys: &E::Buffer<u64>,
    leaves: &E::Buffer<u64>,
    status: &E::Buffer<u32>,
    counts: &mut E::Buffer<u32>,
) -> Result<()> {
    let config = LaunchConfig::per_item(shape.capacity as usize, THREADS);
    k::tb_leaf_counts(exec, &config, keys, leaves, status, counts, shape.n, shape.capacity)
}

/// Every slot of a run starting from leaf buffer `parity`, then the final count (see the
/// module documentation). Allocates nothing and reads nothing back, so it can be
/// recorded.
pub(crate) fn enqueue_run<E: GpuExecutor>(
    exec: &E,
    shape: &RunShape,
    parity: usize,
    keys: &E::Buffer<u64>,
    bufs: &mut LeafBuffers<E>,
    status: &mut E::Buffer<u32>,
) -> Result<()> {
    let cap = shape.capacity;
    let (bits, levels) = (shape.layout.bits_per_level(), shape.layout.levels());
    let scatter_config = LaunchConfig::per_item(cap as usize + 1, THREADS);
    let nf_shape = shape.nf();
    let LeafBuffers { leaves, counts: counts_buf, ops, offsets, nf: nf_bufs, .. } = bufs;
    let [first, second] = leaves;
    for slot in 0..shape.max_passes as usize {
        let p = (parity + slot) % 2;
        let (src, dst) = if p == 0 { (&*first, &mut *second) } else { (&*second, &mut *first) };
        match nf_bufs.as_mut() {
            None => {
                counts(exec, shape, keys, src, status, counts_buf)?;
                let input = DecideInput::Counts(&*counts_buf);
                decide(exec, shape.criterion, src, input, ops, status, cap, shape.layout)?;
                let live = DeviceCount::new(status.slice(status::SCAN_COUNT..status::SCAN_COUNT + 1)?, cap as usize)?;
                exec.exclusive_scan_counted(&*ops, live, &mut *offsets)?;
                k::tb_scatter(exec, &scatter_config, src, &*ops, &*offsets, dst, &mut *status, cap, bits, levels)?;
            }
            Some(nfb) => {
                nf::starts(exec, &nf_shape, slot == 0, keys, src, nfb, p, status)?;
                nf::eval(exec, &nf_shape, keys, src, nfb, p, counts_buf, status)?;
                let input = DecideInput::NfValues(&nfb.vals, p);
                decide(exec, shape.criterion, src, input, ops, status, cap, shape.layout)?;
                let live = DeviceCount::new(status.slice(status::SCAN_COUNT..status::SCAN_COUNT + 1)?, cap as usize)?;
                exec.exclusive_scan_counted(&*ops, live, &mut *offsets)?;
                nf::scatter(exec, &nf_shape, src, &*ops, &*offsets, dst, status, nfb, p)?;
            }
        }
        k::tb_finish(exec, &single(), &*offsets, &mut *status, cap, shape.max_passes)?;
    }
    let p = (parity + shape.max_passes as usize) % 2;
    let last = if p == 0 { &*first } else { &*second };
    match nf_bufs.as_mut() {
        None => counts(exec, shape, keys, last, status, counts_buf)?,
        Some(nfb) => {
            nf::starts(exec, &nf_shape, false, keys, last, nfb, p, status)?;
            nf::eval(exec, &nf_shape, keys, last, nfb, p, counts_buf, status)?;
        }
    }
    k::tb_finish(exec, &single(), &*offsets, status, cap, shape.max_passes)
}
