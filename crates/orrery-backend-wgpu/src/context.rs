//! The device, its one logical stream, and the recorder every operation goes through.
//!
//! # Batching
//! Work is recorded into one pending [`wgpu::CommandEncoder`] and submitted only when the
//! host needs a result or an ordering point: [`Recorder::wait`] (read, download,
//! synchronize, host-clock markers), [`Recorder::flush`] (write, markers), or when a
//! batch reaches [`MAX_BATCH_COMMANDS`] commands or fills its parameter arena. No
//! primitive waits for the device.
//!
//! Consecutive dispatches share one open compute pass ([`Batch`]); any other command
//! (a copy the kernels cannot do, a clear, a timestamp, a readback) ends the pass first,
//! and so does a submit. Dependent dispatches stay ordered inside a pass: every dispatch
//! is its own usage scope, so wgpu places the barrier between a dispatch that writes a
//! storage buffer and a later one that reads or writes it (or reads it as indirect
//! arguments). Why one pass: on the H200 (NVIDIA 580.159.04 Vulkan driver, raw wgpu 30,
//! `examples/wgpu_probe.rs`) an empty dispatch costs 6.36 us of GPU time when it has a
//! compute pass of its own and 1.39 us when 1,000 dispatches share one, and the
//! primitives and the tree builds issue hundreds of small dispatches (the ball tree's
//! LevelSort of 16x1024 points: 7.2 ms on wgpu against 0.71 ms on CUDA with a pass per
//! dispatch). See `docs/adr/0015-wgpu-pass-batching-and-trusted-shaders.md`.
//!
//! # Scalar parameters
//! Each dispatch's uniform block is appended to a host-side arena, one slot per dispatch
//! at the device's uniform offset alignment; at submit the arena is written into one
//! uniform buffer with `Queue::write_buffer`, which the queue orders before the
//! batch's command buffers and after every earlier submission. So the steady state
//! creates no buffers for parameters, only a bind group per dispatch.
//!
//! # Views
//! Kernels bind views ([`Arg`]): storage bindings must start at a multiple of the
//! device's `min_storage_buffer_offset_alignment`, so a view is bound from the largest
//! such offset at or below its start (that is also a multiple of the binding's array
//! stride) to the end of the allocation, and the remaining element offset goes to the
//! kernel's `off_<binding variable>` parameter field, which [`Recorder::dispatch`] fills.
//! A view that needs an offset for a kernel without that field is an
//! [`Error::KernelSignature`].
//!
//! # Capture
//! While [`orrery_core::Executor::record`] runs, the recording thread's commands go into
//! a [`crate::record::Capture`] instead of the encoder (other threads keep using the
//! stream normally); operations that cannot be replayed return [`Error::Recording`].
//!
//! # Errors
//! Allocation runs inside error scopes (out of memory and validation are reported at
//! once). Errors of asynchronous work go to the device's uncaptured-error handler, which
//! keeps the first one; the next wait returns it as [`Error::Device`] (or
//! [`Error::OutOfDeviceMemory`]).

use std::num::NonZeroU64;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use orrery_core::executor::grown_capacity;
use orrery_core::gpu::Define;
use orrery_core::{Error, Result};

use crate::adapter::{BACKEND, Capabilities, Opened};
use crate::pipeline_cache::{MemberType, ModuleSpec, Pipeline, PipelineCache};
use crate::primitives::Params;
use crate::record::{Capture, CapturedGrid};
use crate::shaders::{self, CoreModule};

/// Smallest uniform parameter arena of one batch: at least 256 parameter slots at the
/// device's uniform offset alignment (256 bytes on many GPUs, 32 on lavapipe), so a
/// batch ends at 256 to 512 dispatches through the arena or at
/// [`MAX_BATCH_COMMANDS`], whichever comes first. (On lavapipe the arena fills first,
/// so the tests exercise that path.)
const MIN_ARENA_BYTES: u64 = 16 * 1024;
/// Commands after which a batch is submitted even without a reason to.
pub(crate) const MAX_BATCH_COMMANDS: usize = 1024;
/// Smallest allocation: wgpu forbids zero-sized bindings, and a binding must hold at
/// least one element of the array type the shader declares (up to 16 bytes for `vec4`).
pub(crate) const MIN_BUFFER_BYTES: u64 = 256;
/// Usage of every executor buffer (INDIRECT: any buffer may hold indirect-launch
/// arguments).
pub(crate) const STORAGE_USAGE: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE
    .union(wgpu::BufferUsages::COPY_SRC)
    .union(wgpu::BufferUsages::COPY_DST)
    .union(wgpu::BufferUsages::INDIRECT);

/// Scratch buffers owned by the executor: grown with headroom, never shrunk, shared by
/// the primitives (each primitive holds the recorder for its whole recording, so two
/// primitives never interleave on them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scratch {
    /// Alternate keys of the radix sort.
    SortKeys,
    /// Alternate values of the radix sort.
    SortValues,
    /// Per-(digit, tile) counts of a radix-sort pass.
    SortCounts,
    /// Their exclusive scan.
    SortOffsets,
    /// Tile sums of a scan or compaction.
    ScanPartials,
    /// Tile results of a reduction.
    ReducePartials,
}

const SCRATCH_SLOTS: usize = 6;

/// A buffer range a kernel binds or a copy moves: the allocation, the view's byte
/// offset and length, and whether the operation may write it.
#[derive(Clone, Copy)]
pub(crate) struct Arg<'a> {
    /// The allocation.
    pub buf: &'a Arc<wgpu::Buffer>,
    /// Byte offset of the view's first element.
    pub offset: u64,
    /// Bytes of the view.
    pub len: u64,
    /// Whether the operation may write it.
    pub writable: bool,
}

impl<'a> Arg<'a> {
    /// A whole allocation (scratch), writable.
    pub(crate) fn whole(buf: &'a Arc<wgpu::Buffer>) -> Self {
        Self { buf, offset: 0, len: buf.size(), writable: true }
    }

