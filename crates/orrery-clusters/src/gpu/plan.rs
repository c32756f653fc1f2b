//! Launch plans shared by the sub-structure and pairwise families: row chunks (the
//! [`crate::grid::ChunkGrid`] decode, uploaded) and pairwise items (the
//! [`crate::grid::TileGrid`] of tile pairs in runs per item), plus the small helpers every
//! engine uses.

use orrery_core::{Error, ExecutorKind, GpuExecutor, LaunchConfig, Result};

use super::device::DeviceClusters;
use super::sources::{PT_MAX_ITEMS, PT_TILE};

/// A buffer of `len` elements, at least one (wgpu binds no zero-sized buffer).
pub(crate) fn alloc<E: GpuExecutor, T: orrery_core::Storage>(exec: &E, len: usize) -> Result<E::Buffer<T>> {
    exec.alloc::<T>(len.max(1))
}

/// An upload of `data`, at least one element (a 0 when `data` is empty).
pub(crate) fn upload<E: GpuExecutor>(exec: &E, data: &[u32]) -> Result<E::Buffer<u32>> {
    if data.is_empty() { exec.upload(&[0u32]) } else { exec.upload(data) }
}

/// `items` blocks of `threads` threads (grids stay below `u32::MAX` blocks: the plans
/// check their item counts).
pub(crate) fn grid<'a, E: GpuExecutor>(items: usize, threads: u32) -> LaunchConfig<'a, E> {
    LaunchConfig::blocks(u32::try_from(items).unwrap_or(u32::MAX), threads)
}

/// [`Error::LengthMismatch`] unless `clusters` has the layout (`offsets`, `dim`).
pub(crate) fn check_layout<E: GpuExecutor>(
    what: &'static str,
    offsets: &[u32],
    dim: usize,
    clusters: &DeviceClusters<E>,
) -> Result<()> {
    if clusters.offsets() != offsets || clusters.dim() != dim {
        return Err(Error::LengthMismatch {
            what,
            expected: offsets.len() * dim,
            actual: clusters.offsets().len() * clusters.dim(),
        });
    }
    Ok(())
}

/// The rows of every cluster cut into chunks of `rows`: per chunk its cluster and first
/// row, per cluster its first chunk (`clusters + 1` entries), on the device.
pub(crate) struct RowPlan<E: GpuExecutor> {
    /// Number of chunks.
    pub chunks: usize,
    pub cluster: E::Buffer<u32>,
    pub start: E::Buffer<u32>,
    pub first: E::Buffer<u32>,
}

/// The host side of [`RowPlan`]: (cluster, start, first).
pub(crate) fn row_plan_host(offsets: &[u32], rows: u32) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let (mut cluster, mut start, mut first) = (Vec::new(), Vec::new(), vec![0u32]);
    for (c, w) in offsets.windows(2).enumerate() {
        let mut s = w[0];
        while s < w[1] {
            cluster.push(c as u32);
            start.push(s);
            s = s.saturating_add(rows);
        }
        first.push(cluster.len() as u32);
    }
    (cluster, start, first)
}

impl<E: GpuExecutor> RowPlan<E> {
    pub(crate) fn new(exec: &E, offsets: &[u32], rows: u32) -> Result<Self> {
        let (cluster, start, first) = row_plan_host(offsets, rows);
        Ok(Self {
            chunks: cluster.len(),
            cluster: upload(exec, &cluster)?,
            start: upload(exec, &start)?,
            first: upload(exec, &first)?,
        })
    }
}

/// Tile pairs per item of a cluster with `pairs` tile pairs (`pt_group` in pairs.cuh).
pub(crate) fn item_group(pairs: u64) -> u64 {
    pairs.div_ceil(PT_MAX_ITEMS).max(1)
}

/// The exclusive prefix sum of pairwise items per cluster (`clusters + 1` entries): a
/// cluster of `T_c = ceil(n_c / 64)` row tiles has `ceil(T_c^2 / item_group(T_c^2))`
/// items (at most [`PT_MAX_ITEMS`]).
pub(crate) fn item_prefix_host(offsets: &[u32]) -> Vec<u64> {
    let mut prefix = Vec::with_capacity(offsets.len());
    prefix.push(0u64);
    let mut total = 0u64;
    for w in offsets.windows(2) {
        let t = u64::from((w[1] - w[0]).div_ceil(PT_TILE));
        let pairs = t * t;
        total += pairs.div_ceil(item_group(pairs));
        prefix.push(total);
    }
    prefix
}

/// The pairwise items of a layout on the device.
pub(crate) struct ItemPlan<E: GpuExecutor> {
    /// Number of items (blocks of an item launch).
    pub items: usize,
    pub prefix: E::Buffer<u32>,
}

/// Largest cluster the WGSL kernels take: their tile-pair index is a `u32`, so `T_c^2`
/// must stay below 2^32 (`T_c <= 65,535` tiles of 64 rows).
pub(crate) const WGSL_MAX_CLUSTER: usize = 65_535 * PT_TILE as usize;

impl<E: GpuExecutor> ItemPlan<E> {
    /// # Errors
    /// [`Error::TooManyPoints`] when the items exceed `u32::MAX`, or on wgpu a cluster has
    /// more than [`WGSL_MAX_CLUSTER`] members.
    pub(crate) fn new(exec: &E, offsets: &[u32]) -> Result<Self> {
        if exec.kind() != ExecutorKind::Cuda
            && let Some(n) = offsets.windows(2).map(|w| (w[1] - w[0]) as usize).find(|&n| n > WGSL_MAX_CLUSTER)
        {
            return Err(Error::TooManyPoints {
                count: n,
                max: WGSL_MAX_CLUSTER,
                what: "members of one cluster in a WGSL pairwise pass (u32 tile-pair index)",
            });
        }
        let prefix = item_prefix_host(offsets);
        let items = prefix[prefix.len() - 1];
        let items = u32::try_from(items).map_err(|_| Error::TooManyPoints {
            count: usize::try_from(items).unwrap_or(usize::MAX),
            max: u32::MAX as usize,
            what: "pairwise work items",
        })?;
        let words: Vec<u32> = prefix.iter().map(|&p| p as u32).collect();
        Ok(Self { items: items as usize, prefix: upload(exec, &words)? })
    }
}

/// The f32 column `f` of a field-major statistics buffer of `k` clusters, widened.
pub(crate) fn column(stats: &[f32], f: usize, k: usize) -> Vec<f64> {
    stats[f * k..(f + 1) * k].iter().map(|&x| f64::from(x)).collect()
}

/// 64-bit counters stored as (low, high) u32 words.
pub(crate) fn counters(words: &[u32], len: usize) -> Vec<u64> {
    words[..2 * len].chunks_exact(2).map(|w| u64::from(w[0]) | (u64::from(w[1]) << 32)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_group_tile_pairs_and_stay_within_the_cap() {
        // 3 members: 1 tile, 1 item; 4,096 members: 64 tiles, 4,096 items of 1;
        // 4,097 members: 65 tiles, 4,225 pairs in groups of 2: 2,113 items; empty: 0.
        let offsets = [0u32, 3, 3, 4099, 8196];
        assert_eq!(item_prefix_host(&offsets), [0, 1, 1, 4097, 4097 + 2113]);
        assert_eq!(item_group(15_625 * 15_625), 59_605); // a 1M-member cluster, as the CPU
        let (cluster, start, first) = row_plan_host(&[0, 0, 130, 131], 128);
        assert_eq!((cluster, start, first), (vec![1, 1, 2], vec![0, 128, 130], vec![0, 0, 2, 3]));
    }
}
