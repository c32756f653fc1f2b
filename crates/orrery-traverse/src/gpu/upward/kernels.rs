//! The kernel module of the upward pass and its typed launchers: module `traverse/upward`
//! (`kernels/traverse/upward.cu`, `shaders/traverse/upward.wgsl`, both self-contained).
//! Both languages define the same entry points with the same arguments (buffers first,
//! then scalars; see [`orrery_core::gpu`]), declared once here and checked against both at
//! first use. The trailing `zero` scalar of the float kernels is always 0: WGSL ORs it
//! into every product so that no driver can contract the product into a fused
//! multiply-add (CUDA uses correctly rounded intrinsics and ignores it).

use orrery_core::KernelSource;

/// The module `traverse/upward`.
pub const UPWARD: KernelSource =
    KernelSource::new("traverse/upward", orrery_kernels::traverse::UPWARD, orrery_shaders::traverse::UPWARD);

/// Threads per block of every kernel (`TU_THREADS` in the CUDA source; the kernels use no
/// shared memory, so any multiple of 32 works).
pub(crate) const THREADS: u32 = 256;

/// Most levels below the root a parent chain may have (`TU_MAX_LEVELS`): 64-bit binary
/// keys have 63.
pub(crate) const MAX_LEVELS: u32 = 64;

orrery_core::kernels! {
    module = UPWARD;
    /// Per body `i < n_active`: `bodies[4i..4i + 4] = [x, y, z, m][order[i]]`, the order
    /// copied; the first position whose index is `>= n_bodies` is atomicMin'ed into
    /// `status[0]` (filled with `u32::MAX` before).
    pub(crate) fn tu_gather(
        read x: f32, read y: f32, read z: f32, read m: f32, read order: u32,
        write bodies: f32, write order_out: u32, write status: u32,
        scalar n_active: u32, scalar n_bodies: u32,
    );
    /// Per node: `[first child, escape, particle begin, particle count]`.
    pub(crate) fn tu_links(
        read first_children: u32, read escapes: u32, read particle_begins: u32, read particle_counts: u32,
        write links: u32, scalar nodes: u32,
    );
    /// Per leaf: raw moments (mass, centre of mass, second moments) and the farthest
    /// particle's squared distance.
    pub(crate) fn tu_leaves(
        read bodies: f32, read leaf_nodes: u32, read links: u32, read box_centres: f32,
        write centres: f32, write masses: f32, write quads: f32, write extents: f32,
        scalar leaves: u32, scalar zero: u32,
    );
    /// Per internal node of `level` (grid-stride over the level's range): raw moments
    /// from the children; squared extent 0.
    pub(crate) fn tu_internal(
        read box_centres: f32, read links: u32, read parents: u32, read level_offsets: u32,
        write centres: f32, write masses: f32, write quads: f32, write extents: f32,
        scalar level: u32, scalar nodes: u32, scalar zero: u32,
    );
    /// Per particle: atomicMax of its squared distance into every proper ancestor of its
    /// leaf.
    pub(crate) fn tu_extents(
        read bodies: f32, read particle_leaves: u32, read leaf_nodes: u32, read parents: u32,
        read centres: f32, write extents: f32, scalar particles: u32, scalar zero: u32,
    );
    /// Per node: traceless quadrupole, squared critical radius, extent.
    pub(crate) fn tu_finish(
        read box_centres: f32, read half_extents: f32,
        write centres: f32, write masses: f32, write quads: f32, write extents: f32,
        scalar nodes: u32, scalar safe: u32, scalar theta: f32, scalar zero: u32,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The host's constants are the sources' and every entry exists in both languages.
    #[test]
    fn constants_and_entries_match_the_sources() {
        assert!(UPWARD.cuda.contains(&format!("#define TU_THREADS {THREADS}u\n")));
        assert!(UPWARD.cuda.contains(&format!("#define TU_MAX_LEVELS {MAX_LEVELS}u\n")));
        assert!(UPWARD.wgsl.contains(&format!("const MAX_LEVELS: u32 = {MAX_LEVELS}u;")));
        assert!(!UPWARD.wgsl.contains("//#include"), "the WGSL module is self-contained");
        assert!(!UPWARD.cuda.contains("#include"), "the CUDA module is self-contained");
        for entry in super::super::KERNEL_ENTRIES {
            assert!(orrery_core::gpu::cuda_params(UPWARD.cuda, entry).is_some(), "CUDA lacks {entry}");
            assert!(UPWARD.wgsl.contains(&format!("fn {entry}(")), "WGSL lacks {entry}");
        }
    }
}
