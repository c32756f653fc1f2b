//! The ball tree build on GPUs: one orchestration for every [`GpuExecutor`] (CUDA and
//! wgpu), bit-identical to the CPU build ([`crate::cpu::build`]) in indices and mask.
//!
//! ```no_run
//! # fn demo<E: orrery_core::GpuExecutor>(exec: &E) -> orrery_core::Result<()> {
//! use orrery_balltree::{Batches, PointCloud, build_balltree, gpu};
//!
//! let points = [0.0f32, 0.0, 1.0, 0.0, 2.0, 0.1, 3.0, 0.0, 4.0, 0.2, 0.0, 5.0, 0.0, 6.0];
//! let cloud = PointCloud::new(&points, 2, Batches::from_offsets(&[0u32, 5, 7])?)?;
//! let tree = gpu::build_balltree(exec, &cloud)?; // upload, build, download
//! assert_eq!(tree, build_balltree(&cloud)?);
//! # Ok(())
//! # }
//! ```
//!
//! For device-resident input, and to reuse buffers across builds, use
//! [`GpuBallTreeBuilder`]: it keeps the plan of the last batch layout, its scratch and its
//! output, and returns a [`DeviceBallTree`].
//!
//! # Algorithm
//! The tree's shape is a function of the batch sizes alone ([`crate::layout`]), so the
//! host computes once, per batch layout, which nodes every launch works on (`plan.rs`)
//! and uploads it; the build itself runs back to back on the device with no host round
//! trip. It has two phases:
//!
//! 1. **Global levels**, while a node has more slots than a block holds. Per level, with
//!    `perm` the points in current tree order and the level's nodes as segments of it:
//!    each position's segment by binary search in the level's node starts, scattered to
//!    the points (`node_of`); per node and dimension the min and max of the coordinates
//!    (integer atomics on order-preserving codes: exact and deterministic); per node the
//!    split dimension by the exact spread comparison (`gpu/spread.rs`); then, for the points
//!    in index order, the key `node << 32 | code(coordinate)` and one **stable** sort of
//!    `(key, index)` over bits `0..32 + node bits`. Within a node the points come out in
//!    the order (coordinate, index) — the median order — so the left child is the first
//!    `floor(m/2)` of them, and the sorted indices are the next `perm`. Nodes whose
//!    batch has reached its last global level keep their segment id and a zero code, so
//!    they stay inside their segment.
//! 2. **Local phase.** Every remaining subtree (at most 2048 slots where the device's
//!    limits allow blocks of 512 threads with the phase's shared arrays, as on CUDA; else
//!    1024) is finished in shared memory by one block, which takes up to `capacity / 2^h`
//!    subtrees of the same height `h`, in *slot space*: a subtree of `2^h` slots is an
//!    aligned segment, its points first and padding after. The block gathers its points'
//!    coordinates once; per local level: the split dimension of every segment (a
//!    reduction within the block), the keys, a bitonic sort of every aligned segment by
//!    (code, index) with padding last, and a move of the right child's points to the
//!    front of the segment's second half. The leaves are then written as the CPU writes
//!    them.
//!
//! [`Strategy::LevelSort`] (the baseline) runs the global levels down to the leaves'
//! parents and uses the local phase only to write the leaves; [`Strategy::Hybrid`]
//! switches to the local phase as early as the block size allows. [`Strategy::Select`]
//! (the default; the fastest on CUDA and wgpu, see [`Strategy::fastest_for`]) runs the
//! levels of Hybrid but replaces each global level's sort of all points by a segmented
//! selection of every node's median:
//!
//! - the coordinates are transposed once into position order, dimension after dimension,
//!   and move with the permutation, so every pass reads them coalesced;
//! - per level: bounds and split dimensions as above; then radix-selection rounds over
//!   the key (code of the split coordinate, point index), most significant 11-bit digit
//!   first: a histogram of the digits of every *candidate* (a point whose resolved bits
//!   equal the pivot's so far; counted in shared memory when a tile of positions lies in
//!   one node, by global atomics otherwise) and one block per node that finds the bucket
//!   of rank `floor(m/2)`. A node is *decided* as soon as the pivot is the smallest
//!   candidate left: the left child is then every point whose resolved bits are below
//!   the pivot's. Later rounds skip decided nodes (and return at once when none is
//!   pending), so for 2^20 uniform f32 points only about 3 of the 5 rounds do work;
//! - a stable partition: left flags, the executor's exclusive scan, one scatter of the
//!   permutation and the coordinates.
//!
//! The partitions keep every node's points in index order, so Select's f32 local phase
//! on CUDA (`bt_local_ordered_f32`) sorts one packed `u64` key (code, local number) per
//! slot; WGSL (no `u64`) and f64 run the local phase of the other strategies. All three
//! strategies give the same tree.
//!
//! f64 coordinates are supported where the device does f64 arithmetic and the kernel
//! language has the f64 kernels, i.e. on CUDA (the same exact rules in f64: LevelSort and
//! Hybrid compose the 64-bit code and the node id by two stable sorts per level, Select
//! runs six code rounds instead of three); elsewhere (WGSL) they are
//! [`orrery_core::Error::Unsupported`].
//!
//! # Code layout
//! One host file and one kernel file per pass, each launched through typed declarations
//! ([`orrery_core::kernels!`], checked against the CUDA signature and the WGSL bindings
//! at first use): `levels.rs` (`kernels/balltree/levels.cu`, `shaders/balltree/levels.wgsl`:
//! bounds, split dimensions, sort keys), `select.rs` (`select.cu`, `select.wgsl`: the
//! selection rounds and partition), `local.rs` (`local.cu`, `local.wgsl`: the local phase,
//! one module per block shape), with `common.cuh` / `common.wgsl` holding the shared
//! per-element rules and the core segment search (`kernels/core/segment.cuh`,
//! `shaders/core/segment.wgsl`). `build.rs` holds the builder and the order of the passes,
//! `plan.rs` the host plan, `kernels.rs` the module list.
//!
//! # Cost
//! Launches per global level (`build.rs`):
//!
//! - LevelSort and Hybrid: `bt_reset_bounds`, `bt_bounds_*`, `bt_choose_*`, `bt_keys_*`,
//!   then one stable sort of `n` `(u64, u32)` pairs over `32 + node_bits` bits
//!   (`node_bits`: the bits of the level's node count); f64 sorts the 64-bit codes, then
//!   runs `bt_node_keys` and sorts again over `node_bits`.
//! - Select: `bt_transpose_*` once before the first level; per level `bt_reset_bounds`,
//!   `bt_sbounds_*`, `bt_choose_*`, `bt_select_init`, two launches per selection round
//!   (`bt_select_count_*`, `bt_select_find_*`), `bt_select_flags_*`, the executor's
//!   exclusive scan of `n` flags and `bt_select_scatter_*`. The rounds cover the code's
//!   32 or 64 bits and the `ceil(log2 n)` index bits (at least 1) in 11-bit digits, so
//!   f32 at `n = 2^20` has 3 + 2; every round is launched, and a round with no pending node
//!   returns at once.
//!
//! Global levels: for a deepest batch of depth `L` (`2^(L+1)` slots), LevelSort runs `L`;
//! Hybrid and Select run `max(0, L + 1 - log2(c))`, with `c` the block's slots (2048 on
//! CUDA, 1024 on wgpu). The local phase is one launch; a block of subtrees of `2^h` slots
//! runs `g(g+1)/2` bitonic steps at each local level `g = h, ..., 2`, and LevelSort's
//! blocks (`h = 1`) only write leaves.
//!
//! Measured times on every executor, and per-kernel profiles:
//! `docs/performance/balltree.md` (its Current table; its History keeps the table and
//! profile these docs held until issue 11).

