//! The builder: buffers with headroom, the geometry tables, and the order of the passes.

use orrery_core::executor::{DeviceCount, Reserve, ViewMutOf, ViewOf, check_count, check_range, grown_capacity};
use orrery_core::gpu::{GpuExecutor, KernelSignature, LaunchConfig, Param, ParamKind, ScalarType};
use orrery_core::sfc::hilbert::DECODE_3D;
use orrery_core::{Error, Executor, Real, Result, Slice, Storage, View, ViewMut};

use super::kernels::{
    ITEM_THREADS, META_LEAVES, META_WORDS, VIEW, tv_boxes_f32, tv_boxes_f64, tv_chain_counts, tv_chains,
    tv_child_centric, tv_levels, tv_links, tv_nf, tv_nodes, tv_order, tv_particle_leaves, tv_ranges, tv_setup,
};
use crate::view::Geometry;

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// The float types of the GPU view's boxes: `f32` everywhere, `f64` where the device
/// does f64 arithmetic and the kernel language has the f64 kernel (CUDA; WGSL has no
/// f64, so wgpu builds of `f64` views are [`Error::Unsupported`]).
pub trait GpuViewReal: Real + Storage + sealed::Sealed {
    /// `Ok` where `exec` computes boxes of this type.
    ///
    /// # Errors
    /// [`Error::Unsupported`] otherwise.
    fn check_supported<E: GpuExecutor>(exec: &E) -> Result<()>;

    /// `tv_boxes_*` of this type (`tables`: levels, decode table, side exponents, meta;
    /// `scalars`: node bound, curve, levels).
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    fn boxes<'a, E: GpuExecutor>(
        exec: &E,
        config: &LaunchConfig<'a, E>,
        tables: [ViewOf<'a, E, u32>; 4],
        node_keys: ViewOf<'a, E, u64>,
        centres: ViewMutOf<'a, E, Self>,
        halves: ViewMutOf<'a, E, Self>,
        scalars: [u32; 3],
        mins: [Self; 3],
        units: [Self; 3],
    ) -> Result<()>;
}

impl GpuViewReal for f32 {
    fn check_supported<E: GpuExecutor>(_: &E) -> Result<()> {
        Ok(())
    }

    fn boxes<'a, E: GpuExecutor>(
        exec: &E,
        config: &LaunchConfig<'a, E>,
        [levels_in, table, side_log2, meta]: [ViewOf<'a, E, u32>; 4],
        node_keys: ViewOf<'a, E, u64>,
        centres: ViewMutOf<'a, E, Self>,
        halves: ViewMutOf<'a, E, Self>,
        [bound, curve, levels]: [u32; 3],
        [mx, my, mz]: [Self; 3],
        [ux, uy, uz]: [Self; 3],
    ) -> Result<()> {
        tv_boxes_f32(
            exec, config, node_keys, levels_in, table, side_log2, meta, centres, halves, bound, curve, levels, mx, my,
            mz, ux, uy, uz,
        )
    }
}

/// The declaration of `tv_boxes_f64` (as [`tv_boxes_f64`] declares it), probed to find
/// whether the executor's kernel language has it.
static F64_PROBE: KernelSignature = KernelSignature {
    entry: "tv_boxes_f64",
    params: &[
        Param { name: "node_keys", kind: ParamKind::Read { elem_bytes: 8 } },
        Param { name: "levels_in", kind: ParamKind::Read { elem_bytes: 4 } },
        Param { name: "table", kind: ParamKind::Read { elem_bytes: 4 } },
        Param { name: "side_log2", kind: ParamKind::Read { elem_bytes: 4 } },
        Param { name: "meta", kind: ParamKind::Read { elem_bytes: 4 } },
        Param { name: "centres", kind: ParamKind::Write { elem_bytes: 8 } },
        Param { name: "halves", kind: ParamKind::Write { elem_bytes: 8 } },
        Param { name: "node_bound", kind: ParamKind::Scalar(ScalarType::U32) },
        Param { name: "curve", kind: ParamKind::Scalar(ScalarType::U32) },
        Param { name: "levels", kind: ParamKind::Scalar(ScalarType::U32) },
        Param { name: "min_x", kind: ParamKind::Scalar(ScalarType::F64) },
        Param { name: "min_y", kind: ParamKind::Scalar(ScalarType::F64) },
        Param { name: "min_z", kind: ParamKind::Scalar(ScalarType::F64) },
        Param { name: "unit_x", kind: ParamKind::Scalar(ScalarType::F64) },
        Param { name: "unit_y", kind: ParamKind::Scalar(ScalarType::F64) },
        Param { name: "unit_z", kind: ParamKind::Scalar(ScalarType::F64) },
    ],
};

