//! NFCount on the device: its buffers, the stencil geometry table, and its steps of a
//! pass (`kernels/tree/nf_count.cu`, `shaders/tree/nf_count.wgsl`).
//!
//! Per leaf of the current tree the device holds its count, its `W = n * S` and its
//! group value `G` (the parent's `n_p * S_p` when it leads a complete sibling group,
//! else [`NO_GROUP`]), the last two in one buffer `vals = [W (C) | G (C)]`. A `W` of
//! [`FRESH`] marks a leaf whose count and value are still to be computed. A pass slot
//! of an NFCount run is
//!
//! 1. `tb_nf_reset` (the run's first slot only: every value of the first tree is fresh,
//!    the particles moved since the last run);
//! 2. `tb_nf_counts`: the fresh leaves' counts (two searches each), and the live count of
//!    the next scan in the status word [`super::status::NF_SCAN_COUNT`];
//! 3. the executor's counted exclusive scan of the counts into `starts`;
//! 4. `tb_nf_eval`: `W` of the fresh leaves and `G` of the complete groups' leaders that
//!    carry none (both from the cheap stencil count: the leaf array, the starts, and
//!    particle searches only inside a coarser leaf);
//! 5. `tb_nf_ops`, the decide (lookups only);
//! 6. the shared scan of the operations and scatter ([`super::passes`]);
//! 7. `tb_nf_carry`: the new tree's values from the old ones through the operations'
//!    scan (kept leaves keep count, `W` and `G`; a merge leader gets the parent's count
//!    and `W = G`; split children are marked fresh), into the other parity's buffers;
//! 8. `tb_finish`.
//!
//! Then steps 2 to 4 once more for the final tree. Every kernel is sized for the capacity
//! and reads the live count from the status block, as the LeafCount steps do.

use orrery_core::gpu::{GpuExecutor, LaunchConfig};
use orrery_core::sfc::{Curve, hilbert};
use orrery_core::{DeviceCount, Error, Executor, Result, Slice};

use super::kernels::{THREADS, nf_count as k};
use super::status;
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

/// The NFCount buffers of one leaf capacity `C`.
pub(crate) struct NfBuffers<E: Executor> {
    /// Particles per leaf, by leaf-buffer parity, `C` each.
    pub counts: [E::Buffer<u32>; 2],
    /// `[W | G]` per leaf, by parity, `2 C` each.
    pub vals: [E::Buffer<u64>; 2],
    /// The exclusive scan of the current counts, `C + 1`.
    pub starts: E::Buffer<u32>,
    /// The geometry table, [`GEOM_WORDS`].
    pub geom: E::Buffer<u32>,
}

impl<E: Executor> NfBuffers<E> {
    /// Buffers for `capacity` leaves (contents unspecified; the geometry table is written
    /// before each run).
    pub fn new(exec: &E, capacity: usize) -> Result<Self> {
        let twice = capacity.checked_mul(2).ok_or(Error::TooManyPoints {
            count: capacity,
            max: u32::MAX as usize,
            what: "leaf capacity",
        })?;
        Ok(Self {
            counts: [exec.alloc(capacity)?, exec.alloc(capacity)?],
            vals: [exec.alloc(twice)?, exec.alloc(twice)?],
            starts: exec.alloc(capacity + 1)?,
            geom: exec.alloc(GEOM_WORDS)?,
        })
    }
}

/// `(&mut pair[p], &mut pair[1 - p])`.
pub(crate) fn split_pair<T>(pair: &mut [T; 2], p: usize) -> (&mut T, &mut T) {
    let [a, b] = pair;
    if p.is_multiple_of(2) { (a, b) } else { (b, a) }
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
}

/// Steps 1 to 4 for the tree in `leaves` with the values of parity `p`: (reset,) fresh
/// counts, starts, fresh values.
#[allow(clippy::too_many_arguments)]
pub(crate) fn prepare<E: GpuExecutor>(
    exec: &E,
    shape: &NfShape,
    reset: bool,
    keys: &E::Buffer<u64>,
    leaves: &E::Buffer<u64>,
    nf: &mut NfBuffers<E>,
    p: usize,
    status: &mut E::Buffer<u32>,
) -> Result<()> {
    let cap = shape.capacity;
    let config = LaunchConfig::per_item(cap as usize, THREADS);
    let NfBuffers { counts, vals, starts, geom } = nf;
    let (counts, vals) = (&mut counts[p % 2], &mut vals[p % 2]);
    if reset {
        k::tb_nf_reset(exec, &config, &mut *vals, &*status, cap)?;
    }
    k::tb_nf_counts(exec, &config, keys, leaves, &*vals, &mut *counts, &mut *status, shape.n, cap)?;
    let live = DeviceCount::new(status.slice(status::NF_SCAN_COUNT..status::NF_SCAN_COUNT + 1)?, cap as usize)?;
    exec.exclusive_scan_counted(&*counts, live, &mut *starts)?;
    k::tb_nf_eval(
        exec,
        &config,
        leaves,
        &*starts,
        keys,
        &*geom,
        &mut *vals,
        &*status,
        cap,
        shape.n,
        shape.hilbert,
        shape.bits,
        shape.levels,
    )
}

/// Step 5: the NFCount operations of the tree in `leaves` from its values.
#[allow(clippy::too_many_arguments)]
pub(crate) fn ops<E: GpuExecutor>(
    exec: &E,
    leaves: &E::Buffer<u64>,
    vals: &E::Buffer<u64>,
    ops: &mut E::Buffer<u32>,
    status: &mut E::Buffer<u32>,
    capacity: u32,
    threshold: u64,
    bits: u32,
    levels: u32,
) -> Result<()> {
    let config = LaunchConfig::per_item(capacity as usize, THREADS);
    let (lo, hi) = (threshold as u32, (threshold >> 32) as u32);
    k::tb_nf_ops(exec, &config, leaves, vals, ops, status, capacity, lo, hi, bits, levels)
}

/// Step 7: the values of parity `p`'s tree carried into parity `1 - p`'s arrays for the
/// tree the scatter just wrote.
pub(crate) fn carry<E: GpuExecutor>(
    exec: &E,
    shape: &NfShape,
    ops: &E::Buffer<u32>,
    offsets: &E::Buffer<u32>,
    nf: &mut NfBuffers<E>,
    p: usize,
    status: &E::Buffer<u32>,
) -> Result<()> {
    let config = LaunchConfig::per_item(shape.capacity as usize, THREADS);
    let NfBuffers { counts, vals, starts, .. } = nf;
    let (counts, next_counts) = split_pair(counts, p);
    let (vals, next_vals) = split_pair(vals, p);
    k::tb_nf_carry(
        exec,
        &config,
        ops,
        offsets,
        &*starts,
        &*counts,
        &*vals,
        next_counts,
        next_vals,
        status,
        shape.capacity,
        shape.bits,
    )
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