    /// The same range, not writable.
    pub(crate) fn read_only(self) -> Self {
        Self { writable: false, ..self }
    }

    /// The first `len` bytes of the range.
    pub(crate) fn with_len(self, len: u64) -> Self {
        Self { len: len.min(self.len), ..self }
    }
}

/// How many workgroups a dispatch runs.
#[derive(Clone, Copy)]
pub(crate) enum DispatchGrid<'a> {
    /// A 1D count, spread over a 2D dispatch beyond the per-dimension limit.
    Blocks(u32),
    /// `[x, y, z]` read from the first three words of the view when the dispatch runs.
    Indirect(Arg<'a>),
}

/// One storage binding of a planned dispatch: binding number, allocation, bound offset.
pub(crate) type Bound<'a> = (u32, &'a Arc<wgpu::Buffer>, u64);

/// A planned dispatch: its storage bindings and its packed parameter block (binding, bytes).
pub(crate) type Plan<'a> = (Vec<Bound<'a>>, Option<(u32, Vec<u8>)>);

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

fn signature_error(pipeline: &Pipeline, reason: String) -> Error {
    Error::KernelSignature { module: pipeline.module.clone(), entry: pipeline.entry.clone(), reason }
}

/// The first asynchronous error, kept until the next wait reports it.
type ErrorSlot = Arc<Mutex<Option<Error>>>;

/// A command encoder being recorded and the compute pass open on it, if any.
///
/// The pass is a [`wgpu::ComputePass<'static>`] ([`wgpu::ComputePass::forget_lifetime`])
/// so it can live next to its encoder; wgpu then reports any use of the encoder while
/// the pass is open as a validation error that invalidates the whole batch. The fields
/// are private so that this cannot happen: [`Batch::encoder`] ends the pass before it
/// hands out the encoder, [`Batch::pass`] opens one on demand, and [`Batch::finish`]
/// ends it before `CommandEncoder::finish`.
pub(crate) struct Batch {
    /// Declared before the encoder, so a dropped batch ends its pass first.
    pass: Option<wgpu::ComputePass<'static>>,
    encoder: Option<wgpu::CommandEncoder>,
    label: &'static str,
}

impl Batch {
    /// An empty batch whose encoder, once created, carries `label`.
    pub(crate) fn new(label: &'static str) -> Self {
        Self { pass: None, encoder: None, label }
    }

    /// Whether nothing was recorded since the last [`Batch::finish`].
    pub(crate) fn is_empty(&self) -> bool {
        self.encoder.is_none()
    }

    /// The encoder, for a command outside a compute pass: ends the open pass first.
    pub(crate) fn encoder(&mut self, device: &wgpu::Device) -> &mut wgpu::CommandEncoder {
        self.pass = None;
        let label = self.label;
        self.encoder.get_or_insert_with(|| {
            device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) })
        })
    }

    /// The open compute pass, begun on the encoder when none is open.
    pub(crate) fn pass(&mut self, device: &wgpu::Device) -> &mut wgpu::ComputePass<'static> {
        let (encoder, label) = (&mut self.encoder, self.label);
        self.pass.get_or_insert_with(|| {
            encoder
                .get_or_insert_with(|| {
                    device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) })
                })
                .begin_compute_pass(&wgpu::ComputePassDescriptor { label: None, timestamp_writes: None })
                .forget_lifetime()
        })
    }

    /// Ends the open pass and finishes the encoder; `None` when nothing was recorded.
    pub(crate) fn finish(&mut self) -> Option<wgpu::CommandBuffer> {
        self.pass = None;
        self.encoder.take().map(wgpu::CommandEncoder::finish)
    }
}

/// Recording state of the executor's stream.
pub(crate) struct Stream {
    batch: Batch,
    commands: usize,
    arena: Vec<u8>,
    arena_buffer: wgpu::Buffer,
    arena_bytes: u64,
    staging: Option<(wgpu::Buffer, u64)>,
    scratch: [Option<(Arc<wgpu::Buffer>, u64)>; SCRATCH_SLOTS],
    /// Whether queue writes wait for a submit.
    writes_pending: bool,
    /// The capture of [`orrery_core::Executor::record`], while it runs.
    pub(crate) capture: Option<Capture>,
}

/// Everything the executor shares between threads.
pub(crate) struct Context {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub limits: wgpu::Limits,
    pub caps: Capabilities,
    /// Whether the SUBGROUP define is set for core and user kernels.
    pub subgroups: bool,
    cache: Mutex<PipelineCache>,
    stream: Mutex<Stream>,
    errors: ErrorSlot,
    hilbert_table: OnceLock<Arc<wgpu::Buffer>>,
    hilbert3_table: OnceLock<Arc<wgpu::Buffer>>,
    /// A small read-only buffer bound where a kernel's optional input is absent (the
    /// count slot of an uncounted scan).
    pub dummy: Arc<wgpu::Buffer>,
    /// Bytes at whose multiples views are bound (the adapter's storage offset alignment
    /// or the coarser [`crate::WgpuOptions::view_alignment`]).
    pub view_alignment: u32,
    /// Typed declarations already checked: (module key, signature address).
    pub signatures: Mutex<std::collections::HashSet<(String, String, usize)>>,
}

/// The preprocessor names a module is compiled with: `defines`, with `SUBGROUP` when
/// `subgroups` (the subgroup paths are on), sorted.
pub(crate) fn with_subgroup<'d>(defines: &[&'d str], subgroups: bool) -> Vec<&'d str> {
    let mut all: Vec<&str> = defines.to_vec();
    if subgroups && !all.contains(&"SUBGROUP") {
        all.push("SUBGROUP");
    }
    all.sort_unstable();
    all
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock leaves plain data behind; keep going.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn device_error(operation: &str, message: impl Into<String>) -> Error {
    Error::Device { backend: BACKEND, operation: operation.to_owned(), message: message.into() }
}