impl GpuViewReal for f64 {
    fn check_supported<E: GpuExecutor>(exec: &E) -> Result<()> {
        let unsupported = |reason: String| Error::Unsupported {
            executor: exec.name(),
            operation: "GPU TreeView".to_owned(),
            reason: format!("f64 boxes: {reason}; build an f32 view"),
        };
        if !exec.limits().f64 {
            return Err(unsupported("the device has no f64 arithmetic".to_owned()));
        }
        match exec.check_signature(&VIEW, &F64_PROBE) {
            Ok(()) => Ok(()),
            Err(Error::KernelSignature { reason, .. }) => {
                Err(unsupported(format!("this executor's kernels have no f64 boxes (WGSL has no f64): {reason}")))
            }
            Err(e) => Err(e),
        }
    }

    fn boxes<'a, E: GpuExecutor>(
        exec: &E,
        config: &LaunchConfig<'a, E>,
        [levels_in, table, side_log2, meta]: [ViewOf<'a, E, u32>; 4],
        node_keys: ViewOf<'a, E, u64>,
        centres: ViewMutOf<'a, E, Self>,
        halves: ViewMutOf<'a, E, Self>,
        [bound, curve, levels]: [u32; 3],
        [mx, my, mz]: [Self; 3],
        [ux, uy, uz]: [Self; 3],
    ) -> Result<()> {
        tv_boxes_f64(
            exec, config, node_keys, levels_in, table, side_log2, meta, centres, halves, bound, curve, levels, mx, my,
            mz, ux, uy, uz,
        )
    }
}

/// The leaf count of a build: a host value, or a device slot (a [`DeviceCount`] whose
/// bound is the leaf capacity), so that a tree update can chain the view without a host
/// read.
pub enum LeafCount<'a, E: Executor + ?Sized> {
    /// `L`, known on the host.
    Host(usize),
    /// `L` in a device slot, at most its bound.
    Device(DeviceCount<'a, E>),
}

impl<E: Executor + ?Sized> Clone for LeafCount<'_, E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E: Executor + ?Sized> Copy for LeafCount<'_, E> {}

impl<E: Executor + ?Sized> LeafCount<'_, E> {
    /// The host-side bound: `L` itself, or the device count's bound.
    pub fn bound(&self) -> usize {
        match self {
            LeafCount::Host(l) => *l,
            LeafCount::Device(count) => count.bound(),
        }
    }
}

/// The device-resident input of a GPU view build.
pub struct ViewInput<'a, E: Executor + ?Sized> {
    /// The leaf array `K` (its first `L + 1` keys are read; at least `bound + 1`
    /// elements).
    pub leaves: ViewOf<'a, E, u64>,
    /// `L`.
    pub leaf_count: LeafCount<'a, E>,
    /// The first sorted particle of every leaf, then the particle count
    /// ([`crate::counts::leaf_starts`]; at least `bound + 1` elements, `L + 1` read).
    pub leaf_starts: ViewOf<'a, E, u32>,
    /// An upper bound of the particle count `leaf_starts[L]` (e.g. the number of sorted
    /// keys): the particle-to-leaf map is sized by it.
    pub particle_bound: usize,
    /// Optional per-leaf NF values (at least `bound` elements, `L` read).
    pub nf: Option<ViewOf<'a, E, u64>>,
}

impl<E: Executor + ?Sized> Clone for ViewInput<'_, E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E: Executor + ?Sized> Copy for ViewInput<'_, E> {}

/// The host-side bounds of one build.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Bounds {
    /// Leaves.
    pub leaves: usize,
    /// Nodes: `leaves + (leaves - 1) / (2^b - 1)`.
    pub nodes: usize,
    /// Particles (at least 1).
    pub particles: usize,
    /// Level offsets: `levels + 2`.
    pub levels: usize,
}

impl Bounds {
    fn new(leaves: usize, particles: usize, geometry: &Geometry<impl Real>) -> Result<Self> {
        let layout = geometry.key_layout();
        if leaves == 0 {
            return Err(Error::InvalidArgument {
                what: "leaf count",
                reason: "the bound is 0: a leaf array has at least one leaf".into(),
            });
        }
        let nodes = leaves as u64 + (leaves as u64 - 1) / u64::from(layout.children() - 1);
        if nodes >= u64::from(u32::MAX) {
            return Err(Error::TooManyPoints { count: nodes as usize, max: u32::MAX as usize - 1, what: "tree nodes" });
        }
        check_count("particle bound", particles)?;
        Ok(Self { leaves, nodes: nodes as usize, particles: particles.max(1), levels: layout.levels() as usize + 2 })
    }
}

