//! The orchestration of the GPU build, written once for every [`GpuExecutor`]: the
//! builder, its buffers and the order of the passes. The passes themselves launch typed
//! kernels: [`super::levels`] (bounds, split dimensions, the sorts of
//! [`Strategy::LevelSort`] / [`Strategy::Hybrid`]), [`super::select`] (the selection rounds
//! and partition of [`Strategy::Select`]) and [`super::local`] (the local phase, whose
//! shape comes from [`orrery_core::DeviceLimits`]).

use std::any::Any;

use orrery_core::executor::{ViewMutOf, ViewOf};
use orrery_core::gpu::{GpuExecutor, LaunchConfig};
use orrery_core::{DeviceBuffer, Error, Executor, ExecutorKind, Real, Result, Storage};

use super::local::{self, LocalShape};
use super::plan::Plan;
use super::{levels, select};
use crate::input::{Batches, check_dim};
use crate::layout::TreeLayout;
use crate::tree::BallTree;

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// A coordinate type of the GPU build: `f32` on every executor, `f64` where the
/// executor does f64 arithmetic ([`orrery_core::DeviceLimits::f64`]) and its kernel
/// language has the build's f64 kernels (CUDA: WGSL has none); elsewhere the build
/// returns [`Error::Unsupported`].
///
/// The methods are the typed launches of the kernels that differ by coordinate type
/// (`bt_*_f32` / `bt_*_f64`); they are implementation details of the build.
#[allow(clippy::too_many_arguments)] // one argument per kernel parameter
pub trait GpuReal: Real + Storage + sealed::Sealed {
    /// The order-preserving code of a coordinate (`u32` for f32, `u64` for f64).
    #[doc(hidden)]
    type Ord: Storage;

    /// `Ok` where `exec` runs the build for this type, [`Error::Unsupported`] otherwise.
    #[doc(hidden)]
    fn check_supported<E: GpuExecutor>(exec: &E) -> Result<()>;

