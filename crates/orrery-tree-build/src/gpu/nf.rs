//! NFCount on the device: its buffers, the stencil geometry table, and its steps of a
//! pass (`kernels/tree/nf_count.cu`, `shaders/tree/nf_count.wgsl`).
//!
//! Per leaf of the current tree the device holds its first particle (`starts`, `L + 1`
//! entries), its `W = n * S` and its group value `G` (the parent's `n_p * S_p` when it
//! leads a complete sibling group, else [`NO_GROUP`]), by the parity of the leaf buffer
//! the tree is in: `starts = [parity 0 (C + 1) | parity 1 (C + 1)]`,
//! `vals = [W0 | G0 | W1 | G1]` (`C` each). A `W` of [`FRESH`] marks a leaf whose value is
//! still to be computed. Within a run the particles do not move, so every value depends
//! on its cell alone and is carried while the cell survives. A pass slot of an NFCount run
//! is six launches (LeafCount's five and one):
//!
//! 1. `tb_nf_starts`: in the run's first slot every leaf's first particle by a search of
//!    all keys and every value fresh (the particles moved since the last run); in the
//!    others the first particle of each split child, by one search in its parent's
//!    particles ([`crate::counts::carry_starts`]), one thread per child;
//! 2. `tb_nf_eval`: the counts (from the starts), `W` of the fresh leaves and `G` of the
//!    complete groups' leaders that carry none (the cheap stencil count: the leaf array,
//!    the starts, and particle searches only inside a coarser leaf), [`eval_lanes`]
//!    threads per leaf sharing its stencil's 27 cells;
//! 3. `tb_nf_ops`, the decide (lookups only);
//! 4. the executor's counted scan of the operations ([`super::passes`]);
//! 5. `tb_nf_scatter`: `tb_scatter` and the carry through the scan into the other parity
//!    (a kept leaf keeps its first particle, `W` and `G`; a merge leader its first
//!    particle and `W = G`; a split child is fresh and gets its parent's particle range
//!    for step 1 to search);
//! 6. `tb_finish`.
//!
//! Then steps 1 and 2 once more for the final tree. Every kernel is sized for the capacity
//! and reads the live count from the status block, as the LeafCount steps do.

use orrery_core::gpu::{GpuExecutor, LaunchConfig};
use orrery_core::sfc::{Curve, hilbert};
use orrery_core::{Error, Executor, Result, Slice, View};

use super::kernels::{THREADS, nf_count as k};
use crate::nfcount::{KeyGeometry, morton_masks};

/// `W` of a leaf still to be evaluated (no real `n * S` reaches it).
#[cfg_attr(not(test), allow(dead_code))] // the kernels' TB_NF_FRESH, checked by a test
pub(crate) const FRESH: u64 = u64::MAX;
/// `G` of a leaf that leads no complete sibling group ([`crate::nfcount::NO_GROUP`]).
#[cfg_attr(not(test), allow(dead_code))] // the kernels' TB_NF_NO_GROUP, checked by a test
pub(crate) const NO_GROUP: u64 = crate::nfcount::NO_GROUP;

/// Words of the geometry table (`TB_NF_GEOM_WORDS`).
pub(crate) const GEOM_WORDS: usize = 768;
/// Levels of the per-level mask table (0..=63).
const MASK_LEVELS: u32 = 64;

/// The geometry table of the stencil kernels: `ENCODE_3D`, `DECODE_3D` (widened), then
/// per level and axis the dilated key-bit masks (Morton's for octrees of either curve,
/// the split sequence's for binary trees), each as two words, low first.
pub(crate) fn geometry_words(geometry: KeyGeometry) -> Vec<u32> {
    let mut words = Vec::with_capacity(GEOM_WORDS);
    words.extend(hilbert::ENCODE_3D.iter().map(|&e| u32::from(e)));
    words.extend(hilbert::DECODE_3D.iter().map(|&e| u32::from(e)));
    for level in 0..MASK_LEVELS {
        let masks = geometry.axis_masks(level).unwrap_or_else(|| morton_masks(level));
        for m in masks {
            words.push(m as u32);
            words.push((m >> 32) as u32);
        }
    }
    debug_assert_eq!(words.len(), GEOM_WORDS);
    words
}

