//! The orchestration of the GPU build, written once for every [`GpuExecutor`]: the buffer
//! plan, the level loop and the local phase. The executors differ only in the kernels
//! of [`super::kernels::BUILD`].

use orrery_core::gpu::{GpuExecutor, KernelArg, Launch, Scalar};
use orrery_core::{DType, DeviceBuffer, Element, Error, Executor, ExecutorKind, Real, Result};

use super::kernels::{BOUNDS_TILE, BUILD, ITEM_THREADS, LocalShape, local_shape};
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
}

impl GpuReal for f32 {
    const BOUNDS: &'static str = "bt_bounds_f32";
    const CHOOSE: &'static str = "bt_choose_f32";
    const KEYS: &'static str = "bt_keys_f32";
    const LOCAL: &'static str = "bt_local_f32";
}

impl GpuReal for f64 {
    const BOUNDS: &'static str = "bt_bounds_f64";
    const CHOOSE: &'static str = "bt_choose_f64";
    const KEYS: &'static str = "bt_keys_f64";
    const LOCAL: &'static str = "bt_local_f64";
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
    #[default]
    Hybrid,
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
    KernelArg::Buffer(E::raw(b))
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
/// let mut builder = GpuBallTreeBuilder::<E>::new(Strategy::Hybrid);
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
            scratch: Scratch { vals: None, node_of: None, seg_dim: None, lo: None, hi: None, keys: None, staged: None },
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
        sized(exec, &mut s.vals, n)?;
        sized(exec, &mut s.keys, n)?;
        sized(exec, &mut s.staged, up.plan.staged_slots * dim * code_words)?;
        if !up.plan.levels.is_empty() {
            sized(exec, &mut s.node_of, n)?;
            sized(exec, &mut s.seg_dim, up.plan.max_segments)?;
            sized(exec, &mut s.lo, up.plan.max_segments * dim * code_words)?;
            sized(exec, &mut s.hi, up.plan.max_segments * dim * code_words)?;
        }
        let out = out.as_ref().expect("output prepared");
        run_levels::<E, T>(exec, up, s, points, n, dim)?;
        let u = |v: usize| KernelArg::<E>::Scalar(Scalar::U32(v as u32));
        let blocks = up.plan.num_blocks();
        exec.launch(
            &BUILD,
            T::LOCAL,
            Launch { blocks: blocks as u32, threads: up.local.threads },
            &[
                KernelArg::Buffer(E::raw(points)),
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
            Strategy::Hybrid => local.capacity,
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
                    KernelArg::Buffer(E::raw(points)),
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
                    KernelArg::Buffer(E::raw(points)),
                    raw::<E>(node_of),
                    raw::<E>(seg_dim),
                    KernelArg::Buffer(E::raw(get(s.keys.as_ref()))),
                    raw::<E>(vals),
                    u(n),
                    u(dim),
                ],
            )?;
        }
        let (keys, vals) = (s.keys.as_mut().expect("sized"), s.vals.as_mut().expect("sized"));
        if f64_keys {
            // Stable LSD composition: by coordinate code, then by segment.
            exec.sort_pairs(keys, vals, 0..64)?;
            if level.node_bits > 0 {
                let node_of = s.node_of.as_ref().expect("sized");
                exec.launch(
                    &BUILD,
                    "bt_node_keys",
                    per_item(n),
                    &[
                        KernelArg::Buffer(E::raw(node_of)),
                        KernelArg::Buffer(E::raw(&*vals)),
                        KernelArg::Buffer(E::raw(&*keys)),
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