mod build;
mod kernels;
mod levels;
mod local;
mod plan;
mod select;
// The host reference of the kernels' rules, for the CPU build to share (split.rs).
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) mod spread;

pub use build::{DeviceBallTree, GpuBallTreeBuilder, GpuReal, Strategy};
pub use kernels::MODULES as KERNEL_MODULES;
#[cfg(feature = "cuda")]
pub use orrery_backend_cuda::CudaExecutor;
#[cfg(feature = "wgpu")]
pub use orrery_backend_wgpu::WgpuExecutor;

use orrery_core::{GpuExecutor, Result};

use crate::input::PointCloud;
use crate::tree::BallTree;

/// Builds the ball tree of every batch of `cloud` on `exec` with the fastest strategy it
/// runs ([`Strategy::fastest_for`]): the validated host points are uploaded, the tree is
/// built on the device and downloaded.
///
/// # Errors
/// As [`GpuBallTreeBuilder::build`].
pub fn build_balltree<E: GpuExecutor, T: GpuReal>(exec: &E, cloud: &PointCloud<'_, T>) -> Result<BallTree> {
    build_balltree_with(exec, cloud, Strategy::fastest_for(exec.kind()))
}

/// [`build_balltree`] with an explicit [`Strategy`].
///
/// # Errors
/// As [`GpuBallTreeBuilder::build`].
pub fn build_balltree_with<E: GpuExecutor, T: GpuReal>(
    exec: &E,
    cloud: &PointCloud<'_, T>,
    strategy: Strategy,
) -> Result<BallTree> {
    let points = exec.upload(cloud.points())?;
    let mut builder = GpuBallTreeBuilder::<E>::new(strategy);
    builder.build(exec, &points, cloud.dim(), cloud.batches())?.download(exec)
}