    /// `bt_reset_bounds` for bounds of this type.
    #[doc(hidden)]
    fn reset_bounds<'a, E: GpuExecutor>(
        exec: &E,
        c: &LaunchConfig<'a, E>,
        lo: ViewMutOf<'a, E, Self::Ord>,
        hi: ViewMutOf<'a, E, Self::Ord>,
        count: u32,
    ) -> Result<()>;

    /// `bt_bounds_*`.
    #[doc(hidden)]
    fn bounds<'a, E: GpuExecutor>(
        exec: &E,
        c: &LaunchConfig<'a, E>,
        points: ViewOf<'a, E, Self>,
        seg_starts: ViewOf<'a, E, u32>,
        seg_active: ViewOf<'a, E, u32>,
        perm: ViewOf<'a, E, u32>,
        node_of: ViewMutOf<'a, E, u32>,
        lo: ViewMutOf<'a, E, Self::Ord>,
        hi: ViewMutOf<'a, E, Self::Ord>,
        s: [u32; 4],
    ) -> Result<()>;

    /// `bt_sbounds_*`.
    #[doc(hidden)]
    fn sbounds<'a, E: GpuExecutor>(
        exec: &E,
        c: &LaunchConfig<'a, E>,
        coords_t: ViewOf<'a, E, Self>,
        seg_starts: ViewOf<'a, E, u32>,
        seg_active: ViewOf<'a, E, u32>,
        lo: ViewMutOf<'a, E, Self::Ord>,
        hi: ViewMutOf<'a, E, Self::Ord>,
        s: [u32; 4],
    ) -> Result<()>;

    /// `bt_choose_*`.
    #[doc(hidden)]
    fn choose<'a, E: GpuExecutor>(
        exec: &E,
        c: &LaunchConfig<'a, E>,
        lo: ViewOf<'a, E, Self::Ord>,
        hi: ViewOf<'a, E, Self::Ord>,
        seg_active: ViewOf<'a, E, u32>,
        seg_dim: ViewMutOf<'a, E, u32>,
        s: [u32; 3],
    ) -> Result<()>;

    /// `bt_keys_*`.
    #[doc(hidden)]
    fn keys<'a, E: GpuExecutor>(
        exec: &E,
        c: &LaunchConfig<'a, E>,
        points: ViewOf<'a, E, Self>,
        node_of: ViewOf<'a, E, u32>,
        seg_dim: ViewOf<'a, E, u32>,
        keys: ViewMutOf<'a, E, u64>,
        vals: ViewMutOf<'a, E, u32>,
        s: [u32; 2],
    ) -> Result<()>;

    /// `bt_transpose_*`.
    #[doc(hidden)]
    fn transpose<'a, E: GpuExecutor>(
        exec: &E,
        c: &LaunchConfig<'a, E>,
        points: ViewOf<'a, E, Self>,
        coords_t: ViewMutOf<'a, E, Self>,
        s: [u32; 2],
    ) -> Result<()>;

    /// `bt_select_count_*`.
    #[doc(hidden)]
    fn select_count<'a, E: GpuExecutor>(
        exec: &E,
        c: &LaunchConfig<'a, E>,
        coords_t: ViewOf<'a, E, Self>,
        perm: ViewOf<'a, E, u32>,
        seg_starts: ViewOf<'a, E, u32>,
        seg_active: ViewOf<'a, E, u32>,
        seg_dim: ViewOf<'a, E, u32>,
        state: ViewOf<'a, E, u32>,
        hist: ViewMutOf<'a, E, u32>,
        pending: ViewOf<'a, E, u32>,
        s: [u32; 6],
    ) -> Result<()>;

    /// `bt_select_find_*`.
    #[doc(hidden)]
    fn select_find<'a, E: GpuExecutor>(
        exec: &E,
        c: &LaunchConfig<'a, E>,
        seg_active: ViewOf<'a, E, u32>,
        state: ViewMutOf<'a, E, u32>,
        hist: ViewMutOf<'a, E, u32>,
        pending: ViewMutOf<'a, E, u32>,
        s: [u32; 5],
    ) -> Result<()>;

    /// `bt_select_flags_*`.
    #[doc(hidden)]
    fn select_flags<'a, E: GpuExecutor>(
        exec: &E,
        c: &LaunchConfig<'a, E>,
        coords_t: ViewOf<'a, E, Self>,
        perm: ViewOf<'a, E, u32>,
        seg_starts: ViewOf<'a, E, u32>,
        seg_active: ViewOf<'a, E, u32>,
        seg_dim: ViewOf<'a, E, u32>,
        state: ViewOf<'a, E, u32>,
        flags: ViewMutOf<'a, E, u32>,
        s: [u32; 3],
    ) -> Result<()>;

    /// `bt_select_scatter_*`.
    #[doc(hidden)]
    fn select_scatter<'a, E: GpuExecutor>(
        exec: &E,
        c: &LaunchConfig<'a, E>,
        coords_t: ViewOf<'a, E, Self>,
        perm: ViewOf<'a, E, u32>,
        seg_starts: ViewOf<'a, E, u32>,
        seg_active: ViewOf<'a, E, u32>,
        scan: ViewOf<'a, E, u32>,
        coords_out: ViewMutOf<'a, E, Self>,
        perm_out: ViewMutOf<'a, E, u32>,
        s: [u32; 4],
    ) -> Result<()>;

    /// `bt_local_*` of the module compiled for `capacity` slots; `ordered` selects the
    /// Select strategy's entry (`bt_local_ordered_f32`; f64 has one entry).
    #[doc(hidden)]
    fn local<'a, E: GpuExecutor>(
        exec: &E,
        c: &LaunchConfig<'a, E>,
        capacity: u32,
        ordered: bool,
        points: ViewOf<'a, E, Self>,
        perm: ViewOf<'a, E, u32>,
        nodes: ViewOf<'a, E, u32>,
        blocks: ViewOf<'a, E, u32>,
        staged: ViewMutOf<'a, E, Self>,
        out_idx: ViewMutOf<'a, E, u32>,
        out_mask: ViewMutOf<'a, E, u32>,
        s: [u32; 2],
    ) -> Result<()>;
}