fn from_wgpu(e: &wgpu::Error, operation: &str) -> Error {
    match e {
        wgpu::Error::OutOfMemory { .. } => Error::OutOfDeviceMemory { backend: BACKEND, requested_bytes: 0 },
        other => device_error(operation, other.to_string()),
    }
}

impl Context {
    /// Wraps an opened device. Subgroups are off until [`Context::probe_subgroups`].
    pub(crate) fn new(opened: Opened, options: &crate::adapter::WgpuOptions) -> Result<Self> {
        let (timestamps, f64) = (options.timestamps, options.f64);
        let Opened { device, queue, info, features, limits } = opened;
        let device_alignment = limits.min_storage_buffer_offset_alignment.max(4);
        let view_alignment =
            options.view_alignment.map_or(device_alignment, |a| a.max(1).next_multiple_of(device_alignment));
        let errors: ErrorSlot = Arc::new(Mutex::new(None));
        let slot = errors.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            let mut first = lock(&slot);
            if first.is_none() {
                *first = Some(from_wgpu(&e, "asynchronous work"));
            }
        }));
        let slot = errors.clone();
        device.set_device_lost_callback(move |reason, message| {
            let mut first = lock(&slot);
            if first.is_none() {
                *first = Some(device_error("device", format!("device lost ({reason:?}): {message}")));
            }
        });
        let caps = Capabilities {
            adapter: info.name.clone(),
            backend: info.backend,
            device_type: info.device_type,
            subgroup_size: None,
            timestamps: timestamps && features.contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS),
            f64: f64 && features.contains(wgpu::Features::SHADER_F64),
            max_buffer_size: limits.max_buffer_size,
            max_storage_binding: limits.max_storage_buffer_binding_size,
            max_workgroups_per_dimension: limits.max_compute_workgroups_per_dimension,
            max_invocations_per_workgroup: limits.max_compute_invocations_per_workgroup,
        };
        let arena_bytes = MIN_ARENA_BYTES.max(256 * u64::from(limits.min_uniform_buffer_offset_alignment));
        let arena_buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("orrery params"),
            size: arena_bytes,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let stream = Stream {
            batch: Batch::new("orrery"),
            commands: 0,
            arena: Vec::with_capacity(arena_bytes as usize),
            arena_buffer,
            arena_bytes,
            staging: None,
            scratch: Default::default(),
            writes_pending: false,
            capture: None,
        };
        let dummy = Arc::new(device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("orrery dummy"),
            size: MIN_BUFFER_BYTES,
            usage: STORAGE_USAGE,
            mapped_at_creation: false,
        }));
        let ctx = Self {
            device,
            queue,
            limits,
            caps,
            subgroups: false,
            cache: Mutex::new(PipelineCache::default()),
            stream: Mutex::new(stream),
            errors,
            hilbert_table: OnceLock::new(),
            hilbert3_table: OnceLock::new(),
            dummy,
            view_alignment,
            signatures: Mutex::default(),
        };
        ctx.take_error("device creation")?;
        Ok(ctx)
    }

    /// Runs the subgroup probe (`shaders/core/probe.wgsl`) and turns the subgroup paths
    /// on when the subgroups are full, ordered as the kernels assume, and every subgroup
    /// operation the kernels use gives the right answer. A probe that fails to compile
    /// (a backend whose shader translator lacks a subgroup built-in) leaves them off.
    pub(crate) fn probe_subgroups(&mut self) -> Result<()> {
        if !self.device.features().contains(wgpu::Features::SUBGROUP) {
            return Ok(());
        }
        let w = shaders::WORKGROUP as usize;
        let out = Arc::new(self.create_buffer(((2 * w + 1) * 4) as u64, STORAGE_USAGE, "orrery subgroup probe")?);
        let mut words = vec![0u32; 2 * w + 1];
        {
            let mut rec = self.recorder();
            let Ok(pipeline) = rec.pipeline_with(shaders::PROBE, &["SUBGROUP"], "probe_subgroups") else {
                return Ok(());
            };
            rec.dispatch(&pipeline, &[Arg::whole(&out)], &Params::new(), DispatchGrid::Blocks(1))?;
            rec.read_bytes(Arg::whole(&out), bytemuck::cast_slice_mut(&mut words))?;
        }
        if let Some(size) = probe_verdict(&words, w) {
            self.subgroups = true;
            self.caps.subgroup_size = Some(size);
        }
        Ok(())
    }

    /// Takes the first asynchronous error, if any.
    pub(crate) fn take_error(&self, operation: &str) -> Result<()> {
        match lock(&self.errors).take() {
            None => Ok(()),
            Some(Error::Device { backend, message, .. }) => {
                Err(Error::Device { backend, operation: format!("work recorded before {operation}"), message })
            }
            Some(e) => Err(e),
        }
    }

    /// Locks the stream for recording.
    pub(crate) fn recorder(&self) -> Recorder<'_> {
        Recorder { ctx: self, stream: lock(&self.stream) }
    }

    /// A pipeline of a user or core kernel; `SUBGROUP` is added to `defines` when the
    /// subgroup paths are on. `consts` are a [`orrery_core::gpu::KernelSource`]'s defines.
    /// Core kernels skip zeroing workgroup memory; they and the kernels whose text is
    /// orrery's ([`shaders::is_orrery_module`]) compile without loop bounding, every other
    /// kernel with wgpu's default runtime checks (see [`crate::pipeline_cache`]).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn pipeline(
        &self,
        name: &str,
        wgsl: &str,
        defines: &[&str],
        consts: &[Define],
        entry: &str,
        workgroup_size: u32,
        shared_words: u32,
        core: bool,
    ) -> Result<Arc<Pipeline>> {
        let all = self.defines(defines);
        let trusted = core || shaders::is_orrery_module(wgsl);
        let spec = ModuleSpec { name, wgsl, defines: &all, consts, trusted };
        lock(&self.cache).pipeline(&self.device, &spec, entry, workgroup_size, shared_words, !core)
    }

    /// `defines` with `SUBGROUP` when the subgroup paths are on, sorted.
    fn defines<'d>(&self, defines: &[&'d str]) -> Vec<&'d str> {
        with_subgroup(defines, self.subgroups)
    }

    /// Compiles a module of a [`orrery_core::gpu::KernelSource`] (trusted as
    /// [`Context::pipeline`] trusts it, so both share the cache entry) without building
    /// pipelines; returns the reflected bindings of `entry` when asked for one.
    pub(crate) fn module_entry(
        &self,
        name: &str,
        wgsl: &str,
        consts: &[Define],
        entry: Option<&str>,
    ) -> Result<Option<Arc<crate::pipeline_cache::EntryBindings>>> {
        let all = self.defines(&[]);
        let spec = ModuleSpec { name, wgsl, defines: &all, consts, trusted: shaders::is_orrery_module(wgsl) };
        let module = lock(&self.cache).module(&self.device, &spec)?;
        Ok(entry.and_then(|e| module.entry(e).cloned()))
    }

    /// [`Error::Recording`] when the calling thread is recording.
    pub(crate) fn forbid_in_capture(&self, operation: &str) -> Result<()> {
        self.recorder().forbid(operation)
    }

    /// Checks `bytes` against the device's limits.
    fn check_size(&self, bytes: u64, usage: wgpu::BufferUsages) -> Result<()> {
        let mut max = self.limits.max_buffer_size;
        if usage.contains(wgpu::BufferUsages::STORAGE) {
            max = max.min(self.limits.max_storage_buffer_binding_size);
        }
        if bytes > max {
            Err(Error::BufferTooLarge { backend: BACKEND, requested_bytes: bytes, max_bytes: max })
        } else {
            Ok(())
        }
    }

    /// Runs `create` inside out-of-memory and validation error scopes.
    fn scoped<R>(&self, bytes: u64, create: impl FnOnce() -> R) -> Result<R> {
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let value = create();
        let invalid = pollster::block_on(validation.pop());
        let out_of_memory = pollster::block_on(oom.pop());
        if out_of_memory.is_some() {
            return Err(Error::OutOfDeviceMemory { backend: BACKEND, requested_bytes: bytes });
        }
        if let Some(e) = invalid {
            return Err(device_error("buffer allocation", e.to_string()));
        }
        Ok(value)
    }

    /// A buffer of at least `bytes` bytes (at least [`MIN_BUFFER_BYTES`], a multiple of 4).
    ///
    /// # Errors
    /// [`Error::BufferTooLarge`] beyond the device limits, [`Error::OutOfDeviceMemory`].
    pub(crate) fn create_buffer(&self, bytes: u64, usage: wgpu::BufferUsages, label: &str) -> Result<wgpu::Buffer> {
        self.check_size(bytes, usage)?;
        let size = bytes.max(MIN_BUFFER_BYTES).next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
        self.scoped(bytes, || {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage,
                mapped_at_creation: false,
            })
        })
    }

    /// A buffer holding `data` (padded to at least [`MIN_BUFFER_BYTES`]).
    ///
    /// # Errors
    /// As [`Context::create_buffer`].
    pub(crate) fn create_buffer_init(
        &self,
        data: &[u8],
        usage: wgpu::BufferUsages,
        label: &str,
    ) -> Result<wgpu::Buffer> {
        let bytes = data.len() as u64;
        self.check_size(bytes, usage)?;
        let size = bytes.max(MIN_BUFFER_BYTES).next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
        let buffer = self.scoped(bytes, || {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage,
                mapped_at_creation: true,
            })
        })?;
        if bytes > 0 {
            let mut view =
                buffer.slice(0..bytes).get_mapped_range_mut().map_err(|e| device_error("upload", e.to_string()))?;
            view.copy_from_slice(data);
        }
        buffer.unmap();
        Ok(buffer)
    }

    /// The one-level Hilbert table of `shaders/core/sfc.wgsl` (its HILBERT1 variant):
    /// orrery_core's `ENCODE_3D`, widened to u32, uploaded once.
    pub(crate) fn hilbert_table(&self) -> Result<Arc<wgpu::Buffer>> {
        if let Some(t) = self.hilbert_table.get() {
            return Ok(t.clone());
        }
        let words: Vec<u32> = orrery_core::sfc::hilbert::ENCODE_3D.iter().map(|&e| u32::from(e)).collect();
        let table =
            self.create_buffer_init(bytemuck::cast_slice(&words), wgpu::BufferUsages::STORAGE, "orrery hilbert table")?;
        Ok(self.hilbert_table.get_or_init(|| Arc::new(table)).clone())
    }

    /// The three-level Hilbert table of `core/sfc` (24 x 512 u16 entries, two per word:
    /// [`crate::primitives::keys::hilbert3_words`], derived from orrery-core's
    /// `ENCODE_3D`), uploaded on first use.
    pub(crate) fn hilbert3_table(&self) -> Result<Arc<wgpu::Buffer>> {
        if let Some(t) = self.hilbert3_table.get() {
            return Ok(t.clone());
        }
        let words = crate::primitives::keys::hilbert3_words();
        let table = self.create_buffer_init(
            bytemuck::cast_slice(&words),
            wgpu::BufferUsages::STORAGE,
            "orrery hilbert3 table",
        )?;
        Ok(self.hilbert3_table.get_or_init(|| Arc::new(table)).clone())
    }
}

