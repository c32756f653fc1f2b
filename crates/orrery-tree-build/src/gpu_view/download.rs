//! The status block and the download into a checked [`TreeView`].

use orrery_core::gpu::GpuExecutor;
use orrery_core::{Error, Result, Storage};

use super::build::{DeviceTreeView, GpuViewReal};
use super::kernels::{
    ERR_INTERNAL_COUNT, ERR_LEAF_BOUND, ERR_NF_SENTINEL, ERR_NO_LEAVES, ERR_PARTICLE_BOUND, ERR_STARTS_DECREASE,
    ERR_STARTS_ORIGIN, META_DEPTH, META_ERRORS, META_INTERNAL, META_LEAVES, META_NODES, META_PARTICLES, META_WORDS,
};
use crate::view::{TreeView, TreeViewParts};

/// The live counts of a device view, read from its status block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ViewStatus {
    /// Leaves `L`.
    pub leaves: usize,
    /// Internal nodes.
    pub internal: usize,
    /// Nodes `N`.
    pub nodes: usize,
    /// Particles (the root's).
    pub particles: usize,
    /// The deepest level.
    pub depth: u32,
}

/// The typed error of the first error bit set (in the order of the checks of
/// [`TreeView::from_leaves`]).
fn error_of(bits: u32, words: &[u32]) -> Option<Error> {
    let arg = |what: &'static str, reason: String| Some(Error::InvalidArgument { what, reason });
    let (l, internal) = (words[META_LEAVES], words[META_INTERNAL]);
    if bits & ERR_NO_LEAVES != 0 {
        return arg("leaf count", "the device leaf count is 0: a leaf array has at least one leaf".into());
    }
    if bits & ERR_LEAF_BOUND != 0 {
        return arg("leaf count", "the device leaf count exceeds its bound".into());
    }
    if bits & ERR_STARTS_ORIGIN != 0 {
        return arg("leaf first particles", "must start at particle 0".into());
    }
    if bits & ERR_STARTS_DECREASE != 0 {
        return arg("leaf first particles", "decrease at some leaf".into());
    }
    if bits & ERR_PARTICLE_BOUND != 0 {
        return arg("particle bound", "the leaf starts end past the particle bound".into());
    }
    if bits & ERR_NF_SENTINEL != 0 {
        return arg("NF values", "a leaf has u64::MAX, the internal-node sentinel NF_INTERNAL".into());
    }
    if bits & ERR_INTERNAL_COUNT != 0 {
        return Some(Error::InvalidTree {
            index: 0,
            reason: format!("{internal} internal nodes for {l} leaves: not a valid leaf array"),
        });
    }
    None
}

fn read_prefix<E: GpuExecutor, T: Storage>(exec: &E, buf: &E::Buffer<T>, len: usize) -> Result<Vec<T>> {
    let mut out = bytemuck::zeroed_vec(len);
    exec.read(buf, 0, &mut out)?;
    Ok(out)
}

fn triples<T: Copy>(flat: &[T]) -> Vec<[T; 3]> {
    flat.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect()
}

impl<E: GpuExecutor, T: GpuViewReal> DeviceTreeView<E, T> {
    /// Reads the status block (one small read, waiting for the build): the live counts.
    ///
    /// # Errors
    /// The input errors the kernels found: [`Error::InvalidArgument`] for a device leaf
    /// count of 0 or past its bound, leaf starts that do not begin at 0 or decrease or
    /// end past the particle bound, an NF value equal to [`crate::view::NF_INTERNAL`];
    /// [`Error::InvalidTree`] when the internal-node count shows the leaf array is not
    /// valid; device failures.
    pub fn status(&self, exec: &E) -> Result<ViewStatus> {
        let words = read_prefix(exec, self.meta(), META_WORDS)?;
        if let Some(e) = error_of(words[META_ERRORS], &words) {
            return Err(e);
        }
        Ok(ViewStatus {
            leaves: words[META_LEAVES] as usize,
            internal: words[META_INTERNAL] as usize,
            nodes: words[META_NODES] as usize,
            particles: words[META_PARTICLES] as usize,
            depth: words[META_DEPTH],
        })
    }

    /// Downloads the arrays (after [`Self::status`]) and checks them
    /// ([`TreeView::from_parts`]).
    ///
    /// # Errors
    /// As [`Self::status`] and [`TreeView::from_parts`].
    pub fn download(&self, exec: &E) -> Result<TreeView<T>> {
        TreeView::from_parts(self.download_parts(exec)?)
    }

    /// [`Self::download`] without the check: the raw arrays (for tests and debugging).
    ///
    /// # Errors
    /// As [`Self::status`].
    pub fn download_parts(&self, exec: &E) -> Result<TreeViewParts<T>> {
        let geometry = self.geometry;
        let st = self.status(exec)?;
        let (n, l, depth) = (st.nodes, st.leaves, st.depth as usize);
        let u = |buf: &E::Buffer<u32>, len: usize| read_prefix(exec, buf, len);
        Ok(TreeViewParts {
            geometry,
            keys: read_prefix(exec, self.keys(), n)?,
            levels: u(self.levels(), n)?,
            parents: u(self.parents(), n)?,
            first_children: u(self.first_children(), n)?,
            leaf_begins: u(self.leaf_begins(), n)?,
            leaf_counts: u(self.leaf_counts(), n)?,
            particle_begins: u(self.particle_begins(), n)?,
            particle_counts: u(self.particle_counts(), n)?,
            centres: triples(&read_prefix(exec, self.centres(), 3 * n)?),
            half_extents: triples(&read_prefix(exec, self.half_extents(), 3 * n)?),
            nf: if self.has_nf { Some(read_prefix(exec, self.nf(), n)?) } else { None },
            level_offsets: u(self.level_offsets(), depth + 2)?,
            leaf_nodes: u(self.leaf_nodes(), l)?,
            particle_leaves: u(self.particle_leaves(), st.particles)?,
            escapes: u(self.escapes(), n)?,
            dfs_positions: u(self.dfs_positions(), n)?,
            dfs_order: u(self.dfs_order(), n)?,
            parents_per_level: u(self.parents_per_level(), depth + 1)?,
            child_centric_positions: u(self.child_centric_positions(), n)?,
            child_centric_nodes: u(self.child_centric_nodes(), n)?,
            child_indices: u(self.child_indices(), n)?,
        })
    }
}