/// Implements [`GpuReal`] by forwarding every method to the typed launchers with the
/// type's suffix.
macro_rules! gpu_real {
    (
        $t:ty, $ord:ty, check = $check:path,
        reset = $reset:path, bounds = $bounds:path, sbounds = $sbounds:path, choose = $choose:path,
        keys = $keys:path, transpose = $transpose:path, count = $count:path, find = $find:path,
        flags = $flags:path, scatter = $scatter:path, local = $local:path $(,)?
    ) => {
        impl GpuReal for $t {
            type Ord = $ord;

            fn check_supported<E: GpuExecutor>(exec: &E) -> Result<()> {
                $check(exec)
            }

            fn reset_bounds<'a, E: GpuExecutor>(
                exec: &E,
                c: &LaunchConfig<'a, E>,
                lo: ViewMutOf<'a, E, $ord>,
                hi: ViewMutOf<'a, E, $ord>,
                count: u32,
            ) -> Result<()> {
                $reset(exec, c, lo, hi, count)
            }

            fn bounds<'a, E: GpuExecutor>(
                exec: &E,
                c: &LaunchConfig<'a, E>,
                points: ViewOf<'a, E, $t>,
                seg_starts: ViewOf<'a, E, u32>,
                seg_active: ViewOf<'a, E, u32>,
                perm: ViewOf<'a, E, u32>,
                node_of: ViewMutOf<'a, E, u32>,
                lo: ViewMutOf<'a, E, $ord>,
                hi: ViewMutOf<'a, E, $ord>,
                [n, dim, off, segs]: [u32; 4],
            ) -> Result<()> {
                $bounds(exec, c, points, seg_starts, seg_active, perm, node_of, lo, hi, n, dim, off, segs)
            }

            fn sbounds<'a, E: GpuExecutor>(
                exec: &E,
                c: &LaunchConfig<'a, E>,
                coords_t: ViewOf<'a, E, $t>,
                seg_starts: ViewOf<'a, E, u32>,
                seg_active: ViewOf<'a, E, u32>,
                lo: ViewMutOf<'a, E, $ord>,
                hi: ViewMutOf<'a, E, $ord>,
                [n, dim, off, segs]: [u32; 4],
            ) -> Result<()> {
                $sbounds(exec, c, coords_t, seg_starts, seg_active, lo, hi, n, dim, off, segs)
            }

            fn choose<'a, E: GpuExecutor>(
                exec: &E,
                c: &LaunchConfig<'a, E>,
                lo: ViewOf<'a, E, $ord>,
                hi: ViewOf<'a, E, $ord>,
                seg_active: ViewOf<'a, E, u32>,
                seg_dim: ViewMutOf<'a, E, u32>,
                [segs, dim, off]: [u32; 3],
            ) -> Result<()> {
                $choose(exec, c, lo, hi, seg_active, seg_dim, segs, dim, off)
            }

            fn keys<'a, E: GpuExecutor>(
                exec: &E,
                c: &LaunchConfig<'a, E>,
                points: ViewOf<'a, E, $t>,
                node_of: ViewOf<'a, E, u32>,
                seg_dim: ViewOf<'a, E, u32>,
                keys: ViewMutOf<'a, E, u64>,
                vals: ViewMutOf<'a, E, u32>,
                [n, dim]: [u32; 2],
            ) -> Result<()> {
                $keys(exec, c, points, node_of, seg_dim, keys, vals, n, dim)
            }

            fn transpose<'a, E: GpuExecutor>(
                exec: &E,
                c: &LaunchConfig<'a, E>,
                points: ViewOf<'a, E, $t>,
                coords_t: ViewMutOf<'a, E, $t>,
                [n, dim]: [u32; 2],
            ) -> Result<()> {
                $transpose(exec, c, points, coords_t, n, dim)
            }

            fn select_count<'a, E: GpuExecutor>(
                exec: &E,
                c: &LaunchConfig<'a, E>,
                coords_t: ViewOf<'a, E, $t>,
                perm: ViewOf<'a, E, u32>,
                seg_starts: ViewOf<'a, E, u32>,
                seg_active: ViewOf<'a, E, u32>,
                seg_dim: ViewOf<'a, E, u32>,
                state: ViewOf<'a, E, u32>,
                hist: ViewMutOf<'a, E, u32>,
                pending: ViewOf<'a, E, u32>,
                [n, off, segs, part, shift, width]: [u32; 6],
            ) -> Result<()> {
                $count(
                    exec, c, coords_t, perm, seg_starts, seg_active, seg_dim, state, hist, pending, n, off, segs, part,
                    shift, width,
                )
            }

            fn select_find<'a, E: GpuExecutor>(
                exec: &E,
                c: &LaunchConfig<'a, E>,
                seg_active: ViewOf<'a, E, u32>,
                state: ViewMutOf<'a, E, u32>,
                hist: ViewMutOf<'a, E, u32>,
                pending: ViewMutOf<'a, E, u32>,
                [off, segs, part, shift, width]: [u32; 5],
            ) -> Result<()> {
                $find(exec, c, seg_active, state, hist, pending, off, segs, part, shift, width)
            }

            fn select_flags<'a, E: GpuExecutor>(
                exec: &E,
                c: &LaunchConfig<'a, E>,
                coords_t: ViewOf<'a, E, $t>,
                perm: ViewOf<'a, E, u32>,
                seg_starts: ViewOf<'a, E, u32>,
                seg_active: ViewOf<'a, E, u32>,
                seg_dim: ViewOf<'a, E, u32>,
                state: ViewOf<'a, E, u32>,
                flags: ViewMutOf<'a, E, u32>,
                [n, off, segs]: [u32; 3],
            ) -> Result<()> {
                $flags(exec, c, coords_t, perm, seg_starts, seg_active, seg_dim, state, flags, n, off, segs)
            }

            fn select_scatter<'a, E: GpuExecutor>(
                exec: &E,
                c: &LaunchConfig<'a, E>,
                coords_t: ViewOf<'a, E, $t>,
                perm: ViewOf<'a, E, u32>,
                seg_starts: ViewOf<'a, E, u32>,
                seg_active: ViewOf<'a, E, u32>,
                scan: ViewOf<'a, E, u32>,
                coords_out: ViewMutOf<'a, E, $t>,
                perm_out: ViewMutOf<'a, E, u32>,
                [n, dim, off, segs]: [u32; 4],
            ) -> Result<()> {
                $scatter(exec, c, coords_t, perm, seg_starts, seg_active, scan, coords_out, perm_out, n, dim, off, segs)
            }

            fn local<'a, E: GpuExecutor>(
                exec: &E,
                c: &LaunchConfig<'a, E>,
                capacity: u32,
                ordered: bool,
                points: ViewOf<'a, E, $t>,
                perm: ViewOf<'a, E, u32>,
                nodes: ViewOf<'a, E, u32>,
                blocks: ViewOf<'a, E, u32>,
                staged: ViewMutOf<'a, E, $t>,
                out_idx: ViewMutOf<'a, E, u32>,
                out_mask: ViewMutOf<'a, E, u32>,
                s: [u32; 2],
            ) -> Result<()> {
                $local(exec, c, capacity, ordered, points, perm, nodes, blocks, staged, out_idx, out_mask, s)
            }
        }
    };
}