/// The subgroup size when the probe's output (`words`, for a workgroup of `w`) shows
/// full, subgroup-major subgroups whose operations all passed.
fn probe_verdict(words: &[u32], w: usize) -> Option<u32> {
    let mut seen = vec![false; w];
    let ranks_ok = words[..w].iter().all(|&r| (r as usize) < w && !std::mem::replace(&mut seen[r as usize], true));
    let checks_ok = words[w..2 * w].iter().all(|&f| f == 0);
    let size = words[2 * w];
    (ranks_ok && checks_ok && size > 0 && (w as u32).is_multiple_of(size)).then_some(size)
}

/// Exclusive access to the stream while an operation records its commands.
pub(crate) struct Recorder<'a> {
    /// The device.
    pub ctx: &'a Context,
    pub(crate) stream: MutexGuard<'a, Stream>,
}

/// Splits `blocks` workgroups into a 2D grid of at most `max` per dimension.
pub(crate) fn grid(blocks: u32, max: u32) -> Option<(u32, u32)> {
    let rows = blocks.div_ceil(max);
    (rows <= max).then(|| (blocks.div_ceil(rows.max(1)), rows.max(1)))
}

impl Recorder<'_> {
    /// A pipeline of a core module.
    pub(crate) fn pipeline(&self, module: CoreModule, defines: &[&str], entry: &str) -> Result<Arc<Pipeline>> {
        self.ctx.pipeline(module.name, module.wgsl, defines, &[], entry, shaders::WORKGROUP, 0, true)
    }

    /// A pipeline of a core module with exactly `defines` (no automatic `SUBGROUP`).
    fn pipeline_with(&self, module: CoreModule, defines: &[&str], entry: &str) -> Result<Arc<Pipeline>> {
        let spec = ModuleSpec { name: module.name, wgsl: module.wgsl, defines, consts: &[], trusted: true };
        lock(&self.ctx.cache).pipeline(&self.ctx.device, &spec, entry, shaders::WORKGROUP, 0, false)
    }

    /// Whether the calling thread is recording (its commands go to the capture).
    pub(crate) fn capturing(&self) -> bool {
        self.stream.capture.as_ref().is_some_and(Capture::is_current_thread)
    }

    /// [`Error::Recording`] naming `operation` when the calling thread is recording.
    pub(crate) fn forbid(&self, operation: &str) -> Result<()> {
        if self.capturing() {
            return Err(Error::Recording {
                backend: BACKEND,
                reason: format!(
                    "{operation} is not allowed while recording (it cannot be part of a replayed sequence)"
                ),
            });
        }
        Ok(())
    }

    /// The batch's encoder for one command outside a compute pass (ends the open pass).
    fn encoder(&mut self) -> &mut wgpu::CommandEncoder {
        self.stream.commands += 1;
        self.stream.batch.encoder(&self.ctx.device)
    }

    /// The batch's open compute pass for one dispatch (opens one when none is).
    fn pass(&mut self) -> &mut wgpu::ComputePass<'static> {
        self.stream.commands += 1;
        self.stream.batch.pass(&self.ctx.device)
    }

    /// Submits when the batch is long enough.
    fn maybe_flush(&mut self) {
        if self.stream.commands >= MAX_BATCH_COMMANDS {
            self.flush();
        }
    }

    /// Checks `args` and `params` against the pipeline's reflected bindings and lays
    /// them out: the storage bindings (binding, allocation, aligned byte offset) and the
    /// packed parameter block (binding, bytes) with every `off_<name>` field filled.
    ///
    /// # Errors
    /// [`Error::KernelSignature`] for a binding the launch does not provide, a read view
    /// bound to a `read_write` binding, a view that is not a multiple of the binding's
    /// element or needs an `off_*` field the kernel lacks, or scalars that do not match
    /// the parameter block in count, width or type.
    pub(crate) fn plan<'b>(&self, pipeline: &Pipeline, args: &[Arg<'b>], params: &Params) -> Result<Plan<'b>> {
        let align = u64::from(self.ctx.view_alignment);
        let nbuf = args.len();
        let members = pipeline.bindings.uniform().map_or(&[][..], |(_, _, m)| m);
        let mut bound = Vec::with_capacity(nbuf);
        let mut offsets: Vec<(&str, u32)> = Vec::new();
        for (b, read_only, stride) in pipeline.bindings.storage() {
            let Some(arg) = args.get(b.binding as usize) else {
                return Err(signature_error(
                    pipeline,
                    format!("the kernel uses binding {} ({}) but the launch has {nbuf} buffer(s)", b.binding, b.name),
                ));
            };
            if !read_only && !arg.writable {
                return Err(signature_error(
                    pipeline,
                    format!(
                        "binding {} ({}) is var<storage, read_write> but the argument is a read-only view",
                        b.binding, b.name
                    ),
                ));
            }
            let stride = u64::from(stride.unwrap_or(4)).max(1);
            if arg.offset % stride != 0 {
                return Err(signature_error(
                    pipeline,
                    format!(
                        "binding {} ({}) has {stride}-byte elements; the view starts at byte {}",
                        b.binding, b.name, arg.offset
                    ),
                ));
            }
            let unit = align / gcd(align, stride) * stride;
            let (at, off) =
                if arg.len == 0 { (0, 0) } else { (arg.offset / unit * unit, (arg.offset % unit) / stride) };
            if off != 0 {
                let field = format!("off_{}", b.name);
                if !members.iter().any(|m| m.name == field) {
                    return Err(signature_error(
                        pipeline,
                        format!(
                            "binding {} ({}) gets a view at byte offset {}, not a multiple of the adapter's \
                             storage alignment {align}, and the kernel's parameters have no `{field}: u32`",
                            b.binding, b.name, arg.offset
                        ),
                    ));
                }
            }
            let off = u32::try_from(off).map_err(|_| signature_error(pipeline, "element offset beyond u32".into()))?;
            offsets.push((b.name.as_str(), off));
            bound.push((b.binding, arg.buf, at));
        }
        let uniform = match pipeline.bindings.uniform() {
            None if params.is_empty() => None,
            None => {
                return Err(signature_error(
                    pipeline,
                    format!("the kernel has no parameter block but {} scalar(s) were given", params.len()),
                ));
            }
            Some((binding, size, members)) => {
                if binding as usize != nbuf {
                    return Err(signature_error(
                        pipeline,
                        format!(
                            "the kernel's parameters are at binding {binding} but the launch has {nbuf} buffer(s) \
                             (scalars go at binding {nbuf})"
                        ),
                    ));
                }
                Some((binding, pack(pipeline, members, size, params, &offsets)?))
            }
        };
        Ok((bound, uniform))
    }

    /// Records one dispatch. `args[i]` is binding `i` and the parameter block is the
    /// uniform at binding `args.len()`; bindings the entry point does not use are left
    /// out. Zero blocks record nothing (after the checks).
    ///
    /// # Errors
    /// As [`Recorder::plan`]; grids beyond the device's dispatch limits.
    pub(crate) fn dispatch(
        &mut self,
        pipeline: &Arc<Pipeline>,
        args: &[Arg<'_>],
        params: &Params,
        launch: DispatchGrid<'_>,
    ) -> Result<()> {
        let (bound, uniform) = self.plan(pipeline, args, params)?;
        let grid = match launch {
            DispatchGrid::Blocks(0) => return Ok(()),
            DispatchGrid::Blocks(blocks) => {
                let max = self.ctx.limits.max_compute_workgroups_per_dimension;
                let (x, y) = grid(blocks, max).ok_or_else(|| Error::InvalidArgument {
                    what: "launch blocks",
                    reason: format!("{blocks} workgroups exceed the device's {max} x {max} grid"),
                })?;
                GridRef::Direct(x, y)
            }
            DispatchGrid::Indirect(a) => {
                if a.len < 12 || a.offset % 4 != 0 {
                    return Err(Error::InvalidArgument {
                        what: "indirect launch arguments",
                        reason: format!("need 3 words at a 4-byte aligned offset, got {} bytes at {}", a.len, a.offset),
                    });
                }
                GridRef::Indirect(a.buf, a.offset)
            }
        };
        let align = u64::from(self.ctx.limits.min_uniform_buffer_offset_alignment).max(16);
        if self.capturing() {
            let capture = self.stream.capture.as_mut().expect("capturing");
            let uniform = uniform.map(|(binding, bytes)| (binding, capture.push_params(&bytes, align)));
            let grid = match grid {
                GridRef::Direct(x, y) => CapturedGrid::Direct(x, y),
                GridRef::Indirect(buf, offset) => CapturedGrid::Indirect(capture.buffer(buf), offset),
            };
            capture.dispatch(pipeline.clone(), &bound, uniform, grid);
            return Ok(());
        }
        let slot = match &uniform {
            None => None,
            Some((binding, bytes)) => Some((*binding, self.push_params(bytes, bytes.len() as u64)?)),
        };
        let mut entries = Vec::with_capacity(pipeline.bindings.bindings.len());
        for &(binding, buf, offset) in &bound {
            entries.push(wgpu::BindGroupEntry {
                binding,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding { buffer: buf, offset, size: None }),
            });
        }
        if let Some((binding, (offset, size))) = slot {
            entries.push(wgpu::BindGroupEntry {
                binding,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: &self.stream.arena_buffer,
                    offset,
                    size: NonZeroU64::new(size),
                }),
            });
        }
        let bind_group = self.ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.layout,
            entries: &entries,
        });
        let pass = self.pass();
        pass.set_pipeline(&pipeline.compute);
        pass.set_bind_group(0, &bind_group, &[]);
        match grid {
            GridRef::Direct(x, y) => pass.dispatch_workgroups(x, y, 1),
            GridRef::Indirect(buf, offset) => pass.dispatch_workgroups_indirect(buf, offset),
        }
        self.maybe_flush();
        Ok(())
    }

    /// Appends a parameter block to the arena; returns its (offset, binding size).
    fn push_params(&mut self, params: &[u8], size: u64) -> Result<(u64, u64)> {
        let binding = size.max(1).next_multiple_of(16);
        let align = u64::from(self.ctx.limits.min_uniform_buffer_offset_alignment).max(16);
        let arena_bytes = self.stream.arena_bytes;
        if binding > arena_bytes {
            return Err(Error::InvalidArgument {
                what: "kernel scalars",
                reason: format!("a parameter block of {size} bytes exceeds the {arena_bytes}-byte arena"),
            });
        }
        let mut offset = (self.stream.arena.len() as u64).next_multiple_of(align);
        if offset + binding > arena_bytes {
            self.flush();
            offset = 0;
        }
        let arena = &mut self.stream.arena;
        arena.resize(offset as usize, 0);
        arena.extend_from_slice(params);
        arena.resize((offset + binding) as usize, 0);
        Ok((offset, binding))
    }

    /// Records an encoder copy (`copy_buffer_to_buffer`) of `src.len` bytes (no-op for 0
    /// bytes). The executor's copies go through [`crate::primitives::data::copy`], which
    /// uses a kernel where it can (several times faster) and this where it cannot.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `dst` is shorter than `src`.
    pub(crate) fn copy_buffer(&mut self, src: Arg<'_>, dst: Arg<'_>) -> Result<()> {
        orrery_core::executor::check_range("copy destination", dst.len as usize, 0, src.len as usize)?;
        if src.len == 0 {
            return Ok(());
        }
        if self.capturing() {
            let capture = self.stream.capture.as_mut().expect("capturing");
            capture.copy(src.buf, src.offset, dst.buf, dst.offset, src.len);
            return Ok(());
        }
        self.encoder().copy_buffer_to_buffer(src.buf, src.offset, dst.buf, dst.offset, src.len);
        self.maybe_flush();
        Ok(())
    }

    /// Records zeroing the bytes of `dst` (no-op for 0 bytes).
    pub(crate) fn clear(&mut self, dst: Arg<'_>) {
        if dst.len == 0 {
            return;
        }
        if self.capturing() {
            let capture = self.stream.capture.as_mut().expect("capturing");
            capture.clear(dst.buf, dst.offset, dst.len);
            return;
        }
        self.encoder().clear_buffer(dst.buf, dst.offset, Some(dst.len));
        self.maybe_flush();
    }

    /// Records a timestamp (the device has `TIMESTAMP_QUERY_INSIDE_ENCODERS`).
    pub(crate) fn write_timestamp(&mut self, set: &wgpu::QuerySet, resolve: &wgpu::Buffer, readback: &wgpu::Buffer) {
        let encoder = self.encoder();
        encoder.write_timestamp(set, 0);
        encoder.resolve_query_set(set, 0..1, resolve, 0);
        encoder.copy_buffer_to_buffer(resolve, 0, readback, 0, 8);
    }

    /// Queues a host-to-device copy after everything recorded so far.
    pub(crate) fn write(&mut self, dst: &wgpu::Buffer, offset: u64, data: &[u8]) {
        if data.is_empty() {
            return;
        }
        // Queue writes run before the next submission's commands: submit what was
        // recorded first, so the write lands after it.
        self.flush();
        self.ctx.queue.write_buffer(dst, offset, data);
        self.stream.writes_pending = true;
    }

    /// Submits the pending batch (no wait); returns the submission's index when there
    /// was one.
    pub(crate) fn flush(&mut self) -> Option<wgpu::SubmissionIndex> {
        if self.stream.batch.is_empty() && !self.stream.writes_pending {
            return None;
        }
        let commands = self.stream.batch.finish();
        if !self.stream.arena.is_empty() {
            self.ctx.queue.write_buffer(&self.stream.arena_buffer, 0, &self.stream.arena);
            self.stream.arena.clear();
        }
        let index = self.ctx.queue.submit(commands);
        self.stream.commands = 0;
        self.stream.writes_pending = false;
        Some(index)
    }

    /// Submits `buffer` after the pending batch (a replay; `None`: an empty one, only the
    /// pending batch is submitted).
    pub(crate) fn submit(&mut self, buffer: Option<wgpu::CommandBuffer>) {
        self.flush();
        if let Some(buffer) = buffer {
            self.ctx.queue.submit([buffer]);
        }
    }

    /// Submits and waits until the device is idle; reports asynchronous errors.
    ///
    /// # Errors
    /// The first error of earlier asynchronous work, device loss.
    pub(crate) fn wait(&mut self, operation: &str) -> Result<()> {
        self.forbid(operation)?;
        self.flush();
        self.ctx
            .device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| device_error(operation, e.to_string()))?;
        self.ctx.take_error(operation)
    }

    /// Copies `out.len()` bytes of `src` to the host, after all recorded work.
    ///
    /// # Errors
    /// As [`Recorder::wait`]; allocation of the staging buffer.
    pub(crate) fn read_bytes(&mut self, src: Arg<'_>, out: &mut [u8]) -> Result<()> {
        self.forbid("read")?;
        let bytes = out.len() as u64;
        if bytes == 0 {
            return self.wait("read");
        }
        let staging = match &self.stream.staging {
            Some((buffer, capacity)) if *capacity >= bytes => buffer.clone(),
            _ => {
                let capacity = grown_capacity(bytes as usize) as u64;
                let buffer = self.ctx.create_buffer(
                    capacity,
                    wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    "orrery readback",
                )?;
                self.stream.staging = Some((buffer.clone(), capacity));
                buffer
            }
        };
        self.encoder().copy_buffer_to_buffer(src.buf, src.offset, &staging, 0, bytes);
        self.flush();
        map_read(self.ctx, &staging, bytes, out)
    }

    /// Starts copying `src` to a staging buffer of its own and mapping it; the pending
    /// read holds the staging buffer and the mapping's completion.
    ///
    /// # Errors
    /// [`Error::Recording`] while recording; allocation of the staging buffer.
    pub(crate) fn read_async(&mut self, src: Arg<'_>) -> Result<PendingRead> {
        self.forbid("read_async")?;
        if src.len == 0 {
            return Ok(PendingRead { staging: None, bytes: 0, submission: None, done: None });
        }
        let staging = self.ctx.create_buffer(
            src.len,
            wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            "orrery pending read",
        )?;
        self.encoder().copy_buffer_to_buffer(src.buf, src.offset, &staging, 0, src.len);
        let submission = self.flush();
        let (tx, rx) = mpsc::channel();
        staging.slice(0..src.len).map_async(wgpu::MapMode::Read, move |r| {
            // The receiver may have been dropped with the pending read.
            let _ = tx.send(r);
        });
        Ok(PendingRead { staging: Some(staging), bytes: src.len, submission, done: Some(rx) })
    }

    /// A scratch buffer of at least `bytes` bytes; grows with headroom, never shrinks.
    ///
    /// # Errors
    /// As [`Context::create_buffer`]; [`Error::Recording`] when it would grow while
    /// recording.
    pub(crate) fn scratch(&mut self, slot: Scratch, bytes: u64) -> Result<Arc<wgpu::Buffer>> {
        let index = slot as usize;
        if let Some((buffer, capacity)) = &self.stream.scratch[index]
            && *capacity >= bytes
        {
            return Ok(buffer.clone());
        }
        if self.capturing() {
            return Err(Error::Recording {
                backend: BACKEND,
                reason: format!(
                    "scratch growth ({slot:?} to {bytes} bytes) is not allowed while recording: call reserve first"
                ),
            });
        }
        let capacity = (grown_capacity(bytes as usize) as u64).max(MIN_BUFFER_BYTES).next_multiple_of(8);
        // The headroom must not push a legal size over the limit.
        let capacity = if self.ctx.check_size(capacity, STORAGE_USAGE).is_ok() { capacity } else { bytes };
        let buffer = Arc::new(self.ctx.create_buffer(capacity, STORAGE_USAGE, "orrery scratch")?);
        self.stream.scratch[index] = Some((buffer.clone(), capacity));
        Ok(buffer)
    }
}

