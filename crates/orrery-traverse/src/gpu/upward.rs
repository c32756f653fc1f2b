//! The upward pass on GPUs: the multipoles of every node of a device TreeView, from the
//! leaves up, packed as the walks read them, for every [`GpuExecutor`] (CUDA and wgpu).
//!
//! ```no_run
//! # fn demo<E: orrery_core::GpuExecutor>(
//! #     exec: &E,
//! #     view: &orrery_tree_build::gpu_view::DeviceTreeView<E, f32>,
//! #     x: &E::Buffer<f32>, y: &E::Buffer<f32>, z: &E::Buffer<f32>, m: &E::Buffer<f32>,
//! #     order: &E::Buffer<u32>,
//! # ) -> orrery_core::Result<()> {
//! use orrery_traverse::Opening;
//! use orrery_traverse::gpu::{DeviceTreeBodies, DeviceWalkNodes, compute_walk_nodes};
//!
//! let status = view.status(exec)?; // the step's one status read
//! let bodies = DeviceTreeBodies::gather(exec, x, y, z, m, order, status.particles)?;
//! let mut nodes = DeviceWalkNodes::new(exec, status.nodes)?;
//! compute_walk_nodes(exec, view, &status, &bodies, &Opening::safe(0.5), &mut nodes)?;
//! let host = nodes.download(exec)?; // = WalkNodes::new(view, Multipoles::compute(..), ..)
//! # Ok(())
//! # }
//! ```
//!
//! # Algorithm
//! [`compute_walk_nodes`] ports [`Multipoles::compute`](crate::Multipoles::compute) and
//! [`WalkNodes::new`](crate::WalkNodes::new) (module `traverse/upward`:
//! `kernels/traverse/upward.cu`, `shaders/traverse/upward.wgsl`; the table of entries is
//! in the CUDA file) in `depth + 4` launches, none per node:
//!
//! 1. `tu_links`, per node: the links `[first child, escape, first particle, count]`
//!    (first, so that the next kernels read particle ranges and children from one
//!    array: every entry binds at most 8 storage buffers, WebGPU's default limit);
//! 2. `tu_leaves`, per leaf: mass, centre of mass (accumulated relative to the cell
//!    centre) and second moments over the leaf's particles in tree order, and the
//!    farthest particle's squared distance;
//! 3. `tu_internal`, once per level from `depth - 1` up to the root: every internal node
//!    of the level sums its children in child order (parallel-axis shift of their second
//!    moments);
//! 4. `tu_extents`, per particle: its squared distance to the centre of mass of every
//!    proper ancestor of its leaf, reduced by `atomicMax` on the f32 bits (non-negative
//!    floats order like their bits, and a maximum does not depend on the order in which
//!    the atomics land: the result is deterministic);
//! 5. `tu_finish`, per node: the traceless quadrupole `3 T - trace(T) I`, the squared
//!    critical radius of [`Opening::critical_radius2`] and the extent `sqrt(d^2)`.
//!
//! # Level ranges
//! The number of level launches comes from the [`ViewStatus`] the caller read (its
//! `depth`; the function needs the status anyway for the node and particle counts), and
//! each level's node range is read *on the device* from the view's `level_offsets`
//! (`tu_internal` loops grid-stride over `[level_offsets[l], level_offsets[l + 1])`), so
//! the pass adds no host read to the step. Launching for the status's depth rather than
//! for every level the key layout allows costs `depth` launches instead of 21 (octree) or
//! 63 (binary tree); a recorded launch sequence is then valid for trees of that depth.
//! Each level's grid is sized for a host-side bound of its nodes, `min(N, c^level)` with
//! `c = 1 + (L - 1) / internal` children per node (the view's invariant), which keeps
//! the upper levels' launches small; the grid-stride loop makes any grid correct.
//!
//! # Floats
//! On CUDA every operation is a correctly rounded intrinsic in the CPU's order: the
//! results equal [`Multipoles::compute`](crate::Multipoles::compute) +
//! [`WalkNodes::new`](crate::WalkNodes::new) on the downloaded view bit for bit. WGSL's
//! division and square root need not be correctly rounded (2.5 and about 2 ULP), so on
//! wgpu the centres of mass, quadrupoles, radii and extents may differ in the last bits
//! (sums and products are correctly rounded in WGSL, and an opaque zero OR-ed into every
//! product keeps drivers from contracting it into an FMA); masses and links are exact.
//!
//! # Cost
//! Not measured yet. Ideas: warp-aggregated extents, a warp per leaf, indirect grids per
//! level from the device offsets.

mod bodies;
mod kernels;
mod nodes;

pub use bodies::DeviceTreeBodies;
pub use kernels::UPWARD;
pub use nodes::DeviceWalkNodes;

use orrery_core::executor::check_range;
use orrery_core::gpu::{GpuExecutor, LaunchConfig};
use orrery_core::{DeviceBuffer as _, Error, Result, View, ViewMut};
use orrery_tree_build::gpu_view::{DeviceTreeView, ViewStatus};

use self::kernels::{MAX_LEVELS, THREADS, tu_extents, tu_finish, tu_internal, tu_leaves, tu_links};
use crate::mac::{Mac, Opening};

