//! The orchestration of the GPU build, written once for every [`GpuExecutor`]: the buffer
//! plan, the level loop and the local phase. The executors differ only in the kernels
//! of [`super::kernels::BUILD`].

use orrery_core::gpu::{GpuExecutor, KernelArg, Launch, Scalar};
use orrery_core::{DType, DeviceBuffer, Element, Error, Executor, ExecutorKind, Real, Result};

use super::kernels::{BOUNDS_TILE, BUILD, ITEM_THREADS, LocalShape, SELECT_BINS, SELECT_WORDS, local_shape};
use super::plan::Plan;
use crate::input::{Batches, check_dim};
use crate::layout::TreeLayout;
use crate::tree::BallTree;

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// A coordinate type of the GPU build: `f32` on every executor, `f64` on CUDA only
/// (WGSL has no f64; other executors return [`Error::Unsupported`]).
pub trait GpuReal: Real + sealed::Sealed {
    /// Entry point of the bounds kernel.
    #[doc(hidden)]
    const BOUNDS: &'static str;
    /// Entry point of the split-dimension kernel.
    #[doc(hidden)]
    const CHOOSE: &'static str;
    /// Entry point of the sort-key kernel.
    #[doc(hidden)]
    const KEYS: &'static str;
    /// Entry point of the local phase.
    #[doc(hidden)]
    const LOCAL: &'static str;
    /// Entry point of the local phase when every subtree's points arrive in index order
    /// (Select). Both languages define it for f32: CUDA packs the sort key into one u64,
    /// WGSL (no u64) runs the algorithm of [`GpuReal::LOCAL`]. f64 has no packed variant.
    #[doc(hidden)]
    const LOCAL_ORDERED: &'static str;
    /// Entry points of the Select strategy: transpose, bounds, round histogram, bucket
    /// search, partition flags, scatter.
    #[doc(hidden)]
    const SELECT: [&'static str; 6];
}

impl GpuReal for f32 {
    const BOUNDS: &'static str = "bt_bounds_f32";
    const CHOOSE: &'static str = "bt_choose_f32";
    const KEYS: &'static str = "bt_keys_f32";
    const LOCAL: &'static str = "bt_local_f32";
    const LOCAL_ORDERED: &'static str = "bt_local_ordered_f32";
    const SELECT: [&'static str; 6] = [
        "bt_transpose_f32",
        "bt_sbounds_f32",
        "bt_select_count_f32",
        "bt_select_find_f32",
        "bt_select_flags_f32",
        "bt_select_scatter_f32",
    ];
}

impl GpuReal for f64 {
    const BOUNDS: &'static str = "bt_bounds_f64";
    const CHOOSE: &'static str = "bt_choose_f64";
    const KEYS: &'static str = "bt_keys_f64";
    const LOCAL: &'static str = "bt_local_f64";
    const LOCAL_ORDERED: &'static str = "bt_local_f64";
    const SELECT: [&'static str; 6] = [
        "bt_transpose_f64",
        "bt_sbounds_f64",
        "bt_select_count_f64",
        "bt_select_find_f64",
        "bt_select_flags_f64",
        "bt_select_scatter_f64",
    ];
}

/// How the GPU build splits the levels between global sorts and the local phase. Both
/// give the same tree, bit for bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Strategy {
    /// The baseline: one stable sort of all points per level, down to the leaves; the
    /// local phase only writes the leaves. `L + 1` sorts for a batch of depth `L`.
    LevelSort,
    /// Global sorts only while a node has more slots than a block holds (2048 on CUDA,
    /// 1024 on wgpu); then one block per subtree finishes its remaining levels in shared
    /// memory. `L + 1 - log2(block slots)` sorts.
    Hybrid,
    /// The levels of [`Strategy::Hybrid`], but each global level selects every node's
    /// median by a segmented radix selection and partitions stably instead of sorting
    /// all points, with the coordinates carried along in position order (coalesced
    /// reads). On every executor (f64 on CUDA only, as for the other strategies); the
    /// default: the fastest on CUDA and wgpu (`docs/performance/balltree.md`).
    #[default]
    Select,
}