/// A dispatch grid with its indirect buffer borrowed.
enum GridRef<'a> {
    Direct(u32, u32),
    Indirect(&'a Arc<wgpu::Buffer>, u64),
}

/// Packs `params` (the non-`off_*` members, in order) and the element offsets of the
/// bound views (the `off_*` members) into a parameter block of `size` bytes.
fn pack(
    pipeline: &Pipeline,
    members: &[crate::pipeline_cache::Member],
    size: u64,
    params: &Params,
    offsets: &[(&str, u32)],
) -> Result<Vec<u8>> {
    let mut out = vec![0u8; size as usize];
    let scalars: Vec<&crate::pipeline_cache::Member> = members.iter().filter(|m| m.offset_of().is_none()).collect();
    if scalars.len() != params.len() {
        return Err(signature_error(
            pipeline,
            format!("the kernel takes {} scalar(s), {} were given", scalars.len(), params.len()),
        ));
    }
    let mut values = params.values();
    for m in members {
        let at = m.offset as usize;
        if let Some(var) = m.offset_of() {
            if m.ty != MemberType::U32 {
                return Err(signature_error(pipeline, format!("`{}` must be a u32 element offset", m.name)));
            }
            let off = offsets.iter().find(|(n, _)| *n == var).map_or(0, |&(_, o)| o);
            out[at..at + 4].copy_from_slice(&off.to_le_bytes());
            continue;
        }
        let (bytes, ty) = values.next().expect("counted above");
        if bytes.len() != m.size as usize || ty.is_some_and(|t| m.ty != MemberType::Other && t != m.ty) {
            return Err(signature_error(
                pipeline,
                format!(
                    "scalar `{}` of the kernel is {:?} ({} bytes), the launch gives {} ({} bytes)",
                    m.name,
                    m.ty,
                    m.size,
                    ty.map_or_else(|| "raw bytes".to_owned(), |t| format!("{t:?}")),
                    bytes.len()
                ),
            ));
        }
        out[at..at + bytes.len()].copy_from_slice(bytes);
    }
    Ok(out)
}