/// A buffer of `len` elements with 25% headroom.
fn alloc<E: Executor, T: Storage>(exec: &E, len: usize) -> Result<E::Buffer<T>> {
    let mut buf = exec.alloc::<T>(grown_capacity(len).max(len))?;
    exec.resize(&mut buf, len)?;
    Ok(buf)
}

/// Sets the length of `buf` to `len` when it differs (reallocating, with headroom, only
/// past the capacity).
fn fit<E: Executor, T: Storage>(exec: &E, buf: &mut E::Buffer<T>, len: usize) -> Result<()> {
    use orrery_core::DeviceBuffer as _;
    if buf.len() != len {
        exec.resize(buf, len)?;
    }
    Ok(())
}

macro_rules! device_arrays {
    ($( $(#[doc = $doc:literal])+ $name:ident: $ty:ty, )+) => {
        /// Every array of a view in device memory, each a buffer whose first entries (per
        /// the counts of [`super::ViewStatus`]) are the view's; the rest is capacity.
        pub struct DeviceTreeView<E: GpuExecutor, T: GpuViewReal> {
            $( $name: E::Buffer<$ty>, )+
            pub(crate) geometry: Geometry<T>,
            pub(crate) has_nf: bool,
        }

        impl<E: GpuExecutor, T: GpuViewReal> DeviceTreeView<E, T> {
            fn alloc(exec: &E, b: &Bounds, geometry: Geometry<T>) -> Result<Self> {
                Ok(Self { $( $name: alloc(exec, device_arrays!(@len $name, b))?, )+ geometry, has_nf: false })
            }

            fn fit(&mut self, exec: &E, b: &Bounds) -> Result<()> {
                $( fit(exec, &mut self.$name, device_arrays!(@len $name, b))?; )+
                Ok(())
            }

            $(
                $(#[doc = $doc])+
                pub fn $name(&self) -> &E::Buffer<$ty> {
                    &self.$name
                }
            )+
        }
    };
    (@len centres, $b:ident) => { 3 * $b.nodes };
    (@len half_extents, $b:ident) => { 3 * $b.nodes };
    (@len level_offsets, $b:ident) => { $b.levels };
    (@len parents_per_level, $b:ident) => { $b.levels - 1 };
    (@len leaf_nodes, $b:ident) => { $b.leaves };
    (@len particle_leaves, $b:ident) => { $b.particles };
    (@len meta, $b:ident) => { META_WORDS };
    (@len $other:ident, $b:ident) => { $b.nodes };
}

device_arrays! {
    /// Status words: live counts and error bits (read by [`DeviceTreeView::status`]).
    meta: u32,
    /// The sorted placeholder keys (`N` node keys, then `u64::MAX` padding): the level
    /// order every index refers to.
    placeholder_keys: u64,
    /// First key of each node's cell.
    keys: u64,
    /// Level of each node.
    levels: u32,
    /// Parent of each node ([`crate::view::NONE`] for the root).
    parents: u32,
    /// First child of each node ([`crate::view::NONE`] for leaves).
    first_children: u32,
    /// First leaf of each node.
    leaf_begins: u32,
    /// Leaves under each node.
    leaf_counts: u32,
    /// First sorted particle of each node.
    particle_begins: u32,
    /// Particles under each node.
    particle_counts: u32,
    /// Box centres, `[x, y, z]` per node.
    centres: T,
    /// Box half-extents, `[x, y, z]` per node.
    half_extents: T,
    /// NF value per node (meaningful when the build had NF values).
    nf: u64,
    /// First node of each level `0..=depth`, then `N` (`depth + 2` entries used).
    level_offsets: u32,
    /// Node of each leaf.
    leaf_nodes: u32,
    /// Leaf of each particle.
    particle_leaves: u32,
    /// Escape of each node.
    escapes: u32,
    /// DFS preorder position of each node.
    dfs_positions: u32,
    /// Node at each DFS position.
    dfs_order: u32,
    /// Internal nodes per level (`depth + 1` entries used).
    parents_per_level: u32,
    /// Child-centric position of each node.
    child_centric_positions: u32,
    /// Node at each child-centric position.
    child_centric_nodes: u32,
    /// Child-centric position of child 0, by child-centric position.
    child_indices: u32,
}

/// Scratch of a build: not part of the view.
struct Scratch<E: GpuExecutor, T: Real> {
    /// The host leaf count, for a [`LeafCount::Host`] build.
    count: E::Buffer<u32>,
    /// Chain length per leaf (`Lb`).
    chain_counts: E::Buffer<u32>,
    /// Their exclusive scan: the DFS position of each chain's head, `N` last (`Lb + 1`).
    chain_starts: E::Buffer<u32>,
    /// The leaf of each node: by DFS position, then (sorted) by level order (`Nb`).
    leaf_of: E::Buffer<u32>,
    table: E::Buffer<u32>,
    side_log2: E::Buffer<u32>,
    /// The geometry whose tables `table` and `side_log2` hold.
    geometry: Geometry<T>,
}

impl<E: GpuExecutor, T: Real> Scratch<E, T> {
    fn alloc(exec: &E, b: &Bounds, geometry: &Geometry<T>) -> Result<Self> {
        let t = tables(geometry);
        Ok(Self {
            count: alloc(exec, 1)?,
            chain_counts: alloc(exec, b.leaves)?,
            chain_starts: alloc(exec, b.leaves + 1)?,
            leaf_of: alloc(exec, b.nodes)?,
            table: exec.upload(&t.table)?,
            side_log2: exec.upload(&t.side_log2)?,
            geometry: *geometry,
        })
    }

    fn fit(&mut self, exec: &E, b: &Bounds, geometry: &Geometry<T>) -> Result<()> {
        fit(exec, &mut self.chain_counts, b.leaves)?;
        fit(exec, &mut self.chain_starts, b.leaves + 1)?;
        fit(exec, &mut self.leaf_of, b.nodes)?;
        if self.geometry != *geometry {
            let t = tables(geometry);
            fit(exec, &mut self.table, t.table.len())?;
            fit(exec, &mut self.side_log2, t.side_log2.len())?;
            exec.write(&mut self.table, 0, &t.table)?;
            exec.write(&mut self.side_log2, 0, &t.side_log2)?;
            self.geometry = *geometry;
        }
        Ok(())
    }
}

/// The geometry's scalars as the kernels take them: curve code (0 Morton, 1 Hilbert,
/// 2 binary), box minimum and unit per axis.
fn scalars<T: Real>(geometry: &Geometry<T>) -> (u32, [T; 3], [T; 3]) {
    let curve = match geometry {
        Geometry::Octree { curve: orrery_core::sfc::Curve::Morton, .. } => 0,
        Geometry::Octree { curve: orrery_core::sfc::Curve::Hilbert, .. } => 1,
        Geometry::Binary(_) => 2,
    };
    let m = geometry.bbox().min();
    (curve, [m.x, m.y, m.z], geometry.unit())
}

/// The geometry's tables: the decode table (Hilbert: `DECODE_3D`; binary: the split
/// axis of every level; Morton: unused) and the side exponents `coordinate_bits -
/// cell_bits(level)`, three per level `0..=levels`.
struct GeometryTables {
    table: Vec<u32>,
    side_log2: Vec<u32>,
}

fn tables<T: Real>(geometry: &Geometry<T>) -> GeometryTables {
    let table = match geometry {
        Geometry::Octree { curve: orrery_core::sfc::Curve::Morton, .. } => vec![0],
        Geometry::Octree { curve: orrery_core::sfc::Curve::Hilbert, .. } => {
            DECODE_3D.iter().map(|&e| u32::from(e)).collect()
        }
        Geometry::Binary(binary) => {
            let mut axes: Vec<u32> = binary.axes().iter().map(|&a| a as u32).collect();
            axes.push(0); // never empty
            axes
        }
    };
    let bits = geometry.coordinate_bits();
    let levels = geometry.key_layout().levels();
    let side_log2 = (0..=levels)
        .flat_map(|level| {
            let fixed = geometry.cell_bits(level).unwrap_or(bits);
            [0, 1, 2].map(|a| bits[a] - fixed[a])
        })
        .collect();
    GeometryTables { table, side_log2 }
}

/// The buffers of a builder: the view and the scratch.
type State<E, T> = (DeviceTreeView<E, T>, Scratch<E, T>);

/// Builds TreeViews on a [`GpuExecutor`] into buffers it keeps between builds (grown
/// with 25% headroom, never shrunk); see the [module documentation](super).
pub struct GpuTreeViewBuilder<E: GpuExecutor, T: GpuViewReal> {
    /// The view and the scratch, allocated by the first build or reservation.
    state: Option<State<E, T>>,
    reserved: Reserve,
}

impl<E: GpuExecutor, T: GpuViewReal> Default for GpuTreeViewBuilder<E, T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: GpuExecutor, T: GpuViewReal> GpuTreeViewBuilder<E, T> {
    /// A builder without buffers (the first build or [`Self::reserve`] allocates them).
    pub fn new() -> Self {
        Self { state: None, reserved: Reserve::default() }
    }

    /// Sizes every buffer, the executor's sort and scan scratch, and the geometry tables
    /// for builds of up to `leaves` leaves and `particles` particles in `geometry`, so
    /// that a later [`Self::build`] with these bounds and this geometry allocates and
    /// uploads nothing (as [`Executor::record`] requires; smaller bounds only shorten
    /// buffers, within their capacity).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a zero leaf bound, [`Error::TooManyPoints`] for
    /// `u32::MAX` nodes or more, [`Error::Unsupported`] for `T` on this executor
    /// ([`GpuViewReal::check_supported`]); allocation failures.
    pub fn reserve(&mut self, exec: &E, geometry: &Geometry<T>, leaves: usize, particles: usize) -> Result<()> {
        T::check_supported(exec)?;
        let bounds = Bounds::new(leaves, particles, geometry)?;
        self.prepare(exec, geometry, &bounds).map(|_| ())
    }

    fn prepare(&mut self, exec: &E, geometry: &Geometry<T>, bounds: &Bounds) -> Result<&mut State<E, T>> {
        let want = Reserve {
            sort_pairs: bounds.nodes.max(self.reserved.sort_pairs),
            scan: bounds.leaves.max(self.reserved.scan),
            ..Reserve::default()
        };
        if want != self.reserved {
            exec.reserve(&want)?;
            self.reserved = want;
        }
        let state = match self.state.take() {
            Some((mut view, mut scratch)) => {
                view.fit(exec, bounds)?;
                scratch.fit(exec, bounds, geometry)?;
                view.geometry = *geometry;
                (view, scratch)
            }
            None => (DeviceTreeView::alloc(exec, bounds, *geometry)?, Scratch::alloc(exec, bounds, geometry)?),
        };
        Ok(self.state.insert(state))
    }

    /// Enqueues the build of the view of `input` in `geometry` (whose key layout the
    /// leaves must have) and returns the device arrays. Nothing is read back: with a
    /// [`LeafCount::Device`] the whole build runs without a host round trip; every
    /// launch is sized for the bounds and the live counts stay on the device.
    /// [`DeviceTreeView::status`] reads them (and the input errors found on the
    /// device), [`DeviceTreeView::download`] the view.
    ///
    /// # Errors
    /// As [`Self::reserve`]; [`Error::LengthMismatch`] for input views shorter than the
    /// bounds need; launch failures.
    pub fn build(
        &mut self,
        exec: &E,
        geometry: &Geometry<T>,
        input: &ViewInput<'_, E>,
    ) -> Result<&DeviceTreeView<E, T>> {
        T::check_supported(exec)?;
        let lb = input.leaf_count.bound();
        let bounds = Bounds::new(lb, input.particle_bound, geometry)?;
        check_range("leaf keys", input.leaves.len(), 0, lb + 1)?;
        check_range("leaf first particles", input.leaf_starts.len(), 0, lb + 1)?;
        if let Some(nf) = input.nf {
            check_range("NF values", nf.len(), 0, lb)?;
        }
        let (view, scratch) = self.prepare(exec, geometry, &bounds)?;
        view.has_nf = input.nf.is_some();
        enqueue(exec, view, scratch, geometry, input, &bounds)?;
        Ok(&*view)
    }
}

#[allow(clippy::too_many_lines)] // the passes in order, one call each
fn enqueue<E: GpuExecutor, T: GpuViewReal>(
    exec: &E,
    v: &mut DeviceTreeView<E, T>,
    s: &mut Scratch<E, T>,
    geometry: &Geometry<T>,
    input: &ViewInput<'_, E>,
    b: &Bounds,
) -> Result<()> {
    let layout = geometry.key_layout();
    let (bits, levels) = (layout.bits_per_level(), layout.levels());
    let (lb, nb, pb) = (b.leaves as u32, b.nodes as u32, b.particles as u32);
    let per = |items: usize| LaunchConfig::<E>::per_item(items, ITEM_THREADS);
    let one = LaunchConfig::<E>::blocks(1, ITEM_THREADS);

    let count: ViewOf<'_, E, u32> = match input.leaf_count {
        LeafCount::Host(l) => {
            let l = u32::try_from(l).map_err(|_| Error::TooManyPoints {
                count: l,
                max: u32::MAX as usize,
                what: "leaves",
            })?;
            exec.fill(ViewMut::of(&mut s.count), l)?;
            View::of(&s.count)
        }
        LeafCount::Device(c) => c.slot(),
    };
    tv_setup(exec, &one, count, input.leaf_starts, &mut v.meta, lb, input.particle_bound as u32)?;
    // DFS order: the chains of the leaves in turn (their starts by one scan) ...
    tv_chain_counts(
        exec,
        &per(b.leaves),
        input.leaves,
        input.leaf_starts,
        &mut v.meta,
        &mut s.chain_counts,
        lb,
        bits,
        levels,
    )?;
    {
        let live = DeviceCount::new(v.meta.slice(META_LEAVES..META_LEAVES + 1)?, b.leaves)?;
        exec.exclusive_scan_counted(&s.chain_counts, live, &mut s.chain_starts)?;
    }
    tv_chains(
        exec,
        &per(b.nodes),
        input.leaves,
        &s.chain_starts,
        &mut v.meta,
        &mut v.placeholder_keys,
        &mut s.leaf_of,
        nb,
        bits,
        levels,
    )?;
    // ... and level order: DFS order stably sorted by level (levels < 2^8, padding last).
    exec.sort_pairs(&mut v.placeholder_keys, &mut s.leaf_of, 0..8)?;
    tv_order(
        exec,
        &per(b.nodes),
        &mut v.placeholder_keys,
        &s.leaf_of,
        input.leaves,
        &s.chain_starts,
        &v.meta,
        &mut v.dfs_positions,
        &mut v.dfs_order,
        &mut v.levels,
        &mut v.keys,
        nb,
        bits,
        levels,
    )?;
    tv_nodes(
        exec,
        &per(b.nodes),
        &s.leaf_of,
        input.leaves,
        &v.dfs_positions,
        &v.dfs_order,
        &v.levels,
        &v.meta,
        &mut v.first_children,
        &mut v.leaf_begins,
        &mut v.leaf_counts,
        nb,
        bits,
        levels,
    )?;
    exec.fill(ViewMut::of(&mut v.parents), crate::view::NONE)?;
    tv_links(
        exec,
        &per(b.nodes),
        &s.chain_starts,
        &v.dfs_order,
        &v.leaf_begins,
        &v.leaf_counts,
        &v.first_children,
        &v.meta,
        &mut v.parents,
        &mut v.escapes,
        nb,
        bits,
    )?;
    tv_ranges(
        exec,
        &per(b.nodes),
        input.leaf_starts,
        &v.leaf_begins,
        &v.leaf_counts,
        &v.meta,
        &mut v.particle_begins,
        &mut v.particle_counts,
        &mut v.leaf_nodes,
        nb,
    )?;
    tv_levels(
        exec,
        &per(b.levels),
        &v.placeholder_keys,
        &mut v.meta,
        &mut v.level_offsets,
        &mut v.parents_per_level,
        bits,
        levels,
    )?;
    tv_child_centric(
        exec,
        &per(b.nodes),
        &v.levels,
        &v.first_children,
        &v.level_offsets,
        &v.parents_per_level,
        &v.meta,
        &mut v.child_centric_positions,
        &mut v.child_centric_nodes,
        &mut v.child_indices,
        nb,
        bits,
        levels,
    )?;
    if let Some(nf) = input.nf {
        tv_nf(exec, &per(b.nodes), nf, &v.leaf_begins, &v.leaf_counts, &mut v.meta, &mut v.nf, nb)?;
    }
    tv_particle_leaves(exec, &per(b.leaves), input.leaf_starts, &v.meta, &mut v.particle_leaves, lb, pb)?;
    let (curve, min, unit) = scalars(geometry);
    T::boxes(
        exec,
        &per(b.nodes),
        [View::of(&v.levels), View::of(&s.table), View::of(&s.side_log2), View::of(&v.meta)],
        View::of(&v.keys),
        ViewMut::of(&mut v.centres),
        ViewMut::of(&mut v.half_extents),
        [nb, curve, levels],
        min,
        unit,
    )
}