gpu_real!(
    f32,
    u32,
    check = supported_everywhere,
    reset = levels::bt_reset_bounds,
    bounds = levels::bt_bounds_f32,
    sbounds = levels::bt_sbounds_f32,
    choose = levels::bt_choose_f32,
    keys = levels::bt_keys_f32,
    transpose = select::bt_transpose_f32,
    count = select::bt_select_count_f32,
    find = select::bt_select_find_f32,
    flags = select::bt_select_flags_f32,
    scatter = select::bt_select_scatter_f32,
    local = local::launch_f32,
);

gpu_real!(
    f64,
    u64,
    check = levels::check_f64_supported,
    reset = levels::bt_reset_bounds_u64,
    bounds = levels::bt_bounds_f64,
    sbounds = levels::bt_sbounds_f64,
    choose = levels::bt_choose_f64,
    keys = levels::bt_keys_f64,
    transpose = select::bt_transpose_f64,
    count = select::bt_select_count_f64,
    find = select::bt_select_find_f64,
    flags = select::bt_select_flags_f64,
    scatter = select::bt_select_scatter_f64,
    local = local::launch_f64,
);

#[allow(clippy::unnecessary_wraps)] // the signature of GpuReal::check_supported
fn supported_everywhere<E: GpuExecutor>(_: &E) -> Result<()> {
    Ok(())
}