/// A copy to the host in flight: its own staging buffer, the submission that copies
/// into it, and the completion of its mapping.
pub(crate) struct PendingRead {
    staging: Option<wgpu::Buffer>,
    bytes: u64,
    submission: Option<wgpu::SubmissionIndex>,
    done: Option<mpsc::Receiver<std::result::Result<(), wgpu::BufferAsyncError>>>,
}

impl PendingRead {
    /// Waits for this read's submission and mapping (not for later work) and copies the
    /// bytes into `out` (`out.len() == bytes`).
    pub(crate) fn wait(self, ctx: &Context, out: &mut [u8]) -> Result<()> {
        let (Some(staging), Some(done)) = (self.staging, self.done) else { return Ok(()) };
        let poll = wgpu::PollType::Wait { submission_index: self.submission, timeout: None };
        ctx.device.poll(poll).map_err(|e| device_error("wait", e.to_string()))?;
        let mapped = loop {
            match done.try_recv() {
                Ok(r) => break r,
                Err(mpsc::TryRecvError::Empty) => {
                    ctx.device
                        .poll(wgpu::PollType::wait_indefinitely())
                        .map_err(|e| device_error("wait", e.to_string()))?;
                }
                Err(mpsc::TryRecvError::Disconnected) => {
                    return Err(device_error("wait", "the mapping callback was dropped"));
                }
            }
        };
        ctx.take_error("wait")?;
        mapped.map_err(|e| device_error("wait", e.to_string()))?;
        {
            let slice = staging.slice(0..self.bytes);
            let view = slice.get_mapped_range().map_err(|e| device_error("wait", e.to_string()))?;
            out.copy_from_slice(&view[..out.len()]);
        }
        staging.unmap();
        Ok(())
    }
}