/// The kernels' `hilbert` scalar: 1 for Hilbert octree keys.
pub(crate) fn hilbert_flag(geometry: KeyGeometry) -> u32 {
    u32::from(geometry == KeyGeometry::Octree(Curve::Hilbert))
}

/// The NFCount buffers of one leaf capacity `C` (the counts of the current tree are the
/// tree's shared `counts`).
pub(crate) struct NfBuffers<E: Executor> {
    /// First particle per leaf, by leaf-buffer parity, `2 (C + 1)`.
    pub starts: E::Buffer<u32>,
    /// `[W0 | G0 | W1 | G1]`, `4 C`.
    pub vals: E::Buffer<u64>,
    /// The geometry table, [`GEOM_WORDS`].
    pub geom: E::Buffer<u32>,
}

impl<E: Executor> NfBuffers<E> {
    /// Buffers for `capacity` leaves (contents unspecified; the geometry table is written
    /// before each run).
    pub fn new(exec: &E, capacity: usize) -> Result<Self> {
        let too_many = || Error::TooManyPoints { count: capacity, max: u32::MAX as usize / 4, what: "leaf capacity" };
        let vals = capacity.checked_mul(4).filter(|&v| u32::try_from(v).is_ok()).ok_or_else(too_many)?;
        Ok(Self { starts: exec.alloc(2 * (capacity + 1))?, vals: exec.alloc(vals)?, geom: exec.alloc(GEOM_WORDS)? })
    }

    /// The `W` values of the tree of parity `p` with `live` leaves, on the device.
    pub fn nf_view(&self, capacity: usize, p: usize, live: usize) -> Result<View<'_, u64, E::Buffer<u64>>> {
        let at = (p % 2) * 2 * capacity;
        self.vals.slice(at..at + live)
    }
}

/// What the NFCount steps of a run need besides buffers.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NfShape {
    /// Particles.
    pub n: u32,
    /// Leaf capacity.
    pub capacity: u32,
    /// Bits per level.
    pub bits: u32,
    /// Levels.
    pub levels: u32,
    /// The kernels' `hilbert` scalar.
    pub hilbert: u32,
    /// Threads per leaf of `tb_nf_eval` ([`eval_lanes`] of the capacity).
    pub eval_lanes: u32,
}

/// `tb_nf_starts` of the tree in `leaves`, of parity `p`: with `reset`, every first
/// particle and fresh values; else the split children's first particles.
#[allow(clippy::too_many_arguments)]
pub(crate) fn starts<E: GpuExecutor>(
    exec: &E,
    shape: &NfShape,
    reset: bool,
    keys: &E::Buffer<u64>,
    leaves: &E::Buffer<u64>,
    nf: &mut NfBuffers<E>,
    p: usize,
    status: &E::Buffer<u32>,
) -> Result<()> {
    let config = LaunchConfig::per_item(shape.capacity as usize + 1, THREADS);
    let NfBuffers { starts, vals, .. } = nf;
    let (n, cap) = (shape.n, shape.capacity);
    k::tb_nf_starts(exec, &config, keys, leaves, starts, vals, status, n, cap, parity(p), u32::from(reset))
}

/// Threads of `tb_nf_eval` the lane count aims at: a few waves of the H200's 132 SMs x
/// 2,048 resident threads, so that a tree of few leaves still fills the GPU.
const EVAL_THREADS_TARGET: u32 = 1 << 20;

/// Threads per leaf of `tb_nf_eval` for a leaf capacity: a power of two from 1 to 32,
/// `EVAL_THREADS_TARGET / capacity` rounded up. A thread walks the 27 cells of a stencil
/// in turn; with few leaves that leaves the GPU mostly idle (uniform 2M, 76K leaves: the
/// first evaluation 0.35 ms with one thread per leaf, 0.27 with 32), with many the
/// per-thread stencil setup repeated per lane costs more than it hides (uniform 25.6M,
/// 2.1M leaves: 3.3 ms with one, 5.2 with 32; docs/performance/tree.md).
pub(crate) fn eval_lanes(capacity: u32) -> u32 {
    (EVAL_THREADS_TARGET / capacity.max(1)).max(1).next_power_of_two().min(32)
}

