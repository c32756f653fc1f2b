//! [`DeviceWalkNodes`]: the walk's packed node data on the device.

use orrery_core::gpu::GpuExecutor;
use orrery_core::{DeviceBuffer as _, Result, Storage};

use super::bodies::alloc;
use crate::walk::WalkNodes;

/// The node data of a walk in device memory, exactly the packed arrays of [`WalkNodes`]
/// (read its documentation), indexed like the view (level order), plus each node's
/// extent ([`crate::Multipoles::extent`]):
///
/// | buffer | per node |
/// |---|---|
/// | [`Self::centres`] | `[c_x, c_y, c_z, r^2]` (f32) |
/// | [`Self::masses`] | `[M, Q_xx, Q_xy, Q_xz]` (f32) |
/// | [`Self::quads`] | `[Q_yy, Q_yz, Q_zz, 0]` (f32) |
/// | [`Self::links`] | `[first child, escape, first particle, particle count]` (u32) |
/// | [`Self::extents`] | distance from `c` to the farthest particle (f32, one per node) |
///
/// Written by [`super::compute_walk_nodes`]; the buffers are kept between calls, grown
/// with 25% headroom only past their capacity and never shrunk, so a steady state
/// allocates nothing.
pub struct DeviceWalkNodes<E: GpuExecutor> {
    centres: E::Buffer<f32>,
    masses: E::Buffer<f32>,
    quads: E::Buffer<f32>,
    links: E::Buffer<u32>,
    extents: E::Buffer<f32>,
    nodes: usize,
}

impl<E: GpuExecutor> DeviceWalkNodes<E> {
    /// Buffers for `nodes` nodes (at least 1), with 25% headroom; their contents are
    /// unspecified until [`super::compute_walk_nodes`] writes them.
    ///
    /// # Errors
    /// Allocation failures.
    pub fn new(exec: &E, nodes: usize) -> Result<Self> {
        let n = nodes.max(1);
        Ok(Self {
            centres: alloc(exec, 4 * n)?,
            masses: alloc(exec, 4 * n)?,
            quads: alloc(exec, 4 * n)?,
            links: alloc(exec, 4 * n)?,
            extents: alloc(exec, n)?,
            nodes: n,
        })
    }

    /// Sets the node count to `nodes`, reallocating (with 25% headroom) only past the
    /// capacity.
    pub(crate) fn fit(&mut self, exec: &E, nodes: usize) -> Result<()> {
        exec.resize(&mut self.centres, 4 * nodes)?;
        exec.resize(&mut self.masses, 4 * nodes)?;
        exec.resize(&mut self.quads, 4 * nodes)?;
        exec.resize(&mut self.links, 4 * nodes)?;
        exec.resize(&mut self.extents, nodes)?;
        self.nodes = nodes;
        Ok(())
    }

    /// Nodes.
    pub fn len(&self) -> usize {
        self.nodes
    }

    /// Whether there are none (never: a view has a root).
    pub fn is_empty(&self) -> bool {
        self.nodes == 0
    }

    /// The node capacity of the buffers (for tests of the reuse).
    pub fn capacity(&self) -> usize {
        self.extents.capacity()
    }

    /// `[c_x, c_y, c_z, r^2]` per node.
    pub fn centres(&self) -> &E::Buffer<f32> {
        &self.centres
    }

    /// `[M, Q_xx, Q_xy, Q_xz]` per node.
    pub fn masses(&self) -> &E::Buffer<f32> {
        &self.masses
    }

    /// `[Q_yy, Q_yz, Q_zz, 0]` per node.
    pub fn quads(&self) -> &E::Buffer<f32> {
        &self.quads
    }

    /// `[first child, escape, first particle, particle count]` per node.
    pub fn links(&self) -> &E::Buffer<u32> {
        &self.links
    }

    /// The extent of every node.
    pub fn extents(&self) -> &E::Buffer<f32> {
        &self.extents
    }

    /// The mutable buffers, for the pass: centres, masses, quads, links, extents.
    #[allow(clippy::type_complexity)]
    pub(crate) fn buffers_mut(
        &mut self,
    ) -> (&mut E::Buffer<f32>, &mut E::Buffer<f32>, &mut E::Buffer<f32>, &mut E::Buffer<u32>, &mut E::Buffer<f32>) {
        (&mut self.centres, &mut self.masses, &mut self.quads, &mut self.links, &mut self.extents)
    }

    /// The arrays on the host as [`WalkNodes`] (waiting for the pass).
    ///
    /// # Errors
    /// Device failures.
    pub fn download(&self, exec: &E) -> Result<WalkNodes<f32>> {
        Ok(WalkNodes {
            centres: quads_of(exec, &self.centres, self.nodes)?,
            masses: quads_of(exec, &self.masses, self.nodes)?,
            quads: quads_of(exec, &self.quads, self.nodes)?,
            links: quads_of(exec, &self.links, self.nodes)?,
        })
    }

    /// The extents on the host (waiting for the pass).
    ///
    /// # Errors
    /// Device failures.
    pub fn download_extents(&self, exec: &E) -> Result<Vec<f32>> {
        let mut out = vec![0f32; self.nodes];
        exec.read(&self.extents, 0, &mut out)?;
        Ok(out)
    }
}

/// The first `nodes` entries of a buffer packed 4 per node.
fn quads_of<E: GpuExecutor, T: Storage>(exec: &E, buf: &E::Buffer<T>, nodes: usize) -> Result<Vec<[T; 4]>> {
    let mut flat = bytemuck::zeroed_vec(4 * nodes);
    exec.read(buf, 0, &mut flat)?;
    Ok(flat.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]).collect())
}