impl Strategy {
    /// The fastest strategy on `kind`: [`Strategy::Select`] on CUDA and wgpu (measured
    /// on the H200: `docs/performance/balltree.md`); a future executor may differ.
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
    indices: E::Buffer<u32>,
    mask: E::Buffer<u32>,
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
struct Uploaded<E: GpuExecutor> {
    plan: Plan,
    local: LocalShape,
    local_slots: u32,
    seg_starts: E::Buffer<u32>,
    seg_active: E::Buffer<u32>,
    nodes: E::Buffer<u32>,
    blocks: E::Buffer<u32>,
}

/// Scratch buffers; they grow with headroom and never shrink.
struct Scratch<E: GpuExecutor> {
    vals: Option<E::Buffer<u32>>,
    node_of: Option<E::Buffer<u32>>,
    seg_dim: Option<E::Buffer<u32>>,
    lo: Option<E::Buffer<u32>>,
    hi: Option<E::Buffer<u32>>,
    keys: Option<E::Buffer<u64>>,
    /// Coordinates staged by the local phase (f32 or f64 as 32-bit words).
    staged: Option<E::Buffer<u32>>,
    /// Select: the permutation's second buffer (ping-pong with `vals`).
    vals_next: Option<E::Buffer<u32>>,
    /// Select: coordinates in position order, dimension after dimension, and the second
    /// buffer (f32 or f64 as 32-bit words).
    coords: Option<E::Buffer<u32>>,
    coords_next: Option<E::Buffer<u32>>,
    /// Select: per-position flags and their exclusive scan (`n + 1`).
    flags: Option<E::Buffer<u32>>,
    scan: Option<E::Buffer<u32>>,
    /// Select: per-segment selection state and round histograms (kept zero between
    /// rounds by the bucket search).
    state: Option<E::Buffer<u32>>,
    hist: Option<E::Buffer<u32>>,
    /// Select: the number of undecided segments (0 between levels).
    pending: Option<E::Buffer<u32>>,
}

/// `slot` as a buffer of exactly `len` elements (at least 1: wgpu binds no empty buffer).
fn sized<E: Executor, T: Element>(exec: &E, slot: &mut Option<E::Buffer<T>>, len: usize) -> Result<()> {
    let len = len.max(1);
    match slot {
        Some(b) if b.len() == len => {}
        Some(b) => exec.resize(b, len)?,
        None => *slot = Some(exec.alloc(len)?),
    }
    Ok(())
}

fn get<B>(slot: Option<&B>) -> &B {
    slot.expect("sized before use")
}

/// A `u32` buffer argument.
fn raw<E: GpuExecutor>(b: &E::Buffer<u32>) -> KernelArg<'_, E> {
    orrery_core::gpu::buf::<E, _>(b)
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
}