/// How the GPU build splits the levels between global sorts and the local phase. Both
/// give the same tree, bit for bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Strategy {
    /// The baseline: one stable sort of all points per level, down to the leaves; the
    /// local phase only writes the leaves. `L + 1` sorts for a batch of depth `L`.
    LevelSort,
    /// Global sorts only while a node has more slots than a block holds (2048 where the
    /// device runs blocks of 512 threads with the local phase's shared arrays, else 1024:
    /// see [`orrery_core::DeviceLimits`]); then one block per subtree finishes its
    /// remaining levels in shared memory. `L + 1 - log2(block slots)` sorts.
    Hybrid,
    /// The levels of [`Strategy::Hybrid`], but each global level selects every node's
    /// median by a segmented radix selection and partitions stably instead of sorting
    /// all points, with the coordinates carried along in position order (coalesced
    /// reads). On every executor (f64 where [`GpuReal`] allows it, as for the other
    /// strategies); the default: the fastest on CUDA and wgpu
    /// (`docs/performance/balltree.md`).
    #[default]
    Select,
}

impl Strategy {
    /// The fastest strategy on `kind`: [`Strategy::Select`] on CUDA and wgpu (measured
    /// on the H200: `docs/performance/balltree.md`); a future executor may differ.
    ///
    /// This is a table of measured defaults by executor kind, and the only place the
    /// build looks at the kind: it picks a default and nothing else. What the build can
    /// run (the local phase's shape, f64) is decided from [`orrery_core::DeviceLimits`]
    /// and the kernel modules, never from the kind.
    pub fn fastest_for(kind: ExecutorKind) -> Self {
        match kind {
            ExecutorKind::Cuda | ExecutorKind::Wgpu => Strategy::Select,
            // No GPU build runs on the CPU executor; the default for completeness.
            ExecutorKind::Cpu => Strategy::default(),
        }
    }
}

/// A ball tree in device memory: the slot indices and mask of [`BallTree`], as `u32`
/// buffers (`mask` is 1 for a real point, 0 for a padding duplicate).
pub struct DeviceBallTree<E: GpuExecutor> {
    layout: TreeLayout,
    pub(super) indices: E::Buffer<u32>,
    pub(super) mask: E::Buffer<u32>,
}

impl<E: GpuExecutor> DeviceBallTree<E> {
    /// The slot layout.
    pub fn layout(&self) -> &TreeLayout {
        &self.layout
    }

    /// The point index of every slot (`layout().num_slots()` elements).
    pub fn indices(&self) -> &E::Buffer<u32> {
        &self.indices
    }

    /// 1 where a slot holds a real point, 0 on padding (`layout().num_slots()` elements).
    pub fn mask(&self) -> &E::Buffer<u32> {
        &self.mask
    }

    /// Copies the tree to the host.
    ///
    /// # Errors
    /// Device failures.
    pub fn download(&self, exec: &E) -> Result<BallTree> {
        let slots = self.layout.num_slots();
        let mut indices = vec![0u32; slots];
        let mut mask = vec![0u32; slots];
        exec.read(&self.indices, 0, &mut indices)?;
        exec.read(&self.mask, 0, &mut mask)?;
        BallTree::from_parts(self.layout.clone(), indices, mask.into_iter().map(|m| m != 0).collect())
    }
}

/// The plan of the last batch layout, uploaded.
pub(super) struct Uploaded<E: GpuExecutor> {
    pub plan: Plan,
    pub local: LocalShape,
    pub local_slots: u32,
    pub seg_starts: E::Buffer<u32>,
    pub seg_active: E::Buffer<u32>,
    pub nodes: E::Buffer<u32>,
    pub blocks: E::Buffer<u32>,
}

/// One scratch slot per coordinate type (the kernels' buffers are typed: f32 or f64
/// coordinates, u32 or u64 codes), chosen by the build's `T`.
pub(super) struct ByReal<A, B> {
    f32: A,
    f64: B,
}

impl<A: Default, B: Default> Default for ByReal<A, B> {
    fn default() -> Self {
        Self { f32: A::default(), f64: B::default() }
    }
}

impl<A: Any, B: Any> ByReal<A, B> {
    /// The slot of type `W` (`A` for f32 builds, `B` for f64 builds).
    pub fn get<W: Any>(&mut self) -> &mut W {
        if let Some(w) = (&mut self.f32 as &mut dyn Any).downcast_mut::<W>() {
            return w;
        }
        (&mut self.f64 as &mut dyn Any).downcast_mut::<W>().expect("GpuReal is f32 or f64: one slot each")
    }
}