/// Every module the upward pass launches (for ahead-of-time compile checks).
pub const KERNEL_MODULES: [orrery_core::KernelSource; 1] = [UPWARD];

/// The entry points of [`UPWARD`], in both languages.
pub const KERNEL_ENTRIES: [&str; 6] = ["tu_gather", "tu_links", "tu_leaves", "tu_internal", "tu_extents", "tu_finish"];

/// Enqueues the upward pass of `view` (with its `status`, read by
/// [`DeviceTreeView::status`]) over `bodies` (the view's particles in tree order) for the
/// criterion `opening`, into `out` (resized to the view's nodes). Nothing is read back;
/// see the [module documentation](self) for the passes and the floats.
///
/// # Errors
/// As [`Opening::check`]; [`Error::LengthMismatch`] when the bodies are not the view's
/// particles in number, or the status does not fit the view's buffers (a status of
/// another view); [`Error::InvalidTree`] for a status without leaves, with a node count
/// other than leaves plus internal nodes, or deeper than 63 levels; launch failures.
pub fn compute_walk_nodes<E: GpuExecutor>(
    exec: &E,
    view: &DeviceTreeView<E, f32>,
    status: &ViewStatus,
    bodies: &DeviceTreeBodies<E>,
    opening: &Opening<f32>,
    out: &mut DeviceWalkNodes<E>,
) -> Result<()> {
    opening.check()?;
    check_status(view, status)?;
    if bodies.len() != status.particles {
        return Err(Error::LengthMismatch { what: "tree bodies", expected: status.particles, actual: bodies.len() });
    }
    let (nodes, leaves, particles) = (status.nodes, status.leaves, status.particles);
    out.fit(exec, nodes)?;
    let (centres, masses, quads, links, extents) = out.buffers_mut();
    let per = |items: usize| LaunchConfig::<E>::per_item(items, THREADS);
    let (n, zero) = (nodes as u32, 0u32);

    tu_links(
        exec,
        &per(nodes),
        view.first_children(),
        view.escapes(),
        view.particle_begins(),
        view.particle_counts(),
        &mut *links,
        n,
    )?;
    tu_leaves(
        exec,
        &per(leaves),
        bodies.view(),
        view.leaf_nodes(),
        View::of(&*links),
        view.centres(),
        &mut *centres,
        &mut *masses,
        &mut *quads,
        &mut *extents,
        leaves as u32,
        zero,
    )?;
    // Children per internal node: every internal node has 2^b, so L = 1 + internal (2^b - 1).
    let children = (leaves - 1).checked_div(status.internal).map_or(1, |gaps| gaps + 1);
    let max_blocks = u32::try_from(exec.limits().max_blocks).unwrap_or(u32::MAX).max(1);
    for level in (0..status.depth).rev() {
        let bound = children.checked_pow(level).map_or(nodes, |c| c.min(nodes));
        let blocks = (bound.div_ceil(THREADS as usize) as u64).min(u64::from(max_blocks)) as u32;
        let config = LaunchConfig::<E>::blocks(blocks, THREADS);
        tu_internal(
            exec,
            &config,
            view.centres(),
            View::of(&*links),
            view.parents(),
            view.level_offsets(),
            &mut *centres,
            &mut *masses,
            &mut *quads,
            &mut *extents,
            level,
            n,
            zero,
        )?;
    }
    tu_extents(
        exec,
        &per(particles),
        bodies.view(),
        view.particle_leaves(),
        view.leaf_nodes(),
        view.parents(),
        View::of(&*centres),
        ViewMut::of(&mut *extents),
        particles as u32,
        zero,
    )?;
    let safe = u32::from(opening.mac == Mac::Safe);
    tu_finish(
        exec,
        &per(nodes),
        view.centres(),
        view.half_extents(),
        centres,
        masses,
        quads,
        extents,
        n,
        safe,
        opening.theta,
        zero,
    )
}

/// The status is one of this view's: counts consistent and within its buffers.
fn check_status<E: GpuExecutor>(view: &DeviceTreeView<E, f32>, s: &ViewStatus) -> Result<()> {
    let bad = |reason: String| Err(Error::InvalidTree { index: 0, reason });
    if s.leaves == 0 || s.nodes != s.leaves + s.internal {
        return bad(format!("status with {} leaves, {} internal and {} nodes", s.leaves, s.internal, s.nodes));
    }
    if s.depth >= MAX_LEVELS {
        return bad(format!("status depth {} exceeds the {} levels of 64-bit keys", s.depth, MAX_LEVELS - 1));
    }
    for (what, len) in [
        ("view parents", view.parents().len()),
        ("view first children", view.first_children().len()),
        ("view escapes", view.escapes().len()),
        ("view particle begins", view.particle_begins().len()),
        ("view particle counts", view.particle_counts().len()),
    ] {
        check_range(what, len, 0, s.nodes)?;
    }
    check_range("view centres", view.centres().len(), 0, 3 * s.nodes)?;
    check_range("view half extents", view.half_extents().len(), 0, 3 * s.nodes)?;
    check_range("view leaf nodes", view.leaf_nodes().len(), 0, s.leaves)?;
    check_range("view particle leaves", view.particle_leaves().len(), 0, s.particles)?;
    check_range("view level offsets", view.level_offsets().len(), 0, s.depth as usize + 2)
}
