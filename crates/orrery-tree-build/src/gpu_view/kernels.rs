//! The kernel module of the GPU TreeView, its typed launchers and the launch constants
//! the host shares with it: module `tree/view` (`kernels/tree/view.cu`,
//! `shaders/tree/view.wgsl`), one entry point per step of [`crate::view::steps`]. Both
//! languages define the same entry points with the same arguments (buffers first, then
//! scalars; see [`orrery_core::gpu`]); `tv_boxes_f64` exists in CUDA only.

use orrery_core::KernelSource;

/// The module: `view.cu` (self-contained); `core/common` + `view.wgsl`.
pub const VIEW: KernelSource =
    KernelSource::new("tree/view", orrery_kernels::tree_view::VIEW, orrery_shaders::tree_view::VIEW);

/// Every module the view launches (for ahead-of-time compile checks).
pub const MODULES: [KernelSource; 1] = [VIEW];

/// Entry points in both languages.
pub const ENTRIES: [&str; 13] = [
    "tv_setup",
    "tv_chain_counts",
    "tv_chains",
    "tv_order",
    "tv_nodes",
    "tv_links",
    "tv_ranges",
    "tv_levels",
    "tv_child_centric",
    "tv_nf",
    "tv_particle_leaves",
    "tv_boxes_f32",
    "tv_boxes_f64",
];

/// Threads per block of every kernel (any multiple of 32 works).
pub(crate) const ITEM_THREADS: u32 = 256;

/// Words of the status block (`meta` in the kernels).
pub(crate) const META_WORDS: usize = 8;
/// `meta` word: live leaves `L`.
pub(crate) const META_LEAVES: usize = 0;
/// `meta` word: `L - 1` (written by `tv_setup`; read by no kernel since the view stopped
/// compacting boundaries, kept so the status block's layout is unchanged).
#[cfg_attr(not(test), allow(dead_code, reason = "a word of the status block, checked against the sources in tests"))]
pub(crate) const META_BOUNDARIES: usize = 1;
/// `meta` word: internal nodes.
pub(crate) const META_INTERNAL: usize = 2;
/// `meta` word: nodes `N`.
pub(crate) const META_NODES: usize = 3;
/// `meta` word: particles `lfp[L]`.
pub(crate) const META_PARTICLES: usize = 4;
/// `meta` word: the deepest level.
pub(crate) const META_DEPTH: usize = 5;
/// `meta` word: the error bits (`ERR_*`).
pub(crate) const META_ERRORS: usize = 6;

/// Error bit: the device leaf count is 0.
pub(crate) const ERR_NO_LEAVES: u32 = 1;
/// Error bit: the device leaf count exceeds its bound.
pub(crate) const ERR_LEAF_BOUND: u32 = 2;
/// Error bit: the internal-node count is not `(L - 1) / (2^b - 1)` (an invalid leaf array).
pub(crate) const ERR_INTERNAL_COUNT: u32 = 4;
/// Error bit: `lfp[0] != 0`.
pub(crate) const ERR_STARTS_ORIGIN: u32 = 8;
/// Error bit: the leaf starts decrease.
pub(crate) const ERR_STARTS_DECREASE: u32 = 16;
/// Error bit: `lfp[L]` exceeds the particle bound.
pub(crate) const ERR_PARTICLE_BOUND: u32 = 32;
/// Error bit: an NF value equals [`crate::view::NF_INTERNAL`].
pub(crate) const ERR_NF_SENTINEL: u32 = 64;