impl<E: GpuExecutor> GpuBallTreeBuilder<E> {
    /// A builder with no buffers yet.
    pub fn new(strategy: Strategy) -> Self {
        Self {
            strategy,
            uploaded: None,
            scratch: Scratch {
                vals: None,
                node_of: None,
                seg_dim: None,
                lo: None,
                hi: None,
                keys: None,
                staged: None,
                vals_next: None,
                coords: None,
                coords_next: None,
                flags: None,
                scan: None,
                state: None,
                hist: None,
                pending: None,
            },
            out: None,
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
    /// on an executor other than CUDA; [`Error::TooManyPoints`] when the slots exceed
    /// `u32::MAX`; device failures.
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
        if T::DTYPE == DType::F64 && exec.kind() != ExecutorKind::Cuda {
            return Err(Error::Unsupported {
                executor: exec.name(),
                operation: "ball tree build".to_owned(),
                reason: "f64 coordinates need CUDA (WGSL has no f64); convert the points to f32".to_owned(),
            });
        }
        self.prepare_plan(exec, batches)?;
        let Self { uploaded, scratch: s, out, .. } = self;
        let up = uploaded.as_ref().expect("plan prepared");
        prepare_output(exec, out, &up.plan.layout)?;
        let code_words = size_of::<T>() / 4;
        let sorts = self.strategy != Strategy::Select;
        sized(exec, &mut s.vals, n)?;
        sized(exec, &mut s.staged, up.plan.staged_slots * dim * code_words)?;
        if !up.plan.levels.is_empty() {
            if sorts {
                sized(exec, &mut s.keys, n)?;
                sized(exec, &mut s.node_of, n)?;
            }
            sized(exec, &mut s.seg_dim, up.plan.max_segments)?;
            sized(exec, &mut s.lo, up.plan.max_segments * dim * code_words)?;
            sized(exec, &mut s.hi, up.plan.max_segments * dim * code_words)?;
        }
        let out = out.as_ref().expect("output prepared");
        if self.strategy == Strategy::Select {
            run_levels_select::<E, T>(exec, up, s, points, n, dim)?;
        } else {
            run_levels::<E, T>(exec, up, s, points, n, dim)?;
        }
        let u = |v: usize| KernelArg::<E>::Scalar(Scalar::U32(v as u32));
        let blocks = up.plan.num_blocks();
        let local = if self.strategy == Strategy::Select { T::LOCAL_ORDERED } else { T::LOCAL };
        exec.launch(
            &BUILD,
            local,
            Launch { blocks: blocks as u32, threads: up.local.threads },
            &[
                orrery_core::gpu::buf::<E, _>(points),
                raw::<E>(get(s.vals.as_ref())),
                raw::<E>(&up.nodes),
                raw::<E>(&up.blocks),
                raw::<E>(get(s.staged.as_ref())),
                raw::<E>(&out.indices),
                raw::<E>(&out.mask),
                u(dim),
                u(blocks),
            ],
        )?;
        Ok(self.out.as_ref().expect("output prepared"))
    }

    /// Computes and uploads the plan unless the last one fits `batches`.
    fn prepare_plan(&mut self, exec: &E, batches: &Batches) -> Result<()> {
        let local = local_shape(exec.kind());
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

/// The global levels: per level, segment bounds, split dimensions and one stable sort;
/// leaves the point order in `scratch.vals`.
fn run_levels<E: GpuExecutor, T: GpuReal>(
    exec: &E,
    up: &Uploaded<E>,
    s: &mut Scratch<E>,
    points: &E::Buffer<T>,
    n: usize,
    dim: usize,
) -> Result<()> {
    let vals = s.vals.as_mut().expect("sized");
    exec.iota(vals, 0)?;
    let code_words = size_of::<T>() / 4;
    let f64_keys = T::DTYPE == DType::F64;
    let u = |v: usize| KernelArg::<E>::Scalar(Scalar::U32(v as u32));
    let per_item = |items: usize| Launch::per_item(items, ITEM_THREADS);
    for level in &up.plan.levels {
        let segments = level.segments as usize;
        let offset = level.offset as usize;
        let words = segments * dim * code_words;
        {
            let (vals, node_of) = (get(s.vals.as_ref()), get(s.node_of.as_ref()));
            let (lo, hi, seg_dim) = (get(s.lo.as_ref()), get(s.hi.as_ref()), get(s.seg_dim.as_ref()));
            exec.launch(&BUILD, "bt_reset_bounds", per_item(words), &[raw::<E>(lo), raw::<E>(hi), u(words)])?;
            exec.launch(
                &BUILD,
                T::BOUNDS,
                Launch { blocks: n.div_ceil(BOUNDS_TILE as usize) as u32, threads: ITEM_THREADS },
                &[
                    orrery_core::gpu::buf::<E, _>(points),
                    raw::<E>(&up.seg_starts),
                    raw::<E>(&up.seg_active),
                    raw::<E>(vals),
                    raw::<E>(node_of),
                    raw::<E>(lo),
                    raw::<E>(hi),
                    u(n),
                    u(dim),
                    u(offset),
                    u(segments),
                ],
            )?;
            exec.launch(
                &BUILD,
                T::CHOOSE,
                per_item(segments),
                &[
                    raw::<E>(lo),
                    raw::<E>(hi),
                    raw::<E>(&up.seg_active),
                    raw::<E>(seg_dim),
                    u(segments),
                    u(dim),
                    u(offset),
                ],
            )?;
            exec.launch(
                &BUILD,
                T::KEYS,
                per_item(n),
                &[
                    orrery_core::gpu::buf::<E, _>(points),
                    raw::<E>(node_of),
                    raw::<E>(seg_dim),
                    orrery_core::gpu::buf::<E, _>(get(s.keys.as_ref())),
                    raw::<E>(vals),
                    u(n),
                    u(dim),
                ],
            )?;
        }
        let (keys, vals) = (s.keys.as_mut().expect("sized"), s.vals.as_mut().expect("sized"));
        if f64_keys {
            // Stable LSD composition: by coordinate code, then by segment.
            exec.sort_pairs(&mut *keys, &mut *vals, 0..64)?;
            if level.node_bits > 0 {
                let node_of = s.node_of.as_ref().expect("sized");
                exec.launch(
                    &BUILD,
                    "bt_node_keys",
                    per_item(n),
                    &[
                        orrery_core::gpu::buf::<E, _>(node_of),
                        orrery_core::gpu::buf::<E, _>(&*vals),
                        orrery_core::gpu::buf::<E, _>(&*keys),
                        u(n),
                    ],
                )?;
                exec.sort_pairs(keys, vals, 0..level.node_bits)?;
            }
        } else {
            exec.sort_pairs(keys, vals, 0..32 + level.node_bits)?;
        }
    }
    Ok(())
}

/// The global levels of [`Strategy::Select`]: per level, bounds from the position-ordered
/// coordinates, split dimensions, the radix selection of every node's pivot, and a stable
/// partition of the permutation and the coordinates; leaves the point order in
/// `scratch.vals`.
fn run_levels_select<E: GpuExecutor, T: GpuReal>(
    exec: &E,
    up: &Uploaded<E>,
    s: &mut Scratch<E>,
    points: &E::Buffer<T>,
    n: usize,
    dim: usize,
) -> Result<()> {
    let transpose = T::SELECT[0];
    let code_words = size_of::<T>() / 4;
    let u = |v: usize| KernelArg::<E>::Scalar(Scalar::U32(v as u32));
    let per_item = |items: usize| Launch::per_item(items, ITEM_THREADS);
    exec.iota(s.vals.as_mut().expect("sized"), 0)?;
    if up.plan.levels.is_empty() {
        return Ok(());
    }
    let segments_max = up.plan.max_segments;
    sized(exec, &mut s.vals_next, n)?;
    sized(exec, &mut s.coords, n * dim * code_words)?;
    sized(exec, &mut s.coords_next, n * dim * code_words)?;
    sized(exec, &mut s.flags, n)?;
    sized(exec, &mut s.scan, n + 1)?;
    sized(exec, &mut s.state, segments_max * SELECT_WORDS)?;
    if s.hist.as_ref().is_none_or(|h| h.len() != segments_max * SELECT_BINS) {
        sized(exec, &mut s.hist, segments_max * SELECT_BINS)?;
        exec.fill(s.hist.as_mut().expect("sized"), 0)?;
    }
    if s.pending.is_none() {
        s.pending = Some(exec.upload(&[0u32])?);
    }
    exec.launch(
        &BUILD,
        transpose,
        per_item(n),
        &[orrery_core::gpu::buf::<E, _>(points), raw::<E>(get(s.coords.as_ref())), u(n), u(dim)],
    )?;
    let rounds = up.plan.select_rounds(code_words);
    for level in &up.plan.levels {
        select_level::<E, T>(exec, up, s, level, rounds, n, dim)?;
        std::mem::swap(&mut s.vals, &mut s.vals_next);
        std::mem::swap(&mut s.coords, &mut s.coords_next);
    }
    Ok(())
}

/// One global level of [`Strategy::Select`]: bounds, split dimensions, the selection
/// rounds, flags, scan and the stable partition into `vals_next` / `coords_next`.
#[allow(clippy::too_many_lines)] // one launch after the other, each with its arguments
fn select_level<E: GpuExecutor, T: GpuReal>(
    exec: &E,
    up: &Uploaded<E>,
    s: &mut Scratch<E>,
    level: &super::plan::LevelShape,
    rounds: &[[u32; 3]],
    n: usize,
    dim: usize,
) -> Result<()> {
    let [_, bounds, count, find, flags_entry, scatter] = T::SELECT;
    let code_words = size_of::<T>() / 4;
    let u = |v: usize| KernelArg::<E>::Scalar(Scalar::U32(v as u32));
    let per_item = |items: usize| Launch::per_item(items, ITEM_THREADS);
    let tiles = Launch { blocks: n.div_ceil(BOUNDS_TILE as usize) as u32, threads: ITEM_THREADS };
    let segments = level.segments as usize;
    let offset = level.offset as usize;
    let words = segments * dim * code_words;
    let (coords, perm) = (get(s.coords.as_ref()), get(s.vals.as_ref()));
    let (lo, hi, seg_dim) = (get(s.lo.as_ref()), get(s.hi.as_ref()), get(s.seg_dim.as_ref()));
    let (state, hist, pending) = (get(s.state.as_ref()), get(s.hist.as_ref()), get(s.pending.as_ref()));
    exec.launch(&BUILD, "bt_reset_bounds", per_item(words), &[raw::<E>(lo), raw::<E>(hi), u(words)])?;
    exec.launch(
        &BUILD,
        bounds,
        tiles,
        &[
            raw::<E>(coords),
            raw::<E>(&up.seg_starts),
            raw::<E>(&up.seg_active),
            raw::<E>(lo),
            raw::<E>(hi),
            u(n),
            u(dim),
            u(offset),
            u(segments),
        ],
    )?;
    exec.launch(
        &BUILD,
        T::CHOOSE,
        per_item(segments),
        &[raw::<E>(lo), raw::<E>(hi), raw::<E>(&up.seg_active), raw::<E>(seg_dim), u(segments), u(dim), u(offset)],
    )?;
    exec.launch(
        &BUILD,
        "bt_select_init",
        per_item(segments),
        &[
            raw::<E>(&up.seg_starts),
            raw::<E>(&up.seg_active),
            raw::<E>(state),
            raw::<E>(pending),
            u(n),
            u(offset),
            u(segments),
        ],
    )?;
    for &[part, shift, width] in rounds {
        let (part, shift, width) = (part as usize, shift as usize, width as usize);
        exec.launch(
            &BUILD,
            count,
            tiles,
            &[
                raw::<E>(coords),
                raw::<E>(perm),
                raw::<E>(&up.seg_starts),
                raw::<E>(&up.seg_active),
                raw::<E>(seg_dim),
                raw::<E>(state),
                raw::<E>(hist),
                raw::<E>(pending),
                u(n),
                u(offset),
                u(segments),
                u(part),
                u(shift),
                u(width),
            ],
        )?;
        exec.launch(
            &BUILD,
            find,
            Launch { blocks: segments as u32, threads: ITEM_THREADS },
            &[
                raw::<E>(&up.seg_active),
                raw::<E>(state),
                raw::<E>(hist),
                raw::<E>(pending),
                u(offset),
                u(segments),
                u(part),
                u(shift),
                u(width),
            ],
        )?;
    }
    exec.launch(
        &BUILD,
        flags_entry,
        per_item(n),
        &[
            raw::<E>(coords),
            raw::<E>(perm),
            raw::<E>(&up.seg_starts),
            raw::<E>(&up.seg_active),
            raw::<E>(seg_dim),
            raw::<E>(state),
            raw::<E>(get(s.flags.as_ref())),
            u(n),
            u(offset),
            u(segments),
        ],
    )?;
    exec.exclusive_scan(get(s.flags.as_ref()), s.scan.as_mut().expect("sized"))?;
    exec.launch(
        &BUILD,
        scatter,
        per_item(n),
        &[
            raw::<E>(get(s.coords.as_ref())),
            raw::<E>(get(s.vals.as_ref())),
            raw::<E>(&up.seg_starts),
            raw::<E>(&up.seg_active),
            raw::<E>(get(s.scan.as_ref())),
            raw::<E>(get(s.coords_next.as_ref())),
            raw::<E>(get(s.vals_next.as_ref())),
            u(n),
            u(dim),
            u(offset),
            u(segments),
        ],
    )?;
    Ok(())
}