/// A slot of typed buffers for every [`GpuReal`].
pub(super) type Typed<E, A, B> = ByReal<Option<<E as Executor>::Buffer<A>>, Option<<E as Executor>::Buffer<B>>>;

/// Scratch buffers; they grow with headroom and never shrink.
pub(super) struct Scratch<E: GpuExecutor> {
    pub vals: Option<E::Buffer<u32>>,
    pub node_of: Option<E::Buffer<u32>>,
    pub seg_dim: Option<E::Buffer<u32>>,
    /// Per segment and dimension, the bounds' codes (u32 for f32, u64 for f64).
    pub lo: Typed<E, u32, u64>,
    pub hi: Typed<E, u32, u64>,
    pub keys: Option<E::Buffer<u64>>,
    /// Coordinates staged by the local phase.
    pub staged: Typed<E, f32, f64>,
    /// Select: the permutation's second buffer (ping-pong with `vals`).
    pub vals_next: Option<E::Buffer<u32>>,
    /// Select: coordinates in position order, dimension after dimension, and the second
    /// buffer.
    pub coords: Typed<E, f32, f64>,
    pub coords_next: Typed<E, f32, f64>,
    /// Select: per-position flags and their exclusive scan (`n + 1`).
    pub flags: Option<E::Buffer<u32>>,
    pub scan: Option<E::Buffer<u32>>,
    /// Select: per-segment selection state and round histograms (kept zero between
    /// rounds by the bucket search).
    pub state: Option<E::Buffer<u32>>,
    pub hist: Option<E::Buffer<u32>>,
    /// Select: the number of undecided segments (0 between levels).
    pub pending: Option<E::Buffer<u32>>,
}

impl<E: GpuExecutor> Default for Scratch<E> {
    fn default() -> Self {
        Self {
            vals: None,
            node_of: None,
            seg_dim: None,
            lo: ByReal::default(),
            hi: ByReal::default(),
            keys: None,
            staged: ByReal::default(),
            vals_next: None,
            coords: ByReal::default(),
            coords_next: ByReal::default(),
            flags: None,
            scan: None,
            state: None,
            hist: None,
            pending: None,
        }
    }
}

/// `slot` as a buffer of exactly `len` elements (at least 1: wgpu binds no empty buffer).
pub(super) fn sized<E: Executor, T: Storage>(exec: &E, slot: &mut Option<E::Buffer<T>>, len: usize) -> Result<()> {
    let len = len.max(1);
    match slot {
        Some(b) if b.len() == len => {}
        Some(b) => exec.resize(b, len)?,
        None => *slot = Some(exec.alloc(len)?),
    }
    Ok(())
}

/// A sized slot, for reading.
#[allow(clippy::ref_option)] // the slots are `Option`s borrowed in place, like `view_mut`
pub(super) fn view<B>(slot: &Option<B>) -> &B {
    slot.as_ref().expect("sized before use")
}

/// A sized slot, for writing.
pub(super) fn view_mut<B>(slot: &mut Option<B>) -> &mut B {
    slot.as_mut().expect("sized before use")
}

/// A non-empty upload (wgpu binds no empty buffer).
fn upload_nonempty<E: Executor>(exec: &E, data: &[u32]) -> Result<E::Buffer<u32>> {
    if data.is_empty() { exec.upload(&[0u32]) } else { exec.upload(data) }
}