/// Maps the first `bytes` bytes of a `MAP_READ` buffer whose copy was submitted, waits,
/// and copies them into `out`.
pub(crate) fn map_read(ctx: &Context, buffer: &wgpu::Buffer, bytes: u64, out: &mut [u8]) -> Result<()> {
    let slice = buffer.slice(0..bytes);
    let (tx, rx) = mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        // The receiver waits below; a failed send only means it gave up.
        let _ = tx.send(r);
    });
    ctx.device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| device_error("read", e.to_string()))?;
    ctx.take_error("read")?;
    match rx.recv() {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(device_error("read", e.to_string())),
        Err(_) => return Err(device_error("read", "the mapping callback never ran")),
    }
    {
        let view = slice.get_mapped_range().map_err(|e| device_error("read", e.to_string()))?;
        out.copy_from_slice(&view[..out.len()]);
    }
    buffer.unmap();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{grid, probe_verdict};

    #[test]
    fn the_probe_accepts_only_full_ordered_subgroups() {
        let w = 8;
        let good = [0, 1, 2, 3, 4, 5, 6, 7, 0, 0, 0, 0, 0, 0, 0, 0, 4];
        assert_eq!(probe_verdict(&good, w), Some(4));
        let repeated_rank = [0, 1, 2, 3, 4, 5, 6, 6, 0, 0, 0, 0, 0, 0, 0, 0, 4];
        assert_eq!(probe_verdict(&repeated_rank, w), None);
        let failed_op = [0, 1, 2, 3, 4, 5, 6, 7, 0, 0, 2, 0, 0, 0, 0, 0, 4];
        assert_eq!(probe_verdict(&failed_op, w), None);
        let odd_size = [0, 1, 2, 3, 4, 5, 6, 7, 0, 0, 0, 0, 0, 0, 0, 0, 3];
        assert_eq!(probe_verdict(&odd_size, w), None);
    }

    #[test]
    fn grids_stay_within_the_dimension_limit() {
        assert_eq!(grid(1, 65535), Some((1, 1)));
        assert_eq!(grid(65535, 65535), Some((65535, 1)));
        assert_eq!(grid(65536, 65535), Some((32768, 2)));
        let (x, y) = grid(1 << 24, 65535).unwrap();
        assert!(x <= 65535 && y <= 65535 && u64::from(x) * u64::from(y) >= 1 << 24);
        assert_eq!(grid(u32::MAX, 65535), None);
    }
}