/// `tb_nf_eval` of the tree in `leaves`, of parity `p`, writing its `counts`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn eval<E: GpuExecutor>(
    exec: &E,
    shape: &NfShape,
    keys: &E::Buffer<u64>,
    leaves: &E::Buffer<u64>,
    nf: &mut NfBuffers<E>,
    p: usize,
    counts: &mut E::Buffer<u32>,
    status: &E::Buffer<u32>,
) -> Result<()> {
    // `eval_lanes` threads per leaf: its lanes share the 27 cells of a stencil.
    let config = LaunchConfig::per_item(shape.eval_lanes as usize * shape.capacity as usize, THREADS);
    let NfBuffers { starts, vals, geom } = nf;
    k::tb_nf_eval(
        exec,
        &config,
        leaves,
        &*starts,
        keys,
        &*geom,
        vals,
        counts,
        status,
        shape.capacity,
        shape.n,
        parity(p),
        shape.hilbert,
        shape.bits,
        shape.levels,
        shape.eval_lanes,
    )
}

/// The decide: the NFCount operations of the tree in `leaves` from its values (`vals`
/// of [`NfBuffers`], parity `p`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn ops<E: GpuExecutor>(
    exec: &E,
    leaves: &E::Buffer<u64>,
    vals: &E::Buffer<u64>,
    p: usize,
    ops: &mut E::Buffer<u32>,
    status: &mut E::Buffer<u32>,
    capacity: u32,
    threshold: u64,
    bits: u32,
    levels: u32,
) -> Result<()> {
    let config = LaunchConfig::per_item(capacity as usize, THREADS);
    let (lo, hi) = (threshold as u32, (threshold >> 32) as u32);
    k::tb_nf_ops(exec, &config, leaves, vals, ops, status, capacity, parity(p), lo, hi, bits, levels)
}

/// `tb_nf_scatter`: the new boundaries of the tree in `leaves` (parity `p`) into `next`,
/// with its starts and values carried into parity `1 - p`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn scatter<E: GpuExecutor>(
    exec: &E,
    shape: &NfShape,
    leaves: &E::Buffer<u64>,
    ops: &E::Buffer<u32>,
    offsets: &E::Buffer<u32>,
    next: &mut E::Buffer<u64>,
    status: &mut E::Buffer<u32>,
    nf: &mut NfBuffers<E>,
    p: usize,
) -> Result<()> {
    let config = LaunchConfig::per_item(shape.capacity as usize + 1, THREADS);
    let NfBuffers { starts, vals, .. } = nf;
    k::tb_nf_scatter(
        exec,
        &config,
        leaves,
        ops,
        offsets,
        next,
        status,
        starts,
        vals,
        shape.capacity,
        parity(p),
        shape.bits,
        shape.levels,
    )
}

/// A leaf-buffer parity as the kernels' scalar.
fn parity(p: usize) -> u32 {
    u32::from(p % 2 == 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::kernels::NF_COUNT;

    #[test]
    fn the_kernels_use_these_constants() {
        for (name, value) in [("FRESH", FRESH), ("NO_GROUP", NO_GROUP)] {
            assert!(NF_COUNT.cuda.contains(&format!("#define TB_NF_{name} {value:#x}ull")), "{name}");
        }
        assert_eq!(FRESH, u64::MAX);
        assert!(NF_COUNT.wgsl.contains("const NF_ALL: vec2<u32> = vec2<u32>(0xffffffffu, 0xffffffffu);"));
        assert_eq!(geometry_words(KeyGeometry::Octree(Curve::Morton)).len(), GEOM_WORDS);
        for (name, at) in [("ENCODE", 0), ("DECODE", 192), ("MASKS", 384)] {
            assert!(NF_COUNT.cuda.contains(&format!("#define TB_NF_{name} {at}u")), "{name}");
            assert!(NF_COUNT.wgsl.contains(&format!("const NF_{name}: u32 = {at}u;")), "{name}");
        }
    }
}