/// Builds ball trees on one GPU executor, reusing its plan (per batch layout), scratch
/// and output buffers from one build to the next: building again for the same batch
/// sizes uploads nothing and allocates nothing.
///
/// ```no_run
/// # fn demo<E: orrery_core::GpuExecutor>(exec: &E) -> orrery_core::Result<()> {
/// use orrery_balltree::Batches;
/// use orrery_balltree::gpu::{GpuBallTreeBuilder, Strategy};
/// use orrery_core::Executor;
///
/// let points = exec.upload(&[0.0f32, 0.0, 1.0, 0.0, 2.0, 0.1, 3.0, 0.0, 4.0, 0.2])?;
/// let mut builder = GpuBallTreeBuilder::<E>::new(Strategy::Select);
/// let tree = builder.build(exec, &points, 2, &Batches::single(5)?)?.download(exec)?;
/// assert_eq!(tree.indices(), &[0, 0, 1, 1, 2, 2, 3, 4]);
/// # Ok(())
/// # }
/// ```
pub struct GpuBallTreeBuilder<E: GpuExecutor> {
    strategy: Strategy,
    uploaded: Option<Uploaded<E>>,
    scratch: Scratch<E>,
    out: Option<DeviceBallTree<E>>,
    /// Tests: a local-phase shape instead of the one the limits give.
    #[cfg(test)]
    pub(super) local_override: Option<LocalShape>,
}

impl<E: GpuExecutor> GpuBallTreeBuilder<E> {
    /// A builder with no buffers yet.
    pub fn new(strategy: Strategy) -> Self {
        Self {
            strategy,
            uploaded: None,
            scratch: Scratch::default(),
            out: None,
            #[cfg(test)]
            local_override: None,
        }
    }

    /// The strategy.
    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// Builds the tree of `points` (`batches.num_points() * dim` coordinates, row-major,
    /// in device memory) and returns it in device memory, owned by the builder until
    /// the next build. The work is enqueued on the executor's stream; nothing waits for
    /// the device (a new batch layout uploads its plan first).
    ///
    /// The coordinates must be finite: they are in device memory, so they are not
    /// checked (non-finite ones give an unspecified tree, never a fault). Use
    /// [`super::build_balltree`] for host input, which is validated.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for `dim` outside `1..=16`; [`Error::LengthMismatch`]
    /// when `points` does not hold `n * dim` coordinates; [`Error::Unsupported`] for f64
    /// on an executor without f64 arithmetic or without the f64 kernels (WGSL);
    /// [`Error::TooManyPoints`] when the slots exceed `u32::MAX`; device failures.
    pub fn build<T: GpuReal>(
        &mut self,
        exec: &E,
        points: &E::Buffer<T>,
        dim: usize,
        batches: &Batches,
    ) -> Result<&DeviceBallTree<E>> {
        check_dim(dim)?;
        let n = batches.num_points();
        if points.len() != n * dim {
            return Err(Error::LengthMismatch { what: "points", expected: n * dim, actual: points.len() });
        }
        T::check_supported(exec)?;
        self.prepare_plan(exec, batches)?;
        let Self { uploaded, scratch: s, out, strategy, .. } = self;
        let up = uploaded.as_ref().expect("plan prepared");
        prepare_output(exec, out, &up.plan.layout)?;
        let sorts = *strategy != Strategy::Select;
        sized(exec, &mut s.vals, n)?;
        sized(exec, s.staged.get::<Option<E::Buffer<T>>>(), up.plan.staged_slots * dim)?;
        if !up.plan.levels.is_empty() {
            if sorts {
                sized(exec, &mut s.keys, n)?;
                sized(exec, &mut s.node_of, n)?;
            }
            sized(exec, &mut s.seg_dim, up.plan.max_segments)?;
            sized(exec, s.lo.get::<Option<E::Buffer<T::Ord>>>(), up.plan.max_segments * dim)?;
            sized(exec, s.hi.get::<Option<E::Buffer<T::Ord>>>(), up.plan.max_segments * dim)?;
        }
        let out = out.as_mut().expect("output prepared");
        if sorts {
            levels::run_levels::<E, T>(exec, up, s, points, n, dim)?;
        } else {
            select::run_levels_select::<E, T>(exec, up, s, points, n, dim)?;
        }
        local::run_local::<E, T>(exec, up, s, points, out, dim, !sorts)?;
        Ok(self.out.as_ref().expect("output prepared"))
    }