orrery_core::kernels! {
    module = VIEW;
    /// The live counts and input error bits into `meta` (one thread).
    pub(crate) fn tv_setup(read count: u32, read lfp: u32, write meta: u32, scalar leaf_bound: u32, scalar particle_bound: u32);
    /// Per leaf: the length of its chain (the nodes that start at its key); checks the
    /// leaf starts.
    pub(crate) fn tv_chain_counts(
        read keys: u64, read lfp: u32, write meta: u32, write counts: u32,
        scalar leaf_bound: u32, scalar bits_per_level: u32, scalar levels: u32,
    );
    /// Per node slot: the chains' levels (sort keys) and leaves at their DFS positions,
    /// padding past `N`; the node count and the internal-node check.
    pub(crate) fn tv_chains(
        read keys: u64, read chain_starts: u32, write meta: u32, write level_keys: u64, write leaf_of: u32,
        scalar node_bound: u32, scalar bits_per_level: u32, scalar levels: u32,
    );
    /// Per node (level order): DFS position and its inverse, level, key, placeholder key
    /// (over the sorted level keys in `pkeys`).
    pub(crate) fn tv_order(
        write pkeys: u64, read leaf_of: u32, read keys: u64, read chain_starts: u32, read meta: u32,
        write dfs_positions: u32, write dfs_order: u32, write levels_out: u32, write node_keys: u64,
        scalar node_bound: u32, scalar bits_per_level: u32, scalar levels: u32,
    );
    /// Per node: leaf range and first child.
    pub(crate) fn tv_nodes(
        read leaf_of: u32, read keys: u64, read dfs_positions: u32, read dfs_order: u32, read levels_in: u32,
        read meta: u32, write first_children: u32, write leaf_begins: u32, write leaf_counts: u32,
        scalar node_bound: u32, scalar bits_per_level: u32, scalar levels: u32,
    );
    /// Per node: its children's parent (over `parents` filled with `NONE`) and escape.
    pub(crate) fn tv_links(
        read chain_starts: u32, read dfs_order: u32, read leaf_begins: u32, read leaf_counts: u32,
        read first_children: u32, read meta: u32, write parents: u32, write escapes: u32,
        scalar node_bound: u32, scalar bits_per_level: u32,
    );
    /// Per node: particle range and the leaf-to-node scatter.
    pub(crate) fn tv_ranges(
        read lfp: u32, read leaf_begins: u32, read leaf_counts: u32, read meta: u32,
        write particle_begins: u32, write particle_counts: u32, write leaf_nodes: u32,
        scalar node_bound: u32,
    );
    /// Per level: offsets, parents per level, depth.
    pub(crate) fn tv_levels(
        read pkeys: u64, write meta: u32, write level_offsets: u32, write parents_per_level: u32,
        scalar bits_per_level: u32, scalar levels: u32,
    );
    /// Per node: child-centric position, its inverse and the child indices.
    pub(crate) fn tv_child_centric(
        read levels_in: u32, read first_children: u32, read level_offsets: u32, read parents_per_level: u32,
        read meta: u32, write positions: u32, write nodes_at: u32, write child_indices: u32,
        scalar node_bound: u32, scalar bits_per_level: u32, scalar levels: u32,
    );
    /// Per node: NF value (leaves) or `NF_INTERNAL`.
    pub(crate) fn tv_nf(
        read nf: u64, read leaf_begins: u32, read leaf_counts: u32, write meta: u32, write node_nf: u64,
        scalar node_bound: u32,
    );
    /// Per chunk of 256 leaves (a block of [`ITEM_THREADS`] leaves): the leaf of each of
    /// their particles.
    pub(crate) fn tv_particle_leaves(
        read lfp: u32, read meta: u32, write particle_leaves: u32, scalar leaf_bound: u32, scalar particle_bound: u32,
    );
    /// Per node: f32 box.
    pub(crate) fn tv_boxes_f32(
        read node_keys: u64, read levels_in: u32, read table: u32, read side_log2: u32, read meta: u32,
        write centres: f32, write halves: f32,
        scalar node_bound: u32, scalar curve: u32, scalar levels: u32,
        scalar min_x: f32, scalar min_y: f32, scalar min_z: f32,
        scalar unit_x: f32, scalar unit_y: f32, scalar unit_z: f32,
    );
    /// Per node: f64 box (CUDA only).
    pub(crate) fn tv_boxes_f64(
        read node_keys: u64, read levels_in: u32, read table: u32, read side_log2: u32, read meta: u32,
        write centres: f64, write halves: f64,
        scalar node_bound: u32, scalar curve: u32, scalar levels: u32,
        scalar min_x: f64, scalar min_y: f64, scalar min_z: f64,
        scalar unit_x: f64, scalar unit_y: f64, scalar unit_z: f64,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The host's constants are the sources' and every entry exists in both languages
    /// (`tv_boxes_f64` in CUDA only).
    #[test]
    fn constants_and_entries_match_the_sources() {
        assert!(VIEW.cuda.contains(&format!("#define TV_ITEM_THREADS {ITEM_THREADS}u")));
        for (name, word) in [
            ("LEAVES", META_LEAVES),
            ("BOUNDARIES", META_BOUNDARIES),
            ("INTERNAL", META_INTERNAL),
            ("NODES", META_NODES),
            ("PARTICLES", META_PARTICLES),
            ("DEPTH", META_DEPTH),
            ("ERRORS", META_ERRORS),
        ] {
            assert!(VIEW.cuda.contains(&format!("#define TV_META_{name} {word}\n")), "{name}");
            assert!(VIEW.wgsl.contains(&format!("const META_{name}: u32 = {word}u;")), "{name}");
        }
        for (name, bit) in [
            ("NO_LEAVES", ERR_NO_LEAVES),
            ("LEAF_BOUND", ERR_LEAF_BOUND),
            ("INTERNAL_COUNT", ERR_INTERNAL_COUNT),
            ("STARTS_ORIGIN", ERR_STARTS_ORIGIN),
            ("STARTS_DECREASE", ERR_STARTS_DECREASE),
            ("PARTICLE_BOUND", ERR_PARTICLE_BOUND),
            ("NF_SENTINEL", ERR_NF_SENTINEL),
        ] {
            assert!(VIEW.cuda.contains(&format!("#define TV_ERR_{name} {bit}u")), "{name}");
            assert!(VIEW.wgsl.contains(&format!("const ERR_{name}: u32 = {bit}u;")), "{name}");
        }
        for entry in ENTRIES {
            assert!(orrery_core::gpu::cuda_params(VIEW.cuda, entry).is_some(), "CUDA lacks {entry}");
            assert_eq!(VIEW.wgsl.contains(&format!("fn {entry}(")), entry != "tv_boxes_f64", "WGSL and {entry}");
        }
    }
}
