//! The Cornerstone tree build on GPUs: one orchestration for every [`GpuExecutor`](orrery_core::GpuExecutor) (CUDA
//! and wgpu), bit-identical to the CPU build in leaves, counts, sorted keys and order.
//!
//! [`GpuTree`] holds everything on the device: the particles' sorted keys and order, two
//! leaf arrays of a fixed capacity, the counts, the operations and their scan, and a
//! status block. A step is the keys phase (the executor's `sfc_keys` or the binary keys
//! kernel, then `key_end` outside the box), the sort phase (the executor's stable sort of
//! `(key, index)`) and the rebalance phase: a build from the root leaf or an update of
//! the previous tree, decide / scan / scatter passes ([`crate::rebalance`]) of LeafCount
//! or NFCount until nothing changes or the pass budget is spent.
//!
//! NFCount ([`crate::nfcount`]) keeps, per leaf, its first particle, `W = n * S` and its
//! group value on the device, evaluates every value of the run's first tree once, and
//! then carries the values of the leaves whose interval survives a pass through the pass's
//! operation scan (a kept leaf's new index is `offsets[i]`); only split children and
//! merge leaders' groups are evaluated again (`nf.rs`). The stencil geometry is the keys':
//! the octree's curve or the split sequence of the box the binary keys were computed in
//! ([`GpuTree::stencil_geometry`]). The NF values are [`GpuTree::nf`].
//!
//! # No host round trip inside a rebalance
//! Every pass kernel is sized for the leaf capacity and reads the live leaf count and the
//! run's state from the status block ([`status`](self#status-block)): the counts,
//! the decide, the executor's counted scan ([`orrery_core::DeviceCount`] on the status
//! word the previous pass set), the scatter, and a one-thread finish kernel that moves
//! the run on. All passes of the budget are enqueued back to back; once the run is done
//! every later kernel returns at once (its scan has a live count of 0). The host reads
//! the status block once, at the end ([`orrery_core::Executor::read_async`]).
//!
//! A proposal of more leaves than the capacity is rejected before anything is written
//! (the scatter compares the scan's total with the capacity and sets the overflow flag
//! instead); the host then grows the buffers to the needed size plus 25%, outside any
//! recording, and resumes from the last completed pass (the passes are deterministic, so
//! the result is the one an unlimited capacity gives).
//!
//! # Record and replay
//! The passes of a run (every slot of the budget) are captured once with
//! [`orrery_core::Executor::record`] (a CUDA graph; one wgpu submission) and replayed on
//! every later rebalance of the same leaf capacity and particle count; a growth or a new
//! particle count records again. A run starts with `tb_begin`, launched directly: its
//! mode (build, update, resume after a growth) is a scalar that differs between runs of
//! the same shape, and a recording replays fixed scalars. The pass slots scatter from one
//! leaf buffer into the other, so a run's sequence depends on which buffer holds the
//! tree when it starts: there is one recording per starting buffer (two at most). The
//! first run is enqueued directly (it compiles and loads every kernel, which must not
//! happen inside a capture).
//!
//! What is not recorded, and why: the keys phase (its scalars, the box's minimum and
//! scale, change with the box every step, and without a box it reads the bounding box
//! back to compute them on the host exactly as the CPU does), the sort phase (one call of
//! the executor's sort, nothing to gain), and `tb_begin` (above). They are enqueued
//! directly, in stream order before the replay.
//!
//! # Status block
//! See `status.rs`: leaf count, scan count, changed, state, passes, converged, overflow,
//! needed leaves, current buffer, active particles.
//!
//! # Code layout
//! `tree.rs` ([`GpuTree`]: phases, results, the run loop, recordings), `keys.rs` (keys
//! phase, [`TreeReal`]), `passes.rs` (the pass sequence; the criterion's decide is one
//! `match` there), `nf.rs` (NFCount's buffers, geometry table and pass steps),
//! `buffers.rs` (capacity and growth), `status.rs` (the status block), `single.rs` (single kernels from host
//! data, for tests), `kernels.rs` (modules and typed declarations). Kernels:
//! `kernels/tree/*.cu` and `shaders/tree/*.wgsl`.
//!
//! # Performance work for later
//! Nothing here is tuned yet. Obvious next steps: launch the pass kernels indirectly from
//! the live leaf count (wgpu dispatches no workgroups for a finished pass; CUDA would
//! still launch, so a conditional graph node that ends the run would be the CUDA
//! counterpart); a block-cooperative scatter for deep splits (one thread writes up to
//! 4096 keys now); counts searching only within the previous pass's bounds; fusing the
//! removal outside the box into the key kernels; a smaller default pass budget for
//! updates (each finished slot still costs five launches, six for NFCount). NFCount:
//! compact the fresh leaves before `tb_nf_eval` (after the first pass most threads only
//! copy a count), a warp per stencil for the run's first tree (27 cells over the lanes),
//! and keeping the values of an update's first tree where a leaf's particles and its
//! neighbours' did not change.

mod buffers;
pub(crate) mod kernels;
mod keys;
mod nf;
mod passes;
mod single;
mod status;
mod tree;

pub use kernels::{CUDA_ONLY as CUDA_ONLY_ENTRIES, ENTRIES as KERNEL_ENTRIES, MODULES as KERNEL_MODULES};
pub use keys::TreeReal;
#[cfg(feature = "cuda")]
pub use orrery_backend_cuda::CudaExecutor;
#[cfg(feature = "wgpu")]
pub use orrery_backend_wgpu::WgpuExecutor;
pub use single::{leaf_count_ops, leaf_counts, nf_ops, nf_values, nf_values_with_lanes, stencil_counts};
pub use tree::GpuTree;