    /// Computes and uploads the plan unless the last one fits `batches`.
    fn prepare_plan(&mut self, exec: &E, batches: &Batches) -> Result<()> {
        let local = local::local_shape(&exec.limits());
        #[cfg(test)]
        let local = self.local_override.unwrap_or(local);
        let local_slots = match self.strategy {
            Strategy::LevelSort => 2,
            Strategy::Hybrid | Strategy::Select => local.capacity,
        };
        if let Some(up) = &self.uploaded
            && up.local == local
            && up.local_slots == local_slots
            && up.plan.layout.batches() == batches
        {
            return Ok(());
        }
        let plan = Plan::new(batches, local_slots, local.capacity)?;
        self.uploaded = Some(Uploaded {
            seg_starts: upload_nonempty(exec, &plan.seg_starts)?,
            seg_active: upload_nonempty(exec, &plan.seg_active)?,
            nodes: upload_nonempty(exec, &plan.nodes)?,
            blocks: upload_nonempty(exec, &plan.blocks)?,
            plan,
            local,
            local_slots,
        });
        Ok(())
    }
}

/// Sizes the output buffers for `layout` and records it.
fn prepare_output<E: GpuExecutor>(exec: &E, out: &mut Option<DeviceBallTree<E>>, layout: &TreeLayout) -> Result<()> {
    let slots = layout.num_slots();
    match out {
        Some(out) => {
            if out.indices.len() != slots {
                exec.resize(&mut out.indices, slots)?;
                exec.resize(&mut out.mask, slots)?;
            }
            if out.layout != *layout {
                out.layout = layout.clone();
            }
        }
        None => {
            *out =
                Some(DeviceBallTree { layout: layout.clone(), indices: exec.alloc(slots)?, mask: exec.alloc(slots)? });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use orrery_core::recording::{OpKind, RecordingExecutor};

    use super::*;

    /// The launches of one build on the recording executor (which checks every typed
    /// declaration against the module's CUDA text and reports CUDA-like limits).
    fn launches<T: GpuReal>(strategy: Strategy, n: usize) -> Vec<(String, String)> {
        let exec = RecordingExecutor::new();
        let points = exec.upload(&vec![T::ZERO; n * 3]).unwrap();
        let batches = Batches::single(n).unwrap();
        let mut builder = GpuBallTreeBuilder::<RecordingExecutor>::new(strategy);
        builder.build(&exec, &points, 3, &batches).unwrap_or_else(|e| panic!("{strategy:?}: {e}"));
        let ops = exec.take_ops();
        ops.into_iter().filter(|op| op.kind == OpKind::Launch).map(|op| (op.name, op.detail)).collect()
    }

    /// Every declaration matches its CUDA entry point (const pointers for read, sizes),
    /// for every strategy and both coordinate types.
    #[test]
    fn every_typed_declaration_matches_the_cuda_signature() {
        for strategy in [Strategy::LevelSort, Strategy::Hybrid, Strategy::Select] {
            assert!(!launches::<f32>(strategy, 5000).is_empty());
            let f64_launches = launches::<f64>(strategy, 5000);
            assert!(f64_launches.iter().any(|(name, _)| name == "bt_local_f64"), "{strategy:?}");
        }
    }

    /// The launch shapes of the timed path (Select, f32) on a CUDA-like device: per-item
    /// and tiled kernels of 256 threads, one tile per 1024 positions, the local phase in
    /// blocks of 512 threads (2048 slots).
    #[test]
    fn select_launch_shapes_are_the_tuned_ones() {
        let n = 5000;
        let l = launches::<f32>(Strategy::Select, n);
        let find = |entry: &str| l.iter().find(|(name, _)| name == entry).map(|(_, d)| d.clone()).unwrap();
        assert!(find("bt_transpose_f32").contains(": 20 blocks x 256 threads"), "{l:?}");
        assert!(find("bt_sbounds_f32").contains(": 5 blocks x 256 threads"));
        assert!(find("bt_select_count_f32").contains(": 5 blocks x 256 threads"));
        assert!(find("bt_select_find_f32").contains(" x 256 threads"));
        assert!(find("bt_select_scatter_f32").contains(": 20 blocks x 256 threads"));
        assert!(find("bt_local_ordered_f32").contains(" x 512 threads"));
        assert!(find("bt_local_ordered_f32").starts_with("balltree/local:"));
        // 5000 points: 8192 slots, 13 levels; 2 global levels above the 2048-slot
        // subtrees, 5 rounds each (32 code bits, 13 index bits).
        assert_eq!(l.iter().filter(|(name, _)| name == "bt_select_count_f32").count(), 10);
        assert!(l.iter().all(|(name, _)| !name.starts_with("bt_local_f32")));
    }
}
