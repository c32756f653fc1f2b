//! The TreeView on GPUs: one orchestration for every [`GpuExecutor`] (CUDA and wgpu),
//! bit-identical to the CPU view ([`crate::view`]) in every array.
//!
//! ```no_run
//! # fn demo<E: orrery_core::GpuExecutor>(exec: &E) -> orrery_core::Result<()> {
//! use orrery_core::{sfc::Curve, Aabb};
//! use orrery_tree_build::view::{Geometry, TreeView};
//! use orrery_tree_build::{counts::leaf_starts, gpu_view, Leaves, Shape};
//!
//! let layout = Shape::Octree(Curve::Morton).layout();
//! let leaves = Leaves::from_keys((0..=8).map(|i| i << 60).collect(), layout)?;
//! let lfp = leaf_starts(leaves.keys(), &[5, 1 << 61, 1 << 62]);
//! let geometry = Geometry::new(Shape::Octree(Curve::Morton), Aabb::cube(-1.0f32, 1.0)?);
//! let view = gpu_view::build_tree_view(exec, &leaves, &lfp, geometry, None)?;
//! assert_eq!(view, TreeView::from_leaves(&leaves, &lfp, geometry, None)?);
//! # Ok(())
//! # }
//! ```
//!
//! For device-resident input (the leaf array of a GPU tree build, its leaf count in a
//! device slot) and buffers reused across builds, use [`GpuTreeViewBuilder`]: it keeps
//! every array in a [`DeviceTreeView`], sized with 25% headroom and grown only by
//! [`GpuTreeViewBuilder::reserve`] or a build past the reserved bounds (so a reserved
//! builder can be recorded with [`orrery_core::Executor::record`]).
//!
//! # Algorithm
//! The kernels (module `tree/view`: `kernels/tree/view.cu`, `shaders/tree/view.wgsl`;
//! the table of entries is in the CUDA file) compute the arrays of [`crate::view::steps`]
//! without its 64-bit sort of placeholder keys. Every node starts at the first key of
//! its first leaf, so the nodes that start at `K[j]` form a chain (levels from the
//! coarsest at which `K[j]` starts a cell down to leaf `j`'s own), and depth-first
//! preorder lists the chains of leaves `0, 1, ...` in turn: one counted exclusive scan of
//! the chain lengths gives every node's DFS position. Level order (the view's node
//! numbering) is DFS order stably sorted by level: one `sort_pairs` of `(level, leaf)`
//! on key bits `0..8`, a single radix pass. Then per node the gathers: leaf ranges (a
//! galloping search of `K` from the node's first leaf, internal nodes only), the first
//! child (the next DFS position), the parent (written by the parent: the `2^b` children
//! of a node are consecutive in level order), the escape (the head of the chain past the
//! node's leaves); per level the offsets, per particle the leaf, and the inverses (DFS
//! order, child-centric nodes, leaf-to-node) by scatter. Every search returns
//! [`orrery_core::executor::lower_bound_one`]'s index on a valid leaf array, so the
//! arrays are the CPU's integers.

//! # Device counts
//! Every launch is sized for the host-side bounds (leaf capacity, node bound
//! `Lb + (Lb - 1) / (2^b - 1)`, particle bound); the live counts (`L`, `N`, the particle
//! count `lfp[L]`, the depth)
//! are words of the status block written on the device, and threads past them return.
//! So with a [`LeafCount::Device`] a build has no host round trip; one read of the
//! status block ([`DeviceTreeView::status`]) reports the counts and the input errors
//! the kernels found (a zero or oversized count, bad leaf starts, an NF sentinel, an
//! invalid leaf array), as typed errors. Every device index is clamped, so invalid
//! input gives a defined result, never a fault; [`DeviceTreeView::download`] runs the
//! CPU checker ([`TreeView::from_parts`]).
//!
//! # Floats
//! Boxes follow [`Geometry::cell_box`]'s rule, every operation correctly rounded and
//! never fused: CUDA uses `__fmul_rn`/`__fadd_rn` (`__dmul_rn`/`__dadd_rn` for f64)
//! and `__ull2double_rn` then `__double2float_rn` for `T(corner)`, so its boxes are the
//! CPU's bit for bit in f32 and f64. WGSL has no f64: wgpu builds f32 views only
//! ([`GpuViewReal`]; f64 is [`orrery_core::Error::Unsupported`]), computes `T(corner)`
//! with integer operations as the same two roundings, and cannot forbid the driver from
//! contracting `min + T(corner) * unit` into an FMA: the tests check the boxes bit for
//! bit against the CPU's f32 view (they match on lavapipe).
//!
//! # Cost
//! Twelve kernels (eleven without NF values), a fill, one counted scan of `Lb` chain
//! lengths and one 8-bit radix pass over `Nb` pairs; every kernel reads a few words per
//! element (the one search, a galloping search of `K` for an internal node's last leaf,
//! is short but for the top levels). Measured on the H200 in `docs/performance/tree.md`
//! (the 64-bit sort this replaced took 1.70 ms of the view at 25.6M uniform points).

mod build;
mod download;
mod kernels;

pub use build::{DeviceTreeView, GpuTreeViewBuilder, GpuViewReal, LeafCount, ViewInput};
pub use download::ViewStatus;
pub use kernels::{ENTRIES as KERNEL_ENTRIES, MODULES as KERNEL_MODULES};

use orrery_core::{GpuExecutor, Result};

use crate::leaves::Leaves;
use crate::view::{Geometry, TreeView};

/// The view of host-side `leaves` (with leaf starts and optional NF values, as
/// [`TreeView::from_leaves`] takes them) built on `exec`: uploaded, built, downloaded and
/// checked.
///
/// # Errors
/// As [`TreeView::from_leaves`] (validated on the host first), [`GpuTreeViewBuilder::build`]
/// and [`DeviceTreeView::download`].
pub fn build_tree_view<E: GpuExecutor, T: GpuViewReal>(
    exec: &E,
    leaves: &Leaves,
    leaf_first_particle: &[u32],
    geometry: Geometry<T>,
    nf: Option<&[u64]>,
) -> Result<TreeView<T>> {
    geometry.check_fits(leaves.layout())?;
    orrery_core::executor::check_len("leaf first particles", leaves.len() + 1, leaf_first_particle.len())?;
    if let Some(values) = nf {
        orrery_core::executor::check_len("NF values", leaves.len(), values.len())?;
    }
    let keys = exec.upload(leaves.keys())?;
    let lfp = exec.upload(leaf_first_particle)?;
    let nf_buf = nf.map(|v| exec.upload(v)).transpose()?;
    let input = ViewInput {
        leaves: (&keys).into(),
        leaf_count: LeafCount::Host(leaves.len()),
        leaf_starts: (&lfp).into(),
        particle_bound: leaf_first_particle[leaves.len()] as usize,
        nf: nf_buf.as_ref().map(Into::into),
    };
    let mut builder = GpuTreeViewBuilder::<E, T>::new();
    builder.build(exec, &geometry, &input)?.download(exec)
}
